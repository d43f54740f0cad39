#include "mca_parse.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace weft::mca {

std::string trim(std::string_view s)
{
    size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b])))
        ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])))
        --e;
    return std::string(s.substr(b, e - b));
}

std::vector<std::string> split(std::string_view s, char sep)
{
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= s.size()) {
        size_t pos = s.find(sep, start);
        if (pos == std::string_view::npos)
            pos = s.size();
        std::string item = trim(s.substr(start, pos - start));
        if (!item.empty())
            out.push_back(std::move(item));
        start = pos + 1;
    }
    return out;
}

static std::string lower(std::string_view s)
{
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

static std::optional<int64_t> parse_int(std::string_view s)
{
    bool neg = false;
    if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        s.remove_prefix(1);
    }
    int base = 10;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s.remove_prefix(2);
    }
    if (s.empty())
        return std::nullopt;
    uint64_t mag = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), mag, base);
    if (ec != std::errc() || p != s.data() + s.size())
        return std::nullopt;
    const uint64_t limit = neg ? uint64_t(std::numeric_limits<int64_t>::max()) + 1
                               : uint64_t(std::numeric_limits<int64_t>::max());
    if (mag > limit)
        return std::nullopt;
    return neg ? int64_t(0 - mag) : int64_t(mag);
}

static std::optional<uint64_t> parse_size(std::string_view s)
{
    // digits, then an optional unit: k/K, m/M, g/G, t/T (powers of 1024),
    // optionally followed by "b"/"B" or "iB"; a bare "b"/"B" means bytes.
    size_t n = 0;
    while (n < s.size() && std::isdigit(static_cast<unsigned char>(s[n])))
        ++n;
    if (n == 0)
        return std::nullopt;
    uint64_t num = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + n, num);
    if (ec != std::errc())
        return std::nullopt;
    std::string unit = lower(trim(s.substr(n)));
    unsigned shift = 0;
    if (!unit.empty() && unit != "b") {
        switch (unit[0]) {
        case 'k': shift = 10; break;
        case 'm': shift = 20; break;
        case 'g': shift = 30; break;
        case 't': shift = 40; break;
        default: return std::nullopt;
        }
        std::string rest = unit.substr(1);
        if (!(rest.empty() || rest == "b" || rest == "ib"))
            return std::nullopt;
    }
    if (shift && num > (std::numeric_limits<uint64_t>::max() >> shift))
        return std::nullopt;
    return num << shift;
}

std::string format_size(uint64_t bytes)
{
    static const char *const units[] = {"", "k", "M", "G", "T"};
    unsigned u = 0;
    while (u < 4 && bytes != 0 && bytes % 1024 == 0) {
        bytes /= 1024;
        ++u;
    }
    return std::to_string(bytes) + units[u];
}

std::optional<Value> parse_value(weft_mca_param_type_t type, std::string_view raw,
                                 std::span<const EnumEntry> enums, std::string &expected)
{
    Value v;
    std::string s = trim(raw);
    switch (type) {
    case WEFT_MCA_PARAM_BOOL: {
        expected = "a boolean (true/false, yes/no, on/off, 1/0)";
        std::string l = lower(s);
        if (l == "1" || l == "true" || l == "yes" || l == "on" || l == "enabled")
            v.b = true;
        else if (l == "0" || l == "false" || l == "no" || l == "off" || l == "disabled")
            v.b = false;
        else
            return std::nullopt;
        v.text = v.b ? "true" : "false";
        return v;
    }
    case WEFT_MCA_PARAM_INT: {
        expected = "an integer (decimal, or hexadecimal with 0x)";
        auto i = parse_int(s);
        if (!i)
            return std::nullopt;
        v.i = *i;
        v.text = std::to_string(v.i);
        return v;
    }
    case WEFT_MCA_PARAM_SIZE: {
        expected = "a size in bytes, optionally with a unit k, M, G or T (e.g. 64k, 4M)";
        auto sz = parse_size(s);
        if (!sz)
            return std::nullopt;
        v.size = *sz;
        v.text = format_size(v.size);
        return v;
    }
    case WEFT_MCA_PARAM_DOUBLE: {
        expected = "a number (e.g. 0.5, 1e-3)";
        if (s.empty())
            return std::nullopt;
        char *end = nullptr;
        errno = 0;
        double d = std::strtod(s.c_str(), &end);
        if (errno == ERANGE || end != s.c_str() + s.size() || !std::isfinite(d))
            return std::nullopt;
        v.d = d;
        v.text = s;
        return v;
    }
    case WEFT_MCA_PARAM_STRING:
        expected = "a string";
        v.text = s;
        return v;
    case WEFT_MCA_PARAM_ENUM: {
        expected = "one of:";
        for (const auto &e : enums)
            expected += " " + e.name;
        std::string l = lower(s);
        for (size_t k = 0; k < enums.size(); ++k) {
            if (lower(enums[k].name) == l) {
                v.i = enums[k].value;
                v.text = enums[k].name;
                return v;
            }
        }
        return std::nullopt;
    }
    case WEFT_MCA_PARAM_LIST: {
        expected = "a comma-separated list";
        v.items = split(s, ',');
        for (size_t k = 0; k < v.items.size(); ++k)
            v.text += (k ? "," : "") + v.items[k];
        return v;
    }
    }
    expected = "a known parameter type";
    return std::nullopt;
}

const char *type_name(weft_mca_param_type_t type)
{
    switch (type) {
    case WEFT_MCA_PARAM_BOOL: return "bool";
    case WEFT_MCA_PARAM_INT: return "int";
    case WEFT_MCA_PARAM_SIZE: return "size";
    case WEFT_MCA_PARAM_DOUBLE: return "double";
    case WEFT_MCA_PARAM_STRING: return "string";
    case WEFT_MCA_PARAM_ENUM: return "enum";
    case WEFT_MCA_PARAM_LIST: return "list";
    }
    return "unknown";
}

size_t edit_distance(std::string_view a, std::string_view b)
{
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j)
        prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

} // namespace weft::mca
