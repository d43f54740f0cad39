// btl/sm: put and get by cross-memory attach (process_vm_writev/readv): one copy, straight
// between the two processes' buffers; the callback runs from progress.
//
// A get is done by the receiver alone (cma), or shared (split): the receiver asks the sender
// by a kCellHelp message to write pieces of the message into its buffer while it reads the
// others itself, both taking pieces from one counter in shared memory (SharedGet in
// btl_sm_segment.h), so that two cores copy at once. If the sender is busy elsewhere the
// receiver simply takes every piece. Which way, from which size, or neither (the send/receive
// pipeline through the pool), btl_sm_single_copy_mechanism says; auto measures this host
// (btl_sm_calibrate.h). docs/performance.md has the measurements.
#include "btl_sm_calibrate.h"
#include "btl_sm_copy.h"
#include "btl_sm_module.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

namespace weft::btl::sm {

namespace {

// Sizes above this are done in several system calls (the kernel caps one call's iovec length
// at MAX_RW_COUNT, about 2 GiB).
constexpr size_t kMaxChunk = size_t(1) << 30;
// auto: a way replaces another at a size only where it measured this much faster.
constexpr double kMargin = 1.03;

// Copy size bytes between local and the peer's remote by CMA. Returns 0 or an errno.
int cma_copy(bool write, pid_t pid, void *local, uint64_t remote, size_t size)
{
    auto *l = static_cast<char *>(local);
    while (size > 0) {
        const size_t n = std::min(size, kMaxChunk);
        iovec li{l, n};
        iovec ri{reinterpret_cast<void *>(remote), n};
        const ssize_t got = write ? process_vm_writev(pid, &li, 1, &ri, 1, 0)
                                  : process_vm_readv(pid, &li, 1, &ri, 1, 0);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (got == 0)
            return EFAULT;
        l += got;
        remote += uint64_t(got);
        size -= size_t(got);
    }
    return 0;
}

const RegHandle *reg_of(const weft_btl_registration_handle_t *h)
{
    return reinterpret_cast<const RegHandle *>(h);
}

using Clock = std::chrono::steady_clock;
constexpr auto kLivenessInterval = std::chrono::milliseconds(100);

uint64_t fetch_add(uint64_t &x, uint64_t v)
{
    return std::atomic_ref<uint64_t>(x).fetch_add(v, std::memory_order_acq_rel);
}

// Take the next piece of generation gen from claim; false when none is left (or the slot has
// moved on to another get).
bool claim_piece(uint64_t &claim, uint32_t gen, uint32_t pieces, uint32_t &piece)
{
    std::atomic_ref<uint64_t> c(claim);
    uint64_t v = c.load(std::memory_order_acquire);
    for (;;) {
        if (uint32_t(v >> 32) != gen || uint32_t(v) >= pieces)
            return false;
        if (c.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel))
            break;
    }
    piece = uint32_t(v);
    return true;
}

// Take every piece left, so that the helper starts no more.
void claim_rest(uint64_t &claim, uint32_t gen, uint32_t pieces)
{
    std::atomic_ref<uint64_t> c(claim);
    uint64_t v = c.load(std::memory_order_acquire);
    while (uint32_t(v >> 32) == gen && uint32_t(v) < pieces &&
           !c.compare_exchange_weak(v, (uint64_t(gen) << 32) | pieces, std::memory_order_acq_rel)) {
    }
}

weft_status_t status_of(int err)
{
    return err == 0 ? WEFT_SUCCESS : err == ESRCH ? WEFT_ERR_PROC_FAILED : WEFT_ERR_LINK_DOWN;
}

// Start a shared get of size bytes; false if it cannot be shared now (no free slot, the
// ring is full), and nothing was done.
void reap_shared_gets(Module *m, Endpoint *ep);

bool start_shared_get(Module *m, Endpoint *ep, char *local, uint64_t remote, size_t size,
                      const RdmaDone &done)
{
    // Gets started in one progress call (a burst of matched messages) finish before the next.
    reap_shared_gets(m, ep);
    uint32_t slot = kSharedGets;
    for (uint32_t i = 0; i < kSharedGets; ++i)
        if (!ep->shared_busy[i]) {
            slot = i;
            break;
        }
    const size_t piece = piece_for(size, m->split_piece);
    const uint64_t pieces = (size + piece - 1) / piece;
    if (slot == kSharedGets || pieces < 2 || pieces > UINT32_MAX)
        return false;
    SharedGet &g = ep->rx->shared[slot];
    const uint32_t gen = ep->shared_generation[slot] + 1;
    store_relaxed(g.done, 0);
    store_relaxed(g.failed, 0);
    store_release(g.claim, uint64_t(gen) << 32);
    const HelpRequest req{.src = remote,
                          .dst = reinterpret_cast<uint64_t>(local),
                          .size = size,
                          .piece = uint32_t(piece),
                          .pieces = uint32_t(pieces),
                          .slot = slot,
                          .generation = gen};
    if (!post_help(ep, req)) {
        store_release(g.claim, (uint64_t(gen) << 32) | pieces); // nobody may take a piece
        ep->shared_generation[slot] = gen;
        return false;
    }
    ep->shared_generation[slot] = gen;
    ep->shared_busy[slot] = true;
    weft_status_t status = WEFT_SUCCESS;
    uint32_t i = 0;
    while (claim_piece(g.claim, gen, uint32_t(pieces), i)) {
        const size_t off = size_t(i) * piece;
        const int err =
            cma_copy(false, ep->peer_pid, local + off, remote + off, std::min(piece, size - off));
        fetch_add(g.done, 1);
        if (err != 0) {
            status = status_of(err);
            claim_rest(g.claim, gen, uint32_t(pieces));
            break;
        }
    }
    SharedPending p{ep, slot, uint32_t(pieces), local, remote, size, done, Clock::now()};
    p.done.status = status;
    m->shared_pending.push_back(p);
    return true;
}

// Whether p is over: every piece copied (status set), or the helper died.
bool shared_get_over(SharedPending &p)
{
    SharedGet &g = p.ep->rx->shared[p.slot];
    const uint64_t done = load_acquire(g.done);
    if (done >= p.pieces) {
        // Pieces the helper could not write (its buffer went away, or it is not allowed to
        // write here): read the whole message again alone.
        if (load_acquire(g.failed) != 0 && p.done.status == WEFT_SUCCESS)
            p.done.status = status_of(cma_copy(false, p.ep->peer_pid, p.local, p.remote, p.size));
        p.ep->shared_busy[p.slot] = false;
        return true;
    }
    const auto now = Clock::now();
    if (now < p.next_liveness_check)
        return false;
    p.next_liveness_check = now + kLivenessInterval;
    if (p.ep->peer.owner_alive())
        return false;
    // The helper died holding pieces. The slot stays busy: it might have been writing.
    p.done.status = WEFT_ERR_PROC_FAILED;
    return true;
}

// Move the shared gets that are over (of ep, or of every endpoint) to rdma_done, freeing
// their slots. rdma_done has room for them (reserved when each started).
void reap_shared_gets(Module *m, Endpoint *ep)
{
    for (size_t i = 0; i < m->shared_pending.size();) {
        SharedPending &p = m->shared_pending[i];
        if ((ep && p.ep != ep) || !shared_get_over(p)) {
            ++i;
            continue;
        }
        m->rdma_done.push_back(p.done);
        m->shared_pending.erase(m->shared_pending.begin() + ptrdiff_t(i));
    }
}

weft_status_t rdma(bool write, weft_btl_module_t *module, weft_btl_endpoint_t *endpoint,
                   void *local_address, uint64_t remote_address,
                   weft_btl_registration_handle_t *local_handle,
                   const weft_btl_registration_handle_t *remote_handle, size_t size, uint32_t flags,
                   weft_btl_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    Module *m = self(module);
    Endpoint *ep = endpoint_of(endpoint);
    const RegHandle *rh = reg_of(remote_handle);
    if (!m || !ep || ep->module != m || !cbfunc || !rh || (size && !local_address))
        return WEFT_ERR_BAD_PARAM;
    if (size > (write ? m->base.btl_put_limit : m->base.btl_get_limit))
        return WEFT_ERR_BAD_PARAM;
    // The peer's handle must name the peer, and the range must lie inside what it registered
    // (a malformed header from the PML's peer cannot reach other memory).
    if (rh->pid != uint64_t(ep->peer_pid) || remote_address < rh->base || size > rh->len ||
        remote_address - rh->base > rh->len - size)
        return WEFT_ERR_BAD_PARAM;
    if (ep->state != WEFT_SUCCESS)
        return ep->state;
    RdmaDone done{cbfunc, ep, local_address, local_handle, cbcontext, cbdata, WEFT_SUCCESS};
    try {
        m->rdma_done.reserve(m->rdma_done.size() + m->shared_pending.size() + 1);
        m->shared_pending.reserve(m->shared_pending.size() + 1);
    } catch (...) {
        return WEFT_ERR_OUT_OF_RESOURCE;
    }
    // The PML may say whether to share the get (WEFT_BTL_GET_FLAG_*); else split_min does.
    const bool share = (flags & WEFT_BTL_GET_FLAG_SHARED)  ? true
                       : (flags & WEFT_BTL_GET_FLAG_ALONE) ? false
                                                           : size >= m->split_min;
    if (!write && share && ep->connected &&
        start_shared_get(m, ep, static_cast<char *>(local_address), remote_address, size, done))
        return WEFT_SUCCESS;
    if (size) {
        const int err = cma_copy(write, ep->peer_pid, local_address, remote_address, size);
        if (err == EPERM || err == ENOSYS)
            return WEFT_ERR_NOT_SUPPORTED;
        done.status = status_of(err);
    }
    m->rdma_done.push_back(done);
    return WEFT_SUCCESS;
}

} // namespace

bool auto_choice(const Config &cfg, Choice &c, std::string &note, std::vector<Rate> *measured)
{
    std::vector<Rate> rates;
    std::string source, why;
    const Setting set{cfg.max_send_size, cfg.free_list_max, cfg.split_piece};
    if (!calibrate(cfg.calibration_file, set, rates, source, why)) {
        // Without figures, the choice that is never far off: the pipeline (both processes
        // copy), as before put/get existed.
        note = "auto: could not measure (" + why + "): no put/get";
        return false;
    }
    c = decide(rates, kMargin);
    note = "auto: " + c.why + " [rates " + source + ": " + rates_text(rates) + "]";
    if (measured)
        *measured = std::move(rates);
    return true;
}

namespace {

static_assert(kWayPipeline == WEFT_BTL_WAY_PIPELINE && kWayCma == WEFT_BTL_WAY_GET &&
                  kWaySplit == WEFT_BTL_WAY_SHARED && kWayStreamed == WEFT_BTL_WAY_STREAMING,
              "the calibration's ways are btl_way_rate's");

// btl_way_rate: what the calibration measured (the receivers' starting point).
double sm_way_rate(const weft_btl_module_t *module, size_t bytes, int stream, unsigned way)
{
    const Module *m = g_module;
    if (!m || module != &m->base)
        return 0;
    return rate_at(m->rates, bytes, stream != 0, way);
}

} // namespace

std::string rdma_setup(Module *m)
{
    SingleCopy mech = m->cfg.single_copy;
    m->split_piece = m->cfg.split_piece;
    std::string note;
    if (mech != SingleCopy::none) {
        // Let the other processes of the job (not our parent: siblings) read and write us.
        prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
        char probe = 7, got = 0;
        const int err = cma_copy(false, getpid(), &got, reinterpret_cast<uint64_t>(&probe), 1);
        if (err != 0 || got != probe) {
            note = "cross-memory attach does not work here (process_vm_readv: " +
                   std::string(std::strerror(err ? err : EIO)) + ")";
            if (mech != SingleCopy::automatic)
                log_warning("btl/sm: btl_sm_single_copy_mechanism is " +
                            std::string(mech == SingleCopy::cma ? "cma" : "split") + " but " +
                            note + "; large messages take the send/receive pipeline");
            mech = SingleCopy::none;
        }
    }
    Range alone{0, SIZE_MAX}, stream{0, SIZE_MAX};
    // How the pipeline writes its fragments: forced, or what the calibration chose (measured
    // for a forced mechanism too: it is a choice of its own).
    Range streamed;
    std::string stores;
    switch (m->cfg.pool_stores) {
    case PoolStores::cached: stores = "cached stores (forced)"; break;
    case PoolStores::streaming:
        streamed = Range{0, SIZE_MAX};
        stores = "streaming stores (forced)";
        break;
    case PoolStores::automatic: break;
    }
    if (mech == SingleCopy::automatic) {
        Choice c;
        if (!auto_choice(m->cfg, c, note, &m->rates)) {
            mech = SingleCopy::none;
        } else {
            if (m->cfg.pool_stores == PoolStores::automatic)
                streamed = c.streamed;
            // Put/get stay on even where the measurement prefers the pipeline everywhere: the
            // receivers choose per message (WEFT_BTL_FLAG_RECEIVER_CHOOSES), and these bounds
            // are their advice until they have measured for themselves.
            alone = c.alone;
            stream = c.stream;
            m->split_min = c.split_min;
            m->base.btl_flags |= WEFT_BTL_FLAG_RECEIVER_CHOOSES | WEFT_BTL_FLAG_SHARED_GET;
            m->base.btl_way_rate = sm_way_rate;
            // The receivers choose the pipeline's stores too, unless they are forced.
            if (m->cfg.pool_stores == PoolStores::automatic && kHasStreamingStores)
                m->base.btl_flags |= WEFT_BTL_FLAG_STORES_CHOICE;
        }
        if (!stores.empty())
            note += "; the pipeline writes with " + stores;
    } else {
        if (m->cfg.pool_stores == PoolStores::automatic) {
            Choice c;
            std::string why;
            if (auto_choice(m->cfg, c, why)) {
                streamed = c.streamed;
                stores = stores_text(streamed) + " (measured)";
            } else {
                stores = "cached stores (" + why + ")";
            }
        }
        stores = "; the pipeline writes with " + stores;
    }
    if (!kHasStreamingStores)
        streamed = Range{};
    m->streamed_min = streamed.rdma_min;
    m->streamed_max = streamed.rdma_max;
    if (mech == SingleCopy::split) {
        m->split_min = 0;
        m->base.btl_flags |= WEFT_BTL_FLAG_SHARED_GET;
        note = "single copy: split (pieces of an eighth, at most " +
               std::to_string(m->split_piece) + " bytes)";
    } else if (mech == SingleCopy::cma) {
        note = "single copy: cma";
    }
    if (mech == SingleCopy::none) {
        m->rdma_note = (note.empty() ? "single copy: none" : note) +
                       (m->cfg.single_copy == SingleCopy::automatic ? "" : stores);
        return m->rdma_note;
    }
    m->base.btl_flags |= WEFT_BTL_FLAG_PUT | WEFT_BTL_FLAG_GET;
    m->base.btl_put_limit = m->base.btl_get_limit = SIZE_MAX / 2;
    m->base.btl_registration_handle_size = sizeof(RegHandle);
    m->base.btl_put = sm_put;
    m->base.btl_get = sm_get;
    m->base.btl_register_mem = sm_register_mem;
    m->base.btl_deregister_mem = sm_deregister_mem;
    // In the module's terms: an upper bound of 0 is none, and "never" is SIZE_MAX and 0.
    auto upper = [](const Range &r) { return r.rdma_max == SIZE_MAX ? size_t(0) : r.rdma_max; };
    m->base.btl_min_rdma_size = alone.rdma_min;
    m->base.btl_max_rdma_size = alone.rdma_min == SIZE_MAX ? 0 : upper(alone);
    m->base.btl_stream_min_rdma_size = stream.rdma_min;
    m->base.btl_stream_max_rdma_size = stream.rdma_min == SIZE_MAX ? 0 : upper(stream);
    if (m->base.btl_stream_min_rdma_size == 0 && m->base.btl_stream_max_rdma_size == 0)
        m->base.btl_stream_max_rdma_size = SIZE_MAX; // every size (0 and 0 would mean "as alone")
    m->rdma_note = note + (m->cfg.single_copy == SingleCopy::automatic ? "" : stores);
    return m->rdma_note;
}

int rdma_progress(Module *m)
{
    reap_shared_gets(m, nullptr);
    // The callbacks may start new gets (into rdma_done): run them from the other vector, which
    // keeps its memory for the next time.
    std::vector<RdmaDone> &done = m->rdma_running;
    done.swap(m->rdma_done);
    for (const RdmaDone &d : done)
        d.fn(&m->base, reinterpret_cast<weft_btl_endpoint_t *>(d.ep), d.local, d.local_handle,
             d.context, d.cbdata, d.status);
    const int n = int(done.size());
    done.clear();
    return n;
}

void help_shared_get(Module *m, Endpoint *ep, const HelpRequest &req)
{
    if (!ep->connected || ep->state != WEFT_SUCCESS || req.slot >= kSharedGets || req.pieces < 2 ||
        req.piece == 0 || req.size > SIZE_MAX / 2 ||
        uint64_t(req.pieces - 1) * req.piece >= req.size ||
        uint64_t(req.pieces) * req.piece < req.size)
        return;
    // Only from memory this process registered for its peers to read: a request naming other
    // memory is ignored (the asker then reads every piece itself).
    bool allowed = false;
    {
        std::lock_guard g(m->lock);
        for (const RegHandle *h : m->regs)
            if (req.src >= h->base && req.size <= h->len &&
                req.src - h->base <= h->len - req.size) {
                allowed = true;
                break;
            }
    }
    if (!allowed)
        return;
    SharedGet &g = ep->tx->shared[req.slot];
    uint32_t i = 0;
    while (claim_piece(g.claim, req.generation, req.pieces, i)) {
        const uint64_t off = uint64_t(i) * req.piece;
        const int err = cma_copy(true, ep->peer_pid, reinterpret_cast<void *>(req.src + off),
                                 req.dst + off, std::min<uint64_t>(req.piece, req.size - off));
        if (err != 0) {
            fetch_add(g.failed, 1);
            claim_rest(g.claim, req.generation, req.pieces);
        }
        fetch_add(g.done, 1);
        if (err != 0)
            break;
    }
}

weft_status_t sm_put(weft_btl_module_t *module, weft_btl_endpoint_t *endpoint, void *local_address,
                     uint64_t remote_address, weft_btl_registration_handle_t *local_handle,
                     const weft_btl_registration_handle_t *remote_handle, size_t size, uint32_t,
                     uint8_t, weft_btl_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    return rdma(true, module, endpoint, local_address, remote_address, local_handle, remote_handle,
                size, 0, cbfunc, cbcontext, cbdata);
}

weft_status_t sm_get(weft_btl_module_t *module, weft_btl_endpoint_t *endpoint, void *local_address,
                     uint64_t remote_address, weft_btl_registration_handle_t *local_handle,
                     const weft_btl_registration_handle_t *remote_handle, size_t size,
                     uint32_t flags, uint8_t, weft_btl_rdma_completion_fn_t cbfunc, void *cbcontext,
                     void *cbdata)
{
    return rdma(false, module, endpoint, local_address, remote_address, local_handle, remote_handle,
                size, flags, cbfunc, cbcontext, cbdata);
}

weft_status_t sm_register_mem(weft_btl_module_t *module, weft_btl_endpoint_t *, void *base,
                              size_t size, uint32_t, weft_btl_registration_handle_t **handle)
{
    if (!self(module) || !handle || (size && !base))
        return WEFT_ERR_BAD_PARAM;
    Module *m = self(module);
    const RegHandle value{uint64_t(m->pid), reinterpret_cast<uint64_t>(base), uint64_t(size)};
    RegHandle *h = nullptr;
    try {
        std::lock_guard g(m->lock);
        if (!m->spare_regs.empty()) {
            h = m->spare_regs.back();
            m->spare_regs.pop_back();
            *h = value;
        } else if (!(h = new (std::nothrow) RegHandle{value})) {
            return WEFT_ERR_OUT_OF_RESOURCE;
        }
        m->regs.push_back(h);
    } catch (...) {
        delete h;
        return WEFT_ERR_OUT_OF_RESOURCE;
    }
    *handle = reinterpret_cast<weft_btl_registration_handle_t *>(h);
    return WEFT_SUCCESS;
}

weft_status_t sm_deregister_mem(weft_btl_module_t *module, weft_btl_registration_handle_t *handle)
{
    Module *m = self(module);
    if (!m || !handle)
        return WEFT_ERR_BAD_PARAM;
    auto *h = reinterpret_cast<RegHandle *>(handle);
    {
        std::lock_guard g(m->lock);
        const auto it = std::find(m->regs.begin(), m->regs.end(), h);
        if (it == m->regs.end())
            return WEFT_ERR_BAD_PARAM;
        m->regs.erase(it);
        // Kept for the next registration, up to a few (the ones in use at once).
        if (m->spare_regs.size() < 64) {
            try {
                m->spare_regs.push_back(h);
                return WEFT_SUCCESS;
            } catch (...) {
            }
        }
    }
    delete h;
    return WEFT_SUCCESS;
}

Module::~Module()
{
    for (RegHandle *h : spare_regs)
        delete h;
}

} // namespace weft::btl::sm
