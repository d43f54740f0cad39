// btl/sm: put and get by cross-memory attach (process_vm_writev/readv): one copy, straight
// between the two processes' buffers, done inside the call; the callback runs from progress.
//
// Whether that beats the send/receive pipeline (two copies through the shared pool, which the
// two processes make at the same time) depends on the machine: on a VM the kernel's page
// pinning can make the single copy slower at every size (issue 6 measured 13 GB/s against the
// pipeline's 24 GB/s at 1 MiB). btl_sm_single_copy_mechanism picks: cma, none, or auto, which
// times both ways once at start-up and uses put/get only from the size where CMA wins
// (btl_min_rdma_size). docs/performance.md has the measurements.
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

// The pipeline's rate as a share of one process's memcpy rate, measured with
// contrib/bench-p2p.sh on the development VM (24 GB/s against 47 GB/s at 1 and 4 MiB): both
// processes copy at once and share the memory bandwidth.
constexpr double kPipelineShare = 0.5;
// How much faster CMA must time to be chosen.
constexpr double kMargin = 1.25;

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

double seconds_since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Bytes per second of a copy of `size` bytes, best of a few rounds (a copy of this process's
// own memory by CMA costs what a copy of a peer's does: the kernel pins and maps the pages).
double rate(bool cma, char *dst, char *src, size_t size)
{
    double best = 1e30;
    for (int round = 0; round < 3; ++round) {
        const auto t0 = std::chrono::steady_clock::now();
        if (cma)
            cma_copy(false, getpid(), dst, reinterpret_cast<uint64_t>(src), size);
        else
            std::memcpy(dst, src, size);
        best = std::min(best, seconds_since(t0));
        __asm__ volatile("" : : "r"(dst) : "memory");
    }
    return double(size) / std::max(best, 1e-9);
}

// The smallest of the sizes tried where CMA beats the pipeline, or 0 if it never does.
size_t calibrate(std::string &note)
{
    constexpr size_t kSizes[] = {size_t(64) << 10, size_t(256) << 10, size_t(1) << 20,
                                 size_t(4) << 20};
    constexpr size_t kMax = size_t(4) << 20;
    // Straight from the kernel and back: freeing 4 MiB through malloc would raise glibc's
    // mmap threshold for the rest of the process and change where the application's large
    // buffers come from.
    void *mem = mmap(nullptr, 2 * kMax, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return 0;
    struct Unmap {
        void *p;
        size_t n;
        ~Unmap() { munmap(p, n); }
    } unmap{mem, 2 * kMax};
    char *src = static_cast<char *>(mem), *dst = src + kMax;
    std::memset(src, 1, kMax);
    std::memset(dst, 0, kMax);
    size_t found = 0;
    for (size_t size : kSizes) {
        const double c = rate(true, dst, src, size);
        const double p = kPipelineShare * rate(false, dst, src, size);
        note += " " + std::to_string(size >> 10) + "K: cma " +
                std::to_string(c / 1e9).substr(0, 5) + " GB/s, pipeline ~" +
                std::to_string(p / 1e9).substr(0, 5) + " GB/s;";
        // CMA must win clearly (by kMargin) to be used: a timing disturbed by a neighbour
        // must not switch a job to the slower mechanism.
        const bool wins = c > kMargin * p;
        if (wins && found == 0)
            found = size;
        if (!wins)
            found = 0; // must win from there on up
    }
    return found;
}

const RegHandle *reg_of(const weft_btl_registration_handle_t *h)
{
    return reinterpret_cast<const RegHandle *>(h);
}

weft_status_t rdma(bool write, weft_btl_module_t *module, weft_btl_endpoint_t *endpoint,
                   void *local_address, uint64_t remote_address,
                   weft_btl_registration_handle_t *local_handle,
                   const weft_btl_registration_handle_t *remote_handle, size_t size,
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
    weft_status_t status = WEFT_SUCCESS;
    if (size) {
        const int err = cma_copy(write, ep->peer_pid, local_address, remote_address, size);
        if (err == ESRCH)
            status = WEFT_ERR_PROC_FAILED;
        else if (err == EPERM || err == ENOSYS)
            return WEFT_ERR_NOT_SUPPORTED;
        else if (err != 0)
            status = WEFT_ERR_LINK_DOWN;
    }
    try {
        m->rdma_done.push_back(
            {cbfunc, ep, local_address, local_handle, cbcontext, cbdata, status});
    } catch (...) {
        return WEFT_ERR_OUT_OF_RESOURCE;
    }
    return WEFT_SUCCESS;
}

} // namespace

std::string rdma_setup(Module *m)
{
    SingleCopy mech = m->cfg.single_copy;
    std::string note;
    if (mech != SingleCopy::none) {
        // Let the other processes of the job (not our parent: siblings) read and write us.
        prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
        char probe = 7, got = 0;
        const int err = cma_copy(false, getpid(), &got, reinterpret_cast<uint64_t>(&probe), 1);
        if (err != 0 || got != probe) {
            note = "cross-memory attach does not work here (process_vm_readv: " +
                   std::string(std::strerror(err ? err : EIO)) + ")";
            if (mech == SingleCopy::cma)
                log_warning("btl/sm: btl_sm_single_copy_mechanism is cma but " + note +
                            "; large messages take the send/receive pipeline");
            mech = SingleCopy::none;
        }
    }
    size_t min_size = 0;
    if (mech == SingleCopy::automatic) {
        note = "calibration:";
        min_size = calibrate(note);
        if (min_size == 0) {
            mech = SingleCopy::none;
            note += " cma never faster: none";
        } else {
            note += " cma from " + std::to_string(min_size) + " bytes";
        }
    }
    if (mech == SingleCopy::none)
        return note.empty() ? "single copy: none" : note;
    m->base.btl_flags |= WEFT_BTL_FLAG_PUT | WEFT_BTL_FLAG_GET;
    m->base.btl_put_limit = m->base.btl_get_limit = SIZE_MAX / 2;
    m->base.btl_registration_handle_size = sizeof(RegHandle);
    m->base.btl_put = sm_put;
    m->base.btl_get = sm_get;
    m->base.btl_register_mem = sm_register_mem;
    m->base.btl_deregister_mem = sm_deregister_mem;
    m->base.btl_min_rdma_size = min_size;
    return note.empty() ? "single copy: cma" : note;
}

int rdma_progress(Module *m)
{
    std::vector<RdmaDone> done;
    done.swap(m->rdma_done);
    for (const RdmaDone &d : done)
        d.fn(&m->base, reinterpret_cast<weft_btl_endpoint_t *>(d.ep), d.local, d.local_handle,
             d.context, d.cbdata, d.status);
    return int(done.size());
}

weft_status_t sm_put(weft_btl_module_t *module, weft_btl_endpoint_t *endpoint, void *local_address,
                     uint64_t remote_address, weft_btl_registration_handle_t *local_handle,
                     const weft_btl_registration_handle_t *remote_handle, size_t size, uint32_t,
                     uint8_t, weft_btl_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    return rdma(true, module, endpoint, local_address, remote_address, local_handle, remote_handle,
                size, cbfunc, cbcontext, cbdata);
}

weft_status_t sm_get(weft_btl_module_t *module, weft_btl_endpoint_t *endpoint, void *local_address,
                     uint64_t remote_address, weft_btl_registration_handle_t *local_handle,
                     const weft_btl_registration_handle_t *remote_handle, size_t size, uint32_t,
                     uint8_t, weft_btl_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    return rdma(false, module, endpoint, local_address, remote_address, local_handle, remote_handle,
                size, cbfunc, cbcontext, cbdata);
}

weft_status_t sm_register_mem(weft_btl_module_t *module, weft_btl_endpoint_t *, void *base,
                              size_t size, uint32_t, weft_btl_registration_handle_t **handle)
{
    if (!self(module) || !handle || (size && !base))
        return WEFT_ERR_BAD_PARAM;
    auto *h = new (std::nothrow)
        RegHandle{uint64_t(getpid()), reinterpret_cast<uint64_t>(base), uint64_t(size)};
    if (!h)
        return WEFT_ERR_OUT_OF_RESOURCE;
    *handle = reinterpret_cast<weft_btl_registration_handle_t *>(h);
    return WEFT_SUCCESS;
}

weft_status_t sm_deregister_mem(weft_btl_module_t *module, weft_btl_registration_handle_t *handle)
{
    if (!self(module) || !handle)
        return WEFT_ERR_BAD_PARAM;
    delete reinterpret_cast<RegHandle *>(handle);
    return WEFT_SUCCESS;
}

} // namespace weft::btl::sm
