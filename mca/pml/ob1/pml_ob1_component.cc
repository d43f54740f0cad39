// pml/ob1: point-to-point messaging with MPI matching semantics.
//
// Protocols (see ../../../../shared seeds, ob1-protocols.rst, and README.md):
//   eager     MATCH header + the whole message in one fragment, for messages
//             that fit the eager rail's eager limit (not for MPI_Ssend), in
//             one of three ways, chosen as the protocol description says:
//             immediate (btl_sendi packs header and data in one step),
//             prepared (btl_prepare_src, which may send from the user's
//             buffer in place; completes on the BTL's callback) and
//             allocated (btl_alloc, then the PML packs);
//   pipeline  RNDV header + the first part; once the receiver matched it, it
//             answers ACK and the sender streams the rest as FRAG fragments
//             of the send rail's max_send_size (the send/receive pipeline).
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

namespace {

constexpr weft_btl_tag_t tag_ob1 = WEFT_BTL_TAG_PML_FIRST;

struct Pending {
    int world_dst;
    bool eager; // on the eager rail (else round the send rails)
    std::string bytes;
};

// What the send path needs of a peer, looked up once in add_procs (ob1 has
// no failover: a peer's rails do not change during the job).
struct Peer {
    weft_btl_module_t *eager_btl = nullptr;
    weft_btl_endpoint_t *eager_ep = nullptr;
    size_t eager_limit = 0;
    size_t max_send = 0;
    bool send_inplace = false; // the eager rail's prepare_src may send from user memory
};

// The eager protocols, and the pipeline, as the trace names them.
enum class Proto { immediate, prepared, allocated, pipeline };
const char *proto_name(Proto p)
{
    switch (p) {
    case Proto::immediate: return "eager immediate (btl_sendi)";
    case Proto::prepared: return "eager prepared (btl_prepare_src)";
    case Proto::allocated: return "eager allocated (btl_alloc)";
    case Proto::pipeline: return "send/receive pipeline (RNDV)";
    }
    return "?";
}

// Messages up to this size take the immediate protocol when the rail has btl_sendi,
// before the prepared one is considered (ob1-protocols.rst).
constexpr size_t kImmediateMax = 256;
// Communicators with a context id below this are found by index, the rest by hash.
constexpr uint32_t kDenseCids = 4096;

struct State {
    weft_pml_module_t base;
    std::vector<Peer> peers; // by world rank
    weft_bml_module_t *bml = nullptr;
    std::vector<weft_comm *> dense_comms; // by cid, below kDenseCids
    std::unordered_map<uint32_t, weft_comm *> comms;
    // Fragments for communicators this process has not created yet.
    std::unordered_map<uint32_t, std::vector<std::string>> early;
    std::unordered_map<uint64_t, Request *> live;
    uint64_t next_id = 1;
    std::deque<Pending> pending;
    // Acknowledged rendezvous sends whose fragments the rails had no room for yet: they go on
    // from the user's buffer as room appears (no copy), in order.
    std::deque<Request *> rest;
    size_t malformed = 0;
    size_t lost = 0; // btl_sendi fragments a failed link handed back
    int verbose = 0; // pml_ob1_verbose: >= 20 traces every message's protocol
};

State *P;

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

size_t max_send(int world)
{
    return size_t(world) < P->peers.size() ? P->peers[size_t(world)].max_send : 0;
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

// Point r's transfers at a packed copy when its datatype needs one.
void stage(Request *r, void *buf, size_t count, weft_datatype *dtype)
{
    r->user_buf = static_cast<char *>(buf);
    r->count = count;
    r->dtype = dtype;
    if (dtype->dense || r->bytes == 0) {
        r->staging.clear();
        return;
    }
    r->staging.resize(r->bytes);
    r->buf = r->staging.data();
}

void finish_recv(Request *r)
{
    if (!r->staging.empty() && r->dtype && r->dtype->layout)
        weft::dt::unpack(*r->dtype->layout, r->user_buf, r->count, 0, r->buf,
                         std::min(r->total, r->bytes));
    r->status.count = std::min(r->total, r->bytes);
    r->status.error = r->total > r->bytes ? WEFT_ERR_TRUNCATE : WEFT_SUCCESS;
    complete(r);
}

void deliver(Request *r, weft_comm *comm, const Unexpected &u)
{
    r->matched = true;
    r->status.source = u.src;
    r->status.tag = u.tag;
    r->total = u.total;
    r->received = u.data.size();
    if (r->buf && !u.data.empty())
        std::memcpy(r->buf, u.data.data(), std::min(u.data.size(), r->bytes));
    if (u.type == hdr_match) {
        finish_recv(r);
        return;
    }
    // Rendezvous: tell the sender where the rest goes.
    AckHdr ack{};
    ack.type = hdr_ack;
    ack.send_id = u.send_id;
    ack.recv_id = r->received < r->total ? track(r) : 0;
    send_bytes(comm->peer_group()->ranks[size_t(u.src)], &ack, sizeof ack, nullptr, 0, true);
    if (r->received >= r->total)
        finish_recv(r);
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

// The data of an arriving fragment: what follows the header in its first segment, then the
// further segments a BTL may deliver (btl/self hands over the sender's buffer in place).
struct Payload {
    const char *first;
    size_t first_len;
    const weft_btl_segment_t *more;
    size_t nmore;

    size_t size() const
    {
        size_t n = first_len;
        for (size_t i = 0; i < nmore; ++i)
            n += more[i].seg_len;
        return n;
    }
    // Copy the first max bytes (at most) into dst.
    void copy_to(char *dst, size_t max) const
    {
        size_t n = std::min(first_len, max);
        weft_copy(dst, first, n);
        for (size_t i = 0; i < nmore && n < max; ++i) {
            const size_t k = std::min(more[i].seg_len, max - n);
            std::memcpy(dst + n, more[i].seg_addr, k);
            n += k;
        }
    }
    void append_to(std::string &out) const
    {
        out.append(first, first_len);
        for (size_t i = 0; i < nmore; ++i)
            out.append(static_cast<const char *>(more[i].seg_addr), more[i].seg_len);
    }
};

void handle(const char *msg, size_t len, const weft_btl_segment_t *more, size_t nmore);

size_t header_size(uint8_t type)
{
    switch (type) {
    case hdr_match: return sizeof(MatchHdr);
    case hdr_rndv: return sizeof(RndvHdr);
    case hdr_ack: return sizeof(AckHdr);
    case hdr_frag: return sizeof(FragHdr);
    default: return 1;
    }
}

void handle_match_or_rndv(const char *msg, size_t len, const weft_btl_segment_t *more, size_t nmore)
{
    const bool rndv = static_cast<uint8_t>(msg[0]) == hdr_rndv;
    const size_t hlen = rndv ? sizeof(RndvHdr) : sizeof(MatchHdr);
    if (len < hlen)
        return malformed(std::string(rndv ? "RNDV" : "MATCH") + " shorter than its header");
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
            if (r->buf)
                data.copy_to(r->buf, std::min(n, r->bytes));
            finish_recv(r);
            return;
        }
    }
    if (P->verbose >= 20)
        trace("rank " + std::to_string(comm->rank) + " <- " + std::to_string(h.match.src) +
              " tag " + std::to_string(h.match.tag) + " cid " + std::to_string(comm->cid) + ": " +
              (rndv ? "RNDV" : "MATCH") + " kept until a receive matches it");
    Unexpected u;
    u.src = h.match.src;
    u.tag = h.match.tag;
    u.type = rndv ? hdr_rndv : hdr_match;
    u.flags = h.match.flags;
    data.append_to(u.data);
    u.total = rndv ? h.total : u.data.size();
    u.send_id = rndv ? h.send_id : 0;
    u.world_src = comm->peer_group()->ranks[size_t(u.src)];
    if (u.total < u.data.size())
        return malformed("RNDV whose first part is longer than the message");
    arrive(comm, h.match.seq, std::move(u));
}

void send_rest(Request *r);

void handle(const char *msg, size_t len, const weft_btl_segment_t *more, size_t nmore)
{
    if (len < 1)
        return malformed("empty fragment");
    switch (static_cast<uint8_t>(msg[0])) {
    case hdr_match:
    case hdr_rndv: handle_match_or_rndv(msg, len, more, nmore); return;
    case hdr_ack: {
        if (len != sizeof(AckHdr) || nmore)
            return malformed("ACK of " + std::to_string(len) + " bytes");
        AckHdr h;
        std::memcpy(&h, msg, sizeof h);
        auto it = P->live.find(h.send_id);
        if (it == P->live.end() || !it->second->is_send)
            return malformed("ACK for an unknown send");
        Request *r = it->second;
        r->acked = true;
        r->peer_recv_id = h.recv_id;
        send_rest(r);
        return;
    }
    case hdr_frag: {
        if (len < sizeof(FragHdr))
            return malformed("FRAG shorter than its header");
        FragHdr h;
        std::memcpy(&h, msg, sizeof h);
        auto it = P->live.find(h.recv_id);
        if (it == P->live.end() || it->second->is_send)
            return malformed("FRAG for an unknown receive");
        Request *r = it->second;
        const Payload data{msg + sizeof h, len - sizeof h, more, nmore};
        const size_t n = data.size();
        if (h.offset > r->total || n > r->total - h.offset)
            return malformed("FRAG past the end of its message");
        if (h.offset < r->bytes && r->buf)
            data.copy_to(r->buf + h.offset, std::min(n, r->bytes - size_t(h.offset)));
        r->received += n;
        if (r->received >= r->total)
            finish_recv(r);
        return;
    }
    default:
        return malformed("unknown header type " + std::to_string(static_cast<uint8_t>(msg[0])));
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

// After the receiver's ACK: stream the rest in FRAGs, then the send is done.
// Hand r's remaining fragments to the rails while they have room; true when every fragment is
// handed over (r is then complete) or the peer cannot be reached. *handed counts fragments.
bool send_rest_step(Request *r, int *handed = nullptr)
{
    const int world = r->comm->peer_group()->ranks[size_t(r->dst)];
    const size_t chunk = std::max<size_t>(max_send(world), sizeof(FragHdr) + 1) - sizeof(FragHdr);
    while (r->sent < r->bytes) {
        const size_t n = std::min(chunk, r->bytes - r->sent);
        FragHdr h{};
        h.type = hdr_frag;
        h.recv_id = r->peer_recv_id;
        h.offset = r->sent;
        const weft_status_t rc = try_send(world, &h, sizeof h, r->buf + r->sent, n, false);
        if (rc == WEFT_ERR_OUT_OF_RESOURCE)
            return false; // the rails are full: progress goes on later
        if (rc != WEFT_SUCCESS) {
            r->status.error = WEFT_ERR_UNREACH;
            break;
        }
        r->sent += n;
        if (handed)
            ++*handed;
    }
    complete(r);
    return true;
}

void send_rest(Request *r)
{
    // Behind sends already waiting for room: fragments of one peer go out in order.
    if (!P->rest.empty() || !send_rest_step(r))
        P->rest.push_back(r);
}

// Go on with the sends waiting for room, in order; stop at the first that still has none.
// Returns the fragments handed over: progress, for the waiters' idle logic.
int progress_rest()
{
    int n = 0;
    while (!P->rest.empty() && send_rest_step(P->rest.front(), &n))
        P->rest.pop_front();
    return n;
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
    weft_convertor_t cv;
    weft_convertor_init_contiguous(&cv, buf, bytes);
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
    rc = send_bytes(world, &h, sizeof h, buf, bytes, true);
    if (rc != WEFT_SUCCESS)
        return rc;
    if (r)
        complete(r);
    return WEFT_SUCCESS;
}

weft_status_t start_send(Request *r)
{
    // The data as it is now (a persistent send packs at each start).
    if (!r->staging.empty())
        weft::dt::pack(*r->dtype->layout, r->user_buf, r->count, 0, r->buf, r->bytes);
    r->complete = false;
    r->active = true;
    r->acked = false;
    r->sent = 0;
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
    if (P->verbose >= 20) [[unlikely]]
        trace_send(comm, r->dst, r->tag, r->bytes, Proto::pipeline, Proto::pipeline);
    RndvHdr h{};
    h.match = m;
    h.match.type = hdr_rndv;
    h.match.flags = r->mode == WEFT_SEND_SYNCHRONOUS ? flag_sync : 0;
    h.total = r->bytes;
    h.send_id = track(r);
    const size_t first = std::min(r->bytes, limit > sizeof h ? limit - sizeof h : 0);
    r->sent = first;
    return send_bytes(world, &h, sizeof h, r->buf, first, true);
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
    r->buf = static_cast<char *>(const_cast<void *>(buf));
    r->bytes = count * dtype->size;
    stage(r, const_cast<void *>(buf), count, dtype);
    if (send) {
        r->mode = mode;
        r->dst = peer;
        r->src = -1;
        r->acked = false;
        r->peer_recv_id = 0;
        r->sent = 0;
        r->started_rndv = false;
    } else {
        r->src = peer;
        r->dst = -1;
        r->total = 0;
        r->received = 0;
        r->matched = false;
    }
    return r;
}

// ---- the module's operations

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
            peer.max_send = info.max_send_size;
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
weft_status_t enable(weft_pml_module_t *, int on)
{
    if (on)
        return WEFT_SUCCESS;
    weft::rt::wait_until([] { return P->pending.empty() && P->rest.empty(); });
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
    r.buf = static_cast<char *>(buf);
    r.bytes = count * dtype->size;
    stage(&r, buf, count, dtype);
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

weft_mca_param_t *p_fault_to, *p_verbose;
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
}

int progress_fn()
{
    if (!fault_sent && p_fault_to)
        inject_faults();
    int n = progress_pending();
    if (!P->rest.empty()) [[unlikely]]
        n += progress_rest();
    return n;
}

weft_status_t register_params()
{
    const weft_mca_param_def_t defs[] = {
        {.name = "fault_malformed_to",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "-1",
         .help = "Fault injection for tests: once MPI_Init is done, send the given world rank one "
                 "fragment of every malformed kind (unknown type, truncated MATCH, ACK and FRAG "
                 "for unknown requests, a source outside the communicator). -1: never. Not for "
                 "production use.",
         .level = 9,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr},
        {.name = "verbose",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "0",
         .help = "Verbosity of pml/ob1 (0-100). At 20 and above every message is traced: the "
                 "protocol the sender chose and the one that ran (eager immediate, prepared or "
                 "allocated, send/receive pipeline), and messages kept unexpected.",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr},
    };
    weft_mca_param_t *h[2] = {};
    weft_status_t rc = weft_mca_param_register_table("pml", "ob1", defs, 2, sizeof defs[0], h);
    p_fault_to = h[0];
    p_verbose = h[1];
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

} // namespace

} // namespace weft::pml::ob1

extern "C" {
extern const weft_pml_component_t mca_pml_ob1_component;
const weft_pml_component_t mca_pml_ob1_component = {
    .mca = {WEFT_MCA_COMPONENT_HEADER(weft_pml_component_t, "pml", WEFT_PML_ABI_MAJOR,
                                      WEFT_PML_ABI_MINOR, "ob1", 0, 1, 0),
            .register_params = weft::pml::ob1::register_params, .open = nullptr,
            .query = weft::pml::ob1::query, .close = nullptr},
    .init = weft::pml::ob1::init,
    .finalize = weft::pml::ob1::finalize,
};
}
