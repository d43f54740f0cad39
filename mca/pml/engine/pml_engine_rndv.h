// pml/engine: the rendezvous protocols of ob1-protocols.rst.
//
// The sender picks a candidate per message (start_rndv, exactly the spec's selection):
//   buffered mode                      buffered pipeline (RNDV + first part, then FRAGs)
//   contiguous, RDMA rails usable, and leave_pinned or no put or size <= min_rdma_pipeline_size
//                                      RDMA direct get (RGET with the registered buffer) if
//                                      every rail used can get, else RDMA direct put (RNDV
//                                      flagged CONTIG|PIN, no data)
//   contiguous, RDMA rails usable      RDMA pipeline (RNDV flagged CONTIG + first part)
//   otherwise                          send/receive pipeline (RNDV + first part)
// The receiver accepts it or falls back (rndv_matched): a buffer that is not contiguous, too
// small, or a rail it cannot match turns any RDMA protocol into the send/receive pipeline,
// answered with ACK. Its answers: ACK (send [send_offset, total) as FRAGs), PUT (write this
// piece into my registered buffer, then FIN; a PUT with rail 0 asks for the piece as FRAGs),
// and, for RGET, a FIN per piece it read.
//
// FRAGs are striped over up to max_send_per_range send rails by bandwidth, at most
// send_pipeline_depth of one message in flight; RDMA pieces over up to max_rdma_per_request
// RDMA rails. A message is complete at the sender when every byte was handed over and every
// transfer finished, and at the receiver when every byte arrived.
// Part of Engine<Policy>: included by pml_engine.h only.
#ifndef WEFT_PML_ENGINE_RNDV_H
#define WEFT_PML_ENGINE_RNDV_H

#include <algorithm>
#include <cstring>
#include <time.h>

namespace weft::pml::engine {

template <class Policy> int Engine<Policy>::send_world(const Req *r)
{
    return weft_comm_peer_world_rank(r->comm, int(r->dst));
}

template <class Policy> const Peer *Engine<Policy>::peer_of(int world)
{
    return world >= 0 && size_t(world) < P->peers.size() ? &P->peers[size_t(world)] : nullptr;
}

template <class Policy> size_t Engine<Policy>::padded(size_t n) { return (n + 7) & ~size_t(7); }

// Copy a control header of type H out of a message of len bytes: exactly its size, or (rest)
// at least it. false (reported) when the message does not fit.
template <class Policy>
template <class H>
bool Engine<Policy>::read_header(const char *msg, size_t len, H &h, const char *name, bool rest)
{
    if (rest ? len < sizeof h : len != sizeof h) {
        malformed(std::string(name) + " of " + std::to_string(len) + " bytes");
        return false;
    }
    std::memcpy(&h, msg, sizeof h);
    return true;
}

// The live request a header names by id, if it is of the kind wanted; NULL (reported) if not.
template <class Policy>
auto Engine<Policy>::named(uint64_t id, Want want, const char *name) -> Req *
{
    Req *found = P->live.find(id);
    if (!found && Policy::late_fragments_expected) {
        late(std::string("a ") + name + " for a request that is over");
        return nullptr;
    }
    if (!found || (want == Want::send && !found->is_send) ||
        (want == Want::recv && found->is_send)) {
        malformed(std::string(name) + " for an unknown " +
                  (want == Want::send   ? "send"
                   : want == Want::recv ? "receive"
                                        : "request"));
        return nullptr;
    }
    return found;
}

// A fragment of a transfer that was restarted or is over (a failover policy's): dropped.
template <class Policy> void Engine<Policy>::late(const std::string &what)
{
    ++P->late;
    if (P->verbose >= 20) [[unlikely]]
        trace(what + " arrived late and was dropped");
}

template <class Policy> void Engine<Policy>::trace_send_done(const Req *r)
{
    trace("send rank " + std::to_string(weft_comm_rank(r->comm)) + " -> " + std::to_string(r->dst) +
          " tag " + std::to_string(r->tag) + " cid " + std::to_string(weft_comm_cid(r->comm)) +
          " " + std::to_string(r->bytes) + " bytes: chose " + proto_name(r->chosen) + ", ran " +
          proto_name(r->ran) + " over " + rails_text(r->rails_used) +
          (r->ran != Proto::pipeline && r->frag_fallback
               ? " (pieces the receiver could not take by RDMA as FRAGs)"
               : ""));
}

template <class Policy> void Engine<Policy>::trace_recv(const Req *r, Proto offered, Proto running)
{
    trace("recv rank " + std::to_string(weft_comm_rank(r->comm)) + " <- " +
          std::to_string(r->status.source) + " tag " + std::to_string(r->status.tag) + " cid " +
          std::to_string(weft_comm_cid(r->comm)) + " " + std::to_string(r->total) +
          " bytes: offered " + proto_name(offered) + ", running " + proto_name(running) +
          (r->dense ? "" : " (non-contiguous receive buffer)"));
}

template <class Policy> void Engine<Policy>::enqueue(Req *r)
{
    if (!r->queued) {
        r->queued = true;
        if (P->sched_spare.empty())
            P->sched.push_back(r);
        else {
            P->sched.splice(P->sched.end(), P->sched_spare, P->sched_spare.begin());
            P->sched.back() = r;
        }
    }
}

// Complete send r if everything is done. r may be gone afterwards.
template <class Policy> void Engine<Policy>::maybe_complete_send(Req *r)
{
    if (r->sched_busy || !r->answered || r->frags_inflight || r->rdma_inflight ||
        !r->frag_work.empty() || r->queued || r->done_bytes < r->bytes ||
        !Policy::template may_complete<Engine>(r))
        return;
    if (P->verbose >= 20) [[unlikely]]
        trace_send_done(r);
    release_regs(r);
    complete(r);
}

// The peer cannot be reached: end send r with the error.
template <class Policy> void Engine<Policy>::fail_send(Req *r, weft_status_t why)
{
    r->status.error = why;
    r->frag_work.clear();
    r->done_bytes = r->bytes;
    r->answered = true;
}

template <class Policy>
void Engine<Policy>::frag_done(weft_btl_module_t *btl, weft_btl_endpoint_t *,
                               weft_btl_descriptor_t *des, weft_status_t status)
{
    auto *r = static_cast<Req *>(des->des_cbdata);
    --r->frags_inflight;
    r->done_bytes += reinterpret_cast<uintptr_t>(des->des_context);
    if constexpr (Policy::wants_completions) {
        // A policy that asked for FRAG completions decides what a failed one means (the
        // request was counted as the FRAG went out: send_frag).
        if (Policy::completion(Frag::frag)) {
            policy_fragment_done(Frag::frag, r, send_world(r), status, btl, des);
            // (The policy does not complete requests: the engine looks again.)
            if (!r->frag_work.empty())
                enqueue(r); // room in the pipeline again
            else
                maybe_complete_send(r);
            return;
        }
    }
    if (status != WEFT_SUCCESS)
        r->status.error = status;
    if (!r->frag_work.empty())
        enqueue(r); // room in the pipeline again
    else
        maybe_complete_send(r);
}

// Hand the FRAG [off, off + *n) of r to rail; *n is set to what the descriptor took.
//
// A fragment the BTL sends from the user's buffer (prepare_src in place) is in flight until
// its completion callback: those are what send_pipeline_depth bounds, and the send completes
// after the last. A fragment the PML or the BTL copied is done when handed over (the user's
// buffer is free again); the BTL's own free list bounds how many wait in it. (Waiting for the
// copies' callbacks as well cost btl/sm up to a tenth of its 4 MiB streaming bandwidth.)
template <class Policy>
weft_status_t Engine<Policy>::send_frag(Req *r, const Rail &rail, size_t off, size_t *n)
{
    FragHdr h{};
    h.type = hdr_frag;
    h.attempt = Policy::template attempt<Engine>(r);
    h.recv_id = r->peer_recv_id;
    h.offset = off;
    weft_btl_module_t *btl = rail.btl;
    weft_btl_descriptor_t *des = nullptr;
    weft_status_t rc;
    bool inplace = false;
    if (btl->btl_prepare_src) {
        // The BTL sends from the user's buffer where it can, or packs it itself.
        weft_convertor_t cv;
        if (r->dense)
            weft_convertor_init_contiguous(&cv, r->buf, r->bytes);
        else
            weft_convertor_init_datatype(&cv, &r->conv, r->buf, r->count, r->dtype);
        weft_convertor_seek(&cv, off);
        const uint32_t stores = r->stores == stores_streaming ? WEFT_BTL_DES_FLAG_STREAMING_STORES
                                : r->stores == stores_cached  ? WEFT_BTL_DES_FLAG_CACHED_STORES
                                                              : 0;
        rc = btl->btl_prepare_src(btl, rail.ep, &cv, WEFT_BTL_NO_ORDER, sizeof h, n,
                                  WEFT_BTL_DES_FLAG_BTL_OWNERSHIP | stores, &des);
        if (rc != WEFT_SUCCESS)
            return rc;
        std::memcpy(des->des_segments[0].seg_addr, &h, sizeof h);
        inplace = des->des_segment_count > 1; // the data is a segment of its own: the user's
    } else {
        rc = btl->btl_alloc(btl, rail.ep, WEFT_BTL_NO_ORDER, sizeof h + *n,
                            WEFT_BTL_DES_FLAG_BTL_OWNERSHIP, &des);
        if (rc != WEFT_SUCCESS)
            return rc;
        auto *p = static_cast<char *>(des->des_segments[0].seg_addr);
        std::memcpy(p, &h, sizeof h);
        send_load(r, off, p + sizeof h, *n);
    }
    if (inplace) {
        des->des_flags |= WEFT_BTL_DES_FLAG_ALWAYS_CALLBACK;
        des->des_cbfunc = frag_done;
        des->des_cbdata = r;
        des->des_context = reinterpret_cast<void *>(uintptr_t(*n));
        ++r->frags_inflight; // the callback may run inside btl_send
        if constexpr (Policy::wants_completions)
            if (Policy::completion(Frag::frag))
                Policy::template fragment_out<Engine>(Frag::frag, r, +1);
    } else {
        des->des_cbfunc = nullptr;
        if constexpr (Policy::wants_completions) {
            if (Policy::completion(Frag::frag)) {
                des->des_flags |= WEFT_BTL_DES_FLAG_ALWAYS_CALLBACK;
                des->des_cbfunc = ctl_done;
                des->des_cbdata = reinterpret_cast<void *>(uintptr_t(r->id));
                des->des_context = reinterpret_cast<void *>(
                    (uintptr_t(uint32_t(send_world(r))) << 8) | uintptr_t(uint8_t(Frag::frag)));
                Policy::template fragment_out<Engine>(Frag::frag, r, +1);
            }
        }
    }
    rc = btl->btl_send(btl, rail.ep, des, kTag);
    if (rc == WEFT_SUCCESS || rc == WEFT_IN_PROGRESS) {
        if (!inplace)
            r->done_bytes += *n;
        return WEFT_SUCCESS;
    }
    if constexpr (Policy::wants_completions)
        if (Policy::completion(Frag::frag))
            Policy::template fragment_out<Engine>(Frag::frag, r, -1);
    if (inplace)
        --r->frags_inflight;
    btl->btl_free(btl, des);
    return rc;
}

// Hand r's FRAGs to the send rails while the pipeline has room. *handed counts fragments.
template <class Policy> auto Engine<Policy>::schedule_step(Req *r, int *handed) -> Step
{
    const Peer *peer = peer_of(send_world(r));
    r->sched_busy = true;
    Step step = Step::done;
    while (!r->frag_work.empty()) {
        if (r->frags_inflight >= P->send_pipeline_depth) {
            step = Step::depth;
            break;
        }
        // The peer's send list is read afresh for every fragment: a rail removed meanwhile
        // (refresh_peer) is not used again, and the stream goes on over the others.
        const size_t nrails =
            peer ? std::min({peer->send.size(), P->max_send_per_range, kMaxRails}) : 0;
        if (nrails == 0) {
            fail_send(r, WEFT_ERR_UNREACH);
            break;
        }
        // The rail with the least data for its bandwidth.
        size_t best = 0;
        double best_load = 0;
        for (size_t i = 0; i < nrails; ++i) {
            const double load = double(r->striped[size_t(peer->send[i].index)]) /
                                std::max(peer->send[i].weight, 1e-6);
            if (i == 0 || load < best_load) {
                best = i;
                best_load = load;
            }
        }
        const Rail rail = peer->send[best]; // a copy: sending may change the list
        Range &rg = r->frag_work.front();
        const size_t chunk =
            std::max(rail.btl->btl_max_send_size, sizeof(FragHdr) + 1) - sizeof(FragHdr);
        size_t n = std::min(chunk, rg.end - rg.off);
        const weft_status_t rc = send_frag(r, rail, rg.off, &n);
        if (rc == WEFT_ERR_OUT_OF_RESOURCE) {
            step = Step::no_room;
            break;
        }
        // A failover policy mapped a rail that refused with a link error out (its error
        // callback runs first): the fragment goes on another rail.
        if (failover_retry(send_world(r), rail.btl, rc))
            continue;
        if (rc != WEFT_SUCCESS || n == 0) {
            fail_send(r, rc != WEFT_SUCCESS ? rc : WEFT_ERR_UNREACH);
            break;
        }
        r->striped[size_t(rail.index)] += n;
        r->rails_used |= 1u << rail.index;
        rg.off += n;
        if (rg.off == rg.end)
            r->frag_work.erase(r->frag_work.begin());
        if (handed)
            ++*handed;
    }
    r->sched_busy = false;
    return step;
}

// r has FRAGs to send: behind the sends already waiting (fragments go out in message order,
// so that messages finish one after the other instead of all at once at the end).
template <class Policy> void Engine<Policy>::schedule(Req *r)
{
    enqueue(r);
    progress_sched();
}

// Whether a rail's module takes a message of `bytes` by put/get: its size bounds, those for a
// stream when the message follows another large one to the same peer (btl.h).
inline bool rdma_size_ok(const weft_btl_module_t *btl, size_t bytes, bool stream)
{
    size_t lo = 0, hi = 0;
    if (WEFT_MODULE_HAS_FIELD(btl, weft_btl_module_t, btl_min_rdma_size))
        lo = btl->btl_min_rdma_size;
    if (WEFT_MODULE_HAS_FIELD(btl, weft_btl_module_t, btl_stream_max_rdma_size)) {
        hi = btl->btl_max_rdma_size;
        if (stream && (btl->btl_stream_min_rdma_size | btl->btl_stream_max_rdma_size) != 0) {
            lo = btl->btl_stream_min_rdma_size;
            hi = btl->btl_stream_max_rdma_size;
        }
    }
    return bytes >= lo && (hi == 0 || bytes < hi);
}

// The RDMA rails of peer usable for a message of `bytes` with `need` (PUT or GET), at most
// max_rdma_per_request; stream: the message follows another rendezvous to the same peer.
template <class Policy>
RailList Engine<Policy>::rdma_rails(const Peer &peer, size_t bytes, uint32_t need, bool stream)
{
    // One rail, whose receivers choose (btl/sm): its chooser says, without the list's loop (in
    // an 8 KiB stream, 46 instructions a message of the sender's 71 more than with the
    // pipeline forced, by cachegrind).
    if (peer.chooser && peer.rdma.size() == 1) {
        const Rail &rail = peer.rdma[0];
        if (!(rail.flags & need) || rail.btl->btl_registration_handle_size > kMaxHandle ||
            !peer.chooser->offer(bytes, stream))
            return {};
        return {&rail};
    }
    RailList out;
    for (const Rail &rail : peer.rdma) {
        if (out.size() >= std::min(P->max_rdma_per_request, kMaxRails))
            break;
        if (!(rail.flags & need))
            continue;
        // A module whose receivers choose is offered every message they may want (what this
        // process learned as a receiver says which); any other by its size bounds.
        if (P->receiver_chooses && (rail.btl->btl_flags & WEFT_BTL_FLAG_RECEIVER_CHOOSES)) {
            Chooser *ch =
                rail.btl == peer.rdma[0].btl && peer.chooser ? peer.chooser : chooser_of(rail.btl);
            if (!ch->offer(bytes, stream))
                continue;
        } else if (!rdma_size_ok(rail.btl, bytes, stream)) {
            continue;
        }
        if (rail.btl->btl_registration_handle_size > kMaxHandle)
            continue;
        out.push_back(&rail);
    }
    return out;
}

template <class Policy>
const Rail *Engine<Policy>::find_rail(const Peer &peer, uint32_t key, uint32_t need)
{
    for (const Rail &rail : peer.rdma)
        if (rail.key == key && (rail.flags & need))
            return &rail;
    return nullptr;
}

// Split [from, to) over rails by weight: the piece of rail i is [cuts[i], cuts[i + 1]).
template <class Policy> Cuts Engine<Policy>::split(size_t from, size_t to, const RailList &rails)
{
    double sum = 0;
    for (const Rail *rail : rails)
        sum += std::max(rail->weight, 1e-6);
    Cuts cuts{from};
    double acc = 0;
    for (size_t i = 0; i + 1 < rails.size(); ++i) {
        acc += std::max(rails[i]->weight, 1e-6);
        cuts.push_back(from + size_t(double(to - from) * acc / sum));
    }
    cuts.push_back(to);
    return cuts;
}

// Append an RdmaSeg for [off, off + len) of buf registered in e to msg.
template <class Policy>
void Engine<Policy>::append_seg(std::string &msg, const Rail &rail, const RegCache::Entry *e,
                                char *buf, size_t off, size_t len)
{
    RdmaSeg seg{};
    seg.offset = off;
    seg.length = len;
    seg.addr = reinterpret_cast<uint64_t>(buf + off);
    seg.rail = rail.key;
    seg.hlen = uint32_t(rail.btl->btl_registration_handle_size);
    msg.append(reinterpret_cast<const char *>(&seg), sizeof seg);
    msg.append(reinterpret_cast<const char *>(e->handle), seg.hlen);
    msg.append(padded(seg.hlen) - seg.hlen, '\0');
}

// RDMA direct get: RGET with the registered pieces. false: nothing sent (no registration);
// true: sent, or sending failed with *rc.
template <class Policy>
bool Engine<Policy>::send_rget(Req *r, RndvHdr h, const RailList &rails, int world, bool stream,
                               size_t limit, weft_status_t *rc)
{
    RgetHdr g{};
    g.rndv = h;
    g.rndv.match.type = hdr_rget;
    g.rndv.match.flags |= flag_contig;
    g.nsegs = 0;
    std::string &msg = P->rget_msg; // kept for the next RGET: no allocation per message
    msg.assign(sizeof g, '\0');
    const Cuts cuts = split(0, r->bytes, rails);
    for (size_t i = 0; i < rails.size(); ++i) {
        if (cuts[i + 1] == cuts[i])
            continue;
        if (cuts[i + 1] - cuts[i] > rails[i]->btl->btl_get_limit) {
            release_regs(r);
            r->rails_used = 0;
            return false;
        }
        weft_status_t rc = WEFT_SUCCESS;
        RegCache::Entry *e =
            P->rcache->acquire(rails[i]->btl, r->buf + cuts[i], cuts[i + 1] - cuts[i],
                               WEFT_BTL_REG_FLAG_REMOTE_READ, &rc);
        if (!e) {
            release_regs(r);
            return false;
        }
        r->regs.push_back(e);
        append_seg(msg, *rails[i], e, r->buf, cuts[i], cuts[i + 1] - cuts[i]);
        ++g.nsegs;
        r->rails_used |= 1u << rails[i]->index;
    }
    if (msg.size() > limit) {
        release_regs(r);
        r->rails_used = 0;
        return false;
    }
    // To a module whose receivers choose, the first bytes go along, as in a RNDV: a receiver
    // that takes the pipeline then pays nothing for the offer. Not where it said that a get is
    // its best (Chooser::first_bytes).
    size_t first = 0;
    const Peer *peer = peer_of(world);
    if (peer && P->receiver_chooses && rails.size() == 1 &&
        (rails[0]->btl->btl_flags & WEFT_BTL_FLAG_RECEIVER_CHOOSES) &&
        (!peer->chooser || peer->chooser->first_bytes(r->bytes, stream))) {
        const size_t room = peer->rndv_first > msg.size() ? peer->rndv_first - msg.size() : 0;
        first = std::min(room, r->bytes - 1) & ~size_t(7);
    }
    g.first = uint32_t(first);
    std::memcpy(msg.data(), &g, sizeof g);
    // As for a RNDV's first part: counted as done before (btl/self may deliver inside the call).
    r->done_bytes = first;
    *rc = send_bytes(world, msg.data(), msg.size(), r->buf, first, true, Frag::rget, r);
    if (*rc != WEFT_SUCCESS)
        release_regs(r);
    return true;
}

// A FIN (the policy's header type) for `length` bytes of request `id` at world: the transfer's
// status goes as the BTL gave it. r is this side's request.
template <class Policy>
void Engine<Policy>::send_fin(int world, uint64_t id, uint64_t offset, uint64_t length,
                              weft_status_t status, Req *r)
{
    typename Policy::Fin fin{};
    fin.type = hdr_fin;
    fin.status = status;
    fin.id = id;
    fin.length = length;
    Policy::template fill_fin<Engine>(fin, r, offset);
    if (r && !r->is_send)
        fin.offers = offers_byte(world, r->total, r->seen);
    send_bytes(world, &fin, sizeof fin, nullptr, 0, true, Frag::fin);
}

template <class Policy>
void Engine<Policy>::put_done(weft_btl_module_t *btl, weft_btl_endpoint_t *, void *,
                              weft_btl_registration_handle_t *, void *context, void *,
                              weft_status_t status)
{
    auto *op = static_cast<RdmaOp *>(context);
    Req *r = op->r;
    Policy::template fragment_out<Engine>(Frag::rdma, r, -1);
    if (status != WEFT_SUCCESS && Policy::template rdma_failed<Engine>(
                                      r, btl, false, r->id, op->offset, op->length, status)) {
        --r->rdma_inflight;
        free_rdma_op(op);
        maybe_complete_send(r);
        return;
    }
    send_fin(send_world(r), r->peer_recv_id, op->offset, op->length, status, r);
    if (status != WEFT_SUCCESS)
        r->status.error = status;
    r->done_bytes += op->length;
    --r->rdma_inflight;
    free_rdma_op(op);
    maybe_complete_send(r);
}

template <class Policy>
void Engine<Policy>::get_done(weft_btl_module_t *btl, weft_btl_endpoint_t *, void *,
                              weft_btl_registration_handle_t *, void *context, void *cbdata,
                              weft_status_t status)
{
    auto *op = static_cast<RdmaOp *>(context);
    Req *r = op->r;
    Policy::template fragment_out<Engine>(Frag::rdma, r, -1);
    // cbdata: the sender's request.
    const auto send_id = uint64_t(reinterpret_cast<uintptr_t>(cbdata));
    if (status != WEFT_SUCCESS && Policy::template rdma_failed<Engine>(
                                      r, btl, true, send_id, op->offset, op->length, status)) {
        --r->rdma_inflight;
        free_rdma_op(op);
        if (r->received >= r->total && r->rdma_inflight == 0)
            finish_recv(r);
        return;
    }
    send_fin(r->world_peer, send_id, op->offset, op->length, status, r);
    if (status != WEFT_SUCCESS)
        r->status.error = status;
    r->received += op->length;
    --r->rdma_inflight;
    free_rdma_op(op);
    if (r->received >= r->total && r->rdma_inflight == 0)
        finish_recv(r);
}

// Ask the sender for [off, off + len) as FRAGs (a PUT without a rail).
template <class Policy>
void Engine<Policy>::ask_frags(Req *r, uint64_t send_id, size_t off, size_t len)
{
    PutHdr p{};
    p.type = hdr_put;
    p.attempt = Policy::template attempt<Engine>(r);
    p.send_id = send_id;
    p.recv_id = r->id;
    p.seg.offset = off;
    p.seg.length = len;
    send_bytes(r->world_peer, &p, sizeof p, nullptr, 0, true, Frag::put, r);
}

template <class Policy> void Engine<Policy>::send_ack(Req *r, uint64_t send_id, size_t send_offset)
{
    AckHdr ack{};
    ack.type = hdr_ack;
    ack.attempt = Policy::template attempt<Engine>(r);
    ack.stores = r->stores;
    ack.offers = offers_byte(r->world_peer, r->total, r->seen);
    ack.send_id = send_id;
    ack.recv_id = r->received < r->total ? r->id : 0;
    ack.send_offset = send_offset;
    r->peer_send_id = send_id;
    send_bytes(r->world_peer, &ack, sizeof ack, nullptr, 0, true, Frag::ack,
               ack.recv_id ? r : nullptr);
}

// Send the PUTs for [from, to) of receive r in pieces of at most `piece` bytes, round the
// rails. false: nothing sent (the first registration failed).
template <class Policy>
bool Engine<Policy>::send_puts(Req *r, uint64_t send_id, size_t from, size_t to,
                               const RailList &rails, size_t piece)
{
    size_t i = 0;
    for (size_t off = from; off < to; ++i) {
        const Rail &rail = *rails[i % rails.size()];
        const size_t limit = rail.btl->btl_put_limit ? rail.btl->btl_put_limit : piece;
        const size_t len = std::min({piece, to - off, limit});
        weft_status_t rc = WEFT_SUCCESS;
        RegCache::Entry *e =
            P->rcache->acquire(rail.btl, r->buf + off, len, WEFT_BTL_REG_FLAG_REMOTE_WRITE, &rc);
        if (!e) {
            if (off == from)
                return false;
            ask_frags(r, send_id, off, to - off);
            return true;
        }
        r->regs.push_back(e);
        std::string msg(sizeof(PutHdr), '\0');
        PutHdr p{};
        p.type = hdr_put;
        p.attempt = Policy::template attempt<Engine>(r);
        p.send_id = send_id;
        p.recv_id = r->id;
        std::memcpy(msg.data(), &p, sizeof p);
        std::string seg;
        append_seg(seg, rail, e, r->buf, off, len);
        // PutHdr ends with its RdmaSeg: overwrite it with the filled one, handle after.
        msg.resize(sizeof(PutHdr) - sizeof(RdmaSeg));
        msg += seg;
        send_bytes(r->world_peer, msg.data(), msg.size(), nullptr, 0, true, Frag::put, r);
        off += len;
    }
    return true;
}

template <class Policy>
auto Engine<Policy>::parse_segs(const std::string &raw, size_t total, const Peer &peer, bool *bad)
    -> FixedVec<Seg, kMaxRails>
{
    FixedVec<Seg, kMaxRails> out;
    size_t at = 0, covered = 0;
    *bad = false;
    while (at < raw.size()) {
        Seg s{};
        if (raw.size() - at < sizeof(RdmaSeg)) {
            *bad = true;
            return {};
        }
        std::memcpy(&s.seg, raw.data() + at, sizeof s.seg);
        at += sizeof s.seg;
        if (s.seg.hlen > kMaxHandle || raw.size() - at < padded(s.seg.hlen) ||
            s.seg.offset != covered || s.seg.length > total - covered) {
            *bad = true;
            return {};
        }
        s.handle = raw.data() + at;
        at += padded(s.seg.hlen);
        covered += s.seg.length;
        const Rail *rail = find_rail(peer, s.seg.rail, WEFT_BTL_FLAG_GET);
        if (!rail || rail->btl->btl_registration_handle_size != s.seg.hlen)
            return {};
        s.btl = rail->btl;
        s.ep = rail->ep;
        if (!out.push_back(s)) { // more pieces than any sender makes
            *bad = true;
            return {};
        }
    }
    if (covered != total) {
        *bad = true;
        out.clear();
    }
    return out;
}

// RDMA direct get at the receiver: read each piece (segs, from parse_segs) with btl_get's
// flags. false: nothing started.
template <class Policy>
bool Engine<Policy>::start_gets(Req *r, const Unexpected &u, const FixedVec<Seg, kMaxRails> &segs,
                                uint32_t flags)
{
    if (segs.empty())
        return false;
    // What came with the RGET (its first part) is here; the gets read the rest.
    const size_t have = std::min(r->received, size_t(u.total));
    // Held until every get is started, so that a get finishing at once cannot complete r.
    ++r->rdma_inflight;
    for (Seg s : segs) {
        if (s.seg.offset + s.seg.length <= have)
            continue;
        if (s.seg.offset < have) {
            const uint64_t skip = have - s.seg.offset;
            s.seg.offset += skip;
            s.seg.addr += skip;
            s.seg.length -= skip;
        }
        weft_status_t rc = WEFT_SUCCESS;
        RegCache::Entry *e =
            P->rcache->acquire(s.btl, r->buf + s.seg.offset, s.seg.length,
                               WEFT_BTL_REG_FLAG_LOCAL_WRITE | WEFT_BTL_REG_FLAG_REMOTE_WRITE, &rc);
        if (e) {
            r->regs.push_back(e);
            RdmaOp *op = new_rdma_op(r, s.seg.offset, s.seg.length);
            ++r->rdma_inflight;
            // Counted before the call: the get may complete inside it.
            Policy::template fragment_out<Engine>(Frag::rdma, r, +1);
            const bool stray = P->stray_get_in != 0 && --P->stray_get_in == 0;
            rc = s.btl->btl_get(s.btl, s.ep, r->buf + s.seg.offset, stray ? 16 : s.seg.addr,
                                e->handle,
                                reinterpret_cast<const weft_btl_registration_handle_t *>(s.handle),
                                s.seg.length, flags, WEFT_BTL_NO_ORDER, get_done, op,
                                reinterpret_cast<void *>(uintptr_t(u.send_id)));
            if (rc == WEFT_SUCCESS)
                continue;
            Policy::template fragment_out<Engine>(Frag::rdma, r, -1);
            --r->rdma_inflight;
            free_rdma_op(op);
        }
        // This piece cannot be read: the sender sends it.
        ask_frags(r, u.send_id, s.seg.offset, s.seg.length);
    }
    --r->rdma_inflight;
    return true;
}

template <class Policy> uint32_t Engine<Policy>::rail_key(weft_btl_module_t *btl)
{
    const char *name = btl->btl_component ? btl->btl_component->mca.name : "?";
    uint32_t h = 2166136261u;
    for (const char *p = name; *p; ++p)
        h = (h ^ uint8_t(*p)) * 16777619u;
    uint32_t ordinal = 0;
    for (weft_btl_module_t *m : P->modules) {
        if (m == btl)
            break;
        if (m->btl_component == btl->btl_component)
            ++ordinal;
    }
    h &= ~0xffu;
    if (h == 0)
        h = 0x100; // 0 means "no rail"
    return h | (ordinal & 0xffu);
}

template <class Policy> void Engine<Policy>::release_regs(Req *r)
{
    for (RegCache::Entry *e : r->regs)
        P->rcache->release(e);
    r->regs.clear();
}

template <class Policy>
weft_status_t Engine<Policy>::start_rndv(Req *r, const MatchHdr &m, int world)
{
    const Peer *peer = peer_of(world);
    if (!peer || peer->eager_limit == 0)
        return WEFT_ERR_UNREACH;
    if constexpr (Policy::wants_match)
        Policy::template rndv_match<Engine>(r, m);
    r->answered = false;
    r->stores = stores_btl;
    r->done_bytes = 0;
    r->frags_inflight = r->rdma_inflight = 0;
    r->frag_work.clear();
    r->striped.fill(0);
    r->rails_used = 0;
    r->queued = r->sched_busy = false;
    r->frag_fallback = false;
    RndvHdr h{};
    h.match = m;
    h.match.type = hdr_rndv;
    h.match.flags = r->mode == WEFT_SEND_SYNCHRONOUS ? flag_sync : 0;
    h.total = r->bytes;
    h.send_id = track(r);
    const bool stream = flow(world).sends++ != 0;
    r->rndv_world = world;
    r->told_by = chooser_for(*peer); // told what the receiver asks for, at its answer

    // The candidate, as ob1-protocols.rst selects it.
    Proto chosen = Proto::pipeline;
    RailList rails;
    if (sizeof(MatchHdr) + r->bytes <= peer->eager_limit) {
        chosen = Proto::pipeline; // a synchronous message that would fit eagerly
    } else if (r->mode == WEFT_SEND_BUFFERED) {
        chosen = Proto::buffered;
    } else if (r->dense &&
               !(rails = rdma_rails(*peer, r->bytes, WEFT_BTL_FLAG_RDMA, stream)).empty()) {
        bool all_get = true, all_put = true;
        for (const Rail *rail : rails) {
            all_get = all_get && (rail->flags & WEFT_BTL_FLAG_GET);
            all_put = all_put && (rail->flags & WEFT_BTL_FLAG_PUT);
        }
        if (!all_get && !all_put) {
            rails = rdma_rails(*peer, r->bytes, WEFT_BTL_FLAG_PUT, stream);
            all_put = true;
        }
        if (P->leave_pinned || !all_put || r->bytes <= peer->min_rdma_pipeline_size)
            chosen = all_get ? Proto::rdma_get : Proto::rdma_put;
        else
            chosen = Proto::rdma_pipeline;
    }
    r->chosen = r->ran = chosen;
    if (chosen == Proto::rdma_get) {
        weft_status_t rc = WEFT_SUCCESS;
        if (send_rget(r, h, rails, world, stream, peer->eager_limit, &rc)) {
            if (rc != WEFT_SUCCESS)
                untrack(r);
            // The receiver's answer (unless it came inside the call, over btl/self) tells the
            // next offers whether to come (offer_answered).
            else if (P->receiver_chooses && !r->answered && rails.size() == 1 &&
                     (rails[0]->btl->btl_flags & WEFT_BTL_FLAG_RECEIVER_CHOOSES)) {
                r->offered_by = chooser_of(rails[0]->btl);
                r->offered_stream = stream;
            }
            return rc;
        }
        r->ran = Proto::pipeline; // no registration: the sender falls back itself
    }
    // RNDV: the first part of the message, none for RDMA direct put.
    if (r->chosen == Proto::rdma_put && r->ran == Proto::rdma_put)
        h.match.flags |= flag_contig | flag_pin;
    else if (r->ran == Proto::rdma_pipeline)
        h.match.flags |= flag_contig;
    const size_t room = peer->rndv_first > sizeof h ? peer->rndv_first - sizeof h : 0;
    const size_t first = h.match.flags & flag_pin ? 0 : std::min(r->bytes, room);
    // A BTL may deliver inside the call (btl/self), and the whole protocol run nested in it:
    // the first part counts as done before, and the send completes only after it returns.
    r->done_bytes = first;
    r->sched_busy = true;
    weft_status_t rc;
    if (r->dense || first == 0) {
        rc = send_bytes(world, &h, sizeof h, r->buf, first, true, Frag::rndv, r);
    } else {
        std::string packed(first, '\0');
        send_load(r, 0, packed.data(), first);
        rc = send_bytes(world, &h, sizeof h, packed.data(), first, true, Frag::rndv, r);
    }
    r->sched_busy = false;
    if (rc != WEFT_SUCCESS) {
        untrack(r);
        return rc;
    }
    maybe_complete_send(r);
    return WEFT_SUCCESS;
}

// The flow of world's messages, made at its first use (grow_flow). The common case inline:
// every rendezvous message reads it, a receive two or three times (as a call, with the growth
// in it, 16-32 instructions a message of an 8 KiB stream, by cachegrind).
template <class Policy> inline auto Engine<Policy>::flow(int world) -> typename State::Flow &
{
    if (size_t(world) < P->flows.size()) [[likely]]
        return P->flows[size_t(world)];
    return grow_flow(world);
}

template <class Policy> auto Engine<Policy>::grow_flow(int world) -> typename State::Flow &
{
    P->flows.resize(size_t(world) + 1);
    return P->flows[size_t(world)];
}

template <class Policy> uint64_t Engine<Policy>::now_ns()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

static_assert(unsigned(Way::pipeline) == WEFT_BTL_WAY_PIPELINE &&
                  unsigned(Way::get) == WEFT_BTL_WAY_GET &&
                  unsigned(Way::shared) == WEFT_BTL_WAY_SHARED &&
                  unsigned(Way::streamed) == WEFT_BTL_WAY_STREAMING,
              "the chooser's ways are btl_way_rate's");

// This process's chooser for btl (made on first use), starting from the rates btl measured
// (BTL ABI 1.5: btl_way_rate), if it did.
template <class Policy> Chooser *Engine<Policy>::chooser_of(const weft_btl_module_t *btl)
{
    for (auto &[m, c] : P->choosers)
        if (m == btl)
            return c.get();
    auto c = std::make_unique<Chooser>();
    if (WEFT_MODULE_HAS_OP(btl, weft_btl_module_t, btl_way_rate))
        c->rates(
            [](const void *ctx, size_t bytes, bool stream, Way w) {
                const auto *b = static_cast<const weft_btl_module_t *>(ctx);
                return b->btl_way_rate(b, bytes, stream ? 1 : 0, unsigned(w));
            },
            btl);
    P->choosers.emplace_back(btl, std::move(c));
    return P->choosers.back().second.get();
}

// The chooser of peer's module if its receivers choose (this process's, as a sender and as a
// receiver of that peer), else nullptr: found when its rails were (refresh_peer), since every
// rendezvous message reads it (a search each time was three more cache lines a message).
template <class Policy> Chooser *Engine<Policy>::chooser_for(const Peer &peer)
{
    return peer.chooser;
}

// The offers byte of an answer to world about a message of `total` bytes (AckOffers) that this
// receiver saw (Req::seen) in a stream or not at all (0), alone (1) or exchanged (2). The
// sender may see a stream where the receiver sees messages alone: in a ping-pong of pipeline
// messages, the sender's last one is still in its flow when the answer to it arrives, so its
// next one counts as a stream's, whose offers follow offers_yes, not offers_next. An answer
// about a message seen alone (exchanged) that asks for the next one alone (exchanged: its own
// state, not the other's) asks for offers in a stream too, so that such a sender offers it.
// Found at 4 MiB on a Xeon VM: one receiver, whose best alone was the shared get (253 us
// against the pipeline's 379), had 181 messages come by the pipeline with no get offered.
template <class Policy>
inline uint8_t Engine<Policy>::offers_byte(int world, size_t total, uint8_t seen)
{
    const Peer *peer = peer_of(world);
    Chooser *ch = peer ? chooser_for(*peer) : nullptr;
    if (!ch)
        return offers_no;
    const Chooser::Asks a = ch->asks_for(total);
    const bool next_here = seen != 0 && a.next_of[seen - 1];
    return uint8_t((a.now || next_here ? offers_yes : offers_no) |
                   (a.next ? offers_next : offers_no) |
                   (a.stream_get ? offers_stream_get : offers_no) |
                   (a.alone_get ? offers_alone_get : offers_no));
}

// A rendezvous receive r whose way this process did not choose is over: it leaves its flow.
// Only a timed one reads the clock (a read for every RNDV took 17 ns of a 4 KiB ping-pong's
// 0.6 us on a Zen 5 VM), and says when it ended: a get offered right behind it is one of a
// stream (choose()); behind an untimed one, only if the flow is still busy.
template <class Policy> void Engine<Policy>::rndv_done(Req *r)
{
    if (r->world_peer < 0)
        return;
    typename State::Flow &f = flow(r->world_peer);
    if (r->in_flow) {
        r->in_flow = false;
        if (f.active)
            --f.active;
    }
    if (r->choose_ns) { // a RNDV alone, timed: the pipeline's time in its own caches
        const uint64_t now = now_ns();
        if (f.active == 0)
            f.last_done = now;
        const Peer *peer = peer_of(r->world_peer);
        // (unless another of the peer's came meanwhile: alone no longer, as in chosen_done)
        if (Chooser *ch = peer ? chooser_for(*peer) : nullptr;
            ch && r->status.error == WEFT_SUCCESS && now > r->choose_ns &&
            f.started == r->flow_mark)
            ch->unoffered_done(r->total, r->ticket.way, now - r->choose_ns);
        r->choose_ns = 0;
    }
}

// The peer's receiver answered r, a rendezvous send: took the get offered (a FIN) or not (an
// ACK); `offers` is what it asks for (AckOffers).
template <class Policy>
inline void Engine<Policy>::offer_answered(Req *r, bool took, uint8_t offers)
{
    if (r->told_by) {
        r->told_by->told(r->bytes, offers & offers_yes, offers & offers_next,
                         offers & offers_stream_get, offers & offers_alone_get);
        r->told_by = nullptr;
    }
    if (!r->offered_by)
        return;
    if (!r->offered_stream)
        r->offered_by->taken(r->bytes, took);
    r->offered_by = nullptr;
}

// The receiver's choice for r (an RGET over btl, which asks for it): false if it must wait
// (parked, asked again from progress); else *t, remembered in r with the moment, to be
// measured when r completes (chosen_done).
template <class Policy>
bool Engine<Policy>::choose(Req *r, const Unexpected &u, weft_btl_module_t *btl, Chooser::Ticket *t)
{
    Chooser *ch = chooser_of(btl);
    typename State::Flow &f = flow(u.world_src);
    const uint64_t now = now_ns();
    // A stream: another rendezvous from the peer under way or waiting, or one that ended only
    // just now (a get is over before the next RGET is matched). Else an exchange if this
    // process is sending the peer a rendezvous message of its own.
    const bool stream =
        f.active > 0 || f.parked > 0 || (f.last_done && now - f.last_done < f.last_service / 4);
    const Case c = f.sends > 0 ? Case::exchange : stream ? Case::stream : Case::alone;
    const Way advice = rdma_size_ok(btl, u.total, stream) ? Way::get : Way::pipeline;
    Chooser::Reason why = Chooser::Reason::advice;
    *t = ch->pick(u.total, c, advice, allowed_ways(btl), f.active, now, &why);
    if (t->wait)
        return false;
    chosen(r, u, f, ch, *t, c, now, why);
    return true;
}

// The ways a receiver may choose over btl (way_bit).
template <class Policy> unsigned Engine<Policy>::allowed_ways(const weft_btl_module_t *btl)
{
    return way_bit(Way::pipeline) | way_bit(Way::get) |
           ((btl->btl_flags & WEFT_BTL_FLAG_SHARED_GET) ? way_bit(Way::shared) : 0) |
           ((btl->btl_flags & WEFT_BTL_FLAG_STORES_CHOICE) ? way_bit(Way::streamed) : 0);
}

// r takes the way t the receiver chose in case c at now (0: not read): measured when it
// completes (chosen_done).
template <class Policy>
inline void Engine<Policy>::chosen(Req *r, const Unexpected &u, typename State::Flow &f,
                                   Chooser *ch, Chooser::Ticket t, Case c, uint64_t now,
                                   Chooser::Reason why)
{
    r->chooser = ch;
    r->ticket = t;
    r->way_case = c;
    r->seen = c == Case::stream ? 0 : c == Case::exchange ? 2 : 1;
    r->choose_ns = now;
    ++f.active;
    r->flow_mark = ++f.started;
    if (P->verbose >= 20) [[unlikely]]
        trace_chosen(u, t, c, why);
}

template <class Policy>
void Engine<Policy>::trace_chosen(const Unexpected &u, Chooser::Ticket t, Case c,
                                  Chooser::Reason why)
{
    trace("recv from world rank " + std::to_string(u.world_src) + " " + std::to_string(u.total) +
          " bytes " + case_name(c) + (u.type == hdr_rget ? "" : " (RNDV)") +
          ": the receiver chose " + way_name(t.way) + " (" + reason_name(why) +
          (t.run ? ", measured" : "") + ")");
}

// The common cases of rndv_go, inline where a RNDV is matched (false: rndv_go decides):
// - alone (none of the peer's under way or waiting) or exchanged (this process sends the peer a
//   rendezvous message of its own): unoffered_rndv;
// - in a stream, none waiting, and a run of the pipeline's stores going on (next_in_run): r
//   takes it.
// (Through rndv_go and chosen, calls that looked the peer and its flow up again, an 8 KiB
// stream's receiver ran about 220 instructions a message more than with the pipeline forced,
// by cachegrind, and had 0.94 of its bandwidth on a Zen 5 VM.)
template <class Policy>
inline bool Engine<Policy>::rndv_fast(Req *r, const Unexpected &u, const Peer &peer, Chooser *ch)
{
    typename State::Flow &f = flow(u.world_src); // (ch, the peer's: its rails are there)
    if (f.sends > 0 || (f.active == 0 && f.parked == 0)) {
        unoffered_rndv(r, u, peer, ch, f);
        return true;
    }
    if (f.parked > 0)
        return false;
    const auto way = ch->next_in_run(u.total, way_bit(Way::pipeline) | way_bit(Way::streamed));
    if (!way)
        return false;
    chosen(r, u, f, ch, Chooser::Ticket{*way}, Case::stream, 0, Chooser::Reason::best);
    if (peer.stores_choice)
        r->stores = *way == Way::streamed ? stores_streaming : stores_cached;
    return true;
}

// A RNDV alone or exchanged (f: its peer's flow): no choice (offers are measured), the stores
// the measurements favour; alone, one in a few is timed (rndv_done): most of the pipeline's
// messages come so, and in steady state; the offered ones the receiver declines may not be.
template <class Policy>
inline void Engine<Policy>::unoffered_rndv(Req *r, const Unexpected &u, const Peer &peer,
                                           Chooser *ch, typename State::Flow &f)
{
    const bool stores = peer.stores_choice;
    const Case c = f.sends > 0 ? Case::exchange : Case::alone;
    const bool time = ch->unoffered(u.total, c);
    r->seen = c == Case::exchange ? 2 : 1;
    bool known = !stores;
    if (stores) {
        const bool streamed = ch->streamed_pipeline(u.total, &known);
        r->stores = !known ? stores_btl : streamed ? stores_streaming : stores_cached;
    }
    if (time && known) {
        r->ticket.way = stores && r->stores == stores_streaming ? Way::streamed : Way::pipeline;
        r->choose_ns = now_ns();
    }
    ++f.active; // in the flow until it ends (rndv_done): the next one sees a stream
    r->flow_mark = ++f.started;
    r->in_flow = true;
}

// A RNDV matched by r over a module whose receivers choose (ch), more of it to come by the
// pipeline: in a stream (another of the peer's under way or waiting; no clock read for that),
// the receiver chooses the pipeline's stores as a way of the stream's runs (pick_stream: the
// get's runs need offers, which it asks for), or parks it until a measured run may start.
// Alone or exchanged, the stores the measurements favour (no choice: offers are measured).
template <class Policy>
auto Engine<Policy>::rndv_go(Req *r, const Unexpected &u, const Peer &peer, Chooser *ch,
                             bool resuming) -> RgetGo
{
    if (peer.rdma.empty()) // (its rails went while it was parked)
        return RgetGo::pipeline;
    typename State::Flow &f = flow(u.world_src);
    if ((f.active == 0 && f.parked == 0) || f.sends > 0) {
        unoffered_rndv(r, u, peer, ch, f);
        return RgetGo::pipeline;
    }
    if (!resuming && f.parked > 0) {
        P->parked.push_back(typename State::Parked{r, u, r->id});
        ++f.parked;
        return RgetGo::parked;
    }
    // (Most of a stream's RNDVs went on with a run of the pipeline before: rndv_fast.)
    const unsigned pipelines = way_bit(Way::pipeline) | way_bit(Way::streamed);
    const uint64_t now = ch->needs_time(u.total) ? now_ns() : 0;
    const weft_btl_module_t *btl = peer.rdma[0].btl;
    const Way advice = rdma_size_ok(btl, u.total, true) ? Way::get : Way::pipeline;
    Chooser::Reason why = Chooser::Reason::advice;
    const Chooser::Ticket t =
        ch->pick(u.total, Case::stream, advice, allowed_ways(btl), f.active, now, &why, pipelines);
    if (t.wait) {
        if (!resuming) {
            P->parked.push_back(typename State::Parked{r, u, r->id});
            ++f.parked;
        }
        return RgetGo::parked;
    }
    chosen(r, u, f, ch, t, Case::stream, now, why);
    if (peer.stores_choice)
        r->stores = t.way == Way::streamed ? stores_streaming : stores_cached;
    return RgetGo::pipeline;
}

// r, whose way the receiver chose, is over: how long it took teaches the chooser (an exchanged
// message once this process's own send to the peer is over too: exchange_sent).
template <class Policy> inline void Engine<Policy>::chosen_done(Req *r, bool ok)
{
    if (!r->chooser)
        return;
    typename State::Flow &f = flow(r->world_peer);
    if (r->way_case == Case::stream && r->ticket.run == 0 && f.active > 1) {
        // Nothing to measure, and the flow goes on: no clock read.
    } else if (r->ticket.untimed) {
        // Alone in the steady state, not measured (Chooser::pick): no clock read; it ended
        // about when the last measured one would have (for the next one's stream detection:
        // choose()).
        f.last_done = r->choose_ns + f.last_service;
    } else {
        chosen_measured(r, f, ok);
    }
    if (f.active)
        --f.active;
    r->chooser = nullptr;
    r->choose_ns = 0; // (a persistent receive's next RNDV is timed only if rndv_go says so)
}

template <class Policy>
void Engine<Policy>::chosen_measured(Req *r, typename State::Flow &f, bool ok)
{
    const uint64_t now = now_ns();
    double per = 0;
    // A message chosen alone during which another of the peer's started (the first of a window
    // of messages, matched before the rest arrived) took the time of them all: in an 8 KiB
    // stream's windows of 64, 200-300 us, which made the ways' estimates alone noise and had
    // gets offered and declined for 1.4% of the messages (0.16% without them) on a Zen 5 VM.
    // It measures nothing (ok false).
    if (r->way_case == Case::alone && f.started != r->flow_mark)
        ok = false;
    if (r->way_case == Case::exchange && f.sends > 0)
        f.held = {r->chooser, r->ticket, r->total, r->choose_ns, ok}; // an older one is dropped
    else
        per = r->chooser->done(r->total, r->way_case, r->ticket, ok, now, now - r->choose_ns);
    const bool stream = r->way_case == Case::stream;
    if (P->verbose >= 30 && per > 0 && (stream || P->verbose >= 40)) [[unlikely]] {
        auto rate = [&](Way w) {
            const double e = r->chooser->estimate(r->total, r->way_case, w);
            return e > 0 ? std::to_string(int(1e-6 / e)) : std::string("-");
        };
        trace(std::string(stream ? "a measured run" : "a message") + " of " +
              std::to_string(r->total) + " bytes by " + way_name(r->ticket.way) + ": " +
              std::to_string(int(1e-6 / per)) + " MB/s; estimates (MB/s) pipeline " +
              rate(Way::pipeline) + ", get " + rate(Way::get) + ", shared get " +
              rate(Way::shared) + ", pipeline with streaming stores " + rate(Way::streamed));
    }
    f.last_done = now;
    if (r->choose_ns)
        f.last_service = now - r->choose_ns;
}

// This process's last rendezvous send to world is over: an exchanged message held for it is
// measured now.
template <class Policy> void Engine<Policy>::exchange_sent(int world)
{
    if (world < 0 || size_t(world) >= P->flows.size())
        return;
    typename State::Flow::Held &h = P->flows[size_t(world)].held;
    if (!h.chooser)
        return;
    const uint64_t now = now_ns();
    h.chooser->done(h.bytes, Case::exchange, h.ticket, h.ok, now, now - h.choose_ns);
    h.chooser = nullptr;
}

// An RGET matched by r, over contiguous memory: read it as the receiver's choice says, or park
// it until the choice can be made. Pipeline: the caller asks for FRAGs.
template <class Policy>
auto Engine<Policy>::rget_go(Req *r, const Unexpected &u, const Peer &peer, bool resuming) -> RgetGo
{
    bool bad = false;
    const FixedVec<Seg, kMaxRails> segs = parse_segs(u.rdma, u.total, peer, &bad);
    if (bad)
        malformed("RGET whose segments do not cover its message");
    uint32_t flags = 0;
    bool get = !segs.empty();
    if (get && P->receiver_chooses && segs.size() == 1 &&
        (segs[0].btl->btl_flags & WEFT_BTL_FLAG_RECEIVER_CHOOSES)) {
        typename State::Flow &f = flow(u.world_src);
        Chooser::Ticket t;
        // Behind others of the peer that wait, or told to wait: parked, in order.
        if ((!resuming && f.parked > 0) || !choose(r, u, segs[0].btl, &t)) {
            if (!resuming) {
                P->parked.push_back(typename State::Parked{r, u, r->id});
                ++f.parked;
            }
            return RgetGo::parked;
        }
        get = !Chooser::is_pipeline(t.way);
        flags = t.way == Way::shared ? WEFT_BTL_GET_FLAG_SHARED : WEFT_BTL_GET_FLAG_ALONE;
        if (segs[0].btl->btl_flags & WEFT_BTL_FLAG_STORES_CHOICE)
            r->stores = t.way == Way::streamed ? stores_streaming : stores_cached;
    }
    if (!get || !start_gets(r, u, segs, flags))
        return RgetGo::pipeline;
    if (P->verbose >= 20) [[unlikely]]
        trace_recv(r, Proto::rdma_get, Proto::rdma_get);
    if (r->received >= r->total && r->rdma_inflight == 0)
        finish_recv(r);
    return RgetGo::got;
}

// The send/receive pipeline for the rest of r: an ACK asks for it. Whether everything is here
// is known before the ACK: the FRAGs it asks for may arrive inside the call (btl/self) and
// complete r there.
template <class Policy>
void Engine<Policy>::ask_pipeline(Req *r, const Unexpected &u, Proto offered)
{
    if (P->verbose >= 20) [[unlikely]]
        trace_recv(r, offered, Proto::pipeline);
    const bool all_here = r->received >= r->total;
    send_ack(r, u.send_id, r->received);
    if (all_here)
        finish_recv(r);
}

// RGETs and RNDVs parked by the receiver's choice, in order, as far as it lets them go now.
template <class Policy> int Engine<Policy>::resume_parked()
{
    int n = 0;
    while (!P->parked.empty()) {
        typename State::Parked &p = P->parked.front();
        if (p.id == 0 || P->live.find(p.id) != p.r) { // it ended while parked
            typename State::Flow &f = flow(p.u.world_src);
            if (f.parked)
                --f.parked;
            P->parked.pop_front();
            continue;
        }
        const Peer *peer = peer_of(p.u.world_src);
        Chooser *ch = peer ? chooser_for(*peer) : nullptr;
        RgetGo go = RgetGo::pipeline;
        if (peer && (p.u.type == hdr_rget || ch)) {
            go = p.u.type == hdr_rget ? rget_go(p.r, p.u, *peer, true)
                                      : rndv_go(p.r, p.u, *peer, ch, true);
            if (go == RgetGo::parked)
                break;
        }
        typename State::Parked item = std::move(p);
        P->parked.pop_front();
        typename State::Flow &f = flow(item.u.world_src);
        if (f.parked)
            --f.parked;
        if (go == RgetGo::pipeline)
            ask_pipeline(item.r, item.u,
                         item.u.type == hdr_rget ? Proto::rdma_get : Proto::pipeline);
        ++n;
    }
    return n;
}

template <class Policy> void Engine<Policy>::rndv_matched(Req *r, const Unexpected &u)
{
    r->world_peer = u.world_src;
    r->rndv_recv = true;
    r->peer_send_id = u.send_id; // the sender's request, whatever the protocol
    const Peer *peer = peer_of(u.world_src);
    const bool contig = r->dense && r->buf && r->bytes >= u.total && u.total > 0 && peer;
    const bool rget = u.type == hdr_rget;
    const Proto offered = rget                      ? Proto::rdma_get
                          : (u.flags & flag_pin)    ? Proto::rdma_put
                          : (u.flags & flag_contig) ? Proto::rdma_pipeline
                                                    : Proto::pipeline;
    // Every later message about r names it by id.
    if (r->received < r->total || rget)
        track(r);
    if (rget && contig && rget_go(r, u, *peer, false) != RgetGo::pipeline)
        return;
    if (!rget && contig && (u.flags & (flag_pin | flag_contig)) && r->received < r->total) {
        RailList rails = rdma_rails(*peer, u.total, WEFT_BTL_FLAG_PUT);
        if (!rails.empty()) {
            if (u.flags & flag_pin) {
                // RDMA direct put: one piece per rail; a piece whose registration fails is
                // asked for as FRAGs, unless none could be registered (then the pipeline).
                const Cuts cuts = split(0, u.total, rails);
                std::vector<size_t> refused;
                bool sent = false;
                for (size_t i = 0; i < rails.size(); ++i) {
                    if (cuts[i + 1] == cuts[i])
                        continue;
                    if (send_puts(r, u.send_id, cuts[i], cuts[i + 1], {rails[i]},
                                  cuts[i + 1] - cuts[i]))
                        sent = true;
                    else
                        refused.push_back(i);
                }
                if (sent) {
                    for (size_t i : refused)
                        ask_frags(r, u.send_id, cuts[i], cuts[i + 1] - cuts[i]);
                    if (P->verbose >= 20) [[unlikely]]
                        trace_recv(r, offered, Proto::rdma_put);
                    return;
                }
            } else {
                // RDMA pipeline: the tail by FRAGs, the middle by PUTs.
                const size_t tail = std::min(peer->pipeline_send_length, u.total - r->received);
                const size_t send_offset = u.total - tail;
                const size_t piece = std::max<size_t>(peer->pipeline_frag_size, 1);
                if (send_offset > r->received) {
                    send_ack(r, u.send_id, send_offset);
                    if (!send_puts(r, u.send_id, r->received, send_offset, rails, piece))
                        ask_frags(r, u.send_id, r->received, send_offset - r->received);
                    if (P->verbose >= 20) [[unlikely]]
                        trace_recv(r, offered, Proto::rdma_pipeline);
                    return;
                }
            }
        }
    }
    // The send/receive pipeline: everything after what arrived, by FRAGs; over a BTL whose
    // receivers choose the pipeline's stores, the ones this process measured faster for the
    // size (an RGET's choice set them already).
    if (!rget && peer && r->received < r->total)
        if (Chooser *ch = chooser_for(*peer);
            ch && !rndv_fast(r, u, *peer, ch) && rndv_go(r, u, *peer, ch, false) == RgetGo::parked)
            return;
    ask_pipeline(r, u, offered);
}

template <class Policy> void Engine<Policy>::handle_ack(const char *msg, size_t len)
{
    AckHdr h;
    Req *r;
    if (!read_header(msg, len, h, "ACK", false) || !(r = named(h.send_id, Want::send, "ACK")))
        return;
    if (!Policy::template accept_attempt<Engine>(r, h.attempt))
        return late("an ACK of an earlier attempt");
    if (h.send_offset > r->bytes || (r->answered && r->peer_recv_id != h.recv_id))
        return malformed("ACK past the end of its message");
    r->answered = true;
    r->peer_recv_id = h.recv_id;
    r->stores = h.stores <= stores_streaming ? h.stores : uint8_t(stores_btl);
    offer_answered(r, false, h.offers);
    // What runs: the RDMA pipeline's middle comes by PUTs only when the receiver left one
    // (send_offset past the first part); any other RDMA candidate became the pipeline.
    if (r->ran == Proto::rdma_pipeline) {
        if (h.send_offset <= r->done_bytes)
            r->ran = Proto::pipeline;
    } else if (r->ran != Proto::buffered) {
        r->ran = Proto::pipeline;
    }
    if (h.send_offset < r->bytes && h.recv_id != 0)
        r->frag_work.push_back({size_t(h.send_offset), r->bytes});
    schedule(r);
}

template <class Policy>
void Engine<Policy>::handle_frag(const char *msg, size_t len, const weft_btl_segment_t *more,
                                 size_t nmore)
{
    FragHdr h;
    Req *r;
    if (!read_header(msg, len, h, "FRAG", true) || !(r = named(h.recv_id, Want::recv, "FRAG")))
        return;
    if (!Policy::template accept_attempt<Engine>(r, h.attempt))
        return late("a FRAG of an earlier attempt");
    const Payload data{msg + sizeof h, len - sizeof h, more, nmore};
    const size_t n = data.size();
    if (h.offset > r->total || n > r->total - h.offset)
        return malformed("FRAG past the end of its message");
    recv_store(r, h.offset, data);
    r->received += n;
    if (r->received >= r->total && r->rdma_inflight == 0)
        finish_recv(r);
}

// A FRAG that a BTL reading a byte stream (tcp) can write straight into the user's buffer
// (btl_register_place): one for a receive under way, of this attempt, into a contiguous
// buffer that holds all of it. Anything else (non-contiguous or truncated data, a malformed or
// late header) is declined and takes handle_frag's way, which reports or drops it. A placement
// counts as an RDMA operation in flight, so that the receive cannot end, in error either,
// while the BTL may still write into its buffer (placed_frag ends it).
template <class Policy>
int Engine<Policy>::place_frag(weft_btl_module_t *, weft_btl_endpoint_t *, const void *header,
                               size_t header_size, size_t rest, void *, void **dest)
{
    if (!P || header_size != sizeof(FragHdr))
        return 0;
    FragHdr h;
    std::memcpy(&h, header, sizeof h);
    if (h.type != hdr_frag)
        return 0;
    Req *r = P->live.find(h.recv_id);
    if (!r || r->is_send || r->complete || !r->matched || !r->dense || !r->buf ||
        !Policy::template accept_attempt<Engine>(r, h.attempt) ||
        h.offset > std::min(r->bytes, r->total) || rest > std::min(r->bytes, r->total) - h.offset)
        return 0;
    ++r->rdma_inflight;
    *dest = r->buf + h.offset;
    return 1;
}

// The end of a placement: the FRAG's data is in the buffer (PLACED: counted as handle_frag
// counts a FRAG), or the link broke before all of it came (PLACE_FAILED: nothing counted).
template <class Policy> void Engine<Policy>::placed_frag(const weft_btl_recv_descriptor_t *rd)
{
    FragHdr h;
    if (rd->segment_count < 1 || rd->segments[0].seg_len != sizeof h)
        return;
    std::memcpy(&h, rd->segments[0].seg_addr, sizeof h);
    Req *r = P->live.find(h.recv_id);
    if (!r || r->is_send || r->rdma_inflight <= 0)
        return; // not a placement place_frag agreed to
    --r->rdma_inflight;
    if ((rd->flags & WEFT_BTL_RECV_FLAG_PLACED) && rd->segment_count == 2) {
        if (!Policy::template accept_attempt<Engine>(r, h.attempt))
            late("a FRAG of an earlier attempt");
        else
            r->received += rd->segments[1].seg_len;
    }
    if (r->received >= r->total && r->rdma_inflight == 0)
        finish_recv(r);
}

template <class Policy> void Engine<Policy>::handle_put(const char *msg, size_t len)
{
    PutHdr h;
    Req *r;
    if (!read_header(msg, len, h, "PUT", true) || !(r = named(h.send_id, Want::send, "PUT")))
        return;
    if (h.seg.offset > r->bytes || h.seg.length > r->bytes - h.seg.offset ||
        h.seg.hlen > kMaxHandle || len < sizeof h + h.seg.hlen)
        return malformed("PUT past the end of its message");
    if (!Policy::template accept_attempt<Engine>(r, h.attempt))
        return late("a PUT of an earlier attempt");
    if (!Policy::template accept_piece<Engine>(r, h.seg.offset))
        return late("a copy of a PUT");
    r->answered = true;
    r->peer_recv_id = h.recv_id;
    const Peer *peer = peer_of(send_world(r));
    const Rail *rail =
        h.seg.rail && peer ? find_rail(*peer, h.seg.rail, WEFT_BTL_FLAG_PUT) : nullptr;
    if (rail && rail->btl->btl_registration_handle_size == h.seg.hlen && r->dense) {
        weft_status_t rc = WEFT_SUCCESS;
        RegCache::Entry *e = P->rcache->acquire(rail->btl, r->buf + h.seg.offset, h.seg.length,
                                                WEFT_BTL_REG_FLAG_REMOTE_READ, &rc);
        if (e) {
            r->regs.push_back(e);
            RdmaOp *op = new_rdma_op(r, h.seg.offset, h.seg.length);
            ++r->rdma_inflight;
            // Counted before the call: the put may complete inside it.
            Policy::template fragment_out<Engine>(Frag::rdma, r, +1);
            // (rail may not outlive the call: a failure reported inside it remakes the lists.)
            const int index = rail->index;
            const bool stray = P->stray_put_in != 0 && --P->stray_put_in == 0;
            rc = rail->btl->btl_put(
                rail->btl, rail->ep, r->buf + h.seg.offset, stray ? 16 : h.seg.addr, e->handle,
                reinterpret_cast<const weft_btl_registration_handle_t *>(msg + sizeof h),
                h.seg.length, 0, WEFT_BTL_NO_ORDER, put_done, op, nullptr);
            if (rc == WEFT_SUCCESS) {
                r->rails_used |= 1u << index;
                return;
            }
            Policy::template fragment_out<Engine>(Frag::rdma, r, -1);
            --r->rdma_inflight;
            free_rdma_op(op);
        }
    }
    // No rail for it, or the put could not start: the piece goes as FRAGs.
    r->frag_fallback = true;
    if (h.seg.length > 0)
        r->frag_work.push_back({size_t(h.seg.offset), size_t(h.seg.offset + h.seg.length)});
    schedule(r);
}

template <class Policy> void Engine<Policy>::handle_fin(const char *msg, size_t len)
{
    typename Policy::Fin h;
    Req *r;
    if (!read_header(msg, len, h, "FIN", false) || !(r = named(h.id, Want::any, "FIN")))
        return;
    if (!Policy::template accept_fin<Engine>(r, h))
        return late("a copy of a FIN, one of an earlier attempt, or one of another message");
    if (r->is_send) {
        // RDMA direct get: the receiver read a piece.
        if (h.length > r->bytes - r->done_bytes)
            return malformed("FIN for more than its message");
        r->answered = true;
        r->ran = Proto::rdma_get;
        offer_answered(r, true, h.offers);
        r->done_bytes += h.length;
        if (h.status != WEFT_SUCCESS)
            r->status.error = weft_status_t(h.status);
        maybe_complete_send(r);
        return;
    }
    // RDMA put: the sender wrote a piece.
    if (h.length > r->total - std::min(r->received, r->total))
        return malformed("FIN for more than its message");
    r->received += h.length;
    if (h.status != WEFT_SUCCESS)
        r->status.error = weft_status_t(h.status);
    if (r->received >= r->total && r->rdma_inflight == 0)
        finish_recv(r);
}

template <class Policy> int Engine<Policy>::progress_sched()
{
    // In order; a send blocked by its pipeline depth lets the next go, full rails stop all.
    // (Callbacks run inside the loop may append to the list, never remove from it.)
    int n = 0;
    for (auto it = P->sched.begin(); it != P->sched.end();) {
        Req *r = *it;
        const Step step = schedule_step(r, &n);
        if (step == Step::no_room)
            break;
        if (step == Step::depth) {
            ++it;
            continue;
        }
        const auto next = std::next(it);
        P->sched_spare.splice(P->sched_spare.end(), P->sched, it);
        it = next;
        r->queued = false;
        maybe_complete_send(r);
    }
    return n;
}

} // namespace weft::pml::engine

#endif
