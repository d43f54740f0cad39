// Parsing of parameter values. The same parser reads defaults from component
// tables and values from users, so "8k" means the same thing everywhere.
#ifndef WEFT_MCA_PARSE_H
#define WEFT_MCA_PARSE_H

#include <weft/mca.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace weft::mca {

// A parsed value. ENUM keeps the value's index into the enum table.
struct Value {
    bool b = false;
    int64_t i = 0;
    uint64_t size = 0;
    double d = 0.0;
    std::string text;               // canonical text of the value
    std::vector<std::string> items; // LIST only
};

struct EnumEntry {
    std::string name;
    int value;
};

// Parse `input` as `type`. On failure returns nullopt and sets `expected` to
// a phrase saying what a valid value looks like ("a size such as 64k or 4M").
std::optional<Value> parse_value(weft_mca_param_type_t type, std::string_view input,
                                 std::span<const EnumEntry> enums, std::string &expected);

const char *type_name(weft_mca_param_type_t type);
std::string format_size(uint64_t bytes);
std::string trim(std::string_view s);
std::vector<std::string> split(std::string_view s, char sep);

// Edit distance, for "did you mean" suggestions.
size_t edit_distance(std::string_view a, std::string_view b);

} // namespace weft::mca

#endif
