#include "mca_param.h"

#include "mca_output.h"
#include "weft_config.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

namespace weft::mca {

std::string install_dir(const char *configured)
{
    const std::string dir = configured, prefix = WEFT_INSTALL_PREFIX;
    const char *moved = std::getenv("WEFT_PREFIX");
    if (!moved || !*moved || dir.compare(0, prefix.size(), prefix) != 0)
        return dir;
    return std::string(moved) + dir.substr(prefix.size());
}

bool valid_name(std::string_view n)
{
    if (n.empty())
        return false;
    for (char c : n)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    return true;
}

namespace {

constexpr std::string_view env_prefix = "WEFT_MCA_";
// Environment variables under WEFT_MCA_ that steer the registry itself.
constexpr std::string_view env_controls[] = {"PARAM_FILES"};

std::string describe_source(weft_mca_param_source_t src, const std::string &detail)
{
    switch (src) {
    case WEFT_MCA_SOURCE_DEFAULT: return "the default";
    case WEFT_MCA_SOURCE_FILE: return "param file " + detail;
    case WEFT_MCA_SOURCE_ENV: return "environment variable " + detail;
    case WEFT_MCA_SOURCE_CMDLINE:
        return "the command line (" + (detail.empty() ? std::string("--mca") : detail) + ")";
    case WEFT_MCA_SOURCE_API: return "the program";
    }
    return "an unknown source";
}

// Compare two values of a numeric type: <0, 0, >0.
int compare(weft_mca_param_type_t type, const Value &a, const Value &b)
{
    switch (type) {
    case WEFT_MCA_PARAM_INT: return a.i < b.i ? -1 : a.i > b.i;
    case WEFT_MCA_PARAM_SIZE: return a.size < b.size ? -1 : a.size > b.size;
    case WEFT_MCA_PARAM_DOUBLE: return a.d < b.d ? -1 : a.d > b.d;
    default: return 0;
    }
}

// Parse a declared range "lo..hi" (either end may be empty) with the type's own parser.
bool parse_range(weft_mca_param_type_t type, std::string_view text, std::optional<Value> &lo,
                 std::optional<Value> &hi, std::string &why)
{
    if (type != WEFT_MCA_PARAM_INT && type != WEFT_MCA_PARAM_SIZE &&
        type != WEFT_MCA_PARAM_DOUBLE) {
        why = std::string("a range is only for int, size and double parameters, not ") +
              type_name(type);
        return false;
    }
    const auto dots = text.find("..");
    if (dots == std::string_view::npos) {
        why = "its range '" + std::string(text) + "' is not of the form min..max";
        return false;
    }
    const std::string ends[2] = {trim(text.substr(0, dots)), trim(text.substr(dots + 2))};
    std::optional<Value> *out[2] = {&lo, &hi};
    for (int k = 0; k < 2; ++k) {
        if (ends[k].empty())
            continue;
        std::string expected;
        *out[k] = parse_value(type, ends[k], {}, expected);
        if (!*out[k]) {
            why = "its range '" + std::string(text) + "' has an end '" + ends[k] +
                  "' that is not valid: expected " + expected;
            return false;
        }
    }
    if (!lo && !hi) {
        why = "its range '" + std::string(text) + "' has neither end";
        return false;
    }
    if (lo && hi && compare(type, *lo, *hi) > 0) {
        why = "its range '" + std::string(text) + "' is empty";
        return false;
    }
    return true;
}

// A param file is a regular file of at most this size: anything else (a device such as
// /dev/zero, a FIFO, a directory) would read forever, block or mean nothing.
constexpr off_t kMaxParamFile = off_t(1) << 20;

// The contents of a param file, or nullopt with `why` set (errno's text, or what is wrong).
std::optional<std::string> read_param_file(const std::string &path, std::string &why, bool &missing)
{
    missing = false;
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        missing = errno == ENOENT || errno == ENOTDIR;
        why = std::strerror(errno);
        return std::nullopt;
    }
    struct stat st {};
    std::optional<std::string> text;
    if (::fstat(fd, &st) != 0) {
        why = std::strerror(errno);
    } else if (!S_ISREG(st.st_mode)) {
        why = std::string("it is ") +
              (S_ISDIR(st.st_mode)    ? "a directory"
               : S_ISFIFO(st.st_mode) ? "a FIFO"
               : S_ISCHR(st.st_mode)  ? "a character device"
               : S_ISBLK(st.st_mode)  ? "a block device"
               : S_ISSOCK(st.st_mode) ? "a socket"
                                      : "not a regular file") +
              "; a param file must be a regular file";
    } else if (st.st_size > kMaxParamFile) {
        why = "it has " + std::to_string(st.st_size) +
              " bytes; a param file may have at most 1 MiB (1048576 bytes)";
    } else {
        // One byte more than fstat said, to notice a file that grows meanwhile.
        std::string buf(size_t(st.st_size) + 1, '\0');
        size_t got = 0;
        while (got < buf.size()) {
            ssize_t n = ::read(fd, buf.data() + got, buf.size() - got);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0) {
                why = std::strerror(errno);
                break;
            }
            if (n == 0) {
                buf.resize(got);
                text = std::move(buf);
                break;
            }
            got += size_t(n);
        }
        if (!text && why.empty())
            why = "it grew while being read";
    }
    ::close(fd);
    return text;
}

} // namespace

std::string describe_range(const Param &p)
{
    // An open end in words: "1.." alone reads like a typo.
    if (p.lo && !p.hi)
        return p.range + " (at least " + p.lo->text + ")";
    if (!p.lo && p.hi)
        return p.range + " (at most " + p.hi->text + ")";
    return p.range;
}

bool in_range(const Param &p, const Value &v)
{
    return (!p.lo || compare(p.type, v, *p.lo) >= 0) && (!p.hi || compare(p.type, v, *p.hi) <= 0);
}

const char *source_name(weft_mca_param_source_t source)
{
    switch (source) {
    case WEFT_MCA_SOURCE_DEFAULT: return "default";
    case WEFT_MCA_SOURCE_FILE: return "file";
    case WEFT_MCA_SOURCE_ENV: return "environment";
    case WEFT_MCA_SOURCE_CMDLINE: return "command line";
    case WEFT_MCA_SOURCE_API: return "api";
    }
    return "unknown";
}

Registry &Registry::instance()
{
    static Registry registry;
    return registry;
}

void Registry::reset()
{
    params_.clear();
    by_name_.clear();
    cmdline_.clear();
    env_.clear();
    files_.clear();
    warned_.clear();
    sources_loaded_ = false;
}

void Registry::load_file(const std::string &path, bool must_exist)
{
    std::string why;
    bool missing = false;
    const auto text = read_param_file(path, why, missing);
    if (!text) {
        // The optional default files may be absent; anything else is worth a word.
        if (must_exist || !missing)
            output::warning("param file " + path +
                            (must_exist ? " (from WEFT_MCA_PARAM_FILES)" : "") +
                            " cannot be read: " + why + "; it is ignored");
        return;
    }
    std::map<std::string, Given> in_file;
    std::string line;
    std::istringstream in(*text);
    for (int lineno = 1; std::getline(in, line); ++lineno) {
        if (auto hash = line.find('#'); hash != std::string::npos)
            line.erase(hash);
        std::string t = trim(line);
        if (t.empty())
            continue;
        const std::string where = path + ":" + std::to_string(lineno);
        auto eq = t.find('=');
        std::string name = eq == std::string::npos ? std::string{} : trim(t.substr(0, eq));
        if (!valid_name(name)) {
            output::warning(where + ": expected 'name = value', got '" + t + "'; line ignored");
            continue;
        }
        in_file[name] = Given{trim(t.substr(eq + 1)), where}; // the last line wins
    }
    // An earlier file wins: the user's file is read before the system one.
    for (auto &[name, given] : in_file)
        files_.try_emplace(name, std::move(given));
}

void Registry::load_sources()
{
    if (sources_loaded_)
        return;
    sources_loaded_ = true;
    for (char **e = environ; e && *e; ++e) {
        std::string_view kv(*e);
        if (kv.substr(0, env_prefix.size()) != env_prefix)
            continue;
        auto eq = kv.find('=');
        if (eq == std::string_view::npos)
            continue;
        std::string name(kv.substr(env_prefix.size(), eq - env_prefix.size()));
        bool control = false;
        for (auto c : env_controls)
            control |= name == c;
        if (!control)
            env_[name] = Given{std::string(kv.substr(eq + 1)), std::string(env_prefix) + name};
    }
    // The names mpirun passed from its --mca: their source is the command line.
    if (const char *list = std::getenv("WEFT_MPIRUN_MCA"))
        for (const auto &name : split(list, ','))
            if (auto it = env_.find(name); it != env_.end()) {
                it->second.from_mpirun = true;
                it->second.detail = "mpirun --mca";
            }
    if (const char *list = std::getenv("WEFT_MCA_PARAM_FILES")) {
        for (const auto &path : split(list, ':'))
            load_file(path, true);
    } else {
        if (const char *home = std::getenv("HOME"))
            load_file(std::string(home) + "/.weft/mca-params.conf", false);
        load_file(install_dir(WEFT_SYSCONFDIR) + "/weft-mca-params.conf", false);
    }
}

const Registry::Given *Registry::lookup(const std::map<std::string, Given> &from, const Param &p,
                                        std::string &as)
{
    if (auto it = from.find(p.full_name); it != from.end()) {
        as = p.full_name;
        return &it->second;
    }
    for (const auto &syn : p.synonyms) {
        if (auto it = from.find(syn); it != from.end()) {
            as = syn;
            if (!warned_[syn]) {
                warned_[syn] = true;
                output::warning("parameter " + syn + " is deprecated; use " + p.full_name);
            }
            return &it->second;
        }
    }
    return nullptr;
}

weft_status_t Registry::set(Param &p, std::string_view value, weft_mca_param_source_t source,
                            const std::string &detail)
{
    if (p.scope == WEFT_MCA_SCOPE_INFO && source != WEFT_MCA_SOURCE_API) {
        output::error("parameter " + p.full_name + " is information (what " + p.framework + "/" +
                      p.component + " found out), not a setting: the value '" + std::string(value) +
                      "' from " + describe_source(source, detail) + " is not taken");
        return WEFT_ERR_BAD_PARAM;
    }
    std::string expected;
    auto v = parse_value(p.type, value, p.enums, expected);
    if (!v) {
        output::error("parameter " + p.full_name + ": value '" + std::string(value) + "' from " +
                      describe_source(source, detail) + " is not valid: expected " + expected);
        return WEFT_ERR_BAD_PARAM;
    }
    if (!in_range(p, *v)) {
        output::error("parameter " + p.full_name + ": value '" + std::string(value) + "' from " +
                      describe_source(source, detail) + " is outside its range " +
                      describe_range(p));
        return WEFT_ERR_BAD_PARAM;
    }
    p.value = std::move(*v);
    p.source = source;
    p.source_detail = detail;
    return WEFT_SUCCESS;
}

weft_status_t Registry::resolve(Param &p)
{
    struct Layer {
        const std::map<std::string, Given> *from;
        weft_mca_param_source_t source;
    };
    const Layer layers[] = {{&cmdline_, WEFT_MCA_SOURCE_CMDLINE},
                            {&env_, WEFT_MCA_SOURCE_ENV},
                            {&files_, WEFT_MCA_SOURCE_FILE}};
    for (const auto &layer : layers) {
        std::string as;
        if (const Given *g = lookup(*layer.from, p, as)) {
            std::string detail = g->detail;
            if (layer.source == WEFT_MCA_SOURCE_ENV && g->from_mpirun)
                return set(p, g->value, WEFT_MCA_SOURCE_CMDLINE, detail);
            if (layer.source == WEFT_MCA_SOURCE_ENV)
                detail = std::string(env_prefix) + as;
            return set(p, g->value, layer.source, detail);
        }
    }
    return WEFT_SUCCESS;
}

weft_status_t Registry::register_table(const char *framework, const char *component,
                                       const weft_mca_param_def_t *defs, size_t count,
                                       size_t def_size, Param **handles)
{
    load_sources();
    if (!framework || !valid_name(framework) || (component && !valid_name(component)) ||
        (count && !defs) || def_size < offsetof(weft_mca_param_def_t, enum_values)) {
        output::error("parameter table registration with an invalid framework, component or "
                      "table size");
        return WEFT_ERR_BAD_PARAM;
    }
    const std::string owner =
        std::string(framework) + (component ? "/" + std::string(component) : "");
    const std::string prefix =
        std::string(framework) + "_" + (component ? std::string(component) + "_" : "");
    weft_status_t result = WEFT_SUCCESS;

    for (size_t i = 0; i < count; ++i) {
        weft_mca_param_def_t d{};
        std::memcpy(&d, reinterpret_cast<const char *>(defs) + i * def_size,
                    std::min(def_size, sizeof d));
        Param *handle = nullptr;
        weft_status_t rc;
        if (!d.name || !valid_name(d.name)) {
            output::error(owner + ": parameter '" + std::string(d.name ? d.name : "") +
                          "' cannot be registered: its name must match [a-z0-9_]+");
            rc = WEFT_ERR_BAD_PARAM;
        } else {
            rc = register_one(prefix + d.name, framework, component, d, &handle);
        }
        if (handles)
            handles[i] = handle;
        // A bad row or a bad user value makes the table fail, but every good
        // row is still registered so that the rest of the component is known.
        if (rc != WEFT_SUCCESS && (result == WEFT_SUCCESS || rc == WEFT_ERR_BAD_PARAM))
            result = rc;
    }
    return result;
}

weft_status_t Registry::register_one(const std::string &full_name, const char *framework,
                                     const char *component, const weft_mca_param_def_t &d,
                                     Param **handle)
{
    load_sources();
    *handle = nullptr;
    const std::string owner =
        std::string(framework) + (component ? "/" + std::string(component) : "");
    auto bad_row = [&](const std::string &why) {
        output::error(owner + ": parameter " + full_name + " cannot be registered: " + why);
        return WEFT_ERR_BAD_PARAM;
    };
    if (!valid_name(full_name))
        return bad_row("its name must match [a-z0-9_]+");
    if (!d.help || !*d.help)
        return bad_row("it has no help text");
    if (d.level < 1 || d.level > 9)
        return bad_row("its level " + std::to_string(d.level) + " is not in 1-9");
    if (d.type < WEFT_MCA_PARAM_BOOL || d.type > WEFT_MCA_PARAM_LIST)
        return bad_row("its type " + std::to_string(int(d.type)) + " is unknown");
    if (d.scope < WEFT_MCA_SCOPE_LOCAL || d.scope > WEFT_MCA_SCOPE_INFO)
        return bad_row("its scope " + std::to_string(int(d.scope)) + " is unknown");
    if (find(full_name)) {
        output::error(owner + ": parameter " + full_name + " is registered twice");
        return WEFT_ERR_EXISTS;
    }
    auto p = std::make_unique<Param>();
    p->full_name = full_name;
    p->framework = framework;
    p->component = component ? component : "";
    p->type = d.type;
    p->default_text = d.default_value ? d.default_value : "";
    p->help = d.help;
    p->level = d.level;
    p->scope = d.scope;
    if (d.type == WEFT_MCA_PARAM_ENUM) {
        for (auto *e = d.enum_values; e && e->name; ++e)
            p->enums.push_back({e->name, e->value});
        if (p->enums.empty())
            return bad_row("it is an enum without values");
    }
    if (d.synonyms)
        p->synonyms = split(d.synonyms, ',');
    if (d.range) {
        std::string why;
        if (!parse_range(p->type, d.range, p->lo, p->hi, why))
            return bad_row(why);
        p->range = trim(d.range);
    }
    std::string expected;
    auto v = parse_value(p->type, p->default_text, p->enums, expected);
    if (!v)
        return bad_row("its default '" + p->default_text + "' is not valid: expected " + expected);
    if (!in_range(*p, *v))
        return bad_row("its default '" + p->default_text + "' is outside its range " + p->range);
    p->value = std::move(*v);
    // A bad user value leaves the default in place; the error is printed.
    weft_status_t rc = resolve(*p);
    by_name_[p->full_name] = p.get();
    for (const auto &syn : p->synonyms)
        by_name_.try_emplace(syn, p.get());
    *handle = p.get();
    params_.push_back(std::move(p));
    return rc;
}

Param *Registry::find(std::string_view name) const
{
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
}

weft_status_t Registry::cmdline_set(const std::string &name, const std::string &value)
{
    if (!valid_name(name)) {
        output::error("--mca " + name + ": a parameter name must match [a-z0-9_]+");
        return WEFT_ERR_BAD_PARAM;
    }
    cmdline_[name] = Given{value, "--mca"};
    if (Param *p = find(name))
        return set(*p, value, WEFT_MCA_SOURCE_CMDLINE, "--mca");
    return WEFT_SUCCESS;
}

std::string Registry::nearest(const std::string &name) const
{
    std::string best;
    size_t best_d = std::string::npos;
    for (const auto &[known, p] : by_name_) {
        (void)p;
        size_t d = edit_distance(name, known);
        if (d < best_d) {
            best_d = d;
            best = known;
        }
    }
    // Only suggest names that are plausibly what was meant.
    if (best_d == std::string::npos || best_d > std::max<size_t>(3, name.size() / 3))
        return {};
    return best;
}

int Registry::warn_unknown()
{
    load_sources();
    int unknown = 0;
    auto check = [&](const std::map<std::string, Given> &from, const char *where, bool file) {
        for (const auto &[name, given] : from) {
            if (find(name))
                continue;
            ++unknown;
            if (warned_[name])
                continue;
            warned_[name] = true;
            std::string msg = "unknown parameter " + name + " (from " +
                              (given.from_mpirun ? std::string("mpirun --mca") : where) +
                              (file ? " " + given.detail : "") + ")";
            std::string near = nearest(name);
            msg += near.empty() ? "; see weft_info --all for the known ones"
                                : "; did you mean " + near + "?";
            output::warning(msg);
        }
    };
    check(cmdline_, "the command line", false);
    check(env_, "the environment", false);
    check(files_, "param file", true);
    return unknown;
}

} // namespace weft::mca

using weft::mca::Registry;

extern "C" {

weft_status_t weft_mca_param_register_table(const char *framework, const char *component,
                                            const weft_mca_param_def_t *defs, size_t count,
                                            size_t def_size, weft_mca_param_t **handles)
{
    return Registry::instance().register_table(framework, component, defs, count, def_size,
                                               handles);
}

weft_mca_param_t *weft_mca_param_find(const char *full_name)
{
    return full_name ? Registry::instance().find(full_name) : nullptr;
}

int weft_mca_param_bool(const weft_mca_param_t *p)
{
    return p && p->type == WEFT_MCA_PARAM_BOOL && p->value.b;
}

int64_t weft_mca_param_int(const weft_mca_param_t *p)
{
    return p && p->type == WEFT_MCA_PARAM_INT ? p->value.i : 0;
}

uint64_t weft_mca_param_size(const weft_mca_param_t *p)
{
    return p && p->type == WEFT_MCA_PARAM_SIZE ? p->value.size : 0;
}

double weft_mca_param_double(const weft_mca_param_t *p)
{
    return p && p->type == WEFT_MCA_PARAM_DOUBLE ? p->value.d : 0.0;
}

const char *weft_mca_param_string(const weft_mca_param_t *p)
{
    if (!p)
        return "";
    switch (p->type) {
    case WEFT_MCA_PARAM_STRING:
    case WEFT_MCA_PARAM_ENUM:
    case WEFT_MCA_PARAM_LIST: return p->value.text.c_str();
    default: return "";
    }
}

int weft_mca_param_enum(const weft_mca_param_t *p)
{
    return p && p->type == WEFT_MCA_PARAM_ENUM ? int(p->value.i) : 0;
}

size_t weft_mca_param_list_count(const weft_mca_param_t *p)
{
    return p && p->type == WEFT_MCA_PARAM_LIST ? p->value.items.size() : 0;
}

const char *weft_mca_param_list_item(const weft_mca_param_t *p, size_t i)
{
    if (!p || p->type != WEFT_MCA_PARAM_LIST || i >= p->value.items.size())
        return nullptr;
    return p->value.items[i].c_str();
}

weft_mca_param_source_t weft_mca_param_source(const weft_mca_param_t *p)
{
    return p ? p->source : WEFT_MCA_SOURCE_DEFAULT;
}

weft_status_t weft_mca_param_set(weft_mca_param_t *p, const char *value)
{
    if (!p || !value)
        return WEFT_ERR_BAD_PARAM;
    return Registry::instance().set(*p, value, WEFT_MCA_SOURCE_API, "");
}

weft_status_t weft_mca_cmdline_set(const char *name, const char *value)
{
    if (!name || !value)
        return WEFT_ERR_BAD_PARAM;
    return Registry::instance().cmdline_set(name, value);
}

int weft_mca_param_warn_unknown(void) { return Registry::instance().warn_unknown(); }

} // extern "C"
