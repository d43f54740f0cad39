// btl/tcp fragments: the descriptors btl_alloc hands out, the copies btl_sendi keeps until the
// peer acknowledges them, and the module's own ACK/BYE frames; with the pools they come from.
#ifndef WEFT_BTL_TCP_FRAG_H
#define WEFT_BTL_TCP_FRAG_H

#include "btl_tcp_wire.h"

#include <btl/btl.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace weft::btl::tcp {

class Module;
struct Endpoint;
class FragPool;
struct RdmaOp;

enum class FragKind : uint8_t {
    send,     // a descriptor from btl_alloc, completed through des_cbfunc
    sendi,    // a copy made by btl_sendi, handed back flagged SEND_FAILED if it may be lost
    control,  // an ACK or BYE frame of the module's own
    rdma_put, // a put's frame (btl_tcp_rdma.h): completes the put through `rdma`
    internal  // a get's request or answer: nothing to call back
};

enum class FragState : uint8_t {
    free,   // in its pool
    loaned, // the caller's (between btl_alloc and btl_send/btl_free, or after completion)
    queued  // the module's: waiting to be written, or written and waiting for the ack
};

struct Frag {
    weft_btl_descriptor_t des;  // first: a descriptor pointer is a Frag pointer
    weft_btl_segment_t segment; // the fragment's own buffer (the PML's header, or everything)
    weft_btl_segment_t user;    // btl_prepare_src in place: the user's data, sent from there
    Module *module;
    FragPool *pool;
    Endpoint *endpoint;    // where it was sent
    unsigned char *buffer; // `capacity` bytes, 64-byte aligned; NULL for control frames
    size_t capacity;
    size_t written;      // bytes of the frame (header, payload, padding) on the wire
    uint64_t wire_end;   // once written: offset of its end in the connection's byte stream
    uint64_t written_ms; // once written: now_ms() then
    uint32_t seq;        // data frames, once the header is built
    RdmaOp *rdma;        // rdma_put: the put
    FragKind kind;
    FragState state;
    uint8_t frame_type; // wire::FrameType
    uint8_t tag;
    bool header_built; // header[] holds the wire header (built when writing starts)
    unsigned char header[wire::kFrameHeaderSize];
};
static_assert(std::is_standard_layout_v<Frag> && offsetof(Frag, des) == 0,
              "a weft_btl_descriptor_t pointer must convert to its Frag");

static_assert(offsetof(Frag, user) == offsetof(Frag, segment) + sizeof(weft_btl_segment_t),
              "segment and user are the descriptor's segment array");

inline Frag *frag_of(weft_btl_descriptor_t *des) { return reinterpret_cast<Frag *>(des); }

// Bytes of the frame's data: the own buffer's, then the user's.
inline size_t data_bytes(const Frag *f) { return f->segment.seg_len + f->user.seg_len; }

// Bytes of the whole frame on the wire.
inline size_t frame_bytes(const Frag *f)
{
    return f->frame_type == wire::kData ? wire::frame_size(data_bytes(f)) : wire::kFrameHeaderSize;
}

// Fragments of one buffer size, made on demand up to `max` (0: no limit), never shrunk.
class FragPool {
  public:
    FragPool(Module *module, size_t capacity, size_t max)
        : module_(module), capacity_(capacity), max_(max)
    {
    }
    FragPool(const FragPool &) = delete;
    FragPool &operator=(const FragPool &) = delete;
    ~FragPool();

    // A fragment in state loaned with its fields reset, or NULL when `max` are out or memory
    // is short.
    Frag *get();
    void put(Frag *f);
    size_t capacity() const { return capacity_; }
    size_t in_use() const { return all_.size() - free_.size(); }

  private:
    Module *module_;
    size_t capacity_;
    size_t max_;
    std::vector<Frag *> free_;
    std::vector<Frag *> all_;
};

} // namespace weft::btl::tcp

#endif
