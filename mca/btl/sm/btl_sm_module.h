// btl/sm: the module, its endpoints and fragments (internal to the component).
//
// One module per process. Sending to a local peer means writing a message into the ring that
// the peer keeps for this process in its own segment; receiving means polling the rings of
// this process's segment. Messages up to the eager limit travel inside the ring; larger ones
// stay in this process's shared pool and a ring entry points at them, so both cost one copy
// in and one out. btl_sendi packs header and payload straight into the ring.
#ifndef WEFT_BTL_SM_MODULE_H
#define WEFT_BTL_SM_MODULE_H

#include "btl_sm_calibrate.h"
#include "btl_sm_segment.h"

#include <btl/btl.h>
#include <weft/output.h>

#include <sys/types.h>

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace weft::btl::sm {

// Messages for the user (weft/output.h), from the texts the component builds.
inline void log_warning(const std::string &text)
{
    weft_output(WEFT_OUTPUT_WARNING, "%s", text.c_str());
}
inline void log_info(const std::string &text) { weft_output(WEFT_OUTPUT_INFO, "%s", text.c_str()); }

// Parameter values as the component read them.
// How put/get move data (btl_sm_single_copy_mechanism).
enum class SingleCopy : int {
    none = 0,      // no put/get: large messages take the send/receive pipeline through the pool
    cma = 1,       // process_vm_readv/writev (Linux cross-memory attach), by the receiver
    automatic = 2, // per size, what a calibration (btl_sm_calibrate.h) finds fastest
    split = 3      // cma, the sender writing pieces of each message while the receiver reads
};

// How the pipeline's fragments are written into the pool (btl_sm_pool_stores, btl_sm_copy.h).
enum class PoolStores : int {
    automatic = 0, // per size, what the calibration finds faster
    cached = 1,
    streaming = 2
};

struct Config {
    size_t eager_limit = 0;
    size_t max_send_size = 0;
    uint32_t exclusivity = 0;
    uint32_t latency = 0;
    uint32_t bandwidth = 0;
    uint32_t ring_slots = 0; // slots of kCacheLine bytes per ring, a power of two
    size_t free_list_max = 0;
    std::string segment_dir;
    size_t rndv_eager_limit = 0;
    SingleCopy single_copy = SingleCopy::none;
    std::string calibration_file; // auto: where the rates are remembered ("" nowhere)
    size_t split_piece = 0;       // split: bytes per piece of a shared get
    PoolStores pool_stores = PoolStores::automatic;
    bool claim_ahead = true; // the sender asks for the ring's next lines before it writes them
};

// What a process publishes under the modex key "btl.sm" (at init, before it knows its
// local rank: the rest is in the segment header).
struct ModexInfo {
    uint32_t version; // kLayoutVersion
    uint32_t pid;     // the process, for cross-memory attach
    uint64_t cookie;  // equal to the cookie in the segment header
    char path[240];   // NUL-terminated
};
static_assert(std::is_trivially_copyable_v<ModexInfo>);
// The component's name: sm, or another for a second copy built from these sources (the test
// suite's btl/sm2: a second shared-memory rail, with put/get, to stripe RDMA over).
#ifndef WEFT_BTL_SM_NAME
#define WEFT_BTL_SM_NAME sm
#endif
#define WEFT_BTL_SM_STR2(x)       #x
#define WEFT_BTL_SM_STR(x)        WEFT_BTL_SM_STR2(x)
#define WEFT_BTL_SM_CAT2(a, b, c) a##b##c
#define WEFT_BTL_SM_CAT(a, b, c)  WEFT_BTL_SM_CAT2(a, b, c)
#define WEFT_BTL_SM_COMPONENT     WEFT_BTL_SM_CAT(mca_btl_, WEFT_BTL_SM_NAME, _component)
inline constexpr const char *kName = WEFT_BTL_SM_STR(WEFT_BTL_SM_NAME);
inline constexpr const char *kModexKey = "btl." WEFT_BTL_SM_STR(WEFT_BTL_SM_NAME);

// A mutex that is taken only when the module was created for a threaded library; in the
// usual single-threaded case lock() is a test of one flag.
class MaybeLock {
  public:
    explicit MaybeLock(bool on = false) : on_(on) {}
    void enable(bool on) { on_ = on; }
    void lock()
    {
        if (on_)
            mu_.lock();
    }
    void unlock()
    {
        if (on_)
            mu_.unlock();
    }

  private:
    bool on_;
    std::mutex mu_;
};

struct Endpoint;

enum class FragState : uint32_t {
    free,     // on a free list
    caller,   // the caller's: from btl_alloc, or completed without BTL_OWNERSHIP
    pending,  // queued on an endpoint: the peer's ring was full
    inflight, // a pool cell in the peer's ring, not yet consumed
};

// A send descriptor. des comes first: the PML's descriptor pointer is the Frag pointer.
struct Frag {
    weft_btl_descriptor_t des;
    weft_btl_segment_t seg;
    uint64_t magic; // kFragMagic: a descriptor handed back is checked against it
    FragState state;
    bool pooled;   // buf is a fragment of this process's shared pool
    bool poisoned; // a pooled buffer a live peer may still read: never reused
    char *buf;
    size_t capacity;
    uint64_t pool_offset; // pooled: offset of buf in this process's segment
    Frag *borrowed;       // a small fragment too big for the peer's cells travels in this one
    Endpoint *ep;
    uint64_t ring_index; // inflight: the cell that points at the data
    weft_btl_tag_t tag;
    Frag *next;
};
inline constexpr uint64_t kFragMagic = 0x67617266206d7321ull;
static_assert(std::is_standard_layout_v<Frag> && offsetof(Frag, des) == 0,
              "a descriptor pointer must be convertible to its fragment");

// A FIFO of fragments linked through Frag::next; never allocates.
class FragQueue {
  public:
    bool empty() const { return head_ == nullptr; }
    Frag *front() const { return head_; }
    void push(Frag *f)
    {
        f->next = nullptr;
        (tail_ ? tail_->next : head_) = f;
        tail_ = f;
    }
    Frag *pop()
    {
        Frag *f = head_;
        head_ = f->next;
        if (!head_)
            tail_ = nullptr;
        f->next = nullptr;
        return f;
    }
    // Move everything to the back of other.
    void splice_into(FragQueue &other)
    {
        while (!empty())
            other.push(pop());
    }

  private:
    Frag *head_ = nullptr;
    Frag *tail_ = nullptr;
};

struct Module;

// One local peer. weft_btl_endpoint_t pointers handed out are Endpoint pointers.
struct Endpoint {
    uint64_t magic = kEndpointMagic;
    static constexpr uint64_t kEndpointMagic = 0x746e696f70646e65ull;

    Module *module = nullptr;
    weft_proc_t *proc = nullptr;
    int world_rank = -1;
    pid_t peer_pid = 0;      // from the modex: whose memory put/get reach
    uint32_t peer_local = 0; // valid once connected
    Segment peer;            // the peer's segment: its header page, all of it once connected
    // Connected: the peer's segment is ready and mapped. Until then sends wait in pending
    // and progress polls the peer's header.
    bool connected = false;

    // Sending: the ring for this process in the peer's segment.
    MaybeLock lock; // tx state, pending, inflight and state
    RingControl *tx = nullptr;
    char *tx_slots = nullptr;
    uint64_t tx_mask = 0;       // ring_slots - 1 of the peer's ring
    size_t tx_inline_max = 0;   // the peer's inline_max
    uint64_t tx_tail = 0;       // the next slot this process writes (published in tx->tail
                                // only at disconnect)
    uint64_t tx_head_cache = 0; // last head seen: saves a load of the peer's line while room
    uint64_t tx_claimed = 0;    // slots before this were asked for ahead (claim_ahead)
    bool tx_claim = false;      // btl_sm_claim_ahead, where the CPU can
    FragQueue pending;
    FragQueue inflight;
    weft_status_t state = WEFT_SUCCESS; // the error that broke the endpoint, once broken
    std::chrono::steady_clock::time_point next_liveness_check{};
    uint32_t stuck_polls = 0; // progress calls in a row that found the queues stuck
    // Shared gets this process started from this peer, by SharedGet slot (btl_sm_rdma.cc).
    std::array<uint32_t, kSharedGets> shared_generation{};
    std::array<bool, kSharedGets> shared_busy{};

    // Receiving: the peer's ring in this process's segment; touched by progress only.
    RingControl *rx = nullptr;
    char *rx_slots = nullptr;
    uint64_t rx_mask = 0;
    uint64_t rx_head = 0; // own copy of rx->head
    bool rx_polled = false;
    // Bounds of the peer's pool, from its header as validated when connecting.
    uint64_t peer_pool_begin = 0;
    uint64_t peer_pool_end = 0;
};

// A finished put or get whose callback is due.
struct RdmaDone {
    weft_btl_rdma_completion_fn_t fn;
    Endpoint *ep;
    void *local;
    weft_btl_registration_handle_t *local_handle;
    void *context;
    void *cbdata;
    weft_status_t status;
};

// A shared get waiting for the pieces its helper claimed.
struct SharedPending {
    Endpoint *ep;
    uint32_t slot;
    uint32_t pieces;
    char *local;
    uint64_t remote;
    size_t size;
    RdmaDone done; // its callback, status set when it finishes
    std::chrono::steady_clock::time_point next_liveness_check;
};

// What register_mem hands out and the PML carries to the peer: the region, and whose it is.
struct RegHandle {
    uint64_t pid;
    uint64_t base;
    uint64_t len;
};

struct TagEntry {
    weft_btl_recv_fn_t fn = nullptr;
    void *cbdata = nullptr;
};

struct Module {
    weft_btl_module_t base; // what the PML holds

    Config cfg;
    Segment own;
    uint32_t world_rank = 0;
    uint32_t local_rank = 0;
    uint32_t nrings = 0;
    uint64_t cookie = 0;
    size_t inline_max = 0; // the largest message sent inside a ring (eager limit)
    pid_t pid = 0;         // this process's (getpid is a system call; registrations need it)

    std::array<TagEntry, 256> tags{};
    weft_btl_error_fn_t error_fn = nullptr;
    void *error_cbdata = nullptr;

    // The own segment grows to its full layout at the first add_procs that finds a local
    // peer (the runtime knows local ranks only after the modex).
    bool activated = false;
    bool activation_failed = false;
    bool own_unlinked = false; // every other local rank has mapped the own segment

    std::vector<Endpoint *> by_local;   // connected endpoints by the peer's local rank
    std::vector<Endpoint *> endpoints;  // every endpoint
    std::vector<Endpoint *> connecting; // endpoints whose peer is not ready yet
    std::vector<Endpoint *> rx_list;    // the endpoints whose rings progress polls

    MaybeLock lock;               // the free lists
    std::unique_ptr<Frag[]> pool; // one per pool fragment of own
    Frag *pool_free = nullptr;
    Frag *small_free = nullptr;
    std::vector<Frag *> small_all;     // every small fragment made, for finalize
    std::atomic<int64_t> send_work{0}; // fragments pending or in flight, on all endpoints
    std::atomic<bool> busy{false};     // progress is running (callbacks must not re-enter it)
    bool threaded = false;

    // put/get: done at once by cross-memory attach; their callbacks run from progress.
    std::vector<RdmaDone> rdma_done;
    std::vector<RdmaDone> rdma_running; // rdma_progress's, while their callbacks run
    // Shared gets: from this size on (SIZE_MAX: never), in pieces of split_piece bytes.
    size_t split_min = SIZE_MAX;
    size_t split_piece = 0;
    std::vector<SharedPending> shared_pending;
    // The regions this process registered (a helper writes only from them).
    std::vector<const RegHandle *> regs;
    // Handles deregistered, kept for the next registrations (no allocation per message).
    std::vector<RegHandle *> spare_regs;
    ~Module();
    std::string rdma_note; // what rdma_setup chose and why, for the verbose log and weft_info
    // The pipeline's fragments of messages of streamed_min to streamed_max bytes (exclusive;
    // SIZE_MAX: none) are written with streaming stores (btl_sm_copy.h).
    size_t streamed_min = SIZE_MAX;
    size_t streamed_max = SIZE_MAX;
    // auto: what the calibration measured (btl_way_rate), sorted by size.
    std::vector<Rate> rates;
};

// Make the module: the header-only segment and the modex entry. On failure error says why.
Module *module_create(const Config &cfg, bool threaded, std::string &error, weft_status_t &rc);
// The component's progress function: polls the one module, if there is one.
int module_progress();

// The one module (sm makes one per process), and checked conversions of what the PML hands in.
extern Module *g_module;
Module *self(weft_btl_module_t *m);
Endpoint *endpoint_of(weft_btl_endpoint_t *e);

// ---- put/get (btl_sm_rdma.cc)

// Give the module put/get as cfg.single_copy says (auto: calibrates once). Returns a note for
// the verbose log.
std::string rdma_setup(Module *m);
// btl_sm_single_copy_mechanism auto: this host's choice (measured, or remembered), and a line
// saying what it is and why; false (note says why) if it could not be measured. rates: the
// measurement itself, if wanted.
bool auto_choice(const Config &cfg, Choice &c, std::string &note,
                 std::vector<Rate> *rates = nullptr);
int rdma_progress(Module *m);
// Ask ep's process to help with a shared get (a kCellHelp message); false if it cannot be
// sent now (the ring is full or sends wait).
bool post_help(Endpoint *ep, const HelpRequest &req);
// A kCellHelp message from ep: write the pieces of the peer's shared get this process can.
void help_shared_get(Module *m, Endpoint *ep, const HelpRequest &req);
weft_status_t sm_put(weft_btl_module_t *module, weft_btl_endpoint_t *endpoint, void *local_address,
                     uint64_t remote_address, weft_btl_registration_handle_t *local_handle,
                     const weft_btl_registration_handle_t *remote_handle, size_t size,
                     uint32_t flags, uint8_t order, weft_btl_rdma_completion_fn_t cbfunc,
                     void *cbcontext, void *cbdata);
weft_status_t sm_get(weft_btl_module_t *module, weft_btl_endpoint_t *endpoint, void *local_address,
                     uint64_t remote_address, weft_btl_registration_handle_t *local_handle,
                     const weft_btl_registration_handle_t *remote_handle, size_t size,
                     uint32_t flags, uint8_t order, weft_btl_rdma_completion_fn_t cbfunc,
                     void *cbcontext, void *cbdata);
weft_status_t sm_register_mem(weft_btl_module_t *module, weft_btl_endpoint_t *endpoint, void *base,
                              size_t size, uint32_t flags, weft_btl_registration_handle_t **handle);
weft_status_t sm_deregister_mem(weft_btl_module_t *module, weft_btl_registration_handle_t *handle);

} // namespace weft::btl::sm

#endif
