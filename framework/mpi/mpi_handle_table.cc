// The handle tables of mpi_handles.h.
#include "mpi_handles.h"

#include <climits>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace weft::mpi {

std::atomic<int> handle_entries[handle_kinds];

namespace {

// Free indices wait until this many are free before one is given again: a stale index then
// stays the null handle's across at least this many conversions of new objects.
constexpr size_t reuse_after = 64;

struct Table {
    std::vector<const void *> slots; // index -> object (NULL: free, or the null handle)
    std::unordered_map<const void *, int> index;
    std::deque<int> free; // oldest first
    int fixed = 0;        // indices below are fixed
};

std::mutex mutex;

Table &table(HandleKind kind)
{
    static Table tables[handle_kinds];
    return tables[size_t(kind)];
}

} // namespace

void handle_fix(HandleKind kind, int index, const void *object)
{
    std::lock_guard lock(mutex);
    Table &t = table(kind);
    if (index < 0 || index < t.fixed || size_t(index) < t.slots.size())
        return; // fixed indices come first, in order, once
    t.slots.resize(size_t(index) + 1, nullptr);
    t.slots[size_t(index)] = object;
    if (object)
        t.index.emplace(object, index);
    t.fixed = index + 1;
}

int handle_index(HandleKind kind, const void *object)
{
    std::lock_guard lock(mutex);
    Table &t = table(kind);
    if (auto it = t.index.find(object); it != t.index.end())
        return it->second;
    int i;
    if (t.free.size() > reuse_after) {
        i = t.free.front();
        t.free.pop_front();
    } else {
        if (t.slots.size() >= size_t(INT_MAX))
            return -1;
        i = int(t.slots.size());
        t.slots.push_back(nullptr);
    }
    t.slots[size_t(i)] = object;
    t.index.emplace(object, i);
    handle_entries[size_t(kind)].fetch_add(1, std::memory_order_relaxed);
    return i;
}

void *handle_object(HandleKind kind, int index)
{
    std::lock_guard lock(mutex);
    Table &t = table(kind);
    if (index < 0 || size_t(index) >= t.slots.size())
        return nullptr;
    return const_cast<void *>(t.slots[size_t(index)]);
}

void handle_forget_slow(HandleKind kind, const void *object)
{
    std::lock_guard lock(mutex);
    Table &t = table(kind);
    auto it = t.index.find(object);
    if (it == t.index.end() || it->second < t.fixed)
        return;
    const int i = it->second;
    t.index.erase(it);
    t.slots[size_t(i)] = nullptr;
    t.free.push_back(i);
    handle_entries[size_t(kind)].fetch_sub(1, std::memory_order_relaxed);
}

} // namespace weft::mpi
