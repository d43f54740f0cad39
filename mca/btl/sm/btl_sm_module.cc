// btl/sm: module operations, the ring protocol and progress.
//
// Ring protocol (single producer: the peer that owns the ring index; single consumer: the
// segment's owner; see btl_sm_segment.h for the layout). The sender checks for room against
// its cached head (reloading the shared head only when the cache says full), writes the
// message, then publishes it with a release store of the stamp in its first slot. The receiver
// loads the stamp at its head with acquire, hands the message to the tag's callback, clears
// the first word of the message's other slots, and gives the slots back with a release store
// of head. A pool entry's data belongs to the sender until head passes that entry, which is
// also how the sender learns that the fragment is complete: no message flows back.
#include "btl_sm_module.h"
#include "btl_sm_copy.h"

#include <weft/convertor.h>
#include <weft/runtime.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <sched.h>
#include <unistd.h>

namespace weft::btl::sm {

Module *g_module = nullptr;

Module *self(weft_btl_module_t *m) { return g_module && m == &g_module->base ? g_module : nullptr; }

Endpoint *endpoint_of(weft_btl_endpoint_t *e)
{
    auto *ep = reinterpret_cast<Endpoint *>(e);
    return ep && ep->magic == Endpoint::kEndpointMagic ? ep : nullptr;
}

namespace {

using Clock = std::chrono::steady_clock;
// How long sends to a peer may be stuck before we ask whether the peer still lives; the
// check itself is one flock() call.
constexpr auto kLivenessInterval = std::chrono::milliseconds(100);
// Stuck progress calls between two looks at the clock (progress_endpoint).
constexpr uint32_t kStuckPollsPerCheck = 256;

Frag *frag_of(weft_btl_descriptor_t *d)
{
    auto *f = reinterpret_cast<Frag *>(d);
    return f && f->magic == kFragMagic ? f : nullptr;
}

std::string peer_name(const Endpoint *ep)
{
    return "rank " + std::to_string(ep->world_rank) + " (local rank " +
           std::to_string(ep->peer_local) + ")";
}

// ---------------------------------------------------------------------------- free lists

Frag *small_new(Module *m)
{
    // Header and buffer in one block; the buffer starts on its own cache line.
    const size_t head = (sizeof(Frag) + kCacheLine - 1) / kCacheLine * kCacheLine;
    void *mem = ::operator new(head + m->inline_max, std::align_val_t(kCacheLine), std::nothrow);
    if (!mem)
        return nullptr;
    Frag *f = new (mem) Frag{};
    f->magic = kFragMagic;
    f->pooled = false;
    f->buf = static_cast<char *>(mem) + head;
    f->capacity = m->inline_max;
    try {
        m->small_all.push_back(f);
    } catch (...) {
        ::operator delete(mem, std::align_val_t(kCacheLine));
        return nullptr;
    }
    return f;
}

Frag *pool_get(Module *m)
{
    Frag *f = m->pool_free;
    if (f)
        m->pool_free = f->next;
    return f;
}

// Take a fragment able to hold size bytes: a small one if it fits, else a pool fragment.
Frag *frag_get(Module *m, size_t size)
{
    std::lock_guard g(m->lock);
    Frag *f = nullptr;
    if (size <= m->inline_max) {
        if ((f = m->small_free))
            m->small_free = f->next;
        else if (m->small_all.size() < m->cfg.free_list_max)
            f = small_new(m);
    }
    if (!f)
        f = pool_get(m);
    return f;
}

void frag_put_locked(Module *m, Frag *f)
{
    if (f->borrowed) {
        frag_put_locked(m, f->borrowed);
        f->borrowed = nullptr;
    }
    f->state = FragState::free;
    f->ep = nullptr;
    if (f->pooled) {
        if (f->poisoned)
            return; // a live peer may still read it: out of circulation for good
        f->next = m->pool_free;
        m->pool_free = f;
    } else {
        f->next = m->small_free;
        m->small_free = f;
    }
}

void frag_put(Module *m, Frag *f)
{
    std::lock_guard g(m->lock);
    frag_put_locked(m, f);
}

void frag_init(Frag *f, size_t size, uint8_t order, uint32_t flags)
{
    f->des = weft_btl_descriptor_t{.des_segments = &f->seg,
                                   .des_segment_count = 1,
                                   .des_cbfunc = nullptr,
                                   .des_cbdata = nullptr,
                                   .des_context = nullptr,
                                   .des_flags = flags,
                                   .order = order,
                                   .reserved = {0, 0, 0}};
    f->seg = weft_btl_segment_t{.seg_addr = f->buf, .seg_len = size};
    f->state = FragState::caller;
    f->poisoned = false;
    f->borrowed = nullptr;
    f->ep = nullptr;
    f->next = nullptr;
}

// Run the completion of a fragment that was queued or in flight, and free it if the module
// owns it. Called with no lock held: the callback may send again.
void complete(Module *m, Frag *f, weft_status_t status)
{
    m->send_work.fetch_sub(1, std::memory_order_relaxed);
    Endpoint *ep = f->ep;
    f->state = FragState::caller;
    if (f->borrowed) {
        frag_put(m, f->borrowed);
        f->borrowed = nullptr;
    }
    if (f->des.des_cbfunc)
        f->des.des_cbfunc(&m->base, reinterpret_cast<weft_btl_endpoint_t *>(ep), &f->des, status);
    if (f->des.des_flags & WEFT_BTL_DES_FLAG_BTL_OWNERSHIP)
        frag_put(m, f);
}

// ---------------------------------------------------------------------------- the ring

enum class Room { ok, full, corrupt };

// Make room for a message of n slots at ep's tail: if it would run past the end of the ring,
// a skip entry first fills the rest. Called with ep->lock held.
inline Room reserve(Endpoint *ep, uint64_t n)
{
    const uint64_t size = ep->tx_mask + 1;
    const uint64_t at = ep->tx_tail & ep->tx_mask;
    const uint64_t skip = at + n > size ? size - at : 0;
    const uint64_t need = skip + n;
    if (ep->tx_tail + need - ep->tx_head_cache > size) {
        ep->tx_head_cache = load_acquire(ep->tx->head);
        const uint64_t used = ep->tx_tail - ep->tx_head_cache; // wraps if head > tail
        if (used > size)
            return Room::corrupt;
        if (used + need > size)
            return Room::full;
    }
    if (skip) {
        auto *h = reinterpret_cast<CellHeader *>(ep->tx_slots + at * kSlotSize);
        h->length = uint16_t(skip);
        h->tag = 0;
        h->kind = kCellSkip;
        store_release(h->stamp, stamp_of(ep->tx_tail));
        ep->tx_tail += skip;
    }
    return Room::ok;
}

// The first slot of the next message (after reserve).
inline char *tail_slot(Endpoint *ep)
{
    return ep->tx_slots + (ep->tx_tail & ep->tx_mask) * kSlotSize;
}

// Copy n bytes to dst, inside the message that starts at slot, the bytes past slot's cache
// line first: the line with the stamp is then written last, in one burst with the stamp
// (publish). A receiver polling the stamp takes that line from this core once, not also in
// the middle of the copy, which would then have to take it back for the stamp.
inline void copy_line_last(const char *slot, char *dst, const char *src, size_t n)
{
    const uintptr_t end = (reinterpret_cast<uintptr_t>(slot) | (kCacheLine - 1)) + 1;
    const uintptr_t at = reinterpret_cast<uintptr_t>(dst);
    const size_t head = std::min<size_t>(n, end > at ? end - at : 0);
    if (n > head)
        std::memcpy(dst + head, src + head, n - head);
    weft_copy(dst, src, head);
}

// Ask ahead for the lines the next messages will take (claim_range, btl_sm_segment.h).
inline void claim_ahead(Endpoint *ep, uint64_t nslots)
{
    const ClaimRange r =
        claim_range(ep->tx_tail, ep->tx_claimed, ep->tx_head_cache, ep->tx_mask + 1, nslots);
    if (r.to <= r.from)
        return;
    for (uint64_t i = r.from; i < r.to; i += kLineSlots)
        prefetch_for_write(ep->tx_slots + (i & ep->tx_mask) * kSlotSize);
    ep->tx_claimed = r.to;
}

// Publish the message written at tail_slot(ep): fill its header, stamp it, move the tail.
inline void publish(Endpoint *ep, char *slot, size_t len, weft_btl_tag_t tag, CellKind kind,
                    uint64_t nslots)
{
    auto *h = reinterpret_cast<CellHeader *>(slot);
    h->length = uint16_t(len);
    h->tag = tag;
    h->kind = kind;
    store_release(h->stamp, stamp_of(ep->tx_tail));
    ep->tx_tail += nslots;
    if (ep->tx_claim)
        claim_ahead(ep, nslots);
}

enum class Post { done_inline, done_pool, full, no_pool, corrupt };

// Write f into ep's ring. Called with ep->lock held.
Post post(Module *m, Endpoint *ep, Frag *f)
{
    const size_t len = f->seg.seg_len;
    if (len <= ep->tx_inline_max) {
        const uint64_t n = slots_for(len);
        const Room room = reserve(ep, n);
        if (room != Room::ok)
            return room == Room::full ? Post::full : Post::corrupt;
        char *slot = tail_slot(ep);
        copy_line_last(slot, slot + kCellHeaderSize, static_cast<const char *>(f->seg.seg_addr),
                       len);
        publish(ep, slot, len, f->tag, kCellInline, n);
        return Post::done_inline;
    }
    const Frag *carrier = f;
    if (!f->pooled) {
        // Only when the peer takes smaller messages inline than we do (different eager
        // limits): the data goes through a pool fragment.
        if (!f->borrowed) {
            std::lock_guard g(m->lock);
            f->borrowed = pool_get(m);
        }
        if (!f->borrowed)
            return Post::no_pool;
        carrier = f->borrowed;
    }
    const Room room = reserve(ep, 1);
    if (room != Room::ok)
        return room == Room::full ? Post::full : Post::corrupt;
    if (carrier != f)
        std::memcpy(carrier->buf, f->seg.seg_addr, len);
    char *slot = tail_slot(ep);
    const PoolRef ref{.offset = carrier->pool_offset, .length = uint32_t(len), .reserved = 0};
    std::memcpy(slot + kCellHeaderSize, &ref, sizeof ref);
    f->ring_index = ep->tx_tail;
    publish(ep, slot, 0, f->tag, kCellPool, 1);
    return Post::done_pool;
}

// ---------------------------------------------------------------------------- shared gets

} // namespace

bool post_help(Endpoint *ep, const HelpRequest &req)
{
    std::lock_guard g(ep->lock);
    // Behind queued sends, it would wait for them; the receiver copies alone instead.
    if (ep->state != WEFT_SUCCESS || !ep->connected || !ep->pending.empty())
        return false;
    const uint64_t n = slots_for(sizeof req);
    if (reserve(ep, n) != Room::ok)
        return false;
    char *slot = tail_slot(ep);
    std::memcpy(slot + kCellHeaderSize, &req, sizeof req);
    publish(ep, slot, sizeof req, 0, kCellHelp, n);
    return true;
}

namespace {

// ---------------------------------------------------------------------------- failures

void report(Module *m, uint32_t flags, Endpoint *ep, const std::string &what)
{
    if (m->error_fn)
        m->error_fn(&m->base, flags, ep ? ep->proc : nullptr, what.c_str(), m->error_cbdata);
}

// Break ep: report, then complete everything queued or in flight to it with status.
// Pool buffers a live peer might still read are retired (poisoned) instead of reused.
void fail_endpoint(Module *m, Endpoint *ep, weft_status_t status, uint32_t flags,
                   const std::string &what)
{
    FragQueue dead;
    {
        std::lock_guard g(ep->lock);
        if (ep->state != WEFT_SUCCESS)
            return;
        ep->state = status;
        ep->pending.splice_into(dead);
        ep->inflight.splice_into(dead);
    }
    if (flags)
        report(m, flags, ep, what);
    const bool reader_gone = status == WEFT_ERR_PROC_FAILED;
    while (!dead.empty()) {
        Frag *f = dead.pop();
        if (f->state == FragState::inflight && !reader_gone) {
            (f->borrowed ? f->borrowed : f)->poisoned = true;
        }
        complete(m, f, status);
    }
}

// ---------------------------------------------------------------------------- progress

// Poison the stamps of the slots after the first of the nslots consumed at ring index first:
// old payload must never pass for a stamp, and every slot is written once per lap.
inline void poison(Endpoint *ep, uint64_t first, uint64_t nslots)
{
    for (uint64_t i = first + 1; i < first + nslots; ++i) {
        auto *h = reinterpret_cast<CellHeader *>(ep->rx_slots + (i & ep->rx_mask) * kSlotSize);
        store_relaxed(h->stamp, poison_of(i));
    }
}

// Whether the entry at ep's head is stamped: something to deliver.
inline bool arrived(const Endpoint *ep)
{
    const auto *h = reinterpret_cast<const CellHeader *>(ep->rx_slots +
                                                         (ep->rx_head & ep->rx_mask) * kSlotSize);
    return load_acquire(h->stamp) == stamp_of(ep->rx_head);
}

// Deliver what arrived on ep's ring; returns the messages handled.
int poll_ring(Module *m, Endpoint *ep)
{
    const uint64_t size = ep->rx_mask + 1;
    uint64_t head = ep->rx_head;
    int n = 0;
    // A bounded batch: a sender that never stops must not starve the other rings.
    for (uint64_t budget = size; budget > 0; --budget) {
        char *slot = ep->rx_slots + (head & ep->rx_mask) * kSlotSize;
        auto *h = reinterpret_cast<const CellHeader *>(slot);
        if (load_acquire(h->stamp) != stamp_of(head))
            break;
        uint32_t len = h->length;
        const uint8_t kind = h->kind, tag = h->tag;
        const uint64_t at = head & ep->rx_mask;
        uint64_t nslots = 1;
        void *data = nullptr;
        bool ok = false;
        if (kind == kCellInline) {
            nslots = slots_for(len);
            ok = len <= m->inline_max && at + nslots <= size;
            data = slot + kCellHeaderSize;
        } else if (kind == kCellPool) {
            PoolRef ref;
            std::memcpy(&ref, slot + kCellHeaderSize, sizeof ref);
            len = ref.length;
            ok = ref.offset >= ep->peer_pool_begin && ref.offset <= ep->peer_pool_end &&
                 len <= ep->peer_pool_end - ref.offset;
            data = ep->peer.base() + ref.offset;
        } else if (kind == kCellSkip) {
            ok = len > 0 && at + len == size;
            if (ok) {
                poison(ep, head, len);
                head += len;
                continue;
            }
        } else if (kind == kCellHelp) {
            nslots = slots_for(len);
            ok = len == sizeof(HelpRequest) && at + nslots <= size;
            if (ok) {
                HelpRequest req;
                std::memcpy(&req, slot + kCellHeaderSize, sizeof req);
                // Free the slots first: the copies may take a while.
                poison(ep, head, nslots);
                head += nslots;
                ep->rx_head = head;
                store_release(ep->rx->head, head);
                help_shared_get(m, ep, req);
                ++n;
                continue;
            }
        }
        if (!ok) {
            // Where the next message starts is unknown now: nothing after this is trustworthy.
            ep->rx_polled = false;
            m->rx_list.erase(std::find(m->rx_list.begin(), m->rx_list.end(), ep));
            fail_endpoint(m, ep, WEFT_ERR_LINK_DOWN, WEFT_BTL_ERROR_FLAG_LINK,
                          "btl/sm: a malformed entry arrived from " + peer_name(ep) + " (kind " +
                              std::to_string(kind) + ", length " + std::to_string(len) +
                              " at slot " + std::to_string(head) + "); link closed");
            return n + 1;
        }
        const TagEntry &t = m->tags[tag];
        if (!t.fn) {
            report(m, 0, ep,
                   "btl/sm: dropped a message from " + peer_name(ep) + " for tag " +
                       std::to_string(tag) + ", which has no callback");
        } else {
            weft_btl_segment_t seg{.seg_addr = data, .seg_len = len};
            const weft_btl_recv_descriptor_t rd{.endpoint =
                                                    reinterpret_cast<weft_btl_endpoint_t *>(ep),
                                                .segments = &seg,
                                                .segment_count = 1,
                                                .cbdata = t.cbdata,
                                                .flags = 0,
                                                .tag = tag,
                                                .reserved = {0, 0, 0}};
            t.fn(&m->base, &rd);
        }
        poison(ep, head, nslots);
        head += nslots;
        ++n;
        // Slots go back to the sender in batches (one store to the shared line for many
        // small messages), but at once for a pool entry, whose fragment the sender is
        // waiting to reuse, and whenever an eighth of the ring has been consumed.
        if (kind == kCellPool || head - ep->rx_head >= (size >> 3)) {
            ep->rx_head = head;
            store_release(ep->rx->head, head);
        }
    }
    if (head != ep->rx_head) {
        ep->rx_head = head;
        store_release(ep->rx->head, head);
    }
    return n;
}

// Complete consumed pool fragments and retry queued sends on ep; returns the events.
int progress_endpoint(Module *m, Endpoint *ep)
{
    FragQueue done;
    bool stuck = false, corrupt = false;
    {
        std::lock_guard g(ep->lock);
        if (ep->state != WEFT_SUCCESS || !ep->connected ||
            (ep->inflight.empty() && ep->pending.empty()))
            return 0;
        if (!ep->inflight.empty()) {
            const uint64_t head = load_acquire(ep->tx->head);
            ep->tx_head_cache = head;
            while (!ep->inflight.empty() && ep->inflight.front()->ring_index < head)
                done.push(ep->inflight.pop());
        }
        while (!ep->pending.empty()) {
            Post r = post(m, ep, ep->pending.front());
            if (r == Post::full || r == Post::no_pool || r == Post::corrupt) {
                corrupt = r == Post::corrupt;
                break;
            }
            Frag *f = ep->pending.pop();
            if (r == Post::done_inline) {
                done.push(f);
            } else {
                f->state = FragState::inflight;
                ep->inflight.push(f);
            }
        }
        stuck = done.empty() && (!ep->pending.empty() || !ep->inflight.empty());
    }
    if (corrupt) {
        fail_endpoint(m, ep, WEFT_ERR_LINK_DOWN, WEFT_BTL_ERROR_FLAG_LINK,
                      "btl/sm: the ring to " + peer_name(ep) + " is corrupt; link closed");
        return 1;
    }
    int n = 0;
    while (!done.empty()) {
        complete(m, done.pop(), WEFT_SUCCESS);
        ++n;
    }
    if (!stuck) {
        ep->next_liveness_check = {};
        ep->stuck_polls = 0;
        return n;
    }
    // Nothing moved: the peer may just be slow (oversubscribed), or dead. A sender that
    // streams faster than its receiver drains is stuck at almost every call: the clock (a
    // system call on some hosts) is read at one call in kStuckPollsPerCheck.
    if (ep->stuck_polls++ % kStuckPollsPerCheck != 0)
        return n;
    const auto now = Clock::now();
    if (ep->next_liveness_check == Clock::time_point{}) {
        ep->next_liveness_check = now + kLivenessInterval;
    } else if (now >= ep->next_liveness_check) {
        ep->next_liveness_check = now + kLivenessInterval;
        if (!ep->peer.owner_alive()) {
            fail_endpoint(m, ep, WEFT_ERR_PROC_FAILED, WEFT_BTL_ERROR_FLAG_PROC_FAILED,
                          "btl/sm: " + peer_name(ep) + " exited with messages for it still queued");
            ++n;
        }
    }
    return n;
}

// ---------------------------------------------------------------------------- operations

// Grow the own segment to its full layout, now that the runtime knows the local ranks.
weft_status_t activate(Module *m)
{
    const int local_size = weft_runtime_local_size();
    const int local_rank = weft_runtime_local_rank();
    std::string error;
    weft_status_t rc = WEFT_ERR_BAD_PARAM;
    if (local_size < 2 || local_rank < 0 || local_rank >= local_size) {
        error = "the runtime gives local rank " + std::to_string(local_rank) + " of " +
                std::to_string(local_size);
    } else {
        Layout layout;
        layout.nrings = uint32_t(local_size);
        layout.ring_slots = m->cfg.ring_slots;
        layout.inline_max = uint32_t(m->inline_max);
        layout.pool_frag_size = (m->cfg.max_send_size + kCacheLine - 1) / kCacheLine * kCacheLine;
        layout.pool_frags = m->cfg.free_list_max;
        // Private memory first: once the segment says ready, peers start sending.
        try {
            m->by_local.assign(size_t(local_size), nullptr);
            m->pool.reset(new Frag[layout.pool_frags]());
            rc = m->own.activate(layout, uint32_t(local_rank), error);
        } catch (...) {
            rc = WEFT_ERR_OUT_OF_RESOURCE;
            error = "out of memory";
        }
    }
    if (rc != WEFT_SUCCESS)
        m->own.mark_failed();
    if (rc != WEFT_SUCCESS) {
        m->activation_failed = true;
        log_warning("btl/sm: " + error + "; no peer is reachable through shared memory");
        return rc;
    }
    const SegmentHeader &h = m->own.header();
    m->local_rank = uint32_t(local_rank);
    m->nrings = uint32_t(local_size);
    std::lock_guard g(m->lock);
    for (uint64_t i = h.pool_frags; i-- > 0;) {
        Frag &f = m->pool[i];
        f.magic = kFragMagic;
        f.state = FragState::free;
        f.pooled = true;
        f.pool_offset = h.pool_offset + i * h.pool_frag_size;
        f.buf = m->own.base() + f.pool_offset;
        f.capacity = m->cfg.max_send_size;
        f.next = m->pool_free;
        m->pool_free = &f;
    }
    m->activated = true;
    return WEFT_SUCCESS;
}

// Finish connecting ep once its peer's segment is ready: WEFT_IN_PROGRESS while it is not,
// WEFT_SUCCESS when connected, or an error with error saying why.
weft_status_t try_connect(Module *m, Endpoint *ep, std::string &error)
{
    weft_status_t rc = ep->peer.poll_ready(error);
    if (rc == WEFT_IN_PROGRESS)
        return rc;
    const SegmentHeader &ph = ep->peer.header();
    if (rc == WEFT_SUCCESS) {
        if (ph.nrings != m->nrings || ph.owner_local_rank == m->local_rank ||
            m->by_local[ph.owner_local_rank] != nullptr) {
            error = "its segment has " + std::to_string(ph.nrings) +
                    " rings and claims local rank " + std::to_string(ph.owner_local_rank) +
                    " (this process: " + std::to_string(m->local_rank) + " of " +
                    std::to_string(m->nrings) + ")";
            rc = WEFT_ERR_UNREACH;
        } else {
            RingControl *tx = ep->peer.ring(m->local_rank);
            // This process is the only writer of tail; it is not 0 after a del_procs/add_procs.
            const uint64_t tail = load_acquire(tx->tail), head = load_acquire(tx->head);
            if (tail - head > ph.ring_slots) {
                error = "its ring for this process is corrupt";
                rc = WEFT_ERR_UNREACH;
            } else {
                const SegmentHeader &own = m->own.header();
                try {
                    m->rx_list.push_back(ep);
                } catch (...) {
                    error = "out of memory";
                    rc = WEFT_ERR_OUT_OF_RESOURCE;
                }
                if (rc == WEFT_SUCCESS) {
                    std::lock_guard g(ep->lock);
                    ep->peer_local = ph.owner_local_rank;
                    ep->tx = tx;
                    ep->tx_slots = ep->peer.slots(m->local_rank);
                    ep->tx_mask = ph.ring_slots - 1;
                    ep->tx_inline_max = ph.inline_max;
                    ep->tx_tail = tail;
                    ep->tx_head_cache = head;
                    ep->tx_claimed = tail;
                    ep->tx_claim = m->cfg.claim_ahead;
                    ep->rx = m->own.ring(ep->peer_local);
                    ep->rx_slots = m->own.slots(ep->peer_local);
                    ep->rx_mask = own.ring_slots - 1;
                    ep->rx_head = load_acquire(ep->rx->head);
                    ep->rx_polled = true;
                    ep->peer_pool_begin = ph.pool_offset;
                    ep->peer_pool_end = ph.pool_offset + ph.pool_frags * ph.pool_frag_size;
                    ep->connected = true;
                    m->by_local[ep->peer_local] = ep;
                    return WEFT_SUCCESS;
                }
            }
        }
    }
    return rc;
}

// Connect the endpoints whose peers have become ready; notice peers that died first.
int progress_connecting(Module *m)
{
    int n = 0;
    for (size_t i = 0; i < m->connecting.size();) {
        Endpoint *ep = m->connecting[i];
        std::string error;
        weft_status_t rc = ep->state == WEFT_SUCCESS ? try_connect(m, ep, error) : ep->state;
        if (is_error(rc) && ep->state == WEFT_SUCCESS)
            fail_endpoint(m, ep, rc, WEFT_BTL_ERROR_FLAG_LINK,
                          "btl/sm: cannot connect to " + peer_name(ep) + ": " + error);
        if (rc == WEFT_IN_PROGRESS) {
            // Only worth a look when something waits for this peer.
            if (!ep->pending.empty()) {
                const auto now = Clock::now();
                if (ep->next_liveness_check == Clock::time_point{}) {
                    ep->next_liveness_check = now + kLivenessInterval;
                } else if (now >= ep->next_liveness_check) {
                    ep->next_liveness_check = now + kLivenessInterval;
                    if (!ep->peer.owner_alive())
                        fail_endpoint(m, ep, WEFT_ERR_PROC_FAILED, WEFT_BTL_ERROR_FLAG_PROC_FAILED,
                                      "btl/sm: " + peer_name(ep) +
                                          " exited before it set up its shared memory");
                }
            }
            if (ep->state == WEFT_SUCCESS) {
                ++i;
                continue;
            }
        }
        ep->next_liveness_check = {};
        m->connecting.erase(m->connecting.begin() + std::ptrdiff_t(i));
        ++n;
    }
    return n;
}

weft_status_t sm_add_procs(weft_btl_module_t *module, weft_proc_t *const *procs, size_t nprocs,
                           weft_btl_endpoint_t **endpoints, uint8_t *reachable)
{
    Module *m = self(module);
    if (!m || (nprocs && (!procs || !endpoints || !reachable)))
        return WEFT_ERR_BAD_PARAM;
    for (size_t i = 0; i < nprocs; ++i) {
        weft_proc_t *proc = procs[i];
        // Shared memory reaches the processes of this node (hwloc-based runtime locality).
        if (!proc || !(weft_proc_locality(proc) & WEFT_LOCALITY_NODE) || weft_proc_is_self(proc))
            continue;
        const void *data = nullptr;
        size_t len = 0;
        if (weft_modex_recv(kModexKey, proc, &data, &len) != WEFT_SUCCESS)
            continue; // the peer runs no sm module: not reachable this way
        const int rank = weft_proc_rank(proc);
        auto warn = [&](const std::string &why) {
            log_warning("btl/sm: rank " + std::to_string(rank) + " is on this host but " + why +
                        "; it is not reachable through shared memory");
        };
        ModexInfo info;
        if (len != sizeof info) {
            warn("published a modex entry of " + std::to_string(len) + " bytes (expected " +
                 std::to_string(sizeof info) + ")");
            continue;
        }
        std::memcpy(&info, data, sizeof info);
        if (info.version != kLayoutVersion ||
            std::memchr(info.path, 0, sizeof info.path) == nullptr) {
            warn("published an unusable modex entry (version " + std::to_string(info.version) +
                 ")");
            continue;
        }
        auto old = std::find_if(m->endpoints.begin(), m->endpoints.end(),
                                [&](const Endpoint *e) { return e->proc == proc; });
        if (old != m->endpoints.end()) {
            endpoints[i] = reinterpret_cast<weft_btl_endpoint_t *>(*old);
            reachable[i] = 1;
            continue;
        }
        if (!m->activated && !m->activation_failed)
            activate(m);
        if (!m->activated)
            continue;
        Endpoint *ep = new (std::nothrow) Endpoint;
        if (!ep)
            return WEFT_ERR_OUT_OF_RESOURCE;
        std::string error;
        if (ep->peer.attach(info.path, info.cookie, uint32_t(rank), error) != WEFT_SUCCESS) {
            delete ep;
            warn(error);
            continue;
        }
        ep->module = m;
        ep->proc = proc;
        ep->world_rank = rank;
        ep->peer_pid = pid_t(info.pid);
        ep->lock.enable(m->threaded);
        try {
            m->endpoints.reserve(m->endpoints.size() + 1);
            m->connecting.reserve(m->connecting.size() + 1);
            m->rx_list.reserve(m->rx_list.size() + 1);
        } catch (...) {
            delete ep;
            return WEFT_ERR_OUT_OF_RESOURCE;
        }
        // The peer may be ready already; if not, progress finishes the connection.
        weft_status_t rc = try_connect(m, ep, error);
        if (is_error(rc)) {
            delete ep;
            warn(error);
            continue;
        }
        m->endpoints.push_back(ep);
        if (rc == WEFT_IN_PROGRESS)
            m->connecting.push_back(ep);
        endpoints[i] = reinterpret_cast<weft_btl_endpoint_t *>(ep);
        reachable[i] = 1;
    }
    return WEFT_SUCCESS;
}

void release_endpoint(Module *m, Endpoint *ep, weft_status_t status)
{
    fail_endpoint(m, ep, status, 0, "");
    // Where a later connection to this peer goes on writing.
    if (ep->connected)
        store_release(ep->tx->tail, ep->tx_tail);
    auto drop = [ep](std::vector<Endpoint *> &v) {
        v.erase(std::remove(v.begin(), v.end(), ep), v.end());
    };
    drop(m->rx_list);
    drop(m->connecting);
    drop(m->endpoints);
    if (ep->connected)
        m->by_local[ep->peer_local] = nullptr;
    ep->magic = 0;
    delete ep;
}

weft_status_t sm_del_procs(weft_btl_module_t *module, weft_proc_t *const *procs, size_t nprocs,
                           weft_btl_endpoint_t *const *endpoints)
{
    Module *m = self(module);
    if (!m || (nprocs && !endpoints))
        return WEFT_ERR_BAD_PARAM;
    weft_status_t rc = WEFT_SUCCESS;
    for (size_t i = 0; i < nprocs; ++i) {
        if (!endpoints[i])
            continue;
        Endpoint *ep = endpoint_of(endpoints[i]);
        if (!ep || ep->module != m || (procs && procs[i] && procs[i] != ep->proc)) {
            rc = WEFT_ERR_BAD_PARAM;
            continue;
        }
        release_endpoint(m, ep, WEFT_ERR_UNREACH);
    }
    return rc;
}

weft_status_t sm_register(weft_btl_module_t *module, weft_btl_tag_t tag, weft_btl_recv_fn_t cbfunc,
                          void *cbdata)
{
    Module *m = self(module);
    if (!m)
        return WEFT_ERR_BAD_PARAM;
    m->tags[tag] = TagEntry{cbfunc, cbdata};
    return WEFT_SUCCESS;
}

weft_status_t sm_register_error(weft_btl_module_t *module, weft_btl_error_fn_t cbfunc, void *cbdata)
{
    Module *m = self(module);
    if (!m)
        return WEFT_ERR_BAD_PARAM;
    m->error_fn = cbfunc;
    m->error_cbdata = cbdata;
    return WEFT_SUCCESS;
}

weft_status_t sm_finalize(weft_btl_module_t *module)
{
    Module *m = self(module);
    if (!m)
        return WEFT_ERR_BAD_PARAM;
    weft_progress_unregister(module_progress);
    while (!m->endpoints.empty())
        release_endpoint(m, m->endpoints.back(), WEFT_ERR_LINK_DOWN);
    for (Frag *f : m->small_all) {
        f->magic = 0;
        f->~Frag();
        ::operator delete(f, std::align_val_t(kCacheLine));
    }
    m->own.close(); // unmaps and removes the file
    g_module = nullptr;
    delete m;
    return WEFT_SUCCESS;
}

weft_status_t sm_alloc(weft_btl_module_t *module, weft_btl_endpoint_t *, uint8_t order, size_t size,
                       uint32_t flags, weft_btl_descriptor_t **des)
{
    Module *m = self(module);
    if (!m || !des)
        return WEFT_ERR_BAD_PARAM;
    if (size > m->cfg.max_send_size)
        return WEFT_ERR_BAD_PARAM;
    Frag *f = frag_get(m, size);
    if (!f)
        return WEFT_ERR_OUT_OF_RESOURCE;
    frag_init(f, size, order, flags);
    *des = &f->des;
    return WEFT_SUCCESS;
}

// A fragment of the pipeline: reserve bytes for the PML's header, then up to *size bytes of
// the message packed from the convertor, with streaming stores where the module's choice says
// so for a message of this size (btl_sm_copy.h).
weft_status_t sm_prepare_src(weft_btl_module_t *module, weft_btl_endpoint_t *, weft_convertor_t *cv,
                             uint8_t order, size_t reserve, size_t *size, uint32_t flags,
                             weft_btl_descriptor_t **des)
{
    Module *m = self(module);
    if (!m || !cv || !size || !des || reserve > m->cfg.max_send_size)
        return WEFT_ERR_BAD_PARAM;
    const size_t n = std::min({*size, m->cfg.max_send_size - reserve, cv->size - cv->position});
    Frag *f = frag_get(m, reserve + n);
    if (!f)
        return WEFT_ERR_OUT_OF_RESOURCE;
    frag_init(f, reserve + n, order, flags);
    char *dst = static_cast<char *>(f->buf) + reserve;
    const void *src = weft_convertor_contiguous_data(cv);
    size_t packed = n;
    // The caller's choice of stores (a receiver that measures them), else the module's.
    const bool streamed = (flags & WEFT_BTL_DES_FLAG_STREAMING_STORES) ? kHasStreamingStores
                          : (flags & WEFT_BTL_DES_FLAG_CACHED_STORES)
                              ? false
                              : cv->size >= m->streamed_min && cv->size < m->streamed_max;
    if (src && streamed) {
        stream_copy(dst, src, n);
        cv->position += n;
    } else {
        packed = weft_convertor_pack(cv, dst, n);
    }
    f->seg.seg_len = reserve + packed;
    *size = packed;
    *des = &f->des;
    return WEFT_SUCCESS;
}

weft_status_t sm_free(weft_btl_module_t *module, weft_btl_descriptor_t *des)
{
    Module *m = self(module);
    Frag *f = frag_of(des);
    if (!m || !f || f->state != FragState::caller)
        return WEFT_ERR_BAD_PARAM;
    frag_put(m, f);
    return WEFT_SUCCESS;
}

weft_status_t sm_send(weft_btl_module_t *module, weft_btl_endpoint_t *endpoint,
                      weft_btl_descriptor_t *des, weft_btl_tag_t tag)
{
    Module *m = self(module);
    Endpoint *ep = endpoint_of(endpoint);
    Frag *f = frag_of(des);
    if (!m || !ep || ep->module != m || !f || f->state != FragState::caller ||
        des->des_segments != &f->seg || des->des_segment_count != 1 ||
        f->seg.seg_len > f->capacity || f->seg.seg_addr != f->buf)
        return WEFT_ERR_BAD_PARAM;
    Post r;
    {
        std::lock_guard g(ep->lock);
        if (ep->state != WEFT_SUCCESS)
            return ep->state;
        f->tag = tag;
        f->ep = ep;
        // Behind queued fragments, never past them: one endpoint is one ordered channel.
        r = ep->connected && ep->pending.empty() ? post(m, ep, f) : Post::full;
        switch (r) {
        case Post::done_inline: break;
        case Post::done_pool:
            f->state = FragState::inflight;
            ep->inflight.push(f);
            m->send_work.fetch_add(1, std::memory_order_relaxed);
            return WEFT_IN_PROGRESS;
        case Post::full:
        case Post::no_pool:
            f->state = FragState::pending;
            ep->pending.push(f);
            m->send_work.fetch_add(1, std::memory_order_relaxed);
            return WEFT_IN_PROGRESS;
        case Post::corrupt: break;
        }
    }
    if (r == Post::corrupt) {
        fail_endpoint(m, ep, WEFT_ERR_LINK_DOWN, WEFT_BTL_ERROR_FLAG_LINK,
                      "btl/sm: the ring to " + peer_name(ep) + " is corrupt; link closed");
        f->ep = nullptr;
        return WEFT_ERR_LINK_DOWN;
    }
    // Copied into the peer's ring: complete inside the call.
    if (f->des.des_cbfunc && (f->des.des_flags & WEFT_BTL_DES_FLAG_ALWAYS_CALLBACK))
        f->des.des_cbfunc(&m->base, endpoint, des, WEFT_SUCCESS);
    if (f->des.des_flags & WEFT_BTL_DES_FLAG_BTL_OWNERSHIP)
        frag_put(m, f);
    return WEFT_SUCCESS;
}

weft_status_t sm_sendi(weft_btl_module_t *module, weft_btl_endpoint_t *endpoint,
                       weft_convertor_t *convertor, const void *header, size_t header_size,
                       size_t payload_size, uint8_t order, uint32_t flags, weft_btl_tag_t tag,
                       weft_btl_descriptor_t **des)
{
    Module *m = self(module);
    Endpoint *ep = endpoint_of(endpoint);
    if (des)
        *des = nullptr;
    const size_t total = header_size + payload_size;
    if (!m || !ep || ep->module != m || (header_size && !header) ||
        (payload_size && (!convertor || weft_convertor_remaining(convertor) < payload_size)) ||
        total > m->cfg.max_send_size)
        return WEFT_ERR_BAD_PARAM;
    bool corrupt = false;
    {
        std::lock_guard g(ep->lock);
        if (ep->state != WEFT_SUCCESS)
            return ep->state;
        // Straight into the peer's ring when it fits there now, behind nothing queued.
        if (ep->connected && total <= ep->tx_inline_max && ep->pending.empty()) {
            const uint64_t n = slots_for(total);
            const Room room = reserve(ep, n);
            if (room == Room::ok) {
                char *slot = tail_slot(ep);
                char *payload = slot + kCellHeaderSize + header_size;
                // The first line last (copy_line_last), when the data is contiguous.
                if (payload_size && (convertor->flags & WEFT_CONVERTOR_CONTIGUOUS)) {
                    copy_line_last(slot, payload,
                                   reinterpret_cast<const char *>(convertor->base) +
                                       convertor->position,
                                   payload_size);
                    convertor->position += payload_size;
                } else if (payload_size) {
                    weft_convertor_pack(convertor, payload, payload_size);
                }
                weft_copy(slot + kCellHeaderSize, header, header_size);
                publish(ep, slot, total, tag, kCellInline, n);
                return WEFT_SUCCESS;
            }
            corrupt = room == Room::corrupt;
        }
    }
    if (corrupt) {
        fail_endpoint(m, ep, WEFT_ERR_LINK_DOWN, WEFT_BTL_ERROR_FLAG_LINK,
                      "btl/sm: the ring to " + peer_name(ep) + " is corrupt; link closed");
        return WEFT_ERR_LINK_DOWN;
    }
    if (des) {
        if (Frag *f = frag_get(m, total)) {
            frag_init(f, total, order, flags);
            *des = &f->des;
        }
    }
    return WEFT_ERR_OUT_OF_RESOURCE;
}

// Progress until nothing waits in a pending queue (to endpoint, or to anybody): each queued
// fragment is in the peer's ring, or failed with its endpoint.
weft_status_t sm_flush(weft_btl_module_t *module, weft_btl_endpoint_t *endpoint)
{
    Module *m = self(module);
    Endpoint *only = endpoint ? endpoint_of(endpoint) : nullptr;
    if (!m || (endpoint && (!only || only->module != m)))
        return WEFT_ERR_BAD_PARAM;
    auto queued = [&] {
        for (Endpoint *ep : m->endpoints) {
            if (only && ep != only)
                continue;
            std::lock_guard g(ep->lock);
            if (ep->state == WEFT_SUCCESS && !ep->pending.empty())
                return true;
        }
        return false;
    };
    while (queued())
        if (weft_progress() == 0)
            sched_yield();
    return only ? only->state : WEFT_SUCCESS;
}

void sm_dump(weft_btl_module_t *module, weft_btl_endpoint_t *endpoint, int verbose)
{
    Module *m = self(module);
    if (!m)
        return;
    Endpoint *only = endpoint ? endpoint_of(endpoint) : nullptr;
    log_info("btl/sm: segment " + m->own.path() + " (" + std::to_string(m->own.size() >> 10) +
             " KiB), local rank " + std::to_string(m->local_rank) + " of " +
             std::to_string(m->nrings) + ", " + std::to_string(m->endpoints.size()) + " peers, " +
             std::to_string(m->send_work.load()) + " fragments queued or in flight");
    for (Endpoint *ep : m->endpoints) {
        if (only && ep != only)
            continue;
        std::string line = "btl/sm:   " + peer_name(ep) + " (" +
                           weft_locality_string(weft_proc_locality(ep->proc)) + "): state " +
                           weft_status_name(ep->state) + ", sent " + std::to_string(ep->tx_tail) +
                           ", received " + std::to_string(ep->rx_head);
        if (verbose > 0) {
            size_t pending = 0, inflight = 0;
            std::lock_guard g(ep->lock);
            for (Frag *f = ep->pending.front(); f; f = f->next)
                ++pending;
            for (Frag *f = ep->inflight.front(); f; f = f->next)
                ++inflight;
            line += ", " + std::to_string(pending) + " pending, " + std::to_string(inflight) +
                    " in flight, peer head " + std::to_string(load_acquire(ep->tx->head));
        }
        log_info(line);
    }
}

uint64_t random_cookie()
{
    std::random_device rd;
    return (uint64_t(rd()) << 32) ^ rd() ^ uint64_t(::getpid());
}

} // namespace

int module_progress()
{
    Module *m = g_module;
    if (!m)
        return 0;
    // A callback that drives progress must not see the cell it is being called for again.
    if (m->busy.load(std::memory_order_relaxed))
        return 0;
    if (m->threaded) {
        if (m->busy.exchange(true, std::memory_order_acquire))
            return 0;
    } else {
        m->busy.store(true, std::memory_order_relaxed);
    }
    int n = 0;
    if (!m->connecting.empty())
        n += progress_connecting(m);
    // Until every other local rank has mapped the own segment; then its name can go.
    if (!m->own_unlinked && m->activated && m->own.attached() >= m->nrings - 1) {
        m->own.unlink_file();
        m->own_unlinked = true;
    }
    // rx_list may shrink under us (a corrupt ring is dropped): index, not iterators.
    for (size_t i = 0; i < m->rx_list.size(); ++i) {
        Endpoint *ep = m->rx_list[i];
        if (!arrived(ep)) // (the common case, without the call)
            continue;
        n += poll_ring(m, ep);
        if (i < m->rx_list.size() && m->rx_list[i] != ep)
            --i;
    }
    if (m->send_work.load(std::memory_order_relaxed) != 0)
        for (size_t i = 0; i < m->endpoints.size(); ++i)
            n += progress_endpoint(m, m->endpoints[i]);
    if (!m->rdma_done.empty() || !m->shared_pending.empty()) [[unlikely]]
        n += rdma_progress(m);
    m->busy.store(false, std::memory_order_release);
    return n;
}

Module *module_create(const Config &cfg, bool threaded, std::string &error, weft_status_t &rc)
{
    auto m = std::unique_ptr<Module>(new (std::nothrow) Module);
    if (!m) {
        rc = WEFT_ERR_OUT_OF_RESOURCE;
        error = "out of memory";
        return nullptr;
    }
    m->cfg = cfg;
    m->threaded = threaded;
    m->lock.enable(threaded);
    m->world_rank = uint32_t(weft_runtime_world_rank());
    m->cookie = random_cookie();
    // Messages up to the eager limit travel inside the rings (those above 64 KiB, when the
    // eager limit is set that high, through the pool).
    m->inline_max = std::min(cfg.eager_limit, kMaxInline);

    const std::string stem = std::string(weft_runtime_job_file_prefix()) + "-" +
                             (std::string(kName) == "sm" ? "" : std::string(kName) + "-") +
                             std::to_string(m->world_rank);
    if ((rc = m->own.create(cfg.segment_dir, stem, m->world_rank, m->cookie, error)) !=
        WEFT_SUCCESS)
        return nullptr;

    ModexInfo info{};
    info.version = kLayoutVersion;
    m->pid = getpid();
    info.pid = uint32_t(m->pid);
    info.cookie = m->cookie;
    if (m->own.path().size() >= sizeof info.path) {
        error = "segment path " + m->own.path() + " is too long (btl_sm_segment_dir)";
        rc = WEFT_ERR_BAD_PARAM;
        return nullptr;
    }
    std::memcpy(info.path, m->own.path().c_str(), m->own.path().size() + 1);
    if ((rc = weft_modex_send(kModexKey, &info, sizeof info)) != WEFT_SUCCESS) {
        error = std::string("cannot publish the segment: ") + weft_status_string(rc);
        return nullptr;
    }

    m->base = weft_btl_module_t{
        .struct_size = sizeof(weft_btl_module_t),
        .btl_flags = WEFT_BTL_FLAG_SEND | WEFT_BTL_FLAG_PROC_FAILURE,
        .btl_component = nullptr, // set by the component
        .btl_eager_limit = cfg.eager_limit,
        .btl_rndv_eager_limit = cfg.rndv_eager_limit,
        .btl_max_send_size = cfg.max_send_size,
        .btl_rdma_pipeline_send_length = 0,
        .btl_rdma_pipeline_frag_size = 0,
        .btl_min_rdma_pipeline_size = 0,
        .btl_put_limit = 0,
        .btl_get_limit = 0,
        .btl_put_alignment = 0,
        .btl_get_alignment = 0,
        .btl_registration_handle_size = 0,
        .btl_exclusivity = cfg.exclusivity,
        .btl_latency = cfg.latency,
        .btl_bandwidth = cfg.bandwidth,
        .reserved = 0,
        .btl_add_procs = sm_add_procs,
        .btl_del_procs = sm_del_procs,
        .btl_register = sm_register,
        .btl_register_error = sm_register_error,
        .btl_finalize = sm_finalize,
        .btl_alloc = sm_alloc,
        .btl_free = sm_free,
        .btl_prepare_src = sm_prepare_src,
        .btl_send = sm_send,
        .btl_sendi = sm_sendi,
        .btl_put = nullptr, // rdma_setup gives them when put/get are to be used
        .btl_get = nullptr,
        .btl_register_mem = nullptr,
        .btl_deregister_mem = nullptr,
        .btl_flush = sm_flush,
        .btl_dump = sm_dump,
        .btl_min_rdma_size = 0,
        .btl_max_rdma_size = 0,
        .btl_stream_min_rdma_size = 0,
        .btl_stream_max_rdma_size = 0,
        .btl_register_place = nullptr,
        .btl_way_rate = nullptr,
    };
    if ((rc = weft_progress_register(module_progress)) != WEFT_SUCCESS) {
        error = std::string("cannot register progress: ") + weft_status_string(rc);
        return nullptr;
    }
    g_module = m.get();
    rc = WEFT_SUCCESS;
    return m.release();
}

} // namespace weft::btl::sm
