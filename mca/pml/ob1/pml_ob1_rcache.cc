// pml/ob1: the registration cache (pml_ob1_rcache.h).
#include "pml_ob1_rcache.h"

namespace weft::pml::ob1 {

namespace {

constexpr uintptr_t kPage = 4096;

} // namespace

RegCache::Entry *RegCache::acquire(weft_btl_module_t *btl, const void *addr, size_t len,
                                   uint32_t flags, weft_status_t *rc)
{
    const auto a = reinterpret_cast<uintptr_t>(addr);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if (it->btl != btl || (it->flags & flags) != flags || a < it->base ||
            a - it->base > it->len || len > it->len - (a - it->base))
            continue;
        ++it->refs;
        entries_.splice(entries_.begin(), entries_, it); // most recently used first
        return &entries_.front();
    }
    // Kept registrations cover whole pages, so that later messages from the same buffer find
    // them; a registration for one message covers just that message.
    uintptr_t base = a;
    size_t size = len;
    if (leave_pinned_) {
        base = a & ~(kPage - 1);
        size = ((a + len + kPage - 1) & ~(kPage - 1)) - base;
    }
    weft_btl_registration_handle_t *h = nullptr;
    const weft_status_t r =
        btl->btl_register_mem(btl, nullptr, reinterpret_cast<void *>(base), size, flags, &h);
    if (r != WEFT_SUCCESS) {
        if (rc)
            *rc = r;
        return nullptr;
    }
    ++registered_;
    entries_.push_front(Entry{btl, base, size, flags, h, 1});
    return &entries_.front();
}

void RegCache::release(Entry *e)
{
    if (!e)
        return;
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if (&*it != e)
            continue;
        if (--it->refs > 0)
            return;
        if (!leave_pinned_) {
            drop(it);
            return;
        }
        // Kept; beyond max_unused unused ones, the least recently used go.
        size_t unused = 0;
        for (auto jt = entries_.begin(); jt != entries_.end();) {
            auto cur = jt++;
            if (cur->refs == 0 && ++unused > max_unused_)
                drop(cur);
        }
        return;
    }
}

void RegCache::clear()
{
    for (auto it = entries_.begin(); it != entries_.end();) {
        auto cur = it++;
        if (cur->refs == 0)
            drop(cur);
    }
}

void RegCache::drop(std::list<Entry>::iterator it)
{
    it->btl->btl_deregister_mem(it->btl, it->handle);
    ++deregistered_;
    entries_.erase(it);
}

} // namespace weft::pml::ob1
