// The PMGR_COLLECTIVE protocol 8 client: the classic C API (pmgr_*), over a
// connection to mpirun and a binomial tree of TCP links between the tasks.
// Wire details: docs/protocols/pmgr-collective-wire.md.
#include "pmgr_client.h"

#include "pmgr_collective_client.h"
#include "pmgr_protocol.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <vector>

namespace {
// memcpy for blocks that may be empty: a collective of zero bytes passes NULL buffers (an
// empty vector's data()), which memcpy must not be given even with a zero length.
inline void copy_bytes(void *dst, const void *src, size_t n)
{
    if (n)
        std::memcpy(dst, src, n);
}
} // namespace

// Compile-time defaults, overridable with -D as the spec allows.
#ifndef MPIRUN_CONNECT_TRIES
#define MPIRUN_CONNECT_TRIES 7
#endif
#ifndef MPIRUN_CONNECT_TIMEOUT
#define MPIRUN_CONNECT_TIMEOUT 2
#endif
#ifndef MPIRUN_CONNECT_BACKOFF
#define MPIRUN_CONNECT_BACKOFF 5
#endif
#ifndef MPIRUN_CONNECT_RANDOM
#define MPIRUN_CONNECT_RANDOM 1
#endif
#ifndef MPIRUN_USE_TREES
#define MPIRUN_USE_TREES 1
#endif
#ifndef MPIRUN_USE_PMI
#define MPIRUN_USE_PMI 0
#endif
// Weft's extension: how long, in seconds, a read, write or accept may go without a byte moving
// before the client gives up (0: no limit; a lost connection to mpirun or the tree parent
// still ends the wait at once).
#ifndef MPIRUN_CLIENT_TIMEOUT
#define MPIRUN_CLIENT_TIMEOUT 300
#endif

namespace weft::pmgr {

namespace {

struct State {
    bool inited = false;
    bool open = false;
    int rank = 0;
    int nprocs = 1;
    int id = 0;
    std::string host;
    int port = 0;
    int tries = MPIRUN_CONNECT_TRIES;
    int timeout = MPIRUN_CONNECT_TIMEOUT;
    int backoff = MPIRUN_CONNECT_BACKOFF;
    int random_backoff = MPIRUN_CONNECT_RANDOM;
    int use_trees = MPIRUN_USE_TREES;
    int use_pmi = MPIRUN_USE_PMI;
    int io_timeout = MPIRUN_CLIENT_TIMEOUT;
    int debug = 0; // effective level 0-3 for this rank
    unsigned seed = 0;
    int mpirun_fd = -1;
    TreePosition tree;
    int parent_fd = -1;
    std::vector<int> child_fds;
    bool tree_open = false;
    double open_time = 0;
    std::string hostname;
};

State S;

double now()
{
    timeval tv;
    gettimeofday(&tv, nullptr);
    return double(tv.tv_sec) + double(tv.tv_usec) * 1e-6;
}

const std::string &hostname()
{
    if (S.hostname.empty()) {
        char buf[256] = "";
        gethostname(buf, sizeof buf - 1);
        S.hostname = buf;
    }
    return S.hostname;
}

void vprint(const char *kind, const char *fmt, va_list ap)
{
    char msg[1024];
    std::vsnprintf(msg, sizeof msg, fmt, ap);
    std::fprintf(stderr, "PMGR_COLLECTIVE %s: rank %d on %s: %s\n", kind, S.rank,
                 hostname().c_str(), msg);
    std::fflush(stderr);
}

__attribute__((format(printf, 1, 2))) void error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprint("ERROR", fmt, ap);
    va_end(ap);
}

__attribute__((format(printf, 1, 2))) void warning(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprint("WARNING", fmt, ap);
    va_end(ap);
}

__attribute__((format(printf, 2, 3))) void debug(int level, const char *fmt, ...)
{
    if (S.debug < level)
        return;
    va_list ap;
    va_start(ap, fmt);
    vprint("DEBUG", fmt, ap);
    va_end(ap);
}

// Times one public call at debug levels 2 (exit with time) and 3 (start).
class Traced {
  public:
    explicit Traced(const char *name) : name_(name), start_(now())
    {
        debug(3, "Starting pmgr_%s()", name_);
    }
    ~Traced()
    {
        debug(2, "Exiting pmgr_%s(), took %f seconds for %d procs", name_, now() - start_,
              S.nprocs);
    }

  private:
    const char *name_;
    double start_;
};

// The deadline of one wait, or 0 for none.
double deadline_from_now() { return S.io_timeout > 0 ? now() + S.io_timeout : 0; }

// Waits until fd is ready for `events`. A wait for input also watches the other connections
// this task depends on (mpirun's, the tree parent's) for a hang-up meanwhile; a write does not,
// since a parent that has sent its last packet closes its links while its children still
// write to theirs. False, with a message and errno set, when the deadline passes or a watched
// connection is lost.
bool wait_ready(int fd, short events, double deadline)
{
    for (;;) {
        pollfd p[3];
        nfds_t n = 0;
        p[n++] = {fd, events, 0};
        if (events & POLLIN)
            for (int w : {S.mpirun_fd, S.parent_fd})
                if (w >= 0 && w != fd)
                    p[n++] = {w, POLLRDHUP, 0};
        int wait_ms = -1;
        if (deadline > 0) {
            double left = deadline - now();
            if (left <= 0) {
                error("no progress within %d s (MPIRUN_CLIENT_TIMEOUT); giving up", S.io_timeout);
                errno = ETIMEDOUT;
                return false;
            }
            wait_ms = int(std::min(left * 1000.0 + 1.0, 3600e3));
        }
        int rc = poll(p, n, wait_ms);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0)
            return false;
        for (nfds_t i = 1; i < n; ++i)
            if (p[i].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) {
                error("lost the connection to %s while waiting",
                      p[i].fd == S.mpirun_fd ? "mpirun" : "the tree parent");
                errno = ECONNRESET;
                return false;
            }
        if (p[0].revents)
            return true;
    }
}

bool write_all(int fd, const void *buf, size_t n)
{
    auto *p = static_cast<const char *>(buf);
    double deadline = deadline_from_now(); // renewed by every byte that moves
    while (n > 0) {
        if (!wait_ready(fd, POLLOUT, deadline))
            return false;
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
            continue;
        if (w <= 0)
            return false;
        deadline = deadline_from_now();
        p += w;
        n -= size_t(w);
    }
    return true;
}

// Reads exactly n bytes. End of file before that is a failure (the
// reference counts it as success; a short read would leave garbage).
bool read_all(int fd, void *buf, size_t n)
{
    auto *p = static_cast<char *>(buf);
    double deadline = deadline_from_now(); // renewed by every byte that moves
    while (n > 0) {
        if (!wait_ready(fd, POLLIN, deadline))
            return false;
        ssize_t r = recv(fd, p, n, MSG_DONTWAIT);
        if (r < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
            continue;
        if (r == 0)
            errno = 0;
        if (r <= 0)
            return false;
        deadline = deadline_from_now();
        p += r;
        n -= size_t(r);
    }
    return true;
}

bool write_int(int fd, int v) { return write_all(fd, &v, sizeof v); }
bool read_int(int fd, int &v) { return read_all(fd, &v, sizeof v); }

void close_fd(int &fd)
{
    if (fd >= 0)
        close(fd);
    fd = -1;
}

// One connection attempt with a timeout; -1 on failure.
int connect_once(const sockaddr_in &addr, int timeout_s)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -2;
    int flags = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    int rc = connect(fd, reinterpret_cast<const sockaddr *>(&addr), sizeof addr);
    if (rc != 0 && errno == EINPROGRESS) {
        pollfd p{fd, POLLIN | POLLOUT, 0};
        do {
            rc = poll(&p, 1, timeout_s * 1000);
        } while (rc < 0 && errno == EINTR);
        int err = 0;
        socklen_t len = sizeof err;
        if (rc == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0)
            rc = 0;
        else
            rc = -1;
    }
    if (rc != 0) {
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, flags);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

// TRIES + 1 attempts, with a (random) backoff between them.
int connect_retry(const sockaddr_in &addr)
{
    for (int i = 0;; ++i) {
        int fd = connect_once(addr, S.timeout);
        if (fd >= 0)
            return fd;
        if (fd == -2 || i >= S.tries)
            return -1;
        long ms = S.backoff * 1000L;
        if (S.random_backoff && ms > 0)
            ms = long(rand_r(&S.seed) % ms) + 1;
        usleep(useconds_t(ms) * 1000);
    }
}

bool resolve(const std::string &host, int port, sockaddr_in &out)
{
    addrinfo hints{}, *res = nullptr;
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || !res)
        return false;
    out = *reinterpret_cast<sockaddr_in *>(res->ai_addr);
    out.sin_port = htons(uint16_t(port));
    freeaddrinfo(res);
    return true;
}

bool parse_env_int(const char *name, int &out, bool required)
{
    const char *v = std::getenv(name);
    if (!v) {
        if (required)
            error("Missing required environment variable: %s", name);
        return !required;
    }
    char *end = nullptr;
    errno = 0;
    long l = std::strtol(v, &end, 10);
    if (errno || end == v || *end || l < INT32_MIN || l > INT32_MAX) {
        error("Invalid %s: '%s' is not an integer", name, v);
        return false;
    }
    out = int(l);
    return true;
}

// ------------------------------------------------------------------ mpirun ops

bool mpirun_ok(const char *op)
{
    if (S.mpirun_fd < 0) {
        error("%s failed since socket to mpirun is not open", op);
        return false;
    }
    // mpirun only ever answers: bytes waiting before we ask are a corrupt stream, and reading
    // them as the next reply would shift every reply after it.
    char c;
    ssize_t r = recv(S.mpirun_fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (r > 0) {
        error("%s: mpirun sent data nobody asked for; the bootstrap stream is corrupt", op);
        close_fd(S.mpirun_fd);
        return false;
    }
    if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        error("%s: lost the connection to mpirun (%s)", op,
              r == 0 ? "closed" : std::strerror(errno));
        close_fd(S.mpirun_fd);
        return false;
    }
    return true;
}

bool mpirun_io_failed(const char *op)
{
    if (errno == ETIMEDOUT)
        error("%s: mpirun did not answer in time; giving up", op);
    else
        error("%s: lost the connection to mpirun (%s)", op,
              errno ? std::strerror(errno) : "closed");
    close_fd(S.mpirun_fd);
    return false;
}

bool mpirun_barrier()
{
    if (S.use_pmi)
        return pmi_barrier();
    if (!mpirun_ok("Barrier"))
        return false;
    int v;
    if (!write_int(S.mpirun_fd, op_barrier) || !read_int(S.mpirun_fd, v))
        return mpirun_io_failed("Barrier");
    return true;
}

bool mpirun_bcast(void *buf, int size, int root)
{
    if (S.use_pmi)
        return pmi_bcast(buf, size_t(size), root);
    if (!mpirun_ok("Bcast"))
        return false;
    int hdr[3] = {op_bcast, root, size};
    if (!write_all(S.mpirun_fd, hdr, sizeof hdr) ||
        (S.rank == root && !write_all(S.mpirun_fd, buf, size_t(size))) ||
        !read_all(S.mpirun_fd, buf, size_t(size)))
        return mpirun_io_failed("Bcast");
    return true;
}

bool mpirun_gather(const void *send, int size, void *recv, int root)
{
    if (S.use_pmi) {
        std::vector<char> all(size_t(size) * size_t(S.nprocs));
        if (!pmi_allgather(send, size_t(size), all.data()))
            return false;
        if (S.rank == root)
            copy_bytes(recv, all.data(), all.size());
        return true;
    }
    if (!mpirun_ok("Gather"))
        return false;
    int hdr[3] = {op_gather, root, size};
    if (!write_all(S.mpirun_fd, hdr, sizeof hdr) || !write_all(S.mpirun_fd, send, size_t(size)) ||
        (S.rank == root && !read_all(S.mpirun_fd, recv, size_t(size) * size_t(S.nprocs))))
        return mpirun_io_failed("Gather");
    return true;
}

bool mpirun_scatter(const void *send, int size, void *recv, int root)
{
    if (S.use_pmi) {
        std::vector<char> all(size_t(size) * size_t(S.nprocs));
        if (S.rank == root)
            copy_bytes(all.data(), send, all.size());
        if (!pmi_bcast(all.data(), all.size(), root))
            return false;
        copy_bytes(recv, all.data() + size_t(S.rank) * size_t(size), size_t(size));
        return true;
    }
    if (!mpirun_ok("Scatter"))
        return false;
    int hdr[3] = {op_scatter, root, size};
    if (!write_all(S.mpirun_fd, hdr, sizeof hdr) ||
        (S.rank == root && !write_all(S.mpirun_fd, send, size_t(size) * size_t(S.nprocs))) ||
        !read_all(S.mpirun_fd, recv, size_t(size)))
        return mpirun_io_failed("Scatter");
    return true;
}

bool mpirun_allgather(const void *send, int size, void *recv)
{
    if (S.use_pmi)
        return pmi_allgather(send, size_t(size), recv);
    if (!mpirun_ok("Allgather"))
        return false;
    int hdr[2] = {op_allgather, size};
    if (!write_all(S.mpirun_fd, hdr, sizeof hdr) || !write_all(S.mpirun_fd, send, size_t(size)) ||
        !read_all(S.mpirun_fd, recv, size_t(size) * size_t(S.nprocs)))
        return mpirun_io_failed("Allgather");
    return true;
}

bool mpirun_alltoall(const void *send, int size, void *recv)
{
    if (S.use_pmi) {
        const size_t N = size_t(S.nprocs), n = size_t(size);
        std::vector<char> all(N * N * n);
        if (!pmi_allgather(send, N * n, all.data()))
            return false;
        for (size_t s = 0; s < N; ++s)
            copy_bytes(static_cast<char *>(recv) + s * n, all.data() + (s * N + size_t(S.rank)) * n,
                       n);
        return true;
    }
    if (!mpirun_ok("Alltoall"))
        return false;
    int hdr[2] = {op_alltoall, size};
    size_t total = size_t(size) * size_t(S.nprocs);
    if (!write_all(S.mpirun_fd, hdr, sizeof hdr) || !write_all(S.mpirun_fd, send, total) ||
        !read_all(S.mpirun_fd, recv, total))
        return mpirun_io_failed("Alltoall");
    return true;
}

// ------------------------------------------------------------------ tree

void close_tree()
{
    close_fd(S.parent_fd);
    for (int &fd : S.child_fds)
        close_fd(fd);
    S.child_fds.clear();
    S.tree_open = false;
}

// Flood an abort through every tree link, drop the tree, and leave mpirun.
void abort_tree()
{
    if (S.parent_fd >= 0)
        write_int(S.parent_fd, tree_abort);
    for (int fd : S.child_fds)
        if (fd >= 0)
            write_int(fd, tree_abort);
    close_tree();
    if (S.mpirun_fd >= 0) {
        write_int(S.mpirun_fd, op_close);
        close_fd(S.mpirun_fd);
    }
}

// Header and payload in one send: two small writes would meet Nagle's
// algorithm and the peer's delayed ACK (40 ms a packet).
bool tree_write(int fd, const void *buf, size_t n)
{
    if (fd < 0 || n > size_t(INT32_MAX))
        return false;
    std::vector<char> packet(sizeof(int) + n);
    copy_bytes(packet.data(), &tree_data, sizeof(int));
    copy_bytes(packet.data() + sizeof(int), buf, n);
    return write_all(fd, packet.data(), packet.size());
}

// Reads one data packet. An abort packet, a broken link or an unknown header
// floods the abort and fails.
bool tree_read(int fd, void *buf, size_t n, const char *what)
{
    int header = -1;
    if (fd < 0 || !read_int(fd, header)) {
        error("%s: a tree link broke (%s); aborting the tree", what,
              errno ? std::strerror(errno) : "closed by the peer");
    } else if (header == tree_abort) {
        error("%s: another task aborted the job", what);
    } else if (header != tree_data) {
        error("%s: received unknown packet header %d", what, header);
    } else if (!read_all(fd, buf, n)) {
        error("%s: a tree link broke in the middle of a packet", what);
    } else {
        return true;
    }
    abort_tree();
    return false;
}

bool tree_fail(const char *what)
{
    error("%s: cannot write to a tree link (%s); aborting the tree", what, std::strerror(errno));
    abort_tree();
    return false;
}

// AND of every rank's value, known to all.
bool check_tree(int value, bool &all_ok)
{
    int all = 1;
    for (size_t k = 0; k < S.child_fds.size(); ++k) {
        int v = 0;
        if (!tree_read(S.child_fds[k], &v, sizeof v, "tree check"))
            return false;
        if (v == 0)
            all = 0;
    }
    if (value == 0)
        all = 0;
    if (S.tree.parent >= 0) {
        if (!tree_write(S.parent_fd, &all, sizeof all))
            return tree_fail("tree check");
        if (!tree_read(S.parent_fd, &all, sizeof all, "tree check"))
            return false;
    }
    for (int fd : S.child_fds)
        if (!tree_write(fd, &all, sizeof all))
            return tree_fail("tree check");
    all_ok = all != 0;
    return true;
}

bool check_tree_ok()
{
    bool all = false;
    if (!check_tree(1, all))
        return false;
    if (!all) {
        error("a task reported a failure in the tree check");
        abort_tree();
    }
    return all;
}

bool bcast_tree(void *buf, size_t n)
{
    if (S.tree.parent >= 0 && !tree_read(S.parent_fd, buf, n, "bcast"))
        return false;
    for (int fd : S.child_fds)
        if (!tree_write(fd, buf, n))
            return tree_fail("bcast");
    return check_tree_ok();
}

// The blocks of this rank's subtree (itself first, then each child's, in
// rank order) into `out`, which holds (1 + sum of child_incl) * n bytes.
bool gather_subtree(const void *mine, size_t n, char *out)
{
    copy_bytes(out, mine, n);
    size_t off = n;
    for (size_t k = S.child_fds.size(); k-- > 0;) {
        size_t len = size_t(S.tree.child_incl[k]) * n;
        if (!tree_read(S.child_fds[k], out + off, len, "gather"))
            return false;
        off += len;
    }
    return true;
}

size_t subtree_size()
{
    size_t incl = 1;
    for (int c : S.tree.child_incl)
        incl += size_t(c);
    return incl;
}

bool gather_tree(const void *send, size_t n, void *recv)
{
    std::vector<char> buf(subtree_size() * n);
    if (!gather_subtree(send, n, buf.data()))
        return false;
    if (S.tree.parent >= 0) {
        if (!tree_write(S.parent_fd, buf.data(), buf.size()))
            return tree_fail("gather");
    } else {
        copy_bytes(recv, buf.data(), buf.size());
    }
    return check_tree_ok();
}

bool scatter_tree(const void *send, size_t n, void *recv)
{
    std::vector<char> buf(subtree_size() * n);
    if (S.tree.parent >= 0) {
        if (!tree_read(S.parent_fd, buf.data(), buf.size(), "scatter"))
            return false;
    } else {
        copy_bytes(buf.data(), send, buf.size());
    }
    for (size_t k = 0; k < S.child_fds.size(); ++k) {
        size_t off = size_t(S.tree.children[k] - S.rank) * n;
        if (!tree_write(S.child_fds[k], buf.data() + off, size_t(S.tree.child_incl[k]) * n))
            return tree_fail("scatter");
    }
    copy_bytes(recv, buf.data(), n);
    return check_tree_ok();
}

bool alltoall_tree(const void *send, size_t n, void *recv)
{
    const size_t N = size_t(S.nprocs);
    // Each child's subtree sends its blocks grouped by destination.
    std::vector<std::vector<char>> from(S.child_fds.size());
    for (size_t k = S.child_fds.size(); k-- > 0;) {
        from[k].resize(size_t(S.tree.child_incl[k]) * N * n);
        if (!tree_read(S.child_fds[k], from[k].data(), from[k].size(), "alltoall"))
            return false;
    }
    std::vector<char> grouped(subtree_size() * N * n);
    char *p = grouped.data();
    for (size_t j = 0; j < N; ++j) {
        copy_bytes(p, static_cast<const char *>(send) + j * n, n);
        p += n;
        for (size_t k = S.child_fds.size(); k-- > 0;) {
            size_t len = size_t(S.tree.child_incl[k]) * n;
            copy_bytes(p, from[k].data() + j * len, len);
            p += len;
        }
    }
    if (S.tree.parent >= 0 && !tree_write(S.parent_fd, grouped.data(), grouped.size()))
        return tree_fail("alltoall");
    // Rank 0 now holds, for each destination, every source's block in rank
    // order: scatter N*n bytes to each.
    if (!scatter_tree(grouped.data(), N * n, recv))
        return false;
    return check_tree_ok();
}

bool reducemaxint_tree(int mine, int &out)
{
    int max = mine;
    for (size_t k = S.child_fds.size(); k-- > 0;) {
        int v;
        if (!tree_read(S.child_fds[k], &v, sizeof v, "allreducemaxint"))
            return false;
        max = std::max(max, v);
    }
    if (S.tree.parent >= 0 && !tree_write(S.parent_fd, &max, sizeof max))
        return tree_fail("allreducemaxint");
    if (!check_tree_ok())
        return false;
    if (!bcast_tree(&max, sizeof max))
        return false;
    out = max;
    return true;
}

// This task's address as others reach it: the local end of its connection
// to mpirun (right even in network namespaces), else the host's first
// non-loopback IPv4 address.
bool my_address(in_addr &addr)
{
    if (S.mpirun_fd >= 0) {
        sockaddr_in me{};
        socklen_t len = sizeof me;
        if (getsockname(S.mpirun_fd, reinterpret_cast<sockaddr *>(&me), &len) == 0) {
            addr = me.sin_addr;
            return true;
        }
    }
    addrinfo hints{}, *res = nullptr;
    hints.ai_family = AF_INET;
    if (getaddrinfo(hostname().c_str(), nullptr, &hints, &res) == 0 && res) {
        addr = reinterpret_cast<sockaddr_in *>(res->ai_addr)->sin_addr;
        freeaddrinfo(res);
        return true;
    }
    addr.s_addr = htonl(INADDR_LOOPBACK);
    return true;
}

bool open_tree()
{
    S.tree = tree_position(S.rank, S.nprocs);
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t len = sizeof addr;
    if (lfd < 0 || bind(lfd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0 ||
        listen(lfd, 1) != 0 || getsockname(lfd, reinterpret_cast<sockaddr *>(&addr), &len) != 0) {
        error("cannot open the tree's listening socket: %s", std::strerror(errno));
        if (lfd >= 0)
            close(lfd);
        return false;
    }
    unsigned char entry[table_entry_size];
    in_addr ip;
    my_address(ip);
    copy_bytes(entry, &ip, 4);
    copy_bytes(entry + 4, &addr.sin_port, 2);
    std::vector<unsigned char> table(size_t(S.nprocs) * table_entry_size);

    bool ok;
    if (S.use_pmi) {
        ok = pmi_exchange_table(entry, table.data()) == 0;
        if (!ok)
            error("cannot exchange the tree addresses through PMI");
    } else {
        ok = mpirun_gather(entry, table_entry_size, table.data(), 0);
    }
    if (ok && S.tree.parent >= 0) {
        // The first connection from the job's user: another user of this host connecting
        // first would otherwise pose as the parent (docs/security.md).
        const auto deadline = deadline_from_now();
        for (;;) {
            S.parent_fd = wait_ready(lfd, POLLIN, deadline)
                              ? accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC)
                              : -1;
            if (S.parent_fd < 0)
                break;
            const long uid = peer_uid(S.parent_fd);
            if (uid < 0 || uid_t(uid) == getuid())
                break;
            warning("refused a tree connection from user %ld of this host", uid);
            close(S.parent_fd);
        }
        int one = 1;
        if (S.parent_fd >= 0)
            setsockopt(S.parent_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (S.parent_fd < 0) {
            error("accepting the tree parent's connection failed: %s", std::strerror(errno));
            ok = false;
        } else if (!(S.use_pmi)) {
            ok = tree_read(S.parent_fd, table.data(), table.size(), "open");
        }
    }
    close(lfd);
    if (!ok) {
        abort_tree();
        return false;
    }
    for (int child : S.tree.children) {
        sockaddr_in caddr{};
        caddr.sin_family = AF_INET;
        copy_bytes(&caddr.sin_addr, &table[size_t(child) * table_entry_size], 4);
        copy_bytes(&caddr.sin_port, &table[size_t(child) * table_entry_size + 4], 2);
        int fd = connect_retry(caddr);
        S.child_fds.push_back(fd);
        if (fd < 0) {
            char ipbuf[INET_ADDRSTRLEN] = "?";
            inet_ntop(AF_INET, &caddr.sin_addr, ipbuf, sizeof ipbuf);
            error("cannot connect to child %d at %s:%d", child, ipbuf, ntohs(caddr.sin_port));
            abort_tree();
            return false;
        }
        if (!(S.use_pmi) && !tree_write(fd, table.data(), table.size()))
            return tree_fail("open");
    }
    S.tree_open = true;
    return check_tree_ok();
}

int result(bool ok) { return ok ? PMGR_SUCCESS : PMGR_FAILURE; }

bool check_open(const char *fn)
{
    if (S.open)
        return true;
    error("Must call pmgr_open() before pmgr_%s()", fn);
    return false;
}

bool check_count(const char *fn, int count)
{
    if (count >= 0)
        return true;
    error("pmgr_%s(): negative size %d", fn, count);
    return false;
}

bool check_root(const char *fn, int root)
{
    if (root >= 0 && root < S.nprocs)
        return true;
    error("pmgr_%s(): root %d is not a rank of this %d-task job", fn, root, S.nprocs);
    return false;
}

} // namespace

int mpirun_socket() { return S.mpirun_fd; }
bool uses_pmi() { return S.use_pmi != 0; }

} // namespace weft::pmgr

using namespace weft::pmgr;

extern "C" {

int pmgr_init(int *, char ***, int *np_p, int *me_p, int *id_p)
{
    double start = now();
    S = State();
    S.inited = true;
    setvbuf(stdout, nullptr, _IONBF, 0);
    bool ok = parse_env_int("MPIRUN_CONNECT_TRIES", S.tries, false) &&
              parse_env_int("MPIRUN_CONNECT_TIMEOUT", S.timeout, false) &&
              parse_env_int("MPIRUN_CONNECT_BACKOFF", S.backoff, false) &&
              parse_env_int("MPIRUN_CONNECT_RANDOM", S.random_backoff, false) &&
              parse_env_int("MPIRUN_USE_TREES", S.use_trees, false) &&
              parse_env_int("MPIRUN_USE_PMI", S.use_pmi, false) &&
              parse_env_int("MPIRUN_CLIENT_TIMEOUT", S.io_timeout, false);
    if (ok && (S.tries < 0 || S.timeout < 0 || S.backoff < 0 || S.io_timeout < 0)) {
        error("MPIRUN_CONNECT_TRIES, _TIMEOUT, _BACKOFF and MPIRUN_CLIENT_TIMEOUT must not be "
              "negative");
        ok = false;
    }
    int dbg = 0;
    ok = ok && parse_env_int("MPIRUN_CLIENT_DEBUG", dbg, false);
    if (ok && S.use_pmi) {
        if (pmi_init(&S.rank, &S.nprocs, &S.id) != 0) {
            error("MPIRUN_USE_PMI=1 but PMI cannot be initialized");
            ok = false;
        }
    } else if (ok && std::getenv("MPIRUN_RANK")) {
        ok = parse_env_int("MPIRUN_RANK", S.rank, true) &&
             parse_env_int("MPIRUN_NPROCS", S.nprocs, true) &&
             parse_env_int("MPIRUN_ID", S.id, true) && parse_env_int("MPIRUN_PORT", S.port, true);
        if (ok && !std::getenv("MPIRUN_HOST")) {
            error("Missing required environment variable: MPIRUN_HOST");
            ok = false;
        }
        if (ok) {
            S.host = std::getenv("MPIRUN_HOST");
            if (S.nprocs <= 0) {
                error("Invalid NPROCS %d: must be > 0", S.nprocs);
                ok = false;
            } else if (S.rank < 0 || S.rank >= S.nprocs) {
                error("Invalid RANK %d: must be in [0, %d]", S.rank, S.nprocs - 1);
                ok = false;
            } else if (S.id == 0) {
                error("Invalid JOBID 0: must not be 0");
                ok = false;
            } else if (S.port <= 0 || S.port > 65535) {
                error("Invalid PORT %d: must be in [1, 65535]", S.port);
                ok = false;
            }
        }
    } else if (ok) {
        // No launcher: a singleton.
        timeval tv;
        gettimeofday(&tv, nullptr);
        S.id = int(0x7FFFFFFF & ((tv.tv_sec << 16) | (getpid() & 0xFFFF)));
    }
    if (!ok) {
        S.inited = false;
        return PMGR_FAILURE;
    }
    if (dbg > 0) {
        bool prints = dbg <= 3   ? S.rank == 0
                      : dbg <= 6 ? (S.rank == 0 || S.rank == S.nprocs - 1)
                                 : true;
        S.debug = prints ? 1 + (dbg - 1) % 3 : 0;
    }
    debug(3,
          "In pmgr_init():\n  MPIRUN_RANK: %d, MPIRUN_NPROCS: %d, MPIRUN_ID: %d, MPIRUN_HOST: %s, "
          "MPIRUN_PORT: %d\n  MPIRUN_CONNECT_TRIES: %d, MPIRUN_CONNECT_TIMEOUT: %d, "
          "MPIRUN_CONNECT_BACKOFF: %d, MPIRUN_CONNECT_RANDOM: %d\n  MPIRUN_USE_TREES: %d, "
          "MPIRUN_USE_PMI: %d",
          S.rank, S.nprocs, S.id, S.host.c_str(), S.port, S.tries, S.timeout, S.backoff,
          S.random_backoff, S.use_trees, S.use_pmi);
    if (np_p)
        *np_p = S.nprocs;
    if (me_p)
        *me_p = S.rank;
    if (id_p)
        *id_p = S.id;
    debug(2, "Exiting pmgr_init(), took %f seconds for %d procs", now() - start, S.nprocs);
    return PMGR_SUCCESS;
}

int pmgr_open(void)
{
    if (!S.inited) {
        error("Must call pmgr_init() before pmgr_open()");
        return PMGR_FAILURE;
    }
    Traced t("open");
    S.open_time = now();
    timeval tv;
    gettimeofday(&tv, nullptr);
    S.seed = unsigned(tv.tv_usec) + unsigned(S.rank);
    if (S.nprocs > 1 && !S.use_pmi) {
        sockaddr_in addr{};
        if (!resolve(S.host, S.port, addr)) {
            error("Hostname lookup of mpirun failed (%s)", S.host.c_str());
            return PMGR_FAILURE;
        }
        S.mpirun_fd = connect_retry(addr);
        if (S.mpirun_fd < 0) {
            error("Connecting mpirun socket to %s at %s:%d failed after %d attempts: %s",
                  S.host.c_str(), S.host.c_str(), S.port, S.tries + 1, std::strerror(errno));
            return PMGR_FAILURE;
        }
        int hs[2] = {version, S.rank};
        if (!write_all(S.mpirun_fd, hs, sizeof hs)) {
            error("Writing the handshake to mpirun failed: %s", std::strerror(errno));
            close_fd(S.mpirun_fd);
            return PMGR_FAILURE;
        }
    }
    if (S.nprocs > 1 && S.use_trees && !open_tree())
        return PMGR_FAILURE;
    S.open = true;
    return PMGR_SUCCESS;
}

int pmgr_barrier(void)
{
    if (!check_open("barrier"))
        return PMGR_FAILURE;
    Traced t("barrier");
    if (S.nprocs == 1)
        return PMGR_SUCCESS;
    return result(S.tree_open ? check_tree_ok() : mpirun_barrier());
}

int pmgr_bcast(void *buf, int sendcount, int root)
{
    if (!check_open("bcast") || !check_count("bcast", sendcount) || !check_root("bcast", root))
        return PMGR_FAILURE;
    Traced t("bcast");
    if (S.nprocs == 1)
        return PMGR_SUCCESS;
    if (S.tree_open && root == 0)
        return result(bcast_tree(buf, size_t(sendcount)));
    return result(mpirun_bcast(buf, sendcount, root));
}

int pmgr_gather(void *sendbuf, int sendcount, void *recvbuf, int root)
{
    if (!check_open("gather") || !check_count("gather", sendcount) || !check_root("gather", root))
        return PMGR_FAILURE;
    Traced t("gather");
    if (S.nprocs == 1) {
        std::memmove(recvbuf, sendbuf, size_t(sendcount));
        return PMGR_SUCCESS;
    }
    if (S.tree_open && root == 0)
        return result(gather_tree(sendbuf, size_t(sendcount), recvbuf));
    return result(mpirun_gather(sendbuf, sendcount, recvbuf, root));
}

int pmgr_scatter(void *sendbuf, int sendcount, void *recvbuf, int root)
{
    if (!check_open("scatter") || !check_count("scatter", sendcount) ||
        !check_root("scatter", root))
        return PMGR_FAILURE;
    Traced t("scatter");
    if (S.nprocs == 1) {
        std::memmove(recvbuf, sendbuf, size_t(sendcount));
        return PMGR_SUCCESS;
    }
    if (S.tree_open && root == 0)
        return result(scatter_tree(sendbuf, size_t(sendcount), recvbuf));
    return result(mpirun_scatter(sendbuf, sendcount, recvbuf, root));
}

int pmgr_allgather(void *sendbuf, int sendcount, void *recvbuf)
{
    if (!check_open("allgather") || !check_count("allgather", sendcount))
        return PMGR_FAILURE;
    Traced t("allgather");
    if (S.nprocs == 1) {
        std::memmove(recvbuf, sendbuf, size_t(sendcount));
        return PMGR_SUCCESS;
    }
    if (S.tree_open)
        return result(gather_tree(sendbuf, size_t(sendcount), recvbuf) &&
                      bcast_tree(recvbuf, size_t(sendcount) * size_t(S.nprocs)));
    return result(mpirun_allgather(sendbuf, sendcount, recvbuf));
}

int pmgr_alltoall(void *sendbuf, int sendcount, void *recvbuf)
{
    if (!check_open("alltoall") || !check_count("alltoall", sendcount))
        return PMGR_FAILURE;
    Traced t("alltoall");
    if (S.nprocs == 1) {
        std::memmove(recvbuf, sendbuf, size_t(sendcount));
        return PMGR_SUCCESS;
    }
    if (S.tree_open)
        return result(alltoall_tree(sendbuf, size_t(sendcount), recvbuf));
    return result(mpirun_alltoall(sendbuf, sendcount, recvbuf));
}

int pmgr_allreducemaxint(int *sendint, int *recvint)
{
    if (!check_open("allreducemaxint"))
        return PMGR_FAILURE;
    Traced t("allreducemaxint");
    if (S.nprocs == 1) {
        *recvint = *sendint;
        return PMGR_SUCCESS;
    }
    if (S.tree_open)
        return result(reducemaxint_tree(*sendint, *recvint));
    std::vector<int> all(size_t(S.nprocs));
    if (!mpirun_gather(sendint, sizeof(int), all.data(), 0))
        return PMGR_FAILURE;
    int max = *sendint;
    for (int v : all)
        max = std::max(max, v);
    if (!mpirun_bcast(&max, sizeof max, 0))
        return PMGR_FAILURE;
    *recvint = max;
    return PMGR_SUCCESS;
}

int pmgr_allgatherstr(char *sendstr, char ***recvstr, char **recvbuf)
{
    if (!check_open("allgatherstr") || !sendstr || !recvstr || !recvbuf)
        return PMGR_FAILURE;
    Traced t("allgatherstr");
    int mine = int(std::strlen(sendstr)) + 1, maxlen = 0;
    if (pmgr_allreducemaxint(&mine, &maxlen) != PMGR_SUCCESS)
        return PMGR_FAILURE;
    std::vector<char> padded(size_t(maxlen), '\0');
    copy_bytes(padded.data(), sendstr, size_t(mine));
    char *buf = static_cast<char *>(std::malloc(size_t(maxlen) * size_t(S.nprocs)));
    char **strs = static_cast<char **>(std::malloc(sizeof(char *) * size_t(S.nprocs)));
    if (!buf || !strs) {
        std::free(buf);
        std::free(strs);
        error("pmgr_allgatherstr(): out of memory");
        return PMGR_FAILURE;
    }
    if (pmgr_allgather(padded.data(), maxlen, buf) != PMGR_SUCCESS) {
        std::free(buf);
        std::free(strs);
        return PMGR_FAILURE;
    }
    for (int i = 0; i < S.nprocs; ++i)
        strs[i] = buf + size_t(i) * size_t(maxlen);
    *recvstr = strs;
    *recvbuf = buf;
    return PMGR_SUCCESS;
}

int pmgr_abort(int code, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    int n = std::vsnprintf(msg, sizeof msg, fmt ? fmt : "", ap);
    va_end(ap);
    if (n < 0 || size_t(n) >= sizeof msg) {
        msg[254] = '+';
        msg[255] = '\0';
    }
    if (S.tree_open || S.mpirun_fd >= 0)
        abort_tree();
    if (S.use_pmi) {
        pmi_abort(code, msg);
        return PMGR_SUCCESS;
    }
    if (S.host.empty()) {
        error("Called pmgr_abort() Code: %d, Msg: %s", code, msg);
        return PMGR_SUCCESS;
    }
    sockaddr_in addr{};
    int fd = -1;
    if (!resolve(S.host, S.port, addr) || (fd = connect_once(addr, std::max(S.timeout, 1))) < 0) {
        error("pmgr_abort(): cannot reach mpirun at %s:%d to abort (code %d: %s)", S.host.c_str(),
              S.port, code, msg);
        return -1;
    }
    int len = int(std::strlen(msg)) + 1;
    int hdr[3] = {code, S.rank, len};
    bool ok = write_all(fd, hdr, sizeof hdr) && write_all(fd, msg, size_t(len));
    close(fd);
    return ok ? PMGR_SUCCESS : -1;
}

int pmgr_close(void)
{
    if (!S.open)
        return PMGR_SUCCESS;
    int rc = PMGR_SUCCESS;
    {
        Traced t("close");
        if (S.nprocs > 1 && S.tree_open) {
            if (!check_tree_ok())
                rc = PMGR_FAILURE;
            close_tree();
        }
        if (S.mpirun_fd >= 0) {
            write_int(S.mpirun_fd, op_close);
            close_fd(S.mpirun_fd);
        }
        S.open = false;
    }
    debug(1, "Total time from pmgr_open() to pmgr_close() took %f seconds for %d procs",
          now() - S.open_time, S.nprocs);
    return rc;
}

int pmgr_finalize(void)
{
    if (S.use_pmi)
        pmi_finalize();
    close_tree();
    close_fd(S.mpirun_fd);
    S.inited = false;
    S.host.clear();
    return PMGR_SUCCESS;
}

} // extern "C"
