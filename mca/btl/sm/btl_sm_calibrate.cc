// btl/sm: timing the ways large messages can move on this host (btl_sm_calibrate.h).
#include "btl_sm_calibrate.h"

#include "btl_sm_copy.h"
#include "btl_sm_segment.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sched.h>
#include <sstream>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

namespace weft::btl::sm {

namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kMinSize = uint64_t(4) << 10;
constexpr uint64_t kMaxSize = uint64_t(16) << 20;
constexpr size_t kMaxSlots = 64;           // pipeline fragments in flight, at most
constexpr size_t kMaxSlotBytes = 16 << 20; // and at most this much shared memory for them
constexpr auto kStepTimeout = std::chrono::seconds(2); // one transfer; else the child is stuck
constexpr const char *kMagic = "weft-sm-calibration 5";
// Settings (keys) one file remembers: a job with other btl/sm settings than the host's usual
// ones (a test's btl_sm_split_piece) adds its own rates, not replacing theirs (one such job
// made the next ones measure again, at whatever speed the host had then).
constexpr size_t kMaxKeys = 4;
constexpr size_t kMaxFile = 16384;
constexpr int kPasses = 3; // over every size and way, each keeping its best round

// Shared between this process and the child, one line per field that both write.
struct Control {
    alignas(kCacheLine) uint64_t cmd;      // (sequence << 8) | Op, written by the parent
    alignas(kCacheLine) uint64_t ack;      // the sequence the child finished
    alignas(kCacheLine) uint64_t claim;    // split: the next piece nobody took
    alignas(kCacheLine) uint64_t done;     // split: pieces copied
    alignas(kCacheLine) uint64_t produced; // pipeline: fragments the child wrote
    alignas(kCacheLine) uint64_t consumed; // pipeline: fragments the parent read
    alignas(kCacheLine) uint64_t size;     // bytes of each message
    uint64_t count;                        // messages back to back
    uint64_t ready;                        // the child has its own pages and waits
};
// Every way starts with the child answering the parent's command, as every rendezvous starts
// with a message from the sender that the receiver answers: small sizes then weigh the
// system calls of single copy against the pipeline's extra hand-offs, as the real path does.
enum Op : uint64_t {
    kOpPipeline = kWayPipeline,
    kOpCma = kWayCma,
    kOpSplit = kWaySplit,
    kOpStreamed = kWayStreamed,
    kOpQuit
};

uint64_t load(const uint64_t &x) { return load_acquire(x); }
void store(uint64_t &x, uint64_t v) { store_release(x, v); }
uint64_t fetch_add(uint64_t &x, uint64_t v)
{
    return std::atomic_ref<uint64_t>(x).fetch_add(v, std::memory_order_acq_rel);
}

inline void relax()
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

int cma(bool write, pid_t pid, char *local, char *remote, size_t n)
{
    while (n > 0) {
        iovec l{local, n}, r{remote, n};
        const ssize_t got = write ? process_vm_writev(pid, &l, 1, &r, 1, 0)
                                  : process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return got < 0 ? errno : EFAULT;
        local += got;
        remote += got;
        n -= size_t(got);
    }
    return 0;
}

struct Bufs {
    Control *ctl = nullptr;
    char *slots = nullptr; // shared: the pipeline's fragments
    char *src = nullptr;   // private to each process (the child writes its own copy)
    char *dst = nullptr;   // private
    Setting set;
};

// The fragments of `count` messages of `size` bytes in a pipeline of frag-byte fragments:
// fragment i is of message i / per, at offset (i % per) * frag.
struct Frags {
    uint64_t per, total;
    Frags(uint64_t size, uint64_t count, size_t frag)
        : per((size + frag - 1) / frag), total(per * count)
    {
    }
    uint64_t offset(uint64_t i, size_t frag) const { return (i % per) * frag; }
};

// The child's half: wait for commands and do its part of each.
[[noreturn]] void child_main(const Bufs &b, pid_t parent, int parent_cpu)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(0);
    // Off the parent's core, as a peer rank would be (mpirun binds ranks to cores, and the
    // child inherits its parent's binding): any other CPU this process may use.
    cpu_set_t set;
    CPU_ZERO(&set);
    const long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < ncpu && c < CPU_SETSIZE; ++c)
        if (c != parent_cpu)
            CPU_SET(int(c), &set);
    if (CPU_COUNT(&set) > 0)
        sched_setaffinity(0, sizeof set, &set);
    std::memset(b.src, 1, kMaxSize); // its own pages (not the parent's, shared copy-on-write)
    store(b.ctl->ready, 1);
    const size_t frag = b.set.frag, slots = b.set.slots;
    uint64_t seen = 0;
    for (;;) {
        uint64_t cmd;
        unsigned spins = 0;
        while ((cmd = load(b.ctl->cmd)) == seen) {
            if (++spins % 4096 == 0) {
                if (getppid() != parent)
                    _exit(0);
                sched_yield();
            }
            relax();
        }
        seen = cmd;
        const uint64_t size = load(b.ctl->size), count = load(b.ctl->count);
        switch (cmd & 0xff) {
        case kOpCma:
            store(b.ctl->produced, 1); // go: the parent reads them all
            break;
        case kOpPipeline:
        case kOpStreamed: {
            const bool streamed = (cmd & 0xff) == kOpStreamed;
            const Frags f(size, count, frag);
            for (uint64_t i = 0; i < f.total; ++i) {
                for (unsigned spins = 1; i - load(b.ctl->consumed) >= slots; ++spins) {
                    if (spins % 4096 == 0)
                        sched_yield(); // one core for both: let the parent run
                    relax();
                }
                const uint64_t off = f.offset(i, frag);
                const size_t len = std::min<uint64_t>(frag, size - off);
                if (streamed)
                    stream_copy(b.slots + (i % slots) * frag, b.src + off, len);
                else
                    std::memcpy(b.slots + (i % slots) * frag, b.src + off, len);
                store(b.ctl->produced, i + 1);
            }
            break;
        }
        case kOpSplit: {
            const size_t piece = piece_for(size, b.set.piece);
            const Frags f(size, count, piece);
            for (uint64_t i; (i = fetch_add(b.ctl->claim, 1)) < f.total;) {
                const uint64_t off = f.offset(i, piece);
                cma(true, parent, b.src + off, b.dst + off, std::min<uint64_t>(piece, size - off));
                fetch_add(b.ctl->done, 1);
            }
            break;
        }
        default: _exit(0);
        }
        store(b.ctl->ack, cmd >> 8);
    }
}

// Wait until pred holds; false if the step took too long (the child is stuck or dead).
template <class Pred> bool wait_for(Pred pred)
{
    const auto deadline = Clock::now() + kStepTimeout;
    unsigned spins = 0;
    while (!pred()) {
        if (++spins % 1024 == 0) {
            if (Clock::now() > deadline)
                return false;
            if (spins % 4096 == 0)
                sched_yield(); // one core for both: let the child run
        }
        relax();
    }
    return true;
}

// The contiguous run [lo, hi) of gains with the largest positive sum; lo == n if none.
std::pair<size_t, size_t> best_run(const std::vector<double> &gain)
{
    const size_t n = gain.size();
    double best = 0;
    size_t lo = n, hi = n;
    for (size_t a = 0; a < n; ++a) {
        double sum = 0;
        for (size_t b = a; b < n; ++b) {
            sum += gain[b];
            if (sum > best) {
                best = sum;
                lo = a;
                hi = b + 1;
            }
        }
    }
    return {lo, hi};
}

std::string bound_text(size_t v)
{
    if (v == SIZE_MAX)
        return "-";
    if (v == 0)
        return "0";
    return v >= (size_t(1) << 20) ? std::to_string(v >> 20) + "M" : std::to_string(v >> 10) + "K";
}

std::string range_text(const Range &r)
{
    if (r.rdma_min == SIZE_MAX)
        return "the pipeline at every size";
    std::string out = "put/get from " + bound_text(r.rdma_min);
    if (r.rdma_max != SIZE_MAX)
        out += " below " + bound_text(r.rdma_max) + ", the pipeline from there";
    return out;
}

} // namespace

std::string stores_text(const Range &streamed)
{
    if (streamed.rdma_min == SIZE_MAX)
        return "cached stores at every size";
    if (streamed.rdma_min == 0 && streamed.rdma_max == SIZE_MAX)
        return "streaming stores at every size";
    return "streaming stores from " + bound_text(streamed.rdma_min) +
           (streamed.rdma_max == SIZE_MAX ? std::string()
                                          : " below " + bound_text(streamed.rdma_max)) +
           ", cached stores elsewhere";
}

std::vector<uint64_t> calibration_sizes()
{
    std::vector<uint64_t> out;
    for (uint64_t s = kMinSize; s <= kMaxSize; s *= 2)
        out.push_back(s);
    return out;
}

double rate_at(const std::vector<Rate> &rates, uint64_t bytes, bool stream, unsigned way)
{
    if (rates.empty() || way >= unsigned(kWays))
        return 0;
    const Rate *r = &rates.front();
    for (const Rate &x : rates)
        if (x.size <= bytes)
            r = &x;
    return stream ? r->stream[way] : r->alone[way];
}

Choice decide(const std::vector<Rate> &rates, double margin)
{
    Choice c;
    const size_t n = rates.size();
    // The gain of the better single copy over the pipeline at each size, as a logarithm (so
    // that a size twice as fast counts as much as one twice as slow), less the margin. One
    // range of sizes takes put/get for each case (the PML asks for a lower and an upper
    // bound): the contiguous run of measured sizes with the largest total gain.
    // log(better / (margin * worse)); a way that failed to measure loses.
    auto log_gain = [&](double better, double worse) {
        if (better > 0 && worse > 0)
            return std::log(better / (margin * worse));
        return better > 0 ? 1.0 : -1.0;
    };
    auto run_range = [&](const std::vector<double> &gain, std::vector<bool> &in) {
        const auto [lo, hi] = best_run(gain);
        Range out;
        if (lo < n) {
            out.rdma_min = lo == 0 ? 0 : rates[lo].size;
            out.rdma_max = hi == n ? SIZE_MAX : rates[hi].size;
            for (size_t i = lo; i < hi; ++i)
                in[i] = true;
        }
        return out;
    };
    // First how the pipeline writes its fragments (the sender does not know whether a message
    // is alone or in a stream when it copies), then put/get against that pipeline.
    std::vector<double> nt_gain(n, 0);
    for (size_t i = 0; i < n; ++i)
        nt_gain[i] = log_gain(rates[i].alone[kWayStreamed], rates[i].alone[kWayPipeline]) +
                     log_gain(rates[i].stream[kWayStreamed], rates[i].stream[kWayPipeline]);
    std::vector<bool> nt_in(n, false);
    c.streamed = run_range(nt_gain, nt_in);
    auto range_of = [&](bool stream, std::vector<bool> &in) {
        std::vector<double> gain(n, 0);
        for (size_t i = 0; i < n; ++i) {
            const double *r = stream ? rates[i].stream : rates[i].alone;
            gain[i] = log_gain(std::max(r[kWayCma], r[kWaySplit]),
                               r[nt_in[i] ? kWayStreamed : kWayPipeline]);
        }
        return run_range(gain, in);
    };
    std::vector<bool> alone_in(n, false), stream_in(n, false);
    c.alone = range_of(false, alone_in);
    c.stream = range_of(true, stream_in);
    // Shared gets from the size whose tail gains most over the receiver reading alone, over
    // the sizes that use put/get at all (the receiver does not know which case it is in:
    // the case that uses put/get at a size speaks for it, alone first).
    std::vector<double> split_gain(n, 0);
    bool any = false;
    for (size_t i = 0; i < n; ++i) {
        if (!alone_in[i] && !stream_in[i])
            continue;
        any = true;
        const double *r = alone_in[i] ? rates[i].alone : rates[i].stream;
        if (r[kWayCma] > 0 && r[kWaySplit] > 0)
            split_gain[i] = std::log(r[kWaySplit] / (margin * r[kWayCma]));
        else
            split_gain[i] = r[kWaySplit] > 0 ? 1 : -1;
    }
    size_t from = n;
    double best = 0;
    for (size_t a = 0; any && a < n; ++a) {
        double sum = 0;
        for (size_t b = a; b < n; ++b)
            sum += split_gain[b];
        if (sum > best) {
            best = sum;
            from = a;
        }
    }
    if (from < n)
        c.split_min = from == 0 ? 0 : rates[from].size;
    std::ostringstream why;
    why << "alone: " << range_text(c.alone) << "; in a stream: " << range_text(c.stream)
        << "; the pipeline writes with " << stores_text(c.streamed);
    if (any)
        why << "; gets "
            << (c.split_min == SIZE_MAX
                    ? std::string("by the receiver alone")
                    : "shared by both processes from " + bound_text(c.split_min));
    c.why = why.str();
    return c;
}

bool measure(const std::vector<uint64_t> &sizes, const Setting &set, std::vector<Rate> &rates,
             std::string &why)
{
    rates.clear();
    if (sizes.empty() || set.frag == 0 || set.slots == 0 || set.piece == 0) {
        why = "nothing to measure";
        return false;
    }
    const uint64_t max = *std::max_element(sizes.begin(), sizes.end());
    if (max > kMaxSize) {
        why = "size too large";
        return false;
    }
    Setting s = set;
    s.slots = std::clamp<size_t>(std::min(s.slots, kMaxSlotBytes / s.frag), 1, kMaxSlots);
    const size_t shared_bytes = sizeof(Control) + s.slots * s.frag;
    void *shared =
        mmap(nullptr, shared_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    void *priv =
        mmap(nullptr, 2 * kMaxSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct Unmap {
        void *p;
        size_t n;
        ~Unmap()
        {
            if (p != MAP_FAILED)
                munmap(p, n);
        }
    } u1{shared, shared_bytes}, u2{priv, 2 * kMaxSize};
    if (shared == MAP_FAILED || priv == MAP_FAILED) {
        why = std::string("cannot map buffers: ") + std::strerror(errno);
        return false;
    }
    Bufs b;
    b.ctl = new (shared) Control{};
    b.slots = static_cast<char *>(shared) + sizeof(Control);
    b.src = static_cast<char *>(priv);
    b.dst = b.src + kMaxSize;
    b.set = s;
    std::memset(b.dst, 0, kMaxSize);
    std::memset(b.slots, 0, s.slots * s.frag);
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0); // the child writes into us
    const pid_t parent = getpid();
    const int parent_cpu = sched_getcpu();
    const pid_t child = fork();
    if (child < 0) {
        why = std::string("cannot fork: ") + std::strerror(errno);
        return false;
    }
    if (child == 0)
        child_main(b, parent, parent_cpu);
    struct Reap {
        pid_t pid;
        ~Reap()
        {
            kill(pid, SIGKILL);
            int st;
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
            }
        }
    } reap{child};
    if (!wait_for([&] { return load(b.ctl->ready) == 1; })) {
        why = "the measuring process did not start";
        return false;
    }
    uint64_t seq = 0;
    // `count` transfers of `size` bytes back to back the way `op` says; seconds, < 0 on failure.
    auto once = [&](Op op, uint64_t size, uint64_t count) -> double {
        store(b.ctl->size, size);
        store(b.ctl->count, count);
        store(b.ctl->claim, 0);
        store(b.ctl->done, 0);
        store(b.ctl->produced, 0);
        store(b.ctl->consumed, 0);
        ++seq;
        const auto start = Clock::now();
        store(b.ctl->cmd, (seq << 8) | op);
        if (op == kOpCma) {
            if (!wait_for([&] { return load(b.ctl->produced) == 1; }))
                return -1;
            for (uint64_t k = 0; k < count; ++k)
                if (cma(false, child, b.dst, b.src, size) != 0)
                    return -1;
        } else if (op == kOpPipeline || op == kOpStreamed) {
            const Frags f(size, count, s.frag);
            for (uint64_t i = 0; i < f.total; ++i) {
                if (!wait_for([&] { return load(b.ctl->produced) > i; }))
                    return -1;
                const uint64_t off = f.offset(i, s.frag);
                std::memcpy(b.dst + off, b.slots + (i % s.slots) * s.frag,
                            std::min<uint64_t>(s.frag, size - off));
                store(b.ctl->consumed, i + 1);
            }
        } else {
            const size_t pc = piece_for(size, s.piece);
            const Frags f(size, count, pc);
            for (uint64_t i; (i = fetch_add(b.ctl->claim, 1)) < f.total;) {
                const uint64_t off = f.offset(i, pc);
                if (cma(false, child, b.dst + off, b.src + off,
                        std::min<uint64_t>(pc, size - off)) != 0)
                    return -1;
                fetch_add(b.ctl->done, 1);
            }
            if (!wait_for([&] { return load(b.ctl->done) >= f.total; }))
                return -1;
        }
        const double secs = std::chrono::duration<double>(Clock::now() - start).count();
        // The child finishes the command before the next one starts.
        if (!wait_for([&] { return load(b.ctl->ack) == seq; }))
            return -1;
        return secs;
    };
    // Warm up: fault in every page each way touches.
    for (Op op : {kOpCma, kOpPipeline, kOpSplit, kOpStreamed})
        if (once(op, max, 1) < 0) {
            why = "a warm-up transfer failed or stalled";
            return false;
        }
    // Every size and way is timed in several passes over all of them, and keeps its best
    // round of all: a neighbour or a process of the job starting makes some rounds slower,
    // never faster, and a disturbance shorter than a pass (about 0.3 s) spoils the rounds of
    // one pass only. (One pass in a busy moment chose single copy at every size from 8 KiB on
    // this page's machine, where the pipeline is 2-5x faster up to 128 KiB.)
    std::vector<std::array<double, 2 * kWays>> best(sizes.size());
    for (auto &b6 : best)
        b6.fill(1e30);
    for (int pass = 0; pass < kPasses; ++pass)
        for (size_t si = 0; si < sizes.size(); ++si) {
            const uint64_t size = sizes[si];
            for (const bool stream : {false, true}) {
                // A stream: enough messages for 8 MiB, at least 4 and at most 64 (the window of
                // a bandwidth benchmark): with fewer, the pipeline's fill and drain weighed as
                // much as its steady state, and it measured 17-19 GB/s at 512 KiB-1 MiB where
                // the real path streams at 25.
                const uint64_t count =
                    stream ? std::clamp<uint64_t>((uint64_t(8) << 20) / size, 4, 64) : 1;
                // Rounds: enough to move 32 MiB each way, at least 3 and at most 64.
                const int rounds =
                    int(std::clamp<uint64_t>((uint64_t(32) << 20) / (size * count), 3, 64));
                for (int round = 0; round < rounds; ++round) {
                    for (int k = 0; k < kWays; ++k) {
                        const int way = (k + round) % kWays;
                        const double t = once(Op(way), size, count);
                        if (t < 0) {
                            why = "a transfer failed or stalled";
                            return false;
                        }
                        double &cell = best[si][size_t(stream ? kWays + way : way)];
                        cell = std::min(cell, std::max(t, 1e-9) / double(count));
                    }
                }
            }
        }
    for (size_t si = 0; si < sizes.size(); ++si) {
        Rate r;
        r.size = sizes[si];
        for (int w = 0; w < kWays; ++w) {
            r.alone[w] = double(r.size) / best[si][size_t(w)];
            r.stream[w] = double(r.size) / best[si][size_t(kWays + w)];
        }
        rates.push_back(r);
    }
    ++seq;
    store(b.ctl->cmd, (seq << 8) | kOpQuit);
    return true;
}

std::string calibration_key(const Setting &s)
{
    std::string boot = "?";
    if (std::ifstream f("/proc/sys/kernel/random/boot_id"); f)
        std::getline(f, boot);
    utsname u{};
    uname(&u);
    std::string cpu = "?";
    if (std::ifstream f("/proc/cpuinfo"); f)
        for (std::string line; std::getline(f, line);)
            if (line.rfind("model name", 0) == 0) {
                cpu = line.substr(line.find(':') == std::string::npos ? 0 : line.find(':') + 1);
                break;
            }
    std::string key = boot + " " + u.release + " " + u.machine + " " +
                      std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) + " " + std::to_string(s.frag) +
                      " " + std::to_string(s.slots) + " " + std::to_string(s.piece) + " " + cpu;
    for (char &ch : key)
        if (ch == '\n' || ch == '\r')
            ch = ' ';
    return key;
}

namespace {

using Section = std::pair<std::string, std::vector<Rate>>; // a key and its rates

// The rows of one section, one per calibration size, from in.
bool parse_rows(std::istream &in, std::vector<Rate> &rates)
{
    std::string line;
    for (uint64_t want : calibration_sizes()) {
        if (!std::getline(in, line))
            return false;
        unsigned long long size = 0;
        Rate r;
        char extra = 0;
        if (std::sscanf(line.c_str(), "%llu %lf %lf %lf %lf %lf %lf %lf %lf %c", &size, &r.alone[0],
                        &r.alone[1], &r.alone[2], &r.alone[3], &r.stream[0], &r.stream[1],
                        &r.stream[2], &r.stream[3], &extra) != 9 ||
            size != want)
            return false;
        for (int w = 0; w < kWays; ++w)
            for (double v : {r.alone[w], r.stream[w]})
                if (!std::isfinite(v) || v <= 0 || v > 1e13) // above 10 TB/s: not a measurement
                    return false;
        r.size = size;
        rates.push_back(r);
    }
    return true;
}

// Every section of the file's text, in order (at most kMaxKeys, each key once); false if the
// text is not wholly such sections.
bool parse_sections(const std::string &text, std::vector<Section> &out)
{
    out.clear();
    std::istringstream in(text);
    std::string line;
    if (!std::getline(in, line) || line != kMagic)
        return false;
    while (std::getline(in, line)) {
        if (line.empty()) // the end
            return !std::getline(in, line) && !out.empty();
        if (line.compare(0, 4, "key ") != 0 || out.size() >= kMaxKeys)
            return false;
        std::vector<Rate> rates;
        if (!parse_rows(in, rates))
            return false;
        for (const Section &sec : out)
            if (sec.first == line.substr(4))
                return false;
        out.emplace_back(line.substr(4), std::move(rates));
    }
    return !out.empty();
}

std::string format_sections(const std::vector<Section> &sections)
{
    std::string text = std::string(kMagic) + "\n";
    char line[256];
    for (const auto &[key, rates] : sections) {
        text += "key " + key + "\n";
        for (const Rate &r : rates) {
            std::snprintf(line, sizeof line, "%llu %.6g %.6g %.6g %.6g %.6g %.6g %.6g %.6g\n",
                          (unsigned long long)r.size, r.alone[0], r.alone[1], r.alone[2],
                          r.alone[3], r.stream[0], r.stream[1], r.stream[2], r.stream[3]);
            text += line;
        }
    }
    return text;
}

// The text of the calibration file at path, if it is ours (a regular file of this user, not
// too large, not reached by a symbolic link); else empty.
std::string read_text(const std::string &path)
{
    const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return {};
    struct stat st {};
    std::string text;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_size > 0 &&
        st.st_size <= off_t(kMaxFile)) {
        text.resize(size_t(st.st_size));
        size_t got = 0;
        while (got < text.size()) {
            const ssize_t n = read(fd, text.data() + got, text.size() - got);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            got += size_t(n);
        }
        text.resize(got);
    }
    close(fd);
    return text;
}

} // namespace

bool parse_calibration(const std::string &text, const std::string &key, std::vector<Rate> &rates)
{
    rates.clear();
    std::vector<Section> sections;
    if (parse_sections(text, sections))
        for (Section &sec : sections)
            if (sec.first == key) {
                rates = std::move(sec.second);
                return true;
            }
    return false;
}

std::string format_calibration(const std::string &key, const std::vector<Rate> &rates)
{
    return format_sections({Section{key, rates}});
}

bool read_calibration(const std::string &path, const std::string &key, std::vector<Rate> &rates)
{
    return parse_calibration(read_text(path), key, rates);
}

bool write_calibration(const std::string &path, const std::string &key,
                       const std::vector<Rate> &rates)
{
    // Ours first, then the other keys the file holds (if it is ours and whole), the oldest
    // dropped past kMaxKeys.
    std::vector<Section> sections, old;
    sections.emplace_back(key, rates);
    if (parse_sections(read_text(path), old))
        for (Section &sec : old)
            if (sec.first != key && sections.size() < kMaxKeys)
                sections.push_back(std::move(sec));
    const std::string text = format_sections(sections);
    if (text.size() > kMaxFile)
        return false;
    const std::string tmp = path + ".tmp." + std::to_string(getpid());
    const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return false;
    const bool ok = write(fd, text.data(), text.size()) == ssize_t(text.size());
    close(fd);
    if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
        unlink(tmp.c_str());
        return false;
    }
    return true;
}

static bool calibrate_uncached(const std::string &path, const std::string &key, const Setting &set,
                               std::vector<Rate> &rates, std::string &source, std::string &why);

bool calibrate(const std::string &path, const Setting &set, std::vector<Rate> &rates,
               std::string &source, std::string &why)
{
    const std::string key = calibration_key(set);
    // Asked again in this process (at register time for weft_info's line, then by the
    // module): the same answer, without reading the file again.
    static std::string cached_path, cached_key, cached_source;
    static std::vector<Rate> cached_rates;
    if (!cached_rates.empty() && cached_path == path && cached_key == key) {
        rates = cached_rates;
        source = cached_source;
        return true;
    }
    const bool ok = calibrate_uncached(path, key, set, rates, source, why);
    if (ok) {
        cached_path = path;
        cached_key = key;
        cached_source = source;
        cached_rates = rates;
    }
    return ok;
}

static bool calibrate_uncached(const std::string &path, const std::string &key, const Setting &set,
                               std::vector<Rate> &rates, std::string &source, std::string &why)
{
    if (path.empty()) {
        source = "measured (not remembered: btl_sm_calibration_file is empty)";
        return measure(calibration_sizes(), set, rates, why);
    }
    if (read_calibration(path, key, rates)) {
        source = "remembered in " + path;
        return true;
    }
    // One process measures while the others of the host wait on the lock (and then read what
    // it wrote): measurements made at the same time would slow each other down.
    const std::string lock_path = path + ".lock";
    const int lock = open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    struct stat st {};
    const bool own_lock =
        lock >= 0 && fstat(lock, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid();
    if (own_lock) {
        while (flock(lock, LOCK_EX) != 0 && errno == EINTR) {
        }
        if (read_calibration(path, key, rates)) {
            close(lock);
            source = "remembered in " + path + " (measured by another process of this host)";
            return true;
        }
    }
    const bool ok = measure(calibration_sizes(), set, rates, why);
    if (ok && own_lock && write_calibration(path, key, rates))
        source = "measured now, remembered in " + path;
    else
        source = "measured now (could not remember it in " + path + ")";
    if (lock >= 0)
        close(lock);
    return ok;
}

std::string rates_text(const std::vector<Rate> &rates)
{
    std::string out;
    char item[192];
    for (const Rate &r : rates) {
        const uint64_t kib = r.size >> 10;
        std::snprintf(item, sizeof item,
                      "%s%llu%s: alone pipeline %.1f cma %.1f split %.1f streamed %.1f, stream "
                      "%.1f %.1f %.1f %.1f",
                      out.empty() ? "" : "; ", (unsigned long long)(kib >= 1024 ? kib >> 10 : kib),
                      kib >= 1024 ? "M" : "K", r.alone[0] / 1e9, r.alone[1] / 1e9, r.alone[2] / 1e9,
                      r.alone[3] / 1e9, r.stream[0] / 1e9, r.stream[1] / 1e9, r.stream[2] / 1e9,
                      r.stream[3] / 1e9);
        out += item;
    }
    return out + " GB/s";
}

} // namespace weft::btl::sm
