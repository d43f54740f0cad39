// btl/sm: the shared segment, its layout (the wire format of this BTL) and the file that
// holds it.
//
// Every process of a host owns one segment, a file in btl_sm_segment_dir. It is made in two
// steps, because the runtime knows which processes share the host only after the modex:
//
//   init       the file holds only the header page (magic, cookie, state = init), and its
//              name goes into the modex;
//   add_procs  the owner grows it to its full layout, one receive ring per local rank of the
//              job (ring s carries what local rank s sends to the owner) and the pool of large
//              fragments the owner sends from, fills in the layout fields, and publishes
//              state = ready with a release store;
//   connected  each peer that maps the ready segment counts itself in `attached`; when every
//              other local rank has, the owner removes the file name, so that nothing is left
//              in /dev/shm even if processes are killed later (finalize removes it otherwise).
//
// Peers map the header page when they learn the name and the whole file once they see
// state = ready. A sender writes messages into its ring; the owner writes the ring's head.
// Everything read from another process's memory is checked against bounds this process
// recorded when it attached, so a corrupt segment cannot make it access memory outside the
// mapping.
#ifndef WEFT_BTL_SM_SEGMENT_H
#define WEFT_BTL_SM_SEGMENT_H

#include <weft/status.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace weft::btl::sm {

inline constexpr size_t kCacheLine = 64;
// Ring slots are half a cache line: a small message (8-byte cell header, 16-byte ob1 match
// header, 8 bytes of data) takes one, so two travel in each line transferred between cores.
inline constexpr size_t kSlotSize = 32;
inline constexpr uint64_t kHeaderBytes = 4096; // the header page; ring 0 starts after it
inline constexpr uint64_t kSegmentMagic = 0x31304d5354464557ull; // "WEFTSM01", little-endian
inline constexpr uint32_t kLayoutVersion = 5;

enum SegmentState : uint64_t {
    kStateInit = 0,   // only the header page exists yet
    kStateReady = 1,  // the layout fields are valid and the file has its full size
    kStateFailed = 2, // the owner could not grow the file: nobody can reach it this way
};

// Offset 0 of a segment. The first group is written at init; the layout group once, before
// state becomes ready; nobody writes the header afterwards.
struct SegmentHeader {
    uint64_t magic;            // kSegmentMagic
    uint32_t version;          // kLayoutVersion
    uint32_t header_size;      // sizeof(SegmentHeader)
    uint64_t cookie;           // random; the modex carries it too, proving this is the file meant
    uint64_t state;            // SegmentState, written with release, read with acquire
    uint64_t attached;         // peers that mapped the ready segment (atomic increments)
    uint32_t owner_world_rank; //
    uint32_t owner_local_rank; // valid once ready: the index of the owner's ring at its peers
    // The layout, valid once ready.
    uint64_t segment_size;   // bytes of the file
    uint32_t nrings;         // one per local rank of the job
    uint32_t ring_slots;     // slots per ring, a power of two
    uint32_t slot_size;      // bytes per slot: kSlotSize
    uint32_t inline_max;     // the largest message the owner takes inside its rings
    uint64_t rings_offset;   // ring 0, from the start of the segment
    uint64_t ring_stride;    // bytes from one ring to the next
    uint64_t pool_offset;    // fragment 0 of the pool
    uint64_t pool_frag_size; // bytes per pool fragment, a multiple of kCacheLine
    uint64_t pool_frags;     // fragments in the pool
};

// The start of each ring; ring_slots slots of slot_size bytes follow. A message takes
// consecutive slots: a CellHeader, then its bytes. head and tail count slots since the ring
// was made (never wrapped: 2^64 slots outlive any job); slot i is at index
// i & (ring_slots - 1). head is written by the owner after each message it consumed; tail is
// written by the sender only when it disconnects (so that a later connection resumes where
// it stopped): while connected, the sender publishes a message by the stamp in its header,
// so the owner polls one slot per peer and two small messages cost one line transfer.
// head and tail live on separate cache lines.
//
// A shared get (btl_sm_rdma.cc) is a get of the owner's from sender s that s helps with: the
// owner reads pieces of the message by CMA while s, once it sees the kCellHelp message,
// writes others into the owner's buffer by CMA. Both take pieces from one counter in a
// SharedGet of ring s: claim holds (generation << 32) | next piece; done counts the pieces
// copied, failed those s could not write. A helper claims a piece only with a compare-and-swap
// that names the generation of its kCellHelp message, so a late message can never take a piece
// of a later get in the same slot.
struct alignas(kCacheLine) SharedGet {
    uint64_t claim;  // (generation << 32) | index of the next piece nobody has claimed
    uint64_t done;   // pieces copied (by either process)
    uint64_t failed; // pieces the helper claimed but could not write (the owner copies them)
};
inline constexpr uint32_t kSharedGets = 16; // per ring: shared gets in progress at once

struct alignas(kCacheLine) RingControl {
    alignas(kCacheLine) uint64_t head; // next slot the owner reads; written by the owner only
    alignas(kCacheLine) uint64_t tail; // the sender's next slot when it last disconnected
    SharedGet shared[kSharedGets];     // written by the owner and sender s (atomics only)
};

// The first bytes of a message in a ring. stamp is stamp_of(index of the message's first
// slot), stored last with release: the owner waiting at slot h sees a new message when the
// stamp there is stamp_of(h). Every other value is old. The owner, when it consumes a message,
// overwrites the first word of each of its later slots (and of each skipped slot) with
// poison_of(that slot's index), so every slot is written once per lap: what a slot holds
// before the sender reaches it is the stamp of a message one lap ago, or a poison value, and
// neither equals the stamp expected there (they differ from it by the ring size, or by one,
// modulo 2^32).
//   kCellInline  the message follows the header, `length` bytes, in as many slots as needed;
//   kCellPool    a PoolRef follows: the message is in the sender's segment (its pool); it
//                takes one slot; `length` is zero;
//   kCellSkip    nothing follows: `length` slots up to the ring's end are unused (a message
//                never wraps), and the next message starts at slot 0.
//   kCellHelp    a HelpRequest follows: the receiver of a message asks its sender to write
//                pieces of it (a shared get); `length` is its size.
enum CellKind : uint8_t { kCellInline = 1, kCellPool = 2, kCellSkip = 3, kCellHelp = 4 };

struct CellHeader {
    uint32_t stamp;  // stamp_of(first slot index); written last, with release
    uint16_t length; // bytes of an inline message, or slots of a skip
    uint8_t tag;     // active-message tag
    uint8_t kind;    // CellKind
};

struct PoolRef {
    uint64_t offset; // in the sender's segment
    uint32_t length; // bytes of the message
    uint32_t reserved;
};

// What a kCellHelp message carries: write pieces [0, pieces) of `size` bytes, `piece` bytes
// each, from src (in the helper) to dst (in the asking process), claiming each in the
// SharedGet `slot` of the asker's ring for the helper, generation `generation`.
struct HelpRequest {
    uint64_t src;
    uint64_t dst;
    uint64_t size;
    uint32_t piece;
    uint32_t pieces;
    uint32_t slot;
    uint32_t generation;
};

inline constexpr size_t kCellHeaderSize = sizeof(CellHeader);
// The largest message that travels inside a ring (length is 16 bits); larger eager
// messages go through the pool.
inline constexpr size_t kMaxInline = UINT16_MAX;

static_assert(sizeof(CellHeader) == 8, "the cell header is part of the wire format");
static_assert(kCellHeaderSize + sizeof(PoolRef) <= kSlotSize, "a pool entry takes one slot");
static_assert(sizeof(RingControl) == (2 + kSharedGets) * kCacheLine,
              "head, tail and each shared get on their own lines");

inline constexpr uint32_t stamp_of(uint64_t slot) { return uint32_t(slot + 1); }
inline constexpr uint32_t poison_of(uint64_t slot) { return uint32_t(slot); }

// Slots a message of len bytes takes (header included).
inline constexpr uint64_t slots_for(uint64_t len)
{
    return (kCellHeaderSize + len + kSlotSize - 1) / kSlotSize;
}
// The sender asks ahead for the lines it will write next (btl_sm_claim_ahead). The receiver
// read them a lap ago, so a store there first has to take the line back from the receiver's
// cache, a cross-core round trip (about 150 ns on a 2-vCPU Xeon VM) that a sender writing a
// line per message otherwise waits for at every message. Asked for with the intent to write
// before they are needed, the trips overlap each other and the sender's work.
//
// claim_range says which slots to ask for after a message of nslots slots, the sender's tail
// now at `tail`, everything before `claimed` asked for already, the receiver's head last
// seen at `head`: [from, to). Up to the lines of one more message of that size (at least
// kClaimMinSlots, at most kClaimMaxSlots) past the tail's line; never the line holding the
// tail, where the next stamp goes (the receiver may be polling it, and the sender writes it
// last, copy_line_last); never a line with a slot the receiver has not consumed as far as the
// sender knows (to <= head + ring_slots). Both ends are on a line's first slot, so that no
// line is asked for twice. After messages of less than a line it asks only when
// kClaimMinSlots are due, so that a ping-pong of them asks rarely (each asking makes the
// peer's core answer while it waits for the message). Empty: from >= to.
inline constexpr uint64_t kLineSlots = kCacheLine / kSlotSize;
inline constexpr uint64_t kClaimMinSlots = 4 * kLineSlots;
inline constexpr uint64_t kClaimMaxSlots = 4096 / kSlotSize;
struct ClaimRange {
    uint64_t from, to;
};
inline constexpr ClaimRange claim_range(uint64_t tail, uint64_t claimed, uint64_t head,
                                        uint64_t ring_slots, uint64_t nslots)
{
    const uint64_t line = ~(kLineSlots - 1);
    const uint64_t next_line = (tail | (kLineSlots - 1)) + 1;
    const uint64_t from = (claimed > next_line ? claimed : next_line) & line;
    const uint64_t want = nslots < kClaimMinSlots   ? kClaimMinSlots
                          : nslots > kClaimMaxSlots ? kClaimMaxSlots
                                                    : nslots;
    const uint64_t to =
        std::min((tail + want + 2 * kLineSlots - 1) & line, (head + ring_slots) & line);
    if (to <= from || (nslots < kLineSlots && to - from < kClaimMinSlots))
        return {0, 0};
    return {from, to};
}

static_assert(sizeof(SegmentHeader) <= kHeaderBytes);
static_assert(std::is_standard_layout_v<SegmentHeader> &&
              std::is_trivially_copyable_v<SegmentHeader>);
static_assert(std::atomic_ref<uint64_t>::is_always_lock_free,
              "ring indices must be lock-free atomics to be shared between processes");

template <typename T> inline T load_acquire(const T &x)
{
    return std::atomic_ref<T>(const_cast<T &>(x)).load(std::memory_order_acquire);
}
template <typename T> inline void store_release(T &x, std::type_identity_t<T> v)
{
    std::atomic_ref<T>(x).store(v, std::memory_order_release);
}
template <typename T> inline void store_relaxed(T &x, std::type_identity_t<T> v)
{
    std::atomic_ref<T>(x).store(v, std::memory_order_relaxed);
}

// The sizes a segment grows to; everything else follows from them.
struct Layout {
    uint32_t nrings = 0;
    uint32_t ring_slots = 0; // a power of two
    uint32_t inline_max = 0; // at most what half a ring holds
    uint64_t pool_frag_size = 0;
    uint64_t pool_frags = 0;

    // Fills the layout fields of h; false if the segment would be absurdly large.
    bool place(SegmentHeader &h) const;
};

// One mapped segment: this process's own (created) or a peer's (attached).
class Segment {
  public:
    Segment() = default;
    Segment(const Segment &) = delete;
    Segment &operator=(const Segment &) = delete;
    ~Segment() { close(); }

    // Create the header-only file dir/<stem> (or, if a live process holds that name, the
    // name with a random suffix) and map it. error says why in one line on failure.
    weft_status_t create(const std::string &dir, const std::string &stem, uint32_t world_rank,
                         uint64_t cookie, std::string &error);
    // Grow the own segment to layout, map all of it and publish state = ready; on failure
    // publish state = failed, so that peers stop waiting.
    weft_status_t activate(const Layout &layout, uint32_t local_rank, std::string &error);
    bool ready() const { return ready_; }
    // Publish state = failed without activating, so that peers stop waiting.
    void mark_failed();

    // Map a peer's header page and check it against what the peer published.
    weft_status_t attach(const std::string &path, uint64_t cookie, uint32_t world_rank,
                         std::string &error);
    // For an attached segment: WEFT_IN_PROGRESS while the owner has not activated it,
    // WEFT_SUCCESS once it is mapped whole and checked, an error if it never will be.
    weft_status_t poll_ready(std::string &error);

    // How many peers have mapped the own segment since it became ready.
    uint64_t attached() const { return load_acquire(shared_header()->attached); }
    // Remove the own file now: whoever has it mapped keeps it, nobody new can open it. Peers
    // can still tell whether this process lives (the lock belongs to the open file).
    void unlink_file();

    // Unmap; the owner also removes the file if it is still there.
    void close();

    // Whether the owner still runs: it holds a shared lock on the file for its whole life,
    // which the kernel drops when it dies (works across PID namespaces, unlike kill(pid, 0)).
    bool owner_alive() const;

    char *base() const { return base_; }
    size_t size() const { return size_; }
    const std::string &path() const { return path_; }
    // The header as this process validated it (a copy: the shared one is not trusted later).
    const SegmentHeader &header() const { return header_; }

    RingControl *ring(uint32_t i) const
    {
        return reinterpret_cast<RingControl *>(base_ + header_.rings_offset +
                                               uint64_t(i) * header_.ring_stride);
    }
    char *slots(uint32_t i) const { return reinterpret_cast<char *>(ring(i) + 1); }

  private:
    SegmentHeader *shared_header() const { return reinterpret_cast<SegmentHeader *>(base_); }

    char *base_ = nullptr;
    size_t size_ = 0;
    int fd_ = -1;
    bool owner_ = false;
    bool ready_ = false;
    bool linked_ = false; // the own file still has its name
    std::string path_;
    SegmentHeader header_{};
};

} // namespace weft::btl::sm

#endif
