// btl/sm: making, growing, attaching and checking shared segments.
#include "btl_sm_segment.h"

#include <weft/runtime.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace weft::btl::sm {

namespace {

// No segment may claim more than this; it keeps the offset arithmetic far from overflow.
constexpr uint64_t kMaxSegment = uint64_t(1) << 40;
constexpr uint64_t kPage = 4096;

constexpr uint64_t round_up(uint64_t x, uint64_t to) { return (x + to - 1) / to * to; }

// The own segment file while it still has its name, for exit_cleanup. Plain storage, no
// constructor: this runs in a dlopened component.
char g_own_path[512];

// A process that leaves without finalize (an error path returning from main) still removes
// its file: this runs at exit() and when the component is unloaded.
__attribute__((destructor)) void exit_cleanup()
{
    if (g_own_path[0])
        ::unlink(g_own_path);
    g_own_path[0] = '\0';
}

std::string errno_text(const char *what, const std::string &path, int err)
{
    return std::string(what) + " " + path + ": " + std::strerror(err);
}

// Whether somebody holds a lock on the file behind fd: a live owner holds a shared one.
bool locked_by_someone(int fd)
{
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
        ::flock(fd, LOCK_UN);
        return false;
    }
    return true; // EWOULDBLOCK, or an error we cannot judge: assume alive
}

// The layout fields of a peer's header, checked against the size of its file.
bool layout_fits(const SegmentHeader &h, uint64_t file_size)
{
    auto within = [&](uint64_t off, uint64_t len) {
        return off <= file_size && len <= file_size - off;
    };
    if (h.nrings == 0 || h.nrings > (1u << 20) || h.ring_slots < 2 ||
        (h.ring_slots & (h.ring_slots - 1)) != 0 || h.slot_size != kSlotSize ||
        h.inline_max > kMaxInline || slots_for(h.inline_max) > h.ring_slots / 2 ||
        h.pool_frag_size % kCacheLine != 0 || h.rings_offset < kHeaderBytes ||
        h.rings_offset % kCacheLine != 0 || h.ring_stride % kCacheLine != 0 ||
        h.pool_offset % kCacheLine != 0 || h.segment_size != file_size ||
        h.segment_size > kMaxSegment || h.pool_frags > kMaxSegment ||
        h.pool_frag_size > kMaxSegment || h.ring_stride > kMaxSegment ||
        h.owner_local_rank >= h.nrings)
        return false;
    const uint64_t ring_bytes = sizeof(RingControl) + uint64_t(h.ring_slots) * h.slot_size;
    return h.ring_stride >= ring_bytes &&
           within(h.rings_offset, uint64_t(h.nrings) * h.ring_stride) &&
           (h.pool_frags == 0 || h.pool_frag_size <= kMaxSegment / h.pool_frags) &&
           within(h.pool_offset, h.pool_frags * h.pool_frag_size);
}

} // namespace

bool Layout::place(SegmentHeader &h) const
{
    if (nrings == 0 || ring_slots < 2 || (ring_slots & (ring_slots - 1)) != 0 ||
        slots_for(inline_max) > ring_slots / 2 || pool_frag_size > kMaxSegment ||
        pool_frags > kMaxSegment || uint64_t(ring_slots) * kSlotSize > kMaxSegment)
        return false;
    h.nrings = nrings;
    h.ring_slots = ring_slots;
    h.slot_size = uint32_t(kSlotSize);
    h.inline_max = inline_max;
    h.rings_offset = kHeaderBytes;
    h.ring_stride = round_up(sizeof(RingControl) + uint64_t(ring_slots) * kSlotSize, kCacheLine);
    if (h.ring_stride > kMaxSegment / nrings)
        return false;
    h.pool_offset = round_up(h.rings_offset + uint64_t(nrings) * h.ring_stride, kPage);
    h.pool_frag_size = pool_frag_size;
    h.pool_frags = pool_frags;
    if (pool_frags && pool_frag_size > (kMaxSegment - h.pool_offset) / pool_frags)
        return false;
    h.segment_size = round_up(h.pool_offset + pool_frags * pool_frag_size, kPage);
    return h.segment_size <= kMaxSegment;
}

weft_status_t Segment::create(const std::string &dir, const std::string &stem, uint32_t world_rank,
                              uint64_t cookie, std::string &error)
{
    // O_EXCL: never share a file with anybody. A file of that name left by a process that
    // died (no lock on it) is removed; one a live process holds makes us pick another name.
    std::string path = dir + "/" + stem;
    int fd = -1;
    for (int attempt = 0; attempt < 4 && fd < 0; ++attempt) {
        fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0)
            break;
        if (errno != EEXIST) {
            error = errno_text("cannot create", path, errno);
            return errno == ENOSPC || errno == EMFILE || errno == ENFILE ? WEFT_ERR_OUT_OF_RESOURCE
                                                                         : WEFT_ERR_NOT_AVAILABLE;
        }
        int old = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
        bool stale = old >= 0 && !locked_by_someone(old);
        if (old >= 0)
            ::close(old);
        if (stale && ::unlink(path.c_str()) == 0)
            continue;
        char suffix[24];
        std::snprintf(suffix, sizeof suffix, "-%08" PRIx32, uint32_t(std::random_device{}()));
        path = dir + "/" + stem + suffix;
    }
    if (fd < 0) {
        error = "cannot create a segment file in " + dir + ": every name tried is in use";
        return WEFT_ERR_NOT_AVAILABLE;
    }
    // The shared lock is what peers test to tell whether this process is alive.
    ::flock(fd, LOCK_SH | LOCK_NB);
    auto give_up = [&](const std::string &why, weft_status_t rc) {
        error = why;
        ::close(fd);
        ::unlink(path.c_str());
        return rc;
    };
    if (int rc = ::posix_fallocate(fd, 0, off_t(kHeaderBytes)); rc != 0)
        return give_up("cannot size " + path + ": " + std::strerror(rc), WEFT_ERR_OUT_OF_RESOURCE);
    void *p = ::mmap(nullptr, kHeaderBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return give_up(errno_text("cannot map", path, errno), WEFT_ERR_OUT_OF_RESOURCE);
    SegmentHeader h{};
    h.magic = kSegmentMagic;
    h.version = kLayoutVersion;
    h.header_size = sizeof(SegmentHeader);
    h.cookie = cookie;
    h.state = kStateInit;
    h.owner_world_rank = world_rank;
    std::memcpy(p, &h, sizeof h);
    base_ = static_cast<char *>(p);
    size_ = kHeaderBytes;
    fd_ = fd;
    owner_ = true;
    linked_ = true;
    path_ = path;
    if (path.size() < sizeof g_own_path)
        std::memcpy(g_own_path, path.c_str(), path.size() + 1);
    weft_runtime_own_file(path.c_str(), 1);
    header_ = h;
    return WEFT_SUCCESS;
}

weft_status_t Segment::activate(const Layout &layout, uint32_t local_rank, std::string &error)
{
    SegmentHeader h = header_;
    auto fail = [&](const std::string &why, weft_status_t rc) {
        error = why;
        store_release(shared_header()->state, kStateFailed);
        return rc;
    };
    if (!layout.place(h))
        return fail("the shared segment would be too large (lower btl_sm_ring_size, "
                    "btl_sm_eager_limit or btl_sm_free_list_max)",
                    WEFT_ERR_BAD_PARAM);
    h.owner_local_rank = local_rank;
    // Reserve the memory now: on a full tmpfs a lazily backed file would kill a peer with
    // SIGBUS at its first write into a page that cannot be had.
    if (int rc = ::posix_fallocate(fd_, 0, off_t(h.segment_size)); rc != 0)
        return fail("cannot reserve " + std::to_string(h.segment_size >> 10) + " KiB for " + path_ +
                        ": " + std::strerror(rc),
                    WEFT_ERR_OUT_OF_RESOURCE);
    void *p = ::mmap(nullptr, h.segment_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED)
        return fail(errno_text("cannot map", path_, errno), WEFT_ERR_OUT_OF_RESOURCE);
    ::munmap(base_, size_);
    base_ = static_cast<char *>(p);
    size_ = h.segment_size;
    // The rest of the file reads as zeros: every ring starts empty (head == tail == 0, no stamps).
    h.state = kStateInit;
    std::memcpy(base_, &h, sizeof h);
    store_release(shared_header()->state, kStateReady);
    h.state = kStateReady;
    header_ = h;
    ready_ = true;
    return WEFT_SUCCESS;
}

void Segment::mark_failed()
{
    if (owner_ && !ready_)
        store_release(shared_header()->state, kStateFailed);
}

weft_status_t Segment::attach(const std::string &path, uint64_t cookie, uint32_t world_rank,
                              std::string &error)
{
    int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        error = errno_text("cannot open", path, errno);
        return WEFT_ERR_UNREACH;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || uint64_t(st.st_size) < kHeaderBytes) {
        error = path + " is not a segment";
        ::close(fd);
        return WEFT_ERR_UNREACH;
    }
    void *p = ::mmap(nullptr, kHeaderBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        error = errno_text("cannot map", path, errno);
        ::close(fd);
        return WEFT_ERR_OUT_OF_RESOURCE;
    }
    SegmentHeader h;
    std::memcpy(&h, p, sizeof h);
    if (h.magic != kSegmentMagic || h.version != kLayoutVersion ||
        h.header_size != sizeof(SegmentHeader) || h.cookie != cookie ||
        h.owner_world_rank != world_rank) {
        error = path + " is not the segment that was published (another /dev/shm?)";
        ::munmap(p, kHeaderBytes);
        ::close(fd);
        return WEFT_ERR_UNREACH;
    }
    base_ = static_cast<char *>(p);
    size_ = kHeaderBytes;
    fd_ = fd;
    owner_ = false;
    ready_ = false;
    path_ = path;
    header_ = h;
    return WEFT_SUCCESS;
}

weft_status_t Segment::poll_ready(std::string &error)
{
    if (ready_)
        return WEFT_SUCCESS;
    const uint64_t state = load_acquire(shared_header()->state);
    if (state == kStateInit)
        return WEFT_IN_PROGRESS;
    if (state != kStateReady) {
        error = "its owner could not set up its shared memory";
        return WEFT_ERR_UNREACH;
    }
    SegmentHeader h;
    std::memcpy(&h, base_, sizeof h);
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !layout_fits(h, uint64_t(st.st_size))) {
        error = path_ + " has an inconsistent layout";
        return WEFT_ERR_UNREACH;
    }
    void *p = ::mmap(nullptr, h.segment_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) {
        error = errno_text("cannot map", path_, errno);
        return WEFT_ERR_OUT_OF_RESOURCE;
    }
    ::munmap(base_, size_);
    base_ = static_cast<char *>(p);
    size_ = h.segment_size;
    header_ = h;
    ready_ = true;
    std::atomic_ref<uint64_t>(shared_header()->attached).fetch_add(1, std::memory_order_release);
    return WEFT_SUCCESS;
}

void Segment::unlink_file()
{
    if (owner_ && linked_) {
        ::unlink(path_.c_str());
        weft_runtime_own_file(path_.c_str(), 0);
        g_own_path[0] = '\0';
    }
    linked_ = false;
}

void Segment::close()
{
    unlink_file();
    if (base_)
        ::munmap(base_, size_);
    if (fd_ >= 0)
        ::close(fd_);
    base_ = nullptr;
    size_ = 0;
    fd_ = -1;
    owner_ = false;
    ready_ = false;
    linked_ = false;
    path_.clear();
}

bool Segment::owner_alive() const { return fd_ < 0 || locked_by_someone(fd_); }

} // namespace weft::btl::sm
