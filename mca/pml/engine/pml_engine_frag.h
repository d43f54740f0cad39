// pml/engine: fragments out: header + data handed to a rail now, or a copy queued to send from
// progress; fragments a failed link hands back, sent again.
// Part of Engine<Policy>: included by pml_engine.h only.
#ifndef WEFT_PML_ENGINE_FRAG_H
#define WEFT_PML_ENGINE_FRAG_H

#include <algorithm>
#include <cstring>

namespace weft::pml::engine {

template <class Policy> weft_status_t Engine<Policy>::endpoint(int world, weft_bml_endpoint_t **ep)
{
    weft_proc_t *proc = weft_runtime_proc(world);
    if (!proc)
        return WEFT_ERR_BAD_PARAM;
    return P->bml->bml_endpoint_get(P->bml, proc, ep);
}

template <class Policy> size_t Engine<Policy>::eager_limit(int world)
{
    return size_t(world) < P->peers.size() ? P->peers[size_t(world)].eager_limit : 0;
}

// Hand header + data to a rail now. WEFT_ERR_OUT_OF_RESOURCE: the rail has no room, nothing
// was sent. A fragment of a kind the policy wants completions for carries ctl_done, with the
// request it belongs to (if any) and its kind.
// Whether a BTL's answer to a send says its link is broken (btl.h: not queued).
inline bool link_refused(weft_status_t rc)
{
    return rc == WEFT_ERR_LINK_DOWN || rc == WEFT_ERR_UNREACH || rc == WEFT_ERR_PROC_FAILED;
}

// Whether btl is still one of world's rails (any list).
template <class Policy> bool Engine<Policy>::peer_has_rail(int world, const weft_btl_module_t *btl)
{
    const Peer *peer = peer_of(world);
    if (!peer)
        return false;
    if (peer->eager_btl == btl)
        return true;
    for (const std::vector<Rail> *list : {&peer->send, &peer->rdma})
        for (const Rail &r : *list)
            if (r.btl == btl)
                return true;
    return false;
}

// A send to world refused by btl with rc: whether to send again over the rails left. Under a
// failover policy a link error is a rail that failed: if the BTL did not map it out first (its
// error callback), the policy is told now; then yes, while world has a rail.
template <class Policy>
bool Engine<Policy>::failover_retry(int world, weft_btl_module_t *btl, weft_status_t rc)
{
    if constexpr (!(Policy::pml_flags & WEFT_PML_FLAG_FAILOVER)) {
        (void)world, (void)btl, (void)rc;
        return false;
    } else {
        if (!link_refused(rc) || !btl)
            return false;
        if (peer_has_rail(world, btl))
            Policy::template link_error<Engine>(
                btl, WEFT_BTL_ERROR_FLAG_LINK, weft_runtime_proc(world),
                std::string("a send was refused: ") + weft_status_string(rc));
        const Peer *peer = peer_of(world);
        return !peer_has_rail(world, btl) && peer && peer->eager_limit != 0;
    }
}

template <class Policy>
weft_status_t Engine<Policy>::try_send(int world, const void *hdr, size_t hlen, const void *data,
                                       size_t dlen, bool eager, Frag kind, Req *owner)
{
    // A failover policy maps a rail whose link refused the fragment out: the fragment goes on
    // a rail left, once per rail.
    weft_status_t rc = WEFT_ERR_UNREACH;
    for (size_t attempt = 0; attempt <= kMaxRails; ++attempt) {
        weft_btl_module_t *btl = nullptr;
        rc = try_send_once(world, hdr, hlen, data, dlen, eager, kind, owner, &btl);
        if (!failover_retry(world, btl, rc))
            return rc;
    }
    return rc;
}

template <class Policy>
weft_status_t Engine<Policy>::try_send_once(int world, const void *hdr, size_t hlen,
                                            const void *data, size_t dlen, bool eager, Frag kind,
                                            Req *owner, weft_btl_module_t **used)
{
    weft_bml_btl_t b{};
    if (eager && size_t(world) < P->peers.size() && P->peers[size_t(world)].eager_btl) {
        b.btl = P->peers[size_t(world)].eager_btl;
        b.btl_endpoint = P->peers[size_t(world)].eager_ep;
    } else {
        // Bulk fragments go round the send rails.
        weft_bml_endpoint_t *ep;
        if (weft_status_t rc = endpoint(world, &ep); rc != WEFT_SUCCESS)
            return rc;
        if (weft_status_t rc = P->bml->bml_endpoint_next(
                P->bml, ep, eager ? WEFT_BML_LIST_EAGER : WEFT_BML_LIST_SEND, &b);
            rc != WEFT_SUCCESS)
            return rc;
    }
    *used = b.btl;
    weft_btl_descriptor_t *des = nullptr;
    weft_status_t rc = b.btl->btl_alloc(b.btl, b.btl_endpoint, WEFT_BTL_NO_ORDER, hlen + dlen,
                                        WEFT_BTL_DES_FLAG_BTL_OWNERSHIP, &des);
    if (rc != WEFT_SUCCESS)
        return rc;
    auto *p = static_cast<char *>(des->des_segments[0].seg_addr);
    std::memcpy(p, hdr, hlen);
    if (dlen)
        std::memcpy(p + hlen, data, dlen);
    des->des_cbfunc = nullptr;
    bool counted = false;
    if constexpr (Policy::wants_completions) {
        if (Policy::completion(kind)) {
            des->des_flags |= WEFT_BTL_DES_FLAG_ALWAYS_CALLBACK;
            des->des_cbfunc = ctl_done;
            // The owner by id: it may complete (and be recycled) before this completion.
            des->des_cbdata = reinterpret_cast<void *>(uintptr_t(owner ? owner->id : 0));
            des->des_context = reinterpret_cast<void *>((uintptr_t(uint32_t(world)) << 8) |
                                                        uintptr_t(static_cast<uint8_t>(kind)));
            // Counted before the send: the callback may run inside it.
            Policy::template fragment_out<Engine>(kind, owner, +1);
            counted = true;
        }
    } else {
        (void)kind, (void)owner;
    }
    rc = b.btl->btl_send(b.btl, b.btl_endpoint, des, kTag);
    if (rc == WEFT_SUCCESS || rc == WEFT_IN_PROGRESS)
        return WEFT_SUCCESS;
    if (counted)
        Policy::template fragment_out<Engine>(kind, owner, -1);
    b.btl->btl_free(b.btl, des);
    return rc;
}

// Completion of a fragment the policy asked to hear about: the BTL's status, unchanged.
template <class Policy>
void Engine<Policy>::ctl_done(weft_btl_module_t *btl, weft_btl_endpoint_t *,
                              weft_btl_descriptor_t *des, weft_status_t status)
{
    if (!P) // a transport that closes after the PML finalized completes what it held
        return;
    const auto ctx = reinterpret_cast<uintptr_t>(des->des_context);
    const auto id = uint64_t(reinterpret_cast<uintptr_t>(des->des_cbdata));
    const Frag kind = static_cast<Frag>(ctx & 0xffu);
    Req *owner = id ? P->live.find(id) : nullptr;
    const int world = int(ctx >> 8);
    policy_fragment_done(kind, owner, world, status, btl, des);
    // A send the policy held back (may_complete) may be done now. (The policy does not
    // complete requests itself; the owner is looked up again all the same.)
    if (Req *r = id ? P->live.find(id) : nullptr; r && r->is_send)
        maybe_complete_send(r);
}

// Hand header + data to a rail now, or keep a copy to retry from progress (behind earlier
// copies: nothing overtakes them). Returns an error only when the peer cannot be reached.
template <class Policy>
weft_status_t Engine<Policy>::send_bytes(int world, const void *hdr, size_t hlen, const void *data,
                                         size_t dlen, bool eager, Frag kind, Req *owner)
{
    if (P->pending.empty() && !held(world, *static_cast<const uint8_t *>(hdr))) {
        weft_status_t rc = try_send(world, hdr, hlen, data, dlen, eager, kind, owner);
        if (rc != WEFT_ERR_OUT_OF_RESOURCE)
            return rc;
    }
    Pending pend{world, eager, kind, owner ? owner->id : 0, take_bytes()};
    pend.bytes.reserve(hlen + dlen);
    pend.bytes.append(static_cast<const char *>(hdr), hlen);
    if (dlen)
        pend.bytes.append(static_cast<const char *>(data), dlen);
    P->pending.push_back(std::move(pend));
    return WEFT_SUCCESS;
}

// Retry the queued copies in order; stop at the first the rails still have no room for. Matching
// fragments to a peer behind a rail change's fence stay queued, in order, and the rest pass
// them. A copy whose peer has no rail left ends its request in error; one that belongs to no
// request any more (an eager message already complete, an answer the peer waits for) would
// leave the peer waiting forever: the job ends, saying why.
template <class Policy> int Engine<Policy>::progress_pending()
{
    if (!P->fences.empty()) [[unlikely]]
        send_fences();
    int n = 0;
    for (size_t i = 0; i < P->pending.size();) {
        Pending &p = P->pending[i];
        if (held(p.world_dst, static_cast<uint8_t>(p.bytes[0]))) [[unlikely]] {
            ++i;
            continue;
        }
        Req *owner = p.owner_id ? P->live.find(p.owner_id) : nullptr;
        weft_status_t rc = try_send(p.world_dst, p.bytes.data(), p.bytes.size(), nullptr, 0,
                                    p.eager, p.kind, owner);
        if (rc == WEFT_ERR_OUT_OF_RESOURCE)
            break;
        if (rc != WEFT_SUCCESS) {
            // Only a send's own RNDV or RGET names a request: its receiver waits for nothing yet.
            // WEFT_ERR_BAD_PARAM: the copy was made for a rail that is gone and is larger than
            // what the rails left take in one fragment.
            if (!owner || !owner->is_send)
                unreachable(p.world_dst,
                            rc == WEFT_ERR_BAD_PARAM
                                ? "a queued fragment of " + std::to_string(p.bytes.size()) +
                                      " bytes fits none of the rails left to it"
                                : std::string("a queued fragment could not be sent: ") +
                                      weft_status_string(rc));
            give_bytes(std::move(p.bytes));
            P->pending.erase(P->pending.begin() + std::ptrdiff_t(i));
            fail_send(owner, rc);
            maybe_complete_send(owner);
            continue;
        }
        give_bytes(std::move(p.bytes));
        P->pending.erase(P->pending.begin() + std::ptrdiff_t(i));
        ++n;
    }
    return n;
}

// One of this process's btl_sendi fragments that may not have arrived, handed back by its BTL
// (WEFT_BTL_RECV_FLAG_SEND_FAILED; its request completed when the BTL took it). It is sent
// again, whole, over the peer's rails as they are now; should the first copy have arrived
// after all, the receiver drops this one as a duplicate (its sequence number is behind).
template <class Policy>
void Engine<Policy>::resend_failed(weft_btl_module_t *btl, const weft_btl_recv_descriptor_t *rd)
{
    auto it = P->endpoint_world.find(rd->endpoint);
    if (it == P->endpoint_world.end())
        return malformed("a failed fragment handed back by " + rail_name(btl) +
                         " for an endpoint the PML never used");
    const bool match = rd->segment_count > 0 && rd->segments[0].seg_len > 0 &&
                       *static_cast<const uint8_t *>(rd->segments[0].seg_addr) == hdr_match;
    send_again(it->second, rd->segments, rd->segment_count, match ? Frag::match : Frag::extra,
               nullptr, btl);
}

// Send again, over world's rails as they are now, a fragment (its bytes in segs) that btl
// could not deliver: a copy handed back by the BTL, or a failover policy's fragment completed
// in error. The job ends if it cannot be sent.
template <class Policy>
void Engine<Policy>::send_again(int world, const weft_btl_segment_t *segs, size_t nsegs, Frag kind,
                                Req *owner, const weft_btl_module_t *btl)
{
    // A process that failed (fault tolerance) takes nothing more.
    if (peer_failed(world) || weft_runtime_proc_failed(world))
        return;
    std::string copy;
    for (size_t i = 0; i < nsegs; ++i)
        copy.append(static_cast<const char *>(segs[i].seg_addr), segs[i].seg_len);
    if (copy.empty())
        return;
    // A copy must stay inside its receiver's window (README.md): its number is at most 2^15
    // behind the next one this process sends to that peer, which the receiver's next expected
    // number never passes. A copy sent again later than that cannot be told from a new
    // message: the job ends rather than risk delivering it in another's place.
    const auto type = static_cast<uint8_t>(copy[0]);
    if ((type == hdr_match || type == hdr_rndv || type == hdr_rget) &&
        copy.size() >= sizeof(MatchHdr)) {
        MatchHdr h;
        std::memcpy(&h, copy.data(), sizeof h);
        if (weft_comm_t *comm = find_comm(h.cid)) {
            const int n = weft_comm_peer_size(comm);
            for (int dst = 0; dst < n; ++dst) {
                if (weft_comm_peer_world_rank(comm, dst) != world)
                    continue;
                if (uint16_t(cs(comm).send_seq[size_t(dst)] - h.seq) >= 0x8000u)
                    unreachable(world, "a message " + rail_name(btl) +
                                           " could not deliver cannot be sent again after 2^15 "
                                           "later ones");
                break;
            }
        }
    }
    ++P->resent;
    if (P->verbose >= 20) [[unlikely]]
        trace("a fragment to rank " + std::to_string(world) + " that " + rail_name(btl) +
              " could not deliver is sent again over the rails left");
    if (weft_status_t rc =
            send_bytes(world, copy.data(), copy.size(), nullptr, 0, true, kind, owner);
        rc != WEFT_SUCCESS)
        unreachable(world,
                    std::string("a fragment could not be sent again: ") + weft_status_string(rc));
}

// The policy's fragment_done, in whichever of its two forms the policy has.
template <class Policy>
void Engine<Policy>::policy_fragment_done(Frag kind, Req *owner, int world, weft_status_t status,
                                          weft_btl_module_t *btl, const weft_btl_descriptor_t *des)
{
    if constexpr (requires {
                      Policy::template fragment_done<Engine>(kind, owner, world, status, btl, des);
                  })
        Policy::template fragment_done<Engine>(kind, owner, world, status, btl, des);
    else
        Policy::template fragment_done<Engine>(kind, owner, world, status);
}

} // namespace weft::pml::engine

#endif
