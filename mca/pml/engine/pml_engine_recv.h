// pml/engine: receive requests: posting, storing arriving data, finishing.
// Part of Engine<Policy>: included by pml_engine.h only.
#ifndef WEFT_PML_ENGINE_RECV_H
#define WEFT_PML_ENGINE_RECV_H

#include <algorithm>
#include <cstring>

namespace weft::pml::engine {

template <class Policy>
void Engine<Policy>::recv_store(Req *r, size_t offset, const char *data, size_t n)
{
    if (!r->buf || offset >= r->bytes)
        return;
    n = std::min(n, r->bytes - offset);
    if (r->dense)
        weft_copy(r->buf + offset, data, n);
    else
        unpack_at(r, offset, data, n);
}

template <class Policy> void Engine<Policy>::recv_store(Req *r, size_t offset, const Payload &data)
{
    // The common case, one piece into contiguous memory from the start, without the calls.
    if (offset == 0 && data.nmore == 0 && r->dense) {
        if (const size_t n = std::min(data.first_len, r->bytes); n != 0)
            weft_copy(r->buf, data.first, n);
        return;
    }
    recv_store(r, offset, data.first, data.first_len);
    offset += data.first_len;
    for (size_t i = 0; i < data.nmore; ++i) {
        recv_store(r, offset, static_cast<const char *>(data.more[i].seg_addr),
                   data.more[i].seg_len);
        offset += data.more[i].seg_len;
    }
}

template <class Policy> void Engine<Policy>::finish_recv(Req *r)
{
    if (!r->regs.empty())
        release_regs(r);
    r->status.count = std::min(r->total, r->bytes);
    if (r->status.error == WEFT_SUCCESS)
        r->status.error = r->total > r->bytes ? WEFT_ERR_TRUNCATE : WEFT_SUCCESS;
    complete(r);
}

template <class Policy> weft_status_t Engine<Policy>::start_recv(Req *r)
{
    r->complete = false;
    r->active = true;
    r->matched = false;
    r->rndv_recv = false;
    r->received = 0;
    r->stores = stores_btl;
    r->total = 0;
    r->status = weft_msg_status_t{};
    if (r->src == WEFT_PROC_NULL) {
        r->status.source = WEFT_PROC_NULL;
        r->status.tag = WEFT_ANY_TAG;
        complete(r);
        return WEFT_SUCCESS;
    }
    // Posted on a revoked communicator (by the library: the MPI layer refuses the program's),
    // off the fault-tolerant tags: nothing will come for it.
    if (weft_comm_is_revoked(r->comm) && !weft_tag_is_ft(r->tag)) [[unlikely]] {
        r->status.error = WEFT_ERR_REVOKED;
        r->status.source = r->src;
        complete(r);
        return WEFT_SUCCESS;
    }
    CommState &s = cs(r->comm);
    if (const auto [q, it] = unexpected_match(s, r->src, r->tag); q) {
        // Out of the queue first: delivering may send, and what it does must not find it.
        std::list<Unexpected> node;
        node.splice(node.begin(), *q, it);
        deliver(r, r->comm, node.front());
        give_unexpected(node, node.begin());
        return WEFT_SUCCESS;
    }
    // A receive for a process that failed (fault tolerance) fails once nothing it sent is
    // left to match.
    if ((P->any_failed && r->src >= 0 && peer_failed(weft_comm_peer_world_rank(r->comm, r->src))) ||
        (s.coll_revoked && library_tag(r->tag))) [[unlikely]] {
        r->status.error = WEFT_ERR_PROC_FAILED;
        r->status.source = r->src;
        complete(r);
        return WEFT_SUCCESS;
    }
    s.posted.push_back(r);
    return WEFT_SUCCESS;
}

} // namespace weft::pml::engine

#endif
