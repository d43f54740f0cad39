// pml/engine: process failures (ULFM, mpi_ft_enable). Part of Engine<Policy>: included by
// pml_engine.h only.
//
// The runtime tells the engine once about each process that failed (proc_failed, from
// progress). The engine then stops all traffic with it and ends what waits for it:
// - sends to it, and receives naming it, posted from then on fail at once with
//   WEFT_ERR_PROC_FAILED (its eager limit is 0: the send paths' "unreachable" branch);
// - receives posted for it and not matched yet leave the posted queue and fail;
// - transfers under way with it (a rendezvous send, a matched receive) fail once no fragment
//   or RDMA operation of theirs is still in a BTL: nothing writes a user buffer after its
//   request is reported done.
// Messages it sent that arrived before the failure are still delivered (matched by later
// receives). Receives from MPI_ANY_SOURCE are left alone here. A link error to a peer is, with
// fault tolerance on, that peer's failure (link_error in NoFailover's policy).
#ifndef WEFT_PML_ENGINE_FT_H
#define WEFT_PML_ENGINE_FT_H

namespace weft::pml::engine {

// A peer's connection broke with fault tolerance on: its failure, which the program handles;
// said on the error output only when btl_base_warn_peer_error or the PML's verbose level asks.
template <class Policy> void Engine<Policy>::warn_peer_error(int world, const std::string &what)
{
    static const weft_mca_param_t *warn = weft_mca_param_find("btl_base_warn_peer_error");
    if ((warn && weft_mca_param_bool(warn)) || P->verbose >= 1)
        say(WEFT_OUTPUT_WARNING, who() + ": " + peer_name(world) + " is taken as failed: " + what);
}

template <class Policy> bool Engine<Policy>::peer_failed(int world)
{
    return world >= 0 && size_t(world) < P->peers.size() && P->peers[size_t(world)].failed;
}

template <class Policy> void Engine<Policy>::proc_failed(int world, void *)
{
    if (!P || world < 0 || size_t(world) >= P->peers.size())
        return;
    Peer &peer = P->peers[size_t(world)];
    if (peer.failed)
        return;
    peer.failed = true;
    peer.eager_limit = 0;
    P->any_failed = true;
    if (P->verbose >= 10)
        trace("rank " + std::to_string(world) + " failed: its traffic ends");
    // Receives posted for it alone, not matched: nothing of theirs is in flight.
    auto fail_posted = [world](weft_comm_t *comm) {
        CommState &s = cs(comm);
        for (Req *r = s.posted.front(); r;) {
            Req *next = r->next;
            if (r->src >= 0 && weft_comm_peer_world_rank(comm, r->src) == world) {
                s.posted.erase(r);
                r->status.error = WEFT_ERR_PROC_FAILED;
                r->status.source = r->src;
                complete(r);
            }
            r = next;
        }
    };
    // Every communicator with it as a member: receives for it end, and its collectives are
    // revoked.
    auto member = [world](const int32_t *ranks, int n) {
        return std::find(ranks, ranks + n, world) != ranks + n;
    };
    auto affect = [&](weft_comm_t *comm) {
        fail_posted(comm);
        const weft_comm_view_t *v = weft_comm_view(comm);
        if (member(v->peer_world, v->peer_size) || member(v->local_world, v->size))
            revoke_collectives(comm);
    };
    for (weft_comm_t *comm : P->dense_comms)
        if (comm)
            affect(comm);
    for (const auto &[cid, comm] : P->comms)
        affect(comm);
    // Sends whose CANCEL it will never answer: not cancelled (ended below if under way).
    for (auto it = P->cancels.begin(); it != P->cancels.end();) {
        Req *r = it->second;
        if (send_world(r) != world) {
            ++it;
            continue;
        }
        it = P->cancels.erase(it);
        cancel_answered(r, false);
    }
    // Transfers under way with it: ended once their fragments and RDMA operations are back.
    std::vector<Req *> under_way;
    P->live.for_each([&](Req *r) {
        if (!r->complete && (r->is_send ? send_world(r) == world : r->world_peer == world))
            under_way.push_back(r);
    });
    for (Req *r : under_way) {
        if (r->is_send) {
            fail_send(r, WEFT_ERR_PROC_FAILED);
            maybe_complete_send(r);
        } else if (r->matched) {
            r->status.error = WEFT_ERR_PROC_FAILED;
            r->received = std::max(r->received, r->total);
            if (r->rdma_inflight == 0)
                finish_recv(r);
        }
    }
}

// ---- revoke (pml_revoke_comm; MPIX_Comm_revoke)
//
// A reliable broadcast by flooding: the first time a process learns that a communicator is
// revoked (its own call, or a notice), it revokes it here and sends the notice to every other
// member, local and remote group, that has not failed. Every live member thus learns of it even
// when the process that started it dies midway; a member gets one notice from each other one.
// Revoking here: receives posted on it and not matched end with WEFT_ERR_REVOKED; its
// unexpected and early-arrived messages are dropped, and each rendezvous among them is refused
// to its sender (a NACK), whose send then ends with WEFT_ERR_REVOKED; so is any rendezvous that
// arrives later. Eager messages arriving later are dropped. Transfers already matched run to
// completion: a rendezvous send ends when its receiver either answers (matched) or refuses it.

template <class Policy>
void Engine<Policy>::refuse_rndv(int world, uint64_t send_id, weft_status_t why)
{
    if (send_id == 0 || world < 0 || weft_runtime_proc_failed(world))
        return;
    const RevokeNackHdr h{
        .type = hdr_revoke_nack, .reserved = {}, .status = int32_t(why), .send_id = send_id};
    send_bytes(world, &h, sizeof h, nullptr, 0, true, Frag::extra);
}

// Whether a failure revokes a tag: the library's own (collectives', communicator
// construction's), every negative tag but MPI_ANY_TAG's and those of the fault-tolerant
// protocols (weft_tag_is_ft), which no revoke touches.
inline bool library_tag(int tag) { return tag < 0 && tag != WEFT_ANY_TAG && !weft_tag_is_ft(tag); }

// A process of comm failed: its collectives are revoked (ULFM's coll_only revoke), so that a
// collective completes at every rank, in error at some, instead of waiting for ever. Receives
// on the library's own tags end with WEFT_ERR_PROC_FAILED, now and when posted later; such
// messages waiting, or arriving later, are dropped (a rendezvous refused to its sender).
// Point-to-point on user tags goes on.
template <class Policy> void Engine<Policy>::revoke_collectives(weft_comm_t *comm)
{
    CommState &s = cs(comm);
    if (s.coll_revoked)
        return;
    s.coll_revoked = true;
    if (P->verbose >= 10)
        trace("communicator " + std::to_string(weft_comm_cid(comm)) +
              ": a member failed; its collectives are revoked");
    purge(s, library_tag, WEFT_ERR_PROC_FAILED);
}

// End the receives posted on s whose tag `which` takes with `why`, and drop its unexpected
// messages of those tags (a rendezvous refused to its sender with `why`).
template <class Policy>
void Engine<Policy>::purge(CommState &s, bool (*which)(int tag), weft_status_t why)
{
    for (Req *r = s.posted.front(); r;) {
        Req *next = r->next;
        if (which(r->tag)) {
            s.posted.erase(r);
            r->status.error = why;
            complete(r);
        }
        r = next;
    }
    for (auto &q : s.unexpected)
        for (auto it = q.begin(); it != q.end();) {
            auto next = std::next(it);
            if (which(it->tag)) {
                if (it->type != hdr_match)
                    refuse_rndv(it->world_src, it->send_id, why);
                give_unexpected(q, it);
            }
            it = next;
        }
}

template <class Policy> void Engine<Policy>::revoke_here(weft_comm_t *comm)
{
    auto *view = reinterpret_cast<weft_comm_view_t *>(comm);
    if (view->flags & WEFT_COMM_FLAG_REVOKED)
        return;
    view->flags |= WEFT_COMM_FLAG_REVOKED;
    if (P->verbose >= 10)
        trace("communicator " + std::to_string(view->cid) + " revoked");
    // Everything but the fault-tolerant protocols' traffic.
    purge(
        cs(comm), [](int tag) { return !weft_tag_is_ft(tag); }, WEFT_ERR_REVOKED);
    // The notice, once, to every other member.
    const RevokeHdr h{
        .type = hdr_revoke, .reserved = {}, .cid = view->cid, .epoch = 0, .reserved2 = 0};
    const int me = weft_runtime_world_rank();
    std::vector<int> told;
    auto tell = [&](int world) {
        if (world < 0 || world == me || weft_runtime_proc_failed(world) || peer_failed(world) ||
            std::find(told.begin(), told.end(), world) != told.end())
            return;
        told.push_back(world);
        send_bytes(world, &h, sizeof h, nullptr, 0, true, Frag::extra);
    };
    for (int r = 0; r < view->peer_size; ++r)
        tell(view->peer_world[r]);
    for (int r = 0; r < view->size; ++r)
        tell(view->local_world[r]);
    // An intercommunicator's hidden local communicator carries its collectives' local steps.
    if (view->local_comm)
        revoke_here(view->local_comm);
}

template <class Policy>
weft_status_t Engine<Policy>::revoke_comm(weft_pml_module_t *, weft_comm_t *comm, int coll_only)
{
    if (!P || !comm || !weft_comm_pml_state(comm))
        return WEFT_ERR_BAD_PARAM;
    if (coll_only)
        revoke_collectives(comm);
    else
        revoke_here(comm);
    return WEFT_SUCCESS;
}

template <class Policy> void Engine<Policy>::handle_revoke(const char *msg, size_t len)
{
    if (static_cast<uint8_t>(msg[0]) == hdr_revoke_nack) {
        RevokeNackHdr h;
        if (len != sizeof h)
            return malformed("revoke NACK of " + std::to_string(len) + " bytes");
        std::memcpy(&h, msg, sizeof h);
        Req *r = P->live.find(h.send_id);
        if (!r || !r->is_send || r->complete || r->answered)
            return late("a refusal of a rendezvous that is over");
        fail_send(r, h.status == WEFT_ERR_PROC_FAILED ? WEFT_ERR_PROC_FAILED : WEFT_ERR_REVOKED);
        maybe_complete_send(r);
        return;
    }
    RevokeHdr h;
    if (len != sizeof h)
        return malformed("revoke notice of " + std::to_string(len) + " bytes");
    std::memcpy(&h, msg, sizeof h);
    if (weft_comm_t *comm = find_comm(h.cid)) {
        revoke_here(comm);
        return;
    }
    // Not created here yet (or freed already: a context id is never used again, so keeping it
    // is harmless); bounded, since the ids come from peers.
    if (P->revoked_early.size() < 4096 &&
        std::find(P->revoked_early.begin(), P->revoked_early.end(), h.cid) ==
            P->revoked_early.end())
        P->revoked_early.push_back(h.cid);
}

} // namespace weft::pml::engine

#endif
