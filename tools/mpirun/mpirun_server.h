// mpirun's side of the bootstrap: the PMGR_COLLECTIVE protocol 8 server, and
// Weft's job-event channel riding beside it.
//
// Every connection starts with a 4-byte host-order int. 8 is a classic
// protocol-8 task (then its rank): it takes part in the collectives. An abort
// connection is a protocol-8 handshake followed by the ABORT opcode and its
// payload. WEFT_EVENT_MAGIC starts Weft's event channel (then the rank): mpirun
// pushes job events (a rank failed) down it, and the rank says FINALIZED on it
// before it exits. A classic client never opens one, so it never sees Weft's
// extension.
#ifndef WEFT_MPIRUN_SERVER_H
#define WEFT_MPIRUN_SERVER_H

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <poll.h>
#include <set>
#include <string>
#include <vector>

namespace weft::mpirun {

// What the server holds and how long it waits (docs/mpirun.md, "Bounds and timeouts").
struct ServerLimits {
    // Largest per-rank size a packet header may give (--bootstrap-max-size).
    size_t max_size = size_t(1) << 20;
    // Largest data a whole round may hold, every rank's packet together.
    size_t max_round = size_t(256) << 20;
    // A new connection must say what it is within this (seconds).
    double handshake_s = 2.0;
    // A packet begun, or a reply queued, must make progress within this (seconds,
    // --bootstrap-timeout).
    double io_s = 10.0;
    // New connections wait in the listen backlog while this many have not said what they
    // are.
    size_t max_undecided = 64;
};

class Server {
  public:
    struct Abort {
        int rank;
        int code;
        std::string message; // as the peer sent it: escape it before printing
    };

    Server(int nprocs, int debug, const ServerLimits &limits);
    ~Server();

    // A connection accepted on the listening socket (made non-blocking here); false: refused
    // and closed (another user of this host).
    bool accept(int fd);
    // Whether to accept more connections now (few enough are undecided).
    bool accepting() const;
    // Descriptors to poll, with the events each waits for. The server reads from a
    // connection only what its current packet still needs, and nothing while a whole packet
    // or a reply is pending on it: what it buffers is bounded by the limits.
    std::vector<pollfd> poll_fds() const;
    // `fd` reported `revents`. Never blocks. Returns an error message that must end the job
    // (a protocol violation, a rank gone mid-collective), or "".
    std::string handle(int fd, short revents);
    // A rank asked for the job to be aborted (pmgr_abort).
    std::optional<Abort> take_abort();

    // Whether `rank` has joined the bootstrap (handshake done) and not yet
    // closed it (PMGR_CLOSE): a death now leaves the others waiting.
    bool in_collectives(int rank) const;
    // Whether `rank` ever joined (handshake done, closed or not).
    bool joined(int rank) const;
    // Whether `rank` still has its task or event connection open.
    bool has_open_connection(int rank) const;
    // Whether a connection is open that has not said what it is yet.
    bool has_undecided() const;
    // Whether a timeout is running (a connection undecided, a packet begun, a reply
    // queued): tick() is then due soon.
    bool has_timers() const;
    // Whether every rank has sent PMGR_CLOSE.
    bool all_closed() const;
    // Whether any rank has joined.
    bool started() const { return started_; }
    // Whether `rank` said FINALIZED on its event channel.
    bool finalized(int rank) const;
    // When `rank` last beat (event_heartbeat) or opened its event channel; nullopt while it
    // has no event channel open or after it finalized (the failure detector watches only those).
    std::optional<std::chrono::steady_clock::time_point> last_beat(int rank) const;
    // Whether `rank` ever opened an event channel (it is a Weft MPI process).
    bool has_event_channel(int rank) const;
    // Queue "rank failed" on every other event channel still open.
    void notify_failed(int rank, int exit_code, int signal);
    // Fault tolerance (--with-ft): a rank that leaves without PMGR_CLOSE is gone, not an
    // error; a barrier completes over the ranks left (what MPI_Finalize needs), any other
    // collective that a gone rank should have joined ends the job.
    void set_fault_tolerant(bool on) { ft_ = on; }
    // `rank` failed (mpirun saw it die): its connections are closed, and it is gone. Returns
    // an error that ends the job (a collective it should have joined), or "".
    std::string rank_failed(int rank);
    // Whether `rank` is gone (failed, or left without PMGR_CLOSE under fault tolerance).
    bool gone(int rank) const { return gone_[size_t(rank)]; }
    // Called now and then: decides connections that said too little to be
    // classified, and enforces the timeouts. Returns an error that ends the job, or "".
    std::string tick();
    // Collective rounds completed.
    int rounds() const { return rounds_; }

  private:
    struct Conn;
    std::string advance(Conn *c);
    std::string classify(Conn *c, bool &progress);
    std::string parse(Conn *c, bool &progress);
    std::string check_round();
    std::string process_round();
    std::string gone_round(int waiting);
    std::string fail(const std::string &why);
    std::string who(int rank) const;
    std::string flush(Conn *c);
    void queue(Conn *c, std::shared_ptr<const std::string> buf, size_t off, size_t len, int op);
    size_t read_cap(const Conn *c) const;
    void drop(Conn *c);
    void note(const std::string &text) const;
    void warn(const std::string &text) const; // always printed, escaped
    bool check_event_proof(Conn *c);

    int nprocs_;
    int debug_;
    ServerLimits limits_;
    std::map<int, std::unique_ptr<Conn>> conns_; // by fd
    std::vector<Conn *> by_rank_;                // collective connections
    std::vector<Conn *> events_by_rank_;
    std::set<int> ever_events_;
    std::vector<bool> finalized_;
    std::vector<std::chrono::steady_clock::time_point> beat_;
    std::vector<bool> closed_;
    std::vector<bool> joined_;
    std::vector<bool> gone_;
    std::vector<std::shared_ptr<const std::string>> failures_; // every "rank failed" sent
    bool ft_ = false;
    std::optional<Abort> abort_;
    bool started_ = false;
    bool failed_ = false;
    double start_time_ = 0;
    int round_op_ = -1;
    int rounds_ = 0;
};

// `text` with control characters, backslashes and bytes that are not printable ASCII
// written as escapes (\n, \r, \t, \xHH), for printing what a peer sent.
std::string escape_text(const std::string &text);

} // namespace weft::mpirun

#endif
