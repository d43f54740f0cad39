// MPI_Init, MPI_Finalize and the environment calls.
#include "mpi_internal.h"

#include "mca_output.h"
#include "mca_select.h"
#include "runtime.h"
#include "weft_config.h"

#include <pml/pml.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <thread>
#include <time.h>
#include <unistd.h>

namespace weft::mpi {

namespace {

// A rank that Weft's mpirun forked itself (its parent is MPIRUN_ID, mpirun's pid) dies with
// mpirun even before MPI_Init, when it has no connection yet for the boot watchdog to watch:
// a rank computing before MPI_Init, or sleeping in it, would otherwise outlive a killed
// mpirun. Ranks started through a launch agent (ssh) have another parent and rely on the
// watchdog alone.
__attribute__((constructor)) void die_with_mpirun()
{
    const char *id = std::getenv("MPIRUN_ID");
    if (!id || !std::getenv("MPIRUN_RANK"))
        return;
    // mpirun reads the rank's output through a pipe, which stdio would fill a block at a time:
    // a line printed just before the rank dies (a failure it reports, the last words of a
    // rank that kills itself) would be lost with the buffer. Line-buffered, as on a terminal;
    // set before main, while the stream is still untouched.
    struct stat st {};
    if (fstat(STDOUT_FILENO, &st) == 0 && S_ISFIFO(st.st_mode))
        std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
    char *end = nullptr;
    const long launcher = std::strtol(id, &end, 10);
    if (end == id || *end || launcher <= 1 || getppid() != pid_t(launcher))
        return;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != pid_t(launcher)) // mpirun died before the request took hold
        _exit(1);
}

enum class Phase { before, running, after } phase = Phase::before;
const weft_pml_component_t *the_pml_component = nullptr;
int thread_level = MPI_THREAD_SINGLE;
std::thread::id main_thread; // the thread that initialised MPI

std::vector<weft_proc_t *> all_procs()
{
    std::vector<weft_proc_t *> procs;
    for (int r = 0; r < weft_runtime_world_size(); ++r)
        procs.push_back(weft_runtime_proc(r));
    return procs;
}

// Bytes from elsewhere, fit for a terminal: anything but printable ASCII as \xNN.
std::string printable(const std::string &in)
{
    std::string out;
    for (unsigned char c : in) {
        if (c >= 0x20 && c < 0x7f) {
            out += char(c);
        } else {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", c);
            out += hex;
        }
    }
    return out;
}

// Every rank must run the same PML: compare the names through the
// bootstrap, so that a mismatch is an error at init, not a hang later.
bool same_pml_everywhere(const std::string &mine)
{
    char name[WEFT_MCA_NAME_MAX] = {};
    std::strncpy(name, mine.c_str(), sizeof name - 1);
    const int n = weft_runtime_world_size();
    std::vector<char> all(size_t(n) * sizeof name);
    weft_boot_module_t *boot = weft::rt::boot();
    if (boot->boot_allgather(boot, name, all.data(), sizeof name) != WEFT_SUCCESS)
        return false;
    if (std::memcmp(all.data() + size_t(weft_runtime_world_rank()) * sizeof name, name,
                    sizeof name) != 0) {
        output::error("the bootstrap returned this rank's own PML name changed; the launcher or "
                      "the connection to it is broken");
        return false;
    }
    for (int r = 0; r < n; ++r) {
        const char *block = all.data() + size_t(r) * sizeof name;
        // A name is read only up to its block's end: a reply without the NUL is refused.
        const size_t len = strnlen(block, sizeof name);
        if (len == sizeof name) {
            output::error("the bootstrap returned a PML name for rank " + std::to_string(r) +
                          " without a terminating NUL within its " + std::to_string(sizeof name) +
                          " bytes; the launcher or the connection "
                          "to it is broken");
            return false;
        }
        const std::string theirs(block, len);
        if (theirs != name) {
            output::error("rank " + std::to_string(weft_runtime_world_rank()) + " selected pml " +
                          mine + " but rank " + std::to_string(r) + " selected pml " +
                          printable(theirs) +
                          "; every rank must use the same PML (set --mca pml NAME for all)");
            return false;
        }
    }
    return true;
}

int init(int required)
{
    if (phase == Phase::running) {
        output::error("MPI_Init called twice");
        return MPI_ERR_OTHER;
    }
    if (phase == Phase::after) {
        output::error("MPI_Init called after MPI_Finalize; MPI cannot be initialized again");
        return MPI_ERR_OTHER;
    }
    if (weft::rt::init() != WEFT_SUCCESS)
        weft::rt::abort(1, "MPI_Init: the runtime could not start (messages above)");
    setup_predefined(weft_runtime_world_rank(), weft_runtime_world_size());

    mca::FrameworkBase *base = mca::framework_base("pml");
    mca::Component *chosen = nullptr;
    if (base->open() != WEFT_SUCCESS || base->select_one(chosen) != WEFT_SUCCESS)
        weft::rt::abort(1, "MPI_Init: no PML can run (messages above)");
    the_pml_component = reinterpret_cast<const weft_pml_component_t *>(chosen->desc);
    g_pml = the_pml_component->init(0, 0);
    if (!g_pml)
        weft::rt::abort(1, "MPI_Init: pml/" + chosen->name + " could not start");
    if (!same_pml_everywhere(chosen->name))
        weft::rt::abort(1, "MPI_Init: the ranks did not agree on one PML (messages above)");
    auto procs = all_procs();
    if (g_pml->pml_add_procs(g_pml, procs.data(), procs.size()) != WEFT_SUCCESS)
        weft::rt::abort(1, "MPI_Init: some ranks cannot be reached (messages above)");
    weft_pml_set_selected(g_pml);
    if (coll_init() != WEFT_SUCCESS)
        weft::rt::abort(1, "MPI_Init: the coll framework cannot start (messages above)");
    if (comm_activate(MPI_COMM_WORLD) != MPI_SUCCESS || comm_activate(MPI_COMM_SELF) != MPI_SUCCESS)
        weft::rt::abort(1, "MPI_Init: MPI_COMM_WORLD cannot be set up (messages above)");
    thread_level = std::clamp(required, int(MPI_THREAD_SINGLE), int(MPI_THREAD_MULTIPLE));
    main_thread = std::this_thread::get_id();
    info_env_init(thread_level);
    phase = Phase::running;
    g_running = true;
    // Nobody sends before everyone can receive.
    weft_boot_module_t *boot = weft::rt::boot();
    if (weft_status_t rc = boot->boot_barrier(boot); rc != WEFT_SUCCESS)
        weft::rt::abort(1, std::string("MPI_Init: the bootstrap barrier failed (") +
                               weft_status_string(rc) + "; messages above)");
    // From here on every MPI call takes the library's lock (runtime.h).
    if (thread_level == MPI_THREAD_MULTIPLE) {
        weft::rt::g_threads.store(true);
        g_api_threads.store(true);
    }
    return MPI_SUCCESS;
}

} // namespace

bool g_running = false;
std::atomic<bool> g_api_threads{false};
weft_pml_module_t *g_pml = nullptr;

bool initialized() { return phase != Phase::before; }
bool finalized() { return phase == Phase::after; }

int state_error(const char *fn)
{
    if (phase == Phase::running)
        return MPI_SUCCESS;
    if (phase == Phase::before)
        std::fprintf(stderr, "weft: %s called before MPI_Init; initialize MPI first\n", fn);
    else
        std::fprintf(stderr, "weft: %s called after MPI_Finalize; MPI cannot be used any more\n",
                     fn);
    std::fflush(stderr);
    return MPI_ERR_OTHER;
}

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

WEFT_PROFILED(MPI_Init)
int PMPI_Init(int *, char ***)
{
    ToolGuard guard;
    return init(MPI_THREAD_SINGLE);
}

WEFT_PROFILED(MPI_Init_thread)
int PMPI_Init_thread(int *, char ***, int required, int *provided)
{
    ToolGuard guard;
    int rc = init(required);
    if (provided)
        *provided = thread_level;
    return rc;
}

WEFT_PROFILED(MPI_Query_thread)
int PMPI_Query_thread(int *provided)
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Query_thread"); rc != MPI_SUCCESS)
        return rc;
    *provided = thread_level;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Is_thread_main)
int PMPI_Is_thread_main(int *flag)
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Is_thread_main"); rc != MPI_SUCCESS)
        return rc;
    *flag = std::this_thread::get_id() == main_thread;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Initialized)
int PMPI_Initialized(int *flag)
{
    WEFT_API_GUARD;
    *flag = initialized();
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Finalized)
int PMPI_Finalized(int *flag)
{
    WEFT_API_GUARD;
    *flag = finalized();
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Finalize)
int PMPI_Finalize(void)
{
    ToolGuard guard;
    if (int rc = check_state("MPI_Finalize"); rc != MPI_SUCCESS)
        return rc;
    // First the equivalent of MPI_Comm_free on MPI_COMM_SELF: its attributes' delete callbacks
    // run, newest first, while all of MPI still works (MPI-3.1 8.7.1).
    int self_rc = comm_delete_attrs(MPI_COMM_SELF);
    if (self_rc != MPI_SUCCESS)
        self_rc = raise(MPI_COMM_SELF, self_rc, "MPI_Finalize",
                        "a delete callback of an attribute of MPI_COMM_SELF failed");
    // Every rank's traffic is done before any transport closes: the PML first hands
    // everything still queued to the transports (pml_enable(0) progresses until then), then a
    // barrier over the PML itself, which keeps progressing (a rank blocked in the bootstrap's
    // barrier would not drain its receive queues, and a peer flushing into them would wait
    // for ever).
    g_pml->pml_enable(g_pml, 0);
    // A component may hold a freed communicator until its next progress call (coll/ftagree
    // after an agreement): one call gives them back, so that each goes before its component
    // does (a 1-rank job may make no other call from here on).
    weft_progress();
    // With fault tolerance the barriers leave out the failed processes (mpirun's too).
    if (weft_runtime_ft_enabled())
        ft_barrier(MPI_COMM_WORLD);
    else
        internal_barrier(MPI_COMM_WORLD);
    // A rank that cannot tell its job it finished must not exit 0 as if it had.
    weft_boot_module_t *boot = weft::rt::boot();
    if (weft_status_t rc = boot->boot_barrier(boot); rc != WEFT_SUCCESS)
        weft::rt::abort(1, std::string("MPI_Finalize: the bootstrap barrier failed (") +
                               weft_status_string(rc) + "; messages above)");
    coll_comm_disable(MPI_COMM_SELF);
    coll_comm_disable(MPI_COMM_WORLD);
    coll_finalize();
    g_pml->pml_del_comm(g_pml, MPI_COMM_SELF);
    g_pml->pml_del_comm(g_pml, MPI_COMM_WORLD);
    auto procs = all_procs();
    g_pml->pml_del_procs(g_pml, procs.data(), procs.size());
    if (the_pml_component->finalize)
        the_pml_component->finalize();
    weft::mca::framework_base("pml")->close();
    weft_pml_set_selected(nullptr);
    g_pml = nullptr;
    phase = Phase::after;
    g_running = false;
    if (weft_status_t rc = weft::rt::finalize(); rc != WEFT_SUCCESS) {
        weft::output::error(std::string("MPI_Finalize: the bootstrap did not close cleanly (") +
                            weft_status_string(rc) + "; messages above); ending with status 1");
        std::exit(1);
    }
    return self_rc;
}

WEFT_PROFILED(MPI_Abort)
int PMPI_Abort(MPI_Comm, int errorcode)
{
    WEFT_API_GUARD;
    weft::rt::abort(errorcode, "MPI_Abort was called with error code " + std::to_string(errorcode));
}

WEFT_PROFILED(MPI_Wtime)
double PMPI_Wtime(void)
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

WEFT_PROFILED(MPI_Wtick)
double PMPI_Wtick(void)
{
    timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

WEFT_PROFILED(MPI_Get_processor_name)
int PMPI_Get_processor_name(char *name, int *resultlen)
{
    WEFT_API_GUARD;
    char buf[MPI_MAX_PROCESSOR_NAME] = "";
    gethostname(buf, sizeof buf - 1);
    std::strncpy(name, buf, MPI_MAX_PROCESSOR_NAME);
    *resultlen = int(std::strlen(buf));
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Get_version)
int PMPI_Get_version(int *version, int *subversion)
{
    WEFT_API_GUARD;
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

// The profiling interface's hook for tools (MPI-3.1 section 14.2.4): the library itself does
// nothing with it, at any time, even before MPI_Init.
WEFT_PROFILED(MPI_Pcontrol)
int PMPI_Pcontrol(const int, ...) { return MPI_SUCCESS; }

WEFT_PROFILED(MPI_Get_library_version)
int PMPI_Get_library_version(char *version, int *resultlen)
{
    WEFT_API_GUARD;
    const std::string v = std::string("Weft ") + PACKAGE_VERSION;
    std::strncpy(version, v.c_str(), MPI_MAX_LIBRARY_VERSION_STRING);
    *resultlen = int(v.size());
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Alloc_mem)
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info, void *baseptr)
{
    WEFT_API_GUARD;
    if (size < 0)
        return raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Alloc_mem", "negative size");
    void *p = std::malloc(size_t(size) ? size_t(size) : 1);
    if (!p)
        return raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Alloc_mem");
    *static_cast<void **>(baseptr) = p;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Free_mem)
int PMPI_Free_mem(void *base)
{
    WEFT_API_GUARD;
    std::free(base);
    return MPI_SUCCESS;
}

} // extern "C"
