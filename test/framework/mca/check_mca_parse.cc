// Tests for framework/mca/mca_parse.cc: every type, units, and what is
// rejected.
#include "check_util.h"
#include "mca_parse.h"

using namespace weft::mca;

namespace {

std::optional<Value> parse(weft_mca_param_type_t t, const char *s, std::string *exp = nullptr)
{
    static const EnumEntry enums[] = {{"cma", 0}, {"none", 1}, {"auto", 2}};
    std::string expected;
    auto v = parse_value(t, s, enums, expected);
    if (exp)
        *exp = expected;
    return v;
}

START_TEST(test_bool)
{
    const char *yes[] = {"1", "true", "TRUE", "yes", "on", " Yes "};
    const char *no[] = {"0", "false", "no", "off", "Off"};
    for (auto s : yes) {
        auto v = parse(WEFT_MCA_PARAM_BOOL, s);
        ck_assert_msg(v && v->b, "'%s' should be true", s);
    }
    for (auto s : no) {
        auto v = parse(WEFT_MCA_PARAM_BOOL, s);
        ck_assert_msg(v && !v->b, "'%s' should be false", s);
    }
    std::string exp;
    ck_assert(!parse(WEFT_MCA_PARAM_BOOL, "maybe", &exp));
    ck_assert(exp.find("boolean") != std::string::npos);
    ck_assert(!parse(WEFT_MCA_PARAM_BOOL, ""));
}
END_TEST

START_TEST(test_int)
{
    ck_assert_int_eq(parse(WEFT_MCA_PARAM_INT, "42")->i, 42);
    ck_assert_int_eq(parse(WEFT_MCA_PARAM_INT, "-7")->i, -7);
    ck_assert_int_eq(parse(WEFT_MCA_PARAM_INT, "0x10")->i, 16);
    ck_assert_int_eq(parse(WEFT_MCA_PARAM_INT, "-9223372036854775808")->i, INT64_MIN);
    ck_assert(!parse(WEFT_MCA_PARAM_INT, "9223372036854775808"));
    ck_assert(!parse(WEFT_MCA_PARAM_INT, "12abc"));
    ck_assert(!parse(WEFT_MCA_PARAM_INT, "1.5"));
    ck_assert(!parse(WEFT_MCA_PARAM_INT, ""));
    ck_assert(!parse(WEFT_MCA_PARAM_INT, "-"));
}
END_TEST

START_TEST(test_size_units)
{
    struct {
        const char *in;
        uint64_t out;
        const char *text;
    } cases[] = {{"0", 0, "0"},         {"100", 100, "100"},   {"8k", 8192, "8k"},
                 {"8K", 8192, "8k"},    {"8kb", 8192, "8k"},   {"8KiB", 8192, "8k"},
                 {"4M", 4 << 20, "4M"}, {"1g", 1 << 30, "1G"}, {"1536", 1536, "1536"},
                 {"2048", 2048, "2k"},  {"12B", 12, "12"},     {"1T", 1ull << 40, "1T"}};
    for (const auto &c : cases) {
        auto v = parse(WEFT_MCA_PARAM_SIZE, c.in);
        ck_assert_msg(v.has_value(), "'%s' should parse", c.in);
        ck_assert_msg(v->size == c.out, "'%s' gave %llu", c.in, (unsigned long long)v->size);
        WEFT_ASSERT_STR_EQ(v->text.c_str(), c.text);
    }
    std::string exp;
    const char *bad[] = {"", "k", "-1", "4X", "4MM", "1.5M", "99999999999999999999", "20000000T"};
    for (auto b : bad)
        ck_assert_msg(!parse(WEFT_MCA_PARAM_SIZE, b, &exp), "'%s' should not parse", b);
    ck_assert(exp.find("64k") != std::string::npos);
}
END_TEST

START_TEST(test_double)
{
    ck_assert_double_eq(parse(WEFT_MCA_PARAM_DOUBLE, "0.5")->d, 0.5);
    ck_assert_double_eq(parse(WEFT_MCA_PARAM_DOUBLE, "1e-3")->d, 1e-3);
    ck_assert(!parse(WEFT_MCA_PARAM_DOUBLE, "fast"));
    ck_assert(!parse(WEFT_MCA_PARAM_DOUBLE, "nan"));
    ck_assert(!parse(WEFT_MCA_PARAM_DOUBLE, "1e999"));
}
END_TEST

START_TEST(test_enum)
{
    auto v = parse(WEFT_MCA_PARAM_ENUM, "NONE");
    ck_assert(v.has_value());
    ck_assert_int_eq(v->i, 1);
    WEFT_ASSERT_STR_EQ(v->text.c_str(), "none");
    std::string exp;
    ck_assert(!parse(WEFT_MCA_PARAM_ENUM, "fastest", &exp));
    WEFT_ASSERT_STR_EQ(exp.c_str(), "one of: cma none auto");
}
END_TEST

START_TEST(test_list_and_string)
{
    auto v = parse(WEFT_MCA_PARAM_LIST, " self, sm ,,tcp ");
    ck_assert(v.has_value());
    ck_assert_int_eq(v->items.size(), 3);
    WEFT_ASSERT_STR_EQ(v->items[1].c_str(), "sm");
    WEFT_ASSERT_STR_EQ(v->text.c_str(), "self,sm,tcp");
    ck_assert_int_eq(parse(WEFT_MCA_PARAM_LIST, "")->items.size(), 0);
    WEFT_ASSERT_STR_EQ(parse(WEFT_MCA_PARAM_STRING, " a b ")->text.c_str(), "a b");
}
END_TEST

START_TEST(test_edit_distance)
{
    ck_assert_int_eq(edit_distance("btl_tcp_eager_limit", "btl_tcp_eager_limit"), 0);
    ck_assert_int_eq(edit_distance("btl_tcp_eagr_limit", "btl_tcp_eager_limit"), 1);
    ck_assert_int_eq(edit_distance("", "abc"), 3);
    ck_assert_int_eq(edit_distance("kitten", "sitting"), 3);
}
END_TEST

} // namespace

int main()
{
    Suite *s = suite_create("mca_parse");
    TCase *tc = tcase_create("parse");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_bool);
    tcase_add_test(tc, test_int);
    tcase_add_test(tc, test_size_units);
    tcase_add_test(tc, test_double);
    tcase_add_test(tc, test_enum);
    tcase_add_test(tc, test_list_and_string);
    tcase_add_test(tc, test_edit_distance);
    suite_add_tcase(s, tc);
    return weft::test::run_suite(s);
}
