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
    for (weft_comm_t *comm : P->dense_comms)
        if (comm)
            fail_posted(comm);
    for (const auto &[cid, comm] : P->comms)
        fail_posted(comm);
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

} // namespace weft::pml::engine

#endif
