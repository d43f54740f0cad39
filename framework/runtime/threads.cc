// MPI_THREAD_MULTIPLE: the library's lock (runtime.h says how it is used).
#include "runtime.h"

#include <mutex>
#include <thread>

namespace weft::rt {

std::atomic<bool> g_threads{false};

namespace {

std::mutex api_mutex;
// The thread that holds api_mutex, and how many times it entered (touched by that thread only
// while it holds the lock).
std::atomic<std::thread::id> api_owner{};
unsigned api_depth = 0;
// Threads blocked in api_lock: a waiter lets go of the lock only when someone wants it.
std::atomic<unsigned> api_waiters{0};

bool holding() { return api_owner.load(std::memory_order_relaxed) == std::this_thread::get_id(); }

void take(unsigned depth)
{
    if (!api_mutex.try_lock()) {
        api_waiters.fetch_add(1, std::memory_order_relaxed);
        api_mutex.lock();
        api_waiters.fetch_sub(1, std::memory_order_relaxed);
    }
    api_owner.store(std::this_thread::get_id(), std::memory_order_relaxed);
    api_depth = depth;
}

} // namespace

void api_lock()
{
    if (holding()) {
        ++api_depth;
        return;
    }
    take(1);
}

void api_unlock()
{
    if (!holding())
        return; // let go already (an error handler that jumped out of the call)
    if (--api_depth == 0) {
        api_owner.store(std::thread::id{}, std::memory_order_relaxed);
        api_mutex.unlock();
    }
}

unsigned api_release()
{
    if (!holding())
        return 0;
    const unsigned depth = api_depth;
    api_depth = 0;
    api_owner.store(std::thread::id{}, std::memory_order_relaxed);
    api_mutex.unlock();
    return depth;
}

void api_reacquire(unsigned depth)
{
    if (depth)
        take(depth);
}

void api_yield()
{
    if (api_waiters.load(std::memory_order_relaxed) == 0 || !holding())
        return;
    const unsigned depth = api_release();
    std::this_thread::yield();
    api_reacquire(depth);
}

} // namespace weft::rt
