// btl/tcp put and get over the connection (btl_tcp_rdma.h).
#include "btl_tcp_rdma.h"

#include "btl_tcp.h"
#include "btl_tcp_endpoint.h"
#include "btl_tcp_module.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <new>
#include <random>

namespace weft::btl::tcp {

namespace {

// The frames' own headers (8-byte fields: the payload behind them stays aligned).
struct PutWire {
    uint64_t key;
    uint64_t addr;
};
struct GetWire {
    uint64_t key;
    uint64_t addr;
    uint64_t length;
    uint64_t id; // the asker's number for this get
};
struct ReplyWire {
    uint64_t id;
    uint64_t reserved;
};

weft_status_t link_state(const Endpoint *ep)
{
    if (ep->state == EpState::failed)
        return WEFT_ERR_LINK_DOWN;
    if (ep->state == EpState::closed)
        return WEFT_ERR_UNREACH;
    return WEFT_SUCCESS;
}

// The registration of m with key, if [addr, addr + len) lies in it and it allows `flag`.
const Reg *reg_for(const Module *m, uint64_t key, uint64_t addr, uint64_t len, uint32_t flag)
{
    auto it = m->regs.find(key);
    if (it == m->regs.end())
        return nullptr;
    const Reg *r = it->second;
    const uint64_t base = reinterpret_cast<uintptr_t>(r->base);
    if (!(r->flags & flag) || addr < base || addr - base > r->size || len > r->size - (addr - base))
        return nullptr;
    return r;
}

weft_status_t register_mem(weft_btl_module_t *b, weft_btl_endpoint_t *, void *base, size_t size,
                           uint32_t flags, weft_btl_registration_handle_t **handle)
{
    if (!b || !handle || (!base && size))
        return WEFT_ERR_BAD_PARAM;
    Module *m = module_of(b);
    auto *r =
        new (std::nothrow) Reg{m->next_key++, static_cast<unsigned char *>(base), size, flags};
    if (!r)
        return WEFT_ERR_OUT_OF_RESOURCE;
    m->regs[r->key] = r;
    *handle = reinterpret_cast<weft_btl_registration_handle_t *>(r);
    return WEFT_SUCCESS;
}

weft_status_t deregister_mem(weft_btl_module_t *b, weft_btl_registration_handle_t *handle)
{
    if (!b || !handle)
        return WEFT_ERR_BAD_PARAM;
    Module *m = module_of(b);
    auto *r = reinterpret_cast<Reg *>(handle);
    auto it = m->regs.find(r->key);
    if (it == m->regs.end() || it->second != r)
        return WEFT_ERR_BAD_PARAM;
    m->regs.erase(it);
    delete r;
    return WEFT_SUCCESS;
}

uint64_t key_of(const weft_btl_registration_handle_t *h)
{
    uint64_t key;
    std::memcpy(&key, h, sizeof key);
    return key;
}

// A frame of the module's own for ep: its header bytes copied in, `data` sent from where it is.
Frag *own_frame(Module *m, FragKind kind, uint8_t tag, const void *head, size_t head_len,
                const void *data, size_t len)
{
    Frag *f = m->get_frag(head_len);
    if (!f)
        return nullptr;
    std::memcpy(f->buffer, head, head_len);
    f->segment.seg_len = head_len;
    f->user = weft_btl_segment_t{const_cast<void *>(data), len};
    f->des.des_segment_count = len ? 2 : 1;
    f->kind = kind;
    f->frame_type = wire::kData;
    f->tag = tag;
    return f;
}

// What put and get check alike, and the operation their completion runs: NULL with *rc set.
RdmaOp *new_op(weft_btl_module_t *b, weft_btl_endpoint_t *h, void *local,
               const weft_btl_registration_handle_t *remote_handle, size_t size, size_t limit,
               weft_btl_rdma_completion_fn_t cbfunc, weft_btl_registration_handle_t *local_handle,
               void *context, void *cbdata, weft_status_t *rc)
{
    *rc = WEFT_ERR_BAD_PARAM;
    if (!b || !h || !remote_handle || !cbfunc || (!local && size))
        return nullptr;
    if (endpoint_of(h)->module != module_of(b) || size > limit)
        return nullptr;
    if ((*rc = link_state(endpoint_of(h))) != WEFT_SUCCESS)
        return nullptr;
    auto *op = new (std::nothrow) RdmaOp{cbfunc, local, local_handle, context, cbdata, size};
    *rc = op ? WEFT_SUCCESS : WEFT_ERR_OUT_OF_RESOURCE;
    return op;
}

// Queue f, which carries op (a put) or asks for it (a get numbered id, 0 for a put); on
// failure nothing stays behind.
weft_status_t submit(Endpoint *ep, Frag *f, RdmaOp *op, uint64_t id)
{
    if (!f) {
        delete op;
        return WEFT_ERR_OUT_OF_RESOURCE;
    }
    if (id)
        ep->gets[id] = op;
    else
        f->rdma = op;
    const weft_status_t rc = ep_enqueue(ep, f);
    if (rc == WEFT_IN_PROGRESS)
        return WEFT_SUCCESS;
    if (id)
        ep->gets.erase(id);
    f->pool->put(f);
    delete op;
    return rc;
}

weft_status_t put(weft_btl_module_t *b, weft_btl_endpoint_t *h, void *local, uint64_t remote,
                  weft_btl_registration_handle_t *local_handle,
                  const weft_btl_registration_handle_t *remote_handle, size_t size, uint32_t,
                  uint8_t, weft_btl_rdma_completion_fn_t cbfunc, void *context, void *cbdata)
{
    weft_status_t rc;
    RdmaOp *op = new_op(b, h, local, remote_handle, size, b ? b->btl_put_limit : 0, cbfunc,
                        local_handle, context, cbdata, &rc);
    if (!op)
        return rc;
    const PutWire w{key_of(remote_handle), remote};
    return submit(endpoint_of(h),
                  own_frame(module_of(b), FragKind::rdma_put, kTagPut, &w, sizeof w, local, size),
                  op, 0);
}

weft_status_t get(weft_btl_module_t *b, weft_btl_endpoint_t *h, void *local, uint64_t remote,
                  weft_btl_registration_handle_t *local_handle,
                  const weft_btl_registration_handle_t *remote_handle, size_t size, uint32_t,
                  uint8_t, weft_btl_rdma_completion_fn_t cbfunc, void *context, void *cbdata)
{
    weft_status_t rc;
    RdmaOp *op = new_op(b, h, local, remote_handle, size, b ? b->btl_get_limit : 0, cbfunc,
                        local_handle, context, cbdata, &rc);
    if (!op)
        return rc;
    Endpoint *ep = endpoint_of(h);
    const uint64_t id = ep->next_get++;
    const GetWire w{key_of(remote_handle), remote, size, id};
    return submit(
        ep, own_frame(module_of(b), FragKind::internal, kTagGet, &w, sizeof w, nullptr, 0), op, id);
}

} // namespace

void rdma_enable(Module *m)
{
    if (!params.rdma)
        return;
    weft_btl_module_t *b = m->base();
    b->btl_flags |= WEFT_BTL_FLAG_PUT | WEFT_BTL_FLAG_GET;
    // A put or an answer is one frame: its data and header within btl_tcp_max_send_size.
    b->btl_put_limit = b->btl_get_limit = params.max_send_size - sizeof(ReplyWire);
    b->btl_registration_handle_size = sizeof(uint64_t);
    b->btl_put = put;
    b->btl_get = get;
    b->btl_register_mem = register_mem;
    b->btl_deregister_mem = deregister_mem;
    // Keys start at a random point: a key is no capability (the connection is authenticated
    // already), but a stale one from another module or an earlier run should not be valid.
    m->next_key = std::random_device{}() | (uint64_t(std::random_device{}()) << 32);
}

std::string rdma_frame(Endpoint *ep, uint8_t tag, const unsigned char *p, size_t len,
                       int *callbacks)
{
    Module *m = ep->module;
    switch (tag) {
    case kTagPut: {
        PutWire w;
        if (len < sizeof w)
            return fmt("a put frame of %zu bytes", len);
        std::memcpy(&w, p, sizeof w);
        const size_t n = len - sizeof w;
        const Reg *r = reg_for(m, w.key, w.addr, n, WEFT_BTL_REG_FLAG_REMOTE_WRITE);
        if (!r)
            return fmt("a put of %zu bytes to 0x%" PRIx64 " (key %" PRIx64
                       "), which no registration for remote writes covers",
                       n, w.addr, w.key);
        if (n)
            std::memcpy(r->base + (w.addr - reinterpret_cast<uintptr_t>(r->base)), p + sizeof w, n);
        return "";
    }
    case kTagGet: {
        GetWire w;
        if (len != sizeof w)
            return fmt("a get frame of %zu bytes", len);
        std::memcpy(&w, p, sizeof w);
        const Reg *r = w.length <= m->base()->btl_get_limit
                           ? reg_for(m, w.key, w.addr, w.length, WEFT_BTL_REG_FLAG_REMOTE_READ)
                           : nullptr;
        if (!r)
            return fmt("a get of %" PRIu64 " bytes from 0x%" PRIx64 " (key %" PRIx64
                       "), which no registration for remote reads covers",
                       w.length, w.addr, w.key);
        const ReplyWire reply{w.id, 0};
        // Sent from the registered memory, which stays registered until the asker's FIN,
        // which comes after this answer arrived.
        Frag *f =
            own_frame(m, FragKind::internal, kTagGetReply, &reply, sizeof reply,
                      r->base + (w.addr - reinterpret_cast<uintptr_t>(r->base)), size_t(w.length));
        if (!f)
            return "a get this process has no fragment left to answer";
        if (ep_enqueue(ep, f) != WEFT_IN_PROGRESS)
            f->pool->put(f); // the link broke meanwhile: the asker's get fails with it
        return "";
    }
    case kTagGetReply: {
        ReplyWire w;
        if (len < sizeof w)
            return fmt("a get answer of %zu bytes", len);
        std::memcpy(&w, p, sizeof w);
        auto it = ep->gets.find(w.id);
        const size_t n = len - sizeof w;
        if (it == ep->gets.end() || it->second->size != n)
            return fmt("an answer of %zu bytes to get %" PRIu64 ", which was not asked for", n,
                       w.id);
        RdmaOp *op = it->second;
        ep->gets.erase(it);
        if (n)
            std::memcpy(op->local, p + sizeof w, n);
        op->fn(m->base(), handle_of(ep), op->local, op->local_handle, op->context, op->cbdata,
               WEFT_SUCCESS);
        delete op;
        ++*callbacks;
        return "";
    }
    }
    return fmt("a frame for the module's tag 0x%02x", tag);
}

int rdma_fail_gets(Endpoint *ep, weft_status_t status)
{
    int n = 0;
    while (!ep->gets.empty()) {
        RdmaOp *op = ep->gets.begin()->second;
        ep->gets.erase(ep->gets.begin());
        op->fn(ep->module->base(), handle_of(ep), op->local, op->local_handle, op->context,
               op->cbdata, status);
        delete op;
        ++n;
    }
    return n;
}

void rdma_put_done(Module *m, Endpoint *ep, RdmaOp *op, weft_status_t status)
{
    op->fn(m->base(), handle_of(ep), op->local, op->local_handle, op->context, op->cbdata, status);
    delete op;
}

void rdma_release(Module *m)
{
    for (auto &[key, r] : m->regs)
        delete r;
    m->regs.clear();
}

} // namespace weft::btl::tcp
