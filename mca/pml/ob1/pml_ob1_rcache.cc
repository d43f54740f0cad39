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
    // Registrations of btl starting at or below a, nearest first; a few are looked at (they
    // rarely overlap: pieces of one message lie side by side).
    auto it = index_.upper_bound(Key{btl, a});
    for (int looked = 0; it != index_.begin() && looked < 4; ++looked) {
        --it;
        if (it->first.first != btl)
            break;
        Entry &e = *it->second;
        if ((e.flags & flags) != flags || a - e.base > e.len || len > e.len - (a - e.base))
            continue;
        if (e.refs++ == 0)
            --unused_;
        entries_.splice(entries_.begin(), entries_, e.self); // most recently used first
        return &e;
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
    entries_.push_front(Entry{btl, base, size, flags, h, 1, {}});
    entries_.front().self = entries_.begin();
    index_.emplace(Key{btl, base}, entries_.begin());
    return &entries_.front();
}

void RegCache::release(Entry *e)
{
    if (!e || --e->refs > 0)
        return;
    if (!leave_pinned_) {
        drop(e->self);
        return;
    }
    // Kept; beyond max_unused unused ones, the least recently used go.
    ++unused_;
    for (auto it = entries_.end(); unused_ > max_unused_ && it != entries_.begin();) {
        --it;
        if (it->refs != 0)
            continue;
        auto victim = it++;
        drop(victim);
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
    auto range = index_.equal_range(Key{it->btl, it->base});
    for (auto k = range.first; k != range.second; ++k)
        if (k->second == it) {
            index_.erase(k);
            break;
        }
    if (it->refs == 0 && leave_pinned_ && unused_ > 0)
        --unused_;
    it->btl->btl_deregister_mem(it->btl, it->handle);
    ++deregistered_;
    entries_.erase(it);
}

} // namespace weft::pml::ob1
