// pml/engine: the registration cache. RDMA needs the memory on both sides registered with the BTL
// module that moves it (btl_register_mem), which can cost a system call and pinning pages per
// message. Requests take registrations from here; a registration that covers the range asked for
// is shared. Without mpi_leave_pinned a registration goes when its last user releases it; with
// it, it stays for later messages from the same buffer (up to `max_unused`, least recently used
// first out), as Open MPI's leave_pinned does.
//
// Caveat of leave_pinned (as in any MPI without memory hooks): a buffer freed and its address
// reused while a registration is kept keeps the old registration; for BTLs whose registration
// pins physical pages (openib) the user must not free registered buffers while it is on.
// btl/sm's registration is a (pid, range) record and is unaffected.
#ifndef WEFT_PML_ENGINE_RCACHE_H
#define WEFT_PML_ENGINE_RCACHE_H

#include <btl/btl.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <utility>
#include <vector>

namespace weft::pml::engine {

class RegCache {
  public:
    struct Entry {
        weft_btl_module_t *btl;
        uintptr_t base;
        size_t len;
        uint32_t flags;
        weft_btl_registration_handle_t *handle;
        int refs;
        std::list<Entry>::iterator self; // its place in entries_
    };

    RegCache(bool leave_pinned, size_t max_unused)
        : leave_pinned_(leave_pinned), max_unused_(max_unused)
    {
    }
    RegCache(const RegCache &) = delete;
    RegCache &operator=(const RegCache &) = delete;
    ~RegCache() { clear(); }

    // A registration with btl covering [addr, addr + len) with at least `flags`, taken once
    // more; NULL (and *rc the module's error) if the module refuses.
    Entry *acquire(weft_btl_module_t *btl, const void *addr, size_t len, uint32_t flags,
                   weft_status_t *rc);
    // Give back what acquire returned.
    void release(Entry *e);
    // Deregister every registration nobody holds (at finalize, or when a module goes).
    void clear();

    size_t registered() const { return registered_; }     // btl_register_mem calls so far
    size_t deregistered() const { return deregistered_; } // btl_deregister_mem calls so far
    size_t kept() const { return entries_.size(); }       // registrations alive now

  private:
    using Key = std::pair<const weft_btl_module_t *, uintptr_t>; // (module, base)

    void drop(std::list<Entry>::iterator it);

    bool leave_pinned_;
    size_t max_unused_;
    std::list<Entry> entries_; // most recently used first
    // Nodes of entries_ and index_ let go, kept for the next registration: a message that
    // registers and deregisters allocates nothing.
    std::list<Entry> spare_entries_;
    std::vector<typename std::multimap<std::pair<const weft_btl_module_t *, uintptr_t>,
                                       std::list<Entry>::iterator>::node_type>
        spare_keys_;
    // By module and base address: a lookup looks at the registrations starting at or below
    // the address asked for, nearest first (a message of many pieces holds one per piece:
    // no scan of all of them).
    std::multimap<Key, std::list<Entry>::iterator> index_;
    size_t unused_ = 0; // entries with refs == 0 (kept by leave_pinned)
    size_t registered_ = 0;
    size_t deregistered_ = 0;
};

// Header-only, so that a PML built outside the tree gets it with the engine.
namespace {

constexpr uintptr_t kPage = 4096;
constexpr size_t kSpareNodes = 64; // nodes kept for reuse, of each kind

} // namespace

inline RegCache::Entry *RegCache::acquire(weft_btl_module_t *btl, const void *addr, size_t len,
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
    if (!spare_entries_.empty()) {
        entries_.splice(entries_.begin(), spare_entries_, spare_entries_.begin());
        entries_.front() = Entry{btl, base, size, flags, h, 1, {}};
    } else {
        entries_.push_front(Entry{btl, base, size, flags, h, 1, {}});
    }
    entries_.front().self = entries_.begin();
    if (!spare_keys_.empty()) {
        auto node = std::move(spare_keys_.back());
        spare_keys_.pop_back();
        node.key() = Key{btl, base};
        node.mapped() = entries_.begin();
        index_.insert(std::move(node));
    } else {
        index_.emplace(Key{btl, base}, entries_.begin());
    }
    return &entries_.front();
}

inline void RegCache::release(Entry *e)
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

inline void RegCache::clear()
{
    for (auto it = entries_.begin(); it != entries_.end();) {
        auto cur = it++;
        if (cur->refs == 0)
            drop(cur);
    }
}

inline void RegCache::drop(std::list<Entry>::iterator it)
{
    auto range = index_.equal_range(Key{it->btl, it->base});
    for (auto k = range.first; k != range.second; ++k)
        if (k->second == it) {
            if (spare_keys_.size() < kSpareNodes)
                spare_keys_.push_back(index_.extract(k));
            else
                index_.erase(k);
            break;
        }
    if (it->refs == 0 && leave_pinned_ && unused_ > 0)
        --unused_;
    it->btl->btl_deregister_mem(it->btl, it->handle);
    ++deregistered_;
    if (spare_entries_.size() < kSpareNodes)
        spare_entries_.splice(spare_entries_.begin(), entries_, it);
    else
        entries_.erase(it);
}

} // namespace weft::pml::engine

#endif
