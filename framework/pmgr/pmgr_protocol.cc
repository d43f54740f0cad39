#include "pmgr_protocol.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstring>

namespace weft::pmgr {

const char *opcode_name(int op)
{
    switch (op) {
    case op_open: return "PMGR_OPEN";
    case op_close: return "PMGR_CLOSE";
    case op_abort: return "PMGR_ABORT";
    case op_barrier: return "PMGR_BARRIER";
    case op_bcast: return "PMGR_BCAST";
    case op_gather: return "PMGR_GATHER";
    case op_scatter: return "PMGR_SCATTER";
    case op_allgather: return "PMGR_ALLGATHER";
    case op_alltoall: return "PMGR_ALLTOALL";
    default: return "unknown opcode";
    }
}

TreePosition tree_position(int rank, int nprocs)
{
    // Halve [low, high] until it is one rank; the rank at `low` adopts the
    // first rank of the upper half, whose subtree is that half.
    TreePosition t;
    int low = 0, high = nprocs - 1;
    while (high > low) {
        int mid = low + (high - low + 1) / 2;
        if (low == rank) {
            t.children.push_back(mid);
            t.child_incl.push_back(high - mid + 1);
        }
        if (mid == rank)
            t.parent = low;
        if (mid <= rank)
            low = mid;
        else
            high = mid - 1;
    }
    return t;
}

// The user owning the other end of an accepted IPv4 connection, when that end is a socket of
// this host's network namespace (its entry in /proc/net/tcp: local address = the peer's,
// remote = ours); -1 when it is not (another host, another namespace) or cannot be told.
long peer_uid(int fd)
{
    sockaddr_in peer{}, self{};
    socklen_t pl = sizeof peer, sl = sizeof self;
    if (getpeername(fd, reinterpret_cast<sockaddr *>(&peer), &pl) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr *>(&self), &sl) != 0 ||
        peer.sin_family != AF_INET || self.sin_family != AF_INET)
        return -1;
    // /proc/net/tcp writes an address as the hexadecimal of its 32-bit value as stored (network
    // order read as a host integer) and the port in host order.
    char want_local[32], want_remote[32];
    std::snprintf(want_local, sizeof want_local, "%08X:%04X", unsigned(peer.sin_addr.s_addr),
                  unsigned(ntohs(peer.sin_port)));
    std::snprintf(want_remote, sizeof want_remote, "%08X:%04X", unsigned(self.sin_addr.s_addr),
                  unsigned(ntohs(self.sin_port)));
    FILE *f = std::fopen("/proc/net/tcp", "re");
    if (!f)
        return -1;
    char line[512];
    long uid = -1;
    while (std::fgets(line, sizeof line, f)) {
        char local[64], remote[64];
        unsigned st = 0;
        long u = -1;
        if (std::sscanf(line, " %*[0-9]: %63s %63s %x %*s %*s %*s %ld", local, remote, &st, &u) ==
                4 &&
            std::strcmp(local, want_local) == 0 && std::strcmp(remote, want_remote) == 0) {
            uid = u;
            break;
        }
    }
    std::fclose(f);
    return uid;
}

} // namespace weft::pmgr
