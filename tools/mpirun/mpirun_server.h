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

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace weft::mpirun {

class Server {
  public:
    struct Abort {
        int rank;
        int code;
        std::string message;
    };

    Server(int nprocs, int debug);
    ~Server();

    // A connection accepted on the listening socket.
    void accept(int fd);
    // Descriptors to poll for reading.
    std::vector<int> fds() const;
    // `fd` is readable or hung up. Returns an error message that must end the
    // job (a protocol violation, a rank gone mid-collective), or "".
    std::string readable(int fd);
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
    // Whether every rank has sent PMGR_CLOSE.
    bool all_closed() const;
    // Whether any rank has joined.
    bool started() const { return started_; }
    // Whether `rank` said FINALIZED on its event channel.
    bool finalized(int rank) const;
    // Whether `rank` ever opened an event channel (it is a Weft MPI process).
    bool has_event_channel(int rank) const;
    // Push "rank failed" to every other event channel still open.
    void notify_failed(int rank, int exit_code, int signal);
    // Called now and then: decides connections that said too little to be
    // classified. Returns an error that ends the job, or "".
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
    std::string fail(const std::string &why);
    std::string who(int rank) const;
    void drop(Conn *c);
    void note(const std::string &text) const;

    int nprocs_;
    int debug_;
    std::map<int, std::unique_ptr<Conn>> conns_; // by fd
    std::vector<Conn *> by_rank_;                // collective connections
    std::vector<Conn *> events_by_rank_;
    std::set<int> ever_events_;
    std::vector<bool> finalized_;
    std::vector<bool> closed_;
    std::vector<bool> joined_;
    std::optional<Abort> abort_;
    bool started_ = false;
    bool failed_ = false;
    double start_time_ = 0;
    int round_op_ = -1;
    int rounds_ = 0;
};

} // namespace weft::mpirun

#endif
