// btl/tcp: what every file of the component shares: the parameter values and the messages.
//
// Everything in this component but the descriptor mca_btl_tcp_component is internal: it is
// compiled with hidden visibility and linked with a list that exports only the descriptor.
#ifndef WEFT_BTL_TCP_H
#define WEFT_BTL_TCP_H

#include <btl/btl.h>
#include <weft/mca.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

// The one exported symbol (btl_tcp_component.cc).
extern "C" __attribute__((visibility("default"))) const weft_btl_component_t mca_btl_tcp_component;

namespace weft::btl::tcp {

// Parameter values, read from the registry by query() and constant afterwards. The defaults,
// help texts and levels live in the table in btl_tcp_component.cc, nowhere else.
struct Params {
    std::vector<std::string> if_include;
    std::vector<std::string> if_exclude;
    size_t eager_limit = 0;
    size_t rndv_eager_limit = 0;
    size_t max_send_size = 0;
    uint32_t exclusivity = 0;
    uint32_t latency = 0;
    uint32_t bandwidth = 0;
    int64_t user_timeout_ms = 0;
    bool keepalive = false;
    int64_t keepalive_time_s = 0;
    int64_t keepalive_intvl_s = 0;
    int64_t keepalive_probes = 0;
    int64_t connect_timeout_ms = 0;
    int64_t linger_ms = 0;
    size_t sndbuf = 0;
    size_t rcvbuf = 0;
    std::string local_congestion; // empty: the system's
    size_t free_list_max = 0;
    int64_t verbose = 0;
    bool rdma = false;
};
extern Params params;

// "weft: warning: btl/tcp: <text>" on stderr: something a user should see (a stranger
// knocking on a port, an interface that cannot be used).
void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
// "weft: btl/tcp: <text>" on stderr when btl_tcp_verbose >= level.
void debug(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// printf into a std::string (up to 511 characters), for messages.
std::string fmt(const char *format, ...) __attribute__((format(printf, 1, 2)));

// Milliseconds on a monotonic clock, cheap enough to read in every progress call.
uint64_t now_ms();

} // namespace weft::btl::tcp

#endif
