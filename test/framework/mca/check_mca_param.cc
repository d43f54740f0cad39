// Tests for framework/mca/mca_param.cc: sources and their precedence, param
// files, synonyms, the unknown-name warning, bad values and bad tables.
#include "check_util.h"
#include "mca_param.h"

#include <sys/stat.h>

using namespace weft;
using weft::output::Kind;
using weft::test::count_messages;

namespace {

weft_mca_param_def_t def(const char *name, weft_mca_param_type_t type, const char *dflt,
                         const weft_mca_enum_value_t *enums = nullptr,
                         const char *synonyms = nullptr, const char *range = nullptr)
{
    return {.name = name,
            .type = type,
            .default_value = dflt,
            .help = "A parameter for the unit tests.",
            .level = 4,
            .scope = WEFT_MCA_SCOPE_LOCAL,
            .enum_values = enums,
            .synonyms = synonyms,
            .range = range};
}

weft_mca_param_t *register_one(weft_mca_param_def_t d, weft_status_t expect = WEFT_SUCCESS)
{
    weft_mca_param_t *h = nullptr;
    weft_status_t rc = weft_mca_param_register_table("test", "unit", &d, 1, sizeof d, &h);
    ck_assert_msg(rc == expect, "registration returned %d, expected %d; messages:\n%s", rc, expect,
                  test::all_messages().c_str());
    return h;
}

void no_errors()
{
    ck_assert_msg(count_messages(Kind::error, "") == 0 && count_messages(Kind::warning, "") == 0,
                  "unexpected messages:\n%s", test::all_messages().c_str());
}

START_TEST(test_default_source)
{
    test::isolate();
    auto *p = register_one(def("eager_limit", WEFT_MCA_PARAM_SIZE, "64k"));
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(weft_mca_param_size(p), 65536);
    ck_assert_int_eq(weft_mca_param_source(p), WEFT_MCA_SOURCE_DEFAULT);
    ck_assert_ptr_eq(weft_mca_param_find("test_unit_eager_limit"), p);
    no_errors();
}
END_TEST

// Each source, alone and with every lower one present: the highest wins.
START_TEST(test_precedence)
{
    for (int mask = 0; mask < 8; ++mask) {
        const bool file = mask & 1, env = mask & 2, cmd = mask & 4;
        test::isolate();
        if (file)
            setenv("WEFT_MCA_PARAM_FILES",
                   test::temp_file("# comment\n test_unit_level_value = 2 # trailing\n").c_str(),
                   1);
        if (env)
            setenv("WEFT_MCA_test_unit_level_value", "3", 1);
        if (cmd)
            ck_assert_int_eq(weft_mca_cmdline_set("test_unit_level_value", "4"), WEFT_SUCCESS);
        auto *p = register_one(def("level_value", WEFT_MCA_PARAM_INT, "1"));
        int64_t want = cmd ? 4 : env ? 3 : file ? 2 : 1;
        weft_mca_param_source_t src = cmd    ? WEFT_MCA_SOURCE_CMDLINE
                                      : env  ? WEFT_MCA_SOURCE_ENV
                                      : file ? WEFT_MCA_SOURCE_FILE
                                             : WEFT_MCA_SOURCE_DEFAULT;
        ck_assert_msg(weft_mca_param_int(p) == want, "mask %d: value %lld, expected %lld", mask,
                      (long long)weft_mca_param_int(p), (long long)want);
        ck_assert_int_eq(weft_mca_param_source(p), src);
        if (src == WEFT_MCA_SOURCE_FILE)
            ck_assert(p->source_detail.find(":2") != std::string::npos);
        if (src == WEFT_MCA_SOURCE_ENV)
            WEFT_ASSERT_STR_EQ(p->source_detail.c_str(), "WEFT_MCA_test_unit_level_value");
        no_errors();
    }
}
END_TEST

START_TEST(test_file_order_and_home_file)
{
    test::isolate();
    // Within one file the last line wins; across files the first file.
    std::string first = test::temp_file("test_unit_name = first0\ntest_unit_name = first\n");
    std::string second = test::temp_file("test_unit_name = second\ntest_unit_other = 7\n");
    setenv("WEFT_MCA_PARAM_FILES", (first + ":" + second).c_str(), 1);
    auto *a = register_one(def("name", WEFT_MCA_PARAM_STRING, "none"));
    auto *b = register_one(def("other", WEFT_MCA_PARAM_INT, "0"));
    WEFT_ASSERT_STR_EQ(weft_mca_param_string(a), "first");
    ck_assert_int_eq(weft_mca_param_int(b), 7);

    // Without WEFT_MCA_PARAM_FILES, $HOME/.weft/mca-params.conf is read.
    test::isolate();
    unsetenv("WEFT_MCA_PARAM_FILES");
    std::string dir = std::string(getenv("HOME")) + "/.weft";
    mkdir(dir.c_str(), 0700);
    FILE *f = fopen((dir + "/mca-params.conf").c_str(), "w");
    ck_assert_ptr_nonnull(f);
    fputs("test_unit_from_home = yes\n", f);
    fclose(f);
    auto *c = register_one(def("from_home", WEFT_MCA_PARAM_BOOL, "no"));
    ck_assert(weft_mca_param_bool(c));
    ck_assert_int_eq(weft_mca_param_source(c), WEFT_MCA_SOURCE_FILE);
    remove((dir + "/mca-params.conf").c_str());
    no_errors();
}
END_TEST

START_TEST(test_file_bad_lines)
{
    test::isolate();
    std::string path = test::temp_file("test_unit_x = 1\nthis line has no equals\nBad-Name = 3\n");
    setenv("WEFT_MCA_PARAM_FILES", (path + ":/nonexistent/weft.conf").c_str(), 1);
    register_one(def("x", WEFT_MCA_PARAM_INT, "0"));
    ck_assert_int_eq(count_messages(Kind::warning, path + ":2: expected 'name = value'"), 1);
    ck_assert_int_eq(count_messages(Kind::warning, path + ":3: expected 'name = value'"), 1);
    ck_assert_int_eq(count_messages(Kind::warning, "/nonexistent/weft.conf"), 1);
}
END_TEST

START_TEST(test_unknown_name_suggestion)
{
    test::isolate();
    setenv("WEFT_MCA_test_unit_eagr_limit", "5", 1);
    weft_mca_cmdline_set("test_unit_eager_limt", "6");
    setenv("WEFT_MCA_PARAM_FILES", test::temp_file("zzz_totally_different = 1\n").c_str(), 1);
    register_one(def("eager_limit", WEFT_MCA_PARAM_SIZE, "64k"));
    ck_assert_int_eq(weft_mca_param_warn_unknown(), 3);
    ck_assert_int_eq(count_messages(Kind::warning,
                                    "unknown parameter test_unit_eagr_limit (from the "
                                    "environment); did you mean test_unit_eager_limit?"),
                     1);
    ck_assert_int_eq(count_messages(Kind::warning, "unknown parameter test_unit_eager_limt (from "
                                                   "the command line); did you mean "
                                                   "test_unit_eager_limit?"),
                     1);
    ck_assert_int_eq(count_messages(Kind::warning, "zzz_totally_different"), 1);
    ck_assert_int_eq(count_messages(Kind::warning, "zzz_totally_different (from param file"), 1);
    ck_assert_int_eq(count_messages(Kind::warning, "did you mean"), 2);
    // Once per name: a second check counts them but says nothing more.
    size_t before = test::messages().size();
    ck_assert_int_eq(weft_mca_param_warn_unknown(), 3);
    ck_assert_int_eq(test::messages().size(), before);
}
END_TEST

START_TEST(test_bad_values)
{
    static const weft_mca_enum_value_t mech[] = {{"cma", 0}, {"none", 1}, {nullptr, 0}};
    struct {
        weft_mca_param_type_t type;
        const char *dflt;
        const char *bad;
        const char *expected;
    } cases[] = {
        {WEFT_MCA_PARAM_BOOL, "true", "perhaps", "expected a boolean"},
        {WEFT_MCA_PARAM_INT, "1", "ten", "expected an integer"},
        {WEFT_MCA_PARAM_SIZE, "8k", "8 parsecs", "expected a size in bytes"},
        {WEFT_MCA_PARAM_DOUBLE, "0.5", "half", "expected a number"},
        {WEFT_MCA_PARAM_ENUM, "cma", "knem", "expected one of: cma none"},
    };
    for (const auto &c : cases) {
        test::isolate();
        setenv("WEFT_MCA_test_unit_p", c.bad, 1);
        auto *p =
            register_one(def("p", c.type, c.dflt, c.type == WEFT_MCA_PARAM_ENUM ? mech : nullptr),
                         WEFT_ERR_BAD_PARAM);
        // The parameter stays known, at its default.
        ck_assert_ptr_nonnull(p);
        ck_assert_int_eq(weft_mca_param_source(p), WEFT_MCA_SOURCE_DEFAULT);
        std::string want =
            std::string("parameter test_unit_p: value '") + c.bad +
            "' from environment variable WEFT_MCA_test_unit_p is not valid: " + c.expected;
        ck_assert_msg(count_messages(Kind::error, want) == 1, "wanted '%s', got:\n%s", want.c_str(),
                      test::all_messages().c_str());
    }
    // A bad command-line value for a registered parameter keeps the old one.
    test::isolate();
    auto *p = register_one(def("q", WEFT_MCA_PARAM_SIZE, "1M"));
    ck_assert_int_eq(weft_mca_cmdline_set("test_unit_q", "lots"), WEFT_ERR_BAD_PARAM);
    ck_assert_uint_eq(weft_mca_param_size(p), 1 << 20);
    ck_assert_int_eq(count_messages(Kind::error, "value 'lots' from the command line"), 1);
    ck_assert_int_eq(weft_mca_param_set(p, "2M"), WEFT_SUCCESS);
    ck_assert_uint_eq(weft_mca_param_size(p), 2 << 20);
    ck_assert_int_eq(weft_mca_param_source(p), WEFT_MCA_SOURCE_API);
}
END_TEST

START_TEST(test_bad_tables)
{
    test::isolate();
    auto d = def("no_help", WEFT_MCA_PARAM_INT, "1");
    d.help = "";
    register_one(d, WEFT_ERR_BAD_PARAM);
    ck_assert_int_eq(
        count_messages(Kind::error, "test_unit_no_help cannot be registered: it has no help text"),
        1);

    d = def("level_zero", WEFT_MCA_PARAM_INT, "1");
    d.level = 0;
    register_one(d, WEFT_ERR_BAD_PARAM);
    d.level = 10;
    register_one(d, WEFT_ERR_BAD_PARAM);
    ck_assert_int_eq(count_messages(Kind::error, "is not in 1-9"), 2);

    register_one(def("Bad-Name", WEFT_MCA_PARAM_INT, "1"), WEFT_ERR_BAD_PARAM);
    ck_assert_int_eq(count_messages(Kind::error, "must match [a-z0-9_]+"), 1);

    register_one(def("bad_default", WEFT_MCA_PARAM_SIZE, "big"), WEFT_ERR_BAD_PARAM);
    ck_assert_int_eq(count_messages(Kind::error, "its default 'big' is not valid"), 1);

    register_one(def("enum_empty", WEFT_MCA_PARAM_ENUM, "x"), WEFT_ERR_BAD_PARAM);
    ck_assert_int_eq(count_messages(Kind::error, "enum without values"), 1);

    register_one(def("twice", WEFT_MCA_PARAM_INT, "1"));
    register_one(def("twice", WEFT_MCA_PARAM_INT, "1"), WEFT_ERR_EXISTS);
    ck_assert_int_eq(count_messages(Kind::error, "test_unit_twice is registered twice"), 1);
    ck_assert_ptr_null(weft_mca_param_find("test_unit_no_help"));
}
END_TEST

START_TEST(test_synonyms)
{
    test::isolate();
    setenv("WEFT_MCA_test_old_name", "12k", 1);
    auto *p = register_one(def("new_name", WEFT_MCA_PARAM_SIZE, "1k", nullptr, "test_old_name"));
    ck_assert_uint_eq(weft_mca_param_size(p), 12 * 1024);
    ck_assert_int_eq(
        count_messages(Kind::warning,
                       "parameter test_old_name is deprecated; use test_unit_new_name"),
        1);
    ck_assert_ptr_eq(weft_mca_param_find("test_old_name"), p);
    // A known synonym is not an unknown name.
    ck_assert_int_eq(weft_mca_param_warn_unknown(), 0);
}
END_TEST

START_TEST(test_older_table_rows)
{
    test::isolate();
    // A table built when the row ended before `synonyms`.
    auto d = def("short_row", WEFT_MCA_PARAM_INT, "3", nullptr, "should_be_ignored");
    weft_mca_param_t *h = nullptr;
    ck_assert_int_eq(weft_mca_param_register_table("test", "unit", &d, 1,
                                                   offsetof(weft_mca_param_def_t, synonyms), &h),
                     WEFT_SUCCESS);
    ck_assert_int_eq(weft_mca_param_int(h), 3);
    ck_assert_ptr_null(weft_mca_param_find("should_be_ignored"));
}
END_TEST

START_TEST(test_list_accessors)
{
    test::isolate();
    setenv("WEFT_MCA_test_unit_rails", "eth0, eth1", 1);
    auto *p = register_one(def("rails", WEFT_MCA_PARAM_LIST, ""));
    ck_assert_uint_eq(weft_mca_param_list_count(p), 2);
    WEFT_ASSERT_STR_EQ(weft_mca_param_list_item(p, 1), "eth1");
    ck_assert_ptr_null(weft_mca_param_list_item(p, 2));
    WEFT_ASSERT_STR_EQ(weft_mca_param_string(p), "eth0,eth1");
    // The wrong reader gives the type's zero, never garbage.
    ck_assert_int_eq(weft_mca_param_int(p), 0);
}
END_TEST

// A declared range is enforced for every source, with the parameter, the value and the range in
// the error; the old value stays.
START_TEST(test_ranges)
{
    test::isolate();
    setenv("WEFT_MCA_test_unit_eager", "16T", 1);
    auto *p = register_one(def("eager", WEFT_MCA_PARAM_SIZE, "4k", nullptr, nullptr, "64..1M"),
                           WEFT_ERR_BAD_PARAM);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(weft_mca_param_size(p), 4096);
    ck_assert_int_eq(
        count_messages(Kind::error,
                       "parameter test_unit_eager: value '16T' from environment "
                       "variable WEFT_MCA_test_unit_eager is outside its range 64..1M"),
        1);
    // The ends are in the range.
    ck_assert_int_eq(weft_mca_param_set(p, "64"), WEFT_SUCCESS);
    ck_assert_int_eq(weft_mca_param_set(p, "1M"), WEFT_SUCCESS);
    ck_assert_int_eq(weft_mca_param_set(p, "63"), WEFT_ERR_BAD_PARAM);
    ck_assert_int_eq(weft_mca_param_set(p, "1025k"), WEFT_ERR_BAD_PARAM);
    ck_assert_uint_eq(weft_mca_param_size(p), 1 << 20);
    ck_assert_int_eq(weft_mca_cmdline_set("test_unit_eager", "32"), WEFT_ERR_BAD_PARAM);
    ck_assert_int_eq(count_messages(Kind::error, "value '32' from the command line (--mca) is "
                                                 "outside its range 64..1M"),
                     1);

    // Open ends, negative integers and doubles.
    test::isolate();
    auto *n = register_one(def("count", WEFT_MCA_PARAM_INT, "1", nullptr, nullptr, "1.."));
    ck_assert_int_eq(weft_mca_param_set(n, "0"), WEFT_ERR_BAD_PARAM);
    ck_assert_int_eq(weft_mca_param_set(n, "-5"), WEFT_ERR_BAD_PARAM);
    ck_assert_int_eq(weft_mca_param_set(n, "9223372036854775807"), WEFT_SUCCESS);
    auto *m = register_one(def("delta", WEFT_MCA_PARAM_INT, "-3", nullptr, nullptr, "-10..-1"));
    ck_assert_int_eq(weft_mca_param_set(m, "0"), WEFT_ERR_BAD_PARAM);
    ck_assert_int_eq(weft_mca_param_set(m, "-10"), WEFT_SUCCESS);
    auto *d = register_one(def("ratio", WEFT_MCA_PARAM_DOUBLE, "0.5", nullptr, nullptr, "..1"));
    ck_assert_int_eq(weft_mca_param_set(d, "1.5"), WEFT_ERR_BAD_PARAM);
    ck_assert_int_eq(weft_mca_param_set(d, "-1e9"), WEFT_SUCCESS);
    ck_assert_int_eq(count_messages(Kind::error, "is outside its range"), 4);
    ck_assert_int_eq(count_messages(Kind::error, "value '0' from the program is outside its "
                                                 "range 1.. (at least 1)"),
                     1);
    ck_assert_int_eq(count_messages(Kind::error, "value '1.5' from the program is outside its "
                                                 "range ..1 (at most 1)"),
                     1);
}
END_TEST

// A range that cannot be right is a bad row: the table's author hears of it at once.
START_TEST(test_information)
{
    // An information parameter: its value is what the component registered (or sets itself);
    // a value from a user's source is refused, naming the parameter and the source.
    test::isolate();
    setenv("WEFT_MCA_test_unit_found", "forced", 1);
    weft_mca_param_def_t d = def("found", WEFT_MCA_PARAM_STRING, "what the probe found");
    d.scope = WEFT_MCA_SCOPE_INFO;
    auto *p = register_one(d, WEFT_ERR_BAD_PARAM);
    ck_assert_ptr_nonnull(p);
    WEFT_ASSERT_STR_EQ(weft_mca_param_string(p), "what the probe found");
    ck_assert_int_eq(count_messages(Kind::error,
                                    "parameter test_unit_found is information (what test/unit "
                                    "found out), not a setting: the value 'forced' from "
                                    "environment variable WEFT_MCA_test_unit_found is not taken"),
                     1);
    ck_assert_int_eq(weft_mca_cmdline_set("test_unit_found", "x"), WEFT_ERR_BAD_PARAM);
    ck_assert_int_eq(weft_mca_param_set(p, "found again"), WEFT_SUCCESS);
    WEFT_ASSERT_STR_EQ(weft_mca_param_string(p), "found again");
    unsetenv("WEFT_MCA_test_unit_found");
    // A scope that does not exist is a bad row.
    test::isolate();
    d = def("odd", WEFT_MCA_PARAM_INT, "1");
    d.scope = weft_mca_param_scope_t(3); // within the type's range (no UB), not a scope
    register_one(d, WEFT_ERR_BAD_PARAM);
    ck_assert_int_eq(count_messages(Kind::error, "its scope 3 is unknown"), 1);
}
END_TEST

START_TEST(test_bad_ranges)
{
    test::isolate();
    const struct {
        weft_mca_param_type_t type;
        const char *dflt, *range, *why;
    } cases[] = {
        {WEFT_MCA_PARAM_SIZE, "8", "64..1M", "its default '8' is outside its range 64..1M"},
        {WEFT_MCA_PARAM_STRING, "x", "1..2", "a range is only for int, size and double"},
        {WEFT_MCA_PARAM_INT, "1", "1-2", "is not of the form min..max"},
        {WEFT_MCA_PARAM_INT, "1", "..", "has neither end"},
        {WEFT_MCA_PARAM_INT, "1", "5..1", "is empty"},
        {WEFT_MCA_PARAM_SIZE, "1", "1..lots", "has an end 'lots' that is not valid"},
    };
    int i = 0;
    for (const auto &c : cases) {
        const std::string name = "r" + std::to_string(i++);
        register_one(def(name.c_str(), c.type, c.dflt, nullptr, nullptr, c.range),
                     WEFT_ERR_BAD_PARAM);
        ck_assert_msg(count_messages(Kind::error, c.why) == 1, "wanted '%s', got:\n%s", c.why,
                      test::all_messages().c_str());
        ck_assert_ptr_null(weft_mca_param_find(("test_unit_" + name).c_str()));
    }
}
END_TEST

// Param files must be regular files of at most 1 MiB: a device, a FIFO, a directory or a huge
// file draws a warning naming it and is ignored, at once (never read forever, never waited on).
START_TEST(test_param_file_kinds)
{
    test::isolate();
    const std::string dir = std::string(getenv("HOME")) + "/pf";
    mkdir(dir.c_str(), 0700);
    const std::string fifo = dir + "/fifo", big = dir + "/big";
    ck_assert_int_eq(mkfifo(fifo.c_str(), 0600), 0);
    FILE *f = fopen(big.c_str(), "w");
    ck_assert_ptr_nonnull(f);
    fputs("test_unit_kind = 5\n", f);
    ck_assert_int_eq(fseek(f, 2 << 20, SEEK_SET), 0);
    fputs("\n", f);
    fclose(f);
    const std::string good = test::temp_file("test_unit_kind = 7\n");
    setenv("WEFT_MCA_PARAM_FILES",
           ("/dev/zero:" + fifo + ":" + dir + ":" + big + ":" + good).c_str(), 1);
    auto *p = register_one(def("kind", WEFT_MCA_PARAM_INT, "1"));
    ck_assert_int_eq(weft_mca_param_int(p), 7);
    ck_assert_int_eq(count_messages(Kind::warning,
                                    "param file /dev/zero (from WEFT_MCA_PARAM_FILES) "
                                    "cannot be read: it is a character device; a "
                                    "param file must be a regular file"),
                     1);
    ck_assert_int_eq(count_messages(Kind::warning, fifo + " (from WEFT_MCA_PARAM_FILES) cannot be "
                                                          "read: it is a FIFO"),
                     1);
    ck_assert_int_eq(count_messages(Kind::warning, dir + " (from WEFT_MCA_PARAM_FILES) cannot be "
                                                         "read: it is a directory"),
                     1);
    ck_assert_int_eq(count_messages(Kind::warning, big + " (from WEFT_MCA_PARAM_FILES) cannot be "
                                                         "read: it has 2097153 bytes; a param file "
                                                         "may have at most 1 MiB"),
                     1);
    ck_assert_int_eq(count_messages(Kind::warning, ""), 4);
    unlink(fifo.c_str());
    unlink(big.c_str());
    rmdir(dir.c_str());
    unlink(good.c_str());
}
END_TEST

} // namespace

int main()
{
    Suite *s = suite_create("mca_param");
    TCase *tc = tcase_create("registry");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_default_source);
    tcase_add_test(tc, test_precedence);
    tcase_add_test(tc, test_file_order_and_home_file);
    tcase_add_test(tc, test_file_bad_lines);
    tcase_add_test(tc, test_unknown_name_suggestion);
    tcase_add_test(tc, test_bad_values);
    tcase_add_test(tc, test_bad_tables);
    tcase_add_test(tc, test_synonyms);
    tcase_add_test(tc, test_older_table_rows);
    tcase_add_test(tc, test_list_accessors);
    tcase_add_test(tc, test_ranges);
    tcase_add_test(tc, test_information);
    tcase_add_test(tc, test_bad_ranges);
    tcase_add_test(tc, test_param_file_kinds);
    suite_add_tcase(s, tc);
    return weft::test::run_suite(s);
}
