// User-facing messages. Short ones are built in place; multi-line ones live
// in help files (help-<topic>.txt, sections in [brackets], %s placeholders
// filled in order), so that the text can be read and edited in one place.
// The files are compiled into the library (config/embed-help.sh): a message
// never depends on finding an installed data file.
#ifndef WEFT_MCA_OUTPUT_H
#define WEFT_MCA_OUTPUT_H

#include <initializer_list>
#include <string>
#include <string_view>

namespace weft::output {

enum class Kind { error, warning, info, verbose };

// Every message ends here. By default it goes to stderr as
// "weft: error: <text>"; a test may install its own sink to capture it.
using Sink = void (*)(Kind kind, const std::string &text, void *arg);
void set_sink(Sink sink, void *arg);
void reset_sink();

void emit(Kind kind, const std::string &text);
inline void error(const std::string &text) { emit(Kind::error, text); }
inline void warning(const std::string &text) { emit(Kind::warning, text); }
inline void info(const std::string &text) { emit(Kind::info, text); }

struct HelpFile {
    const char *name; // e.g. "help-mca.txt"
    const char *text;
};
extern const HelpFile help_files[]; // ended by {nullptr, nullptr}

// Text of help file `file`, section `section`, with %s filled from args.
std::string help_text(std::string_view file, std::string_view section,
                      std::initializer_list<std::string> args);
void show_help(Kind kind, std::string_view file, std::string_view section,
               std::initializer_list<std::string> args);

} // namespace weft::output

#endif
