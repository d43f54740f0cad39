// Tests for mca/coll/base/coll_base_select.cc: each operation comes from the
// highest-priority module that provides it, so a module with higher priority
// for one function replaces only that function.
#include "check_util.h"

#include <coll/base/coll_base_select.h>

using namespace weft::coll::base;

namespace {

// Never called: distinct addresses that tell the modules' functions apart.
void marker_basic() {}
void marker_tuned() {}
void marker_old() {}

void fill_all(weft_coll_module_t &m, void (*marker)())
{
    m = weft_coll_module_t{};
    m.struct_size = sizeof m;
#define WEFT_FILL(name) m.name = reinterpret_cast<decltype(m.name)>(marker);
    WEFT_COLL_OPS(WEFT_FILL)
#undef WEFT_FILL
}

START_TEST(test_one_function_replaced)
{
    weft_coll_module_t basic, tuned;
    fill_all(basic, marker_basic);
    tuned = weft_coll_module_t{};
    tuned.struct_size = sizeof tuned;
    tuned.coll_allreduce = reinterpret_cast<decltype(tuned.coll_allreduce)>(marker_tuned);
    const Offer offers[] = {{&basic, 10}, {&tuned, 30}};
    Table t;
    resolve(offers, t);
    ck_assert_ptr_eq(t.owner[size_t(Op::coll_allreduce)], &tuned);
    ck_assert(t.functions.coll_allreduce == tuned.coll_allreduce);
    // Every other operation stays with basic.
    for (size_t k = 0; k < size_t(Op::count); ++k)
        if (k != size_t(Op::coll_allreduce))
            ck_assert_msg(t.owner[k] == &basic, "operation %zu not from basic", k);
    ck_assert(t.functions.coll_bcast == basic.coll_bcast);
    ck_assert(t.functions.coll_agree == basic.coll_agree);
}
END_TEST

START_TEST(test_order_and_ties)
{
    weft_coll_module_t a, b;
    fill_all(a, marker_basic);
    fill_all(b, marker_tuned);
    Table t;
    const Offer tie[] = {{&a, 20}, {&b, 20}};
    resolve(tie, t);
    ck_assert_ptr_eq(t.owner[size_t(Op::coll_barrier)], &a); // the earlier offer
    const Offer reversed[] = {{&b, 5}, {&a, 50}};
    resolve(reversed, t);
    ck_assert_ptr_eq(t.owner[size_t(Op::coll_barrier)], &a); // order does not matter
}
END_TEST

START_TEST(test_older_module_size_respected)
{
    // A module built before coll_agree existed: its struct ends earlier, so
    // whatever lies past its end is never taken, however high its priority.
    weft_coll_module_t basic, old;
    fill_all(basic, marker_basic);
    fill_all(old, marker_old);
    old.struct_size = uint32_t(offsetof(weft_coll_module_t, coll_agree));
    const Offer offers[] = {{&basic, 1}, {&old, 99}};
    Table t;
    resolve(offers, t);
    ck_assert_ptr_eq(t.owner[size_t(Op::coll_iexscan)], &old);
    ck_assert_ptr_eq(t.owner[size_t(Op::coll_agree)], &basic);
    ck_assert_ptr_eq(t.owner[size_t(Op::coll_iagree)], &basic);
}
END_TEST

START_TEST(test_nobody_offers)
{
    weft_coll_module_t only_barrier{};
    only_barrier.struct_size = sizeof only_barrier;
    only_barrier.coll_barrier = reinterpret_cast<decltype(only_barrier.coll_barrier)>(marker_basic);
    const Offer offers[] = {{&only_barrier, 3}};
    Table t;
    resolve(offers, t);
    ck_assert_ptr_eq(t.owner[size_t(Op::coll_barrier)], &only_barrier);
    ck_assert_ptr_null(t.owner[size_t(Op::coll_bcast)]);
    ck_assert(t.functions.coll_bcast == nullptr);
}
END_TEST

} // namespace

int main()
{
    Suite *s = suite_create("coll_base_select");
    TCase *tc = tcase_create("per_function");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_one_function_replaced);
    tcase_add_test(tc, test_order_and_ties);
    tcase_add_test(tc, test_older_module_size_respected);
    tcase_add_test(tc, test_nobody_offers);
    suite_add_tcase(s, tc);
    return weft::test::run_suite(s);
}
