#include "mpirun_options.h"

#include "weft_config.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace weft::mpirun {

namespace {

const char usage_text[] =
    "Usage: mpirun [options] program [arguments]\n"
    "\n"
    "  -n, -np N              number of ranks (default: one per slot)\n"
    "  --host H1[:S],H2[:S]   hosts, with S slots each (default: this host, one slot per core)\n"
    "  --hostfile FILE        hosts from FILE, one 'host [slots=N]' per line\n"
    "  --oversubscribe        allow more ranks than slots on a host\n"
    "  --bind-to core|none    bind each rank to a core (default: core unless oversubscribed)\n"
    "  -x NAME[=VALUE]        export NAME (with this VALUE, or mpirun's) to the ranks\n"
    "  --mca NAME VALUE       set an MCA parameter for the ranks (also -mca)\n"
    "  --tag-output           prefix each output line with [job,rank]<stdout|stderr>:\n"
    "  --launch-agent CMD     how to start ranks on other hosts (default: ssh); {host} in\n"
    "                         CMD is replaced by the host name, else the host is appended\n"
    "  --bootstrap-addr ADDR  the address ranks on other hosts use to reach mpirun\n"
    "  --timeout S            end the job after S seconds\n"
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

bool valid_host_name(const std::string &h)
{
    if (h.empty())
        return false;
    for (char c : h)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_'))
            return false;
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

bool parse_hostfile(const std::string &path, std::vector<HostSpec> &out, std::string &error)
{
    std::ifstream in(path);
    if (!in) {
        error = "--hostfile " + path + ": " + std::strerror(errno);
        return false;
    }
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
            char *end = nullptr;
            if (!value(v) || (o.timeout = std::strtod(v.c_str(), &end), *end) || o.timeout <= 0)
                return fail("--timeout needs a positive number of seconds");
        } else {
            return fail("unknown option '" + a + "'");
        }
    }
    for (; i < argc; ++i)
        o.command.emplace_back(argv[i]);
    if (o.command.empty())
        return fail("no program to run");
    if (!o.hostfile.empty()) {
        std::string err;
        if (!parse_hostfile(o.hostfile, o.hosts, err))
            return fail(err);
    }
    return o;
}

} // namespace weft::mpirun
