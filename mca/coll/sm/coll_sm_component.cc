// coll/sm: barrier and small bcast, reduce, allreduce, allgather and alltoall through shared
// memory, and the larger ones in chunks through large slots, for communicators whose
// processes all share one host. Each communicator gets a small segment holding a counter of
// arrivals and a generation number: a rank adds itself to the counter; the last one resets it
// and bumps the generation, which every other rank waits for. Every rank waits once, where a
// barrier of messages waits once per round: when the ranks outnumber the cores, each wait is a
// context switch, and fewer waits make a faster barrier. The other operations are one arrival
// each (two per chunk for a large allreduce or reduce), their data in a slot per rank
// (README.md). Above the small slots a call may instead be handed to the modules below, or
// (bcast, reduce, allgather, alltoall) read straight from the others' buffers by cross-memory
// attach:
// which of the ways, each communicator learns per operation and size (coll_sm_learn.h).
//
// Every other operation stays with the modules below it.
// It is set up at the communicator's first call of one of them (the same call at every
// member: collectives are called in the same order), not when the communicator is made, so
// making one never waits for the others here (MPIX_Comm_ishrink makes its communicator from
// progress, and a member may fail meanwhile): rank 0 creates the segment and sends its name;
// the others map it, check that they can read rank 0's memory by cross-memory attach, and
// answer; rank 0 removes the name once all have mapped it, checks that it can read theirs, and
// tells every live member whether all succeeded (and whether the single copy works everywhere),
// so that every rank makes the same choice. When they did not, the module declines every call
// and the modules below it serve.
#include "coll_sm_learn.h"

#include <coll/coll.h>
#include <pml/pml.h>
#include <weft/comm.h>
#include <weft/mca.h>
#include <weft/op.h>
#include <weft/output.h>
#include <weft/runtime.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <string>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>
#include <vector>

// The one symbol the component exports (it is built with -fvisibility=hidden).
extern "C" {
__attribute__((visibility("default"))) extern const weft_coll_component_t mca_coll_sm_component;
}

namespace weft::coll::sm {

namespace {

weft_mca_param_t *p_priority = nullptr, *p_operations = nullptr, *p_sets = nullptr,
                 *p_large = nullptr, *p_large_way = nullptr, *p_verbose = nullptr;

// coll_sm_large_way: how the operations above the small slots are served.
enum class LargeWay { automatic, slots, below, single };
constexpr weft_mca_enum_value_t kLargeWayValues[] = {
    {"auto", int(LargeWay::automatic)},
    {"slots", int(LargeWay::slots)},
    {"below", int(LargeWay::below)},
    {"single", int(LargeWay::single)},
    {nullptr, 0},
};

// The operations that have large slots, each learning its way per size class (Learner).
enum LargeOp { kBcast, kReduce, kAllreduce, kAllgather, kAlltoall, kLargeOps };
constexpr const char *kLargeOpNames[kLargeOps] = {"bcast", "reduce", "allreduce", "allgather",
                                                  "alltoall"};
constexpr unsigned kClasses = 65; // std::bit_width of a size_t

struct alignas(64) Shared {
    alignas(64) std::atomic<uint32_t> arrived; // ranks in the current barrier
    alignas(64) std::atomic<uint32_t> generation;
    // Then a Line per rank, then coll_sm_sets sets (by the generation, round) of one slot per
    // rank, then the large area: a large slot per rank (a Head, then coll_sm_large bytes) and
    // a result of coll_sm_large bytes.
};
// Each rank's own cache line: the last generation whose reads of others' slots it finished;
// for the single copy (cross-memory attach), its process id, where it mapped the segment (for
// the set-up's check) and, for the current operation, where its data is and how many bytes of
// it it says it sends.
struct alignas(64) Line {
    std::atomic<uint32_t> done;
    int32_t pid;
    uint64_t base;
    uint64_t addr;
    uint64_t says;
    uint64_t result; // a reduce's root: where the result goes (reduce_single)
    uint32_t failed; // a reduce's other ranks: the call whose block they could not give the root
    int32_t failure; // and why (a weft_status_t)
};
static_assert(sizeof(Line) == 64);
static_assert(std::atomic<uint32_t>::is_always_lock_free);
constexpr size_t kSlot = 2048; // a rank's part of one generation, in bytes
// The largest allreduce taken here: every rank folds every slot, so the work grows with the
// ranks times this (coll/basic's trees do less above it).
// Up to 4 ranks a whole slot is cheap to fold at every rank.
constexpr size_t kAllreduceMax = 256;
size_t allreduce_max(int nranks) { return nranks <= 4 ? kSlot : kAllreduceMax; }
constexpr size_t kNameMax = 128;

// The segment this process created and has not unlinked yet, for exit_cleanup. Plain storage,
// no constructor: this runs in a dlopened component.
char g_pending[kNameMax];

// A process that leaves while its segment still has its name (an abort from inside the set-up,
// when a peer fails) removes it on the way out: at exit() and when the component is unloaded.
__attribute__((destructor)) void exit_cleanup()
{
    if (g_pending[0])
        unlink(g_pending);
    g_pending[0] = '\0';
}

// A slot: a header at the start of a cache line, then the data. A small slot's data starts in
// the header's line (kSmallData), so that up to 48 bytes travel with their header, one line
// from the writer's cache to each reader's, not two (an 8-byte reduce's root waits for one line
// per rank); a large slot's data starts at the next line (kHead), for whole-line copies.
struct Head {
    uint64_t bytes;            // what its rank put there
    std::atomic<uint32_t> gen; // the generation it is for, once the data is there
    // A large slot's: the stamp of its second half (reduce_at_root), here, in the first half's
    // header, because the second half's header lies inside the data of the whole slot, which
    // allreduce_large and bigger reduces write with the user's bytes (a stale stamp there
    // could hold any value, the next generation too).
    std::atomic<uint32_t> gen1;
};
constexpr size_t kHead = 64, kSmallData = 16, kStride = kHead + kSlot;
static_assert(sizeof(Head) <= kSmallData && kSmallData + kSlot <= kStride && kStride % 64 == 0);

size_t small_size(int nranks, unsigned sets)
{
    return sizeof(Shared) + size_t(nranks) * sizeof(Line) + size_t(sets) * size_t(nranks) * kStride;
}

// The large area's pages are only used (and only take memory) once a large operation runs.
size_t segment_size(int nranks, unsigned sets, size_t large)
{
    const size_t bytes =
        small_size(nranks, sets) + (large ? size_t(nranks) * (kHead + large) + large : 0);
    return (bytes + 4095) / 4096 * 4096;
}

struct Module {
    weft_coll_module_t base; // first: the framework sees this
    enum { unset, ready, declined } state = unset;
    Shared *shared = nullptr;
    size_t size = 0;            // of the mapping
    uint32_t generation = 0;    // the last one this rank saw
    uint32_t large_read = 0;    // the generation after whose reads the large slots are free
    uint32_t half_read[2] = {}; // the same for each half (chunk_slot)
    uint32_t chunks = 0;        // exchange chunks so far: which half the next one takes
    uint32_t least_done = 0;    // the least of the `done` lines when last read (all_done)
    unsigned sets = 2;          // coll_sm_sets: generations in the segment at once
    size_t large = 0;           // coll_sm_large: bytes of a large slot (0: none)
    LargeWay large_way = LargeWay::automatic; // coll_sm_large_way
    bool single = false;       // cross-memory attach works between every two ranks (set_up)
    uint32_t reduces = 0;      // reduce_single calls so far (Line::failed)
    std::vector<char> scratch; // reduce_single's blocks, kept: fresh pages each call fault
    Learner learn[kLargeOps][kClasses]; // the ways chosen and being learnt (automatic)
    bool broken = false; // a member failed (ULFM): the shared counters can never settle
};

Line *lines(Module *m) { return reinterpret_cast<Line *>(m->shared + 1); }

// The data of rank's slot in generation's set.
char *slot(Module *m, uint32_t generation, int nranks, int rank)
{
    return reinterpret_cast<char *>(lines(m) + nranks) +
           (size_t(generation % m->sets) * size_t(nranks) + size_t(rank)) * kStride + kSmallData;
}

// Rank's large slot, and the large result.
char *large_slot(Module *m, int nranks, int rank)
{
    return reinterpret_cast<char *>(m->shared) + small_size(nranks, m->sets) +
           size_t(rank) * (kHead + m->large) + kHead;
}
char *large_result(Module *m, int nranks) { return large_slot(m, nranks, nranks) - kHead; }

// Bytes of an exchange chunk (allgather, alltoall, bcast; exchange_chunk): half a large slot,
// the halves taken in turn, each with its own header (half 1's in the middle of the slot), so
// that a chunk's writers wait only for the readers of the chunk before the last one, which
// every rank has finished once it arrived at the last one: in a loop of such operations no
// writer waits, where with one buffer each waited for the last chunk's slowest reader (on
// oversubscribed cores, a context switch). The whole slot when half would hold less than a
// cache line.
size_t chunk_room(const Module *m)
{
    const size_t half = m->large > kHead ? (m->large - kHead) / 2 / 64 * 64 : 0;
    return half ? half : m->large;
}
char *chunk_slot(Module *m, int nranks, int rank, unsigned half)
{
    return large_slot(m, nranks, rank) + half * (chunk_room(m) + kHead);
}

// The header of a slot's data (small or large): at the start of the line before its first byte
// (the segment, its lines and its slots are line-aligned).
Head &head(char *data)
{
    return *reinterpret_cast<Head *>(reinterpret_cast<uintptr_t>(data - 1) & ~uintptr_t(63));
}
uint64_t &slot_bytes(char *data) { return head(data).bytes; }

// bytes of src into a small slot's data d: what goes past the header's line first, the
// header's line last. The readers of a stamped slot poll that line; written in between, it
// would go to them and back once more before the stamp (a 1 KiB allgather at 2 ranks by
// stamps: 0.69 us written front to back).
void fill(char *d, const void *src, size_t bytes)
{
    constexpr size_t kInLine = kHead - kSmallData;
    const size_t first = std::min(bytes, kInLine);
    if (bytes > first)
        std::memcpy(d + first, static_cast<const char *>(src) + first, bytes - first);
    std::memcpy(d, src, first);
}

// This rank's part: its byte count, then its data.
void put(Module *m, uint32_t gen, int n, int rank, const void *src, size_t bytes)
{
    char *d = slot(m, gen, n, rank);
    fill(d, src, bytes);
    slot_bytes(d) = bytes;
}

// bytes between `mine` in this process and address `theirs` of process pid, by cross-memory
// attach, read from there (write: false) or written there: 0, or the errno.
int peer_copy(int pid, void *mine, uint64_t theirs, size_t bytes, bool write)
{
    char *p = static_cast<char *>(mine);
    while (bytes > 0) {
        iovec local{p, bytes}, remote{reinterpret_cast<void *>(uintptr_t(theirs)), bytes};
        const ssize_t moved = write ? process_vm_writev(pid, &local, 1, &remote, 1, 0)
                                    : process_vm_readv(pid, &local, 1, &remote, 1, 0);
        if (moved <= 0)
            return moved < 0 ? errno : EIO;
        p += moved;
        theirs += uint64_t(moved);
        bytes -= size_t(moved);
    }
    return 0;
}
int read_peer(int pid, void *dst, uint64_t from, size_t bytes)
{
    return peer_copy(pid, dst, from, bytes, false);
}
int write_peer(int pid, uint64_t to, const void *src, size_t bytes)
{
    return peer_copy(pid, const_cast<void *>(src), to, bytes, true);
}

// a at or after b, across the wrap of the counters.
bool at_least(uint32_t a, uint32_t b) { return int32_t(a - b) >= 0; }

// Whether rank's part holds as many bytes as this rank expects: more is a truncation, as a
// receive of the same message would say (less, in a bcast, is a shorter message).
bool same_size(Module *m, uint32_t gen, int n, int rank, size_t bytes)
{
    return slot_bytes(slot(m, gen, n, rank)) == bytes;
}

Module *self(weft_coll_module_t *m) { return reinterpret_cast<Module *>(m); }

// Whether a member of comm is known to have failed (fault tolerance).
bool member_failed(weft_comm_t *comm)
{
    for (int r = 0; r < weft_comm_size(comm); ++r)
        if (weft_runtime_proc_failed(weft_comm_local_world_rank(comm, r)))
            return true;
    return false;
}

// Whether this rank may still use the module: not after a member's failure (ULFM), which the
// shared counters never recover from (every later collective of this module fails at once;
// ULFM programs shrink the communicator).
bool usable(Module *m, weft_comm_t *comm)
{
    if (m->broken || (weft_runtime_failure_epoch() != 0 && member_failed(comm)))
        m->broken = true;
    return !m->broken;
}

// Wait until ready() holds. A member that failed never does its part: the wait ends with
// WEFT_ERR_PROC_FAILED once this rank learns of it; a revoke (MPIX_Comm_revoke at a member that
// will not come) ends it with WEFT_ERR_REVOKED, as a receive from it would.
template <class Ready> weft_status_t wait_for(Module *m, weft_comm_t *comm, Ready ready)
{
    if (ready())
        return WEFT_SUCCESS;
    uint64_t epoch = weft_runtime_failure_epoch();
    bool revoked = false;
    weft::progress_wait([&] {
        if (ready())
            return true;
        if (weft_runtime_failure_epoch() != epoch) [[unlikely]] {
            epoch = weft_runtime_failure_epoch();
            m->broken = member_failed(comm);
        }
        if (weft_comm_is_revoked(comm)) [[unlikely]]
            revoked = m->broken = true;
        return m->broken;
    });
    if (revoked)
        return WEFT_ERR_REVOKED;
    return m->broken ? WEFT_ERR_PROC_FAILED : WEFT_SUCCESS;
}

// Wait until every rank has finished reading generation `target`. The least of the ranks'
// `done` lines is kept from the last look (they only grow): while it is far enough, the lines,
// which their ranks write at every operation, are not read again (with 32 sets, a root reads
// them about once in 32 calls rather than at every call).
weft_status_t all_done(Module *m, weft_comm_t *comm, uint32_t target)
{
    if (at_least(m->least_done, target))
        return WEFT_SUCCESS;
    const int n = weft_comm_size(comm);
    return wait_for(m, comm, [&] {
        uint32_t least = lines(m)[0].done.load(std::memory_order_acquire);
        for (int r = 1; r < n; ++r)
            if (const uint32_t d = lines(m)[r].done.load(std::memory_order_acquire);
                !at_least(d, least))
                least = d;
        m->least_done = least;
        return at_least(least, target);
    });
}

// Before this rank writes its slot for generation gen: every rank has finished reading the
// slots of gen - sets, the same set (the rooted operations do not wait for everyone, so a rank
// may be that far ahead).
weft_status_t writable(Module *m, weft_comm_t *comm, uint32_t gen)
{
    return all_done(m, comm, gen - m->sets);
}

// This rank has read all it needs of generation gen.
void finished(Module *m, weft_comm_t *comm, uint32_t gen)
{
    lines(m)[weft_comm_rank(comm)].done.store(gen, std::memory_order_release);
}

// Arrive at the next generation and wait until everyone has.
weft_status_t arrive_and_wait(Module *m, weft_comm_t *comm)
{
    const int nranks = weft_comm_size(comm);
    if (!usable(m, comm))
        return WEFT_ERR_PROC_FAILED;
    const uint32_t target = ++m->generation;
    if (m->shared->arrived.fetch_add(1, std::memory_order_acq_rel) == uint32_t(nranks) - 1) {
        m->shared->arrived.store(0, std::memory_order_relaxed);
        m->shared->generation.store(target, std::memory_order_release);
        return WEFT_SUCCESS;
    }
    return wait_for(
        m, comm, [&] { return m->shared->generation.load(std::memory_order_acquire) == target; });
}

// Wait until stamp(r) holds gen for every rank r < n. A stamp seen stays until its reader has
// finished with the generation (writable, all_done), so the wait goes on from the first rank
// not seen yet.
template <class Stamp>
weft_status_t wait_stamps(Module *m, weft_comm_t *comm, int n, uint32_t gen, Stamp stamp)
{
    int seen = 0;
    return wait_for(m, comm, [&] {
        for (; seen < n; ++seen)
            if (stamp(seen).load(std::memory_order_acquire) != gen)
                return false;
        return true;
    });
}

// Stamp this rank's small slot of the next generation (its part is there) and wait until every
// rank has stamped its own: an arrival of the operations whose every rank reads every slot,
// without the shared counter. Each rank's line travels once to each reader, where an arrival
// moves the counter's line from rank to rank and then the generation's to every waiter (an
// 8-byte allgather at 2 ranks: 0.39 us with the counter). A slot is written again only once
// every rank has finished reading it (writable), so a stamp seen stays until then.
weft_status_t stamp_and_wait(Module *m, weft_comm_t *comm)
{
    const int n = weft_comm_size(comm);
    if (!usable(m, comm))
        return WEFT_ERR_PROC_FAILED;
    const uint32_t gen = ++m->generation;
    head(slot(m, gen, n, weft_comm_rank(comm))).gen.store(gen, std::memory_order_release);
    return wait_stamps(
        m, comm, n, gen, [&](int r) -> auto & { return head(slot(m, gen, n, r)).gen; });
}

// The segment, set up at the first call that needs it.
weft_status_t ready(Module *m, weft_comm_t *comm);

// Marks generation gen finished at this rank when it goes out of scope (on every way out of an
// operation once it has taken part: the others wait for it before they write that set again).
struct Finish {
    Module *m;
    weft_comm_t *comm;
    uint32_t gen;
    ~Finish() { finished(m, comm, gen); }
};

// Arrive at the next generation, wait until everyone has, and be done with it at once (a
// generation of no slots: the small operations' writers must not wait for it).
weft_status_t step(Module *m, weft_comm_t *comm)
{
    const weft_status_t rc = arrive_and_wait(m, comm);
    finished(m, comm, m->generation);
    return rc;
}

weft_status_t barrier(weft_comm_t *comm, weft_coll_module_t *module)
{
    Module *m = self(module);
    if (weft_status_t rc = ready(m, comm); rc != WEFT_SUCCESS)
        return rc;
    return step(m, comm);
}

// ---- Above the small slots: the large slots, the modules below or the single copy, chosen
// (Learner).

// The ranks' times of a Learner's round (each rank's lesser run per way), through the small
// slots (one arrival): their sums per way, the same at every rank.
weft_status_t share_times(Module *m, weft_comm_t *comm, const Learner &l, double sums[kMaxWays])
{
    const int n = weft_comm_size(comm);
    const uint32_t gen = m->generation + 1;
    if (weft_status_t rc = writable(m, comm, gen); rc != WEFT_SUCCESS)
        return rc;
    float mine[kMaxWays];
    for (unsigned w = 0; w < kMaxWays; ++w)
        mine[w] = w < l.ways ? l.best[w] : std::numeric_limits<float>::infinity();
    put(m, gen, n, weft_comm_rank(comm), mine, sizeof mine);
    if (weft_status_t rc = arrive_and_wait(m, comm); rc != WEFT_SUCCESS)
        return rc;
    Finish f{m, comm, gen};
    std::fill(sums, sums + kMaxWays, 0.0);
    for (int r = 0; r < n; ++r) {
        float t[kMaxWays];
        std::memcpy(t, slot(m, gen, n, r), sizeof t);
        for (unsigned w = 0; w < kMaxWays; ++w)
            sums[w] += double(t[w]);
    }
    return WEFT_SUCCESS;
}

// The least coll ABI minor a module below must be built for to take a bcast, allgather or
// alltoall handed down: 1.2, the first given data with gaps (coll.h), whatever this rank's
// types: another rank's may have gaps where this one's has none, and a module passed over at
// one rank only would send the ranks different ways. (reduce and allreduce reach the large
// ways with contiguous data only, the same at every rank: 0.)
constexpr unsigned kExchangeMinor = 2;

// The call handed down, for large_call: operation op of weft_coll_module_t (its offset and
// size, for weft_coll_call_below) and its call at a module below with these arguments.
#define WEFT_SM_BELOW(op, ...)                                                                     \
    offsetof(weft_coll_module_t, op), sizeof(weft_coll_module_t::op), [&](weft_coll_module_t *x) { \
        return x->op ? x->op(__VA_ARGS__, x) : WEFT_ERR_NOT_SUPPORTED;                             \
    }

// A call above the small slots (bytes: what decides its size class, the same at every rank),
// through the large slots (slots()), by the single copy (single(); nullptr for the operations
// without one) or handed to the modules below coll/sm (below(module), through
// weft_coll_call_below; min_minor as there), as coll_sm_large_way says: auto learns the way per
// operation and size class (Learner), among three where the set-up found that cross-memory
// attach works. Where no module below provides the operation, the slots take it from then on
// (the same at every rank: they have the same components).
template <class Slots, class Single, class Below>
weft_status_t large_call(Module *m, weft_comm_t *comm, LargeOp op, size_t bytes, unsigned min_minor,
                         Slots slots, Single single, size_t op_offset, size_t op_size, Below below)
{
    constexpr bool has_single = !std::is_same_v<Single, std::nullptr_t>;
    auto hand_down = [&] {
        return weft_coll_call_below(
            &m->base, op_offset, op_size, min_minor,
            [](void *c, weft_coll_module_t *x) { return (*static_cast<Below *>(c))(x); }, &below);
    };
    auto take = [&](Way w) -> weft_status_t {
        if constexpr (has_single)
            if (w == kSingle)
                return single();
        return w == kBelow ? hand_down() : slots();
    };
    switch (m->large_way) {
    case LargeWay::slots: return slots();
    case LargeWay::single: return take(has_single && m->single ? kSingle : kSlots);
    case LargeWay::below: {
        const weft_status_t rc = hand_down();
        return rc == WEFT_ERR_NOT_SUPPORTED ? slots() : rc;
    }
    case LargeWay::automatic: break;
    }
    const unsigned size_class = unsigned(std::bit_width(bytes));
    Learner &l = m->learn[op][size_class];
    if (l.rounds == 0 && l.calls == 0 && l.in_round)
        l.ways = has_single && m->single ? 3 : 2; // the same at every rank
    l.begin_call();
    if (l.choosing()) {
        double sums[kMaxWays];
        if (weft_status_t rc = share_times(m, comm, l, sums); rc != WEFT_SUCCESS)
            return rc;
        const int before = l.way;
        l.chose(l.decide(sums));
        const int n = weft_comm_size(comm), level = int(weft_mca_param_int(p_verbose));
        if (weft_comm_rank(comm) == 0 && (level >= 20 || (level >= 10 && l.way != before))) {
            static constexpr const char *kNames[kMaxWays] = {"the large slots", "the modules below",
                                                             "the single copy"};
            char single_time[64] = "";
            if (l.ways > kSingle)
                std::snprintf(single_time, sizeof single_time, ", %.1f by the single copy",
                              sums[kSingle] / n);
            weft_output(
                WEFT_OUTPUT_INFO,
                "coll/sm: %s of %zu to %zu bytes on %d ranks: %s (%.1f us a call through "
                "the modules below, %.1f through the large slots%s: each rank's lesser of two "
                "runs of %u calls each way, averaged over the ranks; round %u)",
                kLargeOpNames[op], size_t(1) << (size_class - 1),
                (size_t(1) << (size_class - 1)) * 2 - 1, n, kNames[l.way], sums[kBelow] / n,
                sums[kSlots] / n, single_time, Learner::kRun - 1, unsigned(l.rounds));
        }
    }
    const Way way = l.next();
    weft_status_t rc = take(way);
    if (way == kBelow && rc == WEFT_ERR_NOT_SUPPORTED) {
        l.slots_only(); // nothing below provides it
        return slots();
    }
    if (l.in_round) {
        const std::chrono::duration<double, std::micro> now =
            std::chrono::steady_clock::now().time_since_epoch();
        l.took(now.count(), rc == WEFT_SUCCESS);
    } else {
        l.took(0);
    }
    return rc;
}

// Every slot of generation gen folded in rank order into out (bytes of count elements).
weft_status_t fold(Module *m, uint32_t gen, int n, void *out, size_t count, size_t bytes,
                   weft_datatype_t *type, weft_op_t *op)
{
    for (int r = 0; r < n; ++r)
        if (!same_size(m, gen, n, r, bytes))
            return WEFT_ERR_TRUNCATE;
    alignas(16) char acc[kSlot], next[kSlot];
    std::memcpy(acc, slot(m, gen, n, 0), bytes);
    for (int r = 1; r < n; ++r) {
        std::memcpy(next, slot(m, gen, n, r), bytes);
        if (weft_status_t rc = weft_op_reduce(op, acc, next, count, type); rc != WEFT_SUCCESS)
            return rc;
        std::memcpy(acc, next, bytes); // acc = ranks 0..r
    }
    std::memcpy(out, acc, bytes);
    return WEFT_SUCCESS;
}

// Whether count elements of type fit a slot as packed bytes (more, or a type with gaps, is
// declined: coll.h, the modules below take it).
bool fits(weft_datatype_t *type, size_t count, size_t most)
{
    return count * weft_datatype_size(type) <= most && weft_datatype_is_contiguous(type, count);
}

// A large allreduce, in chunks of at most coll_sm_large bytes: each rank copies its chunk into
// its large slot; after an arrival, each folds its share of the chunk's elements (a 1/n
// slice) from every slot into the result; after a second arrival, each copies the result out.
// Two waits per chunk at every rank, whatever the ranks, and each rank reads the chunk about
// three times; the trees and exchanges of coll/basic wait once per round, and move every
// byte twice per round through the send/receive pipeline or a single copy. The second arrival
// keeps the slots from being written again before every fold is over, the first keeps the
// next chunk's result from being written before everyone has copied this one out. A reduce
// (root >= 0) is the same with only the root copying the result out.
weft_status_t allreduce_large(Module *m, const void *src, void *rbuf, size_t count,
                              weft_datatype_t *type, weft_op_t *op, weft_comm_t *comm, int root)
{
    const int n = weft_comm_size(comm), me = weft_comm_rank(comm);
    const size_t es = weft_datatype_size(type), per = m->large / es, total = count * es;
    if (!usable(m, comm))
        return WEFT_ERR_PROC_FAILED;
    const char *in = static_cast<const char *>(src);
    char *out = static_cast<char *>(rbuf), *mine = large_slot(m, n, me),
         *result = large_result(m, n);
    // Every rank has read the large slots of the last allgather, alltoall or bcast chunk (an
    // allreduce's ranks have all read them at its second arrival).
    if (weft_status_t rc = all_done(m, comm, m->large_read); rc != WEFT_SUCCESS)
        return rc;
    for (size_t done = 0; done < count; done += per) {
        const size_t c = std::min(per, count - done);
        slot_bytes(mine) = total;
        std::memcpy(mine, in + done * es, c * es);
        if (weft_status_t rc = step(m, comm); rc != WEFT_SUCCESS)
            return rc;
        // Every rank sees every rank's count: all of them refuse a mismatch alike.
        for (int r = 0; done == 0 && r < n; ++r)
            if (slot_bytes(large_slot(m, n, r)) != total)
                return WEFT_ERR_TRUNCATE;
        // This rank's slice, folded x0 op (x1 op (... op x(n-1))): the rank order of a
        // non-commutative op, with MPI's associativity.
        const size_t lo = c * size_t(me) / size_t(n), hi = c * size_t(me + 1) / size_t(n);
        if (hi > lo) {
            std::memcpy(result + lo * es, large_slot(m, n, n - 1) + lo * es, (hi - lo) * es);
            for (int r = n - 2; r >= 0; --r)
                if (weft_status_t rc = weft_op_reduce(op, large_slot(m, n, r) + lo * es,
                                                      result + lo * es, hi - lo, type);
                    rc != WEFT_SUCCESS)
                    return rc; // the same at every rank: the op and type are the same
        }
        if (weft_status_t rc = step(m, comm); rc != WEFT_SUCCESS)
            return rc;
        if (root < 0 || me == root)
            std::memcpy(out + done * es, result, c * es);
    }
    return WEFT_SUCCESS;
}

// The stamp of rank's half of its large slot (Head::gen1).
std::atomic<uint32_t> &half_stamp(Module *m, int n, int rank, unsigned half)
{
    Head &h = head(large_slot(m, n, rank));
    return half ? h.gen1 : h.gen;
}

// A reduce that fits half a large slot (chunk_room), through the large slots with the root
// folding: every other rank copies its part into its half of the slot (the halves taken in
// turn, as the exchange chunks take them), stamps it (half_stamp) and goes on; the root waits for
// the stamps and folds x0 op (x1 op (... op x(n-1))) (MPI's order) straight into its result. No
// arrival, and no rank but the root waits for more than the root's reads of the half it writes,
// from two calls back: in a loop, the others copy in the next call's parts while the root folds
// this one's. (Copying in, folding a slice each and copying out, with two arrivals, a 2-rank
// reduce of 64 KiB took 13.1 us, and by the modules below 5.1; docs/performance.md.)
weft_status_t reduce_at_root(Module *m, const void *sbuf, void *rbuf, size_t count,
                             weft_datatype_t *type, weft_op_t *op, int root, weft_comm_t *comm)
{
    const int n = weft_comm_size(comm), me = weft_comm_rank(comm);
    const size_t total = count * weft_datatype_size(type);
    if (!usable(m, comm))
        return WEFT_ERR_PROC_FAILED;
    const unsigned half = chunk_room(m) < m->large ? m->chunks++ & 1 : 0;
    if (weft_status_t rc = all_done(m, comm, m->half_read[half]); rc != WEFT_SUCCESS)
        return rc;
    const uint32_t gen = ++m->generation;
    Finish f{m, comm, gen};
    m->large_read = m->half_read[half] = gen;
    const bool in_place = sbuf == WEFT_IN_PLACE;
    char *mine = chunk_slot(m, n, me, half);
    if (me != root || (in_place && root != n - 1)) {
        // (The root's own part in its slot only when its result, which holds it, is written
        // with the last rank's part first.)
        std::memcpy(mine, in_place ? rbuf : sbuf, total);
        slot_bytes(mine) = total;
    }
    half_stamp(m, n, me, half).store(gen, std::memory_order_release); // (the root's: no data)
    if (me != root)
        return WEFT_SUCCESS;
    if (weft_status_t rc = wait_stamps(
            m, comm, n, gen, [&](int r) -> auto & { return half_stamp(m, n, r, half); });
        rc != WEFT_SUCCESS)
        return rc;
    for (int r = 0; r < n; ++r)
        if (r != root && slot_bytes(chunk_slot(m, n, r, half)) != total)
            return WEFT_ERR_TRUNCATE;
    auto part = [&](int r) -> const void * {
        if (r != root)
            return chunk_slot(m, n, r, half);
        return in_place ? (root == n - 1 ? rbuf : mine) : sbuf;
    };
    if (part(n - 1) != rbuf)
        std::memcpy(rbuf, part(n - 1), total);
    for (int r = n - 2; r >= 0; --r)
        if (weft_status_t rc = weft_op_reduce(op, part(r), rbuf, count, type); rc != WEFT_SUCCESS)
            return rc;
    return WEFT_SUCCESS;
}

// Whether an allreduce or reduce too large for the small slots goes through the large ones:
// if the segment has them, the data is contiguous and an element fits (the same at every
// rank: the count and type are).
bool large_ok(Module *m, weft_datatype_t *type, size_t count)
{
    return m->large && count > 0 && weft_datatype_is_contiguous(type, count) &&
           weft_datatype_size(type) <= m->large;
}

weft_status_t allreduce(const void *sbuf, void *rbuf, size_t count, weft_datatype_t *type,
                        weft_op_t *op, weft_comm_t *comm, weft_coll_module_t *module)
{
    Module *m = self(module);
    const size_t bytes = count * weft_datatype_size(type);
    const int n = weft_comm_size(comm);
    if (!fits(type, count, allreduce_max(n))) {
        if (!large_ok(m, type, count))
            return WEFT_ERR_NOT_SUPPORTED;
        if (weft_status_t rc = ready(m, comm); rc != WEFT_SUCCESS)
            return rc;
        return large_call(
            m, comm, kAllreduce, bytes, 0,
            [&] {
                return allreduce_large(m, sbuf == WEFT_IN_PLACE ? rbuf : sbuf, rbuf, count, type,
                                       op, comm, -1);
            },
            nullptr, WEFT_SM_BELOW(coll_allreduce, sbuf, rbuf, count, type, op, comm));
    }
    if (weft_status_t rc = ready(m, comm); rc != WEFT_SUCCESS)
        return rc;
    const uint32_t gen = m->generation + 1;
    if (weft_status_t rc = writable(m, comm, gen); rc != WEFT_SUCCESS)
        return rc;
    put(m, gen, n, weft_comm_rank(comm), sbuf == WEFT_IN_PLACE ? rbuf : sbuf, bytes);
    if (weft_status_t rc = stamp_and_wait(m, comm); rc != WEFT_SUCCESS)
        return rc;
    Finish f{m, comm, gen};
    return bytes ? fold(m, gen, n, rbuf, count, bytes, type, op) : WEFT_SUCCESS;
}

// The same with the result at the root only, and no arrival: each rank stamps its slot with
// the generation once its part is there and leaves; the root waits for every stamp, then folds.
weft_status_t reduce_single(Module *m, const void *sbuf, void *rbuf, size_t count,
                            weft_datatype_t *type, weft_op_t *op, int root, weft_comm_t *comm);

weft_status_t reduce(const void *sbuf, void *rbuf, size_t count, weft_datatype_t *type,
                     weft_op_t *op, int root, weft_comm_t *comm, weft_coll_module_t *module)
{
    Module *m = self(module);
    const size_t bytes = count * weft_datatype_size(type);
    const int n = weft_comm_size(comm), me = weft_comm_rank(comm);
    if (!fits(type, count, kSlot)) {
        if (!large_ok(m, type, count))
            return WEFT_ERR_NOT_SUPPORTED;
        if (weft_status_t rc = ready(m, comm); rc != WEFT_SUCCESS)
            return rc;
        // MPI_IN_PLACE is the root's only.
        return large_call(
            m, comm, kReduce, bytes, 0,
            [&] {
                if (bytes <= chunk_room(m))
                    return reduce_at_root(m, sbuf, rbuf, count, type, op, root, comm);
                return allreduce_large(m, sbuf == WEFT_IN_PLACE ? rbuf : sbuf, rbuf, count, type,
                                       op, comm, root);
            },
            [&] { return reduce_single(m, sbuf, rbuf, count, type, op, root, comm); },
            WEFT_SM_BELOW(coll_reduce, sbuf, rbuf, count, type, op, root, comm));
    }
    if (weft_status_t rc = ready(m, comm); rc != WEFT_SUCCESS)
        return rc;
    if (!usable(m, comm))
        return WEFT_ERR_PROC_FAILED;
    const uint32_t gen = ++m->generation;
    Finish f{m, comm, gen};
    if (weft_status_t rc = writable(m, comm, gen); rc != WEFT_SUCCESS)
        return rc;
    put(m, gen, n, me, sbuf == WEFT_IN_PLACE ? rbuf : sbuf, bytes);
    head(slot(m, gen, n, me)).gen.store(gen, std::memory_order_release);
    if (me != root)
        return WEFT_SUCCESS;
    if (weft_status_t rc = wait_stamps(
            m, comm, n, gen, [&](int r) -> auto & { return head(slot(m, gen, n, r)).gen; });
        rc != WEFT_SUCCESS)
        return rc;
    // The next generation's lines from the others, which in a loop of reduces they may have
    // written already (they do not wait for the root): asked for now, they come in while this
    // one is folded.
    for (int r = 0; r < n; ++r)
        if (r != me)
            __builtin_prefetch(&head(slot(m, gen + 1, n, r)));
    return bytes ? fold(m, gen, n, rbuf, count, bytes, type, op) : WEFT_SUCCESS;
}

// The data of count elements of type at src into dst as packed bytes, and back: a type with
// gaps goes through the datatype engine. bcast, allgather and alltoall may be called with other
// types at other ranks (the type signatures agree), so whether coll/sm takes a call depends on
// the bytes alone, never on the local type: every rank makes the same choice.
void pack(char *dst, const void *src, size_t count, weft_datatype_t *type, size_t bytes)
{
    if (weft_datatype_is_contiguous(type, count))
        std::memcpy(dst, src, bytes);
    else
        weft_datatype_copy(dst, bytes, weft_datatype_bytes(), src, count, type);
}

void unpack(void *dst, size_t count, weft_datatype_t *type, const char *src, size_t bytes)
{
    if (weft_datatype_is_contiguous(type, count))
        std::memcpy(dst, src, bytes);
    else
        weft_datatype_copy(dst, count, type, src, bytes, weft_datatype_bytes());
}

// A rank's part into its slot: the count elements of type at src, which it says are `says`
// bytes (what it was given to send: a reader checks that against what it expects; more than a
// slot holds is cut, and refused by every reader).
void put_part(char *mine, size_t says, const void *src, size_t count, weft_datatype_t *type)
{
    const size_t bytes = std::min(says, kSlot);
    if (weft_datatype_is_contiguous(type, count))
        fill(mine, src, bytes);
    else
        pack(mine, src, count, type, bytes);
    slot_bytes(mine) = says;
}

// Block r of count elements of type from base.
char *block(void *base, int r, size_t count, weft_datatype_t *type)
{
    return static_cast<char *>(base) + ptrdiff_t(r) * ptrdiff_t(count) * weft_datatype_extent(type);
}

weft_status_t bcast_large(Module *m, void *buf, size_t count, weft_datatype_t *type, int root,
                          weft_comm_t *comm);
weft_status_t bcast_single(Module *m, void *buf, size_t count, weft_datatype_t *type, int root,
                           weft_comm_t *comm);

// The root's data in its slot, stamped with the generation; the others wait for the stamp and
// copy it out. No arrival: the root goes on at once, as a message-based bcast's root does.
weft_status_t bcast(void *buf, size_t count, weft_datatype_t *type, int root, weft_comm_t *comm,
                    weft_coll_module_t *module)
{
    Module *m = self(module);
    const size_t bytes = count * weft_datatype_size(type);
    const int n = weft_comm_size(comm), me = weft_comm_rank(comm);
    if (bytes > kSlot) {
        if (!m->large)
            return WEFT_ERR_NOT_SUPPORTED;
        if (weft_status_t rc = ready(m, comm); rc != WEFT_SUCCESS)
            return rc;
        return large_call(
            m, comm, kBcast, bytes, kExchangeMinor,
            [&] { return bcast_large(m, buf, count, type, root, comm); },
            [&] { return bcast_single(m, buf, count, type, root, comm); },
            WEFT_SM_BELOW(coll_bcast, buf, count, type, root, comm));
    }
    if (weft_status_t rc = ready(m, comm); rc != WEFT_SUCCESS)
        return rc;
    if (!usable(m, comm))
        return WEFT_ERR_PROC_FAILED;
    const uint32_t gen = ++m->generation;
    Finish f{m, comm, gen};
    char *from = slot(m, gen, n, root);
    if (me == root) {
        if (weft_status_t rc = writable(m, comm, gen); rc != WEFT_SUCCESS)
            return rc;
        put_part(from, bytes, buf, count, type);
        head(from).gen.store(gen, std::memory_order_release);
        return WEFT_SUCCESS;
    }
    if (weft_status_t rc = wait_for(
            m, comm, [&] { return head(from).gen.load(std::memory_order_acquire) == gen; });
        rc != WEFT_SUCCESS)
        return rc;
    const size_t sent = slot_bytes(from);
    if (sent > bytes)
        return WEFT_ERR_TRUNCATE;
    unpack(buf, sent / std::max<size_t>(weft_datatype_size(type), 1), type, from, sent);
    return WEFT_SUCCESS;
}

// Allgathers and alltoalls above the small slots, through the large ones, in chunks (each in a
// half of the slots, chunk_room): each rank waits until every rank has read the half it writes
// at its last use (their `done` line; already so once they arrived at the chunk after it),
// writes its part, arrives, and reads the others'. One wait per chunk. Data whose type has gaps
// goes through a packed copy of the whole message at either end, so that chunks are bytes whatever
// each rank's type. Bcasts go the same way.
//
// One chunk: write(slot) fills this rank's half slot (unless what it says it sends is not what
// it expects); read(at) takes what it needs from every rank's (at(rank)). `says`, the bytes
// per block this rank sends, goes in the slot's header: on the first chunk every rank compares
// every rank's with `expect`, and all refuse a mismatch alike (a rank that returned alone
// would leave the others waiting).
template <class Write, class Read>
weft_status_t exchange_chunk(Module *m, weft_comm_t *comm, bool first, uint64_t says,
                             uint64_t expect, Write write, Read read)
{
    const int n = weft_comm_size(comm);
    // The same half at every rank: they run the same chunks (a mismatch ends every rank's
    // operation at its first chunk).
    const unsigned half = chunk_room(m) < m->large ? m->chunks++ & 1 : 0;
    if (weft_status_t rc = all_done(m, comm, m->half_read[half]); rc != WEFT_SUCCESS)
        return rc;
    char *mine = chunk_slot(m, n, weft_comm_rank(comm), half);
    slot_bytes(mine) = says;
    if (says == expect)
        write(mine);
    if (weft_status_t rc = arrive_and_wait(m, comm); rc != WEFT_SUCCESS)
        return rc;
    Finish f{m, comm, m->generation};
    m->large_read = m->half_read[half] = m->generation;
    for (int r = 0; first && r < n; ++r)
        if (slot_bytes(chunk_slot(m, n, r, half)) != expect)
            return WEFT_ERR_TRUNCATE;
    read([&](int r) { return chunk_slot(m, n, r, half); });
    return WEFT_SUCCESS;
}

// What an allgather's or alltoall's call says of its blocks: the ranks, this rank, whether in
// place, the bytes of a block this rank expects (b) and of one it sends (says).
struct Blocks {
    int n, me;
    bool in_place;
    size_t b, says;
};
Blocks blocks_of(weft_comm_t *comm, const void *sbuf, size_t scount, weft_datatype_t *stype,
                 size_t rcount, weft_datatype_t *rtype)
{
    const bool in_place = sbuf == WEFT_IN_PLACE;
    const size_t b = rcount * weft_datatype_size(rtype);
    return {weft_comm_size(comm), weft_comm_rank(comm), in_place, b,
            in_place ? b : scount * weft_datatype_size(stype)};
}

// count elements of type at base as packed bytes: the buffer itself if contiguous, else a
// packed copy in scratch (fill: packed now; finish() unpacks it).
struct Packed {
    char *bytes;
    std::vector<char> scratch;
    Packed(const Packed &) = delete;
    Packed &operator=(const Packed &) = delete;
    Packed(const void *base, size_t count, weft_datatype_t *type, size_t total, bool fill)
    {
        if (weft_datatype_is_contiguous(type, count)) {
            bytes = static_cast<char *>(const_cast<void *>(base));
            return;
        }
        scratch.resize(std::max<size_t>(total, 1));
        bytes = scratch.data();
        if (fill)
            pack(bytes, base, count, type, total);
    }
    void finish(void *base, size_t count, weft_datatype_t *type, size_t total)
    {
        if (!scratch.empty())
            unpack(base, count, type, bytes, total);
    }
};

weft_status_t allgather_large(Module *m, const void *sbuf, size_t scount, weft_datatype_t *stype,
                              void *rbuf, size_t rcount, weft_datatype_t *rtype, weft_comm_t *comm)
{
    const auto [n, me, in_place, b, says] = blocks_of(comm, sbuf, scount, stype, rcount, rtype);
    if (!usable(m, comm))
        return WEFT_ERR_PROC_FAILED;
    Packed out(rbuf, rcount * size_t(n), rtype, b * size_t(n), sbuf == WEFT_IN_PLACE);
    if (sbuf != WEFT_IN_PLACE && says == b) {
        Packed in(sbuf, scount, stype, says, true);
        std::memcpy(out.bytes + size_t(me) * b, in.bytes, b);
    }
    const char *own = out.bytes + size_t(me) * b;
    const size_t room = chunk_room(m);
    for (size_t off = 0; off < b; off += room) {
        const size_t c = std::min(room, b - off);
        if (weft_status_t rc = exchange_chunk(
                m, comm, off == 0, says, b, [&](char *slot) { std::memcpy(slot, own + off, c); },
                [&](auto at) {
                    for (int r = 0; r < n; ++r)
                        if (r != me)
                            std::memcpy(out.bytes + size_t(r) * b + off, at(r), c);
                });
            rc != WEFT_SUCCESS)
            return rc;
    }
    out.finish(rbuf, rcount * size_t(n), rtype, b * size_t(n));
    return WEFT_SUCCESS;
}

weft_status_t alltoall_large(Module *m, const void *sbuf, size_t scount, weft_datatype_t *stype,
                             void *rbuf, size_t rcount, weft_datatype_t *rtype, weft_comm_t *comm)
{
    const auto [n, me, in_place, b, says] = blocks_of(comm, sbuf, scount, stype, rcount, rtype);
    if (!usable(m, comm))
        return WEFT_ERR_PROC_FAILED;
    // In place, the data to send is read from rbuf before each chunk's bytes of it are written.
    Packed in(in_place ? rbuf : sbuf, (in_place ? rcount : scount) * size_t(n),
              in_place ? rtype : stype, says * size_t(n), true);
    Packed out(rbuf, rcount * size_t(n), rtype, b * size_t(n), false);
    // The own block straight across (in place and contiguous: already there).
    if (says == b && in.bytes != out.bytes)
        std::memcpy(out.bytes + size_t(me) * b, in.bytes + size_t(me) * b, b);
    // A slot holds a piece of each block for another rank, in rank order: the piece for rank
    // `to` from rank `from` is the (to - (to > from))-th.
    auto piece = [](int from, int to) { return size_t(to - (to > from ? 1 : 0)); };
    const size_t per = std::max<size_t>(chunk_room(m) / size_t(n - 1), 1); // of a block a chunk
    for (size_t off = 0; off < b; off += per) {
        const size_t c = std::min(per, b - off);
        if (weft_status_t rc = exchange_chunk(
                m, comm, off == 0, says, b,
                [&](char *slot) {
                    for (int r = 0; r < n; ++r)
                        if (r != me)
                            std::memcpy(slot + piece(me, r) * c, in.bytes + size_t(r) * b + off, c);
                },
                [&](auto at) {
                    for (int r = 0; r < n; ++r)
                        if (r != me)
                            std::memcpy(out.bytes + size_t(r) * b + off, at(r) + piece(r, me) * c,
                                        c);
                });
            rc != WEFT_SUCCESS)
            return rc;
    }
    out.finish(rbuf, rcount * size_t(n), rtype, b * size_t(n));
    return WEFT_SUCCESS;
}

// A bcast above the small slots, in chunks of coll_sm_large bytes, one arrival each: the root
// copies the chunk into its large slot, and once every rank has arrived the others copy it out.
// Unlike a small bcast the root waits for the others at every chunk, as the slot is written
// again at the next.
weft_status_t bcast_large(Module *m, void *buf, size_t count, weft_datatype_t *type, int root,
                          weft_comm_t *comm)
{
    const int me = weft_comm_rank(comm);
    const size_t bytes = count * weft_datatype_size(type);
    if (!usable(m, comm))
        return WEFT_ERR_PROC_FAILED;
    Packed data(buf, count, type, bytes, me == root);
    const size_t room = chunk_room(m);
    for (size_t off = 0; off < bytes; off += room) {
        const size_t c = std::min(room, bytes - off);
        if (weft_status_t rc = exchange_chunk(
                m, comm, off == 0, bytes, bytes,
                [&](char *slot) {
                    if (me == root)
                        std::memcpy(slot, data.bytes + off, c);
                },
                [&](auto at) {
                    if (me != root)
                        std::memcpy(data.bytes + off, at(root), c);
                });
            rc != WEFT_SUCCESS)
            return rc;
    }
    if (me != root)
        data.finish(buf, count, type, bytes);
    return WEFT_SUCCESS;
}

// ---- The single copy (coll_sm_large_way single, or chosen): each rank reads what it needs
// straight from the others' buffers by cross-memory attach, between two arrivals. After the
// first, every rank's line says where its data is and how many bytes it sends (every rank
// checks every rank's count, and all refuse a mismatch alike); after the second, every rank has
// read what it needed, and a rank may return and its buffer change. One copy of every byte,
// made by its reader, where the slots make two; no message, where the modules below make a
// rendezvous each. Data with gaps goes through a packed copy at either end.

// The first arrival: this rank's data at addr, `says` bytes (per block) of it.
weft_status_t single_open(Module *m, weft_comm_t *comm, const void *addr, uint64_t says,
                          uint64_t expect)
{
    const int n = weft_comm_size(comm);
    if (!usable(m, comm))
        return WEFT_ERR_PROC_FAILED;
    Line &mine = lines(m)[weft_comm_rank(comm)];
    mine.addr = uint64_t(reinterpret_cast<uintptr_t>(addr));
    mine.says = says;
    if (weft_status_t rc = step(m, comm); rc != WEFT_SUCCESS)
        return rc;
    for (int r = 0; r < n; ++r)
        if (lines(m)[r].says != expect) {
            // Refused, after the second arrival all the same: until every rank has checked
            // the lines, none may write its own again (its next call would), and a rank whose
            // own count differs alone (an erroneous program) reads and arrives there too.
            const weft_status_t rc = step(m, comm);
            return rc != WEFT_SUCCESS ? rc : WEFT_ERR_TRUNCATE;
        }
    return WEFT_SUCCESS;
}

// The reads done (err: the first errno, 0 if none): the second arrival, then what to return.
weft_status_t single_close(Module *m, weft_comm_t *comm, int err)
{
    const weft_status_t rc = step(m, comm);
    if (err)
        return err == ESRCH ? WEFT_ERR_PROC_FAILED : WEFT_ERR_NOT_AVAILABLE;
    return rc;
}

// bytes of rank r's data, from offset `at` of what it published, into dst.
int read_from(Module *m, int r, void *dst, size_t at, size_t bytes)
{
    return read_peer(lines(m)[r].pid, dst, lines(m)[r].addr + at, bytes);
}

// Every other rank's block (b bytes from offset `at` of what it published) into block r of
// dst, then the second arrival.
weft_status_t read_blocks(Module *m, weft_comm_t *comm, char *dst, size_t b, size_t at)
{
    const int n = weft_comm_size(comm), me = weft_comm_rank(comm);
    int err = 0;
    for (int k = 1; k < n && !err; ++k) {
        const int r = (me + k) % n;
        err = read_from(m, r, dst + size_t(r) * b, at, b);
    }
    return single_close(m, comm, err);
}

weft_status_t bcast_single(Module *m, void *buf, size_t count, weft_datatype_t *type, int root,
                           weft_comm_t *comm)
{
    const int me = weft_comm_rank(comm);
    const size_t bytes = count * weft_datatype_size(type);
    Packed data(buf, count, type, bytes, me == root);
    if (weft_status_t rc = single_open(m, comm, data.bytes, bytes, bytes); rc != WEFT_SUCCESS)
        return rc;
    const int err = me == root ? 0 : read_from(m, root, data.bytes, 0, bytes);
    if (weft_status_t rc = single_close(m, comm, err); rc != WEFT_SUCCESS)
        return rc;
    if (me != root)
        data.finish(buf, count, type, bytes);
    return WEFT_SUCCESS;
}

// A reduce above the small slots (contiguous data, large_ok), every rank at work: the count is
// cut in n blocks of whole elements, and rank r folds block r of every rank's contribution,
// x0 op (x1 op (... op x(n-1))), MPI's order for a non-commutative op, from the highest rank
// down, then writes it into the root's result by cross-memory attach (the root, its own block
// straight). Each rank reads n - 1 blocks of an n-th of the data and writes one; where the root
// read and folded everything alone, a 1 MiB reduce took 227 us at 2 ranks and 653 at 4 on a
// 2-vCPU Xeon VM, against 151 and 373 this way. In place (the root's
// only), the root's contribution is its result buffer: block r of it is read only by rank r,
// before rank r writes block r there. A rank that could not write its block says so in its
// line (failed: this call's number; failure: why), which the root reads after the second arrival
// (a rank writes it again only after the next call's first arrival, which waits for the root).
weft_status_t reduce_single(Module *m, const void *sbuf, void *rbuf, size_t count,
                            weft_datatype_t *type, weft_op_t *op, int root, weft_comm_t *comm)
{
    const int n = weft_comm_size(comm), me = weft_comm_rank(comm);
    const size_t size = weft_datatype_size(type), bytes = count * size;
    const char *own = static_cast<const char *>(sbuf == WEFT_IN_PLACE ? rbuf : sbuf);
    const uint32_t call = ++m->reduces;
    if (me == root)
        lines(m)[me].result = uint64_t(reinterpret_cast<uintptr_t>(rbuf));
    if (weft_status_t rc = single_open(m, comm, own, bytes, bytes); rc != WEFT_SUCCESS)
        return rc;
    const size_t per = count / size_t(n), more = count % size_t(n), r0 = size_t(me);
    const size_t elems = per + (r0 < more ? 1 : 0);
    const size_t at = (r0 * per + std::min(r0, more)) * size, len = elems * size;
    int err = 0;
    weft_status_t folded = WEFT_SUCCESS;
    // The root folds straight into its result, unless in place (its own block is there).
    const bool direct = me == root && sbuf != WEFT_IN_PLACE;
    const size_t need = len > 0 ? (direct ? len : 2 * len) : 0;
    if (m->scratch.size() < need) {
        try {
            m->scratch.resize(need);
        } catch (const std::bad_alloc &) {
            err = ENOMEM; // (after the first arrival: the second must come all the same)
        }
    }
    if (len > 0 && !err) {
        char *acc = direct ? static_cast<char *>(rbuf) + at : m->scratch.data();
        char *part = m->scratch.data() + (direct ? 0 : len);
        for (int r = n - 1; r >= 0 && !err && folded == WEFT_SUCCESS; --r) {
            char *into = r == n - 1 ? acc : part;
            const char *x = own + at;
            if (r != me) {
                err = read_from(m, r, into, at, len);
                x = into;
            } else if (r == n - 1) {
                std::memcpy(acc, x, len);
            }
            if (r != n - 1 && !err)
                folded = weft_op_reduce(op, x, acc, elems, type); // acc = x op acc
        }
        if (!err && folded == WEFT_SUCCESS && !direct) {
            if (me == root)
                std::memcpy(static_cast<char *>(rbuf) + at, acc, len);
            else
                err = write_peer(lines(m)[root].pid, lines(m)[root].result + at, acc, len);
        }
    }
    if (me != root && (err || folded != WEFT_SUCCESS)) {
        lines(m)[me].failure = folded != WEFT_SUCCESS ? folded
                               : err == ESRCH         ? WEFT_ERR_PROC_FAILED
                                                      : WEFT_ERR_NOT_AVAILABLE;
        lines(m)[me].failed = call;
    }
    if (weft_status_t rc = single_close(m, comm, err); rc != WEFT_SUCCESS)
        return rc;
    if (me == root)
        for (int r = 0; r < n; ++r)
            if (r != me && lines(m)[r].failed == call)
                return weft_status_t(lines(m)[r].failure);
    return folded;
}

weft_status_t allgather_single(Module *m, const void *sbuf, size_t scount, weft_datatype_t *stype,
                               void *rbuf, size_t rcount, weft_datatype_t *rtype, weft_comm_t *comm)
{
    const auto [n, me, in_place, b, says] = blocks_of(comm, sbuf, scount, stype, rcount, rtype);
    Packed out(rbuf, rcount * size_t(n), rtype, b * size_t(n), in_place);
    // The own block: read by the others from where it is (in place, this rank writes only the
    // others' blocks meanwhile).
    Packed in(in_place ? out.bytes + size_t(me) * b : sbuf, in_place ? b : scount,
              in_place ? weft_datatype_bytes() : stype, says, true);
    if (weft_status_t rc = single_open(m, comm, in.bytes, says, b); rc != WEFT_SUCCESS)
        return rc;
    if (!in_place)
        std::memcpy(out.bytes + size_t(me) * b, in.bytes, b);
    if (weft_status_t rc = read_blocks(m, comm, out.bytes, b, 0); rc != WEFT_SUCCESS)
        return rc;
    out.finish(rbuf, rcount * size_t(n), rtype, b * size_t(n));
    return WEFT_SUCCESS;
}

weft_status_t alltoall_single(Module *m, const void *sbuf, size_t scount, weft_datatype_t *stype,
                              void *rbuf, size_t rcount, weft_datatype_t *rtype, weft_comm_t *comm)
{
    const auto [n, me, in_place, b, says] = blocks_of(comm, sbuf, scount, stype, rcount, rtype);
    Packed in(in_place ? rbuf : sbuf, (in_place ? rcount : scount) * size_t(n),
              in_place ? rtype : stype, says * size_t(n), true);
    // In place the others read what this rank sends while its receive buffer fills: from a
    // copy.
    std::vector<char> copy;
    const char *src = in.bytes;
    if (in_place && in.scratch.empty()) {
        copy.assign(in.bytes, in.bytes + says * size_t(n));
        src = copy.data();
    }
    Packed out(rbuf, rcount * size_t(n), rtype, b * size_t(n), false);
    if (weft_status_t rc = single_open(m, comm, src, says, b); rc != WEFT_SUCCESS)
        return rc;
    std::memcpy(out.bytes + size_t(me) * b, src + size_t(me) * b, b);
    if (weft_status_t rc = read_blocks(m, comm, out.bytes, b, size_t(me) * b); rc != WEFT_SUCCESS)
        return rc;
    out.finish(rbuf, rcount * size_t(n), rtype, b * size_t(n));
    return WEFT_SUCCESS;
}

// Each rank's block in its slot, then every slot into the receive buffer in rank order.
weft_status_t allgather(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                        size_t rcount, weft_datatype_t *rtype, weft_comm_t *comm,
                        weft_coll_module_t *module)
{
    Module *m = self(module);
    const size_t bytes = rcount * weft_datatype_size(rtype);
    const int n = weft_comm_size(comm), me = weft_comm_rank(comm);
    const bool in_place = sbuf == WEFT_IN_PLACE;
    if (bytes > kSlot) {
        if (!m->large)
            return WEFT_ERR_NOT_SUPPORTED;
        if (weft_status_t rc = ready(m, comm); rc != WEFT_SUCCESS)
            return rc;
        return large_call(
            m, comm, kAllgather, bytes, kExchangeMinor,
            [&] { return allgather_large(m, sbuf, scount, stype, rbuf, rcount, rtype, comm); },
            [&] { return allgather_single(m, sbuf, scount, stype, rbuf, rcount, rtype, comm); },
            WEFT_SM_BELOW(coll_allgather, sbuf, scount, stype, rbuf, rcount, rtype, comm));
    }
    if (weft_status_t rc = ready(m, comm); rc != WEFT_SUCCESS)
        return rc;
    const uint32_t gen = m->generation + 1;
    if (weft_status_t rc = writable(m, comm, gen); rc != WEFT_SUCCESS)
        return rc;
    char *mine = slot(m, gen, n, me);
    if (in_place)
        put_part(mine, bytes, block(rbuf, me, rcount, rtype), rcount, rtype);
    else
        put_part(mine, scount * weft_datatype_size(stype), sbuf, scount, stype);
    if (weft_status_t rc = stamp_and_wait(m, comm); rc != WEFT_SUCCESS)
        return rc;
    Finish f{m, comm, gen};
    for (int r = 0; r < n; ++r)
        if (!same_size(m, gen, n, r, bytes))
            return WEFT_ERR_TRUNCATE;
    for (int r = 0; r < n; ++r)
        if (r != me || !in_place)
            unpack(block(rbuf, r, rcount, rtype), rcount, rtype, slot(m, gen, n, r), bytes);
    return WEFT_SUCCESS;
}

// Each rank's whole send buffer (a block for every rank) in its slot; then block `me` of every
// slot into the receive buffer.
weft_status_t alltoall(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                       size_t rcount, weft_datatype_t *rtype, weft_comm_t *comm,
                       weft_coll_module_t *module)
{
    Module *m = self(module);
    const int n = weft_comm_size(comm), me = weft_comm_rank(comm);
    const size_t bytes = rcount * weft_datatype_size(rtype), all = bytes * size_t(n);
    const bool in_place = sbuf == WEFT_IN_PLACE;
    if (all > kSlot) {
        if (chunk_room(m) < size_t(n - 1)) // a chunk holds a byte of every other block at least
            return WEFT_ERR_NOT_SUPPORTED;
        if (weft_status_t rc = ready(m, comm); rc != WEFT_SUCCESS)
            return rc;
        return large_call(
            m, comm, kAlltoall, bytes, kExchangeMinor,
            [&] { return alltoall_large(m, sbuf, scount, stype, rbuf, rcount, rtype, comm); },
            [&] { return alltoall_single(m, sbuf, scount, stype, rbuf, rcount, rtype, comm); },
            WEFT_SM_BELOW(coll_alltoall, sbuf, scount, stype, rbuf, rcount, rtype, comm));
    }
    if (weft_status_t rc = ready(m, comm); rc != WEFT_SUCCESS)
        return rc;
    const uint32_t gen = m->generation + 1;
    if (weft_status_t rc = writable(m, comm, gen); rc != WEFT_SUCCESS)
        return rc;
    char *mine = slot(m, gen, n, me);
    if (in_place)
        put_part(mine, all, rbuf, rcount * size_t(n), rtype);
    else
        put_part(mine, scount * weft_datatype_size(stype) * size_t(n), sbuf, scount * size_t(n),
                 stype);
    if (weft_status_t rc = stamp_and_wait(m, comm); rc != WEFT_SUCCESS)
        return rc;
    Finish f{m, comm, gen};
    for (int r = 0; r < n; ++r)
        if (!same_size(m, gen, n, r, all))
            return WEFT_ERR_TRUNCATE;
    for (int r = 0; r < n; ++r)
        unpack(block(rbuf, r, rcount, rtype), rcount, rtype,
               slot(m, gen, n, r) + size_t(me) * bytes, bytes);
    return WEFT_SUCCESS;
}

// Point-to-point for the set-up, on the communicator's collective tag.
weft_status_t send(weft_comm_t *comm, int to, int tag, const void *buf, size_t bytes)
{
    weft_pml_module_t *p = weft_pml_selected();
    return p->pml_send(p, buf, bytes, weft_datatype_bytes(), to, tag, WEFT_SEND_STANDARD, comm);
}

weft_status_t recv(weft_comm_t *comm, int from, int tag, void *buf, size_t bytes)
{
    weft_pml_module_t *p = weft_pml_selected();
    weft_msg_status_t st{};
    return p->pml_recv(p, buf, bytes, weft_datatype_bytes(), from, tag, comm, &st);
}

Shared *map_segment(int fd, size_t size)
{
    void *p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    return p == MAP_FAILED ? nullptr : static_cast<Shared *>(p);
}

// Whether the single copy may be taken at all (coll_sm_large_way auto or single, the same at
// every rank): only then do the ranks let the others read them and check that they can.
bool single_wanted(const Module *m)
{
    return m->large_way == LargeWay::automatic || m->large_way == LargeWay::single;
}

// This rank's process id and where it mapped the segment, in its line, and others allowed to
// read its memory (cross-memory attach: not only its parent; as btl/sm's single copy does).
void publish(Module *m, int rank)
{
    if (single_wanted(m))
        prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    lines(m)[rank].pid = int32_t(getpid());
    lines(m)[rank].base = uint64_t(reinterpret_cast<uintptr_t>(m->shared));
}

// Whether this rank can read rank 0's memory by cross-memory attach: rank 0's line, read
// through rank 0's own mapping of the segment, must match this rank's view of it.
bool attach_works(Module *m)
{
    const Line &zero = lines(m)[0];
    Line got{};
    const uint64_t at = zero.base + uint64_t(reinterpret_cast<char *>(&lines(m)[0]) -
                                             reinterpret_cast<char *>(m->shared));
    // And write it: a reduce's ranks write their blocks into the root's memory. The same value
    // the field holds, so nothing changes.
    const uint64_t pid_at = zero.base + uint64_t(reinterpret_cast<const char *>(&zero.pid) -
                                                 reinterpret_cast<char *>(m->shared));
    return read_peer(zero.pid, &got, at, sizeof got) == 0 && got.pid == zero.pid &&
           got.base == zero.base && write_peer(zero.pid, pid_at, &zero.pid, sizeof zero.pid) == 0;
}

// The set-up (see the top of this file). A member that fails meanwhile makes it fail at the
// others (the segment's counters could never settle): WEFT_ERR_PROC_FAILED where that is
// known, and later calls of this module fail too. A segment that could not be made or mapped
// somewhere: WEFT_ERR_NOT_SUPPORTED, at every member, now and for every later call.
weft_status_t set_up(Module *m, weft_comm_t *comm)
{
    const int tag = weft_comm_coll_tag(comm);
    const int n = weft_comm_size(comm);
    m->size = segment_size(n, m->sets, m->large);
    char name[kNameMax] = {};
    weft_status_t rc = WEFT_SUCCESS;
    uint8_t all_ok = 0;
    if (weft_comm_rank(comm) == 0) {
        // Named after the job, so that the launcher removes it should this process die
        // before the others attached and it unlinked it.
        std::snprintf(name, sizeof name, "/dev/shm/%s-coll-%d-%u-%u",
                      weft_runtime_job_file_prefix(), int(getpid()), unsigned(weft_comm_cid(comm)),
                      unsigned(weft_runtime_world_rank()));
        const int fd = open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd >= 0) {
            std::memcpy(g_pending, name, sizeof name);
            weft_runtime_own_file(name, 1);
        }
        if (fd >= 0 && ftruncate(fd, off_t(m->size)) == 0)
            m->shared = map_segment(fd, m->size);
        if (fd >= 0)
            close(fd);
        if (!m->shared) {
            if (fd >= 0)
                unlink(name);
            weft_runtime_own_file(g_pending, 0);
            g_pending[0] = '\0';
            name[0] = '\0'; // tells the others to give up too
        } else {
            new (m->shared) Shared{};
            publish(m, 0);
        }
        // Every member hears from rank 0 whatever happens to the others (one that failed is
        // skipped: a send to it ends in error), so none waits for ever.
        // Bit 0: every rank mapped the segment; bit 1: every other rank could read this one's
        // memory by cross-memory attach.
        all_ok = m->shared == nullptr ? 0 : single_wanted(m) ? 3 : 1;
        for (int r = 1; r < n; ++r)
            if (weft_status_t e = send(comm, r, tag, name, sizeof name); e != WEFT_SUCCESS)
                rc = e;
        for (int r = 1; r < n; ++r) {
            uint8_t ok = 0;
            if (weft_status_t e = recv(comm, r, tag, &ok, 1); e != WEFT_SUCCESS)
                rc = e;
            all_ok &= ok;
        }
        if (!(all_ok & 1))
            all_ok = 0;
        // And this one can read every other: their lines are written, they answered.
        for (int r = 1; r < n && (all_ok & 2); ++r) {
            Line got{};
            const Line &their = lines(m)[r];
            const uint64_t at = their.base + uint64_t(reinterpret_cast<char *>(&lines(m)[r]) -
                                                      reinterpret_cast<char *>(m->shared));
            const uint64_t pid_at =
                their.base + uint64_t(reinterpret_cast<const char *>(&their.pid) -
                                      reinterpret_cast<char *>(m->shared));
            if (read_peer(their.pid, &got, at, sizeof got) != 0 || got.pid != their.pid ||
                write_peer(their.pid, pid_at, &their.pid, sizeof their.pid) != 0)
                all_ok &= 1;
        }
        if (name[0])
            unlink(name); // everyone who could map it has
        weft_runtime_own_file(g_pending, 0);
        g_pending[0] = '\0';
        if (rc != WEFT_SUCCESS)
            all_ok = 0;
        for (int r = 1; r < n; ++r)
            send(comm, r, tag, &all_ok, 1);
    } else {
        rc = recv(comm, 0, tag, name, sizeof name);
        name[kNameMax - 1] = '\0';
        if (rc == WEFT_SUCCESS && name[0]) {
            const int fd = open(name, O_RDWR);
            if (fd >= 0) {
                m->shared = map_segment(fd, m->size);
                close(fd);
            }
        }
        uint8_t ok = m->shared != nullptr;
        if (ok) {
            publish(m, weft_comm_rank(comm));
            ok |= uint8_t((single_wanted(m) && attach_works(m)) << 1);
        }
        if (rc == WEFT_SUCCESS)
            rc = send(comm, 0, tag, &ok, 1);
        if (rc == WEFT_SUCCESS)
            rc = recv(comm, 0, tag, &all_ok, 1);
    }
    all_ok &= 3; // what else a peer sent is not ours to read
    if (!(all_ok & 1) && m->shared) {
        munmap(m->shared, m->size);
        m->shared = nullptr;
    }
    if (all_ok & 1) {
        m->single = (all_ok & 2) != 0;
        if (weft_mca_param_int(p_verbose) >= 10 && weft_comm_rank(comm) == 0)
            weft_output(WEFT_OUTPUT_INFO,
                        "coll/sm: a communicator of %d ranks: the single copy (cross-memory "
                        "attach) %s",
                        n,
                        !single_wanted(m) ? "is not used (coll_sm_large_way)"
                        : m->single       ? "works between its ranks"
                                          : "does not work here");
        m->state = Module::ready;
        return WEFT_SUCCESS;
    }
    // A member failed (here, or as rank 0 found): this module is done for.
    if (rc != WEFT_SUCCESS || member_failed(comm)) {
        m->broken = true;
        return rc == WEFT_ERR_PROC_FAILED || rc == WEFT_SUCCESS ? WEFT_ERR_PROC_FAILED : rc;
    }
    m->state = Module::declined;
    return WEFT_ERR_NOT_SUPPORTED;
}

weft_status_t ready(Module *m, weft_comm_t *comm)
{
    if (m->state == Module::ready) [[likely]]
        return WEFT_SUCCESS;
    if (m->state == Module::declined)
        return WEFT_ERR_NOT_SUPPORTED;
    if (m->broken)
        return WEFT_ERR_PROC_FAILED;
    return set_up(m, comm);
}

weft_status_t disable(weft_coll_module_t *module, weft_comm_t *)
{
    Module *m = self(module);
    if (m->shared)
        munmap(m->shared, m->size);
    delete m;
    return WEFT_SUCCESS;
}

constexpr const char *kOperations[] = {"barrier",   "bcast",     "reduce",
                                       "allreduce", "allgather", "alltoall"};

weft_status_t register_params()
{
    const weft_mca_param_def_t defs[6] = {
        {.name = "priority",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "30",
         .help = "Priority of coll/sm's operations (through shared memory, for communicators "
                 "whose processes share one host); 0 or less turns it off.",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "operations",
         .type = WEFT_MCA_PARAM_LIST,
         .default_value = "barrier,bcast,reduce,allreduce,allgather,alltoall",
         .help = "The operations coll/sm offers (any of barrier, bcast, reduce, allreduce, "
                 "allgather, alltoall); the others come from the components below it. Each "
                 "takes messages up to 2 KiB per rank (allreduce: above 4 ranks, 256 bytes) in "
                 "its small slots, and larger ones in its large slots (coll_sm_large).",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "sets",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "0",
         .help = "Generations a communicator's segment holds at once (each a 2 KiB slot per "
                 "rank): how far a bcast's or reduce's root may run ahead of the slowest rank "
                 "before it waits. More cost memory (sets x ranks x 2 KiB per communicator); "
                 "fewer make a root wait, a context switch when the ranks outnumber the cores. "
                 "0: as many as keep a communicator's slots near 1 MiB, at least 2 and at most "
                 "128. Rounded down to a power of two.",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "0..1024"},
        {.name = "large",
         .type = WEFT_MCA_PARAM_SIZE,
         .default_value = "1m",
         .help = "Bytes of a communicator's large slots: bcasts, allreduces, reduces, "
                 "allgathers and alltoalls above the small slots go through them in chunks "
                 "(allreduce and reduce: this many bytes a chunk, two waits each; bcast: half of "
                 "it a chunk, allgather: half of it of each block, alltoall: half of it divided "
                 "among the other ranks, one wait each, the halves taken in turn). A large slot "
                 "per rank and a "
                 "result: (ranks + 1) x this much memory per "
                 "communicator, used once such an operation runs. 0: none, and coll/basic "
                 "takes them.",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "0..1g"},
        {.name = "large_way",
         .type = WEFT_MCA_PARAM_ENUM,
         .default_value = "auto",
         .help = "How bcasts, reduces, allreduces, allgathers and alltoalls above the small "
                 "slots are served: slots (coll/sm's large slots: each rank copies in, then "
                 "out), below (the modules below coll/sm: coll/basic's point-to-point "
                 "algorithms, whose large messages the PML may move with one copy), single "
                 "(bcast, reduce, allgather and alltoall: each rank reads what it needs "
                 "straight from the others' buffers by cross-memory attach, where the set-up "
                 "found it works; allreduce the slots), or auto: per operation and size class "
                 "(powers of two) "
                 "on each communicator, what runs of calls of each way measure fastest, in "
                 "rounds at the first calls and after 64, 256, ... more, the ranks' times "
                 "shared (coll_sm_verbose 10 says what was chosen and the times).",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = kLargeWayValues,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "verbose",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "0",
         .help = "10: say, at each communicator's rank 0, how many sets and what large slots "
                 "its segment has, and why, and which way each operation and size class above "
                 "the small slots takes once learnt (coll_sm_large_way auto).",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "0..100"},
    };
    weft_mca_param_t *handles[6] = {};
    weft_status_t rc =
        weft_mca_param_register_table("coll", "sm", defs, 6, sizeof defs[0], handles);
    p_priority = handles[0];
    p_operations = handles[1];
    p_sets = handles[2];
    p_large = handles[3];
    p_large_way = handles[4];
    p_verbose = handles[5];
    for (size_t i = 0; rc == WEFT_SUCCESS && i < weft_mca_param_list_count(p_operations); ++i) {
        const char *op = weft_mca_param_list_item(p_operations, i);
        if (std::none_of(std::begin(kOperations), std::end(kOperations),
                         [op](const char *k) { return std::strcmp(k, op) == 0; })) {
            weft_output(WEFT_OUTPUT_ERROR,
                        "coll/sm: coll_sm_operations: '%s' is not one of barrier, bcast, reduce, "
                        "allreduce, allgather, alltoall",
                        op);
            rc = WEFT_ERR_BAD_PARAM;
        }
    }
    return rc;
}

bool offered(const char *op)
{
    for (size_t i = 0; i < weft_mca_param_list_count(p_operations); ++i)
        if (std::strcmp(weft_mca_param_list_item(p_operations, i), op) == 0)
            return true;
    return false;
}

weft_status_t query(int *priority, char *why, size_t why_len)
{
    *priority = int(weft_mca_param_int(p_priority));
    if (*priority <= 0) {
        std::snprintf(why, why_len, "coll_sm_priority is %d", *priority);
        return WEFT_ERR_NOT_AVAILABLE;
    }
    return WEFT_SUCCESS;
}

// Intracommunicators of two or more processes, all on this host (what every rank knows alike).
weft_coll_module_t *comm_query(weft_comm_t *comm, int *priority)
{
    if (weft_comm_is_inter(comm) || weft_comm_size(comm) < 2)
        return nullptr;
    for (int r = 0; r < weft_comm_size(comm); ++r)
        if (!weft_proc_is_local(weft_runtime_proc(weft_comm_local_world_rank(comm, r))))
            return nullptr;
    auto *m = new Module;
    const int64_t sets = weft_mca_param_int(p_sets);
    // Automatic: as many as keep the slots near 1 MiB. When the ranks outnumber the cores, each
    // time a root catches up with a descheduled rank costs context switches: 4 ranks on 2 cores
    // took 0.29 us per 8-byte bcast with 16 sets, 0.17 with 32 and 0.12 with 64. A power of two
    // either way, so that the set of a generation (generation % sets) still changes at every
    // step when the 32-bit generation wraps.
    m->sets = std::bit_floor(
        sets ? unsigned(sets)
             : unsigned(
                   std::clamp(int((1u << 20) / (size_t(weft_comm_size(comm)) * kStride)), 2, 128)));
    m->large = size_t(weft_mca_param_size(p_large)) / 64 * 64; // whole cache lines
    m->large_way = LargeWay(weft_mca_param_enum(p_large_way));
    if (weft_mca_param_int(p_verbose) >= 10 && weft_comm_rank(comm) == 0)
        weft_output(WEFT_OUTPUT_INFO,
                    "coll/sm: a communicator of %d ranks: %u sets of small slots (%s), large "
                    "slots of %zu bytes",
                    weft_comm_size(comm), m->sets,
                    sets ? "coll_sm_sets" : "automatic: the slots near 1 MiB", m->large);
    m->base = weft_coll_module_t{};
    m->base.struct_size = sizeof(weft_coll_module_t);
    m->base.coll_module_enable = nullptr; // set up at the first call
    m->base.coll_module_disable = disable;
    if (offered("barrier"))
        m->base.coll_barrier = barrier;
    if (offered("bcast"))
        m->base.coll_bcast = bcast;
    if (offered("reduce"))
        m->base.coll_reduce = reduce;
    if (offered("allreduce"))
        m->base.coll_allreduce = allreduce;
    if (offered("allgather"))
        m->base.coll_allgather = allgather;
    if (offered("alltoall"))
        m->base.coll_alltoall = alltoall;
    *priority = int(weft_mca_param_int(p_priority));
    return &m->base;
}

} // namespace

} // namespace weft::coll::sm

extern "C" {
const weft_coll_component_t mca_coll_sm_component = {
    .mca = {WEFT_MCA_COMPONENT_HEADER(weft_coll_component_t, "coll", WEFT_COLL_ABI_MAJOR,
                                      WEFT_COLL_ABI_MINOR, "sm", 0, 1, 0),
            .register_params = weft::coll::sm::register_params, .open = nullptr,
            .query = weft::coll::sm::query, .close = nullptr},
    .init_query = nullptr,
    .comm_query = weft::coll::sm::comm_query,
};
}
