// mpirun's PMGR_COLLECTIVE protocol 8 server and Weft's event channel.
//
// The reference server blocks on each rank in turn. This one is driven by
// poll() alongside the rest of mpirun: it buffers what each connection sends,
// and once every rank has a whole packet for the current round it checks that
// they agree (opcode, root, size, as the reference does in rank order) and
// answers each rank in rank order. Anything a classic server would hang or
// crash on ends the job with a message instead.
#include "mpirun_server.h"

#include "pmgr_protocol.h"

#include <boot/boot.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

namespace weft::mpirun {

using namespace weft::pmgr;

namespace {

// Largest per-round payload the server accepts (it holds a round in memory).
constexpr size_t max_round_bytes = size_t(1) << 30;
// How long a connection may stay undecided (not a handshake, not yet a
// complete abort request) before it is taken for a bad handshake.
constexpr double undecided_limit_s = 2.0;
// Longest abort message accepted.
constexpr int max_abort_message = 65536;

double now_s()
{
    timeval tv;
    gettimeofday(&tv, nullptr);
    return double(tv.tv_sec) + double(tv.tv_usec) * 1e-6;
}

int int_at(const std::string &b, size_t off)
{
    int v;
    std::memcpy(&v, b.data() + off, sizeof v);
    return v;
}

// Write everything to a non-blocking socket, waiting as needed (bounded).
bool send_all(int fd, const void *buf, size_t n)
{
    auto *p = static_cast<const char *>(buf);
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w > 0) {
            p += w;
            n -= size_t(w);
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            pollfd pf{fd, POLLOUT, 0};
            if (poll(&pf, 1, 60000) <= 0)
                return false;
            continue;
        }
        return false;
    }
    return true;
}

} // namespace

struct Server::Conn {
    enum class Kind { undecided, task, event, abort_request } kind = Kind::undecided;
    int fd = -1;
    int rank = -1;
    std::string in;
    double since = now_s();
    bool eof = false;

    // The current round's packet, once whole.
    bool have_packet = false;
    int op = -1, root = -1, size = -1, code = 0;
    std::string data;
};

Server::Server(int nprocs, int debug)
    : nprocs_(nprocs), debug_(debug), by_rank_(size_t(nprocs), nullptr),
      events_by_rank_(size_t(nprocs), nullptr), finalized_(size_t(nprocs), false),
      closed_(size_t(nprocs), false), joined_(size_t(nprocs), false)
{
}

Server::~Server()
{
    for (auto &[fd, c] : conns_)
        close(fd);
}

void Server::note(const std::string &text) const
{
    if (debug_ <= 0)
        return;
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    std::fprintf(stderr, "PMGR_COLLECTIVE DEBUG: mpirun on %s: %s\n", host, text.c_str());
    std::fflush(stderr);
}

void Server::accept(int fd)
{
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto c = std::make_unique<Conn>();
    c->fd = fd;
    conns_[fd] = std::move(c);
}

std::vector<int> Server::fds() const
{
    std::vector<int> out;
    for (const auto &[fd, c] : conns_)
        out.push_back(fd);
    return out;
}

std::optional<Server::Abort> Server::take_abort()
{
    auto a = abort_;
    abort_.reset();
    return a;
}

bool Server::in_collectives(int rank) const { return joined(rank) && !closed_[size_t(rank)]; }

bool Server::joined(int rank) const { return rank >= 0 && rank < nprocs_ && joined_[size_t(rank)]; }

bool Server::has_open_connection(int rank) const
{
    return by_rank_[size_t(rank)] || events_by_rank_[size_t(rank)];
}

bool Server::has_undecided() const
{
    return std::any_of(conns_.begin(), conns_.end(),
                       [](const auto &kv) { return kv.second->kind == Conn::Kind::undecided; });
}

bool Server::all_closed() const
{
    return std::all_of(closed_.begin(), closed_.end(), [](bool c) { return c; });
}

bool Server::finalized(int rank) const { return finalized_[size_t(rank)]; }

bool Server::has_event_channel(int rank) const { return ever_events_.count(rank) > 0; }

void Server::notify_failed(int rank, int exit_code, int signal)
{
    Event ev{WEFT_BOOT_EVENT_PROC_FAILED, rank, exit_code, signal};
    for (Conn *c : events_by_rank_)
        if (c && c->rank != rank)
            send_all(c->fd, &ev, sizeof ev);
}

void Server::drop(Conn *c)
{
    if (c->kind == Conn::Kind::task && c->rank >= 0 && by_rank_[size_t(c->rank)] == c)
        by_rank_[size_t(c->rank)] = nullptr;
    if (c->kind == Conn::Kind::event && c->rank >= 0 && events_by_rank_[size_t(c->rank)] == c)
        events_by_rank_[size_t(c->rank)] = nullptr;
    int fd = c->fd;
    close(fd);
    conns_.erase(fd);
}

std::string Server::who(int rank) const { return "rank " + std::to_string(rank); }

// Decide what an undecided connection is. Returns an error, or "".
std::string Server::classify(Conn *c, bool &progress)
{
    progress = false;
    if (c->in.size() < 4)
        return {};
    const int first = int_at(c->in, 0);
    if (first == event_magic) {
        if (c->in.size() < 8)
            return {};
        int rank = int_at(c->in, 4);
        if (rank < 0 || rank >= nprocs_)
            return "an event channel claimed rank " + std::to_string(rank) +
                   ", outside this job's ranks 0.." + std::to_string(nprocs_ - 1);
        if (events_by_rank_[size_t(rank)])
            return "two event channels claimed " + who(rank);
        c->kind = Conn::Kind::event;
        c->rank = rank;
        c->in.erase(0, 8);
        events_by_rank_[size_t(rank)] = c;
        ever_events_.insert(rank);
        progress = true;
        return {};
    }
    if (c->in.size() < 8)
        return {};
    const int rank = int_at(c->in, 4);
    if (first == version && rank >= 0 && rank < nprocs_ && !joined(rank)) {
        c->kind = Conn::Kind::task;
        c->rank = rank;
        c->in.erase(0, 8);
        by_rank_[size_t(rank)] = c;
        joined_[size_t(rank)] = true;
        if (!started_) {
            started_ = true;
            start_time_ = now_s();
            note("Processing PMGR opcodes");
        }
        progress = true;
        return {};
    }
    // Not a fresh task: an abort request (code, rank, length, message, then
    // the peer closes), or a handshake this server must refuse. (An abort
    // with code 8 from a rank that never connected looks like that rank's
    // handshake and is taken for one; its next bytes then fail as a bad
    // packet. The wire gives no way to tell the two apart sooner.)
    if (c->in.size() >= 12) {
        const int len = int_at(c->in, 8);
        const bool plausible = rank >= 0 && rank < nprocs_ && len >= 0 && len <= max_abort_message;
        if (plausible && c->in.size() == 12 + size_t(len) && c->eof) {
            std::string msg = c->in.substr(12, size_t(len));
            msg.resize(std::strlen(msg.c_str()));
            abort_ = Abort{rank, first, msg};
            c->kind = Conn::Kind::abort_request;
            progress = true;
            return {};
        }
        if (plausible && c->in.size() < 12 + size_t(len) && !c->eof &&
            now_s() - c->since < undecided_limit_s)
            return {};
    } else if (!c->eof && now_s() - c->since < undecided_limit_s) {
        return {};
    }
    if (first != version)
        return "a task connected speaking protocol version " + std::to_string(first) +
               "; this mpirun speaks PMGR_COLLECTIVE version " + std::to_string(version);
    if (rank < 0 || rank >= nprocs_)
        return "a task connected as rank " + std::to_string(rank) +
               ", outside this job's ranks 0.." + std::to_string(nprocs_ - 1);
    return "two tasks connected as " + who(rank);
}

// Parse the next whole packet of a task connection, if there is one.
std::string Server::parse(Conn *c, bool &progress)
{
    progress = false;
    if (c->have_packet || c->in.size() < 4)
        return {};
    const int op = int_at(c->in, 0);
    const size_t N = size_t(nprocs_);
    size_t need = 4;
    int root = -1, size = 0, code = 0;
    size_t data_off = 0, data_len = 0;
    auto header = [&](size_t ints) { return c->in.size() >= ints * 4; };
    switch (op) {
    case op_close:
    case op_barrier: break;
    case op_open:
    case op_abort:
        need = 8;
        if (!header(2))
            return {};
        code = int_at(c->in, 4);
        break;
    case op_bcast:
    case op_gather:
    case op_scatter:
        if (!header(3))
            return {};
        root = int_at(c->in, 4);
        size = int_at(c->in, 8);
        if (root < 0 || root >= nprocs_)
            return who(c->rank) + " sent " + opcode_name(op) + " with root " +
                   std::to_string(root) + ", outside ranks 0.." + std::to_string(nprocs_ - 1);
        data_off = 12;
        data_len = op == op_gather                       ? size_t(size)
                   : op == op_bcast && root == c->rank   ? size_t(size)
                   : op == op_scatter && root == c->rank ? size_t(size) * N
                                                         : 0;
        break;
    case op_allgather:
    case op_alltoall:
        if (!header(2))
            return {};
        size = int_at(c->in, 4);
        data_off = 8;
        data_len = op == op_allgather ? size_t(size) : size_t(size) * N;
        break;
    default: return who(c->rank) + " sent unknown opcode " + std::to_string(op);
    }
    if (size < 0 || size_t(size) * N * (op == op_alltoall ? N : 1) > max_round_bytes)
        return who(c->rank) + " sent " + opcode_name(op) + " with size " + std::to_string(size) +
               " bytes per rank, which is not a usable size";
    need = std::max(need, data_off + data_len);
    if (c->in.size() < need)
        return {};
    c->have_packet = true;
    c->op = op;
    c->root = root;
    c->size = size;
    c->code = code;
    c->data = c->in.substr(data_off, data_len);
    c->in.erase(0, need);
    progress = true;
    return {};
}

std::string Server::readable(int fd)
{
    auto it = conns_.find(fd);
    if (it == conns_.end())
        return {};
    Conn *c = it->second.get();
    char buf[65536];
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n > 0) {
            c->in.append(buf, size_t(n));
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
            c->eof = true;
        break;
    }
    return advance(c);
}

std::string Server::advance(Conn *c)
{
    bool progress = true;
    while (progress) {
        progress = false;
        std::string err;
        switch (c->kind) {
        case Conn::Kind::undecided: err = classify(c, progress); break;
        case Conn::Kind::task: err = parse(c, progress); break;
        case Conn::Kind::event:
            while (c->in.size() >= 4) {
                if (int_at(c->in, 0) == event_finalized)
                    finalized_[size_t(c->rank)] = true;
                c->in.erase(0, 4);
            }
            break;
        case Conn::Kind::abort_request: break;
        }
        if (!err.empty())
            return fail(err);
        if (c->kind == Conn::Kind::task && c->have_packet && c->op == op_close) {
            // CLOSE takes effect at once, as in the reference.
            closed_[size_t(c->rank)] = true;
            by_rank_[size_t(c->rank)] = nullptr;
            drop(c);
            return check_round();
        }
        if (c->kind == Conn::Kind::task && c->have_packet && c->op == op_abort) {
            abort_ = Abort{c->rank, c->code, ""};
            progress = false;
        }
        if (progress && c->kind == Conn::Kind::task && c->have_packet) {
            if (std::string e = check_round(); !e.empty())
                return e;
            progress = c->kind == Conn::Kind::task && conns_.count(c->fd) && !c->have_packet;
        }
    }
    if (c->eof) {
        const bool task = c->kind == Conn::Kind::task;
        const int rank = c->rank;
        const bool mid_packet = task && !c->in.empty();
        const size_t partial = c->in.size();
        if (c->kind == Conn::Kind::undecided) {
            std::string err = classify(c, progress);
            if (!err.empty())
                return fail(err);
            if (c->kind == Conn::Kind::undecided && c->in.empty()) {
                drop(c); // a connection that said nothing
                return {};
            }
            if (c->kind == Conn::Kind::undecided)
                return fail("a connection to mpirun sent " + std::to_string(c->in.size()) +
                            " bytes that are neither a handshake nor an abort request");
        }
        drop(c);
        if (task) {
            if (mid_packet)
                return fail(who(rank) + " closed its connection in the middle of a packet (" +
                            std::to_string(partial) + " bytes of it arrived)");
            return fail(who(rank) + " closed its connection to mpirun without PMGR_CLOSE" +
                        (round_op_ >= 0 ? std::string(" during ") + opcode_name(round_op_) : ""));
        }
    }
    return {};
}

std::string Server::tick()
{
    std::vector<Conn *> undecided;
    for (auto &[fd, c] : conns_)
        if (c->kind == Conn::Kind::undecided && !c->in.empty())
            undecided.push_back(c.get());
    for (Conn *c : undecided)
        if (std::string e = advance(c); !e.empty())
            return e;
    return {};
}

std::string Server::fail(const std::string &why)
{
    failed_ = true;
    return why;
}

// Complete the round if every rank has its packet; refuse rounds that can
// never complete.
std::string Server::check_round()
{
    int waiting = 0, closed = 0;
    for (int r = 0; r < nprocs_; ++r) {
        if (closed_[size_t(r)])
            ++closed;
        else if (by_rank_[size_t(r)] && by_rank_[size_t(r)]->have_packet)
            ++waiting;
    }
    if (closed == nprocs_) {
        note("Completed processing PMGR opcodes; took " + std::to_string(now_s() - start_time_) +
             " seconds for " + std::to_string(nprocs_) + " procs");
        return {};
    }
    if (waiting > 0 && closed > 0) {
        int gone = 0;
        while (!closed_[size_t(gone)])
            ++gone;
        int first = 0;
        while (!(by_rank_[size_t(first)] && by_rank_[size_t(first)]->have_packet))
            ++first;
        return fail(who(gone) + " left the bootstrap (PMGR_CLOSE) while " + who(first) +
                    " waits in " + opcode_name(by_rank_[size_t(first)]->op));
    }
    if (waiting < nprocs_)
        return {};
    return process_round();
}

std::string Server::process_round()
{
    const double t0 = now_s();
    const Conn *lead = by_rank_[0];
    const int op = lead->op;
    round_op_ = op;
    note(std::string("Receiving data for ") + opcode_name(op));
    auto describe = [&](const Conn *c) {
        std::string d = opcode_name(c->op);
        if (c->op == op_bcast || c->op == op_gather || c->op == op_scatter)
            d += " (root " + std::to_string(c->root) + ", size " + std::to_string(c->size) + ")";
        else if (c->op == op_allgather || c->op == op_alltoall)
            d += " (size " + std::to_string(c->size) + ")";
        return d;
    };
    for (int r = 1; r < nprocs_; ++r) {
        const Conn *c = by_rank_[size_t(r)];
        bool same =
            c->op == op &&
            (op != op_bcast && op != op_gather && op != op_scatter ? true
                                                                   : c->root == lead->root) &&
            (op == op_barrier || op == op_open || op == op_abort ? true : c->size == lead->size);
        if (!same)
            return fail("mismatched collective: " + who(r) + " sent " + describe(c) + " while " +
                        who(0) + " sent " + describe(lead));
    }
    note(std::string("Sending data for ") + opcode_name(op));
    const size_t N = size_t(nprocs_), size = size_t(std::max(lead->size, 0));
    std::vector<std::string> reply(N);
    switch (op) {
    case op_barrier:
        for (auto &r : reply)
            r.assign(reinterpret_cast<const char *>(&op), sizeof op);
        break;
    case op_bcast:
        for (auto &r : reply)
            r = by_rank_[size_t(lead->root)]->data;
        break;
    case op_gather: {
        std::string all;
        for (size_t r = 0; r < N; ++r)
            all += by_rank_[r]->data;
        reply[size_t(lead->root)] = std::move(all);
        break;
    }
    case op_scatter: {
        const std::string &src = by_rank_[size_t(lead->root)]->data;
        for (size_t r = 0; r < N; ++r)
            reply[r] = src.substr(r * size, size);
        break;
    }
    case op_allgather: {
        std::string all;
        for (size_t r = 0; r < N; ++r)
            all += by_rank_[r]->data;
        for (auto &r : reply)
            r = all;
        break;
    }
    case op_alltoall:
        for (size_t i = 0; i < N; ++i)
            for (size_t s = 0; s < N; ++s)
                reply[i] += by_rank_[s]->data.substr(i * size, size);
        break;
    default: break; // OPEN: no reply
    }
    std::vector<Conn *> order(by_rank_.begin(), by_rank_.end());
    for (Conn *c : order)
        c->have_packet = false;
    round_op_ = -1;
    for (size_t r = 0; r < N; ++r) {
        if (!reply[r].empty() && !send_all(order[r]->fd, reply[r].data(), reply[r].size()))
            return fail("cannot send the " + std::string(opcode_name(op)) + " reply to " +
                        who(int(r)) + ": " + std::strerror(errno));
    }
    ++rounds_;
    note(std::string("Completed ") + opcode_name(op));
    note("Operation took " + std::to_string(now_s() - t0) + " seconds for " +
         std::to_string(nprocs_) + " procs");
    // Ranks may already have sent their next packet.
    for (Conn *c : order)
        if (conns_.count(c->fd) && !c->in.empty())
            if (std::string e = advance(c); !e.empty())
                return e;
    return {};
}

} // namespace weft::mpirun
