// btl/tcp endpoints and connections.
//
// An endpoint is one module's link to one peer process (made by add_procs). It owns the
// peer's frames in order: outq (not yet written, or partly) and unacked (written, not known to
// have arrived). A fragment completes successfully only once it is known to be in the peer's
// host: the peer process acknowledged it (the ack field of its frames, or an ACK frame), or
// the peer's kernel did (SIOCOUTQ: the TCP ACK has come back), which needs no progress from
// the peer process, like a verbs RC completion. So a fragment that completed has arrived, and
// when the link breaks everything still queued completes in error (it may not have arrived):
// what a PML with failover needs (btl.h, "Errors").
//
// A connection is one TCP socket. Connections open lazily, at the first send, from either side;
// when both sides connect at once, the connection opened by the lower world rank is kept and
// the other is refused with kRejectRace before any frame travels on it (README.md). Every
// connection is authenticated first: greeting, hello and reply prove by HMAC that both sides
// hold the job's secret, and nothing unauthenticated reaches an endpoint. Once
// established, an endpoint's connection carries frames both ways until the job ends or the
// link breaks; a broken endpoint stays broken (the PML maps the rail out for good).
#ifndef WEFT_BTL_TCP_ENDPOINT_H
#define WEFT_BTL_TCP_ENDPOINT_H

#include "btl_tcp_frag.h"
#include "btl_tcp_if.h"
#include "btl_tcp_rdma.h"
#include "btl_tcp_wire.h"

#include <btl/btl.h>
#include <weft/types.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

namespace weft::btl::tcp {

class Module;
struct Endpoint;

// Most header bytes a place callback is given (btl_register_place).
constexpr size_t kPlaceHeaderMax = 64;

// What an epoll event points at.
struct Pollable {
    enum class Kind : uint8_t { listener, conn };
    explicit Pollable(Kind k) : kind(k) {}
    Kind kind;
};

enum class ConnState : uint8_t {
    connecting,    // connector: non-blocking connect() under way
    greeting_wait, // connector: reading the acceptor's kGreeting (its nonce)
    hello_sent,    // connector: sending kHello, then reading the reply
    hello_wait,    // acceptor: sending kGreeting, reading the connector's kHello
    parked,        // acceptor: authenticated kHello for an endpoint add_procs has not made yet
    established,   // frames flow
    closing,       // acceptor: writing a refusal, then closing
    salvage,       // broke while established: what its socket still holds is read (ep_down)
    closed         // fd closed; freed at the end of the progress call
};

struct Conn : Pollable {
    Conn() : Pollable(Kind::conn) {}
    ~Conn();
    Module *module = nullptr;
    Endpoint *ep = nullptr; // NULL while the acceptor does not know the peer yet
    int fd = -1;
    bool initiator = false;
    ConnState state = ConnState::closed;
    uint32_t events = 0;        // what epoll watches
    uint64_t bytes_written = 0; // everything written on the socket, handshake included
    uint64_t deadline = 0;      // connecting / hello_wait: give up at this now_ms()
    std::string peer;           // "addr:port" for messages
    unsigned char hs_out[wire::kGreetingSize + wire::kHelloSize] = {};
    size_t hs_out_len = 0, hs_out_done = 0;
    unsigned char hs_in[wire::kHelloSize] = {};
    size_t hs_in_done = 0;
    size_t hs_in_want = 0; // size of the handshake message being read
    // What the MACs cover: the acceptor's greeting and the connector's hello, as sent.
    unsigned char greeting[wire::kGreetingSize] = {};
    unsigned char hello_raw[wire::kHelloSize] = {};
    wire::Hello hello; // the peer's, once read
    // received bytes: [rx_begin, rx_end) not yet consumed; 64-byte aligned
    unsigned char *rx = nullptr;
    size_t rx_cap = 0, rx_begin = 0, rx_end = 0;
    size_t rx_skip = 0; // padding of a placed frame still to drop from what is read next
    // A frame being read straight into the memory its tag's place callback named
    // (btl_register_place): the socket's next bytes go to dest + done until done == rest.
    struct Placing {
        bool active = false;
        uint8_t tag = 0;
        unsigned char head[kPlaceHeaderMax] = {}; // the payload's first bytes, given to place
        size_t head_len = 0;
        unsigned char *dest = nullptr;
        size_t rest = 0, done = 0; // payload bytes after head: in all, written so far
        size_t pad = 0;            // the frame's padding, dropped after the payload
    } placing;
};

enum class EpState : uint8_t {
    idle,         // no connection yet
    connecting,   // my connection attempt is under way
    waiting_peer, // my attempt lost a simultaneous connect; the peer's is coming
    established,
    failed, // the link broke: sends return WEFT_ERR_LINK_DOWN
    closed  // the peer released us (BYE) or we released it: sends return WEFT_ERR_UNREACH
};

struct Endpoint {
    Module *module = nullptr;
    weft_proc_t *proc = nullptr;
    int rank = -1;
    Address peer;             // the peer module this one pairs with
    uint16_t peer_module = 0; // its index in the peer's modex list
    EpState state = EpState::idle;
    Conn *conn = nullptr;    // the established connection
    Conn *attempt = nullptr; // my connection attempt, until it is established or given up
    Conn *salvage = nullptr; // the broken connection, until ep_run_failure has read it out
    std::deque<Frag *> outq;
    std::deque<Frag *> unacked;
    std::map<uint64_t, RdmaOp *> gets; // gets waiting for their answer, by number
    uint64_t next_get = 1;
    uint32_t next_seq = 0;   // seq of my next data frame
    uint32_t peer_acked = 0; // data frames of mine the peer has acknowledged
    uint32_t recv_count = 0; // data frames received from the peer
    uint32_t ack_sent = 0;   // recv_count as last written in a header
    bool bye_queued = false;
    bool in_acking = false; // listed in component->acking
    bool ack_due = false;   // listed in component->ack_due
    bool write_due = false; // listed in component->write_due
    uint64_t deadline = 0;  // waiting_peer: give up at this now_ms()
    // A failure seen where callbacks may not run (inside a send, inside a callback), run by
    // the next progress call: first the error callback, then the error completions.
    bool failure_pending = false;
    bool failure_report = false;
    weft_status_t failure_status = WEFT_SUCCESS;
    std::string failure_reason;
};

inline weft_btl_endpoint_t *handle_of(Endpoint *ep)
{
    return reinterpret_cast<weft_btl_endpoint_t *>(ep);
}
inline Endpoint *endpoint_of(weft_btl_endpoint_t *h) { return reinterpret_cast<Endpoint *>(h); }

// "rank 3 (node2) at 10.0.0.2:41234 over eth0", for messages.
std::string describe(const Endpoint *ep);

// Queue a fragment (state loaned, fields filled) and write what the socket takes now; starts
// the connection if there is none. Returns WEFT_IN_PROGRESS, or WEFT_ERR_LINK_DOWN /
// WEFT_ERR_UNREACH without queuing. Never runs a callback.
weft_status_t ep_enqueue(Endpoint *ep, Frag *f);

// Take the endpoint down: close its connections, and leave to the next progress call the
// error callback (if report) and the error completion of its fragments. Idempotent. With
// salvage, the established connection, broken by a socket error, is not closed yet: the
// frames its socket still holds are delivered first (see ep_run_failure).
void ep_down(Endpoint *ep, EpState final_state, weft_status_t status, const std::string &reason,
             bool report, bool salvage = false);

// Start a failed endpoint over (a PML re-admitting the rail, or the peer connecting again
// after its own re-admission): idle, frame numbers from 0, the next send connects. Only for
// an endpoint whose failure has run (nothing queued, no callback owed). True if it did.
bool ep_restart(Endpoint *ep);

// Run a pending failure: the callbacks ep_down deferred. First the whole frames still in
// the broken connection's socket and buffer are delivered: the peer counted as arrived every
// byte our kernel acknowledged (SIOCOUTQ), so each must reach the PML, whichever way the
// failure was noticed (a failed write, a reset, a timeout). Then the error callback, then the
// error completions. Returns the callbacks made.
int ep_run_failure(Endpoint *ep);

// Release endpoints (del_procs, finalize): each established one says BYE, waits at most
// btl_tcp_linger for its bytes to leave and the peer to close, then everything still queued
// completes with `status`. No error callback. The endpoints are deleted.
void ep_release(const std::vector<Endpoint *> &eps, weft_status_t status);

// A socket accept() returned on module m's listener.
void conn_accepted(Module *m, int fd, uint32_t peer_addr, const std::string &peer);
// An epoll event on a connection; returns the callbacks made.
int conn_event(Conn *c, uint32_t events);
void conn_close(Conn *c);
// Give the parked connections of module m whose endpoint now exists their answer.
void conn_adopt_parked(Module *m);
// Deadlines of connections and endpoints; returns the callbacks made (none: failures are
// deferred).
int check_timers();
// Write an ACK frame to the peers whose frames arrived in an earlier progress call and have
// not been acknowledged by a frame of ours since.
void flush_acks();
// Write the bulk frames queued since the last progress call (ep_enqueue defers them).
void flush_writes();
// Complete the written fragments the peer's kernel has acknowledged, for endpoints whose
// oldest one has waited a little (the peer process's ack usually comes first). Returns the
// callbacks made.
int check_kernel_acks();

// TCP_NODELAY, TCP_USER_TIMEOUT, keepalive and buffer sizes from the parameters.
void tune_socket(int fd);
// A connection between addresses mine and theirs (host byte order) that stays inside this host
// gets btl_tcp_local_congestion's algorithm; others keep the system's.
void choose_congestion(int fd, uint32_t mine, uint32_t theirs);

} // namespace weft::btl::tcp

#endif
