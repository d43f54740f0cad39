// Unit tests of the engine's registration cache against an emulated BTL module: a test double whose
// register_mem/deregister_mem only record what they were asked (no real memory registration).
#include "check_util.h"

#include "pml_engine_rcache.h"

#include <map>
#include <vector>

namespace {

using weft::pml::engine::RegCache;

struct Region {
    uintptr_t base;
    size_t len;
    uint32_t flags;
};
std::map<weft_btl_registration_handle_t *, Region> live; // the emulated module's registrations
int fail_next = 0;

weft_status_t emu_register(weft_btl_module_t *, weft_btl_endpoint_t *, void *base, size_t size,
                           uint32_t flags, weft_btl_registration_handle_t **handle)
{
    if (fail_next) {
        --fail_next;
        return WEFT_ERR_OUT_OF_RESOURCE;
    }
    auto *h = reinterpret_cast<weft_btl_registration_handle_t *>(new char[1]);
    live[h] = Region{reinterpret_cast<uintptr_t>(base), size, flags};
    *handle = h;
    return WEFT_SUCCESS;
}

weft_status_t emu_deregister(weft_btl_module_t *, weft_btl_registration_handle_t *handle)
{
    ck_assert_msg(live.count(handle) == 1, "deregistered a handle twice or never made");
    live.erase(handle);
    delete[] reinterpret_cast<char *>(handle);
    return WEFT_SUCCESS;
}

weft_btl_module_t emulated()
{
    weft_btl_module_t m{};
    m.struct_size = sizeof m;
    m.btl_register_mem = emu_register;
    m.btl_deregister_mem = emu_deregister;
    return m;
}

alignas(4096) char buffer[8 * 4096];

START_TEST(test_without_leave_pinned)
{
    weft_btl_module_t btl = emulated();
    {
        RegCache cache(false, 64);
        weft_status_t rc = WEFT_SUCCESS;
        RegCache::Entry *a =
            cache.acquire(&btl, buffer + 100, 1000, WEFT_BTL_REG_FLAG_REMOTE_READ, &rc);
        ck_assert_ptr_nonnull(a);
        // Exactly the range asked for, while nobody else holds it.
        ck_assert_uint_eq(live[a->handle].base, reinterpret_cast<uintptr_t>(buffer + 100));
        ck_assert_uint_eq(live[a->handle].len, 1000);
        // A sub-range shares it; a range beyond it does not.
        RegCache::Entry *b =
            cache.acquire(&btl, buffer + 200, 500, WEFT_BTL_REG_FLAG_REMOTE_READ, &rc);
        ck_assert_ptr_eq(a, b);
        RegCache::Entry *c =
            cache.acquire(&btl, buffer + 200, 1000, WEFT_BTL_REG_FLAG_REMOTE_READ, &rc);
        ck_assert_ptr_ne(a, c);
        // Stronger access than registered: a registration of its own.
        RegCache::Entry *d =
            cache.acquire(&btl, buffer + 100, 10,
                          WEFT_BTL_REG_FLAG_REMOTE_READ | WEFT_BTL_REG_FLAG_REMOTE_WRITE, &rc);
        ck_assert_ptr_ne(a, d);
        ck_assert_uint_eq(cache.registered(), 3);
        cache.release(b);
        ck_assert_uint_eq(live.size(), 3); // a is still held once
        cache.release(a);
        cache.release(c);
        cache.release(d);
        ck_assert_uint_eq(live.size(), 0);
        ck_assert_uint_eq(cache.deregistered(), 3);
    }
    ck_assert_uint_eq(live.size(), 0);
}
END_TEST

START_TEST(test_leave_pinned_keeps_and_evicts)
{
    weft_btl_module_t btl = emulated();
    weft_status_t rc = WEFT_SUCCESS;
    {
        RegCache cache(true, 2);
        RegCache::Entry *a =
            cache.acquire(&btl, buffer + 100, 1000, WEFT_BTL_REG_FLAG_REMOTE_READ, &rc);
        // Whole pages, so that the next message from the buffer finds it.
        ck_assert_uint_eq(live[a->handle].base, reinterpret_cast<uintptr_t>(buffer));
        ck_assert_uint_eq(live[a->handle].len, 4096);
        cache.release(a);
        ck_assert_uint_eq(live.size(), 1); // kept
        RegCache::Entry *again =
            cache.acquire(&btl, buffer + 3000, 1000, WEFT_BTL_REG_FLAG_REMOTE_READ, &rc);
        ck_assert_ptr_eq(again, a);
        ck_assert_uint_eq(cache.registered(), 1); // no second registration
        cache.release(again);
        // Two more unused ones: the least recently used (page 0) goes beyond max_unused = 2.
        cache.release(cache.acquire(&btl, buffer + 4096, 10, WEFT_BTL_REG_FLAG_REMOTE_READ, &rc));
        cache.release(
            cache.acquire(&btl, buffer + 2 * 4096, 10, WEFT_BTL_REG_FLAG_REMOTE_READ, &rc));
        ck_assert_uint_eq(live.size(), 2);
        for (const auto &kv : live)
            ck_assert_uint_ne(kv.second.base, reinterpret_cast<uintptr_t>(buffer));
        // A held registration is never evicted.
        RegCache::Entry *held =
            cache.acquire(&btl, buffer + 5 * 4096, 10, WEFT_BTL_REG_FLAG_REMOTE_READ, &rc);
        cache.release(
            cache.acquire(&btl, buffer + 6 * 4096, 10, WEFT_BTL_REG_FLAG_REMOTE_READ, &rc));
        cache.release(
            cache.acquire(&btl, buffer + 7 * 4096, 10, WEFT_BTL_REG_FLAG_REMOTE_READ, &rc));
        ck_assert_uint_eq(live.count(held->handle), 1);
        cache.release(held);
        cache.clear();
        ck_assert_uint_eq(live.size(), 0);
    }
}
END_TEST

START_TEST(test_refusal)
{
    weft_btl_module_t btl = emulated();
    RegCache cache(false, 64);
    weft_status_t rc = WEFT_SUCCESS;
    fail_next = 1;
    ck_assert_ptr_null(cache.acquire(&btl, buffer, 10, WEFT_BTL_REG_FLAG_REMOTE_READ, &rc));
    ck_assert_int_eq(rc, WEFT_ERR_OUT_OF_RESOURCE);
    ck_assert_uint_eq(cache.kept(), 0);
    RegCache::Entry *e = cache.acquire(&btl, buffer, 10, WEFT_BTL_REG_FLAG_REMOTE_READ, &rc);
    ck_assert_ptr_nonnull(e);
    cache.release(e);
    cache.release(nullptr);
    ck_assert_uint_eq(live.size(), 0);
}
END_TEST

// A message of many pieces holds one registration per piece: each is found again by an
// address inside it, and all go when released.
START_TEST(test_many_pieces)
{
    weft_btl_module_t btl = emulated();
    RegCache cache(false, 64);
    weft_status_t rc = WEFT_SUCCESS;
    static char big[1000 * 64];
    std::vector<RegCache::Entry *> held;
    for (size_t i = 0; i < 1000; ++i)
        held.push_back(cache.acquire(&btl, big + i * 64, 64, WEFT_BTL_REG_FLAG_REMOTE_WRITE, &rc));
    ck_assert_uint_eq(cache.registered(), 1000);
    for (size_t i = 0; i < 1000; i += 37) {
        RegCache::Entry *e =
            cache.acquire(&btl, big + i * 64 + 10, 20, WEFT_BTL_REG_FLAG_REMOTE_WRITE, &rc);
        ck_assert_ptr_eq(e, held[i]);
        cache.release(e);
    }
    ck_assert_uint_eq(cache.registered(), 1000);
    for (RegCache::Entry *e : held)
        cache.release(e);
    ck_assert_uint_eq(live.size(), 0);
    ck_assert_uint_eq(cache.kept(), 0);
}
END_TEST

} // namespace

int main()
{
    Suite *s = suite_create("pml engine registration cache");
    TCase *tc = tcase_create("rcache");
    tcase_add_test(tc, test_without_leave_pinned);
    tcase_add_test(tc, test_leave_pinned_keeps_and_evicts);
    tcase_add_test(tc, test_refusal);
    tcase_add_test(tc, test_many_pieces);
    suite_add_tcase(s, tc);
    return weft::test::run_suite(s);
}
