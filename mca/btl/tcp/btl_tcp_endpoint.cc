// btl/tcp endpoints and connections: connection setup and its handshake, the frame writer and
// reader, acknowledgements, failures and release.
//
// Callbacks into the PML (receive, completion, error) run only from progress() and from
// del_procs/finalize: a failure noticed anywhere else (inside btl_send, or inside a callback)
// is recorded by ep_down and run by the next progress call.
#include "btl_tcp_endpoint.h"
#include "btl_tcp.h"
#include "btl_tcp_module.h"

#include <weft/runtime.h>

#include <arpa/inet.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <initializer_list>
#include <utility>

namespace weft::btl::tcp {

namespace {

constexpr size_t kRxChunk = 64 * 1024; // smallest receive buffer, and the read-ahead
constexpr int kMaxIov = 64;            // iovecs per sendmsg
// Bytes per system call on a connection. recv takes at most kReadChunk, and reading goes on
// in further calls, up to kReadRounds per connection per progress call. While several frames
// are queued (a stream), sendmsg takes at most kWriteChunk; a frame alone goes in one call.
// Measured on loopback, 2-rank streams, interleaved with the earlier sizes (docs/performance.md,
// "tcp: smaller system calls"): 1 MiB messages 5.0 -> 9.1 GB/s, 4 MiB 5.5 -> 9.0.
// Reads of 128 KiB gave 5.3 (64 KiB is the largest segment the stack hands a socket, GSO/GRO).
// Writing a stream whole, or in 512 KiB pieces, gave 5.3-5.4; a single 1 MiB message written
// in 256 KiB pieces took 128 us instead of 107. The likely cause: each call releases the
// socket's lock, and segments and acknowledgements that arrived while it was held are
// processed then, so the receive work is shared between the processes more evenly and the
// window opens as the stream goes, not only after a multi-megabyte call.
constexpr size_t kReadChunk = 64 * 1024;
constexpr size_t kWriteChunk = 256 * 1024;
constexpr int kReadRounds = 16;
constexpr size_t kWriteBatchMin = 32 * 1024;     // frames this large are written in batches
constexpr size_t kRxStreamMax = size_t(4) << 20; // largest receive buffer grown for streaming
constexpr uint64_t kKernelAckDelayMs = 2;
const unsigned char kZeros[wire::kFrameAlign] = {};

template <class T> void remove_from(std::vector<T *> &v, T *x)
{
    v.erase(std::remove(v.begin(), v.end(), x), v.end());
}

bool would_block(int err) { return err == EAGAIN || err == EWOULDBLOCK; }

bool watch(Conn *c, uint32_t events)
{
    epoll_event ev{};
    ev.events = events;
    ev.data.ptr = static_cast<Pollable *>(c);
    if (epoll_ctl(component->epfd, EPOLL_CTL_ADD, c->fd, &ev) != 0)
        return false;
    c->events = events;
    return true;
}

void set_events(Conn *c, uint32_t events)
{
    if (c->fd < 0 || c->events == events)
        return;
    epoll_event ev{};
    ev.events = events;
    ev.data.ptr = static_cast<Pollable *>(c);
    if (epoll_ctl(component->epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0)
        c->events = events;
    else
        debug(1, "epoll_ctl on %s: %s", c->peer.c_str(), std::strerror(errno));
}

std::string sockaddr_string(uint32_t addr, uint16_t port)
{
    return ipv4_string(addr) + ":" + std::to_string(port);
}

wire::Hello my_hello(uint16_t kind, const Module *m, uint32_t dst_rank, uint16_t dst_module)
{
    wire::Hello h;
    h.kind = kind;
    h.job = component->job;
    h.src_rank = uint32_t(component->my_rank);
    h.dst_rank = dst_rank;
    h.src_module = uint16_t(m->index);
    h.dst_module = dst_module;
    h.max_send_size = uint32_t(params.max_send_size);
    return h;
}

// A fresh nonce for a handshake. getrandom(2) with GRND_NONBLOCK fails only before the
// kernel's pool is ready (early boot); then the clock, the pid and a counter still make the
// nonce unique, which is all that defeats a replay (a nonce need not be secret).
void make_nonce(unsigned char *nonce)
{
    if (getrandom(nonce, wire::kNonceSize, GRND_NONBLOCK) == ssize_t(wire::kNonceSize))
        return;
    static uint64_t counter = 0;
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    wire::put64(nonce, uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec));
    wire::put64(nonce + 8, ++counter ^ uint64_t(getpid()) << 32);
}

// MAC of the label followed by the parts, keyed with the job's secret (weft_runtime_job_mac).
void handshake_mac(const char *label, std::initializer_list<std::pair<const void *, size_t>> parts,
                   unsigned char *mac)
{
    unsigned char buf[wire::kMacInputMax];
    size_t n = wire::kLabelSize;
    std::memcpy(buf, label, n);
    for (const auto &[p, len] : parts) {
        std::memcpy(buf + n, p, len);
        n += len;
    }
    weft_runtime_job_mac(buf, n, mac);
}

// The connector's MAC over the greeting and its hello's fields.
void hello_mac(const Conn *c, const unsigned char *hello, unsigned char *mac)
{
    handshake_mac(wire::kHelloLabel,
                  {{c->greeting, wire::kGreetingSize}, {hello, wire::kHelloFieldsSize}}, mac);
}

// The acceptor's MAC over the greeting, the whole hello and its reply's fields.
void reply_mac(const Conn *c, const unsigned char *reply, unsigned char *mac)
{
    handshake_mac(wire::kReplyLabel,
                  {{c->greeting, wire::kGreetingSize},
                   {c->hello_raw, wire::kHelloSize},
                   {reply, wire::kHelloFieldsSize}},
                  mac);
}

bool mac_ok(const unsigned char *expected, const unsigned char *got)
{
    unsigned char diff = 0; // no early exit: timing does not tell how much of a forgery was right
    for (size_t i = 0; i < wire::kMacSize; ++i)
        diff |= expected[i] ^ got[i];
    return diff == 0;
}

// What a peer sent, fit to print: host names come from the modex, which any process that
// joined the bootstrap wrote.
std::string printable(const char *s, size_t max = 64)
{
    std::string out;
    for (size_t i = 0; s[i] && i < max; ++i) {
        const unsigned char ch = static_cast<unsigned char>(s[i]);
        out += ch >= 0x20 && ch < 0x7f ? char(ch) : '?';
    }
    return out;
}

// ---- completion --------------------------------------------------------------------------

void complete(Frag *f, weft_status_t status)
{
    Module *m = f->module;
    Endpoint *ep = f->endpoint;
    switch (f->kind) {
    case FragKind::send: {
        const weft_btl_completion_fn_t cb = f->des.des_cbfunc;
        const bool owned = (f->des.des_flags & WEFT_BTL_DES_FLAG_BTL_OWNERSHIP) != 0;
        f->state = FragState::loaned; // the callback may btl_free it (without BTL_OWNERSHIP)
        if (cb)
            cb(m->base(), handle_of(ep), &f->des, status);
        if (owned)
            f->pool->put(f);
        break;
    }
    case FragKind::sendi:
        if (status != WEFT_SUCCESS) {
            const Module::Tag &t = m->tags[f->tag];
            weft_btl_recv_descriptor_t rd{};
            rd.endpoint = handle_of(ep);
            rd.segments = &f->segment;
            rd.segment_count = 1;
            rd.cbdata = t.cbdata;
            rd.flags = WEFT_BTL_RECV_FLAG_SEND_FAILED;
            rd.tag = f->tag;
            if (t.fn)
                t.fn(m->base(), &rd);
        }
        f->pool->put(f);
        break;
    case FragKind::rdma_put: {
        RdmaOp *op = f->rdma;
        f->rdma = nullptr;
        f->pool->put(f);
        rdma_put_done(m, ep, op, status);
        break;
    }
    case FragKind::control:
    case FragKind::internal: f->pool->put(f); break;
    }
}

// Complete everything queued on ep with `status`, oldest first. Returns the callbacks made.
int drain(Endpoint *ep, weft_status_t status)
{
    int n = 0;
    for (std::deque<Frag *> *q : {&ep->unacked, &ep->outq}) {
        while (!q->empty()) {
            Frag *f = q->front();
            q->pop_front();
            if (f->kind != FragKind::control && f->kind != FragKind::internal)
                ++n;
            complete(f, status);
        }
    }
    return n + rdma_fail_gets(ep, status);
}

// The peer has received `ack` data frames: complete those still waiting.
int ep_ack(Endpoint *ep, uint32_t ack)
{
    ep->peer_acked = ack;
    int n = 0;
    while (!ep->unacked.empty() && int32_t(ack - ep->unacked.front()->seq) > 0) {
        Frag *f = ep->unacked.front();
        ep->unacked.pop_front();
        if (f->kind != FragKind::control && f->kind != FragKind::internal)
            ++n;
        complete(f, WEFT_SUCCESS);
    }
    return n;
}

size_t pending_data(const Endpoint *ep)
{
    size_t n = ep->unacked.size();
    for (const Frag *f : ep->outq)
        n += f->kind != FragKind::control;
    return n;
}

// ---- connection errors -------------------------------------------------------------------

// A connection failed. If it is the endpoint's (established or attempt), the endpoint fails;
// otherwise it was a spare (a race's loser, a stranger) and just goes.
void conn_error(Conn *c, const std::string &what)
{
    Endpoint *ep = c->ep;
    if (ep && (ep->conn == c || ep->attempt == c)) {
        ep_down(ep, EpState::failed, WEFT_ERR_LINK_DOWN, what, true,
                ep->conn == c && c->state == ConnState::established);
    } else {
        debug(2, "%s: %s", c->module->name().c_str(), what.c_str());
        conn_close(c);
    }
}

std::string socket_error_text(const Endpoint *ep, int err)
{
    if (err == ETIMEDOUT)
        return "lost the connection to " + describe(ep) +
               ": no answer within btl_tcp_user_timeout or the keepalive probes";
    return "lost the connection to " + describe(ep) + ": " + std::strerror(err);
}

// ---- writing -----------------------------------------------------------------------------

void build_header(Endpoint *ep, Frag *f)
{
    wire::FrameHeader h;
    h.type = f->frame_type;
    h.tag = f->tag;
    if (f->frame_type == wire::kData) {
        h.length = uint32_t(data_bytes(f));
        f->seq = h.seq = ep->next_seq++;
    }
    h.ack = ep->ack_sent = ep->recv_count;
    wire::encode(h, f->header);
    f->header_built = true;
}

// The parts of f not yet written, as iovecs.
int frame_iov(const Frag *f, iovec *iov)
{
    int n = 0;
    size_t off = f->written;
    const size_t hdr = wire::kFrameHeaderSize;
    if (off < hdr) {
        iov[n++] = {const_cast<unsigned char *>(f->header) + off, hdr - off};
        off = hdr;
    }
    if (f->frame_type != wire::kData)
        return n;
    const size_t own = f->segment.seg_len, len = data_bytes(f), pad = wire::padded(len) - len;
    if (off < hdr + own) {
        iov[n++] = {static_cast<unsigned char *>(f->segment.seg_addr) + (off - hdr),
                    hdr + own - off};
        off = hdr + own;
    }
    if (off < hdr + len) {
        iov[n++] = {static_cast<unsigned char *>(f->user.seg_addr) + (off - hdr - own),
                    hdr + len - off};
        off = hdr + len;
    }
    if (off < hdr + len + pad)
        iov[n++] = {const_cast<unsigned char *>(kZeros) + (off - hdr - len), hdr + len + pad - off};
    return n;
}

Frag *control_frag(Endpoint *ep, uint8_t type)
{
    Frag *f = ep->module->ctrl_pool.get();
    if (!f)
        return nullptr;
    f->kind = FragKind::control;
    f->frame_type = type;
    f->endpoint = ep;
    f->state = FragState::queued;
    return f;
}

// Write what the socket takes: the handshake bytes, then the endpoint's frames, then an ACK if
// frames arrived that no header has acknowledged yet. Watches POLLOUT while bytes remain.
void conn_flush(Conn *c)
{
    while (c->hs_out_done < c->hs_out_len) {
        const ssize_t r = send(c->fd, c->hs_out + c->hs_out_done, c->hs_out_len - c->hs_out_done,
                               MSG_NOSIGNAL | MSG_DONTWAIT);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (would_block(errno)) {
                set_events(c, EPOLLIN | EPOLLOUT);
                return;
            }
            const int err = errno;
            conn_error(c, "handshake with " + c->peer + " failed: " + std::strerror(err));
            return;
        }
        c->hs_out_done += size_t(r);
        c->bytes_written += uint64_t(r);
    }
    if (c->state == ConnState::closing) {
        conn_close(c);
        return;
    }
    if (c->state != ConnState::established) {
        set_events(c, EPOLLIN);
        return;
    }
    Endpoint *ep = c->ep;
    for (;;) {
        if (ep->outq.empty()) {
            if (ep->recv_count == ep->ack_sent || ep->bye_queued)
                break;
            Frag *a = control_frag(ep, wire::kAck);
            if (!a)
                break;
            ep->outq.push_back(a);
        }
        iovec iov[kMaxIov];
        int n = 0;
        size_t bytes = 0;
        const size_t most = ep->outq.size() > 1 ? kWriteChunk : SIZE_MAX;
        for (Frag *f : ep->outq) {
            if (n + 3 > kMaxIov || bytes >= most)
                break;
            if (!f->header_built)
                build_header(ep, f);
            const int k = frame_iov(f, iov + n);
            for (int i = 0; i < k; ++i)
                bytes += iov[n + i].iov_len;
            n += k;
        }
        // A stream (several frames queued) goes at most kWriteChunk per call: the last iovec
        // is cut short, and the rest of its frame goes in the next call.
        while (bytes > most) {
            const size_t over = bytes - most;
            if (iov[n - 1].iov_len > over) {
                iov[n - 1].iov_len -= over;
                bytes = most;
            } else {
                bytes -= iov[n - 1].iov_len;
                --n;
            }
        }
        msghdr msg{};
        msg.msg_iov = iov;
        msg.msg_iovlen = size_t(n);
        const ssize_t r = sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (would_block(errno)) {
                set_events(c, EPOLLIN | EPOLLOUT);
                return;
            }
            conn_error(c, socket_error_text(ep, errno));
            return;
        }
        uint64_t pos = c->bytes_written;
        c->bytes_written += uint64_t(r);
        for (size_t left = size_t(r); left > 0;) {
            Frag *f = ep->outq.front();
            const size_t take = std::min(frame_bytes(f) - f->written, left);
            f->written += take;
            pos += take;
            left -= take;
            if (f->written == frame_bytes(f)) {
                ep->outq.pop_front();
                if (f->frame_type == wire::kData) {
                    f->wire_end = pos;
                    f->written_ms = now_ms();
                    ep->unacked.push_back(f);
                    if (!ep->in_acking) {
                        ep->in_acking = true;
                        component->acking.push_back(ep);
                        component->note_work();
                    }
                } else {
                    f->pool->put(f);
                }
            }
        }
        if (size_t(r) < bytes) { // the socket buffer is full
            set_events(c, EPOLLIN | EPOLLOUT);
            return;
        }
    }
    set_events(c, EPOLLIN);
}

// ---- reading -----------------------------------------------------------------------------

// Check a header before anything of its frame is used. Returns what is wrong, or "".
std::string check_header(const Conn *c, const wire::FrameHeader &h)
{
    const Endpoint *ep = c->ep;
    if (h.magic != wire::kFrameMagic)
        return fmt("a frame header starting with 0x%02x instead of 0x%02x", h.magic,
                   wire::kFrameMagic);
    if (h.flags != 0)
        return fmt("a frame header with unknown flags 0x%02x", h.flags);
    switch (h.type) {
    case wire::kData:
        if (h.length > params.max_send_size)
            return fmt("a frame of %" PRIu32 " bytes, more than btl_tcp_max_send_size (%zu)",
                       h.length, params.max_send_size);
        if (!c->module->tags[h.tag].fn && !(params.rdma && rdma_tag(h.tag)))
            return fmt("a frame for tag 0x%02x, for which nothing is registered", h.tag);
        if (h.seq != ep->recv_count)
            return fmt("frame number %" PRIu32 " where %" PRIu32 " was due", h.seq, ep->recv_count);
        break;
    case wire::kAck:
    case wire::kBye:
        if (h.length != 0 || h.seq != 0 || h.tag != 0)
            return fmt("a control frame (type %u) with a payload, tag or number", h.type);
        break;
    default: return fmt("a frame of unknown type %u", h.type);
    }
    if (int32_t(h.ack - ep->peer_acked) < 0 || int32_t(ep->next_seq - h.ack) < 0)
        return fmt("an acknowledgement of %" PRIu32 " frames, while %" PRIu32
                   " were acknowledged and %" PRIu32 " sent",
                   h.ack, ep->peer_acked, ep->next_seq);
    return "";
}

void peer_left(Endpoint *ep)
{
    const size_t lost = pending_data(ep);
    if (lost == 0)
        ep_down(ep, EpState::closed, WEFT_ERR_UNREACH, describe(ep) + " released the endpoint",
                false);
    else
        ep_down(ep, EpState::closed, WEFT_ERR_UNREACH,
                describe(ep) + " released the endpoint with " + std::to_string(lost) +
                    " fragment(s) from this process not received",
                true);
}

// Hand segs[0..count) from ep to the receive callback of `tag` (if any). Returns 1.
int deliver(Module *m, Endpoint *ep, uint8_t tag, const weft_btl_segment_t *segs, size_t count,
            uint32_t flags)
{
    const Module::Tag &t = m->tags[tag];
    weft_btl_recv_descriptor_t rd{};
    rd.endpoint = handle_of(ep);
    rd.segments = segs;
    rd.segment_count = count;
    rd.cbdata = t.cbdata;
    rd.flags = flags;
    rd.tag = tag;
    if (t.fn)
        t.fn(m->base(), &rd);
    return 1;
}

// A placed frame's payload is all in: its tag's callback, flagged PLACED. Returns 1.
int place_finish(Conn *c)
{
    Conn::Placing &pl = c->placing;
    pl.active = false;
    c->rx_skip = pl.pad;
    ++c->ep->recv_count;
    const weft_btl_segment_t segs[2] = {{pl.head, pl.head_len}, {pl.dest, pl.rest}};
    return deliver(c->module, c->ep, pl.tag, segs, 2, WEFT_BTL_RECV_FLAG_PLACED);
}

// A placement the connection's end cut short: its tag's callback, flagged PLACE_FAILED, so
// that the owner of the memory knows nothing more is written there. Returns 1.
int place_failed(Module *m, Endpoint *ep, const Conn::Placing &pl)
{
    debug(1, "%s: the connection to %s ended %zu bytes into a frame of %zu being placed",
          m->name().c_str(), describe(ep).c_str(), pl.head_len + pl.done, pl.head_len + pl.rest);
    const weft_btl_segment_t seg{const_cast<unsigned char *>(pl.head), pl.head_len};
    return deliver(m, ep, pl.tag, &seg, 1, WEFT_BTL_RECV_FLAG_PLACE_FAILED);
}

// The start of a large DATA frame (header checked, avail bytes of its total buffered at p)
// for a tag that places (btl_register_place): when the tag's place callback names memory, the
// payload after its first place_header bytes goes there, the part buffered now by a copy and
// the rest straight from the socket (took), and the buffer is empty again. Frames shorter than
// a read's worth are not placed. Returns the callbacks made.
int place_start(Conn *c, const wire::FrameHeader &h, unsigned char *p, size_t avail)
{
    const Module::Tag &t = c->module->tags[h.tag];
    const size_t head = t.place_header;
    if (!t.place || !t.fn || h.length < head + kReadChunk || avail < wire::kFrameHeaderSize + head)
        return 0;
    const size_t rest = h.length - head;
    unsigned char *payload = p + wire::kFrameHeaderSize;
    void *dest = nullptr;
    if (!t.place(c->module->base(), handle_of(c->ep), payload, head, rest, t.place_cbdata, &dest) ||
        !dest)
        return 0;
    debug(9, "%s: a frame of %" PRIu32 " bytes from %s is read into the place its tag named",
          c->module->name().c_str(), h.length, describe(c->ep).c_str());
    Conn::Placing &pl = c->placing;
    pl.active = true;
    pl.tag = h.tag;
    std::memcpy(pl.head, payload, head);
    pl.head_len = head;
    pl.dest = static_cast<unsigned char *>(dest);
    pl.rest = rest;
    // Every buffered byte belongs to this frame (it is not complete): payload, then perhaps
    // some of its padding.
    const size_t have = avail - wire::kFrameHeaderSize - head;
    pl.done = std::min(have, rest);
    std::memcpy(pl.dest, payload + head, pl.done);
    pl.pad = wire::padded(h.length) - h.length - (have - pl.done);
    c->rx_begin = c->rx_end = 0;
    int n = ep_ack(c->ep, h.ack);
    // Only padding missing: the payload is complete (delivered even if the connection broke
    // in ep_ack's callbacks, as a whole frame is; gone if they closed it).
    if (pl.active && pl.done == pl.rest)
        n += place_finish(c);
    return n;
}

// Deliver the complete frames in the receive buffer. Returns the callbacks made.
int parse(Conn *c)
{
    Endpoint *ep = c->ep;
    Module *m = c->module;
    int n = 0;
    // established, or salvage (ep_run_failure): a connection that breaks during a callback
    // stops here, and the rest waits for ep_run_failure.
    const ConnState live = c->state;
    while (c->state == live && !c->placing.active) {
        if (c->rx_skip) { // the padding of a frame placed
            const size_t drop = std::min(c->rx_skip, c->rx_end - c->rx_begin);
            c->rx_begin += drop;
            c->rx_skip -= drop;
        }
        const size_t avail = c->rx_end - c->rx_begin;
        if (avail < wire::kFrameHeaderSize)
            break;
        unsigned char *p = c->rx + c->rx_begin;
        const wire::FrameHeader h = wire::decode_frame_header(p);
        if (const std::string bad = check_header(c, h); !bad.empty()) {
            if (live == ConnState::salvage) {
                debug(1, "%s: what is left of the broken connection to %s ends in %s",
                      m->name().c_str(), describe(ep).c_str(), bad.c_str());
                conn_close(c);
                return n;
            }
            ep_down(ep, EpState::failed, WEFT_ERR_LINK_DOWN,
                    describe(ep) + " sent " + bad + "; connection closed", true);
            return n;
        }
        const size_t total = wire::frame_size(h.length);
        if (avail < total) {
            if (live == ConnState::established && h.type == wire::kData &&
                !(params.rdma && rdma_tag(h.tag)))
                n += place_start(c, h, p, avail);
            break;
        }
        // Consumed before any callback: the payload stays in place (the buffer is neither
        // moved nor freed before this progress call ends) while the callback runs.
        c->rx_begin += total;
        n += ep_ack(ep, h.ack);
        if (c->state != live)
            return n;
        if (h.type == wire::kData && params.rdma && rdma_tag(h.tag)) [[unlikely]] {
            ++ep->recv_count;
            if (const std::string bad =
                    rdma_frame(ep, h.tag, p + wire::kFrameHeaderSize, h.length, &n);
                !bad.empty()) {
                if (live == ConnState::salvage) {
                    conn_close(c);
                    return n;
                }
                ep_down(ep, EpState::failed, WEFT_ERR_LINK_DOWN,
                        describe(ep) + " sent " + bad + "; connection closed", true);
                return n;
            }
        } else if (h.type == wire::kData) {
            ++ep->recv_count;
            const weft_btl_segment_t seg{p + wire::kFrameHeaderSize, h.length};
            n += deliver(m, ep, h.tag, &seg, 1, 0);
        } else if (h.type == wire::kBye) {
            peer_left(ep);
            return n;
        }
    }
    if (c->rx_begin == c->rx_end)
        c->rx_begin = c->rx_end = 0;
    return n;
}

// Room for the next recv: the unconsumed bytes move to the front when the frame they begin
// would not fit behind them, and the buffer grows to hold that frame.
bool rx_room(Conn *c)
{
    const size_t pending = c->rx_end - c->rx_begin;
    size_t need = kRxChunk;
    if (pending >= wire::kFrameHeaderSize) { // a header parse() has checked
        // Room for several frames of that size: a peer streaming large fragments is read in
        // large recv calls, and a frame cut by the end of one read rarely has to move.
        const size_t frame = wire::frame_size(wire::get32(c->rx + c->rx_begin + 4));
        // (Never less than the frame itself, whatever its size.)
        need = std::max({need, frame, frame > kRxChunk ? std::min(4 * frame, kRxStreamMax) : 0});
    }
    if (c->rx_cap < need) {
        const size_t cap = (need + 63) & ~size_t(63);
        auto *nb = static_cast<unsigned char *>(std::aligned_alloc(64, cap));
        if (!nb)
            return false;
        if (pending)
            std::memcpy(nb, c->rx + c->rx_begin, pending);
        std::free(c->rx);
        c->rx = nb;
        c->rx_cap = cap;
        c->rx_begin = 0;
        c->rx_end = pending;
    } else if (c->rx_cap - c->rx_begin < need || c->rx_end == c->rx_cap) {
        std::memmove(c->rx, c->rx + c->rx_begin, pending);
        c->rx_begin = 0;
        c->rx_end = pending;
    }
    return true;
}

// The next recv on c, of at most `limit` bytes: into the placement under way, else into the
// receive buffer. *space: the bytes asked for. -1 with errno ENOMEM if the buffer cannot grow.
ssize_t recv_next(Conn *c, size_t limit, size_t *space)
{
    if (c->placing.active) {
        Conn::Placing &pl = c->placing;
        *space = std::min(limit, pl.rest - pl.done);
        return recv(c->fd, pl.dest + pl.done, *space, MSG_DONTWAIT);
    }
    if (!rx_room(c)) {
        *space = 0;
        errno = ENOMEM;
        return -1;
    }
    *space = std::min(limit, c->rx_cap - c->rx_end);
    return recv(c->fd, c->rx + c->rx_end, *space, MSG_DONTWAIT);
}

// r > 0 bytes recv_next read: on with the placement, or the frames they complete. Returns the
// callbacks made.
int took(Conn *c, size_t r)
{
    if (c->placing.active) {
        c->placing.done += r;
        return c->placing.done == c->placing.rest ? place_finish(c) : 0;
    }
    c->rx_end += r;
    return parse(c);
}

int conn_read(Conn *c)
{
    Endpoint *ep = c->ep;
    int n = 0;
    for (int round = 0; round < kReadRounds && c->state == ConnState::established; ++round) {
        size_t space = 0;
        const ssize_t r = recv_next(c, kReadChunk, &space);
        if (r < 0 && errno == ENOMEM) {
            conn_error(c, "no memory for a receive buffer for " + describe(ep));
            return n;
        }
        if (r == 0) {
            conn_error(c, "lost the connection to " + describe(ep) +
                              ": closed without a goodbye (the process may have died)");
            return n;
        }
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (would_block(errno))
                break;
            conn_error(c, socket_error_text(ep, errno));
            return n;
        }
        n += took(c, size_t(r));
        if (size_t(r) < space)
            break;
    }
    // Acknowledge what arrived: on the next frame this process sends to the peer (a reply
    // sent from the callbacks, or by the application before its next progress call), else
    // with an ACK frame from the next progress call (flush_acks).
    if (c->state == ConnState::established && ep->recv_count != ep->ack_sent && !ep->ack_due) {
        ep->ack_due = true;
        component->ack_due.push_back(ep);
        component->note_work();
    }
    return n;
}

// ---- handshake ---------------------------------------------------------------------------

// Whether the first bytes of a handshake message are not btl/tcp's of this version.
bool stranger_prefix(const Conn *c)
{
    return c->hs_in_done >= wire::kPrefixSize && (wire::get32(c->hs_in) != wire::kHelloMagic ||
                                                  wire::get16(c->hs_in + 4) != wire::kVersion);
}

// Read the rest of the peer's handshake message (hs_in_want bytes); true once it is complete,
// or once its first bytes show a stranger (another magic or version: the caller checks those
// first, and nothing else).
bool read_hello(Conn *c)
{
    while (c->hs_in_done < c->hs_in_want) {
        const ssize_t r =
            recv(c->fd, c->hs_in + c->hs_in_done, c->hs_in_want - c->hs_in_done, MSG_DONTWAIT);
        if (r > 0) {
            c->hs_in_done += size_t(r);
            if (stranger_prefix(c))
                break;
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && would_block(errno))
            return false;
        const std::string why = r == 0 ? "closed" : std::strerror(errno);
        if (c->initiator)
            conn_error(c, "connection to " + (c->ep ? describe(c->ep) : c->peer) +
                              " failed during the handshake: " + why);
        else {
            debug(2, "%s: connection from %s ended before its handshake: %s",
                  c->module->name().c_str(), c->peer.c_str(), why.c_str());
            conn_close(c);
        }
        return false;
    }
    c->hello = wire::decode_hello(c->hs_in);
    return true;
}

// Queue a handshake message behind what is still unwritten of the previous one, and write.
void send_handshake(Conn *c, const unsigned char *msg, size_t len, ConnState state)
{
    if (c->hs_out_done == c->hs_out_len)
        c->hs_out_done = c->hs_out_len = 0;
    std::memcpy(c->hs_out + c->hs_out_len, msg, len);
    c->hs_out_len += len;
    c->state = state;
    conn_flush(c);
}

// Acceptor: reply to the connector's (authenticated) hello.
void send_reply(Conn *c, const wire::Hello &h, ConnState state)
{
    unsigned char reply[wire::kHelloSize];
    wire::encode(h, reply);
    reply_mac(c, reply, reply + wire::kHelloFieldsSize);
    send_handshake(c, reply, sizeof reply, state);
}

void establish(Endpoint *ep, Conn *c)
{
    remove_from(component->handshaking, c);
    remove_from(component->waiting, ep);
    c->deadline = 0;
    if (ep->attempt == c)
        ep->attempt = nullptr;
    c->ep = ep;
    ep->conn = c;
    ep->state = EpState::established;
    c->state = ConnState::established;
    debug(1, "%s: connected to %s (%s)", ep->module->name().c_str(), describe(ep).c_str(),
          c->initiator ? "outgoing" : "incoming");
}

// Connector: the acceptor's answer to our kHello.
void process_reply(Conn *c)
{
    Endpoint *ep = c->ep;
    const wire::Hello &h = c->hello;
    if (h.magic == wire::kHelloMagic && h.version == wire::kVersion) {
        unsigned char mac[wire::kMacSize];
        reply_mac(c, c->hs_in, mac);
        if (!mac_ok(mac, h.mac)) {
            conn_error(c, fmt("the process at %s, answering for rank %d, did not prove that it "
                              "belongs to this job (its reply's MAC is wrong: another job's "
                              "secret, or none; this process's secret: %s)",
                              c->peer.c_str(), ep->rank, weft_runtime_job_secret_source()));
            return;
        }
    }
    if (h.magic != wire::kHelloMagic || h.version != wire::kVersion || h.job != component->job ||
        h.src_rank != uint32_t(ep->rank) || h.dst_rank != uint32_t(component->my_rank) ||
        h.src_module != ep->peer_module || h.dst_module != uint16_t(ep->module->index)) {
        conn_error(c,
                   fmt("the process at %s is not rank %d's module %u of this job (it "
                       "answered: magic 0x%08" PRIx32 ", version %u, rank %" PRIu32 ", module %u)",
                       c->peer.c_str(), ep->rank, ep->peer_module, h.magic, h.version, h.src_rank,
                       h.src_module));
        return;
    }
    switch (h.kind) {
    case wire::kAccept:
        establish(ep, c);
        conn_flush(c);
        return;
    case wire::kRejectRace:
        // Our connection lost to the one the lower rank opened; that one carries the frames.
        conn_close(c);
        if (ep->state == EpState::connecting) {
            ep->state = EpState::waiting_peer;
            ep->deadline =
                params.connect_timeout_ms > 0 ? now_ms() + uint64_t(params.connect_timeout_ms) : 0;
            if (ep->deadline)
                component->waiting.push_back(ep);
            component->note_work();
        }
        return;
    case wire::kReject:
        if (h.max_send_size != params.max_send_size)
            conn_error(c, fmt("%s refused the connection: btl_tcp_max_send_size is %zu here and "
                              "%" PRIu32 " there; set it alike on every rank",
                              describe(ep).c_str(), params.max_send_size, h.max_send_size));
        else
            conn_error(c, describe(ep) + " refused the connection (its endpoint for this "
                                         "process is gone or has failed)");
        return;
    default:
        conn_error(
            c, fmt("%s answered the handshake with unknown kind %u", describe(ep).c_str(), h.kind));
    }
}

// Acceptor: answer with a refusal, then close.
void refuse(Conn *c, uint16_t kind)
{
    const wire::Hello &h = c->hello;
    remove_from(component->handshaking, c);
    remove_from(component->parked, c);
    set_events(c, EPOLLIN);
    send_reply(c, my_hello(kind, c->module, h.src_rank, h.src_module), ConnState::closing);
}

// Acceptor, valid kHello: which connection carries the endpoint's frames.
void decide(Conn *c)
{
    Module *m = c->module;
    const wire::Hello &h = c->hello;
    const auto it = m->endpoints.find(int(h.src_rank));
    if (it == m->endpoints.end()) {
        // add_procs has not reached this peer yet: answer then (conn_adopt_parked).
        remove_from(component->handshaking, c);
        c->deadline = 0;
        c->state = ConnState::parked;
        set_events(c, 0);
        component->parked.push_back(c);
        component->note_work();
        return;
    }
    Endpoint *ep = it->second;
    // An authenticated peer connecting again to an endpoint that failed has started its own
    // over (it re-admitted the rail): so does this one.
    if (ep->state == EpState::failed)
        ep_restart(ep);
    if (ep->state == EpState::failed || ep->state == EpState::closed) {
        refuse(c, wire::kReject);
        return;
    }
    const bool peer_is_lower = int(h.src_rank) < component->my_rank;
    if (ep->conn) {
        // The loser of a race whose winner (ours) got here first. Anything else disagrees with
        // the established endpoint (a duplicate, other limits, another module): it is refused
        // and logged, and the endpoint goes on untouched.
        if (ep->conn->initiator && !peer_is_lower && h.src_module == ep->peer_module &&
            h.max_send_size == params.max_send_size) {
            refuse(c, wire::kRejectRace);
            return;
        }
        warn("%s: refused a connection from %s as rank %" PRIu32 " (module %u, "
             "btl_tcp_max_send_size %" PRIu32 "): this process is connected to rank %d already "
             "(module %u, btl_tcp_max_send_size %zu); that connection goes on",
             m->name().c_str(), c->peer.c_str(), h.src_rank, h.src_module, h.max_send_size,
             ep->rank, ep->peer_module, params.max_send_size);
        refuse(c, wire::kReject);
        return;
    }
    if (h.max_send_size != params.max_send_size) {
        // Not connected yet, and the hello is authenticated: the peer itself is set up
        // differently, so the link cannot work; both sides report it.
        refuse(c, wire::kReject);
        ep_down(ep, EpState::failed, WEFT_ERR_LINK_DOWN,
                fmt("%s: btl_tcp_max_send_size is %zu here and %" PRIu32
                    " there; set it alike on every rank",
                    describe(ep).c_str(), params.max_send_size, h.max_send_size),
                true);
        return;
    }
    if (h.src_module != ep->peer_module) {
        warn("%s: rank %" PRIu32 " connects from its module %u, but this process pairs it with "
             "module %u; connection refused",
             m->name().c_str(), h.src_rank, h.src_module, ep->peer_module);
        refuse(c, wire::kReject);
        return;
    }
    if (ep->attempt) {
        if (!peer_is_lower) {
            refuse(c, wire::kRejectRace);
            return;
        }
        conn_close(ep->attempt); // no frame went over it: frames wait for kAccept
    }
    establish(ep, c);
    send_reply(c, my_hello(wire::kAccept, m, h.src_rank, h.src_module), ConnState::established);
}

// Acceptor: the connector's kHello has arrived.
void process_hello(Conn *c)
{
    Module *m = c->module;
    const wire::Hello &h = c->hello;
    const std::string mname = m->name();
    const char *mod = mname.c_str();
    if (h.magic != wire::kHelloMagic) {
        warn("%s: dropped a connection from %s: not a Weft btl/tcp peer (it began with "
             "0x%08" PRIx32 ", the handshake begins with 0x%08" PRIx32 ")",
             mod, c->peer.c_str(), h.magic, wire::kHelloMagic);
        conn_close(c);
        return;
    }
    if (h.version != wire::kVersion) {
        warn("%s: dropped a connection from %s: it speaks btl/tcp wire version %u, this "
             "process speaks %u",
             mod, c->peer.c_str(), h.version, wire::kVersion);
        conn_close(c);
        return;
    }
    if (h.job != component->job) {
        warn("%s: dropped a connection from %s: it belongs to another job", mod, c->peer.c_str());
        conn_close(c);
        return;
    }
    if (h.kind != wire::kHello || h.dst_rank != uint32_t(component->my_rank) ||
        h.dst_module != uint16_t(m->index) || h.src_rank >= uint32_t(component->world_size) ||
        h.src_rank == uint32_t(component->my_rank)) {
        warn("%s: dropped a connection from %s: its handshake (kind %u, from rank %" PRIu32
             " module %u to rank %" PRIu32 " module %u) is not for this process (rank %d "
             "module %d)",
             mod, c->peer.c_str(), h.kind, h.src_rank, h.src_module, h.dst_rank, h.dst_module,
             component->my_rank, m->index);
        conn_close(c);
        return;
    }
    unsigned char mac[wire::kMacSize];
    hello_mac(c, c->hs_in, mac);
    if (!mac_ok(mac, h.mac)) {
        warn("%s: dropped a connection from %s: its hello as rank %" PRIu32 " does not prove "
             "that it belongs to this job (wrong MAC: another job's secret, or none; this "
             "process's secret: %s); nothing changed",
             mod, c->peer.c_str(), h.src_rank, weft_runtime_job_secret_source());
        conn_close(c);
        return;
    }
    std::memcpy(c->hello_raw, c->hs_in, wire::kHelloSize);
    decide(c);
}

// Connector: the acceptor's greeting has arrived; say who we are, with proof.
void process_greeting(Conn *c)
{
    Endpoint *ep = c->ep;
    const wire::Greeting g = wire::decode_greeting(c->hs_in);
    if (g.magic != wire::kHelloMagic || g.version != wire::kVersion || g.kind != wire::kGreeting ||
        c->hs_in_done != wire::kGreetingSize) {
        conn_error(c, fmt("the process at %s is not rank %d's btl/tcp (wire version %u): it "
                          "began with 0x%08" PRIx32 ", version %u, kind %u",
                          c->peer.c_str(), ep->rank, wire::kVersion, g.magic, g.version, g.kind));
        return;
    }
    std::memcpy(c->greeting, c->hs_in, wire::kGreetingSize);
    wire::Hello h = my_hello(wire::kHello, ep->module, uint32_t(ep->rank), ep->peer_module);
    make_nonce(h.nonce);
    wire::encode(h, c->hello_raw);
    hello_mac(c, c->hello_raw, c->hello_raw + wire::kHelloFieldsSize);
    c->hs_in_done = 0;
    c->hs_in_want = wire::kHelloSize;
    send_handshake(c, c->hello_raw, wire::kHelloSize, ConnState::hello_sent);
}

// Connector: the TCP connection is up (or failed); say who we are.
void conn_connected(Conn *c)
{
    Endpoint *ep = c->ep;
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
        err = errno;
    if (err != 0) {
        conn_error(c, "cannot connect to " + describe(ep) + ": " + std::strerror(err));
        return;
    }
    // The connection is up; from here the peer may take its time (its add_procs), so no
    // deadline: a dead peer shows through TCP_USER_TIMEOUT and keepalive.
    remove_from(component->handshaking, c);
    c->deadline = 0;
    c->state = ConnState::greeting_wait; // the acceptor speaks first
    c->hs_in_done = 0;
    c->hs_in_want = wire::kGreetingSize;
    set_events(c, EPOLLIN);
}

Conn *new_conn(Module *m, int fd, bool initiator, ConnState state, const std::string &peer)
{
    Conn *c = new Conn;
    c->module = m;
    c->fd = fd;
    c->initiator = initiator;
    c->state = state;
    c->peer = peer;
    component->conns.push_back(c);
    component->note_work();
    return c;
}

// Start my connection attempt for ep. False (and ep failed) if it cannot even start.
bool ep_connect(Endpoint *ep)
{
    Module *m = ep->module;
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        ep_down(ep, EpState::failed, WEFT_ERR_LINK_DOWN,
                "cannot create a socket for " + describe(ep) + ": " + std::strerror(errno), true);
        return false;
    }
    tune_socket(fd);
    choose_congestion(fd, m->self.addr, ep->peer.addr);
    // Leave from this module's interface address, so that a rail stays on its interface.
    sockaddr_in local{};
    local.sin_family = AF_INET;
    local.sin_addr.s_addr = htonl(m->self.addr);
    if (bind(fd, reinterpret_cast<sockaddr *>(&local), sizeof local) != 0)
        debug(2, "%s: cannot bind the source address: %s", m->name().c_str(), std::strerror(errno));

    Conn *c =
        new_conn(m, fd, true, ConnState::connecting, sockaddr_string(ep->peer.addr, ep->peer.port));
    c->ep = ep;
    ep->attempt = c;
    ep->state = EpState::connecting;
    if (!watch(c, EPOLLOUT)) {
        const int err = errno;
        conn_error(c, "cannot watch a socket for " + describe(ep) + ": " + std::strerror(err));
        return false;
    }
    if (params.connect_timeout_ms > 0) {
        c->deadline = now_ms() + uint64_t(params.connect_timeout_ms);
        component->handshaking.push_back(c);
    }
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(ep->peer.port);
    to.sin_addr.s_addr = htonl(ep->peer.addr);
    debug(2, "%s: connecting to %s", m->name().c_str(), describe(ep).c_str());
    if (connect(fd, reinterpret_cast<sockaddr *>(&to), sizeof to) == 0) {
        conn_connected(c);
    } else if (errno != EINPROGRESS) {
        conn_error(c, "cannot connect to " + describe(ep) + ": " + std::strerror(errno));
        return false;
    }
    return ep->state != EpState::failed;
}

} // namespace

Conn::~Conn() { std::free(rx); }

std::string describe(const Endpoint *ep)
{
    const char *host = ep->proc ? weft_proc_hostname(ep->proc) : nullptr;
    return fmt("rank %d (%s) at %s over %s", ep->rank, host ? printable(host).c_str() : "?",
               sockaddr_string(ep->peer.addr, ep->peer.port).c_str(),
               ep->module->self.name.c_str());
}

void tune_socket(int fd)
{
    auto set = [fd](int level, int name, int value, const char *what) {
        if (setsockopt(fd, level, name, &value, sizeof value) != 0)
            debug(1, "setsockopt %s=%d: %s", what, value, std::strerror(errno));
    };
    set(IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY");
    if (params.user_timeout_ms > 0)
        set(IPPROTO_TCP, TCP_USER_TIMEOUT, int(params.user_timeout_ms), "TCP_USER_TIMEOUT");
    if (params.keepalive) {
        set(SOL_SOCKET, SO_KEEPALIVE, 1, "SO_KEEPALIVE");
        if (params.keepalive_time_s > 0)
            set(IPPROTO_TCP, TCP_KEEPIDLE, int(params.keepalive_time_s), "TCP_KEEPIDLE");
        if (params.keepalive_intvl_s > 0)
            set(IPPROTO_TCP, TCP_KEEPINTVL, int(params.keepalive_intvl_s), "TCP_KEEPINTVL");
        if (params.keepalive_probes > 0)
            set(IPPROTO_TCP, TCP_KEEPCNT, int(params.keepalive_probes), "TCP_KEEPCNT");
    }
    if (params.sndbuf > 0)
        set(SOL_SOCKET, SO_SNDBUF, int(params.sndbuf), "SO_SNDBUF");
    if (params.rcvbuf > 0)
        set(SOL_SOCKET, SO_RCVBUF, int(params.rcvbuf), "SO_RCVBUF");
}

void choose_congestion(int fd, uint32_t mine, uint32_t theirs)
{
    const std::string &cc = params.local_congestion;
    if (cc.empty() || (mine != theirs && (theirs >> 24) != 127))
        return;
    if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc.data(), socklen_t(cc.size())) == 0) {
        debug(2, "connection %s - %s stays inside this host: congestion control %s",
              ipv4_string(mine).c_str(), ipv4_string(theirs).c_str(), cc.c_str());
        return;
    }
    static bool warned = false;
    if (!std::exchange(warned, true))
        warn("btl_tcp_local_congestion %s cannot be set: %s (see the sysctls "
             "net.ipv4.tcp_available_congestion_control and tcp_allowed_congestion_control); "
             "connections inside this host keep the system's algorithm",
             cc.c_str(), std::strerror(errno));
}

weft_status_t ep_enqueue(Endpoint *ep, Frag *f)
{
    switch (ep->state) {
    case EpState::failed: return WEFT_ERR_LINK_DOWN;
    case EpState::closed: return WEFT_ERR_UNREACH;
    case EpState::idle:
        if (!ep_connect(ep))
            return WEFT_ERR_LINK_DOWN;
        break;
    default: break;
    }
    f->endpoint = ep;
    f->state = FragState::queued;
    f->written = 0;
    f->header_built = false;
    ep->outq.push_back(f);
    if (ep->state != EpState::established || !ep->conn || (ep->conn->events & EPOLLOUT))
        return WEFT_IN_PROGRESS; // written when the connection is ready / has room
    // A bulk frame waits for the next progress call, so that the fragments a PML hands over
    // in one go leave in one sendmsg (fewer, larger writes: the kernel pushes once); a
    // small one is written at once (latency).
    if (f->frame_type == wire::kData && data_bytes(f) >= kWriteBatchMin) {
        if (!ep->write_due) {
            ep->write_due = true;
            component->write_due.push_back(ep);
            component->note_work();
        }
        return WEFT_IN_PROGRESS;
    }
    conn_flush(ep->conn);
    return WEFT_IN_PROGRESS;
}

void flush_writes()
{
    std::vector<Endpoint *> due;
    due.swap(component->write_due);
    for (Endpoint *ep : due) {
        ep->write_due = false;
        if (ep->state == EpState::established && ep->conn && !(ep->conn->events & EPOLLOUT))
            conn_flush(ep->conn);
    }
}

void ep_down(Endpoint *ep, EpState final_state, weft_status_t status, const std::string &reason,
             bool report, bool salvage)
{
    if (ep->state == EpState::failed || ep->state == EpState::closed)
        return;
    ep->state = final_state;
    if (Conn *c = ep->conn; c && salvage && c->state == ConnState::established) {
        // Kept, unwatched, for ep_run_failure to read out: a callback may be using its buffer.
        epoll_ctl(component->epfd, EPOLL_CTL_DEL, c->fd, nullptr);
        c->state = ConnState::salvage;
        ep->conn = nullptr;
        ep->salvage = c;
    } else if (c) {
        conn_close(c);
    }
    if (ep->attempt)
        conn_close(ep->attempt);
    remove_from(component->waiting, ep);
    ep->failure_pending = true;
    ep->failure_report = report;
    ep->failure_status = status;
    ep->failure_reason = reason;
    component->failing.push_back(ep);
    component->note_work();
    debug(1, "%s: %s", ep->module->name().c_str(), reason.c_str());
}

// Read what the broken connection's socket still holds (a socket in error still gives the
// bytes it received first), delivering the whole frames. Returns the callbacks made.
int salvage(Conn *c)
{
    int n = parse(c);
    size_t got = 0;
    while (c->state == ConnState::salvage) {
        size_t space = 0;
        const ssize_t r = recv_next(c, SIZE_MAX, &space);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += size_t(r);
        n += took(c, size_t(r));
    }
    if (c->state == ConnState::salvage && c->ep)
        debug(1,
              "%s: %zu bytes read from the broken connection to %s after it broke, %d "
              "callbacks made, %zu bytes of a frame left",
              c->module->name().c_str(), got, describe(c->ep).c_str(), n, c->rx_end - c->rx_begin);
    return n;
}

bool ep_restart(Endpoint *ep)
{
    if (ep->state != EpState::failed || ep->failure_pending || ep->conn || ep->attempt ||
        ep->salvage || !ep->outq.empty() || !ep->unacked.empty() || !ep->gets.empty())
        return false;
    for (auto *list : {&component->failing, &component->waiting, &component->acking,
                       &component->ack_due, &component->write_due})
        remove_from(*list, ep);
    ep->state = EpState::idle;
    ep->next_seq = ep->peer_acked = ep->recv_count = ep->ack_sent = 0;
    ep->bye_queued = ep->in_acking = ep->ack_due = ep->write_due = false;
    ep->deadline = 0;
    ep->failure_report = false;
    ep->failure_status = WEFT_SUCCESS;
    debug(1, "%s: the endpoint for %s starts over (it failed: %s)", ep->module->name().c_str(),
          describe(ep).c_str(), ep->failure_reason.c_str());
    ep->failure_reason.clear();
    return true;
}

int ep_run_failure(Endpoint *ep)
{
    if (!ep->failure_pending)
        return 0;
    ep->failure_pending = false;
    Module *m = ep->module;
    int n = 0;
    Conn::Placing cut; // a placement the failure cut short: reported after the error callback
    if (Conn *c = ep->salvage) {
        n += salvage(c);
        cut = c->placing;
        c->placing.active = false;
        conn_close(c);
    }
    if (ep->failure_report && m->error_fn) {
        m->error_fn(m->base(), WEFT_BTL_ERROR_FLAG_LINK, ep->proc, ep->failure_reason.c_str(),
                    m->error_cbdata);
        ++n;
    }
    if (cut.active)
        n += place_failed(m, ep, cut);
    return n + drain(ep, ep->failure_status);
}

void ep_release(const std::vector<Endpoint *> &eps, weft_status_t status)
{
    // Say goodbye after whatever is queued.
    std::vector<Conn *> open;
    for (Endpoint *ep : eps) {
        if (ep->state != EpState::established || !ep->conn)
            continue;
        if (Frag *bye = control_frag(ep, wire::kBye)) {
            ep->outq.push_back(bye);
            ep->bye_queued = true;
        }
        conn_flush(ep->conn);
        if (ep->conn)
            open.push_back(ep->conn);
    }
    // Linger until the peer's kernel has acknowledged every byte and our FIN (SIOCOUTQ is 0),
    // not for the peer process: data a host has acknowledged stays readable for the peer even
    // if our close() then resets the connection, so waiting on the peer process to close its
    // side (and so on its progress, or on the order in which it releases its modules) gains
    // nothing.
    std::vector<bool> shut(open.size()), hup(open.size());
    const uint64_t deadline = now_ms() + uint64_t(std::max<int64_t>(params.linger_ms, 0));
    for (;;) {
        std::vector<pollfd> pfds;
        std::vector<size_t> which;
        bool busy = false;
        for (size_t i = 0; i < open.size(); ++i) {
            Conn *c = open[i]; // closed ones stay allocated until reap_zombies
            if (c->state != ConnState::established)
                continue;
            if (!shut[i] && c->ep->outq.empty()) {
                shutdown(c->fd, SHUT_WR);
                shut[i] = true;
            }
            int queued = 0;
            if (!shut[i] || (ioctl(c->fd, SIOCOUTQ, &queued) == 0 && queued > 0))
                busy = true;
            if (!hup[i]) { // once the peer has shut down too, POLLHUP would not stop
                pfds.push_back({c->fd, short(shut[i] ? 0 : POLLOUT), 0});
                which.push_back(i);
            }
        }
        const uint64_t now = now_ms();
        if (!busy || now >= deadline)
            break;
        // Wakes for POLLOUT and errors; acknowledgements are looked at again after 1 ms.
        if (poll(pfds.data(), pfds.size(), 1) < 0 && errno != EINTR)
            break;
        for (size_t k = 0; k < pfds.size(); ++k) {
            Conn *c = open[which[k]];
            if (pfds[k].revents & (POLLERR | POLLNVAL))
                conn_close(c); // reset: nothing more can be saved
            else if ((pfds[k].revents & POLLOUT) && c->state == ConnState::established)
                conn_flush(c);
            if (pfds[k].revents & POLLHUP)
                hup[which[k]] = true;
        }
    }
    for (Endpoint *ep : eps) {
        if (ep->conn)
            conn_close(ep->conn);
        if (ep->attempt)
            conn_close(ep->attempt);
        if (ep->salvage)
            conn_close(ep->salvage);
        ep->state = EpState::closed;
        remove_from(component->failing, ep);
        remove_from(component->waiting, ep);
        remove_from(component->acking, ep);
        remove_from(component->ack_due, ep);
        remove_from(component->write_due, ep);
        drain(ep, status);
        ep->module->endpoints.erase(ep->rank);
        delete ep;
    }
}

void conn_accepted(Module *m, int fd, uint32_t peer_addr, const std::string &peer)
{
    tune_socket(fd);
    choose_congestion(fd, m->self.addr, peer_addr);
    Conn *c = new_conn(m, fd, false, ConnState::hello_wait, peer);
    if (!watch(c, EPOLLIN)) {
        debug(1, "%s: cannot watch the connection from %s: %s", m->name().c_str(), peer.c_str(),
              std::strerror(errno));
        close(fd);
        remove_from(component->conns, c);
        delete c;
        return;
    }
    if (params.connect_timeout_ms > 0) {
        c->deadline = now_ms() + uint64_t(params.connect_timeout_ms);
        component->handshaking.push_back(c);
    }
    debug(2, "%s: accepted a connection from %s", m->name().c_str(), peer.c_str());
    wire::Greeting g;
    make_nonce(g.nonce);
    wire::encode(g, c->greeting);
    c->hs_in_want = wire::kHelloSize;
    send_handshake(c, c->greeting, wire::kGreetingSize, ConnState::hello_wait);
}

int conn_event(Conn *c, uint32_t events)
{
    switch (c->state) {
    case ConnState::closed:
    case ConnState::salvage: return 0; // unwatched; only ep_run_failure reads it
    case ConnState::connecting: conn_connected(c); return 0;
    case ConnState::greeting_wait:
        if (read_hello(c))
            process_greeting(c);
        return 0;
    case ConnState::hello_sent:
        if (events & EPOLLOUT)
            conn_flush(c);
        if (c->state == ConnState::hello_sent && (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) &&
            read_hello(c))
            process_reply(c);
        return 0;
    case ConnState::hello_wait:
        if (events & EPOLLOUT)
            conn_flush(c); // the rest of the greeting
        if (c->state == ConnState::hello_wait && read_hello(c))
            process_hello(c);
        return 0;
    case ConnState::parked: // only errors are watched
        debug(2, "%s: parked connection from %s went away", c->module->name().c_str(),
              c->peer.c_str());
        conn_close(c);
        return 0;
    case ConnState::closing:
        if (events & (EPOLLERR | EPOLLHUP))
            conn_close(c);
        else if (events & EPOLLOUT)
            conn_flush(c);
        return 0;
    case ConnState::established: {
        int n = 0;
        if (events & EPOLLOUT)
            conn_flush(c);
        if (c->state == ConnState::established && (events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
            n += conn_read(c);
        return n;
    }
    }
    return 0;
}

void conn_close(Conn *c)
{
    if (c->state == ConnState::closed)
        return;
    if (c->placing.active) {
        c->placing.active = false;
        if (c->ep)
            place_failed(c->module, c->ep, c->placing);
    }
    if (c->fd >= 0) {
        epoll_ctl(component->epfd, EPOLL_CTL_DEL, c->fd, nullptr);
        close(c->fd);
        c->fd = -1;
    }
    c->state = ConnState::closed;
    if (Endpoint *ep = c->ep) {
        if (ep->conn == c)
            ep->conn = nullptr;
        if (ep->attempt == c)
            ep->attempt = nullptr;
        if (ep->salvage == c)
            ep->salvage = nullptr;
        c->ep = nullptr;
    }
    remove_from(component->conns, c);
    remove_from(component->handshaking, c);
    remove_from(component->parked, c);
    component->zombies.push_back(c);
    component->note_work();
}

void conn_adopt_parked(Module *m)
{
    const std::vector<Conn *> parked = component->parked;
    for (Conn *c : parked) {
        if (c->module != m || !m->endpoints.count(int(c->hello.src_rank)))
            continue;
        remove_from(component->parked, c);
        set_events(c, EPOLLIN);
        c->state = ConnState::hello_wait;
        decide(c);
    }
}

void flush_acks()
{
    std::vector<Endpoint *> due;
    due.swap(component->ack_due);
    for (Endpoint *ep : due) {
        ep->ack_due = false;
        if (ep->state == EpState::established && ep->conn && ep->recv_count != ep->ack_sent &&
            !(ep->conn->events & EPOLLOUT))
            conn_flush(ep->conn);
    }
}

int check_kernel_acks()
{
    Component *cp = component;
    if (cp->acking.empty())
        return 0;
    const uint64_t now = now_ms();
    int n = 0;
    for (size_t i = 0; i < cp->acking.size();) {
        Endpoint *ep = cp->acking[i];
        if (ep->unacked.empty() || !ep->conn) {
            ep->in_acking = false;
            cp->acking[i] = cp->acking.back();
            cp->acking.pop_back();
            continue;
        }
        ++i;
        // Give the peer process a moment to answer with its own ack: cheaper than a syscall.
        if (now - ep->unacked.front()->written_ms < kKernelAckDelayMs)
            continue;
        int queued = 0;
        if (ioctl(ep->conn->fd, SIOCOUTQ, &queued) != 0)
            continue;
        const uint64_t acked = ep->conn->bytes_written - uint64_t(queued);
        // A put waits for the peer process: its data must be in place before the FIN the
        // PML sends behind its completion (btl_tcp_rdma.h).
        while (!ep->unacked.empty() && ep->unacked.front()->wire_end <= acked &&
               ep->unacked.front()->kind != FragKind::rdma_put) {
            Frag *f = ep->unacked.front();
            ep->unacked.pop_front();
            ++n;
            complete(f, WEFT_SUCCESS);
            if (!ep->conn) // a callback cannot release the endpoint, but be safe
                break;
        }
    }
    return n;
}

int check_timers()
{
    Component *cp = component;
    if (cp->handshaking.empty() && cp->waiting.empty())
        return 0;
    const uint64_t now = now_ms();
    if (now < cp->next_timer_check)
        return 0;
    cp->next_timer_check = now + 50;
    const std::vector<Conn *> conns = cp->handshaking;
    for (Conn *c : conns) {
        if (!c->deadline || now < c->deadline || c->state == ConnState::closed)
            continue;
        if (c->initiator) {
            conn_error(c, fmt("cannot connect to %s: no answer within btl_tcp_connect_timeout "
                              "(%" PRId64 " ms)",
                              c->ep ? describe(c->ep).c_str() : c->peer.c_str(),
                              params.connect_timeout_ms));
        } else {
            debug(1, "%s: dropped the connection from %s: no handshake within %" PRId64 " ms",
                  c->module->name().c_str(), c->peer.c_str(), params.connect_timeout_ms);
            conn_close(c);
        }
    }
    const std::vector<Endpoint *> eps = cp->waiting;
    for (Endpoint *ep : eps) {
        if (ep->state == EpState::waiting_peer && ep->deadline && now >= ep->deadline)
            ep_down(ep, EpState::failed, WEFT_ERR_LINK_DOWN,
                    fmt("%s did not connect within btl_tcp_connect_timeout (%" PRId64
                        " ms) after a simultaneous connect",
                        describe(ep).c_str(), params.connect_timeout_ms),
                    true);
    }
    return 0;
}

} // namespace weft::btl::tcp
