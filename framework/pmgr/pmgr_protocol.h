// What both ends of PMGR_COLLECTIVE protocol 8 agree on (see
// docs/protocols/pmgr-collective-wire.md): opcodes, tree packet headers, the
// tree's shape, and Weft's event-channel extension.
#ifndef WEFT_PMGR_PROTOCOL_H
#define WEFT_PMGR_PROTOCOL_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace weft::pmgr {

constexpr int version = 8;

enum Opcode : int {
    op_open = 0,
    op_close = 1,
    op_abort = 2,
    op_barrier = 3,
    op_bcast = 4,
    op_gather = 5,
    op_scatter = 6,
    op_allgather = 7,
    op_alltoall = 8,
};
const char *opcode_name(int op);

// Tree packet headers.
constexpr int tree_abort = 0;
constexpr int tree_data = 1;

// One socket-table entry: IPv4 address then port, both network order.
constexpr int table_entry_size = 6;

// Weft's extension: a connection that starts with this int (instead of the
// protocol version) is a rank's job-event channel; then comes the rank.
// mpirun answers with event_nonce_size random bytes, and the rank proves that
// it holds the job's secret (docs/security.md) with the HMAC-SHA-256, keyed
// with the secret, of event_mac_label, the nonce and the rank (int, host
// order): event_mac_size bytes. Then mpirun writes Event records on it; the
// rank writes event_finalized once, and with the failure detector on
// (WEFT_PMGR_HEARTBEAT_MS in its environment) event_heartbeat every that many
// milliseconds. A claim without the proof is closed.
constexpr int event_magic = 0x57454654; // "WEFT"
constexpr int event_finalized = 1;
constexpr int event_heartbeat = 2;
constexpr size_t event_nonce_size = 16;
constexpr size_t event_mac_size = 32;
constexpr char event_mac_label[] = "weft-event-channel";
// What the proof covers: the label, the nonce mpirun sent, the rank claimed.
inline std::string event_mac_input(const unsigned char *nonce, int rank)
{
    std::string in(event_mac_label, sizeof event_mac_label - 1);
    in.append(reinterpret_cast<const char *>(nonce), event_nonce_size);
    char r[sizeof rank];
    std::memcpy(r, &rank, sizeof rank);
    in.append(r, sizeof r);
    return in;
}
struct Event {
    int32_t kind; // weft_boot_event_kind_t
    int32_t rank;
    int32_t exit_code;
    int32_t signal;
};

struct TreePosition {
    int parent = -1;             // -1 at rank 0
    std::vector<int> children;   // in the order the parent serves them
    std::vector<int> child_incl; // ranks in each child's subtree
};

// The user owning the other end of an accepted IPv4 connection when that end is a socket of
// this host's network namespace (/proc/net/tcp); -1 when it is not or cannot be told. mpirun
// and a rank accepting its tree parent take connections from this host only from their own
// user (docs/security.md).
long peer_uid(int fd);

// The binomial tree by recursive halving rooted at rank 0.
TreePosition tree_position(int rank, int nprocs);

} // namespace weft::pmgr

#endif
