// Walks every registered parameter of every built component (and of the
// frameworks and the repository) and checks what a user relies on: help
// text, a level, a default that parses, a well-formed, unique name.
// <regex> before <check.h>, which defines a macro named fail.
#include <regex>
#include <set>

#include "check_util.h"
#include "mca_param.h"
#include "mca_repository.h"

using namespace weft;

namespace {

START_TEST(test_every_parameter)
{
    test::isolate_components(test::env_or_fail("WEFT_TEST_COMPONENT_PATH"));
    ck_assert_msg(mca::register_all() == WEFT_SUCCESS, "registration failed:\n%s",
                  test::all_messages().c_str());

    // Every component this build made is found (none silently missing).
    std::set<std::string> found;
    for (auto *c : mca::Repository::instance().components())
        found.insert(std::string(c->framework->name) + "/" + c->name);
    for (const auto &want : mca::split(getenv("WEFT_TEST_EXPECTED_COMPONENTS") ?: "", ' '))
        ck_assert_msg(found.count(want), "built component %s was not found:\n%s", want.c_str(),
                      test::all_messages().c_str());

    const std::regex name_re("^[a-z0-9_]+$");
    std::set<std::string> names;
    size_t n = 0;
    for (const auto &p : mca::Registry::instance().all()) {
        ++n;
        const char *name = p->full_name.c_str();
        ck_assert_msg(std::regex_match(p->full_name, name_re), "bad name '%s'", name);
        ck_assert_msg(names.insert(p->full_name).second, "%s registered twice", name);
        ck_assert_msg(!p->help.empty(), "%s has no help", name);
        ck_assert_msg(p->level >= 1 && p->level <= 9, "%s has level %d", name, p->level);
        std::string expected;
        ck_assert_msg(mca::parse_value(p->type, p->default_text, p->enums, expected).has_value(),
                      "%s: default '%s' does not parse (expected %s)", name,
                      p->default_text.c_str(), expected.c_str());
        ck_assert_msg(p->full_name.rfind(p->framework, 0) == 0,
                      "%s does not start with its framework %s", name, p->framework.c_str());
        for (const auto &syn : p->synonyms)
            ck_assert_msg(std::regex_match(syn, name_re), "%s: bad synonym '%s'", name,
                          syn.c_str());
    }
    // At least the repository's own and two per framework.
    ck_assert_uint_ge(n, 3 + 2 * mca::frameworks().size());
    ck_assert_msg(test::messages().empty(), "unexpected messages:\n%s",
                  test::all_messages().c_str());
    printf("checked %zu parameters of %zu components\n", n, found.size());
}
END_TEST

} // namespace

int main()
{
    Suite *s = suite_create("all_params");
    TCase *tc = tcase_create("walk");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_every_parameter);
    suite_add_tcase(s, tc);
    return weft::test::run_suite(s);
}
