// boot/pmgr's watchdog: a rank lives no longer than its mpirun.
//
// A thread blocked in poll() on duplicates of the rank's connections to mpirun (the PMGR
// socket and the event channel), asking for hang-ups (POLLRDHUP; POLLHUP and POLLERR come
// unasked) and, on the event channel, for data: it reads mpirun's event records as they come
// into a buffer that boot_poll_event takes them from (watchdog_take_events), so that a rank
// learns of an event at its next progress call for the cost of one atomic load, never a
// system call. The PMGR socket's data is never read here. TCP keepalive on the same sockets
// turns a host that vanished without a FIN into an error. When a connection is lost the watchdog
// prints one line and _exit()s the rank with exit_lost_mpirun, whatever the rank is doing
// (computing, blocked in MPI, in init or finalize). It costs the MPI paths nothing: they never see
// it.
#ifndef WEFT_BOOT_PMGR_WATCHDOG_H
#define WEFT_BOOT_PMGR_WATCHDOG_H

#include <string>

namespace weft::boot::pmgr_comp {

// The exit status of a rank whose mpirun is gone.
constexpr int exit_lost_mpirun = 1;

// Keepalive timing on the watched sockets: the first probe after keepalive_idle_s seconds of
// silence, then one every keepalive_interval_s, and keepalive_count unanswered ones end the
// connection. A vanished host is therefore noticed within idle + interval * count seconds.
constexpr int keepalive_idle_s = 2;
constexpr int keepalive_interval_s = 1;
constexpr int keepalive_count = 3;

// Start watching fd_a and fd_b (either may be -1; fd_b is the event channel). The descriptors
// stay the caller's: the watchdog works on duplicates. With heartbeat_ms > 0 it also writes
// event_heartbeat on the event channel every heartbeat_ms milliseconds (mpirun's failure
// detector: a thread of its own, so a rank that computes for long without MPI calls still
// beats; a stopped process, or one on a host that froze or is cut off, does not; nor does
// it catch a process whose main thread loops for ever). Returns false (with a message) if it cannot
// start; the rank then runs unwatched. Thread: init.
bool watchdog_start(int rank, int fd_a, int fd_b, int heartbeat_ms = 0);

// Stop watching, before the rank closes its connections on purpose (finalize), and join the
// thread. Idempotent. Thread: init.
void watchdog_stop();

// Whether the watchdog reads the event channel (it runs and was given one): then only
// watchdog_take_events may read it.
bool watchdog_reads_events();
// Append what the watchdog read from the event channel since the last call to `out`; false
// (nothing appended) when nothing new arrived. Cheap when nothing did. Thread: any.
bool watchdog_take_events(std::string &out);

// Make the watchdog ignore what it sees from now on, without joining it: for the abort path,
// whose own closing of the connection (and mpirun's answer to it) is no loss. Async-safe
// enough for any thread. Thread: any.
void watchdog_disarm();

} // namespace weft::boot::pmgr_comp

#endif
