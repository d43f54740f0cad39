// pml/engine: the engine's objects: rails, peers, requests, unexpected messages, per
// communicator matching state. Templates take the request type, which depends on the policy.
#ifndef WEFT_PML_ENGINE_TYPES_H
#define WEFT_PML_ENGINE_TYPES_H

#include "pml_engine_choose.h"
#include "pml_engine_hdr.h"
#include "pml_engine_policy.h"
#include "pml_engine_rcache.h"

#include <bml/bml.h>
#include <weft/convertor.h>
#include <weft/request.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace weft::pml::engine {

// One BTL module to one peer.
struct Rail {
    weft_btl_module_t *btl = nullptr;
    weft_btl_endpoint_t *ep = nullptr;
    double weight = 1.0;
    uint32_t flags = 0;
    uint32_t key = 0; // rail_key(btl): the same module at the other end has the same key
    int index = 0;    // in State::modules
};

// What the send path needs of a peer: a copy of its BML lists, made in add_procs and made
// anew whenever the BML's lists for the peer change (a rail removed), so that the hot path
// reads no BML state.
class Chooser;

struct Peer {
    weft_btl_module_t *eager_btl = nullptr;
    weft_btl_endpoint_t *eager_ep = nullptr;
    size_t eager_limit = 0;
    size_t rndv_first = 0;             // bytes a RNDV fragment may take, header included
    bool send_inplace = false;         // the eager rail's prepare_src may send from user memory
    std::vector<Rail> send;            // the send list (FRAGs)
    std::vector<Rail> rdma;            // the RDMA list
    size_t min_rdma_pipeline_size = 0; // largest over the RDMA list
    size_t pipeline_send_length = 0;   // largest over the RDMA list
    size_t pipeline_frag_size = 0;     // smallest over the RDMA list
    bool failed = false;               // the process failed (fault tolerance): no more traffic
    Chooser *chooser = nullptr;        // rdma[0]'s module's, if its receivers choose (chooser_for)
    bool stores_choice = false;        // and choose the pipeline's stores (STORES_CHOICE)
};

// At most N elements, kept where the object is (no allocation): the lists of rails and pieces
// of one message, made on every rendezvous. Only the elements in use are written or copied
// (eight Segs are 512 bytes, which a value-initialised array cleared on every RGET).
template <class T, size_t N> class FixedVec {
    static_assert(std::is_trivially_copyable_v<T>);

  public:
    FixedVec() noexcept {} // (not "= default": FixedVec{} would clear the whole array)
    FixedVec(const FixedVec &o) noexcept : n_(o.n_) { std::copy_n(o.v_.data(), n_, v_.data()); }
    FixedVec &operator=(const FixedVec &o) noexcept
    {
        n_ = o.n_;
        std::copy_n(o.v_.data(), n_, v_.data());
        return *this;
    }
    FixedVec(std::initializer_list<T> items)
    {
        for (const T &x : items)
            push_back(x);
    }
    // false (and nothing added) when full.
    bool push_back(const T &x)
    {
        if (n_ == N)
            return false;
        v_[n_++] = x;
        return true;
    }
    size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    bool full() const { return n_ == N; }
    void clear() { n_ = 0; }
    T &operator[](size_t i) { return v_[i]; }
    const T &operator[](size_t i) const { return v_[i]; }
    T *begin() { return v_.data(); }
    T *end() { return v_.data() + n_; }
    const T *begin() const { return v_.data(); }
    const T *end() const { return v_.data() + n_; }

  private:
    std::array<T, N> v_; // [0, n_) in use; the rest is never read
    size_t n_ = 0;
};

// The requests peers may name by the id their headers carry, found in constant time without an
// allocation per request: an id is (generation << 32) | slot, and a slot's generation grows each
// time it is reused, so that an id of an earlier request never names a later one. Any id from
// the wire is safe to look up.
template <class R> class LiveTable {
  public:
    uint64_t add(R *r)
    {
        uint32_t slot;
        if (!free_.empty()) {
            slot = free_.back();
            free_.pop_back();
        } else {
            slot = uint32_t(slots_.size());
            slots_.push_back({nullptr, 0});
        }
        Slot &s = slots_[slot];
        s.req = r;
        if (++s.gen == 0)
            s.gen = 1; // an id is never 0 ("none")
        return (uint64_t(s.gen) << 32) | slot;
    }
    R *find(uint64_t id) const
    {
        const uint32_t slot = uint32_t(id);
        return slot < slots_.size() && slots_[slot].gen == uint32_t(id >> 32) ? slots_[slot].req
                                                                              : nullptr;
    }
    void remove(uint64_t id)
    {
        const uint32_t slot = uint32_t(id);
        if (slot < slots_.size() && slots_[slot].gen == uint32_t(id >> 32) && slots_[slot].req) {
            slots_[slot].req = nullptr;
            free_.push_back(slot);
        }
    }
    size_t size() const { return slots_.size() - free_.size(); }
    // Call f(request) for every request in the table.
    template <class F> void for_each(F f) const
    {
        for (const Slot &s : slots_)
            if (s.req)
                f(s.req);
    }

  private:
    struct Slot {
        R *req;
        uint32_t gen;
    };
    std::vector<Slot> slots_;
    std::vector<uint32_t> free_;
};

using RailList = FixedVec<const Rail *, kMaxRails>;
using Cuts = FixedVec<size_t, kMaxRails + 1>;

// A byte range of a message still to be sent as FRAGs.
struct Range {
    size_t off;
    size_t end;
};

// ---- requests
// Policy::RequestExtra is the policy's own per-request state (empty, and no bytes, for ob1).
template <class Policy> struct Request : weft_request {
    Request *next = nullptr; // in the posted queue
    Request *prev = nullptr;
    uint64_t id = 0;
    bool is_send = false;
    // the user's buffer: `bytes` packed bytes of (buf, count, dtype)
    char *buf = nullptr;
    size_t bytes = 0; // buffer capacity (recv) or message length (send)
    int src = -1;     // recv: the source asked for (may be ANY)
    weft_send_mode_t mode = WEFT_SEND_STANDARD;
    int dst = -1;
    // A datatype that is not count * size contiguous bytes moves through the datatype engine,
    // fragment by fragment, straight from and into the user's buffer.
    bool dense = true;
    weft_datatype_t *dtype = nullptr; // !dense: the type, retained while the request uses it
    size_t count = 0;
    // send state
    Proto chosen = Proto::pipeline, ran = Proto::pipeline;
    bool answered = false;      // the receiver matched (ACK, PUT or FIN arrived)
    bool sched_busy = false;    // being scheduled: callbacks must not complete it
    bool queued = false;        // in State::sched
    bool frag_fallback = false; // pieces offered for RDMA went as FRAGs
    bool holds_comm = false;    // a reference to comm (requests made by make())
    uint64_t peer_recv_id = 0;
    size_t done_bytes = 0; // bytes whose transfer finished (sent, put, or FIN'd)
    int frags_inflight = 0;
    int rdma_inflight = 0;
    int rndv_world = -1; // counted in flow(rndv_world).sends until untracked
    // MPI_Cancel of a send (cancel_send): its message's place among those sent to its peer on
    // its communicator (CommState::sent_total) once it has one (sent), whether a CANCEL awaits
    // its reply (the request completes only after it), and whether the transfer itself
    // finished meanwhile.
    uint64_t ordinal = 0;
    bool sent = false;
    bool cancel_pending = false;
    bool done_in_cancel = false;
    uint64_t cancel_id = 0;  // State::cancels
    uint32_t rails_used = 0; // bit per State::modules index
    // send: the chooser of the module a get was offered over (a receiver that chooses), told
    // at the answer whether the receiver took it (an offer alone); and whether it was in a
    // stream.
    Chooser *offered_by = nullptr;
    bool offered_stream = false;
    // send: the chooser of a module whose receivers choose, told what the peer's receiver asks
    // for in its answer (Chooser::told), for an offer or a RNDV.
    Chooser *told_by = nullptr;
    // recv state: what a rendezvous receive writes and reads from its match to its end, in one
    // cache line (a window of receives posted before their messages come is out of the L1 by
    // then: each further line was a miss a message).
    alignas(64) size_t total = 0; // message length (may exceed bytes: truncation)
    size_t received = 0;          // bytes of the message that arrived
    uint64_t peer_send_id = 0;    // recv: the sender's request, once matched
    // recv: the way the receiver chose (pml_engine_choose.h), measured at completion while
    // chooser is set.
    Chooser *chooser = nullptr;
    uint64_t choose_ns = 0;
    Chooser::Ticket ticket;
    int world_peer = -1; // recv: the sender's world rank once matched
    // recv: its flow's `started` once it entered: another of the peer's rendezvous messages
    // that started while it was under way makes its time no measure of a message alone.
    uint32_t flow_mark = 0;
    bool matched = false;
    bool rndv_recv = false; // recv: matched a rendezvous (RNDV or RGET)
    bool in_flow = false;   // recv: a RNDV over such a module, counted in its flow's active
                            // (until rndv_done)
    Case way_case = Case::alone;
    // recv: how this receiver saw the rendezvous (offers_byte): 0 in a stream (or it did not
    // choose), 1 alone, 2 exchanged.
    uint8_t seen = 0;
    uint8_t stores = 0; // AckStores: how the receiver asked its FRAGs to be written (both)
    // both: registrations to give back at completion
    std::vector<RegCache::Entry *> regs;
    [[no_unique_address]] typename Policy::RequestExtra extra;
    // Last, the state that only large or non-contiguous messages use.
    weft_convertor_state_t conv{}; // !dense: for convertors over (buf, count, dtype)
    std::vector<Range> frag_work;  // in order (a vector: a request on the stack allocates nothing)
    std::array<size_t, 32> striped{}; // FRAG bytes given to each rail, by Rail::index
};

// A message that arrived before its receive was posted (or a whole
// out-of-order fragment waiting for its turn).
struct Unexpected {
    int src;
    int tag;
    uint8_t type;
    uint8_t flags;
    uint16_t seq;
    uint64_t total;
    uint64_t send_id;
    int world_src;                    // to answer
    uint64_t arrival = 0;             // its place among the communicator's unexpected ones
    uint64_t ordinal = 0;             // CommState::arrived_total when it came in order
    weft_btl_module_t *via = nullptr; // the module it came in on
    std::string data;                 // the eager data, or a rendezvous's first part
    std::string rdma;                 // RGET: the segment list (RdmaSegs with their handles)
};

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
    void append_to(std::string &out) const
    {
        out.append(first, first_len);
        for (size_t i = 0; i < nmore; ++i)
            out.append(static_cast<const char *>(more[i].seg_addr), more[i].seg_len);
    }
};

// Posted receives in posting order, linked through Request::next/prev (no allocation).
template <class Request> class PostedQueue {
  public:
    bool empty() const { return head_ == nullptr; }
    Request *front() const { return head_; }
    void push_back(Request *r)
    {
        r->next = nullptr;
        r->prev = tail_;
        (tail_ ? tail_->next : head_) = r;
        tail_ = r;
    }
    void erase(Request *r)
    {
        (r->prev ? r->prev->next : head_) = r->next;
        (r->next ? r->next->prev : tail_) = r->prev;
        r->next = r->prev = nullptr;
    }
    bool contains(const Request *r) const
    {
        for (const Request *q = head_; q; q = q->next)
            if (q == r)
                return true;
        return false;
    }
    size_t size() const
    {
        size_t n = 0;
        for (const Request *q = head_; q; q = q->next)
            ++n;
        return n;
    }

  private:
    Request *head_ = nullptr;
    Request *tail_ = nullptr;
};

template <class Request> struct CommState {
    std::vector<uint16_t> send_seq;                    // next to each peer
    std::vector<uint16_t> recv_seq;                    // next expected from each peer
    std::vector<std::map<uint16_t, Unexpected>> ahead; // arrived early, per peer
    // Matching messages sent to and matched in order from each peer, counted in full (the
    // sequence numbers wrap at 2^16): a cancel names its message by this count.
    std::vector<uint64_t> sent_total;
    std::vector<uint64_t> arrived_total;
    PostedQueue<Request> posted;
    // Unexpected messages per source, each in arrival order: a receive from one source looks
    // at that source's only, however far others have run ahead (an ANY_SOURCE receive takes
    // the earliest match of all by `arrival`).
    std::vector<std::list<Unexpected>> unexpected;
    uint64_t arrivals = 0;
    bool coll_revoked = false; // a member failed: the library's own tags are refused (ULFM)
    size_t unexpected_count() const
    {
        size_t n = 0;
        for (const auto &q : unexpected)
            n += q.size();
        return n;
    }
};

// A copy of a fragment the rails had no room for, sent again from progress.
template <class Request> struct Pending {
    int world_dst;
    bool eager; // on the eager rail (else round the send rails)
    Frag kind;
    uint64_t owner_id; // the request it belongs to (by id: it may end meanwhile), or 0
    std::string bytes;
};

// A peer's eager rail was removed while it may still hold matching fragments to the peer: a
// FENCE goes down that rail, and new matching fragments to the peer wait until it is
// acknowledged, or until the old rail reports that it failed (README.md, "Sequence numbers and
// the window", rule 4).
struct Fence {
    int world;
    weft_btl_module_t *btl; // the removed rail
    weft_btl_endpoint_t *ep;
    uint32_t id;
    bool sent; // handed to the rail (else it had no room yet)
};

// Communicators with a context id below this are found by index, the rest by hash.
constexpr uint32_t kDenseCids = 4096;

} // namespace weft::pml::engine

#endif
