#include "runtime.h"

#include "job_secret.h"
#include "locality.h"

#include "mca_output.h"
#include "mca_select.h"

#include <boot/boot.h>
#include <btl/btl.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sched.h>
#include <unistd.h>

namespace weft::rt {

bool g_idle_yields = false;

namespace {

struct State {
    bool initialized = false;
    weft_boot_module_t *boot = nullptr;
    int rank = 0;
    int size = 1;
    int local_rank = 0;
    int local_size = 1;
    bool oversubscribed = false;
    std::string jobid;
    std::vector<weft_proc> procs;
    std::vector<std::pair<std::string, std::string>> my_modex;
    bool modex_done = false;
    std::vector<weft_progress_fn_t> progress;
    // Process failures (weft/runtime.h): fault tolerance on, the launcher's events to read,
    // each rank's failed state, the failures in the order learnt and how many are announced.
    bool ft = false;
    int ft_verbose = 0;
    bool events = false;
    std::vector<uint8_t> failed;
    std::vector<int> failures;
    size_t announced = 0;
    std::vector<std::pair<weft_failure_fn_t, void *>> failure_fns;
};

State S;
// Whether progress has failure work (poll_failures): fault tolerance is on, and a launcher
// event waits, or a failure is not announced yet, or the boot component never says.
std::atomic<bool> g_attention{false};

// The most modex data one rank may publish. The components publish a few hundred bytes each;
// a length beyond this in a bootstrap reply is corruption, not data.
constexpr uint64_t modex_max_bytes = 16u << 20;

void put_u32(std::string &out, uint32_t v) { out.append(reinterpret_cast<const char *>(&v), 4); }

bool get_u32(const std::string &in, size_t &off, uint32_t &v)
{
    if (off + 4 > in.size())
        return false;
    std::memcpy(&v, in.data() + off, 4);
    off += 4;
    return true;
}

std::string encode_modex()
{
    std::string out;
    put_u32(out, uint32_t(S.my_modex.size()));
    for (const auto &[k, v] : S.my_modex) {
        put_u32(out, uint32_t(k.size()));
        out += k;
        put_u32(out, uint32_t(v.size()));
        out += v;
    }
    return out;
}

bool decode_modex(const std::string &in, std::vector<std::pair<std::string, std::string>> &out)
{
    size_t off = 0;
    uint32_t n;
    // Every entry takes at least its two lengths: a count the blob cannot hold is refused
    // before anything is reserved for it.
    if (!get_u32(in, off, n) || n > (in.size() - off) / 8)
        return false;
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t kl, vl;
        if (!get_u32(in, off, kl) || kl > in.size() - off)
            return false;
        std::string k = in.substr(off, kl);
        off += kl;
        if (!get_u32(in, off, vl) || vl > in.size() - off)
            return false;
        out.emplace_back(k, in.substr(off, vl));
        off += vl;
    }
    return off == in.size();
}

// A corrupt or hostile bootstrap reply: say what was wrong, and fail the rank.
weft_status_t bad_reply(const std::string &what)
{
    output::error("the bootstrap returned a malformed reply: " + what +
                  "; the launcher or the connection to it is broken");
    return WEFT_ERR_BAD_HEADER;
}

// Everyone's modex blob: first the lengths, then the blobs padded to the
// longest (the bootstrap's allgather takes equal sizes). Nothing that comes back is trusted:
// our own entries must come back as we sent them (a shifted stream does not), and a length
// must fit what a rank can publish before anything is allocated for it.
weft_status_t exchange_modex()
{
    const std::string mine = encode_modex();
    if (mine.size() > modex_max_bytes)
        return bad_reply("this rank's own modex (" + std::to_string(mine.size()) +
                         " bytes) is larger than the " + std::to_string(modex_max_bytes) +
                         " bytes a rank may publish");
    std::vector<uint64_t> lens(size_t(S.size));
    uint64_t my_len = mine.size();
    if (weft_status_t rc = S.boot->boot_allgather(S.boot, &my_len, lens.data(), sizeof my_len);
        rc != WEFT_SUCCESS)
        return rc;
    if (lens[size_t(S.rank)] != my_len)
        return bad_reply("rank " + std::to_string(S.rank) + "'s own modex length came back as " +
                         std::to_string(lens[size_t(S.rank)]) + " instead of " +
                         std::to_string(my_len));
    const uint64_t limit =
        std::min<uint64_t>(modex_max_bytes, uint64_t(INT32_MAX) / uint64_t(S.size));
    for (int r = 0; r < S.size; ++r)
        if (lens[size_t(r)] > limit)
            return bad_reply("a modex length of " + std::to_string(lens[size_t(r)]) +
                             " bytes for rank " + std::to_string(r) + " (at most " +
                             std::to_string(limit) + " allowed in a job of " +
                             std::to_string(S.size) + ")");
    const uint64_t max = *std::max_element(lens.begin(), lens.end());
    std::string padded = mine;
    padded.resize(size_t(max));
    std::string all(size_t(max) * size_t(S.size), '\0');
    if (max > 0)
        if (weft_status_t rc = S.boot->boot_allgather(S.boot, padded.data(), all.data(), max);
            rc != WEFT_SUCCESS)
            return rc;
    if (all.compare(size_t(S.rank) * max, size_t(max), padded) != 0)
        return bad_reply("rank " + std::to_string(S.rank) + "'s own modex data came back changed");
    S.procs.assign(size_t(S.size), weft_proc{});
    for (int r = 0; r < S.size; ++r) {
        weft_proc &p = S.procs[size_t(r)];
        p.rank = r;
        p.self = r == S.rank;
        if (!decode_modex(all.substr(size_t(r) * max, size_t(lens[size_t(r)])), p.modex)) {
            output::error("the modex data of rank " + std::to_string(r) + " is malformed");
            return WEFT_ERR_BAD_HEADER;
        }
        for (const auto &[k, v] : p.modex) {
            if (k == "rt.hostname")
                p.hostname = v;
            else if (k == "rt.node")
                p.node = v;
            else if (k == "rt.locality")
                p.binding = v;
        }
    }
    const weft_proc &me = S.procs[size_t(S.rank)];
    for (auto &p : S.procs) {
        p.local = p.node == me.node;
        p.locality = p.local ? locality::relative(me.binding, p.binding) : 0;
    }
    S.modex_done = true;
    return WEFT_SUCCESS;
}

weft_status_t find_local_ranks(const char *host)
{
    char mine[256] = {};
    std::memcpy(mine, host, std::min(std::strlen(host), sizeof mine - 1));
    std::vector<char> all(size_t(S.size) * sizeof mine);
    if (weft_status_t rc = S.boot->boot_allgather(S.boot, mine, all.data(), sizeof mine);
        rc != WEFT_SUCCESS)
        return rc;
    if (std::memcmp(all.data() + size_t(S.rank) * sizeof mine, mine, sizeof mine) != 0)
        return bad_reply("rank " + std::to_string(S.rank) + "'s own node name came back changed");
    S.local_rank = 0;
    S.local_size = 0;
    for (int r = 0; r < S.size; ++r) {
        if (std::strncmp(all.data() + size_t(r) * sizeof mine, mine, sizeof mine) != 0)
            continue;
        if (r < S.rank)
            ++S.local_rank;
        ++S.local_size;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    S.oversubscribed = cores > 0 && S.local_size > cores;
    g_idle_yields = S.oversubscribed;
    return WEFT_SUCCESS;
}

} // namespace

bool initialized() { return S.initialized; }
weft_boot_module_t *boot() { return S.boot; }

weft_status_t init()
{
    if (S.initialized)
        return WEFT_SUCCESS;
    S = State{};
    if (weft_status_t rc = mca::register_all(); rc != WEFT_SUCCESS)
        return rc;
    weft_mca_param_warn_unknown();
    if (weft_status_t rc = weft_boot_select(&S.boot); rc != WEFT_SUCCESS)
        return rc;
    if (weft_status_t rc = secret::load_from_launcher(); rc != WEFT_SUCCESS)
        return rc;
    char jobid[256];
    if (weft_status_t rc = S.boot->boot_init(S.boot, &S.rank, &S.size, jobid, sizeof jobid);
        rc != WEFT_SUCCESS) {
        output::error(std::string("cannot bootstrap: ") + weft_status_string(rc));
        return rc;
    }
    S.jobid = jobid;
    S.ft = weft_mca_param_bool(weft_mca_param_find("mpi_ft_enable")) != 0;
    S.ft_verbose = int(weft_mca_param_int(weft_mca_param_find("mpi_ft_verbose")));
    S.events = (S.boot->boot_flags & WEFT_BOOT_FLAG_FAILURE_EVENTS) != 0;
    S.failed.assign(size_t(S.size), 0);
    if (S.ft && S.events)
        g_attention.store(true, std::memory_order_seq_cst); // the first progress looks
    if (weft_status_t rc = secret::init(S.boot, S.rank, S.size, S.jobid); rc != WEFT_SUCCESS)
        return rc;
    const char *host = std::getenv("WEFT_HOSTNAME");
    char buf[256] = "";
    if (!host) {
        gethostname(buf, sizeof buf - 1);
        host = buf;
    }
    weft_modex_send("rt.hostname", host, std::strlen(host));
    const std::string node = locality::node_id(), binding = locality::describe();
    weft_modex_send("rt.node", node.data(), node.size());
    weft_modex_send("rt.locality", binding.data(), binding.size());
    // Which ranks share this node, before the BTLs start: they size their
    // shared memory by it.
    if (weft_status_t rc = find_local_ranks(node.c_str()); rc != WEFT_SUCCESS)
        return rc;
    if (weft_status_t rc = weft_btl_select(); rc != WEFT_SUCCESS)
        return rc;
    if (weft_status_t rc = exchange_modex(); rc != WEFT_SUCCESS)
        return rc;
    S.initialized = true;
    return WEFT_SUCCESS;
}

weft_status_t finalize()
{
    if (!S.initialized)
        return WEFT_SUCCESS;
    weft_btl_close();
    weft_status_t rc = S.boot->boot_finalize(S.boot);
    weft_boot_close();
    S.initialized = false;
    S.progress.clear();
    S.failure_fns.clear();
    return rc;
}

// Failures (weft/runtime.h): a rank is marked once; the count of failures learnt is the epoch.
std::atomic<uint64_t> g_failure_epoch{0};

void mark_failed(int rank, const std::string &why)
{
    if (rank < 0 || rank >= S.size || rank == S.rank || S.failed[size_t(rank)])
        return;
    // Read from any thread (weft_runtime_proc_failed): set through an atomic reference.
    std::atomic_ref<uint8_t>(S.failed[size_t(rank)]).store(1, std::memory_order_release);
    S.failures.push_back(rank);
    g_failure_epoch.fetch_add(1, std::memory_order_release);
    g_attention.store(true, std::memory_order_seq_cst); // to announce
    if (S.ft_verbose >= 1)
        output::emit(output::Kind::verbose, "rank " + std::to_string(S.rank) + ": rank " +
                                                std::to_string(rank) + " failed (" + why + ")");
}

// What a launcher event says, for the verbose line.
std::string describe_event(const weft_boot_event_t &ev)
{
    if (ev.signal > 0)
        return std::string("killed by signal ") + std::to_string(ev.signal);
    if (ev.exit_code >= 0)
        return "exited with status " + std::to_string(ev.exit_code) + " without finalizing";
    return "reported by the launcher";
}

// The launcher's events, then the announcement of every failure not yet announced.
// weft_runtime_boot_events_ready: whether the boot component says when events wait, and
// whether some do.
std::atomic<bool> g_events_notified{false}, g_events_waiting{false};

int poll_failures()
{
    int n = 0;
    // Cleared before looking, so that a notice that comes while we look sets it again.
    g_attention.store(false, std::memory_order_seq_cst);
    const bool notified = g_events_notified.load(std::memory_order_seq_cst);
    if (S.events && (!notified || g_events_waiting.exchange(false, std::memory_order_seq_cst))) {
        for (;;) {
            weft_boot_event_t ev{};
            ev.struct_size = sizeof ev;
            if (S.boot->boot_poll_event(S.boot, &ev) != WEFT_SUCCESS)
                break;
            ++n;
            if (ev.kind == WEFT_BOOT_EVENT_PROC_FAILED)
                mark_failed(ev.rank, describe_event(ev));
        }
    }
    while (S.announced < S.failures.size()) {
        const int rank = S.failures[S.announced++];
        for (const auto &[fn, arg] : S.failure_fns)
            fn(rank, arg);
        ++n;
    }
    // A component that never says when events wait is asked at every progress call.
    if (S.events && !notified)
        g_attention.store(true, std::memory_order_relaxed);
    return n;
}

const std::vector<int> &failures() { return S.failures; }

void idle(unsigned &idle_rounds)
{
    ++idle_rounds;
    // Oversubscribed: give the core away at once, or the process we wait
    // for may never run. Otherwise spin a while first (latency), then yield.
    const bool give = S.oversubscribed || idle_rounds > kSpinRounds, nap = idle_rounds > 2000000;
    if (!give && !nap)
        return;
    // Never asleep with the library's lock (MPI_THREAD_MULTIPLE): another thread may need it.
    const unsigned held = g_threads.load(std::memory_order_relaxed) ? api_release() : 0;
    if (give)
        sched_yield();
    if (nap)
        usleep(50);
    api_reacquire(held);
}

void abort(int code, const std::string &message)
{
    if (S.boot && S.boot->boot_abort)
        S.boot->boot_abort(S.boot, code, message.c_str());
    else
        output::error(message);
    weft_runtime_remove_own_files(); // _Exit runs no destructor that would
    std::_Exit(code ? code : 1);
}

namespace {

// weft_runtime_own_file's table: plain storage, no allocation, so that any way out can read it.
char g_own_files[WEFT_RUNTIME_OWN_FILES_MAX][512];
std::mutex g_own_files_lock;

} // namespace

} // namespace weft::rt

using weft::rt::S;

extern "C" {

int weft_runtime_world_rank(void) { return S.rank; }
int weft_runtime_world_size(void) { return S.size; }
int weft_runtime_local_rank(void) { return S.local_rank; }
int weft_runtime_local_size(void) { return S.local_size; }
const char *weft_runtime_jobid(void) { return S.jobid.c_str(); }

void weft_runtime_own_file(const char *path, int add)
{
    if (!path || std::strlen(path) >= sizeof weft::rt::g_own_files[0])
        return;
    std::lock_guard<std::mutex> hold(weft::rt::g_own_files_lock);
    for (auto &slot : weft::rt::g_own_files) {
        if (add && !slot[0]) {
            std::memcpy(slot, path, std::strlen(path) + 1);
            return;
        }
        if (!add && std::strcmp(slot, path) == 0) {
            slot[0] = '\0';
            return;
        }
    }
}

void weft_runtime_remove_own_files(void)
{
    for (auto &slot : weft::rt::g_own_files)
        if (slot[0]) {
            unlink(slot);
            slot[0] = '\0';
        }
}

const char *weft_runtime_job_file_prefix(void)
{
    static std::string prefix;
    static std::string made_for;
    if (prefix.empty() || made_for != S.jobid) {
        made_for = S.jobid;
        prefix = "weft-";
        for (size_t i = 0; i < S.jobid.size() && i < 64; ++i) {
            const unsigned char c = static_cast<unsigned char>(S.jobid[i]);
            prefix += (std::isalnum(c) || c == '-' || c == '_') ? char(c) : '_';
        }
        if (S.jobid.empty())
            prefix += "job";
    }
    return prefix.c_str();
}
int weft_runtime_oversubscribed(void) { return S.oversubscribed; }

weft_proc_t *weft_runtime_proc(int rank)
{
    if (rank < 0 || size_t(rank) >= S.procs.size())
        return nullptr;
    return &S.procs[size_t(rank)];
}

int weft_proc_rank(const weft_proc_t *p) { return p ? p->rank : -1; }
const char *weft_proc_hostname(const weft_proc_t *p) { return p ? p->hostname.c_str() : ""; }
int weft_proc_is_local(const weft_proc_t *p) { return p && p->local; }
uint32_t weft_proc_locality(const weft_proc_t *p) { return p ? p->locality : 0; }

const char *weft_locality_string(uint32_t flags)
{
    static const char *const names[] = {"node", "package", "numa", "l3", "core"};
    static thread_local std::string out;
    out.clear();
    for (unsigned i = 0; i < 5; ++i)
        if (flags & (1u << i))
            out += (out.empty() ? "" : ",") + std::string(names[i]);
    if (out.empty())
        out = "remote";
    return out.c_str();
}
int weft_proc_is_self(const weft_proc_t *p) { return p && p->self; }

weft_status_t weft_modex_send(const char *key, const void *data, size_t len)
{
    if (!key || (len && !data) || S.modex_done)
        return WEFT_ERR_BAD_PARAM;
    for (const auto &kv : S.my_modex)
        if (kv.first == key)
            return WEFT_ERR_EXISTS;
    S.my_modex.emplace_back(key, std::string(static_cast<const char *>(data), len));
    return WEFT_SUCCESS;
}

weft_status_t weft_modex_recv(const char *key, const weft_proc_t *proc, const void **data,
                              size_t *len)
{
    if (!key || !proc || !data || !len)
        return WEFT_ERR_BAD_PARAM;
    for (const auto &[k, v] : proc->modex)
        if (k == key) {
            *data = v.data();
            *len = v.size();
            return WEFT_SUCCESS;
        }
    return WEFT_ERR_NOT_FOUND;
}

weft_status_t weft_progress_register(weft_progress_fn_t fn)
{
    if (!fn)
        return WEFT_ERR_BAD_PARAM;
    if (std::find(S.progress.begin(), S.progress.end(), fn) == S.progress.end())
        S.progress.push_back(fn);
    return WEFT_SUCCESS;
}

weft_status_t weft_progress_unregister(weft_progress_fn_t fn)
{
    auto it = std::find(S.progress.begin(), S.progress.end(), fn);
    if (it == S.progress.end())
        return WEFT_ERR_NOT_FOUND;
    S.progress.erase(it);
    return WEFT_SUCCESS;
}

int weft_progress(void)
{
    int n = 0;
    for (size_t i = 0; i < S.progress.size(); ++i)
        n += S.progress[i]();
    // One load, the same with fault tolerance off and on: set only while there is failure
    // work (fault tolerance on, and a launcher event waits or a failure is not announced).
    if (weft::rt::g_attention.load(std::memory_order_relaxed)) [[unlikely]]
        n += weft::rt::poll_failures();
    return n;
}

int weft_runtime_ft_enabled(void) { return S.ft; }

int weft_runtime_threads(void) { return weft::rt::g_threads.load(std::memory_order_relaxed); }

void weft_runtime_boot_events_ready(void)
{
    weft::rt::g_events_waiting.store(true, std::memory_order_seq_cst);
    weft::rt::g_events_notified.store(true, std::memory_order_seq_cst);
    if (S.ft)
        weft::rt::g_attention.store(true, std::memory_order_seq_cst);
}

int weft_runtime_proc_failed(int rank)
{
    return rank >= 0 && size_t(rank) < S.failed.size() &&
           std::atomic_ref<uint8_t>(S.failed[size_t(rank)]).load(std::memory_order_acquire);
}

uint64_t weft_runtime_failure_epoch(void)
{
    return weft::rt::g_failure_epoch.load(std::memory_order_acquire);
}

weft_status_t weft_runtime_report_failure(int rank, const char *why)
{
    if (!S.ft)
        return WEFT_ERR_NOT_SUPPORTED;
    if (rank < 0 || rank >= S.size)
        return WEFT_ERR_BAD_PARAM;
    weft::rt::mark_failed(rank, why ? why : "reported by a component");
    return WEFT_SUCCESS;
}

weft_status_t weft_runtime_failure_register(weft_failure_fn_t fn, void *arg)
{
    if (!fn)
        return WEFT_ERR_BAD_PARAM;
    if (S.failure_fns.size() >= 8)
        return WEFT_ERR_OUT_OF_RESOURCE;
    S.failure_fns.emplace_back(fn, arg);
    return WEFT_SUCCESS;
}

void weft_runtime_abort(int code, const char *message)
{
    weft::rt::abort(code, message ? message : "");
}

void weft_progress_wait(int (*done)(void *arg), void *arg)
{
    weft::rt::wait_until([&] { return done(arg) != 0; });
}

} // extern "C"
