// pml/engine: matching: sequence numbers, the posted and unexpected queues, arrival of MATCH, RNDV
// and RGET, and the dispatch of every fragment by type. Part of Engine<Policy>: included by
// pml_engine.h only.
#ifndef WEFT_PML_ENGINE_MATCH_H
#define WEFT_PML_ENGINE_MATCH_H

#include <algorithm>
#include <cstring>

namespace weft::pml::engine {

template <class Policy> weft_comm_t *Engine<Policy>::find_comm(uint32_t cid)
{
    if (cid < kDenseCids)
        return cid < P->dense_comms.size() ? P->dense_comms[cid] : nullptr;
    auto it = P->comms.find(cid);
    return it == P->comms.end() ? nullptr : it->second;
}

// Register comm under cid, or forget cid (comm NULL).
template <class Policy> void Engine<Policy>::set_comm(uint32_t cid, weft_comm_t *comm)
{
    if (cid >= kDenseCids) {
        if (comm)
            P->comms[cid] = comm;
        else
            P->comms.erase(cid);
        return;
    }
    if (P->dense_comms.size() <= cid)
        P->dense_comms.resize(cid + 1, nullptr);
    P->dense_comms[cid] = comm;
}

template <class Policy> auto Engine<Policy>::cs(weft_comm_t *c) -> CommState &
{
    return *static_cast<CommState *>(weft_comm_pml_state(c));
}

template <class Policy> bool Engine<Policy>::tag_matches(int want, int got)
{
    return want == WEFT_ANY_TAG ? got >= 0 : want == got;
}

template <class Policy> bool Engine<Policy>::src_matches(int want, int got)
{
    return want == WEFT_ANY_SOURCE || want == got;
}

template <class Policy> void Engine<Policy>::deliver(Req *r, weft_comm_t *comm, const Unexpected &u)
{
    r->matched = true;
    r->status.source = u.src;
    r->status.tag = u.tag;
    r->total = u.total;
    r->received = u.data.size();
    if (!u.data.empty())
        recv_store(r, 0, u.data.data(), u.data.size());
    if (u.type == hdr_match) {
        finish_recv(r);
        return;
    }
    // A rendezvous from a process that failed (fault tolerance): the rest of it will never
    // come, so the receive ends in that error instead of answering it.
    if (P->any_failed && peer_failed(u.world_src)) [[unlikely]] {
        r->status.error = WEFT_ERR_PROC_FAILED;
        r->received = r->total;
        finish_recv(r);
        return;
    }
    if constexpr (Policy::wants_match) {
        MatchHdr m{};
        m.type = u.type;
        m.flags = u.flags;
        m.seq = u.seq;
        m.cid = weft_comm_cid(comm);
        m.src = u.src;
        m.tag = u.tag;
        Policy::template rndv_match<Engine>(r, m);
    }
    rndv_matched(r, u);
}

// Recycling (State::spare_unexpected, spare_bytes): at most this many of each are kept (a
// ring's worth of small messages), and only buffers of at most kSpareCapacity bytes.
constexpr size_t kSpareCount = 4096;
constexpr size_t kSpareCapacity = size_t(64) << 10;

// A list of one empty node for the unexpected queue: a spare one if there is any.
template <class Policy> std::list<Unexpected> Engine<Policy>::take_unexpected()
{
    std::list<Unexpected> node;
    if (P->spare_unexpected.empty())
        node.emplace_back();
    else
        node.splice(node.begin(), P->spare_unexpected, P->spare_unexpected.begin());
    return node;
}

// Done with *it: it goes to the spare nodes (emptied, its buffers kept) or is freed.
template <class Policy>
void Engine<Policy>::give_unexpected(std::list<Unexpected> &from,
                                     std::list<Unexpected>::iterator it)
{
    if (P->spare_unexpected.size() >= kSpareCount || it->data.capacity() > kSpareCapacity ||
        it->rdma.capacity() > kSpareCapacity) {
        from.erase(it);
        return;
    }
    it->data.clear();
    it->rdma.clear();
    P->spare_unexpected.splice(P->spare_unexpected.begin(), from, it);
}

template <class Policy> std::string Engine<Policy>::take_bytes()
{
    if (P->spare_bytes.empty())
        return {};
    std::string out = std::move(P->spare_bytes.back());
    P->spare_bytes.pop_back();
    out.clear();
    return out;
}

template <class Policy> void Engine<Policy>::give_bytes(std::string &&bytes)
{
    if (P->spare_bytes.size() < kSpareCount && bytes.capacity() <= kSpareCapacity)
        P->spare_bytes.push_back(std::move(bytes));
}

// node: one message (a list of one); it is matched, or moved to the unexpected queue.
template <class Policy>
void Engine<Policy>::match_one(weft_comm_t *comm, std::list<Unexpected> &node)
{
    CommState &s = cs(comm);
    const Unexpected &u = node.front();
    const bool revoked = weft_comm_is_revoked(comm) && !weft_tag_is_ft(u.tag);
    if (revoked || (s.coll_revoked && library_tag(u.tag))) [[unlikely]] {
        // For a revoked communicator, or a collective of one with a failed member (ULFM):
        // dropped, in its turn (an early arrival of a revoked communicator ends here too).
        if (u.type != hdr_match)
            refuse_rndv(u.world_src, u.send_id, revoked ? WEFT_ERR_REVOKED : WEFT_ERR_PROC_FAILED);
        give_unexpected(node, node.begin());
        return;
    }
    for (Req *r = s.posted.front(); r; r = r->next) {
        if (src_matches(r->src, u.src) && tag_matches(r->tag, u.tag)) {
            s.posted.erase(r);
            deliver(r, comm, u);
            give_unexpected(node, node.begin());
            return;
        }
    }
    node.front().arrival = ++s.arrivals;
    auto &q = s.unexpected[size_t(u.src)];
    q.splice(q.end(), node);
}

// The first unexpected message a receive of (src, tag) matches: its queue and place, or a null
// queue. ANY_SOURCE: the earliest to arrive of each source's first match.
template <class Policy>
auto Engine<Policy>::unexpected_match(CommState &s, int src, int tag)
    -> std::pair<std::list<Unexpected> *, std::list<Unexpected>::iterator>
{
    auto first_in = [&](std::list<Unexpected> &q) {
        auto it = q.begin();
        while (it != q.end() && !tag_matches(tag, it->tag))
            ++it;
        return it;
    };
    if (src != WEFT_ANY_SOURCE) {
        if (src < 0 || size_t(src) >= s.unexpected.size())
            return {nullptr, {}};
        auto &q = s.unexpected[size_t(src)];
        auto it = first_in(q);
        return {it == q.end() ? nullptr : &q, it};
    }
    std::list<Unexpected> *best = nullptr;
    std::list<Unexpected>::iterator best_it;
    for (auto &q : s.unexpected) {
        if (q.empty())
            continue;
        auto it = first_in(q);
        if (it != q.end() && (!best || it->arrival < best_it->arrival)) {
            best = &q;
            best_it = it;
        }
    }
    return {best, best_it};
}

// A MATCH, RNDV or RGET that was delivered already: dropped, and counted.
template <class Policy>
void Engine<Policy>::duplicate(const weft_comm_t *comm, int src, uint16_t seq)
{
    ++P->duplicates;
    if (P->verbose >= 20) [[unlikely]]
        trace("rank " + std::to_string(weft_comm_rank(comm)) + " <- " + std::to_string(src) +
              " cid " + std::to_string(weft_comm_cid(comm)) + ": a copy of message " +
              std::to_string(seq) + " (delivered already) was dropped");
}

template <class Policy>
void Engine<Policy>::arrive(weft_comm_t *comm, uint16_t seq, std::list<Unexpected> &node)
{
    CommState &s = cs(comm);
    const size_t src = size_t(node.front().src);
    if (seq != s.recv_seq[src]) {
        // Ahead of the window's start (handle_match_or_rndv dropped what is behind it); a
        // second copy of a number already held is a duplicate too.
        if (!s.ahead[src].emplace(seq, std::move(node.front())).second)
            duplicate(comm, int(src), seq);
        return;
    }
    node.front().ordinal = s.arrived_total[src]++;
    match_one(comm, node);
    ++s.recv_seq[src];
    auto &ahead = s.ahead[src];
    for (auto it = ahead.find(s.recv_seq[src]); it != ahead.end();
         it = ahead.find(s.recv_seq[src])) {
        std::list<Unexpected> next = take_unexpected();
        next.front() = std::move(it->second);
        ahead.erase(it);
        next.front().ordinal = s.arrived_total[src]++;
        match_one(comm, next);
        ++s.recv_seq[src];
    }
}

template <class Policy> size_t Engine<Policy>::header_size(uint8_t type)
{
    switch (type) {
    case hdr_match: return sizeof(MatchHdr);
    case hdr_rndv: return sizeof(RndvHdr);
    case hdr_ack: return sizeof(AckHdr);
    case hdr_frag: return sizeof(FragHdr);
    case hdr_rget: return sizeof(RgetHdr);
    case hdr_put: return sizeof(PutHdr);
    case hdr_fin: return sizeof(FinHdr);
    case hdr_fence:
    case hdr_fence_ack: return sizeof(FenceHdr);
    case hdr_revoke: return sizeof(RevokeHdr);
    case hdr_revoke_nack: return sizeof(RevokeNackHdr);
    case hdr_cancel: return sizeof(CancelHdr);
    case hdr_cancel_reply: return sizeof(CancelReplyHdr);
    default: return 1;
    }
}

template <class Policy>
void Engine<Policy>::handle_match_or_rndv(const char *msg, size_t len,
                                          const weft_btl_segment_t *more, size_t nmore)
{
    const uint8_t type = static_cast<uint8_t>(msg[0]);
    const bool rndv = type != hdr_match; // RNDV or RGET
    const size_t hlen = type == hdr_rget ? sizeof(RgetHdr)
                        : rndv           ? sizeof(RndvHdr)
                                         : sizeof(MatchHdr);
    const char *name = type == hdr_rget ? "RGET" : rndv ? "RNDV" : "MATCH";
    if (len < hlen)
        return malformed(std::string(name) + " shorter than its header");
    RndvHdr h;
    if (rndv)
        std::memcpy(&h, msg, sizeof(RndvHdr));
    else
        std::memcpy(&h.match, msg, sizeof(MatchHdr));
    const Payload data{msg + hlen, len - hlen, more, nmore};
    weft_comm_t *comm = find_comm(h.match.cid);
    if (!comm) {
        // The communicator exists at the sender already, not yet here.
        std::string copy(msg, hlen);
        data.append_to(copy);
        P->early[h.match.cid].push_back(std::move(copy));
        return;
    }
    if (h.match.src < 0 || h.match.src >= weft_comm_peer_size(comm))
        return malformed("source rank " + std::to_string(h.match.src) + " outside communicator " +
                         std::to_string(h.match.cid));
    // (A message for a revoked communicator is dropped in its turn, by match_one: dropped here,
    // its sequence number would leave a gap that every later message from that peer, on the
    // fault-tolerant tags too, would wait behind for ever.)
    CommState &s = cs(comm);
    const size_t src = size_t(h.match.src);
    // The window (README.md): a number up to 2^15 behind the next expected one was delivered
    // already, and this is a copy (a fragment sent again after its link failed); anything else
    // is the next one or ahead of it.
    if (int16_t(uint16_t(h.match.seq - s.recv_seq[src])) < 0) [[unlikely]]
        return duplicate(comm, h.match.src, h.match.seq);
    if (!Policy::template before_match<Engine>(comm, h.match,
                                               weft_comm_peer_world_rank(comm, int(src))))
        return;
    // Fast path: an eager message in sequence, for a receive already posted:
    // copy straight from the fragment, no queue entry.
    if (!rndv && h.match.seq == s.recv_seq[src] && s.ahead[src].empty()) {
        for (Req *r = s.posted.front(); r; r = r->next) {
            if (!src_matches(r->src, h.match.src) || !tag_matches(r->tag, h.match.tag))
                continue;
            s.posted.erase(r);
            ++s.recv_seq[src];
            ++s.arrived_total[src];
            const size_t n = data.size();
            r->matched = true;
            r->status.source = h.match.src;
            r->status.tag = h.match.tag;
            r->total = r->received = n;
            recv_store(r, 0, data);
            finish_recv(r);
            return;
        }
    }
    if (P->verbose >= 20)
        trace("rank " + std::to_string(weft_comm_rank(comm)) + " <- " +
              std::to_string(h.match.src) + " tag " + std::to_string(h.match.tag) + " cid " +
              std::to_string(weft_comm_cid(comm)) + ": " + name +
              " kept until a receive matches it");
    std::list<Unexpected> node = take_unexpected();
    Unexpected &u = node.front();
    u.src = h.match.src;
    u.tag = h.match.tag;
    u.type = type;
    u.flags = h.match.flags;
    u.seq = h.match.seq;
    // An RGET carries its RDMA segments where the others carry data, then maybe the first
    // bytes of its message.
    bool bad_first = false;
    if (type == hdr_rget) {
        RgetHdr g;
        std::memcpy(&g, msg, sizeof g);
        data.append_to(u.rdma);
        bad_first = g.first > u.rdma.size();
        if (!bad_first) {
            u.data.assign(u.rdma, u.rdma.size() - g.first, g.first);
            u.rdma.resize(u.rdma.size() - g.first);
        }
    } else {
        data.append_to(u.data);
    }
    u.total = rndv ? h.total : u.data.size();
    u.send_id = rndv ? h.send_id : 0;
    u.world_src = weft_comm_peer_world_rank(comm, int(u.src));
    // Its number is taken: dropped, it would leave a gap that every later message from that
    // peer on this communicator waits behind for ever. The job ends instead, saying why.
    if (bad_first || u.total < u.data.size())
        broken_stream(u.world_src, std::string(name) + " (communicator " +
                                       std::to_string(h.match.cid) + ", number " +
                                       std::to_string(h.match.seq) +
                                       ") whose first part is longer than the message");
    arrive(comm, h.match.seq, node);
}

template <class Policy>
void Engine<Policy>::handle(const char *msg, size_t len, const weft_btl_segment_t *more,
                            size_t nmore)
{
    if (len < 1)
        return malformed("empty fragment");
    const uint8_t type = static_cast<uint8_t>(msg[0]);
    if (type == hdr_match || type == hdr_rndv || type == hdr_rget)
        return handle_match_or_rndv(msg, len, more, nmore);
    if (type == hdr_frag)
        return handle_frag(msg, len, more, nmore);
    // Control messages travel whole in one segment.
    if (nmore)
        return malformed("control message of type " + std::to_string(type) + " in pieces");
    switch (type) {
    case hdr_ack: return handle_ack(msg, len);
    case hdr_put: return handle_put(msg, len);
    case hdr_fin: return handle_fin(msg, len);
    case hdr_fence:
    case hdr_fence_ack: return malformed("fence in pieces");
    case hdr_revoke:
    case hdr_revoke_nack: return malformed("revoke notice in pieces");
    case hdr_cancel:
    case hdr_cancel_reply: return malformed("cancel request in pieces");
    default: return malformed("unknown header type " + std::to_string(type));
    }
}

template <class Policy>
void Engine<Policy>::on_recv(weft_btl_module_t *btl, const weft_btl_recv_descriptor_t *rd)
{
    // A transport that closes after the PML finalized may still hand back what it held.
    if (!P)
        return;
    if (rd->flags & WEFT_BTL_RECV_FLAG_SEND_FAILED) [[unlikely]]
        return resend_failed(btl, rd);
    if (rd->flags & (WEFT_BTL_RECV_FLAG_PLACED | WEFT_BTL_RECV_FLAG_PLACE_FAILED))
        return placed_frag(rd);
    if (rd->segment_count == 0)
        return malformed("fragment without segments");
    const auto &first = rd->segments[0];
    // (One test for the common types, MATCH to FIN: every other one is a control message that
    // travels whole in one segment, dispatched here.)
    if (first.seg_len > 0 && rd->segment_count == 1 &&
        *static_cast<const uint8_t *>(first.seg_addr) >= hdr_fence) [[unlikely]] {
        const uint8_t type = *static_cast<const uint8_t *>(first.seg_addr);
        if (type == hdr_fence || type == hdr_fence_ack)
            return handle_fence(btl, rd->endpoint, static_cast<const char *>(first.seg_addr),
                                first.seg_len);
        if (type == hdr_revoke || type == hdr_revoke_nack)
            return handle_revoke(static_cast<const char *>(first.seg_addr), first.seg_len);
        if (type == hdr_cancel || type == hdr_cancel_reply) {
            auto it = P->endpoint_world.find(rd->endpoint);
            return handle_cancel(static_cast<const char *>(first.seg_addr), first.seg_len,
                                 it == P->endpoint_world.end() ? -1 : it->second);
        }
        if (type >= hdr_policy_first) {
            auto it = P->endpoint_world.find(rd->endpoint);
            if (!Policy::template handle_extra<Engine>(
                    static_cast<const char *>(first.seg_addr), first.seg_len,
                    it == P->endpoint_world.end() ? -1 : it->second))
                malformed("unknown header type " + std::to_string(type));
            return;
        }
    }
    // Headers travel whole in the first segment; anything else is gathered first.
    if (rd->segment_count == 1 ||
        (first.seg_len > 0 &&
         first.seg_len >= header_size(*static_cast<const uint8_t *>(first.seg_addr)))) {
        handle(static_cast<const char *>(first.seg_addr), first.seg_len, rd->segments + 1,
               rd->segment_count - 1);
        return;
    }
    std::string all;
    for (size_t i = 0; i < rd->segment_count; ++i)
        all.append(static_cast<const char *>(rd->segments[i].seg_addr), rd->segments[i].seg_len);
    handle(all.data(), all.size(), nullptr, 0);
}

template <class Policy>
const Unexpected *Engine<Policy>::find_unexpected(int src, int tag, weft_comm_t *comm)
{
    const auto [q, it] = unexpected_match(cs(comm), src, tag);
    return q ? &*it : nullptr;
}

template <class Policy>
void Engine<Policy>::probe_status(const Unexpected &u, weft_msg_status_t *status)
{
    if (!status)
        return;
    *status = weft_msg_status_t{};
    status->source = u.src;
    status->tag = u.tag;
    status->count = u.total;
}

} // namespace weft::pml::engine

#endif
