// Tests for framework/mca/mca_repository.cc and the loader backends: which
// component files are loaded, which are rejected and with what message.
#include "check_util.h"
#include "mca_param.h"
#include "mca_repository.h"
#include "weft_config.h"

#include <btl/btl.h>
#include <pml/pml.h>

#include <algorithm>

using namespace weft;
using weft::output::Kind;
using weft::test::count_messages;

extern "C" const weft_pml_component_t mca_pml_dup_component;

namespace {

const char *const backends[] = {"dlopen", "libltdl"};

bool backend_built(const char *name)
{
    if (std::string(name) == "libltdl")
        return test::env_or_fail("WEFT_TEST_HAVE_LTDL") == "yes";
    return true;
}

mca::Component *find(const char *fw, const char *name)
{
    for (auto *c : mca::Repository::instance().components(fw))
        if (c->name == name)
            return c;
    return nullptr;
}

const mca::Rejected *rejected(const char *fw, const char *name)
{
    for (const auto &r : mca::Repository::instance().rejected())
        if (r.framework == fw && r.name == name)
            return &r;
    return nullptr;
}

void assert_rejected(const char *name, const std::string &reason_part)
{
    const mca::Rejected *r = rejected("btl", name);
    ck_assert_msg(r != nullptr, "btl/%s was not rejected; messages:\n%s", name,
                  test::all_messages().c_str());
    ck_assert_msg(r->reason.find(reason_part) != std::string::npos,
                  "btl/%s rejected for '%s', expected '%s'", name, r->reason.c_str(),
                  reason_part.c_str());
    // And the user is told, naming the component and the file.
    std::string msg = std::string("btl/") + name + ": " + r->reason + "; " + r->origin + " ignored";
    ck_assert_msg(count_messages(Kind::warning, msg) == 1, "missing warning '%s'; got:\n%s",
                  msg.c_str(), test::all_messages().c_str());
}

// Every fixture, through each loader backend.
START_TEST(test_scan_fixtures)
{
    const char *backend = backends[_i];
    if (!backend_built(backend)) {
        fprintf(stderr, "loader backend %s not built; skipped\n", backend);
        return;
    }
    const std::string dir = test::env_or_fail("WEFT_TEST_FIXTURE_DIR");
    test::isolate_components(dir, backend);
    ck_assert_int_eq(mca::Repository::instance().scan(), WEFT_SUCCESS);
    WEFT_ASSERT_STR_EQ(mca::Repository::instance().loader_name().c_str(), backend);

    for (const char *good : {"alpha", "beta", "gamma"}) {
        mca::Component *c = find("btl", good);
        ck_assert_msg(c != nullptr, "btl/%s not loaded with %s:\n%s", good, backend,
                      test::all_messages().c_str());
        WEFT_ASSERT_STR_EQ(c->origin.c_str(), (dir + "/mca_btl_" + good + ".so").c_str());
        ck_assert_uint_eq(c->desc->version.patch, 3);
    }
    ck_assert_ptr_nonnull(find("pml", "dup"));

    assert_rejected("oldabi", "built for MCA ABI 2.0, this is 3.1");
    assert_rejected("newapi", "built for btl API 1.7, this is " +
                                  std::to_string(WEFT_BTL_ABI_MAJOR) + "." +
                                  std::to_string(WEFT_BTL_ABI_MINOR));
    assert_rejected("misnamed",
                    "the descriptor says component 'other' but the file is named for 'misnamed'");
    // The loader's error names the missing symbol, with either backend: both
    // fail at load time because components are linked with -z now.
    assert_rejected("unresolved", "undefined symbol: weft_fixture_function_that_exists_nowhere");
    ck_assert_int_eq(count_messages(Kind::warning, ""), 4);

    // Parameters of loaded components are registered; of rejected ones, not.
    ck_assert_ptr_nonnull(weft_mca_param_find("btl_alpha_priority"));
    ck_assert_ptr_null(weft_mca_param_find("btl_oldabi_priority"));
    ck_assert_ptr_null(weft_mca_param_find("btl_unresolved_priority"));
    // Scanning again changes nothing.
    size_t n = mca::Repository::instance().components().size();
    mca::Repository::instance().scan();
    ck_assert_uint_eq(mca::Repository::instance().components().size(), n);
}
END_TEST

START_TEST(test_static_and_so_loaded_once)
{
    test::isolate_components(test::env_or_fail("WEFT_TEST_FIXTURE_DIR"));
    mca::Repository::instance().add_static(&mca_pml_dup_component.mca);
    mca::Repository::instance().scan();
    auto pmls = mca::Repository::instance().components("pml");
    ck_assert_int_eq(
        std::count_if(pmls.begin(), pmls.end(), [](auto *c) { return c->name == "dup"; }), 1);
    mca::Component *dup = find("pml", "dup");
    WEFT_ASSERT_STR_EQ(dup->origin.c_str(), "static");
    ck_assert_ptr_eq(dup->desc, &mca_pml_dup_component.mca);
    const mca::Rejected *r = rejected("pml", "dup");
    ck_assert_ptr_nonnull(r);
    ck_assert(r->reason.find("already loaded") != std::string::npos);
    // Its parameters were registered once, without a "registered twice" error.
    ck_assert_ptr_nonnull(weft_mca_param_find("pml_dup_priority"));
    ck_assert_int_eq(count_messages(Kind::error, ""), 0);
}
END_TEST

START_TEST(test_component_path_order)
{
    // The same directory twice: the first wins, the second is skipped quietly.
    const std::string dir = test::env_or_fail("WEFT_TEST_FIXTURE_DIR");
    test::isolate_components(dir + ":" + dir + ":/nonexistent/dir");
    mca::Repository::instance().scan();
    auto btls = mca::Repository::instance().components("btl");
    ck_assert_int_eq(
        std::count_if(btls.begin(), btls.end(), [](auto *c) { return c->name == "alpha"; }), 1);
    ck_assert_int_eq(count_messages(Kind::error, ""), 0);
}
END_TEST

START_TEST(test_check_fields)
{
    test::isolate();
    weft_mca_component_t d = mca_pml_dup_component.mca;
    WEFT_ASSERT_STR_EQ(mca::Repository::check(&d, "pml", "dup").c_str(), "");
    WEFT_ASSERT_STR_EQ(mca::Repository::check(nullptr, "pml", "dup").c_str(), "no descriptor");

    d = mca_pml_dup_component.mca;
    d.mca_abi_minor = WEFT_MCA_ABI_MINOR + 1;
    ck_assert(mca::Repository::check(&d, "pml", "dup").find("built for MCA ABI 3.2, this is 3.1") ==
              0);

    d = mca_pml_dup_component.mca;
    d.framework_abi_major = 2;
    ck_assert(mca::Repository::check(&d, "pml", "dup").find("built for pml API 2.0, this is 1.0") ==
              0);

    d = mca_pml_dup_component.mca;
    d.struct_size = sizeof(weft_mca_component_t) - 8;
    ck_assert(mca::Repository::check(&d, "pml", "dup").find("bytes, pml API 1.0 needs at least") !=
              std::string::npos);

    d = mca_pml_dup_component.mca;
    d.reserved = 1;
    WEFT_ASSERT_STR_EQ(mca::Repository::check(&d, "pml", "dup"),
                       "reserved descriptor fields are not zero");

    d = mca_pml_dup_component.mca;
    d.flags = 0x80000001u;
    WEFT_ASSERT_STR_EQ(mca::Repository::check(&d, "pml", "dup"),
                       "unknown descriptor flags 0x80000000");

    d = mca_pml_dup_component.mca;
    d.query = nullptr;
    WEFT_ASSERT_STR_EQ(mca::Repository::check(&d, "pml", "dup").c_str(),
                       "the descriptor has no query function");

    d = mca_pml_dup_component.mca;
    std::memset(d.name, 'x', sizeof d.name);
    ck_assert(mca::Repository::check(&d, "pml", "dup").find("not NUL-terminated") !=
              std::string::npos);

    d = mca_pml_dup_component.mca;
    ck_assert(
        mca::Repository::check(&d, "btl", "dup").find("the descriptor says framework 'pml'") == 0);
    std::strcpy(d.framework, "nosuch");
    WEFT_ASSERT_STR_EQ(mca::Repository::check(&d, "nosuch", "dup").c_str(),
                       "unknown framework 'nosuch'");
}
END_TEST

START_TEST(test_bad_loader_value)
{
    test::isolate_components("/nonexistent", "ltdl_please");
    ck_assert_int_eq(mca::Repository::instance().scan(), WEFT_ERR_BAD_PARAM);
    ck_assert_int_eq(count_messages(Kind::error, "parameter mca_base_loader: value 'ltdl_please'"),
                     1);
    // It falls back to its default backend and still works.
    WEFT_ASSERT_STR_EQ(mca::Repository::instance().loader_name().c_str(), WEFT_DEFAULT_LOADER);
}
END_TEST

} // namespace

int main()
{
    Suite *s = suite_create("mca_repository");
    TCase *tc = tcase_create("repository");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_scan_fixtures, 0, 2);
    tcase_add_test(tc, test_static_and_so_loaded_once);
    tcase_add_test(tc, test_component_path_order);
    tcase_add_test(tc, test_check_fields);
    tcase_add_test(tc, test_bad_loader_value);
    suite_add_tcase(s, tc);
    return weft::test::run_suite(s);
}
