// pml/engine: send requests and the eager protocols (immediate, prepared, allocated).
// Part of Engine<Policy>: included by pml_engine.h only.
#ifndef WEFT_PML_ENGINE_SEND_H
#define WEFT_PML_ENGINE_SEND_H

#include <algorithm>
#include <cstring>

namespace weft::pml::engine {

// Messages up to this size take the immediate protocol when the rail has btl_sendi, before
// the prepared one is considered (ob1-protocols.rst).
constexpr size_t kImmediateMax = 256;

// One line per message sent: the protocol the sender chose and the one that ran (they differ
// when the rail had no room for the chosen one).
template <class Policy>
void Engine<Policy>::trace_send(const weft_comm_t *comm, int dst, int tag, size_t bytes,
                                Proto chosen, Proto ran)
{
    trace("send rank " + std::to_string(weft_comm_rank(comm)) + " -> " + std::to_string(dst) +
          " tag " + std::to_string(tag) + " cid " + std::to_string(weft_comm_cid(comm)) + " " +
          std::to_string(bytes) + " bytes: chose " + proto_name(chosen) + ", ran " +
          proto_name(ran));
}

// Pack n bytes at message offset `offset` of a non-contiguous request into dst, and unpack into
// one: a convertor over the request's (buf, count, dtype), moved to the offset.
template <class Policy> void Engine<Policy>::pack_at(Req *r, size_t offset, char *dst, size_t n)
{
    weft_convertor_t cv;
    weft_convertor_init_datatype(&cv, &r->conv, r->buf, r->count, r->dtype);
    weft_convertor_seek(&cv, offset);
    weft_convertor_pack(&cv, dst, n);
}

template <class Policy>
void Engine<Policy>::unpack_at(Req *r, size_t offset, const char *src, size_t n)
{
    weft_convertor_t cv;
    weft_convertor_init_datatype(&cv, &r->conv, r->buf, r->count, r->dtype);
    weft_convertor_seek(&cv, offset);
    weft_convertor_unpack(&cv, src, n);
}

template <class Policy> void Engine<Policy>::send_load(Req *r, size_t offset, char *dst, size_t n)
{
    if (r->dense)
        weft_copy(dst, r->buf + offset, n);
    else
        pack_at(r, offset, dst, n);
}

template <class Policy>
void Engine<Policy>::prepared_done(weft_btl_module_t *, weft_btl_endpoint_t *,
                                   weft_btl_descriptor_t *des, weft_status_t status)
{
    auto *r = static_cast<Req *>(des->des_cbdata);
    if (status != WEFT_SUCCESS)
        r->status.error = status;
    complete(r);
}

// Send an eager message: h is filled but for its type; r is the request to complete, or NULL
// for a blocking send (which then waits here while the BTL still reads the user's buffer).
// The protocol is chosen as ob1-protocols.rst says. Returns an error only when the peer
// cannot be reached.
template <class Policy>
weft_status_t Engine<Policy>::send_eager(Req *r, const weft_comm_t *comm, int dst, int world,
                                         MatchHdr &h, const char *buf, size_t bytes,
                                         weft_send_mode_t mode)
{
    const Peer &peer = P->peers[size_t(world)];
    weft_btl_module_t *btl = peer.eager_btl;
    h.type = hdr_match;
    // Queued copies go first: while there are any, nothing may overtake them. Nor may this
    // overtake what a removed rail still holds (a fence).
    const bool direct = P->pending.empty() && !held(world, hdr_match);
    const bool sendi = btl->btl_sendi != nullptr && direct;
    Proto chosen;
    if (sendi && bytes <= kImmediateMax)
        chosen = Proto::immediate;
    else if (mode != WEFT_SEND_BUFFERED && bytes != 0 && peer.send_inplace &&
             btl->btl_prepare_src && direct)
        chosen = Proto::prepared;
    else
        chosen = sendi ? Proto::immediate : Proto::allocated;
    Proto ran = chosen;
    // A non-contiguous buffer is packed by the datatype engine, by the BTL or below.
    const bool dense = !r || r->dense;
    weft_convertor_t cv;
    if (dense)
        weft_convertor_init_contiguous(&cv, buf, bytes);
    else
        weft_convertor_init_datatype(&cv, &r->conv, r->buf, r->count, r->dtype);
    constexpr uint32_t flags = WEFT_BTL_DES_FLAG_PRIORITY | WEFT_BTL_DES_FLAG_BTL_OWNERSHIP;
    weft_status_t rc = WEFT_ERR_OUT_OF_RESOURCE;
    if (chosen == Proto::immediate) {
        if (P->sendi_faults) [[unlikely]]
            rc = faulty_sendi(btl, peer.eager_ep, &cv, h, bytes, flags);
        else
            rc = btl->btl_sendi(btl, peer.eager_ep, &cv, &h, sizeof h, bytes, WEFT_BTL_NO_ORDER,
                                flags, kTag, nullptr);
        if (rc == WEFT_SUCCESS) {
            if (P->verbose >= 20) [[unlikely]]
                trace_send(comm, dst, h.tag, bytes, chosen, ran);
            if (r)
                complete(r);
            return WEFT_SUCCESS;
        }
    } else if (chosen == Proto::prepared) {
        size_t size = bytes;
        weft_btl_descriptor_t *des = nullptr;
        rc = btl->btl_prepare_src(btl, peer.eager_ep, &cv, WEFT_BTL_NO_ORDER, sizeof h, &size,
                                  flags, &des);
        if (rc == WEFT_SUCCESS && size != bytes) {
            btl->btl_free(btl, des);
            rc = WEFT_ERR_OUT_OF_RESOURCE;
        }
        if (rc == WEFT_SUCCESS) {
            if (P->verbose >= 20) [[unlikely]]
                trace_send(comm, dst, h.tag, bytes, chosen, ran);
            std::memcpy(des->des_segments[0].seg_addr, &h, sizeof h);
            Req local; // a blocking send waits for the callback here
            Req *owner = r ? r : &local;
            des->des_cbfunc = prepared_done;
            des->des_cbdata = owner;
            rc = btl->btl_send(btl, peer.eager_ep, des, kTag);
            if (rc == WEFT_SUCCESS || rc == WEFT_IN_PROGRESS) {
                if (rc == WEFT_SUCCESS)
                    complete(owner);
                if (r)
                    return WEFT_SUCCESS;
                // A blocking send reports what the BTL's callback said.
                weft::progress_wait([&] { return local.complete; });
                return local.status.error;
            }
            btl->btl_free(btl, des);
        }
    }
    if (rc != WEFT_SUCCESS && rc != WEFT_ERR_OUT_OF_RESOURCE) {
        // A failover policy goes on over another rail (the message was not queued).
        if (failover_retry(world, btl, rc))
            return send_eager(r, comm, dst, world, h, buf, bytes, mode);
        return rc;
    }
    // Allocated, chosen or as the fallback when the rail had no room: send_bytes copies the
    // message and keeps the copy for later if the rail is still full.
    ran = Proto::allocated;
    if (P->verbose >= 20) [[unlikely]]
        trace_send(comm, dst, h.tag, bytes, chosen, ran);
    // (With MPI_THREAD_MULTIPLE the wait would let other threads' sends to this peer overtake
    // this one, which took its sequence number already, without bound: the copy goes in the
    // queue, in order, instead.)
    if (dense && !r && P->fences.empty() && !weft_runtime_threads()) {
        // A blocking send leaves no copy behind when the rail is full: it waits for room (the
        // receiver drains its ring into its unexpected queue whatever it is doing, and this
        // wait polls this process's rings too, so two ranks sending to each other both get
        // on), behind the queued copies of earlier sends. A sender that runs ahead of its
        // receiver so stays a ring ahead, where copies would pile up without bound. While a
        // rail change is fenced (rare, and the queue may then hold what waits for it) the
        // copy is kept as before.
        weft::progress_wait([&] {
            if (!P->fences.empty()) {
                rc = send_bytes(world, &h, sizeof h, buf, bytes, true, Frag::match);
                return true;
            }
            if (!P->pending.empty())
                return false;
            rc = try_send(world, &h, sizeof h, buf, bytes, true, Frag::match, nullptr);
            return rc != WEFT_ERR_OUT_OF_RESOURCE;
        });
        return rc;
    }
    if (dense) {
        rc = send_bytes(world, &h, sizeof h, buf, bytes, true, Frag::match);
    } else {
        std::string packed(bytes, '\0');
        send_load(r, 0, packed.data(), bytes);
        rc = send_bytes(world, &h, sizeof h, packed.data(), bytes, true, Frag::match);
    }
    if (rc != WEFT_SUCCESS)
        return rc;
    if (r)
        complete(r);
    return WEFT_SUCCESS;
}

// btl_sendi with the test faults pml_<name>_fault_fail_sendi and _fault_duplicate_sendi: the
// n-th immediate send is taken as a BTL whose link fails takes it, and handed back flagged
// WEFT_BTL_RECV_FLAG_SEND_FAILED; not sent at all (lost), or sent as well (the peer gets it
// twice).
template <class Policy>
weft_status_t Engine<Policy>::faulty_sendi(weft_btl_module_t *btl, weft_btl_endpoint_t *ep,
                                           weft_convertor_t *cv, const MatchHdr &h, size_t bytes,
                                           uint32_t flags)
{
    const bool lose = P->fail_sendi_in != 0 && --P->fail_sendi_in == 0;
    const bool twice = !lose && P->dup_sendi_in != 0 && --P->dup_sendi_in == 0;
    P->sendi_faults = P->fail_sendi_in != 0 || P->dup_sendi_in != 0;
    if (!lose && !twice)
        return btl->btl_sendi(btl, ep, cv, &h, sizeof h, bytes, WEFT_BTL_NO_ORDER, flags, kTag,
                              nullptr);
    std::string copy(reinterpret_cast<const char *>(&h), sizeof h);
    copy.resize(sizeof h + bytes);
    weft_convertor_pack(cv, copy.data() + sizeof h, bytes);
    if (twice) {
        weft_convertor_seek(cv, 0);
        if (weft_status_t rc = btl->btl_sendi(btl, ep, cv, &h, sizeof h, bytes, WEFT_BTL_NO_ORDER,
                                              flags, kTag, nullptr);
            rc != WEFT_SUCCESS)
            return rc; // not taken: the caller sends it some other way, once
    }
    auto it = P->endpoint_world.find(ep);
    say(WEFT_OUTPUT_INFO, who() + ": fault injection: an immediate send to rank " +
                              std::to_string(it != P->endpoint_world.end() ? it->second : -1) +
                              (twice ? " was sent" : " was not sent") +
                              ", and is handed back as failed");
    // Handed back at once, as a BTL that finds its link broken inside the call would: held
    // for a later progress call, it could wait for ever (a sender that goes on to block
    // outside the PML, in a bootstrap barrier, never progresses again) and, held long enough,
    // fall behind its peer's window.
    weft_btl_segment_t seg{.seg_addr = copy.data(), .seg_len = copy.size()};
    weft_btl_recv_descriptor_t rd{};
    rd.endpoint = ep;
    rd.segments = &seg;
    rd.segment_count = 1;
    rd.flags = WEFT_BTL_RECV_FLAG_SEND_FAILED;
    rd.tag = kTag;
    on_recv(btl, &rd);
    return WEFT_SUCCESS;
}

template <class Policy> weft_status_t Engine<Policy>::start_send(Req *r)
{
    r->complete = false;
    r->active = true;
    r->status = weft_msg_status_t{};
    r->cancelled = r->sent = r->answered = false;
    weft_comm_t *comm = r->comm;
    if (r->dst == WEFT_PROC_NULL) {
        r->status.source = WEFT_PROC_NULL;
        r->status.tag = WEFT_ANY_TAG;
        complete(r);
        return WEFT_SUCCESS;
    }
    const int world = weft_comm_peer_world_rank(comm, int(r->dst));
    CommState &s = cs(comm);
    MatchHdr m{};
    m.cid = weft_comm_cid(comm);
    m.src = weft_comm_rank(comm);
    m.tag = r->tag;
    const size_t limit = eager_limit(world);
    if (limit == 0)
        // before a sequence number is taken: nothing left a gap
        return peer_failed(world) ? WEFT_ERR_PROC_FAILED : WEFT_ERR_UNREACH;
    m.seq = s.send_seq[size_t(r->dst)]++;
    r->ordinal = s.sent_total[size_t(r->dst)]++;
    r->sent = true;
    if (r->mode != WEFT_SEND_SYNCHRONOUS && sizeof(MatchHdr) + r->bytes <= limit)
        return send_eager(r, comm, r->dst, world, m, r->buf, r->bytes, r->mode);
    return start_rndv(r, m, world);
}

} // namespace weft::pml::engine

#endif
