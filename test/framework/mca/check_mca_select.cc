// Tests for framework/mca/mca_select.cc: include and exclude lists, errors
// for bad lists, unknown and refusing components, priorities.
#include "check_util.h"
#include "mca_param.h"
#include "mca_select.h"

using namespace weft;
using weft::output::Kind;
using weft::test::count_messages;

namespace {

// Select btl components with selection list `list` (nullptr: none given).
weft_status_t select_btl(const char *list, std::string &chosen)
{
    test::isolate_components(test::env_or_fail("WEFT_TEST_FIXTURE_DIR"));
    if (list)
        weft_mca_cmdline_set("btl", list);
    mca::FrameworkBase *base = mca::framework_base("btl");
    ck_assert_ptr_nonnull(base);
    weft_status_t rc = base->open();
    if (rc != WEFT_SUCCESS)
        return rc;
    std::vector<mca::Candidate> sel;
    rc = base->select_all(sel);
    chosen.clear();
    for (const auto &c : sel)
        chosen += (chosen.empty() ? "" : ",") + c.component->name;
    return rc;
}

START_TEST(test_default_takes_all_that_run)
{
    std::string chosen;
    ck_assert_int_eq(select_btl(nullptr, chosen), WEFT_SUCCESS);
    // By priority: alpha 30, beta 20; gamma refuses and is not named.
    WEFT_ASSERT_STR_EQ(chosen.c_str(), "alpha,beta");
    ck_assert_int_eq(count_messages(Kind::error, ""), 0);
}
END_TEST

START_TEST(test_include_list)
{
    std::string chosen;
    ck_assert_int_eq(select_btl("beta", chosen), WEFT_SUCCESS);
    WEFT_ASSERT_STR_EQ(chosen.c_str(), "beta");
    ck_assert_int_eq(select_btl("beta,alpha", chosen), WEFT_SUCCESS);
    WEFT_ASSERT_STR_EQ(chosen.c_str(), "alpha,beta");
}
END_TEST

START_TEST(test_exclude_list)
{
    std::string chosen;
    ck_assert_int_eq(select_btl("^alpha", chosen), WEFT_SUCCESS);
    WEFT_ASSERT_STR_EQ(chosen.c_str(), "beta");
    // The caret applies to the whole list.
    ck_assert_int_eq(select_btl("^alpha,beta", chosen), WEFT_SUCCESS);
    WEFT_ASSERT_STR_EQ(chosen.c_str(), "");
}
END_TEST

START_TEST(test_caret_not_first)
{
    std::string chosen;
    ck_assert_int_eq(select_btl("alpha,^beta", chosen), WEFT_ERR_BAD_PARAM);
    ck_assert_int_eq(
        count_messages(Kind::error, "btl = 'alpha,^beta': '^' may only start the list"), 1);
    ck_assert_int_eq(select_btl("^^alpha", chosen), WEFT_ERR_BAD_PARAM);
    ck_assert_int_eq(count_messages(Kind::error, "'^^alpha' is not a component name"), 1);
}
END_TEST

START_TEST(test_unknown_component)
{
    std::string chosen;
    ck_assert_int_eq(select_btl("alpha,nosuch", chosen), WEFT_ERR_BAD_PARAM);
    // (a build may link real components in statically; they are listed first)
    ck_assert_int_eq(count_messages(Kind::error, "there is no btl component 'nosuch' (available: "),
                     1);
    ck_assert_int_eq(count_messages(Kind::error, "alpha, beta, gamma)"), 1);
    // Excluding a name that does not exist is an error too (a typo would
    // otherwise silently exclude nothing).
    ck_assert_int_eq(select_btl("^alpah", chosen), WEFT_ERR_BAD_PARAM);
    ck_assert_int_eq(count_messages(Kind::error, "there is no btl component 'alpah'"), 1);
    // A component found but rejected is named with the reason.
    ck_assert_int_eq(select_btl("oldabi", chosen), WEFT_ERR_BAD_PARAM);
    ck_assert_int_eq(count_messages(Kind::error, "component btl/oldabi was found but cannot be "
                                                 "used: built for MCA ABI 2.0, this is 3.1"),
                     1);
}
END_TEST

START_TEST(test_named_component_refuses)
{
    std::string chosen;
    ck_assert_int_eq(select_btl("alpha,gamma", chosen), WEFT_ERR_NOT_AVAILABLE);
    ck_assert_int_eq(
        count_messages(Kind::error, "btl/gamma: refused because btl_gamma_refuse is set"), 1);
    ck_assert_int_eq(count_messages(Kind::error, "(btl = 'alpha,gamma', from command line)"), 1);
    // Made to run, it is selected.
    test::isolate_components(test::env_or_fail("WEFT_TEST_FIXTURE_DIR"));
    setenv("WEFT_MCA_btl_gamma_refuse", "false", 1);
    weft_mca_cmdline_set("btl", "gamma");
    mca::FrameworkBase *base = mca::framework_base("btl");
    ck_assert_int_eq(base->open(), WEFT_SUCCESS);
    std::vector<mca::Candidate> sel;
    ck_assert_int_eq(base->select_all(sel), WEFT_SUCCESS);
    ck_assert_int_eq(sel.size(), 1);
    ck_assert_int_eq(sel[0].priority, 10);
}
END_TEST

START_TEST(test_named_component_fails_open)
{
    test::isolate_components(test::env_or_fail("WEFT_TEST_FIXTURE_DIR"));
    setenv("WEFT_MCA_btl_beta_fail_open", "1", 1);
    weft_mca_cmdline_set("btl", "beta");
    ck_assert_int_eq(mca::framework_base("btl")->open(), WEFT_ERR_OUT_OF_RESOURCE);
    ck_assert_int_eq(count_messages(Kind::error, "btl/beta: open failed: out of resources"), 1);
}
END_TEST

START_TEST(test_priority_from_parameter)
{
    test::isolate_components(test::env_or_fail("WEFT_TEST_FIXTURE_DIR"));
    setenv("WEFT_MCA_btl_beta_priority", "99", 1);
    mca::FrameworkBase *base = mca::framework_base("btl");
    ck_assert_int_eq(base->open(), WEFT_SUCCESS);
    std::vector<mca::Candidate> sel;
    ck_assert_int_eq(base->select_all(sel), WEFT_SUCCESS);
    ck_assert_int_eq(sel.size(), 2);
    WEFT_ASSERT_STR_EQ(sel[0].component->name.c_str(), "beta");
    ck_assert_int_eq(sel[0].priority, 99);
}
END_TEST

START_TEST(test_pick_one)
{
    test::isolate_components(test::env_or_fail("WEFT_TEST_FIXTURE_DIR"));
    mca::FrameworkBase *base = mca::framework_base("pml");
    ck_assert_int_eq(base->open(), WEFT_SUCCESS);
    mca::Component *one = nullptr;
    ck_assert_int_eq(base->select_one(one), WEFT_SUCCESS);
    WEFT_ASSERT_STR_EQ(one->name.c_str(), "dup");
    base->close();
    ck_assert(!one->opened);

    // Nothing can run: one error that lists every refusal.
    test::isolate_components(test::env_or_fail("WEFT_TEST_FIXTURE_DIR"));
    setenv("WEFT_MCA_pml_dup_refuse", "yes", 1);
    base = mca::framework_base("pml");
    ck_assert_int_eq(base->open(), WEFT_SUCCESS);
    ck_assert_int_eq(base->select_one(one), WEFT_ERR_NOT_FOUND);
    ck_assert_ptr_null(one);
    ck_assert_int_eq(
        count_messages(
            Kind::error,
            "No pml component can run here:\n  pml/dup: refused because pml_dup_refuse is set"),
        1);
}
END_TEST

START_TEST(test_filter_unit)
{
    mca::Filter f;
    ck_assert(f.allows("x"));
    f.given = true;
    f.names = {"a"};
    ck_assert(f.allows("a") && !f.allows("b"));
    f.exclude = true;
    ck_assert(!f.allows("a") && f.allows("b"));
}
END_TEST

} // namespace

int main()
{
    Suite *s = suite_create("mca_select");
    TCase *tc = tcase_create("select");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_default_takes_all_that_run);
    tcase_add_test(tc, test_include_list);
    tcase_add_test(tc, test_exclude_list);
    tcase_add_test(tc, test_caret_not_first);
    tcase_add_test(tc, test_unknown_component);
    tcase_add_test(tc, test_named_component_refuses);
    tcase_add_test(tc, test_named_component_fails_open);
    tcase_add_test(tc, test_priority_from_parameter);
    tcase_add_test(tc, test_pick_one);
    tcase_add_test(tc, test_filter_unit);
    suite_add_tcase(s, tc);
    return weft::test::run_suite(s);
}
