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
        --P->rndv_sends[size_t(r->rndv_world)];
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
    untrack(r);
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
    r->peer_send_id = 0;
    r->extra = typename Policy::RequestExtra{};
    r->is_send = send;
    set_dtype(r, const_cast<void *>(buf), count, dtype);
    r->regs.clear();
    if (send) {
        r->mode = mode;
        r->dst = peer;
        r->src = -1;
        r->peer_recv_id = 0;
        r->answered = false;
        r->queued = r->sched_busy = false;
        r->frags_inflight = r->rdma_inflight = 0;
    } else {
        r->src = peer;
        r->dst = -1;
        r->total = 0;
        r->received = 0;
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
    if (r->is_send || r->matched || r->complete)
        return WEFT_SUCCESS; // too late, or a send: not cancelled
    CommState &s = cs(r->comm);
    if (s.posted.contains(r))
        s.posted.erase(r);
    r->cancelled = true;
    r->status.cancelled = 1;
    complete(r);
    return WEFT_SUCCESS;
}

template <class Policy> void Engine<Policy>::free_request(weft_request *req)
{
    auto *r = static_cast<Req *>(req);
    if (r->complete || (r->persistent && !r->active)) {
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
    std::vector<weft_comm_t *> comms;
    comms.swap(P->comm_releases);
    for (weft_comm_t *c : comms)
        weft_comm_release(c);
}

} // namespace weft::pml::engine

#endif
