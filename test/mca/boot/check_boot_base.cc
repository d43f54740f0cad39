// Tests of boot/base as the core uses it (boot.h): weft_boot_select hands out a module with no
// operation NULL, for every built boot component and for a component that leaves its optional
// operations unset; it refuses a module without a required operation; and the typed defaults
// do what boot.h says.
#include <set>
#include <string>

#include "check_util.h"
#include "mca_repository.h"

#include <boot/boot.h>

#include <unistd.h>

namespace {

weft_status_t ok_init(weft_boot_module_t *, int *, int *, char *, size_t) { return WEFT_SUCCESS; }
weft_status_t ok_barrier(weft_boot_module_t *) { return WEFT_SUCCESS; }
weft_status_t ok_allgather(weft_boot_module_t *, const void *, void *, size_t)
{
    return WEFT_SUCCESS;
}
weft_status_t ok_bcast(weft_boot_module_t *, void *, size_t, int) { return WEFT_SUCCESS; }
weft_status_t ok_finalize(weft_boot_module_t *) { return WEFT_SUCCESS; }

// The test's own components, added to the repository as if linked in. "bare" leaves both
// optional operations NULL; "broken" lacks boot_barrier; "tiny" is smaller than a 1.0 module.
weft_boot_module_t bare_module, broken_module, tiny_module;

weft_boot_module_t complete()
{
    return weft_boot_module_t{
        .struct_size = sizeof(weft_boot_module_t),
        .boot_flags = 0,
        .boot_event_fd = -1,
        .reserved = 0,
        .boot_init = ok_init,
        .boot_barrier = ok_barrier,
        .boot_allgather = ok_allgather,
        .boot_bcast = ok_bcast,
        .boot_abort = nullptr,
        .boot_finalize = ok_finalize,
        .boot_poll_event = nullptr,
    };
}

weft_boot_module_t *bare_init() { return &bare_module; }
weft_boot_module_t *broken_init() { return &broken_module; }
weft_boot_module_t *tiny_init() { return &tiny_module; }

weft_status_t any_query(int *priority, char *, size_t)
{
    *priority = 1;
    return WEFT_SUCCESS;
}

#define TEST_BOOT_COMPONENT(NAME)                                                                  \
    const weft_boot_component_t NAME##_component = {                                               \
        .mca = {WEFT_MCA_COMPONENT_HEADER(weft_boot_component_t, "boot", WEFT_BOOT_ABI_MAJOR,      \
                                          WEFT_BOOT_ABI_MINOR, #NAME, 0, 1, 0),                    \
                .register_params = nullptr, .open = nullptr, .query = any_query,                   \
                .close = nullptr},                                                                 \
        .init = NAME##_init,                                                                       \
    };
TEST_BOOT_COMPONENT(bare)
TEST_BOOT_COMPONENT(broken)
TEST_BOOT_COMPONENT(tiny)

// Only the test's components, none from the build tree; boot selects `name`.
void only_test_components(const char *name)
{
    static std::string empty;
    if (empty.empty())
        empty = weft::test::scratch_dir("weft-test-empty");
    weft::test::isolate_components(empty);
    setenv("WEFT_MCA_boot", name, 1);
    bare_module = complete();
    broken_module = complete();
    broken_module.boot_barrier = nullptr;
    tiny_module = complete();
    tiny_module.struct_size = uint32_t(offsetof(weft_boot_module_t, boot_poll_event));
    for (const auto *c : {&bare_component, &broken_component, &tiny_component})
        weft::mca::Repository::instance().add_static(&c->mca);
    ck_assert_int_eq(weft::mca::register_all(), WEFT_SUCCESS);
}

START_TEST(test_unset_optional_ops_filled)
{
    only_test_components("bare");
    weft_boot_module_t *m = nullptr;
    ck_assert_int_eq(weft_boot_select(&m), WEFT_SUCCESS);
    ck_assert_ptr_eq(m, &bare_module);
    ck_assert(m->boot_abort == weft_boot_default_abort);
    ck_assert(m->boot_poll_event == weft_boot_default_poll_event);
    // The required ones are the component's own.
    ck_assert(m->boot_barrier == ok_barrier);
    weft_boot_event_t ev{};
    ev.struct_size = sizeof ev;
    ev.rank = 12345;
    ck_assert_int_eq(m->boot_poll_event(m, &ev), WEFT_ERR_NOT_SUPPORTED);
    ck_assert_int_eq(ev.rank, 12345); // untouched
    ck_assert(weft::test::messages().empty());
    ck_assert_int_eq(m->boot_abort(m, 7, "the reason"), WEFT_ERR_UNREACH);
    ck_assert_int_eq(weft::test::count_messages(weft::output::Kind::error,
                                                "the job aborted with code 7: the reason"),
                     1);
    ck_assert_int_eq(weft_boot_default_abort(m, 3, nullptr), WEFT_ERR_UNREACH);
    ck_assert_int_eq(
        weft::test::count_messages(weft::output::Kind::error, "the job aborted with code 3"), 1);
    weft_boot_close();
}
END_TEST

START_TEST(test_missing_required_op_refused)
{
    only_test_components("broken");
    weft_boot_module_t *m = &bare_module;
    ck_assert_int_eq(weft_boot_select(&m), WEFT_ERR_NOT_AVAILABLE);
    ck_assert_ptr_null(m);
    ck_assert_int_eq(weft::test::count_messages(weft::output::Kind::error,
                                                "boot/broken: its module lacks boot_barrier"),
                     1);
    weft_boot_close();

    only_test_components("tiny");
    ck_assert_int_eq(weft_boot_select(&m), WEFT_ERR_NOT_AVAILABLE);
    ck_assert_ptr_null(m);
    ck_assert_int_eq(weft::test::count_messages(weft::output::Kind::error,
                                                "boot/tiny: its module lacks the operations"),
                     1);
    // Refused before anything was filled in.
    ck_assert(tiny_module.boot_abort == nullptr);
    weft_boot_close();
}
END_TEST

// Every built boot component, selected in turn (each given the environment its query looks
// for; init only hands out the module, nothing connects), has no NULL operation.
START_TEST(test_every_built_component_complete)
{
    std::set<std::string> names;
    weft::test::isolate_components(weft::test::env_or_fail("WEFT_TEST_COMPONENT_PATH"));
    ck_assert_int_eq(weft::mca::register_all(), WEFT_SUCCESS);
    for (auto *c : weft::mca::Repository::instance().components("boot"))
        names.insert(c->name);
    ck_assert_msg(names.count("singleton"), "boot/singleton was not built");
    setenv("MPIRUN_RANK", "0", 1);      // pmgr
    setenv("PMI_PORT", "nowhere:1", 1); // pmi
    for (const std::string &name : names) {
        weft::test::isolate_components(weft::test::env_or_fail("WEFT_TEST_COMPONENT_PATH"));
        setenv("WEFT_MCA_boot", name.c_str(), 1);
        ck_assert_int_eq(weft::mca::register_all(), WEFT_SUCCESS);
        weft_boot_module_t *m = nullptr;
        ck_assert_msg(weft_boot_select(&m) == WEFT_SUCCESS, "boot/%s not selected:\n%s",
                      name.c_str(), weft::test::all_messages().c_str());
        ck_assert_uint_ge(m->struct_size, sizeof(weft_boot_module_t));
        ck_assert_msg(m->boot_init && m->boot_barrier && m->boot_allgather && m->boot_bcast &&
                          m->boot_abort && m->boot_finalize && m->boot_poll_event,
                      "boot/%s has a NULL operation", name.c_str());
        ck_assert_msg(weft::test::messages().empty(), "boot/%s: unexpected messages:\n%s",
                      name.c_str(), weft::test::all_messages().c_str());
        weft_boot_close();
    }
    unsetenv("MPIRUN_RANK");
    unsetenv("PMI_PORT");
    printf("boot: %zu built components selected, none with a NULL operation\n", names.size());
}
END_TEST

} // namespace

int main()
{
    Suite *s = suite_create("boot/base");
    TCase *tc = tcase_create("select");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_unset_optional_ops_filled);
    tcase_add_test(tc, test_missing_required_op_refused);
    tcase_add_test(tc, test_every_built_component_complete);
    suite_add_tcase(s, tc);
    return weft::test::run_suite(s);
}
