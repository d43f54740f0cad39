// The runtime: bootstrap, the modex, the processes of the job, the BTL
// modules, and the progress engine. weft/runtime.h is its C face for
// components; this is the C++ face for the MPI layer and the PML.
#ifndef WEFT_RUNTIME_RUNTIME_H
#define WEFT_RUNTIME_RUNTIME_H

#include <boot/boot.h>
#include <btl/btl.h>
#include <weft/runtime.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

struct weft_proc {
    int rank = -1;
    std::string hostname;
    std::string node;      // locality::node_id() of the process
    std::string binding;   // locality::describe() of the process
    uint32_t locality = 0; // WEFT_LOCALITY_* relative to this process
    bool local = false;
    bool self = false;
    std::vector<std::pair<std::string, std::string>> modex;
};

namespace weft::rt {

// Bootstrap, open the BTLs (their init publishes modex data), exchange the
// modex and make the procs. Errors are printed.
weft_status_t init();
// Close the BTLs, finalize the bootstrap. Never waits on a dead process.
weft_status_t finalize();
bool initialized();

weft_boot_module_t *boot();

// Spin on progress until pred() holds; yields the CPU when idle and the host
// is oversubscribed (and, more gently, when idle for long otherwise).
template <class Pred> void wait_until(Pred pred);
// One idle step: called by waiters between progress calls that found nothing.
void idle(unsigned &idle_rounds);
// Idle rounds spent spinning before idle() yields the core (at once when g_idle_yields: the
// host is oversubscribed, and the process waited for may need this core to run).
inline constexpr unsigned kSpinRounds = 20000;
extern bool g_idle_yields;

// The world ranks of the processes known to have failed, in the order this process learnt of
// them (fault tolerance; weft/runtime.h). weft_runtime_failure_epoch() is its size.
const std::vector<int> &failures();

// End the job: through the launcher if there is one, else exit.
[[noreturn]] void abort(int code, const std::string &message);

// ---- MPI_THREAD_MULTIPLE (threads.cc)
//
// One lock serialises the library: every MPI function holds it (framework/mpi's ApiGuard,
// WEFT_API_GUARD and WEFT_API_RETURN), re-entered freely by the thread that holds it (a
// callback that calls MPI). The wait loop lets it go between progress calls when another
// thread wants it, so that other threads' calls, and their waits, go on while one thread
// waits; error handlers run without it. Off (a load and a branch per call) until
// MPI_Init_thread grants MPI_THREAD_MULTIPLE.
extern std::atomic<bool> g_threads;
void api_lock();
void api_unlock();
// Let go of the lock if this thread holds it, at every depth: how deep it held it (0: not).
unsigned api_release();
// Take it again at the depth api_release returned.
void api_reacquire(unsigned depth);
// Let another thread that waits for the lock have it, then take it back.
void api_yield();

template <class Pred> void wait_until(Pred pred)
{
    unsigned idle_rounds = 0;
    while (!pred()) {
        if (weft_progress() > 0)
            idle_rounds = 0;
        else if (g_idle_yields || idle_rounds >= kSpinRounds)
            idle(idle_rounds); // (which lets the lock go while it sleeps)
        else
            ++idle_rounds; // spinning: idle() would do nothing more
        if (g_threads.load(std::memory_order_relaxed)) [[unlikely]]
            api_yield();
    }
}

} // namespace weft::rt

#endif
