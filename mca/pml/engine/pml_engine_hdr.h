// pml/engine: the wire format every ob1-style PML speaks (README.md has the table). The headers
// are plain structs in host byte order: every rank of a job is one architecture.
#ifndef WEFT_PML_ENGINE_HDR_H
#define WEFT_PML_ENGINE_HDR_H

#include <btl/btl.h>

#include <cstddef>
#include <cstdint>

namespace weft::pml::engine {

// The BTL tag of every engine fragment (one PML runs in a job).
constexpr weft_btl_tag_t kTag = WEFT_BTL_TAG_PML_FIRST;

enum HdrType : uint8_t {
    hdr_match = 1,         // an eager message
    hdr_rndv = 2,          // the first fragment of a rendezvous message
    hdr_ack = 3,           // receiver -> sender: matched; send [send_offset, total) as FRAGs
    hdr_frag = 4,          // sender -> receiver: a piece of a rendezvous message
    hdr_rget = 5,          // a rendezvous offering the sender's registered buffer for RDMA reads
    hdr_put = 6,           // receiver -> sender: write this piece into my registered buffer
    hdr_fin = 7,           // an RDMA transfer of a piece is done (to whoever did not do it)
    hdr_fence = 8,         // sent on a rail just removed: everything before it has arrived
    hdr_fence_ack = 9,     // receiver -> sender: the fence arrived; matching may go on
    hdr_revoke = 10,       // a communicator was revoked (ULFM): every member passes it on once
    hdr_revoke_nack = 11,  // receiver -> sender: a rendezvous for a revoked communicator refused
    hdr_cancel = 12,       // sender -> receiver: take this message back if it is not matched
    hdr_cancel_reply = 13, // receiver -> sender: whether it was taken back
    // Types from here on belong to the policy (bfo's restart notices): the engine hands them
    // to Policy::handle_extra.
    hdr_policy_first = 16
};
// MatchHdr::flags
constexpr uint8_t flag_sync = 1;   // the sender waits for the match (MPI_Ssend)
constexpr uint8_t flag_contig = 2; // the sender's buffer is contiguous (RDMA pipeline offered)
constexpr uint8_t flag_pin = 4;    // RDMA direct put offered: answer with PUTs for all of it

// 16 bytes, so that a small message with btl/sm's 8-byte cell header and 8 bytes of data takes
// half a cache line. The sequence number wraps at 2^16; README.md says why a window of half
// that tells a duplicate (behind) from a message that overtook others (ahead) without aliasing.
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
    uint32_t first; // then the message's first bytes (to a module whose receivers choose: the
                    // receiver reads the rest, or asks for it as FRAGs, as a RNDV's would)
};

// AckHdr::stores: how the sender's BTL writes the FRAGs asked for (btl_prepare_src's flags).
enum AckStores : uint8_t { stores_btl = 0, stores_cached = 1, stores_streaming = 2 };
// AckHdr::offers and FinHdr::offers, bits (pml_engine_choose.h): offers_yes, the receiver asks
// for gets to be offered for messages of this one's size class in streams (Chooser::asking);
// offers_next, for the next message of that class alone or exchanged (Chooser::asking_next);
// offers_stream_get, its best way for the class in streams is a get: offer every message of a
// stream, without its first bytes; offers_alone_get, its best alone or exchanged is a get: the
// offers go without their first bytes (Chooser::told).
enum AckOffers : uint8_t {
    offers_no = 0,
    offers_yes = 1,
    offers_next = 2,
    offers_stream_get = 4,
    offers_alone_get = 8
};

struct AckHdr {
    uint8_t type;
    uint8_t attempt; // of a restarted transfer (a failover policy's; 0 otherwise)
    uint8_t stores;  // AckStores: the receiver's choice (a BTL with WEFT_BTL_FLAG_STORES_CHOICE)
    uint8_t offers;  // AckOffers: the receiver asks for gets to be offered (a BTL whose receivers
                     // choose), for messages of this one's size class in streams or the next alone
    uint8_t reserved[4];
    uint64_t send_id;
    uint64_t recv_id;
    uint64_t send_offset; // the sender sends [send_offset, total) as FRAGs
};

struct FragHdr {
    uint8_t type;
    uint8_t attempt; // as in AckHdr
    uint8_t reserved[6];
    uint64_t recv_id;
    uint64_t offset;
};

struct PutHdr {
    uint8_t type;
    uint8_t attempt; // Policy::attempt() of the receive
    uint8_t reserved[6];
    uint64_t send_id;
    uint64_t recv_id; // for the FIN
    RdmaSeg seg;      // the receiver's piece
};

struct FinHdr {
    uint8_t type;
    uint8_t offers; // a receiver's: as AckHdr::offers (0 from a sender)
    uint8_t reserved[2];
    int32_t status; // WEFT_SUCCESS or the error of the transfer
    uint64_t id;    // the request at the FIN's receiver
    uint64_t length;
};

// A revoke notice: the communicator's context id and epoch (RevokeHdr.epoch: a later use of
// the same id would carry another; Weft never reuses an id in a process, so it is 0 today).
struct RevokeHdr {
    uint8_t type;
    uint8_t reserved[3];
    uint32_t cid;
    uint32_t epoch;
    uint32_t reserved2;
};
static_assert(sizeof(RevokeHdr) == 16, "part of the wire format");
// A rendezvous (RNDV or RGET) that arrived for, or was waiting in, a revoked communicator (or,
// on a collective or internal tag, one whose collectives a failure revoked): its sender's
// request is told, and ends with `status` (WEFT_ERR_REVOKED, WEFT_ERR_PROC_FAILED).
struct RevokeNackHdr {
    uint8_t type;
    uint8_t reserved[3];
    int32_t status;
    uint64_t send_id;
};
static_assert(sizeof(RevokeNackHdr) == 16, "part of the wire format");

// MPI_Cancel of a send: the receiver takes the message (communicator, sender, ordinal) out of
// its unexpected queue if it is there, unmatched, and answers either way. A message not found
// (matched already, or not arrived yet: it will be matched normally) is not cancelled.
struct CancelHdr {
    uint8_t type;
    uint8_t reserved[3];
    uint32_t cid;
    int32_t src; // its sender's rank in the communicator
    uint32_t reserved2;
    uint64_t ordinal;   // the message's place among those src sent here on cid, from 0 (the
                        // sequence number, which wraps at 2^16, would not name one message)
    uint64_t cancel_id; // the sender's, for the reply
};
static_assert(sizeof(CancelHdr) == 32, "part of the wire format");
struct CancelReplyHdr {
    uint8_t type;
    uint8_t cancelled; // 1: taken back, never to be matched; 0: it is (or will be) matched
    uint8_t reserved[6];
    uint64_t cancel_id;
};
static_assert(sizeof(CancelReplyHdr) == 16, "part of the wire format");

// The fragments that carry a sequence number and are matched in its order.
inline bool matching_type(uint8_t type)
{
    return type == hdr_match || type == hdr_rndv || type == hdr_rget;
}

// A rail change's fence (README.md, "Sequence numbers and the window", rule 4), and its answer.
struct FenceHdr {
    uint8_t type;
    uint8_t reserved[3];
    uint32_t id; // the sender's number for this fence
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

inline const char *proto_name(Proto p)
{
    switch (p) {
    case Proto::immediate: return "eager immediate (btl_sendi)";
    case Proto::prepared: return "eager prepared (btl_prepare_src)";
    case Proto::allocated: return "eager allocated (btl_alloc)";
    case Proto::pipeline: return "send/receive pipeline";
    case Proto::buffered: return "buffered pipeline";
    case Proto::rdma_put: return "RDMA direct put";
    case Proto::rdma_get: return "RDMA direct get";
    case Proto::rdma_pipeline: return "RDMA pipeline";
    }
    return "?";
}

} // namespace weft::pml::engine

#endif
