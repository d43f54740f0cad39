// pml/ob1: matching, the eager protocols and the rendezvous protocols of ob1-protocols.rst over
// the BML's rails. Wire format: README.md. The matching, eager and module code is in
// pml_ob1_component.cc; the rendezvous protocols (send/receive, RDMA direct put and get, RDMA
// pipeline, buffered pipeline) in pml_ob1_rndv.cc.
#ifndef WEFT_PML_OB1_H
#define WEFT_PML_OB1_H

#include "layout.h"
#include "mpi_objects.h"
#include "pml_ob1_rcache.h"

#include <bml/bml.h>
#include <pml/pml.h>

#include <array>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace weft::pml::ob1 {

// ---- wire headers (host byte order: every rank of a job is one architecture)
enum HdrType : uint8_t {
    hdr_match = 1, // an eager message
    hdr_rndv = 2,  // the first fragment of a rendezvous message
    hdr_ack = 3,   // receiver -> sender: matched; send [send_offset, total) as FRAGs
    hdr_frag = 4,  // sender -> receiver: a piece of a rendezvous message
    hdr_rget = 5,  // a rendezvous offering the sender's registered buffer for RDMA reads
    hdr_put = 6,   // receiver -> sender: write this piece into my registered buffer
    hdr_fin = 7    // an RDMA transfer of a piece is done (to whoever did not do it)
};
// MatchHdr::flags
constexpr uint8_t flag_sync = 1;   // the sender waits for the match (MPI_Ssend)
constexpr uint8_t flag_contig = 2; // the sender's buffer is contiguous (RDMA pipeline offered)
constexpr uint8_t flag_pin = 4;    // RDMA direct put offered: answer with PUTs for all of it

// 16 bytes, so that a small message with btl/sm's 8-byte cell header and 8 bytes of data takes
// half a cache line. The sequence number wraps at 2^16: messages of one pair are at most a few
// fragments out of order (several rails), never 32768.
struct MatchHdr {
    uint8_t type;
    uint8_t flags;
    uint16_t seq; // per (communicator, sender, receiver) sequence number, modulo 2^16
    uint32_t cid;
    int32_t src; // sender's rank in the communicator
    int32_t tag;
};
static_assert(sizeof(MatchHdr) == 16, "part of the wire format");

struct RndvHdr {
    MatchHdr match;
    uint64_t total;   // bytes of the whole message
    uint64_t send_id; // the sender's request, for the answers
};

// A registered piece of a buffer, in RGET and PUT headers; `hlen` bytes of the BTL's
// registration handle follow, then zeros up to a multiple of 8.
struct RdmaSeg {
    uint64_t offset; // in the message
    uint64_t length;
    uint64_t addr; // where the piece starts in the registering process
    uint32_t rail; // rail_key() of the BTL module that registered it
    uint32_t hlen;
};

struct RgetHdr {
    RndvHdr rndv;
    uint32_t nsegs; // RdmaSegs follow, covering [0, total) in order
    uint32_t reserved;
};

struct AckHdr {
    uint8_t type;
    uint8_t reserved[7];
    uint64_t send_id;
    uint64_t recv_id;
    uint64_t send_offset; // the sender sends [send_offset, total) as FRAGs
};

struct FragHdr {
    uint8_t type;
    uint8_t reserved[7];
    uint64_t recv_id;
    uint64_t offset;
};

struct PutHdr {
    uint8_t type;
    uint8_t reserved[7];
    uint64_t send_id;
    uint64_t recv_id; // for the FIN
    RdmaSeg seg;      // the receiver's piece
};

struct FinHdr {
    uint8_t type;
    uint8_t reserved[3];
    int32_t status; // WEFT_SUCCESS or the error of the transfer
    uint64_t id;    // the request at the FIN's receiver
    uint64_t length;
};

constexpr size_t kMaxRails = 8;    // rails striped over per message
constexpr size_t kMaxHandle = 256; // bytes of a registration handle on the wire

// The protocols, as the trace names them.
enum class Proto : uint8_t {
    immediate,
    prepared,
    allocated,
    pipeline,
    buffered,
    rdma_put,
    rdma_get,
    rdma_pipeline
};
const char *proto_name(Proto p);

// One BTL module to one peer.
struct Rail {
    weft_btl_module_t *btl = nullptr;
    weft_btl_endpoint_t *ep = nullptr;
    double weight = 1.0;
    uint32_t flags = 0;
    uint32_t key = 0; // rail_key(btl): the same module at the other end has the same key
    int index = 0;    // in State::modules
};

// What the send path needs of a peer, looked up once in add_procs (ob1 has no failover: a
// peer's rails do not change during the job).
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
};

// A byte range of a message still to be sent as FRAGs.
struct Range {
    size_t off;
    size_t end;
};

// ---- requests
struct Request : weft_request {
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
    std::shared_ptr<const dt::Layout> layout; // !dense: the type's layout (kept alive)
    dt::ConvState conv{};                     // !dense: for convertors over it
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
    std::vector<Range> frag_work; // in order (a vector: a request on the stack allocates nothing)
    std::array<size_t, kMaxRails> striped{}; // FRAG bytes given to each send rail
    uint32_t rails_used = 0;                 // bit per State::modules index
    // recv state
    size_t total = 0;    // message length (may exceed bytes: truncation)
    size_t received = 0; // bytes of the message that arrived
    bool matched = false;
    int world_peer = -1; // recv: the sender's world rank once matched
    // both: registrations to give back at completion
    std::vector<RegCache::Entry *> regs;
};

// A message that arrived before its receive was posted (or a whole
// out-of-order fragment waiting for its turn).
struct Unexpected {
    int src;
    int tag;
    uint8_t type;
    uint8_t flags;
    uint64_t total;
    uint64_t send_id;
    int world_src;                    // to answer
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
class PostedQueue {
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

struct CommState {
    std::vector<uint16_t> send_seq;                    // next to each peer
    std::vector<uint16_t> recv_seq;                    // next expected from each peer
    std::vector<std::map<uint16_t, Unexpected>> ahead; // arrived early, per peer
    PostedQueue posted;
    std::list<Unexpected> unexpected;
};

struct Pending {
    int world_dst;
    bool eager; // on the eager rail (else round the send rails)
    std::string bytes;
};

// Communicators with a context id below this are found by index, the rest by hash.
constexpr uint32_t kDenseCids = 4096;

struct State {
    weft_pml_module_t base;
    std::vector<Peer> peers; // by world rank
    weft_bml_module_t *bml = nullptr;
    std::vector<weft_btl_module_t *> modules; // every BTL module, for rail indexes and names
    std::vector<weft_comm *> dense_comms;     // by cid, below kDenseCids
    std::unordered_map<uint32_t, weft_comm *> comms;
    // Fragments for communicators this process has not created yet.
    std::unordered_map<uint32_t, std::vector<std::string>> early;
    std::unordered_map<uint64_t, Request *> live;
    uint64_t next_id = 1;
    std::deque<Pending> pending;
    // Rendezvous sends with FRAGs still to hand to the rails (no room, or the pipeline is
    // send_pipeline_depth deep): they go on from the user's buffer as room appears.
    std::list<Request *> sched;
    // Communicators whose references released requests held: dropped by the next progress.
    std::vector<weft_comm *> comm_releases;
    std::unique_ptr<RegCache> rcache;
    size_t malformed = 0;
    size_t lost = 0; // btl_sendi fragments a failed link handed back
    int verbose = 0; // pml_ob1_verbose: >= 20 traces every message's protocol
    // parameters
    int send_pipeline_depth = 0;
    size_t max_rdma_per_request = 0;
    size_t max_send_per_range = 0;
    bool leave_pinned = false;
};

extern State *P;

// ---- shared between the files (pml_ob1_component.cc)
void trace(const std::string &line);
void malformed(const std::string &what);
uint64_t track(Request *r);
void untrack(Request *r);
void complete(Request *r);
void finish_recv(Request *r);
weft_status_t send_bytes(int world, const void *hdr, size_t hlen, const void *data, size_t dlen,
                         bool eager);
// Store n packed bytes at message offset `offset` of receive r (clipped to its buffer).
void recv_store(Request *r, size_t offset, const char *data, size_t n);
void recv_store(Request *r, size_t offset, const Payload &data);
// Pack n packed bytes at message offset `offset` of send r into dst.
void send_load(Request *r, size_t offset, char *dst, size_t n);
std::string rails_text(uint32_t mask);

// ---- the rendezvous protocols (pml_ob1_rndv.cc)
uint32_t rail_key(weft_btl_module_t *btl);
// Start a message that does not go eagerly: pick the protocol and send its first header.
weft_status_t start_rndv(Request *r, const MatchHdr &m, int world);
// A rendezvous (RNDV or RGET) matched receive r: accept the sender's protocol or fall back.
void rndv_matched(Request *r, const Unexpected &u);
void handle_ack(const char *msg, size_t len);
void handle_frag(const char *msg, size_t len, const weft_btl_segment_t *more, size_t nmore);
void handle_put(const char *msg, size_t len);
void handle_fin(const char *msg, size_t len);
int progress_sched();
// Give back a finished request's registrations.
void release_regs(Request *r);

} // namespace weft::pml::ob1

#endif
