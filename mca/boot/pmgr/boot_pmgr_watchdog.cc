#include "boot_pmgr_watchdog.h"

#include <weft/runtime.h>

#include "pmgr_protocol.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

namespace weft::boot::pmgr_comp {

namespace {

struct Watchdog {
    bool running = false;
    pthread_t thread{};
    int rank = 0;
    int fds[2] = {-1, -1}; // duplicates of the watched connections
    int stop_pipe[2] = {-1, -1};
    std::atomic<bool> disarmed{false};
    // The event channel's records read so far (fds[1] is the channel's duplicate).
    std::mutex events_lock;
    std::string events;
    std::atomic<bool> events_new{false};
    int heartbeat_ms = 0;              // the failure detector's period (0: off)
    size_t beat_sent = 0;              // bytes of the current heartbeat record sent (a short send)
    std::atomic<bool> watching{false}; // the thread runs (it ends on a poll() error)
} W;

// Read what the event channel holds now. False when the channel closed or failed.
bool read_events(int fd)
{
    char buf[1024];
    for (;;) {
        const ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0) {
            std::lock_guard<std::mutex> hold(W.events_lock);
            W.events.append(buf, size_t(n));
            W.events_new.store(true, std::memory_order_release);
            weft_runtime_boot_events_ready(); // progress asks boot_poll_event
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    }
}

void close_fd(int &fd)
{
    if (fd >= 0)
        close(fd);
    fd = -1;
}

void keepalive(int fd)
{
    int on = 1, idle = keepalive_idle_s, intvl = keepalive_interval_s, cnt = keepalive_count;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
    // No TCP_USER_TIMEOUT: it would override these counts, and it also ends a connection to
    // an mpirun that is alive but slow to read (a zero window).
}

// One heartbeat record on the event channel (fds[1]): this process is alive and not stopped.
// A full socket buffer skips it (mpirun not reading is no reason to block); a short send is
// finished first next time (or by watchdog_stop), so the records stay whole.
void heartbeat(int flags = MSG_DONTWAIT)
{
    const int v = weft::pmgr::event_heartbeat;
    const char *bytes = reinterpret_cast<const char *>(&v);
    while (W.beat_sent < sizeof v) {
        const ssize_t w =
            send(W.fds[1], bytes + W.beat_sent, sizeof v - W.beat_sent, MSG_NOSIGNAL | flags);
        if (w > 0)
            W.beat_sent += size_t(w);
        else if (!(w < 0 && errno == EINTR))
            return;
    }
    W.beat_sent = 0;
}

void *watch(void *)
{
    using Clock = std::chrono::steady_clock;
    const bool beats = W.heartbeat_ms > 0 && W.fds[1] >= 0;
    auto next_beat = Clock::now();
    pollfd p[3];
    nfds_t n = 0;
    p[n++] = {W.stop_pipe[0], POLLIN, 0};
    for (int i = 0; i < 2; ++i)
        if (W.fds[i] >= 0)
            p[n++] = {W.fds[i], short(i == 1 ? POLLRDHUP | POLLIN : POLLRDHUP), 0};
    for (;;) {
        int wait_ms = -1;
        if (beats) {
            const auto now = Clock::now();
            if (now >= next_beat) {
                heartbeat();
                next_beat = now + std::chrono::milliseconds(W.heartbeat_ms);
            }
            wait_ms = int(std::chrono::ceil<std::chrono::milliseconds>(next_beat - now).count());
        }
        int rc = poll(p, n, wait_ms);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc == 0)
            continue;
        if (rc < 0 || p[0].revents || W.disarmed.load()) {
            W.watching = false; // boot_poll_event reads the event channel itself from here
            return nullptr;
        }
        for (nfds_t i = 1; i < n; ++i) {
            // Records first: a failure notice that came with the hang-up is read before the
            // rank ends.
            if ((p[i].revents & POLLIN) && p[i].fd == W.fds[1] && read_events(p[i].fd) &&
                !(p[i].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)))
                continue;
            if (!(p[i].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL | POLLIN)))
                continue;
            if (W.disarmed.load())
                return nullptr;
            int err = 0;
            socklen_t len = sizeof err;
            getsockopt(p[i].fd, SOL_SOCKET, SO_ERROR, &err, &len);
            char line[256];
            int k = std::snprintf(line, sizeof line,
                                  "weft: rank %d: lost the connection to mpirun (%s); ending\n",
                                  W.rank, err ? std::strerror(err) : "closed by mpirun");
            if (k > 0) {
                ssize_t w = write(STDERR_FILENO, line,
                                  size_t(k) < sizeof line ? size_t(k) : sizeof line - 1);
                (void)w;
            }
            weft_runtime_remove_own_files(); // nobody else will: mpirun has gone
            _exit(exit_lost_mpirun);
        }
    }
}

} // namespace

bool watchdog_start(int rank, int fd_a, int fd_b, int heartbeat_ms)
{
    if (W.running)
        return true;
    W.rank = rank;
    W.heartbeat_ms = heartbeat_ms;
    W.disarmed = false;
    int in[2] = {fd_a, fd_b};
    for (int i = 0; i < 2; ++i) {
        W.fds[i] = in[i] >= 0 ? fcntl(in[i], F_DUPFD_CLOEXEC, 3) : -1;
        if (W.fds[i] >= 0)
            keepalive(W.fds[i]);
    }
    if (pipe2(W.stop_pipe, O_CLOEXEC) != 0) {
        std::fprintf(stderr, "weft: rank %d: cannot start the mpirun watchdog: %s\n", rank,
                     std::strerror(errno));
        watchdog_stop();
        return false;
    }
    // The thread takes no signals: they stay with the application's threads.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    W.watching = true;
    int rc = pthread_create(&W.thread, nullptr, watch, nullptr);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (rc != 0) {
        std::fprintf(stderr, "weft: rank %d: cannot start the mpirun watchdog: %s\n", rank,
                     std::strerror(rc));
        watchdog_stop();
        return false;
    }
    W.running = true;
    return true;
}

void watchdog_stop()
{
    W.disarmed = true;
    if (W.running) {
        char c = 0;
        ssize_t w;
        do {
            w = write(W.stop_pipe[1], &c, 1);
        } while (w < 0 && errno == EINTR);
        pthread_join(W.thread, nullptr);
        W.running = false;
        W.watching = false;
        if (W.beat_sent > 0 && W.fds[1] >= 0) // a record begun: whole before the channel's next
            heartbeat(0);
    }
    for (int &fd : W.fds)
        close_fd(fd);
    close_fd(W.stop_pipe[0]);
    close_fd(W.stop_pipe[1]);
}

void watchdog_disarm() { W.disarmed = true; }

bool watchdog_reads_events() { return W.running && W.watching.load() && W.fds[1] >= 0; }

bool watchdog_take_events(std::string &out)
{
    if (!W.events_new.load(std::memory_order_acquire))
        return false;
    std::lock_guard<std::mutex> hold(W.events_lock);
    W.events_new.store(false, std::memory_order_relaxed);
    out += W.events;
    W.events.clear();
    return true;
}

} // namespace weft::boot::pmgr_comp
