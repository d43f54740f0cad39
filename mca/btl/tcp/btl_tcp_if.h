// btl/tcp interfaces: which IPv4 interfaces become modules, how they are published in the
// modex, and which of a peer's interfaces each of mine talks to.
#ifndef WEFT_BTL_TCP_IF_H
#define WEFT_BTL_TCP_IF_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace weft::btl::tcp {

// One interface of one process: a module here, an entry of the modex list for the peers.
struct Address {
    std::string name;  // interface name, e.g. eth0
    uint32_t addr = 0; // IPv4 address, host byte order
    uint32_t mask = 0; // netmask, host byte order
    uint16_t port = 0; // the module's listening port
    bool loopback = false;
};

std::string ipv4_string(uint32_t addr);

// The IPv4 interfaces that are up and running, in getifaddrs order (first address of each),
// filtered by include or exclude (interface names, or networks written a.b.c.d/n). Returns
// false with a one-line reason when both lists are set, an item does not parse, or the system
// cannot list its interfaces.
bool find_interfaces(const std::vector<std::string> &include,
                     const std::vector<std::string> &exclude, std::vector<Address> &out,
                     std::string &error);

// The modex blob for a module list, and back. decode returns false for a blob that is not one.
std::vector<unsigned char> encode_addresses(const std::vector<Address> &list);
bool decode_addresses(const void *data, size_t len, std::vector<Address> &out);

// Pair my modules with a peer's, one to one, so that both processes compute the same pairs
// from the same two lists: result[i] is the index in `theirs` that my module i talks to, or -1.
// Loopback interfaces pair only with each other and only when the peer is on this host;
// other interfaces pair within a shared subnet, and, when the two processes share no subnet at
// all, in address order (routed networks). Away from this host an address that both processes
// hold (docker0's default, say) is never used: it cannot lead to the other host.
std::vector<int> pair_addresses(const std::vector<Address> &mine,
                                const std::vector<Address> &theirs, bool peer_is_local,
                                bool i_am_lower_rank);

} // namespace weft::btl::tcp

#endif
