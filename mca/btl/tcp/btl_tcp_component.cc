// btl/tcp: active messages over TCP sockets, one module (one rail) per IPv4 interface.
//
// The component: its parameters, query (is there an interface to use?), init (a listening
// socket per interface, the addresses into the modex) and progress (one epoll_wait over every
// socket of every module, cheap when nothing happens). README.md describes the wire format.
#include "btl_tcp.h"
#include "btl_tcp_endpoint.h"
#include "btl_tcp_if.h"
#include "btl_tcp_module.h"

#include <weft/runtime.h>

#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace weft::btl::tcp {

Params params;
Component *component = nullptr;

namespace {

void emit(const char *prefix, const char *fmt, va_list ap)
{
    char text[1024];
    std::vsnprintf(text, sizeof text, fmt, ap);
    // One write per line, so that the lines of several processes do not interleave.
    std::fprintf(stderr, "%s%s\n", prefix, text);
}

} // namespace

void warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("weft: warning: btl/tcp: ", fmt, ap);
    va_end(ap);
}

void debug(int level, const char *fmt, ...)
{
    if (params.verbose < level)
        return;
    va_list ap;
    va_start(ap, fmt);
    emit("weft: btl/tcp: ", fmt, ap);
    va_end(ap);
}

std::string fmt(const char *format, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, format);
    std::vsnprintf(buf, sizeof buf, format, ap);
    va_end(ap);
    return buf;
}

uint64_t now_ms()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return uint64_t(ts.tv_sec) * 1000 + uint64_t(ts.tv_nsec) / 1000000;
}

void reap_zombies()
{
    for (Conn *c : component->zombies)
        delete c;
    component->zombies.clear();
}

namespace {

int run_failures()
{
    int n = 0;
    while (!component->failing.empty()) {
        Endpoint *ep = component->failing.front();
        component->failing.erase(component->failing.begin());
        n += ep_run_failure(ep);
    }
    return n;
}

void accept_all(Module *m)
{
    for (int i = 0; i < 16; ++i) {
        sockaddr_in from{};
        socklen_t len = sizeof from;
        const int fd = accept4(m->listen_fd, reinterpret_cast<sockaddr *>(&from), &len,
                               SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                debug(1, "%s: accept: %s", m->name().c_str(), std::strerror(errno));
            return;
        }
        conn_accepted(m, fd, ntohl(from.sin_addr.s_addr),
                      ipv4_string(ntohl(from.sin_addr.s_addr)) + ":" +
                          std::to_string(ntohs(from.sin_port)));
    }
}

} // namespace

int progress()
{
    Component *cp = component;
    // Not re-entered from a callback: the receive buffer being delivered must stay put.
    if (!cp || cp->in_progress)
        return 0;
    // Only listening (no connection, nothing pending: a job whose peers are all reached by
    // another BTL): a peer that connects waits in the kernel's backlog, so the listeners are
    // polled at most once a millisecond (the clock read once per kIdlePollEvery calls)
    // instead of a system call on every call, which made an 8-byte alltoall over sm 2.5x
    // slower with tcp loaded than without; once per 256 calls still cost an 8-byte ping-pong
    // over sm 6% (35,000 epoll_wait calls a second in each rank).
    constexpr uint32_t kIdlePollEvery = 256;
    constexpr uint64_t kIdlePollNs = 1000000;
    if (!cp->has_work) {
        if (++cp->idle_calls % kIdlePollEvery != 0)
            return 0;
        timespec ts{};
        clock_gettime(CLOCK_MONOTONIC, &ts);
        const uint64_t now = uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
        if (now - cp->idle_polled_ns < kIdlePollNs)
            return 0;
        cp->idle_polled_ns = now;
    }
    cp->in_progress = true;
    flush_writes();
    flush_acks();
    int n = run_failures();
    epoll_event evs[64];
    const int k = epoll_wait(cp->epfd, evs, 64, 0);
    for (int i = 0; i < k; ++i) {
        auto *p = static_cast<Pollable *>(evs[i].data.ptr);
        if (p->kind == Pollable::Kind::listener)
            accept_all(static_cast<Listener *>(p)->module);
        else
            n += conn_event(static_cast<Conn *>(p), evs[i].events);
    }
    n += check_kernel_acks();
    n += check_timers();
    n += run_failures();
    reap_zombies();
    cp->has_work = !(cp->conns.empty() && cp->handshaking.empty() && cp->parked.empty() &&
                     cp->waiting.empty() && cp->failing.empty() && cp->zombies.empty() &&
                     cp->write_due.empty() && cp->ack_due.empty() && cp->acking.empty());
    cp->in_progress = false;
    return n;
}

namespace {

enum {
    P_IF_INCLUDE,
    P_IF_EXCLUDE,
    P_EAGER_LIMIT,
    P_RNDV_EAGER_LIMIT,
    P_MAX_SEND_SIZE,
    P_EXCLUSIVITY,
    P_LATENCY,
    P_BANDWIDTH,
    P_USER_TIMEOUT,
    P_KEEPALIVE,
    P_KEEPALIVE_TIME,
    P_KEEPALIVE_INTVL,
    P_KEEPALIVE_PROBES,
    P_CONNECT_TIMEOUT,
    P_LINGER,
    P_SNDBUF,
    P_RCVBUF,
    P_FREE_LIST_MAX,
    P_VERBOSE,
    P_RDMA,
    P_LOCAL_CONGESTION,
    P_COUNT
};
weft_mca_param_t *handle[P_COUNT];
// btl_tcp_flags and the RDMA pipeline's limits (btl/base), for btl_tcp_rdma.
weft_btl_rdma_params_t rdma_params;

weft_mca_param_def_t def(const char *name, weft_mca_param_type_t type, const char *value, int level,
                         const char *help, weft_mca_param_scope_t scope = WEFT_MCA_SCOPE_LOCAL)
{
    return {.name = name,
            .type = type,
            .default_value = value,
            .help = help,
            .level = level,
            .scope = scope,
            .enum_values = nullptr,
            .synonyms = nullptr,
            .range = nullptr};
}

weft_status_t register_params()
{
    const weft_mca_param_def_t defs[P_COUNT] = {
        def("if_include", WEFT_MCA_PARAM_LIST, "", 2,
            "Interfaces to use, by name (eth0) or by IPv4 network (10.1.0.0/16); empty means "
            "every IPv4 interface that is up and running, loopback included. Each interface "
            "becomes one module, that is one rail. Cannot be combined with "
            "btl_tcp_if_exclude."),
        def("if_exclude", WEFT_MCA_PARAM_LIST, "", 2,
            "Interfaces never to use, by name (docker0) or by IPv4 network (172.17.0.0/16). "
            "Cannot be combined with btl_tcp_if_include. Loopback interfaces, when used, only "
            "ever connect processes of the same host."),
        def("eager_limit", WEFT_MCA_PARAM_SIZE, "128k", 4,
            "Largest message, PML header included, that the PML sends eagerly over tcp (in one "
            "fragment, without a rendezvous). At most btl_tcp_max_send_size. (MPICH's ch3 "
            "default too; at 64k, a 64 KiB message took a rendezvous: 1.5x the latency and "
            "0.78 of the bandwidth on a Xeon VM.)"),
        def("rndv_eager_limit", WEFT_MCA_PARAM_SIZE, "64k", 5,
            "Bytes, PML header included, that the first fragment of a rendezvous message "
            "carries over tcp. At most btl_tcp_max_send_size."),
        def("max_send_size", WEFT_MCA_PARAM_SIZE, "1m", 4,
            "Largest fragment, PML header included, sent over tcp (the pipeline's FRAGs; "
            "contiguous data is sent from the user's buffer, so large fragments cost no "
            "buffer; packed ones take at most 64 MiB of buffers per module). A received frame "
            "longer than this is malformed and closes its connection, and connections between "
            "processes that disagree are refused, so every rank must use the same value.",
            WEFT_MCA_SCOPE_ALL_EQUAL),
        def("exclusivity", WEFT_MCA_PARAM_INT, "100", 5,
            "Exclusivity of the tcp modules: for each peer only the modules of the highest "
            "exclusivity that reach it are used, so that self and sm (higher) take precedence "
            "over tcp where they reach."),
        def("latency", WEFT_MCA_PARAM_INT, "100", 5,
            "Latency of a tcp module in microseconds, which orders a peer's eager rails."),
        def("bandwidth", WEFT_MCA_PARAM_INT, "10000", 5,
            "Bandwidth of a tcp module in Mbit/s, which weights the striping of large messages "
            "over a peer's rails."),
        def("user_timeout", WEFT_MCA_PARAM_INT, "30000", 3,
            "TCP_USER_TIMEOUT in milliseconds: how long sent data may stay unacknowledged by "
            "the peer's host before the connection counts as broken and the PML is told; it "
            "also bounds the keepalive probes. 0 keeps the system default (about 15 minutes of "
            "retransmissions)."),
        def("keepalive", WEFT_MCA_PARAM_BOOL, "true", 4,
            "Send TCP keepalive probes on idle connections (SO_KEEPALIVE), so that a peer host "
            "that vanished is noticed even when nothing is being sent to it."),
        def("keepalive_time", WEFT_MCA_PARAM_INT, "10", 4,
            "Seconds a connection stays idle before the first keepalive probe (TCP_KEEPIDLE); 0 "
            "keeps the system default (2 hours)."),
        def("keepalive_intvl", WEFT_MCA_PARAM_INT, "2", 4,
            "Seconds between keepalive probes (TCP_KEEPINTVL); 0 keeps the system default."),
        def("keepalive_probes", WEFT_MCA_PARAM_INT, "5", 4,
            "Unanswered keepalive probes after which the connection counts as broken "
            "(TCP_KEEPCNT); 0 keeps the system default."),
        def("connect_timeout", WEFT_MCA_PARAM_INT, "30000", 4,
            "Milliseconds a connection may take to open (the TCP connect, or the peer's own "
            "connection after both connected at once) before the peer is reported unreachable; "
            "also how long an accepted connection may stay silent before its handshake. 0 "
            "waits forever."),
        def("linger", WEFT_MCA_PARAM_INT, "1000", 6,
            "Milliseconds that finalize and del_procs wait at most for the goodbye to each peer "
            "to leave and for the peer to close its side. Fragments the peer has not "
            "acknowledged by then complete in error."),
        def("sndbuf", WEFT_MCA_PARAM_SIZE, "2m", 5,
            "Socket send buffer size (SO_SNDBUF), at most the kernel's net.core.wmem_max; 0 "
            "keeps the system default and its auto-tuning. Left at its default: twice "
            "btl_tcp_max_send_size, a window that holds two of the largest fragments (with "
            "the system's auto-tuning a 1 MiB ping-pong took 204 us against 142 on a Xeon "
            "VM)."),
        def("rcvbuf", WEFT_MCA_PARAM_SIZE, "2m", 5,
            "Socket receive buffer size (SO_RCVBUF), at most the kernel's net.core.rmem_max; "
            "0 keeps the system default and its auto-tuning. Left at its default: twice "
            "btl_tcp_max_send_size, as btl_tcp_sndbuf."),
        def("free_list_max", WEFT_MCA_PARAM_INT, "1024", 6,
            "Most fragments of each buffer size (btl_tcp_eager_limit and "
            "btl_tcp_max_send_size bytes) that a module makes; a fragment stays in use until "
            "the peer acknowledges it, and btl_alloc reports out-of-resource beyond this until "
            "some complete. 1 to 16383: so that fewer than 2^15 fragments wait for one peer, the "
            "window of the PML's sequence numbers."),
        def("verbose", WEFT_MCA_PARAM_INT, "0", 9,
            "Messages of btl/tcp on stderr: 1 connections and failures, 2 also endpoints, "
            "handshakes and socket details."),
        def("rdma", WEFT_MCA_PARAM_BOOL, "false", 5,
            "Offer put and get (the PML's RDMA protocols: RGET, PUT and FIN) over tcp, carried "
            "as frames on the connection and checked against this process's registrations. "
            "Off by default: over a byte stream they move the same bytes as the send pipeline "
            "does; they are there so that the RDMA protocols, and pml/bfo's recovery of "
            "them, run over tcp rails. Every rank must use the same value.",
            WEFT_MCA_SCOPE_ALL_EQUAL),
        def("local_congestion", WEFT_MCA_PARAM_STRING, "reno", 5,
            "TCP congestion control (TCP_CONGESTION) of the connections that stay inside this "
            "host: both ends at one address, or the peer's in 127.0.0.0/8. Their bytes never "
            "meet a network to share, and the system's algorithm may cost them throughput: "
            "with bbr a 4 MiB stream over loopback moved 5,950 MB/s, with reno 8,270 (Xeon "
            "VM). Empty keeps the system's default. A value that is not such a name (at most "
            "15 of a-z, 0-9 and _) is refused at start-up; a name the kernel does not offer "
            "or allow is warned about once and the system's default kept. Connections to other "
            "hosts always keep the system's."),
    };
    if (weft_status_t rc =
            weft_mca_param_register_table("btl", "tcp", defs, P_COUNT, sizeof defs[0], handle);
        rc != WEFT_SUCCESS)
        return rc;
    // As sm's: by default every rendezvous size by a direct put or get, never the RDMA
    // pipeline (a put or get is one frame of at most btl_tcp_max_send_size).
    return weft_btl_rdma_params_register("tcp", "64k", "1m", "1t", &rdma_params);
}

std::vector<std::string> list_of(const weft_mca_param_t *p)
{
    std::vector<std::string> out;
    for (size_t i = 0; i < weft_mca_param_list_count(p); ++i)
        out.emplace_back(weft_mca_param_list_item(p, i));
    return out;
}

// Read and check every parameter into `params`; false with the reason.
bool read_params(std::string &why)
{
    Params p;
    p.if_include = list_of(handle[P_IF_INCLUDE]);
    p.if_exclude = list_of(handle[P_IF_EXCLUDE]);
    p.eager_limit = size_t(weft_mca_param_size(handle[P_EAGER_LIMIT]));
    p.rndv_eager_limit = size_t(weft_mca_param_size(handle[P_RNDV_EAGER_LIMIT]));
    p.max_send_size = size_t(weft_mca_param_size(handle[P_MAX_SEND_SIZE]));
    p.keepalive = weft_mca_param_bool(handle[P_KEEPALIVE]) != 0;
    p.rdma = weft_mca_param_bool(handle[P_RDMA]) != 0;
    p.sndbuf = size_t(weft_mca_param_size(handle[P_SNDBUF]));
    p.rcvbuf = size_t(weft_mca_param_size(handle[P_RCVBUF]));
    const char *cc = weft_mca_param_string(handle[P_LOCAL_CONGESTION]);
    p.local_congestion = cc ? cc : "";
    // Left at their default, the buffers follow the largest fragment (the help says why).
    const size_t window = p.max_send_size <= size_t(INT_MAX) / 2 ? 2 * p.max_send_size : INT_MAX;
    if (weft_mca_param_source(handle[P_SNDBUF]) == WEFT_MCA_SOURCE_DEFAULT)
        p.sndbuf = window;
    if (weft_mca_param_source(handle[P_RCVBUF]) == WEFT_MCA_SOURCE_DEFAULT)
        p.rcvbuf = window;

    struct IntParam {
        int index;
        int64_t max;
        int64_t *out;
        int64_t min = 0;
    };
    int64_t exclusivity = 0, latency = 0, bandwidth = 0, free_list_max = 0;
    const IntParam ints[] = {
        {P_EXCLUSIVITY, UINT32_MAX, &exclusivity},
        {P_LATENCY, UINT32_MAX, &latency},
        {P_BANDWIDTH, UINT32_MAX, &bandwidth},
        {P_USER_TIMEOUT, INT_MAX, &p.user_timeout_ms},
        {P_KEEPALIVE_TIME, INT_MAX, &p.keepalive_time_s},
        {P_KEEPALIVE_INTVL, INT_MAX, &p.keepalive_intvl_s},
        {P_KEEPALIVE_PROBES, INT_MAX, &p.keepalive_probes},
        {P_CONNECT_TIMEOUT, INT64_MAX / 2, &p.connect_timeout_ms},
        {P_LINGER, INT_MAX, &p.linger_ms},
        {P_FREE_LIST_MAX, 16383, &free_list_max, 1},
        {P_VERBOSE, INT_MAX, &p.verbose},
    };
    static const char *const names[P_COUNT] = {
        "if_include",       "if_exclude",      "eager_limit",    "rndv_eager_limit",
        "max_send_size",    "exclusivity",     "latency",        "bandwidth",
        "user_timeout",     "keepalive",       "keepalive_time", "keepalive_intvl",
        "keepalive_probes", "connect_timeout", "linger",         "sndbuf",
        "rcvbuf",           "free_list_max",   "verbose",        "rdma",
        "local_congestion"};
    for (const IntParam &ip : ints) {
        const int64_t v = weft_mca_param_int(handle[ip.index]);
        if (v < ip.min || v > ip.max) {
            why = "btl_tcp_" + std::string(names[ip.index]) + " is " + std::to_string(v) +
                  "; it must be between " + std::to_string(ip.min) + " and " +
                  std::to_string(ip.max);
            return false;
        }
        *ip.out = v;
    }
    p.exclusivity = uint32_t(exclusivity);
    p.latency = uint32_t(latency);
    p.bandwidth = uint32_t(bandwidth);
    p.free_list_max = size_t(free_list_max);

    if (p.max_send_size == 0 || p.max_send_size > (size_t(1) << 30)) {
        why = "btl_tcp_max_send_size is " + std::to_string(p.max_send_size) +
              "; it must be between 1 and 1G";
        return false;
    }
    if (p.eager_limit == 0 || p.eager_limit > p.max_send_size ||
        p.rndv_eager_limit > p.max_send_size) {
        why = "btl_tcp_eager_limit (" + std::to_string(p.eager_limit) +
              ") and btl_tcp_rndv_eager_limit (" + std::to_string(p.rndv_eager_limit) +
              ") must be at least 1 and at most btl_tcp_max_send_size (" +
              std::to_string(p.max_send_size) + ")";
        return false;
    }
    // A name as the kernel spells its algorithms (TCP_CA_NAME_MAX is 16, the NUL included).
    if (p.local_congestion.size() > 15 ||
        p.local_congestion.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") !=
            std::string::npos) {
        why = "btl_tcp_local_congestion is \"" + p.local_congestion +
              "\"; it must be empty or the name of a TCP congestion control algorithm (at most "
              "15 of a-z, 0-9, _), as in net.ipv4.tcp_available_congestion_control";
        return false;
    }
    if (p.sndbuf > INT_MAX || p.rcvbuf > INT_MAX) {
        why = "btl_tcp_sndbuf and btl_tcp_rcvbuf must be below 2G";
        return false;
    }
    params = p;
    return true;
}

weft_status_t query(int *priority, char *why, size_t why_len)
{
    std::string reason;
    if (!read_params(reason)) {
        std::snprintf(why, why_len, "%s", reason.c_str());
        return WEFT_ERR_BAD_PARAM;
    }
    if (weft_status_t rc = weft_btl_rdma_params_check("tcp", &rdma_params, why, why_len);
        rc != WEFT_SUCCESS)
        return rc;
    std::vector<Address> ifs;
    if (!find_interfaces(params.if_include, params.if_exclude, ifs, reason)) {
        std::snprintf(why, why_len, "%s", reason.c_str());
        return WEFT_ERR_BAD_PARAM;
    }
    if (ifs.empty()) {
        std::snprintf(why, why_len, "no IPv4 interface is up and running%s",
                      params.if_include.empty() && params.if_exclude.empty()
                          ? ""
                          : " and allowed by btl_tcp_if_include/btl_tcp_if_exclude");
        return WEFT_ERR_NOT_AVAILABLE;
    }
    *priority = 10;
    return WEFT_SUCCESS;
}

uint64_t hash_job(const char *s)
{
    uint64_t h = 1469598103934665603ull; // FNV-1a
    for (; s && *s; ++s)
        h = (h ^ uint8_t(*s)) * 1099511628211ull;
    return h;
}

void discard_component()
{
    for (Module *m : component->modules)
        delete m;
    if (component->epfd >= 0)
        close(component->epfd);
    delete component;
    component = nullptr;
}

weft_btl_module_t **init(int *num_modules, int, int)
{
    *num_modules = 0;
    if (component)
        return nullptr; // init is called once
    std::string error;
    if (params.max_send_size == 0 && !read_params(error)) { // init without query
        warn("%s", error.c_str());
        return nullptr;
    }
    std::vector<Address> ifs;
    if (!find_interfaces(params.if_include, params.if_exclude, ifs, error)) {
        warn("%s", error.c_str());
        return nullptr;
    }
    component = new Component;
    component->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (component->epfd < 0) {
        warn("epoll_create1: %s; tcp is not used", std::strerror(errno));
        discard_component();
        return nullptr;
    }
    component->my_rank = weft_runtime_world_rank();
    component->world_size = weft_runtime_world_size();
    component->job = hash_job(weft_runtime_jobid());

    for (const Address &a : ifs) {
        Module *m = module_create(int(component->modules.size()), a, error);
        if (!m) {
            warn("%s: %s; this interface is not used", a.name.c_str(), error.c_str());
            continue;
        }
        // Without btl_tcp_rdma only checked (on a copy): tcp's limits stay as they were.
        char why[512];
        weft_btl_module_t probe = *m->base();
        if (weft_btl_rdma_params_apply("tcp", &rdma_params, params.rdma ? m->base() : &probe, why,
                                       sizeof why) != WEFT_SUCCESS) {
            // Only btl_tcp_flags can fail here (put or get without btl_tcp_rdma): leaving tcp
            // out would quietly move the job elsewhere, or nowhere.
            delete m;
            discard_component();
            weft_runtime_abort(1, (std::string("btl/tcp: ") + why +
                                   (params.rdma ? "" : "; btl_tcp_rdma 1 offers put and get"))
                                      .c_str());
        }
        component->modules.push_back(m);
        component->addresses.push_back(m->self);
        debug(1, "module %d: %s", m->index, m->name().c_str());
    }
    if (component->modules.empty()) {
        discard_component();
        return nullptr;
    }
    const std::vector<unsigned char> blob = encode_addresses(component->addresses);
    if (weft_status_t rc = weft_modex_send("btl.tcp", blob.data(), blob.size());
        rc != WEFT_SUCCESS) {
        warn("cannot publish the addresses: %s; tcp is not used", weft_status_string(rc));
        discard_component();
        return nullptr;
    }
    // The runtime may also drive the descriptor's progress field; registering the same
    // function twice is then refused, which is fine.
    component->progress_registered = weft_progress_register(progress) == WEFT_SUCCESS;

    const size_t n = component->modules.size();
    auto **array = static_cast<weft_btl_module_t **>(std::malloc(n * sizeof(weft_btl_module_t *)));
    if (!array) {
        if (component->progress_registered)
            weft_progress_unregister(progress);
        discard_component();
        return nullptr;
    }
    for (size_t i = 0; i < n; ++i)
        array[i] = component->modules[i]->base();
    *num_modules = int(n);
    return array;
}

weft_status_t close_component()
{
    // Normally every module has been finalized (and the state freed with the last one).
    while (component && !component->modules.empty()) {
        weft_btl_module_t *b = component->modules.front()->base();
        b->btl_finalize(b);
    }
    return WEFT_SUCCESS;
}

} // namespace

} // namespace weft::btl::tcp

extern "C" {
const weft_btl_component_t mca_btl_tcp_component = {
    .mca = {WEFT_MCA_COMPONENT_HEADER(weft_btl_component_t, "btl", WEFT_BTL_ABI_MAJOR,
                                      WEFT_BTL_ABI_MINOR, "tcp", 0, 1, 0),
            .register_params = weft::btl::tcp::register_params, .open = nullptr,
            .query = weft::btl::tcp::query, .close = weft::btl::tcp::close_component},
    .init = weft::btl::tcp::init,
    .progress = weft::btl::tcp::progress,
};
}
