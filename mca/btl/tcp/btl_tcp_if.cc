// btl/tcp interfaces: discovery with getifaddrs, include/exclude filters, the modex list and
// the pairing of two processes' interfaces.
#include "btl_tcp_if.h"
#include "btl_tcp_wire.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <tuple>

namespace weft::btl::tcp {

std::string ipv4_string(uint32_t addr)
{
    in_addr a{};
    a.s_addr = htonl(addr);
    char buf[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &a, buf, sizeof buf);
    return buf;
}

namespace {

struct Filter {
    std::string name; // interface name, or empty for a network
    uint32_t net = 0;
    uint32_t mask = 0;
};

bool parse_filters(const std::vector<std::string> &items, const char *param,
                   std::vector<Filter> &out, std::string &error)
{
    for (const std::string &item : items) {
        const size_t slash = item.find('/');
        if (slash == std::string::npos) {
            out.push_back({item, 0, 0});
            continue;
        }
        const std::string ip = item.substr(0, slash), bits = item.substr(slash + 1);
        in_addr a{};
        char *end = nullptr;
        errno = 0;
        const long n = std::strtol(bits.c_str(), &end, 10);
        if (inet_pton(AF_INET, ip.c_str(), &a) != 1 || bits.empty() || *end != '\0' || errno != 0 ||
            n < 0 || n > 32) {
            error = std::string(param) + ": '" + item +
                    "' is neither an interface name nor an IPv4 network a.b.c.d/n";
            return false;
        }
        const uint32_t mask = n == 0 ? 0 : ~uint32_t(0) << (32 - n);
        out.push_back({"", ntohl(a.s_addr) & mask, mask});
    }
    return true;
}

bool matches(const std::vector<Filter> &filters, const Address &a)
{
    for (const Filter &f : filters) {
        if (f.name.empty() ? (a.addr & f.mask) == f.net : f.name == a.name)
            return true;
    }
    return false;
}

// Both addresses lie in the other's subnet: true for both processes or for neither.
bool same_subnet(const Address &a, const Address &b)
{
    return ((a.addr ^ b.addr) & a.mask) == 0 && ((a.addr ^ b.addr) & b.mask) == 0;
}

auto key(const Address &a) { return std::tie(a.addr, a.name); }

} // namespace

bool find_interfaces(const std::vector<std::string> &include,
                     const std::vector<std::string> &exclude, std::vector<Address> &out,
                     std::string &error)
{
    if (!include.empty() && !exclude.empty()) {
        error = "btl_tcp_if_include and btl_tcp_if_exclude are both set; use one of them";
        return false;
    }
    std::vector<Filter> inc, exc;
    if (!parse_filters(include, "btl_tcp_if_include", inc, error) ||
        !parse_filters(exclude, "btl_tcp_if_exclude", exc, error))
        return false;

    ifaddrs *list = nullptr;
    if (getifaddrs(&list) != 0) {
        error = std::string("cannot list the network interfaces: ") + std::strerror(errno);
        return false;
    }
    for (const ifaddrs *ifa = list; ifa; ifa = ifa->ifa_next) {
        if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != AF_INET || !ifa->ifa_name)
            continue;
        // RUNNING too: a bridge with nothing plugged in (docker0, virbr0) is UP but leads
        // nowhere.
        if (!(ifa->ifa_flags & IFF_UP) || !(ifa->ifa_flags & IFF_RUNNING))
            continue;
        if (std::strlen(ifa->ifa_name) >= wire::kIfNameSize)
            continue;
        Address a;
        a.name = ifa->ifa_name;
        a.addr = ntohl(reinterpret_cast<const sockaddr_in *>(ifa->ifa_addr)->sin_addr.s_addr);
        a.mask =
            ifa->ifa_netmask
                ? ntohl(reinterpret_cast<const sockaddr_in *>(ifa->ifa_netmask)->sin_addr.s_addr)
                : ~uint32_t(0);
        a.loopback = (ifa->ifa_flags & IFF_LOOPBACK) != 0;
        if (std::any_of(out.begin(), out.end(), [&](const Address &o) { return o.name == a.name; }))
            continue; // one module per interface: its first address
        if (!inc.empty() && !matches(inc, a))
            continue;
        if (matches(exc, a))
            continue;
        out.push_back(a);
    }
    freeifaddrs(list);
    return true;
}

std::vector<unsigned char> encode_addresses(const std::vector<Address> &list)
{
    std::vector<unsigned char> blob(wire::kModexHeaderSize + list.size() * wire::kModexEntrySize);
    unsigned char *p = blob.data();
    wire::put32(p, wire::kModexMagic);
    wire::put16(p + 4, wire::kVersion);
    wire::put16(p + 6, uint16_t(list.size()));
    p += wire::kModexHeaderSize;
    for (const Address &a : list) {
        std::memcpy(p, a.name.c_str(), std::min(a.name.size(), wire::kIfNameSize - 1));
        wire::put32(p + 16, a.addr);
        wire::put32(p + 20, a.mask);
        wire::put16(p + 24, a.port);
        wire::put16(p + 26, a.loopback ? wire::kAddrLoopback : 0);
        p += wire::kModexEntrySize;
    }
    return blob;
}

bool decode_addresses(const void *data, size_t len, std::vector<Address> &out)
{
    const auto *p = static_cast<const unsigned char *>(data);
    if (!p || len < wire::kModexHeaderSize || wire::get32(p) != wire::kModexMagic ||
        wire::get16(p + 4) != wire::kVersion)
        return false;
    const size_t count = wire::get16(p + 6);
    if (len != wire::kModexHeaderSize + count * wire::kModexEntrySize)
        return false;
    p += wire::kModexHeaderSize;
    out.clear();
    for (size_t i = 0; i < count; ++i, p += wire::kModexEntrySize) {
        Address a;
        a.name.assign(reinterpret_cast<const char *>(p),
                      strnlen(reinterpret_cast<const char *>(p), wire::kIfNameSize));
        a.addr = wire::get32(p + 16);
        a.mask = wire::get32(p + 20);
        a.port = wire::get16(p + 24);
        a.loopback = (wire::get16(p + 26) & wire::kAddrLoopback) != 0;
        out.push_back(a);
    }
    return true;
}

std::vector<int> pair_addresses(const std::vector<Address> &mine,
                                const std::vector<Address> &theirs, bool peer_is_local,
                                bool i_am_lower_rank)
{
    std::vector<int> result(mine.size(), -1);

    if (peer_is_local) {
        auto m = std::find_if(mine.begin(), mine.end(), [](auto &a) { return a.loopback; });
        auto t = std::find_if(theirs.begin(), theirs.end(), [](auto &a) { return a.loopback; });
        if (m != mine.end() && t != theirs.end())
            result[size_t(m - mine.begin())] = int(t - theirs.begin());
    }

    auto held_by = [](const Address &a, const std::vector<Address> &other) {
        return std::any_of(other.begin(), other.end(),
                           [&](const Address &o) { return !o.loopback && o.addr == a.addr; });
    };
    std::vector<size_t> my_nl, their_nl;
    for (size_t i = 0; i < mine.size(); ++i)
        if (!mine[i].loopback && (peer_is_local || !held_by(mine[i], theirs)))
            my_nl.push_back(i);
    for (size_t j = 0; j < theirs.size(); ++j)
        if (!theirs[j].loopback && (peer_is_local || !held_by(theirs[j], mine)))
            their_nl.push_back(j);

    // Candidate pairs in an order that does not depend on which of the two processes computes
    // it: by the lower rank's address first. Taking them greedily gives both the same pairs.
    struct Candidate {
        size_t m, t;
    };
    std::vector<Candidate> cands;
    for (size_t m : my_nl)
        for (size_t t : their_nl)
            if (same_subnet(mine[m], theirs[t]))
                cands.push_back({m, t});
    auto lower = [&](const Candidate &c) -> const Address & {
        return i_am_lower_rank ? mine[c.m] : theirs[c.t];
    };
    auto higher = [&](const Candidate &c) -> const Address & {
        return i_am_lower_rank ? theirs[c.t] : mine[c.m];
    };
    std::sort(cands.begin(), cands.end(), [&](const Candidate &a, const Candidate &b) {
        return std::tuple_cat(key(lower(a)), key(higher(a))) <
               std::tuple_cat(key(lower(b)), key(higher(b)));
    });
    std::vector<bool> their_used(theirs.size());
    for (const Candidate &c : cands) {
        if (result[c.m] >= 0 || their_used[c.t])
            continue;
        result[c.m] = int(c.t);
        their_used[c.t] = true;
    }

    if (cands.empty()) {
        // No shared subnet: trust routing, pairing the two lists in address order.
        auto by_addr = [](const std::vector<Address> &l) {
            return [&l](size_t a, size_t b) { return key(l[a]) < key(l[b]); };
        };
        std::sort(my_nl.begin(), my_nl.end(), by_addr(mine));
        std::sort(their_nl.begin(), their_nl.end(), by_addr(theirs));
        for (size_t k = 0; k < std::min(my_nl.size(), their_nl.size()); ++k)
            result[my_nl[k]] = int(their_nl[k]);
    }
    return result;
}

} // namespace weft::btl::tcp
