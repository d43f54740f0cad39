// pml/engine: requests: making, recycling, completing, cancelling and freeing them.
// Part of Engine<Policy>: included by pml_engine.h only.
#ifndef WEFT_PML_ENGINE_REQUEST_H
#define WEFT_PML_ENGINE_REQUEST_H

#include <algorithm>
#include <cstring>

namespace weft::pml::engine {

template <class Policy> uint64_t Engine<Policy>::track(Req *r)
{
    ++P->next_id;
    r->id = P->live.add(r);
    return r->id;
}

template <class Policy> void Engine<Policy>::untrack(Req *r)
{
    if (r->id)
        P->live.remove(r->id);
    r->id = 0;
    if (r->rndv_world >= 0) {
        if (--flow(r->rndv_world).sends == 0)
            exchange_sent(r->rndv_world);
        r->rndv_world = -1;
    }
}

// A request from the pool; make() sets every field.
template <class Policy> auto Engine<Policy>::new_request() -> Req *
{
    if (P->request_pool.empty())
        return new Req;
    Req *r = P->request_pool.back();
    P->request_pool.pop_back();
    return r;
}

template <class Policy> void Engine<Policy>::release_request(Req *r)
{
    // The communicator reference goes from the next progress call: dropping the last one
    // destroys the communicator (pml_del_comm), which must not happen under a caller that is
    // still matching in its queues.
    if (r->holds_comm) {
        // Not the last reference: dropped now (it cannot destroy the communicator).
        if (auto *v = reinterpret_cast<weft_comm_view_t *>(r->comm); v->refs > 1)
            --v->refs;
        else
            P->comm_releases.push_back(r->comm);
        r->holds_comm = false;
    }
    drop_dtype(r);
    if (P->request_pool.size() < 4096)
        P->request_pool.push_back(r);
    else
        delete r;
}

template <class Policy> void Engine<Policy>::complete(Req *r)
{
    // With fault tolerance, a transfer that a broken link ended (the link's error marked the
    // peer failed in the runtime first, seam 7, maybe before the engine heard of it) ended
    // because its peer failed, and says so.
    if (r->status.error != WEFT_SUCCESS && weft_runtime_ft_enabled()) [[unlikely]]
        if (const weft_status_t e = r->status.error;
            e != WEFT_ERR_TRUNCATE && e != WEFT_ERR_PROC_FAILED &&
            e != WEFT_ERR_PROC_FAILED_PENDING && e != WEFT_ERR_REVOKED &&
            weft_runtime_proc_failed(r->is_send ? send_world(r) : r->world_peer))
            r->status.error = WEFT_ERR_PROC_FAILED;
    if (r->chooser) [[unlikely]]
        chosen_done(r, r->status.error == WEFT_SUCCESS);
    else if (r->rndv_recv && P->receiver_chooses) [[unlikely]]
        rndv_done(r);
    if (tracked(r))
        untrack(r);
    if (r->cancel_pending) [[unlikely]] {
        // Done, but MPI_Cancel's question is still out: complete at its answer.
        r->done_in_cancel = true;
        return;
    }
    // A persistent request stays active until framework/mpi reports it (MPI_Wait, MPI_Test):
    // inactive, it would be reported with an empty status.
    if (!r->persistent)
        r->active = false;
    r->complete = true;
    if (r->freed && !r->persistent)
        release_request(r);
}

// Give back the datatype a non-contiguous request holds.
template <class Policy> void Engine<Policy>::drop_dtype(Req *r)
{
    if (r->dtype) [[unlikely]] {
        weft_datatype_release(r->dtype);
        r->dtype = nullptr;
    }
}

// The datatype of r's buffer: dense data is copied directly, anything else goes through the
// datatype engine fragment by fragment.
template <class Policy>
void Engine<Policy>::set_dtype(Req *r, void *buf, size_t count, weft_datatype_t *dtype)
{
    r->buf = static_cast<char *>(buf);
    r->count = count;
    r->bytes = count * weft_datatype_size(dtype);
    drop_dtype(r);
    r->dense = r->bytes == 0 || weft_datatype_is_contiguous(dtype, count);
    if (!r->dense) {
        // The user may free the type while the message is pending.
        weft_datatype_retain(dtype);
        r->dtype = dtype;
    }
}

template <class Policy>
auto Engine<Policy>::make(bool send, const void *buf, size_t count, weft_datatype_t *dtype,
                          int peer, int tag, weft_send_mode_t mode, weft_comm_t *comm,
                          bool persistent) -> Req *
{
    // Every field the request's kind reads, once (a pooled request holds the last message's
    // values): the send state is read only by sends, the receive state only by receives.
    Req *r = new_request();
    r->kind = send ? WEFT_REQUEST_PML_SEND : WEFT_REQUEST_PML_RECV;
    r->complete = false;
    r->persistent = persistent;
    r->active = false;
    r->freed = false;
    r->cancelled = false;
    r->reported = false;
    r->cancel_pending = false;
    r->status = weft_msg_status_t{};
    r->comm = comm;
    // Held until the request is released: MPI_Comm_free with the request pending must not
    // take the communicator (and its queues) away (MPI-3.1 6.4.3).
    weft_comm_retain(comm);
    r->holds_comm = true;
    r->peer = peer;
    r->tag = tag;
    r->bsend_block = nullptr;
    r->pml_data = nullptr;
    r->pml_free = free_request;
    r->pml_start = start_any;
    r->pml_cancel = cancel;
    r->next = r->prev = nullptr;
    r->id = 0;
    r->rndv_world = -1;
    r->chooser = nullptr;
    r->choose_ns = 0;
    r->offered_by = nullptr;
    r->told_by = nullptr;
    r->in_flow = false;
    r->seen = 0;
    r->peer_send_id = 0;
    r->extra = typename Policy::RequestExtra{};
    r->is_send = send;
    set_dtype(r, const_cast<void *>(buf), count, dtype);
    r->regs.clear();
    if (send) {
        r->mode = mode;
        r->sent = false;
        r->done_in_cancel = false;
        r->dst = peer;
        r->src = -1;
        r->peer_recv_id = 0;
        r->answered = false;
        r->stores = stores_btl;
        r->queued = r->sched_busy = false;
        r->frags_inflight = r->rdma_inflight = 0;
    } else {
        r->src = peer;
        r->dst = -1;
        r->total = 0;
        r->received = 0;
        r->stores = stores_btl;
        r->matched = false;
        r->rdma_inflight = 0;
    }
    return r;
}

template <class Policy> weft_status_t Engine<Policy>::start_any(weft_request *req)
{
    auto *r = static_cast<Req *>(req);
    return r->is_send ? start_send(r) : start_recv(r);
}

template <class Policy> weft_status_t Engine<Policy>::cancel(weft_request *req)
{
    auto *r = static_cast<Req *>(req);
    if (r->is_send) {
        cancel_send(r);
        return WEFT_SUCCESS;
    }
    if (r->matched || r->complete)
        return WEFT_SUCCESS; // too late: not cancelled
    CommState &s = cs(r->comm);
    if (s.posted.contains(r))
        s.posted.erase(r);
    r->cancelled = true;
    r->status.cancelled = 1;
    complete(r);
    return WEFT_SUCCESS;
}

// MPI_Cancel of a send. Its message can be taken back while the receiver has not matched it:
// the receiver is asked (CANCEL), and the request completes at the answer (CANCEL_REPLY),
// cancelled or not, even when its own transfer was over already (an eager send, complete
// locally at once, is cancellable until its MPI_Wait). A rendezvous the receiver has answered
// is matched: not cancelled, nothing asked.
template <class Policy> void Engine<Policy>::cancel_send(Req *r)
{
    if (!r->sent || r->cancelled || r->cancel_pending || r->status.error != WEFT_SUCCESS ||
        r->answered)
        return; // not sent, asked already, failed, or a rendezvous its receiver matched
    if (r->persistent && !r->active)
        return; // not started, or its completion reported already (MPI_Wait)
    const int world = send_world(r);
    if (world < 0 || peer_failed(world) || eager_limit(world) == 0)
        return;
    r->cancelled = true;
    r->cancel_pending = true;
    r->done_in_cancel = r->complete;
    // Not complete (to MPI_Wait, MPI_Test) until the answer.
    r->active = true;
    r->complete = false;
    r->cancel_id = P->next_cancel++;
    P->cancels.emplace(r->cancel_id, r);
    const CancelHdr h{.type = hdr_cancel,
                      .reserved = {},
                      .cid = weft_comm_cid(r->comm),
                      .src = weft_comm_rank(r->comm),
                      .reserved2 = 0,
                      .ordinal = r->ordinal,
                      .cancel_id = r->cancel_id};
    if (P->verbose >= 20) [[unlikely]]
        trace("rank " + std::to_string(weft_comm_rank(r->comm)) + " asks " +
              std::to_string(r->dst) + " to cancel message " + std::to_string(r->ordinal) +
              " (cid " + std::to_string(h.cid) + ")");
    // Behind the message itself on its way (a BTL that delivers inside the call may answer
    // before this returns).
    if (send_bytes(world, &h, sizeof h, nullptr, 0, true, Frag::extra) != WEFT_SUCCESS)
        if (auto it = P->cancels.find(h.cancel_id); it != P->cancels.end()) {
            P->cancels.erase(it);
            cancel_answered(r, false);
        }
}

// The answer to r's CANCEL (or none will come: its peer failed).
template <class Policy> void Engine<Policy>::cancel_answered(Req *r, bool cancelled)
{
    r->cancel_pending = false;
    r->cancel_id = 0;
    // Asked and answered no: no cancel in effect (what framework/mpi sees of the answer).
    r->cancelled = cancelled;
    if (cancelled) {
        r->status.cancelled = 1;
        r->status.error = WEFT_SUCCESS;
        if (!r->done_in_cancel && r->id != 0) {
            // A rendezvous the receiver let go before answering it: nothing more comes. (An
            // eager send whose BTL still reads its buffer completes at the BTL's callback.)
            fail_send(r, WEFT_SUCCESS);
            maybe_complete_send(r);
            return;
        }
    }
    if (r->done_in_cancel) {
        r->done_in_cancel = false;
        if (!r->persistent)
            r->active = false;
        r->complete = true;
        if (r->freed && !r->persistent)
            release_request(r);
    }
    // else the transfer goes on (matched), and completes as it would have.
}

// A CANCEL from world rank from_world, or the answer to one of this process's.
template <class Policy>
void Engine<Policy>::handle_cancel(const char *msg, size_t len, int from_world)
{
    if (static_cast<uint8_t>(msg[0]) == hdr_cancel_reply) {
        CancelReplyHdr h;
        if (len != sizeof h)
            return malformed("cancel reply of " + std::to_string(len) + " bytes");
        std::memcpy(&h, msg, sizeof h);
        auto it = P->cancels.find(h.cancel_id);
        if (it == P->cancels.end() || h.cancelled > 1 || send_world(it->second) != from_world)
            return malformed("cancel reply for no cancel asked");
        Req *r = it->second;
        P->cancels.erase(it);
        cancel_answered(r, h.cancelled == 1);
        return;
    }
    CancelHdr h;
    if (len != sizeof h)
        return malformed("cancel request of " + std::to_string(len) + " bytes");
    std::memcpy(&h, msg, sizeof h);
    if (from_world < 0)
        return malformed("cancel request from an unknown endpoint");
    CancelReplyHdr reply{
        .type = hdr_cancel_reply, .cancelled = 0, .reserved = {}, .cancel_id = h.cancel_id};
    weft_comm_t *comm = find_comm(h.cid);
    // A message may be taken back by its own sender only.
    if (comm && (h.src < 0 || h.src >= weft_comm_peer_size(comm) ||
                 weft_comm_peer_world_rank(comm, h.src) != from_world))
        return malformed("cancel request for a message of another process");
    if (comm) {
        CommState &s = cs(comm);
        auto &q = s.unexpected[size_t(h.src)];
        for (auto it = q.begin(); it != q.end(); ++it) {
            if (it->ordinal != h.ordinal)
                continue;
            // (A rendezvous's sender sends nothing more until answered: it is forgotten.)
            give_unexpected(q, it);
            reply.cancelled = 1;
            break;
        }
    }
    if (P->verbose >= 20) [[unlikely]]
        trace("world rank " + std::to_string(from_world) + " asked to cancel message " +
              std::to_string(h.ordinal) + " (cid " + std::to_string(h.cid) +
              "): " + (reply.cancelled ? "taken back" : "not found unmatched, not cancelled"));
    send_bytes(from_world, &reply, sizeof reply, nullptr, 0, true, Frag::extra);
}

template <class Policy> void Engine<Policy>::free_request(weft_request *req)
{
    auto *r = static_cast<Req *>(req);
    if (r->complete || (r->persistent && !r->active)) {
        if (tracked(r))
            untrack(r);
        release_request(r);
    } else {
        r->freed = true; // deleted when it completes
        r->persistent = false;
    }
}

template <class Policy> void Engine<Policy>::wait_and_release(Req *r, weft_msg_status_t *status)
{
    weft::progress_wait([&] { return r->complete; });
    if (status)
        *status = r->status;
    untrack(r);
    release_request(r);
}

// Drop the communicator references of released requests (release_request).
template <class Policy> void Engine<Policy>::release_comms()
{
    // A release may add to comm_releases (and come here again): the list is taken out first.
    // The room of the last one is kept for the next, instead of an allocation each time.
    std::vector<weft_comm_t *> comms;
    comms.swap(P->comm_room);
    comms.swap(P->comm_releases);
    for (weft_comm_t *c : comms)
        weft_comm_release(c);
    comms.clear();
    if (comms.capacity() > P->comm_room.capacity())
        comms.swap(P->comm_room);
}

} // namespace weft::pml::engine

#endif
