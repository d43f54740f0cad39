// mpirun's PMGR_COLLECTIVE protocol 8 server and Weft's event channel.
//
// The reference server blocks on each rank in turn. This one is driven by
// poll() alongside the rest of mpirun and never blocks: it reads from each
// connection only what the packet in progress still needs (nothing while a
// whole packet or a reply waits on it, so a flood stays in the peer's socket),
// refuses a header whose size is above the limits or above what rank 0's
// header in the round allows before reading its data, and queues replies per
// connection, written as the peer reads them; a reply that goes to several
// ranks is one shared buffer. Once every rank has a whole packet for the
// current round it checks that they agree (opcode, root, size, as the
// reference does in rank order) and answers each rank in rank order. Anything
// a classic server would hang or crash on ends the job with a message
// instead, and every wait on a peer is bounded (ServerLimits).
#include "mpirun_server.h"

#include "mpirun_secret.h"
#include "pmgr_protocol.h"
#include "sha256.h"

#include <weft/runtime.h>

#include <boot/boot.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
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

// Longest abort message accepted.
constexpr int max_abort_message = 65536;
// Most a connection may read in one call before the event loop turns to others.
constexpr size_t max_read_per_call = size_t(256) << 10;
// TCP keepalive on every connection: a peer whose host is gone (a half-open connection) is
// found within idle + interval * count seconds.
constexpr int keepalive_idle_s = 10, keepalive_interval_s = 5, keepalive_count = 3;

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

std::string seconds(double s)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", s);
    return buf;
}

using Buffer = std::shared_ptr<const std::string>;

} // namespace

std::string escape_text(const std::string &text)
{
    std::string out;
    for (unsigned char ch : text) {
        if (ch == '\\')
            out += "\\\\";
        else if (ch == '\n')
            out += "\\n";
        else if (ch == '\t')
            out += "\\t";
        else if (ch == '\r')
            out += "\\r";
        else if (ch < 0x20 || ch >= 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", ch);
            out += buf;
        } else
            out += char(ch);
    }
    return out;
}

struct Server::Conn {
    // event_auth: a job-event channel claimed, its proof of the job's secret not in yet.
    // refused: closed once advance() is done with it.
    enum class Kind {
        undecided,
        event_auth,
        task,
        event,
        abort_request,
        refused
    } kind = Kind::undecided;
    int fd = -1;
    int rank = -1;
    std::string in; // the packet (or handshake) in progress: never more than it needs
    unsigned char nonce[event_nonce_size] = {}; // event_auth: the challenge sent
    double since = now_s();
    double last_in = since; // when bytes last arrived
    bool eof = false;
    bool rdhup = false; // the peer shut its side while the server was not reading

    // The current packet's header, once known, and its total length.
    bool have_header = false;
    size_t need = 4;
    // The current round's packet, once whole.
    bool have_packet = false;
    int op = -1, root = -1, size = -1, code = 0;
    Buffer data;

    // Replies and events not yet written.
    struct Out {
        Buffer buf;
        size_t off, len;
        int op;
    };
    std::deque<Out> out;
    double last_out = 0; // when bytes last left (or the queue last became non-empty)
};

Server::Server(int nprocs, int debug, const ServerLimits &limits)
    : nprocs_(nprocs), debug_(debug), limits_(limits), by_rank_(size_t(nprocs), nullptr),
      events_by_rank_(size_t(nprocs), nullptr), finalized_(size_t(nprocs), false),
      beat_(size_t(nprocs)), closed_(size_t(nprocs), false), joined_(size_t(nprocs), false),
      gone_(size_t(nprocs), false)
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

void Server::warn(const std::string &text) const
{
    std::fprintf(stderr, "mpirun: %s\n", escape_text(text).c_str());
    std::fflush(stderr);
}

// The proof an event_auth connection sent (its first event_mac_size bytes): right, or the
// connection is closed with a warning and false.
bool Server::check_event_proof(Conn *c)
{
    std::string error;
    const unsigned char *key = job_secret_key(error);
    const std::string in = event_mac_input(c->nonce, c->rank);
    unsigned char want[event_mac_size];
    if (key)
        weft::crypto::hmac_sha256(key, WEFT_JOB_SECRET_SIZE, in.data(), in.size(), want);
    if (key && weft::crypto::equal_ct(want, c->in.data(), event_mac_size))
        return true;
    warn("a connection claiming the job-event channel of " + who(c->rank) +
         " did not prove the job's secret; closed");
    drop(c);
    return false;
}

// A connection from this host is taken only from the job's user (mpirun's): another user's
// process could otherwise join as a rank, abort the job or end it with a bad handshake
// (docs/security.md). It is closed with a warning, and changes nothing in the job.
bool Server::accept(int fd)
{
    const long uid = peer_uid(fd);
    if (uid >= 0 && uid_t(uid) != getuid()) {
        warn("refused a connection from user " + std::to_string(uid) +
             " of this host: only the job's user (" + std::to_string(getuid()) + ") may join");
        close(fd);
        return false;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &keepalive_idle_s, sizeof keepalive_idle_s);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &keepalive_interval_s, sizeof keepalive_interval_s);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &keepalive_count, sizeof keepalive_count);
    auto c = std::make_unique<Conn>();
    c->fd = fd;
    conns_[fd] = std::move(c);
    return true;
}

bool Server::accepting() const
{
    size_t undecided = 0;
    for (const auto &[fd, c] : conns_)
        undecided += c->kind == Conn::Kind::undecided || c->kind == Conn::Kind::event_auth;
    return undecided < limits_.max_undecided;
}

// How many more bytes the server will read from `c` now.
size_t Server::read_cap(const Conn *c) const
{
    const size_t have = c->in.size();
    switch (c->kind) {
    case Conn::Kind::undecided: {
        // A handshake is 8 bytes; an abort request 12 and its message, then the close (one
        // byte more tells it is not one).
        size_t want = 12;
        if (have >= 12) {
            const int len = int_at(c->in, 8);
            want = len >= 0 && len <= max_abort_message ? 12 + size_t(len) + 1 : 0;
        }
        return want > have ? want - have : 0;
    }
    case Conn::Kind::task:
        if (c->have_packet || !c->out.empty() || c->eof)
            return 0;
        return c->need > have ? c->need - have : 0;
    case Conn::Kind::event_auth:
        return c->eof || have >= event_mac_size ? 0 : event_mac_size - have;
    case Conn::Kind::event: return c->eof ? 0 : 64;
    case Conn::Kind::abort_request:
    case Conn::Kind::refused: return 0;
    }
    return 0;
}

std::vector<pollfd> Server::poll_fds() const
{
    std::vector<pollfd> out;
    for (const auto &[fd, c] : conns_) {
        short events = 0;
        if (read_cap(c.get()) > 0)
            events |= POLLIN;
        else if (c->kind == Conn::Kind::task && !c->rdhup && !c->eof)
            events |= POLLRDHUP;
        if (!c->out.empty())
            events |= POLLOUT;
        out.push_back({fd, events, 0});
    }
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

bool Server::has_timers() const
{
    return std::any_of(conns_.begin(), conns_.end(), [](const auto &kv) {
        const Conn &c = *kv.second;
        return c.kind == Conn::Kind::undecided || c.kind == Conn::Kind::event_auth ||
               !c.out.empty() || (c.kind == Conn::Kind::task && !c.have_packet && !c.in.empty());
    });
}

bool Server::all_closed() const
{
    return std::all_of(closed_.begin(), closed_.end(), [](bool c) { return c; });
}

bool Server::finalized(int rank) const { return finalized_[size_t(rank)]; }

std::optional<std::chrono::steady_clock::time_point> Server::last_beat(int rank) const
{
    if (!events_by_rank_[size_t(rank)] || finalized_[size_t(rank)] || gone_[size_t(rank)])
        return std::nullopt;
    return beat_[size_t(rank)];
}

bool Server::has_event_channel(int rank) const { return ever_events_.count(rank) > 0; }

void Server::queue(Conn *c, Buffer buf, size_t off, size_t len, int op)
{
    if (len == 0)
        return;
    if (c->out.empty())
        c->last_out = now_s();
    c->out.push_back({std::move(buf), off, len, op});
}

// Write what the socket takes now. Returns an error, or "".
std::string Server::flush(Conn *c)
{
    while (!c->out.empty()) {
        Conn::Out &o = c->out.front();
        ssize_t w = send(c->fd, o.buf->data() + o.off, o.len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            c->last_out = now_s();
            o.off += size_t(w);
            o.len -= size_t(w);
            if (o.len == 0)
                c->out.pop_front();
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return {};
        const std::string why = w < 0 ? std::strerror(errno) : "nothing written";
        if (c->kind == Conn::Kind::event) {
            // The rank is gone; its exit tells the rest.
            drop(c);
            return {};
        }
        return fail("cannot send the " + std::string(opcode_name(o.op)) + " reply to " +
                    who(c->rank) + ": " + why);
    }
    return {};
}

void Server::notify_failed(int rank, int exit_code, int signal)
{
    auto ev = std::make_shared<std::string>(sizeof(Event), '\0');
    const Event e{WEFT_BOOT_EVENT_PROC_FAILED, rank, exit_code, signal};
    std::memcpy(ev->data(), &e, sizeof e);
    failures_.push_back(ev);
    std::vector<Conn *> targets;
    for (Conn *c : events_by_rank_)
        if (c && c->rank != rank)
            targets.push_back(c);
    for (Conn *c : targets) {
        queue(c, ev, 0, ev->size(), -1);
        flush(c);
    }
}

std::string Server::rank_failed(int rank)
{
    if (rank < 0 || rank >= nprocs_ || gone_[size_t(rank)])
        return {};
    gone_[size_t(rank)] = true;
    for (Conn *c : {by_rank_[size_t(rank)], events_by_rank_[size_t(rank)]})
        if (c)
            drop(c);
    return closed_[size_t(rank)] ? std::string() : check_round();
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
        const int rank = int_at(c->in, 4);
        c->in.erase(0, 8);
        // Nothing is taken from a claim before its proof (docs/security.md): a stranger's
        // claim is closed and changes nothing in the job.
        if (rank < 0 || rank >= nprocs_) {
            warn("a connection claimed the job-event channel of rank " + std::to_string(rank) +
                 ", outside this job's ranks 0.." + std::to_string(nprocs_ - 1) + "; closed");
            c->kind = Conn::Kind::refused;
            c->eof = true;
            return {};
        }
        std::string error;
        const unsigned char *key = job_secret_key(error);
        if (!key || !random_bytes(c->nonce, sizeof c->nonce, error))
            return "cannot challenge a job-event channel: " + error;
        c->kind = Conn::Kind::event_auth;
        c->rank = rank;
        c->since = now_s();
        queue(c,
              std::make_shared<const std::string>(reinterpret_cast<const char *>(c->nonce),
                                                  sizeof c->nonce),
              0, sizeof c->nonce, -1);
        flush(c);
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
        if (plausible && c->in.size() <= 12 + size_t(len) && !c->eof &&
            now_s() - c->since < limits_.handshake_s)
            return {};
    } else if (!c->eof && now_s() - c->since < limits_.handshake_s) {
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

namespace {

// The bytes of data that `rank` sends in a packet with this header.
size_t data_len_for(int op, int root, int size, int rank, int nprocs)
{
    const size_t s = size_t(std::max(size, 0)), N = size_t(nprocs);
    switch (op) {
    case op_gather: return s;
    case op_bcast: return root == rank ? s : 0;
    case op_scatter: return root == rank ? s * N : 0;
    case op_allgather: return s;
    case op_alltoall: return s * N;
    default: return 0;
    }
}

std::string describe(int op, int root, int size)
{
    std::string d = opcode_name(op);
    if (op == op_bcast || op == op_gather || op == op_scatter)
        d += " (root " + std::to_string(root) + ", size " + std::to_string(size) + ")";
    else if (op == op_allgather || op == op_alltoall)
        d += " (size " + std::to_string(size) + ")";
    return d;
}

bool same_round(int op, int root, int size, int op2, int root2, int size2)
{
    return op == op2 &&
           (op != op_bcast && op != op_gather && op != op_scatter ? true : root == root2) &&
           (op == op_barrier || op == op_open || op == op_abort ? true : size == size2);
}

} // namespace

// Parse the next packet of a task connection: its header as soon as it is in (checked
// against the limits and against rank 0's header before any data is read), then
// the whole packet.
std::string Server::parse(Conn *c, bool &progress)
{
    progress = false;
    if (c->have_packet || c->in.size() < 4)
        return {};
    size_t header = 4;
    if (!c->have_header) {
        const int op = int_at(c->in, 0);
        switch (op) {
        case op_close:
        case op_barrier: break;
        case op_open:
        case op_abort:
        case op_allgather:
        case op_alltoall: header = 8; break;
        case op_bcast:
        case op_gather:
        case op_scatter: header = 12; break;
        default: return who(c->rank) + " sent unknown opcode " + std::to_string(op);
        }
        if (c->in.size() < header) {
            c->need = header;
            return {};
        }
        int root = -1, size = 0, code = 0;
        if (op == op_open || op == op_abort)
            code = int_at(c->in, 4);
        if (op == op_allgather || op == op_alltoall)
            size = int_at(c->in, 4);
        if (header == 12) {
            root = int_at(c->in, 4);
            size = int_at(c->in, 8);
            if (root < 0 || root >= nprocs_)
                return who(c->rank) + " sent " + opcode_name(op) + " with root " +
                       std::to_string(root) + ", outside ranks 0.." + std::to_string(nprocs_ - 1);
        }
        const std::string sent = who(c->rank) + " sent " + opcode_name(op) + " with size " +
                                 std::to_string(size) + " bytes per rank";
        if (size < 0)
            return sent + ", which is not a usable size";
        if (size_t(size) > limits_.max_size)
            return sent + ", more than the limit of " + std::to_string(limits_.max_size) +
                   " (--bootstrap-max-size)";
        const double N = nprocs_;
        const double round_bytes = op == op_bcast      ? double(size)
                                   : op == op_alltoall ? double(size) * N * N
                                   : op == op_gather || op == op_scatter || op == op_allgather
                                       ? double(size) * N
                                       : 0;
        if (round_bytes > double(limits_.max_round))
            return sent + ": the round would hold " + std::to_string(uint64_t(round_bytes)) +
                   " bytes, more than the limit of " + std::to_string(limits_.max_round);
        c->have_header = true;
        c->op = op;
        c->root = root;
        c->size = size;
        c->code = code;
        const size_t data_len = data_len_for(op, root, size, c->rank, nprocs_);
        c->need = header + data_len;
        // Within the limits now: hold it in one allocation rather than a chain of them.
        c->in.reserve(c->need);
        // A packet larger than rank 0's header allows is refused before its data is read
        // (rank 0 is the reference, as in the round's check, so the message does not
        // depend on arrival order).
        const Conn *lead = by_rank_[0];
        if (op != op_close && lead && lead != c && (lead->have_header || lead->have_packet) &&
            !same_round(op, root, size, lead->op, lead->root, lead->size) &&
            data_len > data_len_for(lead->op, lead->root, lead->size, c->rank, nprocs_))
            return "mismatched collective: " + who(c->rank) + " sent " + describe(op, root, size) +
                   " while " + who(0) + " sent " + describe(lead->op, lead->root, lead->size);
    }
    if (c->in.size() < c->need)
        return {};
    header = c->need - data_len_for(c->op, c->root, c->size, c->rank, nprocs_);
    const size_t len = c->need - header;
    if (c->in.size() == c->need) {
        c->in.erase(0, header);
        c->data = std::make_shared<const std::string>(std::move(c->in));
        c->in = std::string();
    } else {
        c->data = std::make_shared<const std::string>(c->in, header, len);
        c->in.erase(0, c->need);
    }
    c->have_packet = true;
    c->have_header = false;
    c->need = 4;
    progress = true;
    return {};
}

std::string Server::handle(int fd, short revents)
{
    auto it = conns_.find(fd);
    if (it == conns_.end())
        return {};
    Conn *c = it->second.get();
    if (revents & POLLOUT) {
        if (std::string e = flush(c); !e.empty())
            return e;
        if (!conns_.count(fd))
            return {};
    }
    char buf[65536];
    size_t budget = max_read_per_call;
    while (budget > 0) {
        const size_t cap = std::min({read_cap(c), sizeof buf, budget});
        if (cap == 0)
            break;
        ssize_t n = recv(fd, buf, cap, 0);
        if (n > 0) {
            c->in.append(buf, size_t(n));
            c->last_in = now_s();
            budget -= size_t(n);
            if (std::string e = advance(c); !e.empty())
                return e;
            if (!conns_.count(fd))
                return {};
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
            c->eof = true;
        break;
    }
    if (read_cap(c) == 0 && !c->eof) {
        // Not reading: a hang-up or an error is the end of it; a peer that only shut its
        // side may still read its reply.
        if (revents & (POLLHUP | POLLERR))
            c->eof = true;
        else if (revents & POLLRDHUP)
            c->rdhup = true;
    }
    return advance(c);
}

std::string Server::advance(Conn *c)
{
    const int fd = c->fd;
    bool progress = true;
    while (progress) {
        progress = false;
        std::string err;
        switch (c->kind) {
        case Conn::Kind::undecided: err = classify(c, progress); break;
        case Conn::Kind::event_auth:
            if (c->in.size() < event_mac_size)
                break;
            if (!check_event_proof(c))
                return {}; // closed
            if (events_by_rank_[size_t(c->rank)])
                return fail("two job-event channels proved to be " + who(c->rank));
            c->kind = Conn::Kind::event;
            c->in.erase(0, event_mac_size);
            events_by_rank_[size_t(c->rank)] = c;
            ever_events_.insert(c->rank);
            beat_[size_t(c->rank)] = std::chrono::steady_clock::now();
            note("the job-event channel of " + who(c->rank) + " proved the job's secret");
            // The failures it missed, in order: a rank learns of every one however late its
            // channel opened.
            for (const auto &ev : failures_)
                queue(c, ev, 0, ev->size(), -1);
            progress = true;
            break;
        case Conn::Kind::task: err = parse(c, progress); break;
        case Conn::Kind::event:
            while (err.empty() && c->in.size() >= 4) {
                const int v = int_at(c->in, 0);
                if (v == event_finalized)
                    finalized_[size_t(c->rank)] = true;
                else if (v == event_heartbeat)
                    beat_[size_t(c->rank)] = std::chrono::steady_clock::now();
                else
                    err = who(c->rank) + " sent " + std::to_string(v) +
                          " on its job-event channel, which carries only FINALIZED (" +
                          std::to_string(event_finalized) + ") and HEARTBEAT (" +
                          std::to_string(event_heartbeat) + ")";
                c->in.erase(0, 4);
            }
            break;
        case Conn::Kind::abort_request:
        case Conn::Kind::refused: break;
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
            if (!conns_.count(fd))
                return {};
            progress = c->kind == Conn::Kind::task && !c->have_packet && c->out.empty();
        }
    }
    if (c->eof && c->kind == Conn::Kind::event_auth) {
        warn("a connection claiming the job-event channel of " + who(c->rank) +
             " closed before it proved the job's secret");
        drop(c);
        return {};
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
        if (task && ft_ && !closed_[size_t(rank)]) {
            // Fault tolerance: a rank that leaves is gone (mpirun judges its exit when it
            // reaps it); a barrier may complete without it now.
            note(who(rank) + " closed its connection without PMGR_CLOSE: gone");
            gone_[size_t(rank)] = true;
            return check_round();
        }
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

// Undecided connections past their time, stalled packets, replies not read.
std::string Server::tick()
{
    const double now = now_s();
    std::vector<int> fds;
    for (const auto &[fd, c] : conns_)
        fds.push_back(fd);
    for (int fd : fds) {
        auto it = conns_.find(fd);
        if (it == conns_.end())
            continue;
        Conn *c = it->second.get();
        if (c->kind == Conn::Kind::event_auth) {
            if (now - c->since >= limits_.handshake_s) {
                warn("a connection claiming the job-event channel of " + who(c->rank) +
                     " did not prove the job's secret within " + seconds(limits_.handshake_s) +
                     " s; closed");
                drop(c);
            }
            continue;
        }
        if (c->kind == Conn::Kind::undecided) {
            const bool late = now - c->since >= limits_.handshake_s;
            if (late && c->in.empty()) {
                note("dropped a connection that said nothing for " + seconds(limits_.handshake_s) +
                     " s");
                drop(c);
                continue;
            }
            if (late && c->in.size() < 8)
                return fail("a connection sent " + std::to_string(c->in.size()) +
                            " bytes, not a whole handshake (8 bytes), then nothing for " +
                            seconds(limits_.handshake_s) + " s");
            if (!c->in.empty())
                if (std::string e = advance(c); !e.empty())
                    return e;
            continue;
        }
        if (c->kind == Conn::Kind::task && !c->have_packet && !c->in.empty() && c->out.empty() &&
            now - std::max(c->last_in, c->last_out) >= limits_.io_s) {
            const std::string what = c->in.size() >= 4
                                         ? std::string(opcode_name(int_at(c->in, 0))) + " packet"
                                         : std::string("packet");
            return fail(who(c->rank) + " sent " + std::to_string(c->in.size()) + " of the " +
                        std::to_string(c->need) + " bytes of a " + what + ", then nothing for " +
                        seconds(limits_.io_s) + " s");
        }
        if (!c->out.empty() && now - c->last_out >= limits_.io_s) {
            size_t unread = 0;
            for (const auto &o : c->out)
                unread += o.len;
            if (c->kind == Conn::Kind::event)
                return fail(who(c->rank) + " has not read its job-event channel for " +
                            seconds(limits_.io_s) + " s");
            return fail(who(c->rank) + " has not read its " + opcode_name(c->out.front().op) +
                        " reply for " + seconds(limits_.io_s) + " s (" + std::to_string(unread) +
                        " bytes of it unread)");
        }
    }
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
    int waiting = 0, closed = 0, gone = 0;
    for (int r = 0; r < nprocs_; ++r) {
        if (closed_[size_t(r)])
            ++closed;
        else if (gone_[size_t(r)])
            ++gone;
        else if (by_rank_[size_t(r)] && by_rank_[size_t(r)]->have_packet)
            ++waiting;
    }
    if (closed + gone == nprocs_ && gone > 0)
        return {};
    if (gone > 0 && waiting > 0 && closed == 0 && waiting + gone == nprocs_)
        return gone_round(waiting);
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

// Every rank left waits in the same round, and the others are gone (fault tolerance): a barrier
// completes over the ranks left; anything else cannot.
std::string Server::gone_round(int waiting)
{
    int first_gone = 0;
    while (!gone_[size_t(first_gone)])
        ++first_gone;
    std::vector<Conn *> live;
    for (int r = 0; r < nprocs_; ++r) {
        Conn *c = gone_[size_t(r)] || closed_[size_t(r)] ? nullptr : by_rank_[size_t(r)];
        if (!c)
            continue;
        if (c->op != op_barrier)
            return fail(who(first_gone) + " is gone while " + who(r) + " waits in " +
                        opcode_name(c->op) + ", which cannot complete without it");
        live.push_back(c);
    }
    if (int(live.size()) != waiting)
        return {};
    note("Completing a barrier over the " + std::to_string(waiting) + " ranks left");
    const int op = op_barrier;
    auto b = std::make_shared<const std::string>(reinterpret_cast<const char *>(&op), sizeof op);
    std::vector<int> fds;
    for (Conn *c : live) {
        queue(c, b, 0, b->size(), op);
        c->have_packet = false;
        c->data.reset();
        fds.push_back(c->fd);
    }
    ++rounds_;
    for (int fd : fds)
        if (auto it = conns_.find(fd); it != conns_.end())
            if (std::string e = flush(it->second.get()); !e.empty())
                return e;
    for (int fd : fds)
        if (auto it = conns_.find(fd); it != conns_.end() && !it->second->in.empty())
            if (std::string e = advance(it->second.get()); !e.empty())
                return e;
    return {};
}

std::string Server::process_round()
{
    const double t0 = now_s();
    const Conn *lead = by_rank_[0];
    const int op = lead->op;
    round_op_ = op;
    note(std::string("Receiving data for ") + opcode_name(op));
    for (int r = 1; r < nprocs_; ++r) {
        const Conn *c = by_rank_[size_t(r)];
        if (!same_round(c->op, c->root, c->size, op, lead->root, lead->size))
            return fail("mismatched collective: " + who(r) + " sent " +
                        describe(c->op, c->root, c->size) + " while " + who(0) + " sent " +
                        describe(op, lead->root, lead->size));
    }
    note(std::string("Sending data for ") + opcode_name(op));
    const size_t N = size_t(nprocs_), size = size_t(std::max(lead->size, 0));
    const size_t root = size_t(std::max(lead->root, 0));
    const std::vector<Conn *> order(by_rank_.begin(), by_rank_.end());
    // A reply that several ranks get is one buffer, shared by their queues.
    auto concat = [&] {
        auto all = std::make_shared<std::string>();
        all->reserve(N * size);
        for (Conn *c : order)
            *all += *c->data;
        return all;
    };
    switch (op) {
    case op_barrier: {
        auto b =
            std::make_shared<const std::string>(reinterpret_cast<const char *>(&op), sizeof op);
        for (Conn *c : order)
            queue(c, b, 0, b->size(), op);
        break;
    }
    case op_bcast:
        for (Conn *c : order)
            queue(c, order[root]->data, 0, size, op);
        break;
    case op_gather: {
        auto all = concat();
        queue(order[root], all, 0, all->size(), op);
        break;
    }
    case op_scatter:
        for (size_t r = 0; r < N; ++r)
            queue(order[r], order[root]->data, r * size, size, op);
        break;
    case op_allgather: {
        Buffer all = concat();
        for (Conn *c : order)
            queue(c, all, 0, all->size(), op);
        break;
    }
    case op_alltoall:
        for (size_t i = 0; i < N; ++i) {
            auto mine = std::make_shared<std::string>();
            mine->reserve(N * size);
            for (Conn *c : order)
                mine->append(*c->data, i * size, size);
            queue(order[i], mine, 0, mine->size(), op);
        }
        break;
    default: break; // OPEN: no reply
    }
    for (Conn *c : order) {
        c->have_packet = false;
        c->data.reset();
    }
    round_op_ = -1;
    std::vector<int> fds;
    for (Conn *c : order)
        fds.push_back(c->fd);
    for (int fd : fds)
        if (auto it = conns_.find(fd); it != conns_.end())
            if (std::string e = flush(it->second.get()); !e.empty())
                return e;
    ++rounds_;
    note(std::string("Completed ") + opcode_name(op));
    note("Operation took " + std::to_string(now_s() - t0) + " seconds for " +
         std::to_string(nprocs_) + " procs");
    // Ranks may already have sent their next packet.
    for (int fd : fds)
        if (auto it = conns_.find(fd); it != conns_.end() && !it->second->in.empty())
            if (std::string e = advance(it->second.get()); !e.empty())
                return e;
    return {};
}

} // namespace weft::mpirun
