// pmgr_hostile_server: a PMGR_COLLECTIVE protocol-8 "mpirun" that misbehaves on purpose, to
// check that the client side (boot/pmgr, the runtime, MPI_Init) meets bad bootstrap input with
// a clear error: never a crash, a hang or a rank left behind.
//
// Usage: pmgr_hostile_server FAULT ROUND NPROCS program [args...]
//
// It listens on 127.0.0.1, starts NPROCS copies of program with the MPIRUN_* environment
// (MPIRUN_USE_TREES=0, so that every collective goes through it), accepts their handshakes and
// serves BARRIER, BCAST, GATHER and ALLGATHER rounds until a round of CLOSE. Round ROUND
// (1-based; 0 is "right after the handshakes") gets FAULT:
//   none     serve honestly (a baseline)
//   trickle  every reply goes out one byte at a time (short reads; the job must still work)
//   huge     an ALLGATHER reply where another rank's 8-byte block is 2^60 (a huge length)
//   extra    8 bytes of 0xff after the reply (a shifted stream)
//   nonul    an ALLGATHER reply where another rank's block has no NUL
//   random   an ALLGATHER reply where every other rank's block is random (seed: $FUZZ_SEED)
//   short    half of each reply, then every connection closed
//   close    every connection closed instead of a reply
//   closeone rank 0's connection closed instead of its reply; the others are answered
//   stall    no reply; the connections stay open
// Abort requests (a rank that gave up) are accepted and printed at any time.
//
// Output (stdout): "round K: OP size S" per round served, "abort: rank R code C: MSG",
// "rank R: exit S" or "rank R: signal S" per child, and at the end "ended: M ms after the
// fault" (how long the last rank outlived the fault). Children still running HOSTILE_DEADLINE
// seconds (default 20) after the start are killed and reported as "rank R: still running";
// the exit status is then 1.
#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <random>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

enum { op_close = 1, op_barrier = 3, op_bcast = 4, op_gather = 5, op_allgather = 7 };

using Clock = std::chrono::steady_clock;

std::string fault;
int fault_round = -1;
int nprocs = 0;
int lfd = -1;
std::vector<pid_t> pids;
std::vector<bool> reaped;
std::vector<int> fds;
Clock::time_point deadline;
Clock::time_point fault_at;
bool faulted = false;

[[noreturn]] void die(const std::string &what)
{
    std::printf("error: %s\n", what.c_str());
    for (size_t r = 0; r < pids.size(); ++r)
        if (!reaped[r])
            kill(pids[r], SIGKILL);
    std::exit(2);
}

int ms_left()
{
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return left < 0 ? 0 : int(left);
}

void reap()
{
    int st;
    for (size_t r = 0; r < pids.size(); ++r) {
        if (reaped[r] || waitpid(pids[r], &st, WNOHANG) != pids[r])
            continue;
        reaped[r] = true;
        if (WIFEXITED(st))
            std::printf("rank %zu: exit %d\n", r, WEXITSTATUS(st));
        else
            std::printf("rank %zu: signal %d\n", r, WTERMSIG(st));
        std::fflush(stdout);
    }
}

bool all_reaped()
{
    for (bool b : reaped)
        if (!b)
            return false;
    return true;
}

// An abort request on the listening socket: int code, int rank, int len, len bytes.
void take_abort()
{
    int fd = accept(lfd, nullptr, nullptr);
    if (fd < 0)
        return;
    std::string in;
    char buf[512];
    for (;;) {
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, 1000) <= 0)
            break;
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0)
            break;
        in.append(buf, size_t(n));
        if (in.size() > 8192)
            break;
    }
    close(fd);
    int hdr[3] = {0, -1, 0};
    if (in.size() >= sizeof hdr)
        std::memcpy(hdr, in.data(), sizeof hdr);
    std::string msg = in.size() > sizeof hdr ? in.substr(sizeof hdr) : "";
    msg = msg.substr(0, msg.find('\0'));
    std::printf("abort: rank %d code %d: %s\n", hdr[1], hdr[0], msg.c_str());
    std::fflush(stdout);
}

// Waits for fd to be readable, taking abort requests and reaping children meanwhile.
void wait_readable(int fd, const char *what)
{
    for (;;) {
        pollfd p[2] = {{fd, POLLIN, 0}, {lfd, POLLIN, 0}};
        int n = poll(p, 2, std::min(ms_left(), 50));
        reap();
        if (n > 0 && p[1].revents)
            take_abort();
        if (n > 0 && p[0].revents)
            return;
        if (ms_left() == 0)
            die(std::string("timed out waiting for ") + what);
    }
}

bool read_all(int fd, void *buf, size_t n)
{
    auto *p = static_cast<char *>(buf);
    while (n) {
        wait_readable(fd, "a rank");
        ssize_t r = read(fd, p, n);
        if (r <= 0)
            return false;
        p += r;
        n -= size_t(r);
    }
    return true;
}

void write_all(int fd, const void *buf, size_t n, bool trickle)
{
    auto *p = static_cast<const char *>(buf);
    while (n) {
        ssize_t w = send(fd, p, trickle ? 1 : n, MSG_NOSIGNAL);
        if (w <= 0)
            return; // a rank that left: what it does about it is the test
        p += w;
        n -= size_t(w);
        if (trickle)
            usleep(200);
    }
}

void close_all()
{
    for (int &fd : fds)
        if (fd >= 0) {
            close(fd);
            fd = -1;
        }
}

void mark_fault()
{
    faulted = true;
    fault_at = Clock::now();
    std::printf("fault: %s\n", fault.c_str());
    std::fflush(stdout);
}

// Until every child ended (or the deadline), taking abort requests.
[[noreturn]] void finish()
{
    while (!all_reaped() && ms_left() > 0) {
        pollfd p{lfd, POLLIN, 0};
        if (poll(&p, 1, std::min(ms_left(), 20)) > 0)
            take_abort();
        reap();
    }
    int rc = 0;
    for (size_t r = 0; r < pids.size(); ++r)
        if (!reaped[r]) {
            std::printf("rank %zu: still running\n", r);
            kill(pids[r], SIGKILL);
            waitpid(pids[r], nullptr, 0);
            rc = 1;
        }
    if (faulted)
        std::printf("ended: %lld ms after the fault\n",
                    (long long)std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() -
                                                                                     fault_at)
                        .count());
    std::fflush(stdout);
    std::exit(rc);
}

// Sends each rank its reply, with the round's fault if it is this round.
void reply(int round, const std::vector<std::vector<char>> &per_rank, size_t block)
{
    const bool here = round == fault_round;
    if (here && fault != "none" && fault != "trickle")
        mark_fault();
    if (here && (fault == "close" || fault == "stall")) {
        if (fault == "close")
            close_all();
        finish();
    }
    std::mt19937_64 rng(
        std::strtoull(std::getenv("FUZZ_SEED") ? std::getenv("FUZZ_SEED") : "1", nullptr, 10));
    for (int r = 0; r < nprocs; ++r) {
        std::vector<char> out = per_rank[size_t(r)];
        if (here && block && out.size() == block * size_t(nprocs)) {
            const size_t other = size_t((r + 1) % nprocs) * block;
            if (fault == "huge" && block == 8) {
                const uint64_t huge = uint64_t(1) << 60;
                std::memcpy(&out[other], &huge, 8);
            } else if (fault == "nonul") {
                std::memset(&out[other], 'A', block);
            } else if (fault == "random") {
                for (int k = 0; k < nprocs; ++k)
                    if (k != r)
                        for (size_t i = 0; i < block; ++i)
                            out[size_t(k) * block + i] = char(rng());
            }
        }
        if (here && fault == "closeone" && r == 0) {
            close(fds[0]);
            fds[0] = -1;
            continue;
        }
        if (here && fault == "short") {
            write_all(fds[size_t(r)], out.data(), out.size() / 2, false);
            continue;
        }
        write_all(fds[size_t(r)], out.data(), out.size(), here && fault == "trickle");
        if (here && fault == "extra") {
            const char junk[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
            write_all(fds[size_t(r)], junk, sizeof junk, false);
        }
    }
    if (here && (fault == "short" || fault == "closeone")) {
        if (fault == "short")
            close_all();
        finish();
    }
}

int get_int(int r)
{
    int v = 0;
    if (fds[size_t(r)] < 0 || !read_all(fds[size_t(r)], &v, sizeof v)) {
        if (faulted) // the ranks giving up: what the test looks at
            finish();
        die("rank " + std::to_string(r) + " closed its connection");
    }
    return v;
}

std::vector<char> get_bytes(int r, size_t n)
{
    std::vector<char> v(n);
    if (n && !read_all(fds[size_t(r)], v.data(), n)) {
        if (faulted)
            finish();
        die("rank " + std::to_string(r) + " closed its connection in a packet");
    }
    return v;
}

void serve()
{
    for (int round = 1;; ++round) {
        int op = get_int(0);
        if (op == op_close) {
            close(fds[0]);
            fds[0] = -1;
            for (int r = 1; r < nprocs; ++r)
                if (get_int(r) != op_close)
                    die("a round mixed CLOSE with another opcode");
            close_all();
            finish();
        }
        int root = 0, size = 0;
        if (op == op_bcast || op == op_gather)
            root = get_int(0);
        if (op != op_barrier)
            size = get_int(0);
        if (size < 0 || size > (64 << 20) || root < 0 || root >= nprocs)
            die("bad header in round " + std::to_string(round));
        std::printf("round %d: op %d size %d\n", round, op, size);
        std::fflush(stdout);
        std::vector<std::vector<char>> in(static_cast<size_t>(nprocs));
        for (int r = 0; r < nprocs; ++r) {
            if (r > 0) {
                int o = get_int(r);
                int ro = (op == op_bcast || op == op_gather) ? get_int(r) : 0;
                int s = op != op_barrier ? get_int(r) : 0;
                if (o != op || ro != root || s != size)
                    die("mismatched round " + std::to_string(round));
            }
            if (op == op_gather || op == op_allgather || (op == op_bcast && r == root))
                in[size_t(r)] = get_bytes(r, size_t(size));
        }
        std::vector<std::vector<char>> out(static_cast<size_t>(nprocs));
        size_t block = 0;
        if (op == op_barrier) {
            for (auto &o : out)
                o.assign(sizeof(int), 0);
        } else if (op == op_bcast) {
            for (auto &o : out)
                o = in[size_t(root)];
        } else if (op == op_gather || op == op_allgather) {
            std::vector<char> all;
            for (auto &i : in)
                all.insert(all.end(), i.begin(), i.end());
            block = size_t(size);
            for (int r = 0; r < nprocs; ++r)
                if (op == op_allgather || r == root)
                    out[size_t(r)] = all;
        } else {
            die("opcode " + std::to_string(op) + " is not served here");
        }
        reply(round, out, block);
    }
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 5) {
        std::fprintf(stderr, "usage: %s FAULT ROUND NPROCS program [args...]\n", argv[0]);
        return 2;
    }
    fault = argv[1];
    fault_round = std::atoi(argv[2]);
    nprocs = std::atoi(argv[3]);
    if (nprocs < 2 || nprocs > 64)
        return 2;
    const char *dl = std::getenv("HOSTILE_DEADLINE");
    deadline = Clock::now() + std::chrono::seconds(dl ? std::atoi(dl) : 20);
    std::setvbuf(stdout, nullptr, _IOLBF, 0);

    lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (lfd < 0 || bind(lfd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0 ||
        listen(lfd, 64) != 0 || getsockname(lfd, reinterpret_cast<sockaddr *>(&addr), &len) != 0)
        die(std::string("cannot listen: ") + std::strerror(errno));
    const std::string port = std::to_string(ntohs(addr.sin_port));
    const std::string id = std::to_string(getpid());

    pids.assign(size_t(nprocs), -1);
    reaped.assign(size_t(nprocs), false);
    fds.assign(size_t(nprocs), -1);
    for (int r = 0; r < nprocs; ++r) {
        pid_t pid = fork();
        if (pid < 0)
            die("fork failed");
        if (pid == 0) {
            setenv("MPIRUN_RANK", std::to_string(r).c_str(), 1);
            setenv("MPIRUN_NPROCS", std::to_string(nprocs).c_str(), 1);
            setenv("MPIRUN_ID", id.c_str(), 1);
            setenv("MPIRUN_HOST", "127.0.0.1", 1);
            setenv("MPIRUN_PORT", port.c_str(), 1);
            setenv("MPIRUN_USE_TREES", "0", 1);
            unsetenv("WEFT_MPIRUN_EVENTS");
            execvp(argv[4], argv + 4);
            _exit(127);
        }
        pids[size_t(r)] = pid;
    }
    // The handshakes: int 8, int rank.
    for (int k = 0; k < nprocs; ++k) {
        int fd = -1;
        for (;;) {
            pollfd p{lfd, POLLIN, 0};
            if (poll(&p, 1, std::min(ms_left(), 50)) > 0 &&
                (fd = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC)) >= 0)
                break;
            reap();
            if (ms_left() == 0 || all_reaped())
                die("the ranks did not all connect");
        }
        int hs[2] = {0, -1};
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, 5000) <= 0 || recv(fd, hs, sizeof hs, MSG_WAITALL) != sizeof hs ||
            hs[0] != 8 || hs[1] < 0 || hs[1] >= nprocs || fds[size_t(hs[1])] >= 0)
            die("a bad handshake");
        fds[size_t(hs[1])] = fd;
        int one = 1; // a trickle goes out byte by byte, not at Nagle's pace
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    if (fault_round == 0) {
        mark_fault();
        if (fault == "close")
            close_all();
        finish();
    }
    serve();
}
