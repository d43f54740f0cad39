// boot/pmgr: bootstrap through Weft's mpirun (or any PMGR_COLLECTIVE
// protocol-8 launcher) with the classic client, plus Weft's job-event channel
// when the launcher offers it (WEFT_MPIRUN_EVENTS=1).
#include "boot_pmgr_watchdog.h"
#include "pmgr_client.h"
#include "pmgr_collective_client.h"
#include "pmgr_protocol.h"

#include <boot/boot.h>
#include <weft/mca.h>
#include <weft/runtime.h>

#include <arpa/inet.h>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

namespace weft::boot::pmgr_comp {

namespace {

using weft::pmgr::Event;

struct State {
    int rank = 0;
    int size = 1;
    int event_fd = -1;
    std::string event_in;
} S;

bool send_int(int fd, int v) { return send(fd, &v, sizeof v, MSG_NOSIGNAL) == sizeof v; }

// The event channel's challenge: mpirun's nonce in, the HMAC of it with the job's secret out
// (pmgr_protocol.h). Bounded: mpirun answers at once, or has gone.
bool prove_secret(int fd)
{
    size_t len = 0;
    if (!weft_runtime_job_secret(&len) ||
        std::strcmp(weft_runtime_job_secret_source(), "launcher") != 0)
        return false; // the secret is mpirun's, handed in WEFT_JOB_SECRET
    unsigned char nonce[weft::pmgr::event_nonce_size];
    for (size_t got = 0; got < sizeof nonce;) {
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, 10000) <= 0)
            return false;
        const ssize_t r = recv(fd, nonce + got, sizeof nonce - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        got += size_t(r);
    }
    const std::string in = weft::pmgr::event_mac_input(nonce, S.rank);
    unsigned char mac[WEFT_JOB_MAC_SIZE];
    weft_runtime_job_mac(in.data(), in.size(), mac);
    return send(fd, mac, sizeof mac, MSG_NOSIGNAL) == ssize_t(sizeof mac);
}

// Weft's extension: a second connection to mpirun on which it pushes job
// events. Only opened when mpirun says it serves it.
int open_event_channel()
{
    const char *on = std::getenv("WEFT_MPIRUN_EVENTS");
    const char *host = std::getenv("MPIRUN_HOST");
    const char *port = std::getenv("MPIRUN_PORT");
    if (!on || std::strcmp(on, "1") != 0 || !host || !port || weft::pmgr::uses_pmi())
        return -1;
    addrinfo hints{}, *res = nullptr;
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, port, &hints, &res) != 0 || !res)
        return -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd >= 0 &&
        !(send_int(fd, weft::pmgr::event_magic) && send_int(fd, S.rank) && prove_secret(fd))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

// The failure detector's period that mpirun asked for (mpi_ft_detector_period), or 0.
int heartbeat_ms()
{
    const char *v = std::getenv("WEFT_PMGR_HEARTBEAT_MS");
    if (!v)
        return 0;
    char *end = nullptr;
    const long ms = std::strtol(v, &end, 10);
    return end != v && *end == '\0' && ms > 0 && ms <= 3600 * 1000 ? int(ms) : 0;
}

weft_status_t boot_init(weft_boot_module_t *m, int *rank, int *size, char *jobid, size_t jobid_len)
{
    int id = 0;
    if (pmgr_init(nullptr, nullptr, &S.size, &S.rank, &id) != PMGR_SUCCESS)
        return WEFT_ERR_BAD_PARAM;
    std::string jid = "pmgr-" + std::to_string(id);
    if (jid.size() + 1 > jobid_len)
        return WEFT_ERR_TRUNCATE;
    if (pmgr_open() != PMGR_SUCCESS)
        return WEFT_ERR_UNREACH;
    std::memcpy(jobid, jid.c_str(), jid.size() + 1);
    *rank = S.rank;
    *size = S.size;
    S.event_fd = S.size > 1 ? open_event_channel() : -1;
    m->boot_event_fd = S.event_fd;
    m->boot_flags = S.event_fd >= 0 ? WEFT_BOOT_FLAG_FAILURE_EVENTS : 0;
    // From here until finalize, a lost mpirun ends this rank (boot_pmgr_watchdog.h).
    if (S.size > 1 && !weft::pmgr::uses_pmi())
        watchdog_start(S.rank, weft::pmgr::mpirun_socket(), S.event_fd, heartbeat_ms());
    // The watchdog says when events wait: progress need not ask every time.
    if (watchdog_reads_events())
        weft_runtime_boot_events_ready();
    return WEFT_SUCCESS;
}

weft_status_t boot_barrier(weft_boot_module_t *)
{
    return pmgr_barrier() == PMGR_SUCCESS ? WEFT_SUCCESS : WEFT_ERR_UNREACH;
}

weft_status_t boot_allgather(weft_boot_module_t *, const void *in, void *out, size_t len)
{
    if (len > size_t(INT_MAX) / size_t(S.size))
        return WEFT_ERR_BAD_PARAM;
    return pmgr_allgather(const_cast<void *>(in), int(len), out) == PMGR_SUCCESS ? WEFT_SUCCESS
                                                                                 : WEFT_ERR_UNREACH;
}

weft_status_t boot_bcast(weft_boot_module_t *, void *buf, size_t len, int root)
{
    if (len > size_t(INT_MAX) || root < 0 || root >= S.size)
        return WEFT_ERR_BAD_PARAM;
    return pmgr_bcast(buf, int(len), root) == PMGR_SUCCESS ? WEFT_SUCCESS : WEFT_ERR_UNREACH;
}

weft_status_t boot_abort(weft_boot_module_t *, int code, const char *msg)
{
    // Our own closing of the connection, and mpirun's reply to the abort, are no loss.
    watchdog_disarm();
    return pmgr_abort(code, "%s", msg ? msg : "") == PMGR_SUCCESS ? WEFT_SUCCESS : WEFT_ERR_UNREACH;
}

weft_status_t boot_finalize(weft_boot_module_t *m)
{
    watchdog_stop();
    if (S.event_fd >= 0) {
        send_int(S.event_fd, weft::pmgr::event_finalized);
        close(S.event_fd);
        S.event_fd = -1;
    }
    m->boot_event_fd = -1;
    int a = pmgr_close(), b = pmgr_finalize();
    return a == PMGR_SUCCESS && b == PMGR_SUCCESS ? WEFT_SUCCESS : WEFT_ERROR;
}

weft_status_t boot_poll_event(weft_boot_module_t *m, weft_boot_event_t *ev)
{
    if (S.event_fd < 0) // an mpirun without the event channel: as a module without events
        return weft_boot_default_poll_event(m, ev);
    // The watchdog reads the channel as records come (it also sees mpirun go); without it (or
    // once it ended), this reads the socket itself, after what the watchdog had read.
    if (watchdog_reads_events()) {
        if (S.event_in.size() < sizeof(Event) && !watchdog_take_events(S.event_in))
            return WEFT_ERR_NOT_FOUND;
    } else {
        watchdog_take_events(S.event_in);
        char buf[256];
        for (;;) {
            ssize_t n = recv(S.event_fd, buf, sizeof buf, MSG_DONTWAIT);
            if (n > 0) {
                S.event_in.append(buf, size_t(n));
                continue;
            }
            if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
                if (S.event_in.size() < sizeof(Event))
                    return WEFT_ERR_UNREACH;
            }
            break;
        }
    }
    if (S.event_in.size() < sizeof(Event))
        return WEFT_ERR_NOT_FOUND;
    Event e;
    std::memcpy(&e, S.event_in.data(), sizeof e);
    S.event_in.erase(0, sizeof e);
    weft_boot_event_t out{};
    out.struct_size = sizeof out;
    out.kind = uint32_t(e.kind);
    out.rank = e.rank;
    out.exit_code = e.exit_code;
    out.signal = e.signal;
    std::memcpy(ev, &out, std::min<size_t>(ev->struct_size, sizeof out));
    ev->struct_size = std::min<uint32_t>(ev->struct_size, sizeof out);
    return WEFT_SUCCESS;
}

weft_boot_module_t module = {
    .struct_size = sizeof(weft_boot_module_t),
    .boot_flags = 0,
    .boot_event_fd = -1,
    .reserved = 0,
    .boot_init = boot_init,
    .boot_barrier = boot_barrier,
    .boot_allgather = boot_allgather,
    .boot_bcast = boot_bcast,
    .boot_abort = boot_abort,
    .boot_finalize = boot_finalize,
    .boot_poll_event = boot_poll_event,
};

weft_status_t query(int *priority, char *why, size_t why_len)
{
    const char *use_pmi = std::getenv("MPIRUN_USE_PMI");
    if (std::getenv("MPIRUN_RANK") || (use_pmi && std::atoi(use_pmi) != 0)) {
        *priority = 50;
        return WEFT_SUCCESS;
    }
    std::snprintf(why, why_len, "MPIRUN_RANK is not set (not started by a PMGR mpirun)");
    return WEFT_ERR_NOT_AVAILABLE;
}

weft_boot_module_t *init() { return &module; }

} // namespace

} // namespace weft::boot::pmgr_comp

extern "C" {
extern const weft_boot_component_t mca_boot_pmgr_component;
const weft_boot_component_t mca_boot_pmgr_component = {
    .mca = {WEFT_MCA_COMPONENT_HEADER(weft_boot_component_t, "boot", WEFT_BOOT_ABI_MAJOR,
                                      WEFT_BOOT_ABI_MINOR, "pmgr", 0, 1, 0),
            .register_params = nullptr, .open = nullptr, .query = weft::boot::pmgr_comp::query,
            .close = nullptr},
    .init = weft::boot::pmgr_comp::init,
};
}
