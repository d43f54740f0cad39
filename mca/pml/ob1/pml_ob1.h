// pml/ob1: matching and the eager and send/receive-pipeline protocols over
// the BML's rails. Wire format: README.md.
#ifndef WEFT_PML_OB1_H
#define WEFT_PML_OB1_H

#include "mpi_objects.h"

#include <bml/bml.h>
#include <pml/pml.h>

#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace weft::pml::ob1 {

// ---- wire headers (host byte order: every rank of a job is one architecture)
enum HdrType : uint8_t { hdr_match = 1, hdr_rndv = 2, hdr_ack = 3, hdr_frag = 4 };
constexpr uint8_t flag_sync = 1; // the sender waits for the match (MPI_Ssend)

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
    uint64_t send_id; // the sender's request, for the ACK
};

struct AckHdr {
    uint8_t type;
    uint8_t reserved[7];
    uint64_t send_id;
    uint64_t recv_id;
};

struct FragHdr {
    uint8_t type;
    uint8_t reserved[7];
    uint64_t recv_id;
    uint64_t offset;
};

// ---- requests
struct Request : weft_request {
    Request *next = nullptr; // in the posted queue
    Request *prev = nullptr;
    uint64_t id = 0;
    bool is_send = false;
    // the user's buffer
    char *buf = nullptr;
    size_t bytes = 0; // buffer capacity (recv) or message length (send)
    int src = -1;     // recv: the source asked for (may be ANY)
    weft_send_mode_t mode = WEFT_SEND_STANDARD;
    int dst = -1;
    // send state
    bool acked = false;
    uint64_t peer_recv_id = 0;
    size_t sent = 0; // bytes handed to the BTLs
    bool started_rndv = false;
    // recv state
    size_t total = 0;    // message length (may exceed bytes: truncation)
    size_t received = 0; // bytes of the message that arrived
    bool matched = false;
    // A datatype whose data is not count * size contiguous bytes travels packed: staging holds
    // the packed bytes (buf points at it), user_buf/count/dtype say where they come from (a
    // send packs at start) or go (a receive unpacks when it completes).
    std::vector<char> staging;
    char *user_buf = nullptr;
    size_t count = 0;
    weft_datatype *dtype = nullptr;
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
    int world_src;    // to answer
    std::string data; // the eager data, or a rendezvous's first part
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

} // namespace weft::pml::ob1

#endif
