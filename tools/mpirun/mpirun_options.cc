#include "mpirun_options.h"

#include "weft_config.h"

#include "mca_parse.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace weft::mpirun {

namespace {

const char usage_text[] =
    "Usage: mpirun [options] program [arguments] [: -np N program [arguments]]...\n"
    "  (several programs, each after ':' with its own -np, make one job: MPMD)\n"
    "\n"
    "  -n, -np N              number of ranks (default: one per slot)\n"
    "  -N N                   N ranks on every host (--npernode N)\n"
    "  --map-by POLICY        where ranks go: slot (each host's slots in turn, the\n"
    "                         default), core, node (one per host in turn), ppr:N:node,\n"
    "                         ppr:N:socket, ppr:N:core (N per node, socket or core);\n"
    "                         :oversubscribe may follow\n"
    "  --host H1[:S],H2[:S]   hosts, with S slots each (default: this host, one slot per core)\n"
    "  --hostfile FILE        hosts from FILE, one 'host [slots=N]' per line\n"
    "  --oversubscribe        allow more ranks than slots on a host\n"
    "  --bind-to core|none    bind each rank to a core (default: core unless oversubscribed)\n"
    "  --report-bindings      say on stderr where each rank is bound\n"
    "  -x NAME[=VALUE]        export NAME (with this VALUE, or mpirun's) to the ranks\n"
    "  --mca NAME VALUE       set an MCA parameter for the ranks (also -mca)\n"
    "  --tag-output           prefix each output line with [job,rank]<stdout|stderr>:\n"
    "  --output-filename DIR  each rank's stdout and stderr also to DIR/1/rank.N/stdout and\n"
    "                         stderr (DIR:nocopy: only there; DIR:nojobid: DIR/rank.N/)\n"
    "  --timestamp-output     prefix each output line with the time mpirun passed it on\n"
    "                         ([2026-01-31T12:00:00.000000], local time)\n"
    "  --launch-agent CMD     how to start ranks on other hosts (default: ssh); {host} in\n"
    "                         CMD is replaced by the host name, else the host is appended\n"
    "  --bootstrap-addr ADDR  the address ranks on other hosts use to reach mpirun\n"
    "  --timeout S            end the job after S seconds (default: MPIEXEC_TIMEOUT from the\n"
    "                         environment, if set)\n"
    "  --wdir DIR             run the ranks in DIR (also -wdir, -wd); a relative program\n"
    "                         path is found from there\n"
    "  --allow-run-as-root    accepted, as Open MPI's mpirun takes it (this mpirun runs as\n"
    "                         root without it)\n"
    "  --with-ft ulfm|none    ulfm: a rank that dies does not end the job; the others are\n"
    "                         told (MPI fault tolerance, mpi-ext.h), and the job succeeds\n"
    "                         when every surviving rank exits 0 (same as --mca mpi_ft_enable\n"
    "                         true; default none)\n"
    "  --bootstrap-timeout S  how long a rank may stall the bootstrap server: a packet\n"
    "                         begun, a reply not read (default 10)\n"
    "  --bootstrap-max-size B largest per-rank size of a bootstrap collective, in bytes\n"
    "                         (K, M, G suffixes; default 1M)\n"
    "  --version              print the version and exit\n"
    "  -h, --help             this text\n"
    "\n"
    "mpiexec is the same program.\n";

bool parse_int(const std::string &s, int &out)
{
    if (s.empty())
        return false;
    char *end = nullptr;
    errno = 0;
    long v = std::strtol(s.c_str(), &end, 10);
    if (errno || *end || v < 0 || v > 1000000)
        return false;
    out = int(v);
    return true;
}

// Upper bounds of the numeric options.
constexpr double max_timeout_s = 31536000; // a year
constexpr double max_bootstrap_timeout_s = 3600;
constexpr size_t max_bootstrap_size = size_t(1) << 30;

// A finite number of seconds in (0, max]; else an error naming the option, the value and
// the range.
bool parse_seconds(const std::string &opt, const std::string &v, double max, double &out,
                   std::string &error)
{
    char *end = nullptr;
    errno = 0;
    const double d = v.empty() ? 0 : std::strtod(v.c_str(), &end);
    if (v.empty() || *end || errno == ERANGE || !std::isfinite(d) || d <= 0 || d > max) {
        char range[64];
        std::snprintf(range, sizeof range, "%.0f", max);
        error =
            opt + " '" + v + "': expected a number of seconds greater than 0 and at most " + range;
        return false;
    }
    out = d;
    return true;
}

// A byte count with an optional K, M or G (binary) suffix, in [1, max].
bool parse_bytes(const std::string &opt, const std::string &v, size_t max, size_t &out,
                 std::string &error)
{
    error = opt + " '" + v + "': expected a number of bytes from 1 to " + std::to_string(max) +
            " (K, M and G suffixes allowed)";
    if (v.empty() || !std::isdigit(static_cast<unsigned char>(v[0])))
        return false;
    char *end = nullptr;
    errno = 0;
    unsigned long long n = std::strtoull(v.c_str(), &end, 10);
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10;
    else if (*end == 'M' || *end == 'm')
        shift = 20;
    else if (*end == 'G' || *end == 'g')
        shift = 30;
    if (shift)
        ++end;
    if (errno || *end || n == 0 || n > (max >> shift))
        return false;
    out = size_t(n) << shift;
    error.clear();
    return true;
}

bool valid_host_name(const std::string &h)
{
    if (h.empty())
        return false;
    for (char c : h)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_'))
            return false;
    return true;
}

// Open MPI's --map-by modifiers after the policy (slot:oversubscribe): the ones that cost
// nothing are taken, the rest refused with what to do instead.
bool map_by_modifier(const std::string &spec, const std::string &mod, Options &o,
                     std::string &error)
{
    std::string m;
    for (char c : mod)
        m += char(std::tolower(static_cast<unsigned char>(c)));
    if (m == "oversubscribe") {
        o.oversubscribe = true;
        return true;
    }
    if (m == "nooversubscribe") {
        o.oversubscribe = false;
        return true;
    }
    if (m.rfind("pe=", 0) == 0)
        error = "--map-by " + spec + ": ':" + mod +
                "' (several cores per rank) is not supported; run with --bind-to none and " +
                "bind inside each rank (OMP_PLACES, for example)";
    else
        error = "--map-by " + spec + ": the modifier ':" + mod +
                "' is not supported (only :oversubscribe and :nooversubscribe are)";
    return false;
}

bool parse_map_by(const std::string &spec, Options &o, std::string &error)
{
    std::vector<std::string> parts;
    std::stringstream ss(spec);
    for (std::string part; std::getline(ss, part, ':');)
        parts.push_back(part);
    std::string policy = parts.empty() ? std::string{} : parts[0];
    for (char &c : policy)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    size_t first_mod = 1;
    if (policy == "slot")
        o.map_by = MapBy::slot;
    else if (policy == "core")
        o.map_by = MapBy::core;
    else if (policy == "node")
        o.map_by = MapBy::node;
    else if (policy == "ppr") {
        std::string unit = parts.size() > 2 ? parts[2] : std::string{};
        for (char &c : unit)
            c = char(std::tolower(static_cast<unsigned char>(c)));
        if (parts.size() < 3 || !parse_int(parts[1], o.ppr) || o.ppr < 1) {
            error = "--map-by " + spec + ": expected ppr:N:node, ppr:N:socket or ppr:N:core " +
                    "with N at least 1";
            return false;
        }
        if (unit == "node")
            o.ppr_unit = PprUnit::node;
        else if (unit == "socket" || unit == "package")
            o.ppr_unit = PprUnit::socket;
        else if (unit == "core")
            o.ppr_unit = PprUnit::core;
        else {
            error = "--map-by " + spec + ": '" + parts[2] +
                    "' is not a resource mpirun can count (node, socket or core)";
            return false;
        }
        o.map_by = MapBy::ppr;
        first_mod = 3;
    } else {
        error = "--map-by '" + spec + "': expected slot, core, node or ppr:N:node|socket|core" +
                (policy.empty() ? std::string{}
                                : " ('" + parts[0] + "' is not a mapping this mpirun knows)");
        return false;
    }
    for (size_t k = first_mod; k < parts.size(); ++k)
        if (!map_by_modifier(spec, parts[k], o, error))
            return false;
    o.map_spelling = "--map-by " + spec;
    return true;
}

// --output-filename DIR[:nocopy,nojobid] (Open MPI 4's directives). A relative DIR is taken
// from mpirun's working directory, before --wdir.
bool parse_output_filename(const std::string &value, Options &o, std::string &error)
{
    std::string dir = value;
    if (auto colon = value.rfind(':'); colon != std::string::npos) {
        std::stringstream ss(value.substr(colon + 1));
        std::vector<std::string> directives;
        bool all_known = true;
        for (std::string d; std::getline(ss, d, ',');) {
            for (char &c : d)
                c = char(std::tolower(static_cast<unsigned char>(c)));
            all_known &= d == "nocopy" || d == "nojobid";
            directives.push_back(d);
        }
        if (all_known && !directives.empty()) {
            dir = value.substr(0, colon);
            for (const auto &d : directives)
                (d == "nocopy" ? o.output_copy : o.output_jobid) = false;
        } else if (colon + 1 < value.size() && value.find('/', colon) == std::string::npos) {
            // A misspelt directive is an error, not part of the name (Open MPI once took
            // :noocopy silently); a colon followed by a path is part of the name.
            error = "--output-filename '" + value + "': '" + value.substr(colon + 1) +
                    "' is not a list of nocopy and nojobid";
            return false;
        }
    }
    if (dir.empty()) {
        error = "--output-filename '" + value + "': no directory";
        return false;
    }
    if (dir[0] != '/') {
        char cwd[4096];
        if (!getcwd(cwd, sizeof cwd)) {
            error = std::string("--output-filename: getcwd: ") + std::strerror(errno);
            return false;
        }
        dir = std::string(cwd) + "/" + dir;
    }
    o.output_dir = dir;
    return true;
}

} // namespace

bool parse_host_list(const std::string &text, std::vector<HostSpec> &out, std::string &error)
{
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        HostSpec h;
        auto colon = item.find(':');
        h.name = item.substr(0, colon);
        if (colon != std::string::npos &&
            (!parse_int(item.substr(colon + 1), h.slots) || h.slots == 0)) {
            error = "--host '" + text + "': '" + item + "' needs a positive slot count after ':'";
            return false;
        }
        if (!valid_host_name(h.name)) {
            error = "--host '" + text + "': '" + h.name + "' is not a host name";
            return false;
        }
        out.push_back(h);
    }
    if (out.empty()) {
        error = "--host needs at least one host";
        return false;
    }
    return true;
}

bool boot_selects_mpirun(const std::string &value, std::string &error)
{
    // The selection is a comma list of components, or ^ and a list to exclude.
    const bool exclude = !value.empty() && value[0] == '^';
    std::stringstream ss(exclude ? value.substr(1) : value);
    bool names_pmgr = false;
    for (std::string item; std::getline(ss, item, ',');)
        names_pmgr |= item == "pmgr";
    if (exclude ? !names_pmgr : names_pmgr)
        return true;
    error = "boot '" + value +
            "' would keep the ranks from bootstrapping through mpirun (boot component pmgr): "
            "they would run as unrelated processes. Under mpirun, leave boot unset or include "
            "pmgr; run a singleton without mpirun";
    return false;
}

bool parse_hostfile(const std::string &path, std::vector<HostSpec> &out, std::string &error)
{
    // O_NONBLOCK: a FIFO must not block the open; only a regular file is read.
    const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        error = "--hostfile " + path + ": " + std::strerror(errno);
        if (fd >= 0)
            close(fd);
        return false;
    }
    std::string text;
    if (!S_ISREG(st.st_mode))
        error = "--hostfile " + path + ": not a regular file";
    else if (size_t(st.st_size) > max_hostfile_bytes)
        error = "--hostfile " + path + ": " + std::to_string(st.st_size) +
                " bytes, more than the " + std::to_string(max_hostfile_bytes) +
                " bytes a host file may have";
    else {
        char buf[65536];
        ssize_t n = 0;
        while (text.size() <= max_hostfile_bytes && (n = read(fd, buf, sizeof buf)) > 0)
            text.append(buf, size_t(n));
        if (n < 0)
            error = "--hostfile " + path + ": " + std::strerror(errno);
        else if (text.size() > max_hostfile_bytes)
            error = "--hostfile " + path + ": more than the " + std::to_string(max_hostfile_bytes) +
                    " bytes a host file may have";
    }
    close(fd);
    if (!error.empty())
        return false;
    std::istringstream in(text);
    std::string line;
    for (int lineno = 1; std::getline(in, line); ++lineno) {
        if (auto hash = line.find('#'); hash != std::string::npos)
            line.erase(hash);
        std::stringstream ss(line);
        std::string word;
        HostSpec h;
        if (!(ss >> h.name))
            continue;
        const std::string where = path + ":" + std::to_string(lineno);
        if (!valid_host_name(h.name)) {
            error = where + ": '" + h.name + "' is not a host name";
            return false;
        }
        while (ss >> word) {
            if (word.rfind("slots=", 0) == 0 && parse_int(word.substr(6), h.slots) && h.slots > 0)
                continue;
            if (word.rfind("max_slots=", 0) == 0)
                continue; // accepted for compatibility; --oversubscribe governs
            error = where + ": '" + word + "' is not understood (expected slots=N)";
            return false;
        }
        out.push_back(h);
    }
    if (out.empty()) {
        error = "--hostfile " + path + ": no hosts in it";
        return false;
    }
    return true;
}

// The value of MCA parameter `name` that the ranks will see, with where it comes from ("--mca ",
// "-x WEFT_MCA_", "WEFT_MCA_"): --mca over -x over mpirun's environment. `differs` is set to an
// earlier --mca value that the last one contradicts ("" if none).
std::optional<std::pair<std::string, std::string>>
ranks_value(const Options &o, const std::string &name, std::string &differs)
{
    std::optional<std::pair<std::string, std::string>> found;
    differs.clear();
    if (const char *env = std::getenv(("WEFT_MCA_" + name).c_str()))
        found.emplace("WEFT_MCA_", env);
    for (const auto &[n, value] : o.exports)
        if (n == "WEFT_MCA_" + name && value)
            found.emplace("-x WEFT_MCA_", *value);
    for (const auto &[n, value] : o.mca)
        if (n == name) {
            if (found && found->first == "--mca " && found->second != value)
                differs = found->second;
            found.emplace("--mca ", value);
        }
    return found;
}

std::optional<Options> parse_options(int argc, char **argv, int &exit_code)
{
    Options o;
    exit_code = 1;
    auto fail = [&](const std::string &msg) -> std::optional<Options> {
        std::fprintf(stderr, "mpirun: %s\n(mpirun --help lists the options)\n", msg.c_str());
        exit_code = 1;
        return std::nullopt;
    };
    int i = 1;
    for (; i < argc; ++i) {
        std::string a = argv[i];
        if (a.empty() || a[0] != '-')
            break;
        if (a == "--") {
            ++i;
            break;
        }
        // --opt=value is accepted for options that take one value.
        std::string inline_value;
        bool has_inline = false;
        if (a.rfind("--", 0) == 0) {
            if (auto eq = a.find('='); eq != std::string::npos) {
                inline_value = a.substr(eq + 1);
                a = a.substr(0, eq);
                has_inline = true;
            }
        }
        auto value = [&](std::string &out) -> bool {
            if (has_inline) {
                out = inline_value;
                return true;
            }
            if (i + 1 >= argc)
                return false;
            out = argv[++i];
            return true;
        };
        std::string v;
        if (a == "-h" || a == "--help") {
            std::fputs(usage_text, stdout);
            exit_code = 0;
            return std::nullopt;
        } else if (a == "--version" || a == "-V") {
            std::printf("mpirun (Weft) %s\n", PACKAGE_VERSION);
            exit_code = 0;
            return std::nullopt;
        } else if (a == "-n" || a == "-np" || a == "--np" || a == "-c") {
            if (!value(v) || !parse_int(v, o.np) || o.np == 0)
                return fail(a + " needs a positive number of ranks");
        } else if (a == "-N" || a == "--npernode" || a == "-npernode") {
            if (!value(v) || !parse_int(v, o.ppr) || o.ppr < 1)
                return fail(a + " needs a number of ranks per host, at least 1");
            if (!o.map_spelling.empty())
                return fail(a + " " + v + " and " + o.map_spelling + " both say where ranks go; " +
                            "give one of them");
            o.map_by = MapBy::ppr;
            o.ppr_unit = PprUnit::node;
            o.map_spelling = "-N " + v;
        } else if (a == "--map-by" || a == "-map-by") {
            std::string err;
            if (!value(v))
                return fail(a + " needs slot, core, node or ppr:N:node|socket|core");
            if (!o.map_spelling.empty())
                return fail("--map-by " + v + " and " + o.map_spelling +
                            " both say where ranks go; give one of them");
            if (!parse_map_by(v, o, err))
                return fail(err);
        } else if (a == "--output-filename" || a == "-output-filename") {
            if (!value(v) || v.empty() || v[0] == ':')
                return fail(a + " needs a directory");
            std::string err;
            if (!parse_output_filename(v, o, err))
                return fail(err);
        } else if (a == "--host" || a == "-host" || a == "-H") {
            std::string err;
            if (!value(v))
                return fail(a + " needs a host list");
            if (!parse_host_list(v, o.hosts, err))
                return fail(err);
        } else if (a == "--hostfile" || a == "-hostfile" || a == "--machinefile") {
            if (!value(v))
                return fail(a + " needs a file name");
            o.hostfile = v;
        } else if (a == "-x") {
            if (!value(v) || v.empty() || v[0] == '=')
                return fail("-x needs NAME or NAME=VALUE");
            auto eq = v.find('=');
            if (eq == std::string::npos)
                o.exports.emplace_back(v, std::nullopt);
            else
                o.exports.emplace_back(v.substr(0, eq), v.substr(eq + 1));
        } else if (a == "--mca" || a == "-mca" || a == "--gmca") {
            if (has_inline || i + 2 >= argc)
                return fail(a + " needs a parameter name and a value");
            o.mca.emplace_back(argv[i + 1], argv[i + 2]);
            i += 2;
        } else if (a == "--oversubscribe" || a == "-oversubscribe") {
            o.oversubscribe = true;
        } else if (a == "--bind-to" || a == "-bind-to") {
            if (!value(v))
                return fail(a + " needs core or none");
            if (v == "core")
                o.bind = Bind::core;
            else if (v == "none")
                o.bind = Bind::none;
            else
                return fail("--bind-to '" + v + "': expected core or none");
        } else if (a == "--report-bindings" || a == "-report-bindings") {
            o.report_bindings = true;
        } else if (a == "--timestamp-output" || a == "-timestamp-output") {
            o.timestamp_output = true;
        } else if (a == "--tag-output" || a == "-tag-output") {
            o.tag_output = true;
        } else if (a == "--launch-agent" || a == "-launch-agent") {
            if (!value(v) || v.empty())
                return fail(a + " needs a command");
            o.launch_agent = v;
        } else if (a == "--bootstrap-addr") {
            if (!value(v) || v.empty())
                return fail(a + " needs an IPv4 address");
            o.bootstrap_addr = v;
        } else if (a == "--timeout" || a == "-timeout") {
            std::string err;
            if (!value(v))
                return fail(a + " needs a number of seconds");
            if (!parse_seconds("--timeout", v, max_timeout_s, o.timeout, err))
                return fail(err);
        } else if (a == "--wdir" || a == "-wdir" || a == "--wd" || a == "-wd") {
            if (!value(v) || v.empty())
                return fail(a + " needs a directory");
            o.wdir = v;
        } else if (a == "--allow-run-as-root" || a == "-allow-run-as-root") {
            // Open MPI refuses root without it; scripts written for Open MPI pass it.
        } else if (a == "--with-ft" || a == "-with-ft") {
            if (!value(v))
                return fail(a + " needs ulfm or none");
            if (v == "ulfm" || v == "mpi")
                o.mca.emplace_back("mpi_ft_enable", "true");
            else if (v == "none")
                o.mca.emplace_back("mpi_ft_enable", "false");
            else
                return fail(a + " '" + v + "': expected ulfm (or mpi) or none");
        } else if (a == "--bootstrap-timeout") {
            std::string err;
            if (!value(v))
                return fail(a + " needs a number of seconds");
            if (!parse_seconds(a, v, max_bootstrap_timeout_s, o.bootstrap_timeout, err))
                return fail(err);
        } else if (a == "--bootstrap-max-size") {
            std::string err;
            if (!value(v))
                return fail(a + " needs a number of bytes");
            if (!parse_bytes(a, v, max_bootstrap_size, o.bootstrap_max_size, err))
                return fail(err);
        } else {
            return fail("unknown option '" + a + "'");
        }
    }
    for (; i < argc && std::strcmp(argv[i], ":") != 0; ++i)
        o.command.emplace_back(argv[i]);
    if (o.command.empty())
        return fail("no program to run");
    // More programs after ':', each "-np N program [arguments]" (MPMD).
    while (i < argc) {
        ++i; // the ':'
        Options::App app;
        while (i < argc && argv[i][0] == '-' && std::strcmp(argv[i], ":") != 0) {
            const std::string a = argv[i];
            if (a == "-n" || a == "-np" || a == "--np" || a == "-c") {
                if (i + 1 >= argc || !parse_int(argv[i + 1], app.np) || app.np == 0)
                    return fail(a + " needs a positive number of ranks");
                i += 2;
            } else {
                return fail("'" + a + "' after ':' : a program there takes only -np; give " +
                            "the other options before the first program");
            }
        }
        for (; i < argc && std::strcmp(argv[i], ":") != 0; ++i)
            app.command.emplace_back(argv[i]);
        if (app.command.empty())
            return fail("no program after ':'");
        if (app.np == 0)
            return fail("'" + app.command[0] + "' after ':' needs -np (each program of an MPMD " +
                        "job says how many ranks run it)");
        o.more_apps.push_back(std::move(app));
    }
    if (!o.more_apps.empty() && o.np == 0)
        return fail("'" + o.command[0] + "' needs -np: each program of an MPMD job (':') says " +
                    "how many ranks run it");
    if (!o.more_apps.empty() && o.map_by == MapBy::ppr)
        return fail(o.map_spelling.substr(0, o.map_spelling.find(' ')) +
                    " and several programs (':') do not go together: give each program -np");
    // The time limit Open MPI's and MPICH's mpiexec read from the environment, when --timeout
    // is not given: checked as --timeout is.
    if (const char *t = std::getenv("MPIEXEC_TIMEOUT"); t && o.timeout == 0) {
        std::string err;
        if (!parse_seconds("MPIEXEC_TIMEOUT", t, max_timeout_s, o.timeout, err))
            return fail(err);
        o.timeout_from = "MPIEXEC_TIMEOUT";
    }
    // Every rank must bootstrap through this mpirun: a boot selection without pmgr would
    // start unrelated processes. It reaches the ranks by --mca, -x or mpirun's environment.
    std::string differs;
    if (auto boot = ranks_value(o, "boot", differs); boot) {
        if (std::string err; !boot_selects_mpirun(boot->second, err))
            return fail(boot->first + err);
    }
    // Fault tolerance, as the ranks will see it (--with-ft is an --mca).
    if (auto ft = ranks_value(o, "mpi_ft_enable", differs); ft) {
        std::string expected;
        auto v = mca::parse_value(WEFT_MCA_PARAM_BOOL, ft->second, {}, expected);
        if (!v)
            return fail(ft->first + "mpi_ft_enable '" + ft->second + "': expected " + expected);
        // Two spellings of one value (--with-ft ulfm and --mca mpi_ft_enable 1) agree.
        if (auto d = mca::parse_value(WEFT_MCA_PARAM_BOOL, differs, {}, expected);
            !differs.empty() && (!d || d->b != v->b))
            return fail("--with-ft and --mca mpi_ft_enable disagree (" + differs + " and " +
                        ft->second + ")");
        o.ft = v->b;
    }
    // The failure detector: a period turns it on; the timeout defaults to four periods.
    for (auto [name, out] : {std::pair{"mpi_ft_detector_period", &o.detector_period},
                             std::pair{"mpi_ft_detector_timeout", &o.detector_timeout}}) {
        auto v = ranks_value(o, name, differs);
        if (!v)
            continue;
        if (!differs.empty())
            return fail(std::string(name) + " is given twice, differently (" + differs + " and " +
                        v->second + ")");
        std::string err;
        char *end = nullptr;
        if (const double zero = std::strtod(v->second.c_str(), &end);
            !v->second.empty() && !*end && zero == 0) // 0: off (the period), or four periods
            *out = 0;
        else if (!parse_seconds(v->first + name, v->second, 3600, *out, err))
            return fail(err + " (or 0)");
    }
    if (o.detector_period > 0 && !o.ft)
        return fail("mpi_ft_detector_period needs fault tolerance (--with-ft ulfm)");
    if (o.detector_period == 0 && o.detector_timeout > 0)
        return fail("mpi_ft_detector_timeout needs mpi_ft_detector_period (the detector is off)");
    if (o.detector_period > 0 && o.detector_period < 0.01)
        return fail("mpi_ft_detector_period is below 0.01 seconds");
    if (o.detector_period > 0 && o.detector_timeout == 0)
        o.detector_timeout = 4 * o.detector_period;
    if (o.detector_period > 0 && o.detector_timeout < 2 * o.detector_period)
        return fail("mpi_ft_detector_timeout must be at least twice mpi_ft_detector_period");
    if (!o.hostfile.empty()) {
        std::string err;
        if (!parse_hostfile(o.hostfile, o.hosts, err))
            return fail(err);
    }
    return o;
}

} // namespace weft::mpirun
