// pml/ob1: point-to-point messaging with MPI matching semantics.
//
// Protocols (see ../../../../shared seeds, ob1-protocols.rst, and README.md):
//   eager       MATCH header + the whole message in one fragment, for messages
//               that fit the eager rail's eager limit (not for MPI_Ssend), in
//               one of three ways, chosen as the protocol description says:
//               immediate (btl_sendi packs header and data in one step),
//               prepared (btl_prepare_src, which may send from the user's
//               buffer in place; completes on the BTL's callback) and
//               allocated (btl_alloc, then the PML packs);
//   rendezvous  the send/receive, buffered and RDMA pipelines and RDMA direct
//               put and get: pml_ob1_rndv.cc.
// Every MATCH and RNDV carries a per-(communicator, sender, receiver)
// sequence number, so messages are matched in the order they were sent even
// when fragments overtake one another. Fragments from a peer that are not
// well formed are reported and dropped, never trusted: ACK and FRAG name
// requests by id, looked up in a table, never by address.
#include "pml_ob1.h"

#include "mca_output.h"
#include "mca_select.h"
#include "runtime.h"

#include <weft/convertor.h>
#include <weft/mca.h>
#include <weft/runtime.h>

#include <algorithm>
#include <cstring>

namespace weft::pml::ob1 {

State *P = nullptr;

constexpr weft_btl_tag_t tag_ob1 = WEFT_BTL_TAG_PML_FIRST;

// Messages up to this size take the immediate protocol when the rail has btl_sendi,
// before the prepared one is considered (ob1-protocols.rst).
constexpr size_t kImmediateMax = 256;

weft_comm *find_comm(uint32_t cid)
{
    if (cid < kDenseCids)
        return cid < P->dense_comms.size() ? P->dense_comms[cid] : nullptr;
    auto it = P->comms.find(cid);
    return it == P->comms.end() ? nullptr : it->second;
}

// Register comm under cid, or forget cid (comm NULL).
void set_comm(uint32_t cid, weft_comm *comm)
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

[[gnu::cold]] void trace(const std::string &line) { output::info("pml/ob1: " + line); }

// One line per message sent: the protocol the sender chose and the one that ran (they differ
// when the rail had no room for the chosen one).
[[gnu::cold]] void trace_send(const weft_comm *comm, int dst, int tag, size_t bytes, Proto chosen,
                              Proto ran)
{
    trace("send rank " + std::to_string(comm->rank) + " -> " + std::to_string(dst) + " tag " +
          std::to_string(tag) + " cid " + std::to_string(comm->cid) + " " + std::to_string(bytes) +
          " bytes: chose " + proto_name(chosen) + ", ran " + proto_name(ran));
}

CommState &cs(weft_comm *c) { return *static_cast<CommState *>(c->pml_state); }

void malformed(const std::string &what)
{
    ++P->malformed;
    output::error("pml/ob1: a malformed fragment arrived (" + what + "); it was dropped");
}

weft_status_t endpoint(int world, weft_bml_endpoint_t **ep)
{
    weft_proc_t *proc = weft_runtime_proc(world);
    if (!proc)
        return WEFT_ERR_BAD_PARAM;
    return P->bml->bml_endpoint_get(P->bml, proc, ep);
}

size_t eager_limit(int world)
{
    return size_t(world) < P->peers.size() ? P->peers[size_t(world)].eager_limit : 0;
}

// Hand header + data to a rail now. WEFT_ERR_OUT_OF_RESOURCE: the rail has no room, nothing
// was sent.
weft_status_t try_send(int world, const void *hdr, size_t hlen, const void *data, size_t dlen,
                       bool eager)
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
    rc = b.btl->btl_send(b.btl, b.btl_endpoint, des, tag_ob1);
    if (rc == WEFT_SUCCESS || rc == WEFT_IN_PROGRESS)
        return WEFT_SUCCESS;
    b.btl->btl_free(b.btl, des);
    return rc;
}

// Hand header + data to a rail now, or keep a copy to retry from progress (behind earlier
// copies: nothing overtakes them). Returns an error only when the peer cannot be reached.
weft_status_t send_bytes(int world, const void *hdr, size_t hlen, const void *data, size_t dlen,
                         bool eager)
{
    if (P->pending.empty()) {
        weft_status_t rc = try_send(world, hdr, hlen, data, dlen, eager);
        if (rc != WEFT_ERR_OUT_OF_RESOURCE)
            return rc;
    }
    Pending pend{world, eager, std::string(static_cast<const char *>(hdr), hlen)};
    if (dlen)
        pend.bytes.append(static_cast<const char *>(data), dlen);
    P->pending.push_back(std::move(pend));
    return WEFT_SUCCESS;
}

// Retry the queued copies in order; stop at the first the rails still have no room for.
int progress_pending()
{
    int n = 0;
    while (!P->pending.empty()) {
        const Pending &p = P->pending.front();
        weft_status_t rc =
            try_send(p.world_dst, p.bytes.data(), p.bytes.size(), nullptr, 0, p.eager);
        if (rc == WEFT_ERR_OUT_OF_RESOURCE)
            break;
        if (rc != WEFT_SUCCESS)
            output::error("pml/ob1: a queued fragment to rank " + std::to_string(p.world_dst) +
                          " could not be sent: " + weft_status_string(rc));
        P->pending.pop_front();
        ++n;
    }
    return n;
}

uint64_t track(Request *r)
{
    r->id = P->next_id++;
    P->live[r->id] = r;
    return r->id;
}

void untrack(Request *r)
{
    if (r->id)
        P->live.erase(r->id);
    r->id = 0;
}

// Requests are recycled: the message-rate path allocates none.
std::vector<Request *> request_pool;

// A request from the pool; make() sets every field.
Request *new_request()
{
    if (request_pool.empty())
        return new Request;
    Request *r = request_pool.back();
    request_pool.pop_back();
    return r;
}

void release_request(Request *r)
{
    // The communicator reference goes from the next progress call: dropping the last one
    // destroys the communicator (pml_del_comm), which must not happen under a caller that is
    // still matching in its queues.
    if (r->holds_comm) {
        P->comm_releases.push_back(r->comm);
        r->holds_comm = false;
    }
    if (request_pool.size() < 4096)
        request_pool.push_back(r);
    else
        delete r;
}

void complete(Request *r)
{
    untrack(r);
    r->active = false;
    r->complete = true;
    if (r->freed && !r->persistent)
        release_request(r);
}

bool tag_matches(int want, int got) { return want == WEFT_ANY_TAG ? got >= 0 : want == got; }

bool src_matches(int want, int got) { return want == WEFT_ANY_SOURCE || want == got; }

// The datatype of r's buffer: dense data is copied directly, anything else goes through the
// datatype engine fragment by fragment.
void set_dtype(Request *r, void *buf, size_t count, weft_datatype *dtype)
{
    r->buf = static_cast<char *>(buf);
    r->count = count;
    r->bytes = count * dtype->size;
    r->dense = dtype->dense || r->bytes == 0 || !dtype->layout;
    if (r->dense) {
        r->layout.reset();
        return;
    }
    r->layout = dtype->layout;
    r->conv = dt::ConvState{r->layout.get(), r->buf, count};
}

void recv_store(Request *r, size_t offset, const char *data, size_t n)
{
    if (!r->buf || offset >= r->bytes)
        return;
    n = std::min(n, r->bytes - offset);
    if (r->dense)
        weft_copy(r->buf + offset, data, n);
    else
        dt::unpack(*r->layout, r->buf, r->count, offset, data, n);
}

void recv_store(Request *r, size_t offset, const Payload &data)
{
    recv_store(r, offset, data.first, data.first_len);
    offset += data.first_len;
    for (size_t i = 0; i < data.nmore; ++i) {
        recv_store(r, offset, static_cast<const char *>(data.more[i].seg_addr),
                   data.more[i].seg_len);
        offset += data.more[i].seg_len;
    }
}

void send_load(Request *r, size_t offset, char *dst, size_t n)
{
    if (r->dense)
        weft_copy(dst, r->buf + offset, n);
    else
        dt::pack(*r->layout, r->buf, r->count, offset, dst, n);
}

std::string rails_text(uint32_t mask)
{
    std::string out;
    for (size_t i = 0; i < P->modules.size() && i < 32; ++i) {
        if (!(mask & (1u << i)))
            continue;
        weft_btl_module_t *m = P->modules[i];
        out += (out.empty() ? "" : "+") +
               std::string(m->btl_component ? m->btl_component->mca.name : "?") + ":" +
               std::to_string(rail_key(m) & 0xffu);
    }
    return out.empty() ? "the eager rail" : out;
}

void finish_recv(Request *r)
{
    release_regs(r);
    r->status.count = std::min(r->total, r->bytes);
    if (r->status.error == WEFT_SUCCESS)
        r->status.error = r->total > r->bytes ? WEFT_ERR_TRUNCATE : WEFT_SUCCESS;
    complete(r);
}

void deliver(Request *r, weft_comm *, const Unexpected &u)
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
    rndv_matched(r, u);
}

void match_one(weft_comm *comm, Unexpected &&u)
{
    CommState &s = cs(comm);
    for (Request *r = s.posted.front(); r; r = r->next) {
        if (src_matches(r->src, u.src) && tag_matches(r->tag, u.tag)) {
            s.posted.erase(r);
            deliver(r, comm, u);
            return;
        }
    }
    s.unexpected.push_back(std::move(u));
}

void arrive(weft_comm *comm, uint16_t seq, Unexpected &&u)
{
    CommState &s = cs(comm);
    const size_t src = size_t(u.src);
    if (seq != s.recv_seq[src]) {
        s.ahead[src].emplace(seq, std::move(u));
        return;
    }
    match_one(comm, std::move(u));
    ++s.recv_seq[src];
    auto &ahead = s.ahead[src];
    for (auto it = ahead.find(s.recv_seq[src]); it != ahead.end();
         it = ahead.find(s.recv_seq[src])) {
        Unexpected next = std::move(it->second);
        ahead.erase(it);
        match_one(comm, std::move(next));
        ++s.recv_seq[src];
    }
}

void handle(const char *msg, size_t len, const weft_btl_segment_t *more, size_t nmore);

size_t header_size(uint8_t type)
{
    switch (type) {
    case hdr_match: return sizeof(MatchHdr);
    case hdr_rndv: return sizeof(RndvHdr);
    case hdr_ack: return sizeof(AckHdr);
    case hdr_frag: return sizeof(FragHdr);
    case hdr_rget: return sizeof(RgetHdr);
    case hdr_put: return sizeof(PutHdr);
    case hdr_fin: return sizeof(FinHdr);
    default: return 1;
    }
}

void handle_match_or_rndv(const char *msg, size_t len, const weft_btl_segment_t *more, size_t nmore)
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
    weft_comm *comm = find_comm(h.match.cid);
    if (!comm) {
        // The communicator exists at the sender already, not yet here.
        std::string copy(msg, hlen);
        data.append_to(copy);
        P->early[h.match.cid].push_back(std::move(copy));
        return;
    }
    if (h.match.src < 0 || h.match.src >= comm->peer_size())
        return malformed("source rank " + std::to_string(h.match.src) + " outside communicator " +
                         std::to_string(h.match.cid));
    // Fast path: an eager message in sequence, for a receive already posted:
    // copy straight from the fragment, no queue entry.
    CommState &s = cs(comm);
    const size_t src = size_t(h.match.src);
    if (!rndv && h.match.seq == s.recv_seq[src] && s.ahead[src].empty()) {
        for (Request *r = s.posted.front(); r; r = r->next) {
            if (!src_matches(r->src, h.match.src) || !tag_matches(r->tag, h.match.tag))
                continue;
            s.posted.erase(r);
            ++s.recv_seq[src];
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
        trace("rank " + std::to_string(comm->rank) + " <- " + std::to_string(h.match.src) +
              " tag " + std::to_string(h.match.tag) + " cid " + std::to_string(comm->cid) + ": " +
              name + " kept until a receive matches it");
    Unexpected u;
    u.src = h.match.src;
    u.tag = h.match.tag;
    u.type = type;
    u.flags = h.match.flags;
    // An RGET carries its RDMA segments where the others carry data.
    data.append_to(type == hdr_rget ? u.rdma : u.data);
    u.total = rndv ? h.total : u.data.size();
    u.send_id = rndv ? h.send_id : 0;
    u.world_src = comm->peer_group()->ranks[size_t(u.src)];
    if (u.total < u.data.size())
        return malformed(std::string(name) + " whose first part is longer than the message");
    arrive(comm, h.match.seq, std::move(u));
}

void handle(const char *msg, size_t len, const weft_btl_segment_t *more, size_t nmore)
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
    default: return malformed("unknown header type " + std::to_string(type));
    }
}

void on_recv(weft_btl_module_t *, const weft_btl_recv_descriptor_t *rd)
{
    // A transport that closes after ob1 finalized may still hand back what it held.
    if (!P)
        return;
    if (rd->flags & WEFT_BTL_RECV_FLAG_SEND_FAILED) {
        // One of our own btl_sendi fragments that may not have arrived. ob1 has no failover
        // (bfo has): the message may be lost, which the error callback reported already.
        ++P->lost;
        return;
    }
    if (rd->segment_count == 0)
        return malformed("fragment without segments");
    const auto &first = rd->segments[0];
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

void on_error(weft_btl_module_t *, uint32_t flags, weft_proc_t *proc, const char *description,
              void *)
{
    output::error(std::string("pml/ob1: a transport reported an error") +
                  (proc ? " with rank " + std::to_string(weft_proc_rank(proc)) : std::string()) +
                  ": " + (description ? description : "?") +
                  ((flags & WEFT_BTL_ERROR_FLAG_FATAL) ? " (the transport is unusable)" : ""));
}

void prepared_done(weft_btl_module_t *, weft_btl_endpoint_t *, weft_btl_descriptor_t *des,
                   weft_status_t status)
{
    auto *r = static_cast<Request *>(des->des_cbdata);
    if (status != WEFT_SUCCESS)
        r->status.error = WEFT_ERR_UNREACH;
    complete(r);
}

// Send an eager message: h is filled but for its type; r is the request to complete, or NULL
// for a blocking send (which then waits here while the BTL still reads the user's buffer).
// The protocol is chosen as ob1-protocols.rst says. Returns an error only when the peer
// cannot be reached.
weft_status_t send_eager(Request *r, const weft_comm *comm, int dst, int world, MatchHdr &h,
                         const char *buf, size_t bytes, weft_send_mode_t mode)
{
    const Peer &peer = P->peers[size_t(world)];
    weft_btl_module_t *btl = peer.eager_btl;
    h.type = hdr_match;
    // Queued copies go first: while there are any, nothing may overtake them.
    const bool sendi = btl->btl_sendi != nullptr && P->pending.empty();
    Proto chosen;
    if (sendi && bytes <= kImmediateMax)
        chosen = Proto::immediate;
    else if (mode != WEFT_SEND_BUFFERED && bytes != 0 && peer.send_inplace &&
             btl->btl_prepare_src && P->pending.empty())
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
        dt::convertor_init(&cv, &r->conv);
    constexpr uint32_t flags = WEFT_BTL_DES_FLAG_PRIORITY | WEFT_BTL_DES_FLAG_BTL_OWNERSHIP;
    weft_status_t rc = WEFT_ERR_OUT_OF_RESOURCE;
    if (chosen == Proto::immediate) {
        rc = btl->btl_sendi(btl, peer.eager_ep, &cv, &h, sizeof h, bytes, WEFT_BTL_NO_ORDER, flags,
                            tag_ob1, nullptr);
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
            Request local; // a blocking send waits for the callback here
            Request *owner = r ? r : &local;
            des->des_cbfunc = prepared_done;
            des->des_cbdata = owner;
            rc = btl->btl_send(btl, peer.eager_ep, des, tag_ob1);
            if (rc == WEFT_SUCCESS || rc == WEFT_IN_PROGRESS) {
                if (rc == WEFT_SUCCESS)
                    complete(owner);
                if (r)
                    return WEFT_SUCCESS;
                // A blocking send reports what the BTL's callback said.
                weft::rt::wait_until([&] { return local.complete; });
                return local.status.error;
            }
            btl->btl_free(btl, des);
        }
    }
    if (rc != WEFT_SUCCESS && rc != WEFT_ERR_OUT_OF_RESOURCE)
        return rc;
    // Allocated, chosen or as the fallback when the rail had no room: send_bytes copies the
    // message and keeps the copy for later if the rail is still full.
    ran = Proto::allocated;
    if (P->verbose >= 20) [[unlikely]]
        trace_send(comm, dst, h.tag, bytes, chosen, ran);
    if (dense) {
        rc = send_bytes(world, &h, sizeof h, buf, bytes, true);
    } else {
        std::string packed(bytes, '\0');
        send_load(r, 0, packed.data(), bytes);
        rc = send_bytes(world, &h, sizeof h, packed.data(), bytes, true);
    }
    if (rc != WEFT_SUCCESS)
        return rc;
    if (r)
        complete(r);
    return WEFT_SUCCESS;
}

weft_status_t start_send(Request *r)
{
    r->complete = false;
    r->active = true;
    r->status = weft_msg_status_t{};
    weft_comm *comm = r->comm;
    if (r->dst == WEFT_PROC_NULL) {
        r->status.source = WEFT_PROC_NULL;
        r->status.tag = WEFT_ANY_TAG;
        complete(r);
        return WEFT_SUCCESS;
    }
    const int world = comm->peer_group()->ranks[size_t(r->dst)];
    CommState &s = cs(comm);
    MatchHdr m{};
    m.cid = comm->cid;
    m.src = comm->rank;
    m.tag = r->tag;
    m.seq = s.send_seq[size_t(r->dst)]++;
    const size_t limit = eager_limit(world);
    if (limit == 0)
        return WEFT_ERR_UNREACH;
    if (r->mode != WEFT_SEND_SYNCHRONOUS && sizeof(MatchHdr) + r->bytes <= limit)
        return send_eager(r, comm, r->dst, world, m, r->buf, r->bytes, r->mode);
    return start_rndv(r, m, world);
}

weft_status_t start_recv(Request *r)
{
    r->complete = false;
    r->active = true;
    r->matched = false;
    r->received = 0;
    r->total = 0;
    r->status = weft_msg_status_t{};
    if (r->src == WEFT_PROC_NULL) {
        r->status.source = WEFT_PROC_NULL;
        r->status.tag = WEFT_ANY_TAG;
        complete(r);
        return WEFT_SUCCESS;
    }
    CommState &s = cs(r->comm);
    for (auto it = s.unexpected.begin(); it != s.unexpected.end(); ++it) {
        if (src_matches(r->src, it->src) && tag_matches(r->tag, it->tag)) {
            Unexpected u = std::move(*it);
            s.unexpected.erase(it);
            deliver(r, r->comm, u);
            return WEFT_SUCCESS;
        }
    }
    s.posted.push_back(r);
    return WEFT_SUCCESS;
}

weft_status_t start_any(weft_request *req)
{
    auto *r = static_cast<Request *>(req);
    return r->is_send ? start_send(r) : start_recv(r);
}

weft_status_t cancel(weft_request *req)
{
    auto *r = static_cast<Request *>(req);
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

void free_request(weft_request *req)
{
    auto *r = static_cast<Request *>(req);
    if (r->complete || (r->persistent && !r->active)) {
        untrack(r);
        release_request(r);
    } else {
        r->freed = true; // deleted when it completes
        r->persistent = false;
    }
}

Request *make(bool send, const void *buf, size_t count, weft_datatype_t *dtype, int peer, int tag,
              weft_send_mode_t mode, weft_comm_t *comm, bool persistent)
{
    // Every field the request's kind reads, once (a pooled request holds the last message's
    // values): the send state is read only by sends, the receive state only by receives.
    Request *r = new_request();
    r->kind = send ? weft_request::Kind::pml_send : weft_request::Kind::pml_recv;
    r->complete = false;
    r->persistent = persistent;
    r->active = false;
    r->freed = false;
    r->cancelled = false;
    r->status = weft_msg_status_t{};
    r->comm = comm;
    // Held until the request is released: MPI_Comm_free with the request pending must not
    // take the communicator (and its queues) away (MPI-3.1 6.4.3).
    weft::mpi::comm_retain(comm);
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

// ---- the module's operations

// One of a peer's lists, as Rails.
std::vector<Rail> rails(weft_bml_endpoint_t *ep, weft_bml_list_t list)
{
    std::vector<Rail> out;
    const size_t n = P->bml->bml_endpoint_count(P->bml, ep, list);
    for (size_t i = 0; i < n; ++i) {
        weft_bml_btl_t b;
        if (P->bml->bml_endpoint_btl(P->bml, ep, list, i, &b) != WEFT_SUCCESS)
            continue;
        Rail rail;
        rail.btl = b.btl;
        rail.ep = b.btl_endpoint;
        rail.weight = b.weight;
        rail.flags = b.btl_flags;
        rail.key = rail_key(b.btl);
        rail.index =
            int(std::find(P->modules.begin(), P->modules.end(), b.btl) - P->modules.begin());
        if (size_t(rail.index) >= P->modules.size() || rail.index >= 32)
            continue;
        // Without put/get operations a module is no RDMA rail, whatever its flags say.
        if (list == WEFT_BML_LIST_RDMA &&
            (((rail.flags & WEFT_BTL_FLAG_PUT) && !b.btl->btl_put) ||
             ((rail.flags & WEFT_BTL_FLAG_GET) && !b.btl->btl_get) || !b.btl->btl_register_mem))
            continue;
        out.push_back(rail);
    }
    return out;
}

weft_status_t add_procs(weft_pml_module_t *, weft_proc_t *const *procs, size_t n)
{
    std::vector<uint8_t> reach(n, 0);
    if (weft_status_t rc = P->bml->bml_add_procs(P->bml, procs, n, reach.data());
        rc != WEFT_SUCCESS)
        return rc;
    for (size_t i = 0; i < n; ++i) {
        const int world = weft_proc_rank(procs[i]);
        if (!reach[i] || world < 0)
            continue;
        if (P->peers.size() <= size_t(world))
            P->peers.resize(size_t(world) + 1);
        Peer &peer = P->peers[size_t(world)];
        weft_bml_endpoint_t *ep;
        weft_bml_btl_t b;
        if (P->bml->bml_endpoint_get(P->bml, procs[i], &ep) == WEFT_SUCCESS &&
            P->bml->bml_endpoint_btl(P->bml, ep, WEFT_BML_LIST_EAGER, 0, &b) == WEFT_SUCCESS) {
            peer.eager_btl = b.btl;
            peer.eager_ep = b.btl_endpoint;
            peer.eager_limit = b.btl->btl_eager_limit;
            peer.send_inplace = (b.btl_flags & WEFT_BTL_FLAG_SEND_INPLACE) != 0;
            weft_bml_endpoint_info_t info{};
            info.struct_size = sizeof info;
            P->bml->bml_endpoint_info(P->bml, ep, &info);
            peer.rndv_first = std::min(b.btl->btl_eager_limit, b.btl->btl_rndv_eager_limit);
            peer.min_rdma_pipeline_size = info.min_rdma_pipeline_size;
            peer.pipeline_send_length = info.rdma_pipeline_send_length;
            peer.pipeline_frag_size = info.rdma_pipeline_frag_size;
            peer.send = rails(ep, WEFT_BML_LIST_SEND);
            peer.rdma = rails(ep, WEFT_BML_LIST_RDMA);
        }
    }
    for (size_t i = 0; i < n; ++i)
        if (!reach[i]) {
            output::error("pml/ob1: no BTL reaches rank " +
                          std::to_string(weft_proc_rank(procs[i])) + " on host " +
                          weft_proc_hostname(procs[i]) +
                          " (check --mca btl; e.g. sm reaches only this host)");
            return WEFT_ERR_UNREACH;
        }
    return WEFT_SUCCESS;
}

weft_status_t del_procs(weft_pml_module_t *, weft_proc_t *const *procs, size_t n)
{
    return P->bml->bml_del_procs(P->bml, procs, n);
}

// enable(0), at MPI_Finalize: hand everything still queued (here and in the BTLs) to the
// links, progressing meanwhile, so that no message is lost when the transports close.
void release_comms();

weft_status_t enable(weft_pml_module_t *, int on)
{
    if (on)
        return WEFT_SUCCESS;
    weft::rt::wait_until([] { return P->pending.empty() && P->sched.empty(); });
    release_comms();
    for (weft_btl_module_t *btl : weft::rt::btl_modules())
        if (btl->btl_flush)
            btl->btl_flush(btl, nullptr);
    return WEFT_SUCCESS;
}

int progress(weft_pml_module_t *) { return weft_progress(); }

weft_status_t add_comm(weft_pml_module_t *, weft_comm_t *comm)
{
    auto *s = new CommState;
    s->send_seq.assign(size_t(comm->peer_size()), 0);
    s->recv_seq.assign(size_t(comm->peer_size()), 0);
    s->ahead.resize(size_t(comm->peer_size()));
    comm->pml_state = s;
    set_comm(comm->cid, comm);
    auto it = P->early.find(comm->cid);
    if (it != P->early.end()) {
        std::vector<std::string> frags = std::move(it->second);
        P->early.erase(it);
        for (const auto &f : frags)
            handle(f.data(), f.size(), nullptr, 0);
    }
    return WEFT_SUCCESS;
}

weft_status_t del_comm(weft_pml_module_t *, weft_comm_t *comm)
{
    set_comm(comm->cid, nullptr);
    delete static_cast<CommState *>(comm->pml_state);
    comm->pml_state = nullptr;
    return WEFT_SUCCESS;
}

weft_status_t irecv_init(weft_pml_module_t *, void *buf, size_t count, weft_datatype_t *dtype,
                         int src, int tag, weft_comm_t *comm, weft_request_t **req)
{
    *req = make(false, buf, count, dtype, src, tag, WEFT_SEND_STANDARD, comm, true);
    return WEFT_SUCCESS;
}

weft_status_t irecv(weft_pml_module_t *, void *buf, size_t count, weft_datatype_t *dtype, int src,
                    int tag, weft_comm_t *comm, weft_request_t **req)
{
    Request *r = make(false, buf, count, dtype, src, tag, WEFT_SEND_STANDARD, comm, false);
    *req = r;
    return start_recv(r);
}

void wait_and_release(Request *r, weft_msg_status_t *status)
{
    weft::rt::wait_until([&] { return r->complete; });
    if (status)
        *status = r->status;
    untrack(r);
    release_request(r);
}

weft_status_t recv(weft_pml_module_t *, void *buf, size_t count, weft_datatype_t *dtype, int src,
                   int tag, weft_comm_t *comm, weft_msg_status_t *status)
{
    // A blocking receive waits here, so its request can live on the stack.
    Request r;
    r.kind = weft_request::Kind::pml_recv;
    set_dtype(&r, buf, count, dtype);
    r.comm = comm;
    r.peer = r.src = src;
    r.tag = tag;
    if (weft_status_t rc = start_recv(&r); rc != WEFT_SUCCESS)
        return rc;
    weft::rt::wait_until([&] { return r.complete; });
    untrack(&r);
    if (status)
        *status = r.status;
    return r.status.error;
}

weft_status_t isend_init(weft_pml_module_t *, const void *buf, size_t count, weft_datatype_t *dtype,
                         int dst, int tag, weft_send_mode_t mode, weft_comm_t *comm,
                         weft_request_t **req)
{
    *req = make(true, buf, count, dtype, dst, tag, mode, comm, true);
    return WEFT_SUCCESS;
}

weft_status_t isend(weft_pml_module_t *, const void *buf, size_t count, weft_datatype_t *dtype,
                    int dst, int tag, weft_send_mode_t mode, weft_comm_t *comm,
                    weft_request_t **req)
{
    Request *r = make(true, buf, count, dtype, dst, tag, mode, comm, false);
    *req = r;
    return start_send(r);
}

weft_status_t send(weft_pml_module_t *m, const void *buf, size_t count, weft_datatype_t *dtype,
                   int dst, int tag, weft_send_mode_t mode, weft_comm_t *comm)
{
    // Fast path: an eager message needs no request at all.
    const size_t bytes = count * dtype->size;
    if (mode != WEFT_SEND_SYNCHRONOUS && dst >= 0 && dtype->dense) {
        const int world = comm->peer_group()->ranks[size_t(dst)];
        if (sizeof(MatchHdr) + bytes <= eager_limit(world)) {
            MatchHdr h;
            h.flags = 0;
            h.cid = comm->cid;
            h.src = comm->rank;
            h.tag = tag;
            h.seq = cs(comm).send_seq[size_t(dst)]++;
            return send_eager(nullptr, comm, dst, world, h, static_cast<const char *>(buf), bytes,
                              mode);
        }
    }
    weft_request_t *req;
    if (weft_status_t rc = isend(m, buf, count, dtype, dst, tag, mode, comm, &req);
        rc != WEFT_SUCCESS)
        return rc;
    weft_msg_status_t st;
    wait_and_release(static_cast<Request *>(req), &st);
    return st.error;
}

const Unexpected *find_unexpected(int src, int tag, weft_comm_t *comm)
{
    for (const auto &u : cs(comm).unexpected)
        if (src_matches(src, u.src) && tag_matches(tag, u.tag))
            return &u;
    return nullptr;
}

void probe_status(const Unexpected &u, weft_msg_status_t *status)
{
    if (!status)
        return;
    *status = weft_msg_status_t{};
    status->source = u.src;
    status->tag = u.tag;
    status->count = u.total;
}

weft_status_t iprobe(weft_pml_module_t *, int src, int tag, weft_comm_t *comm, int *matched,
                     weft_msg_status_t *status)
{
    weft_progress();
    const Unexpected *u = find_unexpected(src, tag, comm);
    *matched = u != nullptr;
    if (u)
        probe_status(*u, status);
    return WEFT_SUCCESS;
}

weft_status_t probe(weft_pml_module_t *m, int src, int tag, weft_comm_t *comm,
                    weft_msg_status_t *status)
{
    int matched = 0;
    weft::rt::wait_until([&] {
        iprobe(m, src, tag, comm, &matched, status);
        return matched != 0;
    });
    return WEFT_SUCCESS;
}

weft_status_t improbe(weft_pml_module_t *, int src, int tag, weft_comm_t *comm, int *matched,
                      weft_message_t **message, weft_msg_status_t *status)
{
    weft_progress();
    CommState &s = cs(comm);
    for (auto it = s.unexpected.begin(); it != s.unexpected.end(); ++it) {
        if (src_matches(src, it->src) && tag_matches(tag, it->tag)) {
            probe_status(*it, status);
            auto *msg = new weft_message;
            msg->comm = comm;
            msg->source = it->src;
            msg->tag = it->tag;
            msg->count = it->total;
            msg->pml_data = new Unexpected(std::move(*it));
            s.unexpected.erase(it);
            *message = msg;
            *matched = 1;
            return WEFT_SUCCESS;
        }
    }
    *matched = 0;
    return WEFT_SUCCESS;
}

weft_status_t mprobe(weft_pml_module_t *m, int src, int tag, weft_comm_t *comm,
                     weft_message_t **message, weft_msg_status_t *status)
{
    int matched = 0;
    weft::rt::wait_until([&] {
        improbe(m, src, tag, comm, &matched, message, status);
        return matched != 0;
    });
    return WEFT_SUCCESS;
}

weft_status_t imrecv(weft_pml_module_t *, void *buf, size_t count, weft_datatype_t *dtype,
                     weft_message_t **message, weft_request_t **req)
{
    weft_message *msg = *message;
    auto *u = static_cast<Unexpected *>(msg->pml_data);
    Request *r =
        make(false, buf, count, dtype, u->src, u->tag, WEFT_SEND_STANDARD, msg->comm, false);
    r->active = true;
    *req = r;
    deliver(r, msg->comm, *u);
    delete u;
    delete msg;
    *message = nullptr;
    return WEFT_SUCCESS;
}

weft_status_t mrecv(weft_pml_module_t *m, void *buf, size_t count, weft_datatype_t *dtype,
                    weft_message_t **message, weft_msg_status_t *status)
{
    weft_request_t *req;
    imrecv(m, buf, count, dtype, message, &req);
    weft_msg_status_t st;
    wait_and_release(static_cast<Request *>(req), &st);
    if (status)
        *status = st;
    return st.error;
}

weft_status_t start(weft_pml_module_t *, size_t count, weft_request_t **reqs)
{
    for (size_t i = 0; i < count; ++i)
        if (weft_status_t rc = start_any(reqs[i]); rc != WEFT_SUCCESS)
            return rc;
    return WEFT_SUCCESS;
}

weft_status_t dump(weft_pml_module_t *, weft_comm_t *comm, int)
{
    CommState &s = cs(comm);
    output::info("pml/ob1: communicator " + std::to_string(comm->cid) + ": " +
                 std::to_string(s.posted.size()) + " posted, " +
                 std::to_string(s.unexpected.size()) + " unexpected, " +
                 std::to_string(P->pending.size()) + " pending sends, " +
                 std::to_string(P->malformed) + " malformed fragments dropped, " +
                 std::to_string(P->lost) + " sent fragments a failed link handed back");
    return WEFT_SUCCESS;
}

weft_status_t revoke_comm(weft_pml_module_t *, weft_comm_t *, int)
{
    return WEFT_ERR_NOT_SUPPORTED; // ULFM comes with its own issue
}

weft_mca_param_t *p_fault_to, *p_verbose, *p_depth, *p_max_rdma, *p_max_send, *p_rcache_unused;

// The protocol parameters into P; false (with the reason printed) when one cannot work.
bool read_params()
{
    struct Check {
        weft_mca_param_t *p;
        const char *name;
        int64_t lo, hi;
    };
    const Check checks[] = {{p_depth, "pml_ob1_send_pipeline_depth", 1, 1024},
                            {p_max_rdma, "pml_ob1_max_rdma_per_request", 1, int64_t(kMaxRails)},
                            {p_max_send, "pml_ob1_max_send_per_range", 1, int64_t(kMaxRails)},
                            {p_rcache_unused, "pml_ob1_rcache_max_unused", 0, 65536}};
    for (const Check &c : checks) {
        const int64_t v = weft_mca_param_int(c.p);
        if (v < c.lo || v > c.hi) {
            output::error("pml/ob1: " + std::string(c.name) + " is " + std::to_string(v) +
                          ", outside " + std::to_string(c.lo) + ".." + std::to_string(c.hi));
            return false;
        }
    }
    P->send_pipeline_depth = int(weft_mca_param_int(p_depth));
    P->max_rdma_per_request = size_t(weft_mca_param_int(p_max_rdma));
    P->max_send_per_range = size_t(weft_mca_param_int(p_max_send));
    const weft_mca_param_t *lp = weft_mca_param_find("mpi_leave_pinned");
    P->leave_pinned = lp && weft_mca_param_bool(lp);
    P->rcache =
        std::make_unique<RegCache>(P->leave_pinned, size_t(weft_mca_param_int(p_rcache_unused)));
    return true;
}
bool fault_sent = false;

// Fault injection for tests: one fragment of every malformed kind to one
// rank, once MPI_COMM_WORLD exists here.
void inject_faults()
{
    const int to = int(weft_mca_param_int(p_fault_to));
    if (to < 0 || to >= weft_runtime_world_size()) {
        fault_sent = true; // nothing to inject: stop asking
        return;
    }
    if (fault_sent || !find_comm(0))
        return;
    fault_sent = true;
    const uint8_t unknown[4] = {99, 0, 0, 0};
    send_bytes(to, unknown, sizeof unknown, nullptr, 0, true);
    MatchHdr short_match{};
    short_match.type = hdr_match;
    send_bytes(to, &short_match, sizeof short_match - 4, nullptr, 0, true);
    AckHdr ack{};
    ack.type = hdr_ack;
    ack.send_id = 0xdeadbeef;
    send_bytes(to, &ack, sizeof ack, nullptr, 0, true);
    FragHdr frag{};
    frag.type = hdr_frag;
    frag.recv_id = 0xfeedface;
    send_bytes(to, &frag, sizeof frag, "xyz", 3, true);
    MatchHdr bad_src{};
    bad_src.type = hdr_match;
    bad_src.src = 1 << 20;
    send_bytes(to, &bad_src, sizeof bad_src, nullptr, 0, true);
    PutHdr put{};
    put.type = hdr_put;
    put.send_id = 0xdeadbeef;
    send_bytes(to, &put, sizeof put, nullptr, 0, true);
    FinHdr fin{};
    fin.type = hdr_fin;
    fin.id = 0xfeedface;
    send_bytes(to, &fin, sizeof fin, nullptr, 0, true);
    // An RGET from a source outside the communicator: reported before it can match.
    RgetHdr rget{};
    rget.rndv.match.type = hdr_rget;
    rget.rndv.match.src = 1 << 20; // outside any communicator: reported before matching
    rget.nsegs = 1;
    send_bytes(to, &rget, sizeof rget, nullptr, 0, true);
}

// Drop the communicator references of released requests (release_request).
void release_comms()
{
    std::vector<weft_comm *> comms;
    comms.swap(P->comm_releases);
    for (weft_comm *c : comms)
        weft::mpi::comm_release(c);
}

int progress_fn()
{
    if (!fault_sent && p_fault_to)
        inject_faults();
    if (!P->comm_releases.empty()) [[unlikely]]
        release_comms();
    int n = progress_pending();
    if (!P->sched.empty()) [[unlikely]]
        n += progress_sched();
    return n;
}

weft_status_t register_params()
{
    const weft_mca_param_def_t defs[] = {
        {.name = "fault_malformed_to",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "-1",
         .help = "Fault injection for tests: once MPI_Init is done, send the given world rank one "
                 "fragment of every malformed kind (unknown type, truncated MATCH, ACK, FRAG, "
                 "PUT and FIN for unknown requests, a MATCH and an RGET from a source outside "
                 "the communicator). -1: never. Not for production use.",
         .level = 9,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr},
        {.name = "verbose",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "0",
         .help = "Verbosity of pml/ob1 (0-100). At 20 and above every message is traced: the "
                 "protocol the sender chose and the one that ran (eager immediate, prepared or "
                 "allocated; send/receive, buffered or RDMA pipeline; RDMA direct put or get) "
                 "with the rails it used, the protocol the receiver ran, and messages kept "
                 "unexpected.",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr},
        {.name = "send_pipeline_depth",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "16",
         .help = "Most FRAG fragments of one message handed to the BTLs and not yet completed "
                 "(the send/receive and RDMA pipelines), 1 to 1024.",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr},
        {.name = "max_rdma_per_request",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "4",
         .help = "Most RDMA-capable BTLs one message is striped over (RDMA direct put and get), "
                 "1 to 8.",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr},
        {.name = "max_send_per_range",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "4",
         .help = "Most BTLs the FRAG fragments of one message are striped over (by bandwidth), "
                 "1 to 8.",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr},
        {.name = "rcache_max_unused",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "64",
         .help = "With mpi_leave_pinned: most registrations kept for buffers no message uses "
                 "now (least recently used go first), 0 to 65536.",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr},
    };
    constexpr size_t n = sizeof defs / sizeof defs[0];
    weft_mca_param_t *h[n] = {};
    weft_status_t rc = weft_mca_param_register_table("pml", "ob1", defs, n, sizeof defs[0], h);
    p_fault_to = h[0];
    p_verbose = h[1];
    p_depth = h[2];
    p_max_rdma = h[3];
    p_max_send = h[4];
    p_rcache_unused = h[5];
    return rc;
}

weft_pml_module_t *init(int, int)
{
    mca::FrameworkBase *base = mca::framework_base("bml");
    mca::Component *bml_comp = nullptr;
    if (base->open() != WEFT_SUCCESS || base->select_one(bml_comp) != WEFT_SUCCESS)
        return nullptr;
    auto *bc = reinterpret_cast<const weft_bml_component_t *>(bml_comp->desc);
    P = new State;
    P->verbose = int(weft_mca_param_int(p_verbose));
    P->modules = weft::rt::btl_modules();
    if (!read_params()) {
        delete P;
        P = nullptr;
        return nullptr;
    }
    P->bml = bc->init(0, 0);
    if (!P->bml) {
        delete P;
        P = nullptr;
        return nullptr;
    }
    for (weft_btl_module_t *btl : weft::rt::btl_modules())
        P->bml->bml_add_btl(P->bml, btl);
    P->bml->bml_register(P->bml, tag_ob1, on_recv, nullptr);
    P->bml->bml_register_error(P->bml, on_error, nullptr);
    weft_progress_register(progress_fn);
    P->base = weft_pml_module_t{
        .struct_size = sizeof(weft_pml_module_t),
        .pml_flags = 0,
        .pml_max_contextid = UINT32_MAX,
        .pml_max_tag = INT32_MAX,
        .pml_add_procs = add_procs,
        .pml_del_procs = del_procs,
        .pml_enable = enable,
        .pml_progress = progress,
        .pml_add_comm = add_comm,
        .pml_del_comm = del_comm,
        .pml_irecv_init = irecv_init,
        .pml_irecv = irecv,
        .pml_recv = recv,
        .pml_isend_init = isend_init,
        .pml_isend = isend,
        .pml_send = send,
        .pml_iprobe = iprobe,
        .pml_probe = probe,
        .pml_improbe = improbe,
        .pml_mprobe = mprobe,
        .pml_imrecv = imrecv,
        .pml_mrecv = mrecv,
        .pml_start = start,
        .pml_dump = dump,
        .pml_revoke_comm = revoke_comm,
    };
    return &P->base;
}

weft_status_t finalize()
{
    if (!P)
        return WEFT_SUCCESS;
    // Whatever is still queued must leave before the transports close.
    weft::rt::wait_until([] { return P->pending.empty(); });
    weft_progress_unregister(progress_fn);
    P->rcache->clear(); // registrations kept by leave_pinned, while the modules still exist
    P->bml->bml_finalize(P->bml);
    mca::framework_base("bml")->close();
    delete P;
    P = nullptr;
    return WEFT_SUCCESS;
}

weft_status_t query(int *priority, char *, size_t)
{
    *priority = 20;
    return WEFT_SUCCESS;
}

} // namespace weft::pml::ob1

extern "C" {
// The one symbol the component exports (it is built with -fvisibility=hidden, so that its
// own functions bind locally and inline across the hot paths).
__attribute__((visibility("default"))) extern const weft_pml_component_t mca_pml_ob1_component;
const weft_pml_component_t mca_pml_ob1_component = {
    .mca = {WEFT_MCA_COMPONENT_HEADER(weft_pml_component_t, "pml", WEFT_PML_ABI_MAJOR,
                                      WEFT_PML_ABI_MINOR, "ob1", 0, 1, 0),
            .register_params = weft::pml::ob1::register_params, .open = nullptr,
            .query = weft::pml::ob1::query, .close = nullptr},
    .init = weft::pml::ob1::init,
    .finalize = weft::pml::ob1::finalize,
};
}
