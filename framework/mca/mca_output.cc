#include "mca_output.h"

#include "mca_select.h"

#include <weft/output.h>

#include <cstdarg>
#include <cstdio>
#include <sstream>

namespace weft::output {

namespace {

void stderr_sink(Kind kind, const std::string &text, void *)
{
    const char *prefix = "";
    switch (kind) {
    case Kind::error: prefix = "error: "; break;
    case Kind::warning: prefix = "warning: "; break;
    case Kind::info:
    case Kind::verbose: break;
    }
    std::fprintf(stderr, "weft: %s%s\n", prefix, text.c_str());
    std::fflush(stderr);
}

Sink g_sink = stderr_sink;
void *g_arg = nullptr;

std::string find_section(std::string_view file, std::string_view section)
{
    const HelpFile *h = help_files;
    while (h->name && file != h->name)
        ++h;
    if (!h->name)
        return {};
    std::istringstream in(h->text);
    std::string line, body;
    bool inside = false;
    const std::string header = "[" + std::string(section) + "]";
    while (std::getline(in, line)) {
        if (!line.empty() && line[0] == '#')
            continue;
        if (!line.empty() && line[0] == '[') {
            if (inside)
                break;
            inside = line == header;
            continue;
        }
        if (inside)
            body += line + "\n";
    }
    while (!body.empty() && body.back() == '\n')
        body.pop_back();
    return inside || !body.empty() ? body : std::string{};
}

} // namespace

void set_sink(Sink sink, void *arg)
{
    g_sink = sink ? sink : stderr_sink;
    g_arg = arg;
}

void reset_sink() { set_sink(nullptr, nullptr); }

void emit(Kind kind, const std::string &text) { g_sink(kind, text, g_arg); }

std::string help_text(std::string_view file, std::string_view section,
                      std::initializer_list<std::string> args)
{
    std::string body = find_section(file, section);
    if (body.empty()) {
        // A programming error (a section that does not exist): still say
        // everything we know.
        std::string text = "[" + std::string(file) + ":" + std::string(section) + "]";
        for (const auto &a : args)
            text += " " + a;
        return text;
    }
    std::string out;
    auto it = args.begin();
    for (size_t i = 0; i < body.size(); ++i) {
        if (body[i] == '%' && i + 1 < body.size() && body[i + 1] == 's') {
            out += it != args.end() ? *it++ : std::string("(?)");
            ++i;
        } else {
            out += body[i];
        }
    }
    return out;
}

void show_help(Kind kind, std::string_view file, std::string_view section,
               std::initializer_list<std::string> args)
{
    emit(kind, help_text(file, section, args));
}

} // namespace weft::output

// weft/output.h: the same messages, for components in C.
extern "C" {

void weft_output(weft_output_kind_t kind, const char *format, ...)
{
    using weft::output::Kind;
    va_list ap;
    va_start(ap, format);
    va_list again;
    va_copy(again, ap);
    const int n = std::vsnprintf(nullptr, 0, format, ap);
    va_end(ap);
    std::string text(n > 0 ? size_t(n) : 0, '\0');
    if (n > 0)
        std::vsnprintf(text.data(), size_t(n) + 1, format, again);
    va_end(again);
    const Kind k = kind == WEFT_OUTPUT_ERROR     ? Kind::error
                   : kind == WEFT_OUTPUT_WARNING ? Kind::warning
                   : kind == WEFT_OUTPUT_INFO    ? Kind::info
                                                 : Kind::verbose;
    weft::output::emit(k, text);
}

int weft_output_verbosity(const char *framework)
{
    weft::mca::FrameworkBase *base = framework ? weft::mca::framework_base(framework) : nullptr;
    return base ? base->verbose() : 0;
}

} // extern "C"
