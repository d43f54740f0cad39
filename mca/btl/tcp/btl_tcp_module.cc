// btl/tcp module operations (btl.h): one module per interface.
#include "btl_tcp_module.h"
#include "btl_tcp.h"

#include <weft/convertor.h>
#include <weft/runtime.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

namespace weft::btl::tcp {

namespace {

bool owns(Module *m, Endpoint *ep)
{
    if (!ep)
        return false;
    const auto it = m->endpoints.find(ep->rank);
    return it != m->endpoints.end() && it->second == ep;
}

weft_status_t add_procs(weft_btl_module_t *b, weft_proc_t *const *procs, size_t nprocs,
                        weft_btl_endpoint_t **endpoints, uint8_t *reachable)
{
    if (!b || (nprocs > 0 && (!procs || !endpoints || !reachable)))
        return WEFT_ERR_BAD_PARAM;
    Module *m = module_of(b);
    for (size_t i = 0; i < nprocs; ++i) {
        weft_proc_t *proc = procs[i];
        if (!proc || weft_proc_is_self(proc))
            continue; // btl/self's business
        const int rank = weft_proc_rank(proc);
        if (const auto it = m->endpoints.find(rank); it != m->endpoints.end()) {
            // Asked again for a peer whose endpoint failed (a PML re-admitting the rail): it
            // starts over, and the next send connects; if the link is still dead, it fails
            // again and the error callback says so.
            if (it->second->state == EpState::failed)
                ep_restart(it->second);
            endpoints[i] = handle_of(it->second);
            reachable[i] = 1;
            continue;
        }
        const void *data = nullptr;
        size_t len = 0;
        if (weft_modex_recv("btl.tcp", proc, &data, &len) != WEFT_SUCCESS) {
            debug(2, "%s: rank %d published no btl.tcp addresses", m->name().c_str(), rank);
            continue;
        }
        std::vector<Address> theirs;
        if (!decode_addresses(data, len, theirs)) {
            if (m->index == 0)
                warn("rank %d published btl.tcp addresses this process cannot read (another "
                     "Weft version?); it is not reachable over tcp",
                     rank);
            continue;
        }
        const std::vector<int> pairs = pair_addresses(
            component->addresses, theirs, weft_proc_is_local(proc) != 0, component->my_rank < rank);
        const int j = pairs[size_t(m->index)];
        if (j < 0)
            continue;
        Endpoint *ep = new (std::nothrow) Endpoint;
        if (!ep)
            return WEFT_ERR_OUT_OF_RESOURCE;
        ep->module = m;
        ep->proc = proc;
        ep->rank = rank;
        ep->peer = theirs[size_t(j)];
        ep->peer_module = uint16_t(j);
        m->endpoints[rank] = ep;
        endpoints[i] = handle_of(ep);
        reachable[i] = 1;
        debug(2, "%s: reaches %s", m->name().c_str(), describe(ep).c_str());
    }
    conn_adopt_parked(m);
    return WEFT_SUCCESS;
}

weft_status_t del_procs(weft_btl_module_t *b, weft_proc_t *const *procs, size_t nprocs,
                        weft_btl_endpoint_t *const *endpoints)
{
    if (!b || (nprocs > 0 && !procs && !endpoints))
        return WEFT_ERR_BAD_PARAM;
    Module *m = module_of(b);
    std::vector<Endpoint *> eps;
    for (size_t i = 0; i < nprocs; ++i) {
        Endpoint *ep = endpoints ? endpoint_of(endpoints[i]) : nullptr;
        if (!ep && procs && procs[i]) {
            const auto it = m->endpoints.find(weft_proc_rank(procs[i]));
            ep = it == m->endpoints.end() ? nullptr : it->second;
        }
        if (!ep)
            continue; // a proc this module does not reach
        if (!owns(m, ep))
            return WEFT_ERR_BAD_PARAM;
        if (std::find(eps.begin(), eps.end(), ep) == eps.end())
            eps.push_back(ep);
    }
    ep_release(eps, WEFT_ERR_UNREACH);
    return WEFT_SUCCESS;
}

weft_status_t register_tag(weft_btl_module_t *b, weft_btl_tag_t tag, weft_btl_recv_fn_t cbfunc,
                           void *cbdata)
{
    if (!b)
        return WEFT_ERR_BAD_PARAM;
    Module::Tag &t = module_of(b)->tags[tag];
    t.fn = cbfunc;
    t.cbdata = cbdata;
    return WEFT_SUCCESS;
}

weft_status_t register_place(weft_btl_module_t *b, weft_btl_tag_t tag, size_t header_size,
                             weft_btl_place_fn_t placefn, void *cbdata)
{
    if (!b || (placefn && (header_size == 0 || header_size > kPlaceHeaderMax)))
        return WEFT_ERR_BAD_PARAM;
    Module::Tag &t = module_of(b)->tags[tag];
    t.place = placefn;
    t.place_cbdata = cbdata;
    t.place_header = placefn ? header_size : 0;
    return WEFT_SUCCESS;
}

weft_status_t register_error(weft_btl_module_t *b, weft_btl_error_fn_t cbfunc, void *cbdata)
{
    if (!b)
        return WEFT_ERR_BAD_PARAM;
    Module *m = module_of(b);
    m->error_fn = cbfunc;
    m->error_cbdata = cbdata;
    return WEFT_SUCCESS;
}

void shutdown_component()
{
    Component *cp = component;
    reap_zombies();
    if (cp->progress_registered)
        weft_progress_unregister(progress);
    if (cp->epfd >= 0)
        close(cp->epfd);
    delete cp;
    component = nullptr;
}

weft_status_t finalize(weft_btl_module_t *b)
{
    if (!b)
        return WEFT_ERR_BAD_PARAM;
    Module *m = module_of(b);
    std::vector<Endpoint *> eps;
    for (const auto &[rank, ep] : m->endpoints)
        eps.push_back(ep);
    ep_release(eps, WEFT_ERR_UNREACH);
    const std::vector<Conn *> conns = component->conns;
    for (Conn *c : conns)
        if (c->module == m)
            conn_close(c);
    reap_zombies();
    auto &mods = component->modules;
    mods.erase(std::remove(mods.begin(), mods.end(), m), mods.end());
    delete m;
    if (mods.empty())
        shutdown_component();
    return WEFT_SUCCESS;
}

weft_status_t alloc(weft_btl_module_t *b, weft_btl_endpoint_t *, uint8_t order, size_t size,
                    uint32_t flags, weft_btl_descriptor_t **des)
{
    if (!b || !des || size > params.max_send_size)
        return WEFT_ERR_BAD_PARAM;
    Frag *f = module_of(b)->get_frag(size);
    if (!f)
        return WEFT_ERR_OUT_OF_RESOURCE;
    f->segment.seg_len = size;
    f->user = weft_btl_segment_t{nullptr, 0};
    f->des.des_segment_count = 1;
    f->des.des_flags = flags;
    f->des.order = order;
    *des = &f->des;
    return WEFT_SUCCESS;
}

// Contiguous data is sent from where it is (the descriptor's second segment, written straight
// from the user's buffer; it must stay untouched until completion); anything else is packed
// behind the reserved header. No WEFT_BTL_FLAG_SEND_INPLACE: completion waits for the peer's
// acknowledgement, too late for the eager prepared protocol, but right for pipeline fragments.
weft_status_t prepare_src(weft_btl_module_t *b, weft_btl_endpoint_t *, weft_convertor_t *cv,
                          uint8_t order, size_t reserve, size_t *size, uint32_t flags,
                          weft_btl_descriptor_t **des)
{
    if (!b || !cv || !size || !des || reserve > params.max_send_size)
        return WEFT_ERR_BAD_PARAM;
    const size_t n =
        std::min({*size, weft_convertor_remaining(cv), params.max_send_size - reserve});
    const void *inplace = weft_convertor_contiguous_data(cv);
    Frag *f = module_of(b)->get_frag(inplace ? reserve : reserve + n);
    if (!f)
        return WEFT_ERR_OUT_OF_RESOURCE;
    f->des.des_flags = flags;
    f->des.order = order;
    if (inplace && n) {
        f->segment.seg_len = reserve;
        f->user = weft_btl_segment_t{const_cast<void *>(inplace), n};
        f->des.des_segment_count = 2;
        weft_convertor_seek(cv, cv->position + n);
        *size = n;
    } else {
        f->segment.seg_len =
            reserve +
            weft_convertor_pack(cv, static_cast<char *>(f->segment.seg_addr) + reserve, n);
        f->user = weft_btl_segment_t{nullptr, 0};
        f->des.des_segment_count = 1;
        *size = f->segment.seg_len - reserve;
    }
    *des = &f->des;
    return WEFT_SUCCESS;
}

weft_status_t free_des(weft_btl_module_t *b, weft_btl_descriptor_t *des)
{
    if (!b || !des)
        return WEFT_ERR_BAD_PARAM;
    Frag *f = frag_of(des);
    if (f->module != module_of(b) || f->state != FragState::loaned || f->kind != FragKind::send)
        return WEFT_ERR_BAD_PARAM;
    f->pool->put(f);
    return WEFT_SUCCESS;
}

weft_status_t send(weft_btl_module_t *b, weft_btl_endpoint_t *h, weft_btl_descriptor_t *des,
                   weft_btl_tag_t tag)
{
    if (!b || !h || !des)
        return WEFT_ERR_BAD_PARAM;
    Module *m = module_of(b);
    Endpoint *ep = endpoint_of(h);
    Frag *f = frag_of(des);
    if (ep->module != m || f->module != m || f->state != FragState::loaned ||
        f->kind != FragKind::send || des->des_segments != &f->segment ||
        des->des_segment_count != (f->user.seg_len ? 2u : 1u) || f->segment.seg_len > f->capacity ||
        f->segment.seg_addr != f->buffer || data_bytes(f) > params.max_send_size)
        return WEFT_ERR_BAD_PARAM;
    f->tag = tag;
    f->frame_type = wire::kData;
    return ep_enqueue(ep, f);
}

weft_status_t sendi(weft_btl_module_t *b, weft_btl_endpoint_t *h, weft_convertor_t *cv,
                    const void *header, size_t header_size, size_t payload_size, uint8_t order,
                    uint32_t flags, weft_btl_tag_t tag, weft_btl_descriptor_t **des)
{
    if (des)
        *des = nullptr;
    if (!b || !h || (header_size > 0 && !header) ||
        (payload_size && (!cv || weft_convertor_remaining(cv) < payload_size)))
        return WEFT_ERR_BAD_PARAM;
    Module *m = module_of(b);
    Endpoint *ep = endpoint_of(h);
    const size_t total = header_size + payload_size;
    if (ep->module != m || total > params.max_send_size)
        return WEFT_ERR_BAD_PARAM;
    if (ep->state == EpState::failed)
        return WEFT_ERR_LINK_DOWN;
    if (ep->state == EpState::closed)
        return WEFT_ERR_UNREACH;
    // Taken only when it can go out now, behind nothing: a connection that is up, an empty
    // queue, a socket that is not full.
    const bool at_once = ep->state == EpState::established && ep->conn && ep->outq.empty() &&
                         !(ep->conn->events & EPOLLOUT);
    if (at_once) {
        if (Frag *f = m->get_frag(total)) {
            // The copy stays until the peer acknowledges it: if the link breaks first, it goes
            // back to this process's callback for the tag, flagged SEND_FAILED.
            if (header_size)
                std::memcpy(f->buffer, header, header_size);
            if (payload_size)
                weft_convertor_pack(cv, f->buffer + header_size, payload_size);
            f->segment.seg_len = total;
            f->kind = FragKind::sendi;
            f->frame_type = wire::kData;
            f->tag = tag;
            f->des.des_flags = flags;
            f->des.order = order;
            ep_enqueue(ep, f);
            return WEFT_SUCCESS;
        }
    }
    if (des) {
        if (Frag *f = m->get_frag(total)) {
            f->segment.seg_len = total;
            f->des.des_flags = flags;
            f->des.order = order;
            *des = &f->des;
        }
    }
    return WEFT_ERR_OUT_OF_RESOURCE;
}

// Progress until every fragment queued to endpoint (or to anybody) was written to its socket,
// and every get has its answer, or failed with its endpoint.
weft_status_t flush(weft_btl_module_t *b, weft_btl_endpoint_t *h)
{
    if (!b)
        return WEFT_ERR_BAD_PARAM;
    Module *m = module_of(b);
    Endpoint *only = h ? endpoint_of(h) : nullptr;
    auto live = [](const Endpoint *ep) {
        return ep->state != EpState::failed && ep->state != EpState::closed;
    };
    auto busy = [&](const Endpoint *ep) {
        return live(ep) && (!ep->outq.empty() || !ep->gets.empty());
    };
    auto queued = [&] {
        if (only)
            return busy(only);
        for (const auto &[rank, ep] : m->endpoints)
            if (busy(ep))
                return true;
        return false;
    };
    while (queued())
        if (weft_progress() == 0)
            sched_yield();
    if (!only)
        return WEFT_SUCCESS;
    return live(only) ? WEFT_SUCCESS : WEFT_ERR_UNREACH;
}

const char *state_name(EpState s)
{
    switch (s) {
    case EpState::idle: return "idle";
    case EpState::connecting: return "connecting";
    case EpState::waiting_peer: return "waiting for the peer";
    case EpState::established: return "established";
    case EpState::failed: return "failed";
    case EpState::closed: return "closed";
    }
    return "?";
}

void dump(weft_btl_module_t *b, weft_btl_endpoint_t *h, int verbose)
{
    if (!b)
        return;
    Module *m = module_of(b);
    std::fprintf(
        stderr, "weft: btl/tcp: %s: %zu endpoint(s), fragments in use %zu eager + %zu max\n",
        m->name().c_str(), m->endpoints.size(), m->eager_pool.in_use(), m->max_pool.in_use());
    for (const auto &[rank, ep] : m->endpoints) {
        if (h && endpoint_of(h) != ep)
            continue;
        std::fprintf(stderr, "weft: btl/tcp:   %s: %s, %zu queued, %zu unacknowledged",
                     describe(ep).c_str(), state_name(ep->state), ep->outq.size(),
                     ep->unacked.size());
        if (verbose > 0)
            std::fprintf(stderr, ", sent %u (acknowledged %u), received %u", ep->next_seq,
                         ep->peer_acked, ep->recv_count);
        if (!ep->failure_reason.empty())
            std::fprintf(stderr, " (%s)", ep->failure_reason.c_str());
        std::fputc('\n', stderr);
    }
}

weft_btl_module_t make_base()
{
    return weft_btl_module_t{
        .struct_size = sizeof(weft_btl_module_t),
        .btl_flags = WEFT_BTL_FLAG_SEND | WEFT_BTL_FLAG_FAILOVER_SUPPORT,
        .btl_component = const_cast<weft_btl_component_t *>(&mca_btl_tcp_component),
        .btl_eager_limit = params.eager_limit,
        .btl_rndv_eager_limit = params.rndv_eager_limit,
        .btl_max_send_size = params.max_send_size,
        .btl_rdma_pipeline_send_length = 0,
        .btl_rdma_pipeline_frag_size = 0,
        .btl_min_rdma_pipeline_size = 0,
        .btl_put_limit = 0,
        .btl_get_limit = 0,
        .btl_put_alignment = 0,
        .btl_get_alignment = 0,
        .btl_registration_handle_size = 0,
        .btl_exclusivity = params.exclusivity,
        .btl_latency = params.latency,
        .btl_bandwidth = params.bandwidth,
        .reserved = 0,
        .btl_add_procs = add_procs,
        .btl_del_procs = del_procs,
        .btl_register = register_tag,
        .btl_register_error = register_error,
        .btl_finalize = finalize,
        .btl_alloc = alloc,
        .btl_free = free_des,
        .btl_prepare_src = prepare_src,
        .btl_send = send,
        .btl_sendi = sendi,
        .btl_put = nullptr,
        .btl_get = nullptr,
        .btl_register_mem = nullptr,
        .btl_deregister_mem = nullptr,
        .btl_flush = flush,
        .btl_dump = dump,
        .btl_min_rdma_size = 0,
        .btl_max_rdma_size = 0,
        .btl_stream_min_rdma_size = 0,
        .btl_stream_max_rdma_size = 0,
        .btl_register_place = register_place,
        .btl_way_rate = nullptr,
    };
}

} // namespace

// Buffers of btl_tcp_max_send_size bytes (packed pipeline fragments) take at most 64 MiB per
// module, whatever btl_tcp_free_list_max says, so that large fragments cannot pile up a
// gigabyte; at least 16.
size_t max_frags()
{
    const size_t by_bytes = (size_t(64) << 20) / std::max<size_t>(params.max_send_size, 1);
    return std::max<size_t>(16, std::min(params.free_list_max, by_bytes));
}

Module::Module(int index_, const Address &self_)
    : shell{make_base(), this}, index(index_), self(self_),
      eager_pool(this, params.eager_limit, params.free_list_max),
      max_pool(this, params.max_send_size, max_frags()), ctrl_pool(this, 0, 0)
{
}

Module::~Module()
{
    rdma_release(this);
    if (listen_fd >= 0) {
        if (component)
            epoll_ctl(component->epfd, EPOLL_CTL_DEL, listen_fd, nullptr);
        close(listen_fd);
    }
}

std::string Module::name() const
{
    return self.name + " (" + ipv4_string(self.addr) + ":" + std::to_string(self.port) + ")";
}

Frag *Module::get_frag(size_t size)
{
    if (size <= eager_pool.capacity())
        if (Frag *f = eager_pool.get())
            return f;
    return size <= max_pool.capacity() ? max_pool.get() : nullptr;
}

Module *module_create(int index, Address a, std::string &error)
{
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        error = std::string("socket: ") + std::strerror(errno);
        return nullptr;
    }
    // Buffer sizes must be set before listen() to shape the window of accepted connections.
    tune_socket(fd);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(a.addr);
    sa.sin_port = 0;
    socklen_t len = sizeof sa;
    if (bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) != 0 || listen(fd, SOMAXCONN) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr *>(&sa), &len) != 0) {
        error = "cannot listen on " + ipv4_string(a.addr) + ": " + std::strerror(errno);
        close(fd);
        return nullptr;
    }
    a.port = ntohs(sa.sin_port);
    Module *m = new Module(index, a);
    m->listen_fd = fd;
    rdma_enable(m);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = static_cast<Pollable *>(&m->listener);
    if (epoll_ctl(component->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        error = std::string("epoll_ctl: ") + std::strerror(errno);
        delete m;
        return nullptr;
    }
    return m;
}

} // namespace weft::btl::tcp
