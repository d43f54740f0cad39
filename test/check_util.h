// Shared helpers for Weft's Check unit tests.
#ifndef WEFT_TEST_CHECK_UTIL_H
#define WEFT_TEST_CHECK_UTIL_H

#include "mca_output.h"
#include "mca_select.h"

// <filesystem> before <check.h>: Check defines a macro named fail.
#include <filesystem>

#include <check.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

extern char **environ;

// ck_assert_str_eq keeps raw pointers past the end of the full expression,
// which dangles for std::string temporaries; this copies first.
#define WEFT_ASSERT_STR_EQ(a, b)                                                                   \
    do {                                                                                           \
        const std::string weft_a_ = (a), weft_b_ = (b);                                            \
        ck_assert_msg(weft_a_ == weft_b_, "'%s' == '%s' failed", weft_a_.c_str(),                  \
                      weft_b_.c_str());                                                            \
    } while (0)

namespace weft::test {

struct Message {
    output::Kind kind;
    std::string text;
};

inline std::vector<Message> &messages()
{
    static std::vector<Message> m;
    return m;
}

inline void capture_sink(output::Kind kind, const std::string &text, void *)
{
    messages().push_back({kind, text});
}

// Number of captured messages of `kind` containing `needle`.
inline int count_messages(output::Kind kind, const std::string &needle)
{
    int n = 0;
    for (const auto &m : messages())
        n += m.kind == kind && m.text.find(needle) != std::string::npos;
    return n;
}

// Paths a test made in /tmp, removed when the process that made them exits (Check runs each
// test in a child of its own: the child removes what it made, never what its parent made).
// run_suite makes a root directory first: a test's paths go in it, so that what a child
// leaves when it ends without exit handlers (a test of a job that aborts) goes with the root.
struct Scratch {
    pid_t owner = 0;
    std::vector<std::string> paths;
    std::string root = "/tmp";
};

inline Scratch &scratch()
{
    static Scratch s;
    return s;
}

inline void remove_scratch()
{
    Scratch &s = scratch();
    if (s.owner != getpid())
        return;
    std::error_code ec;
    for (const auto &p : s.paths)
        std::filesystem::remove_all(p, ec);
    s.paths.clear();
}

inline std::string keep_scratch(const std::string &path)
{
    Scratch &s = scratch();
    if (s.owner != getpid()) {
        // First scratch path of this process (a child inherits its parent's list, not its own).
        s.owner = getpid();
        s.paths.clear();
        static bool registered = false;
        if (!registered)
            std::atexit(remove_scratch);
        registered = true;
    }
    s.paths.push_back(path);
    return path;
}

// A new empty directory named PREFIX-XXXXXX (under the suite's root, or /tmp), removed at exit.
inline std::string scratch_dir(const char *prefix)
{
    std::string tmpl = scratch().root + "/" + prefix + "-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmpl.data()));
    return keep_scratch(tmpl);
}

inline std::string all_messages()
{
    std::string out;
    for (const auto &m : messages())
        out += m.text + "\n";
    return out;
}

// A clean slate for one test: no WEFT_MCA_* from the caller's environment, a
// private empty HOME, no param files unless the test names some, no
// parameters or components, messages captured.
inline void isolate()
{
    std::vector<std::string> names;
    for (char **e = environ; e && *e; ++e)
        if (std::strncmp(*e, "WEFT_MCA_", 9) == 0)
            names.emplace_back(*e, std::strchr(*e, '=') - *e);
    for (const auto &n : names)
        unsetenv(n.c_str());
    static std::string home;
    if (home.empty())
        home = scratch_dir("weft-test-home");
    setenv("HOME", home.c_str(), 1);
    setenv("WEFT_MCA_PARAM_FILES", "", 1);
    mca::reset_all();
    messages().clear();
    output::set_sink(capture_sink, nullptr);
}

// isolate(), then look for components only in `path` (never in the
// installed ones), opened with loader backend `loader`.
inline void isolate_components(const std::string &path, const char *loader = "dlopen")
{
    isolate();
    setenv("WEFT_MCA_mca_base_component_path", path.c_str(), 1);
    setenv("WEFT_MCA_mca_base_loader", loader, 1);
}

inline std::string env_or_fail(const char *name)
{
    const char *v = std::getenv(name);
    ck_assert_msg(v != nullptr, "%s is not set (run through make check)", name);
    return v;
}

// Write `text` to a new temporary file and return its path.
inline std::string temp_file(const std::string &text)
{
    std::string tmpl = scratch().root + "/weft-test-XXXXXX";
    int fd = mkstemp(tmpl.data());
    ck_assert_int_ge(fd, 0);
    keep_scratch(tmpl);
    ck_assert_int_eq(write(fd, text.data(), text.size()), (ssize_t)text.size());
    close(fd);
    return tmpl;
}

inline int run_suite(Suite *s)
{
    // Not scratch_dir: Check's assertions may only run inside a test.
    std::string root = "/tmp/weft-test-XXXXXX";
    if (mkdtemp(root.data()))
        scratch().root = keep_scratch(root);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

} // namespace weft::test

#endif
