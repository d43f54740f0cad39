// weft_info: what this Weft build is, which components it finds, and every
// parameter with its value, source and documentation.
#include "weft_config.h"

#include "mca_framework.h"
#include "mca_loader.h"
#include "mca_output.h"
#include "mca_param.h"
#include "mca_parse.h"
#include "mca_repository.h"
#include "mca_select.h"

#ifdef WEFT_HAVE_HWLOC
#include <hwloc.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace weft::mca;

struct Options {
    bool parsable = false;
    bool all = false;
    bool config = false;
    bool components_only = false;
    int level = 1;
    bool level_given = false;
    std::vector<std::pair<std::string, std::string>> params; // (framework, component|all)
    std::vector<std::string> selects;
};

void usage(FILE *out)
{
    std::fputs("Usage: weft_info [options]\n"
               "\n"
               "Without options: the build and one line per component found.\n"
               "\n"
               "  --param FW COMP    parameters of component COMP of framework FW; COMP may be\n"
               "                     'all' (every component and the framework's own), FW may be\n"
               "                     'all' too, or mca or mpi (the component system's and the\n"
               "                     MPI layer's own parameters); may be repeated\n"
               "  --level N          show parameters of level 1..N (default 1; --all implies 9)\n"
               "  --all              everything: build, components, every parameter\n"
               "  --config           print a param file with every parameter at its current value\n"
               "  --select FW        run FW's selection here and show what it picks, and why not\n"
               "                     the others (repeatable)\n"
               "  --components       only the component lines\n"
               "  --parsable         stable key:value lines instead of prose\n"
               "  --mca NAME VALUE   set a parameter as mpirun's --mca does (also -mca)\n"
               "  --version          print the version and exit\n"
               "  --help             this text\n"
               "\nShort forms: -a (--all), -h (--help), -V (--version), -mca (--mca);\n"
               "--parseable is accepted for --parsable.\n",
               out);
}

std::string version_of(const weft_mca_component_t *d)
{
    return std::to_string(d->version.major) + "." + std::to_string(d->version.minor) + "." +
           std::to_string(d->version.patch);
}

std::string api_of(const weft_mca_component_t *d)
{
    return std::to_string(d->framework_abi_major) + "." + std::to_string(d->framework_abi_minor);
}

const std::string mca_abi =
    std::to_string(WEFT_MCA_ABI_MAJOR) + "." + std::to_string(WEFT_MCA_ABI_MINOR);

struct Dependency {
    const char *name;
    const char *version; // nullptr: not built with it
};

std::vector<Dependency> dependencies()
{
    return {
#ifdef WEFT_HAVE_HWLOC
        {"hwloc", WEFT_HWLOC_VERSION},
#else
        {"hwloc", nullptr},
#endif
#ifdef WEFT_HAVE_VERBS
        {"libibverbs", WEFT_VERBS_VERSION},
#else
        {"libibverbs", nullptr},
#endif
#ifdef WEFT_HAVE_OFI
        {"libfabric", WEFT_OFI_VERSION},
#else
        {"libfabric", nullptr},
#endif
#ifdef WEFT_HAVE_LTDL
        {"libltdl", "yes"},
#else
        {"libltdl", nullptr},
#endif
    };
}

// Fault tolerance (ULFM) as built: what a job run with --with-ft ulfm gets (docs/
// fault-tolerance.md). Partial until the rest of issue 16 is in.
const char ft_support[] = "partial: detection (and a heartbeat detector), "
                          "MPIX_ERR_PROC_FAILED(_PENDING), revoke, agree, shrink, ishrink, "
                          "failure acknowledgement; intracommunicators only for agree and shrink";

void print_build(bool parsable)
{
    std::string loaders;
    for (const auto &l : loader_names())
        loaders += (loaders.empty() ? "" : ",") + l;
    if (parsable) {
        std::printf("package:Weft %s\nversion:%s\nmca_abi:%s\n", PACKAGE_VERSION, PACKAGE_VERSION,
                    mca_abi.c_str());
        std::printf("configure_line:%s\n", WEFT_CONFIGURE_LINE);
        std::printf("loader:%s\nloaders:%s\n", Repository::instance().loader_name().c_str(),
                    loaders.c_str());
        std::printf("btl_openib_failover:%s\n", WEFT_BTL_OPENIB_FAILOVER_STRING);
        std::printf("ft_mpi_support:%s\n", ft_support);
        for (const auto &d : dependencies())
            std::printf("dependency:%s:%s\n", d.name, d.version ? d.version : "no");
#ifdef WEFT_HAVE_HWLOC
        unsigned v = hwloc_get_api_version();
        std::printf("dependency:hwloc:runtime_api:%u.%u.%u\n", v >> 16, (v >> 8) & 0xff, v & 0xff);
#endif
        for (const Framework *f : frameworks())
            std::printf("framework:%s:api:%u.%u\n", f->name, f->abi_major, f->abi_minor);
        return;
    }
    std::printf("                 Package: Weft %s\n", PACKAGE_VERSION);
    std::printf("                 MCA ABI: v%s\n", mca_abi.c_str());
    std::printf("  Configure command line: %s\n", WEFT_CONFIGURE_LINE);
    std::printf("          Loader backend: %s (built: %s)\n",
                Repository::instance().loader_name().c_str(), loaders.c_str());
    std::printf("         openib failover: %s\n", WEFT_BTL_OPENIB_FAILOVER_STRING);
    std::printf("          FT MPI support: %s (mpirun --with-ft ulfm; docs/fault-tolerance.md)\n",
                ft_support);
    for (const auto &d : dependencies())
        std::printf("%24s: %s\n", d.name, d.version ? d.version : "no");
    std::string fws;
    for (const Framework *f : frameworks())
        fws += (fws.empty() ? "" : ", ") + std::string(f->name);
    std::printf("              Frameworks: %s\n", fws.c_str());
}

void print_components(bool parsable)
{
    for (const Framework *f : frameworks()) {
        for (Component *c : Repository::instance().components(f->name)) {
            const auto *d = c->desc;
            if (parsable) {
                std::string key = "mca:" + std::string(f->name) + ":" + c->name;
                std::printf("%s:version:mca:%u.%u\n", key.c_str(), d->mca_abi_major,
                            d->mca_abi_minor);
                std::printf("%s:version:api:%s\n", key.c_str(), api_of(d).c_str());
                std::printf("%s:version:component:%s\n", key.c_str(), version_of(d).c_str());
                std::printf("%s:origin:%s\n", key.c_str(), c->origin.c_str());
            } else {
                std::printf("%*s MCA %s: %s (MCA v%u.%u, API v%s, Component v%s)\n",
                            int(6 - std::strlen(f->name)), "", f->name, c->name.c_str(),
                            d->mca_abi_major, d->mca_abi_minor, api_of(d).c_str(),
                            version_of(d).c_str());
            }
        }
    }
    for (const auto &r : Repository::instance().rejected()) {
        if (parsable)
            std::printf("mca:%s:%s:rejected:%s\n", r.framework.c_str(), r.name.c_str(),
                        r.reason.c_str());
    }
}

std::string expected_values(const Param &p)
{
    std::string out;
    for (const auto &e : p.enums)
        out += (out.empty() ? "" : ", ") + e.name;
    return out;
}

std::string display_value(const Param &p) { return p.value.text; }

std::vector<std::string> wrap(const std::string &text, size_t width)
{
    std::vector<std::string> lines;
    std::string line;
    for (const auto &word : split(text, ' ')) {
        if (!line.empty() && line.size() + 1 + word.size() > width) {
            lines.push_back(line);
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
    }
    if (!line.empty())
        lines.push_back(line);
    return lines;
}

void print_param(const Param &p, bool parsable)
{
    const std::string comp = p.component.empty() ? "base" : p.component;
    if (parsable) {
        std::string key = "mca:" + p.framework + ":" + comp + ":param:" + p.full_name;
        std::string raw;
        switch (p.type) {
        case WEFT_MCA_PARAM_BOOL: raw = p.value.b ? "1" : "0"; break;
        case WEFT_MCA_PARAM_INT:
        case WEFT_MCA_PARAM_ENUM:
            raw = p.type == WEFT_MCA_PARAM_INT ? std::to_string(p.value.i) : p.value.text;
            break;
        case WEFT_MCA_PARAM_SIZE: raw = std::to_string(p.value.size); break;
        default: raw = p.value.text;
        }
        std::printf("%s:value:%s\n", key.c_str(), raw.c_str());
        std::printf("%s:source:%s\n", key.c_str(), source_name(p.source));
        if (!p.source_detail.empty())
            std::printf("%s:source_detail:%s\n", key.c_str(), p.source_detail.c_str());
        std::printf("%s:default:%s\n", key.c_str(), p.default_text.c_str());
        std::printf("%s:type:%s\n", key.c_str(), type_name(p.type));
        std::printf("%s:level:%d\n", key.c_str(), p.level);
        std::printf("%s:scope:%s\n", key.c_str(),
                    p.scope == WEFT_MCA_SCOPE_ALL_EQUAL ? "all-equal"
                    : p.scope == WEFT_MCA_SCOPE_INFO    ? "information"
                                                        : "local");
        std::printf("%s:help:%s\n", key.c_str(), p.help.c_str());
        for (const auto &e : p.enums)
            std::printf("%s:enumerator:value:%d:%s\n", key.c_str(), e.value, e.name.c_str());
        for (const auto &s : p.synonyms)
            std::printf("%s:synonym:%s\n", key.c_str(), s.c_str());
        if (!p.range.empty())
            std::printf("%s:range:%s\n", key.c_str(), p.range.c_str());
        return;
    }
    std::string where = source_name(p.source);
    if (!p.source_detail.empty()) // "command line (mpirun --mca)", "file /etc/x.conf:3"
        where += p.source == WEFT_MCA_SOURCE_CMDLINE ? " (" + p.source_detail + ")"
                                                     : " " + p.source_detail;
    std::printf("  MCA %s %s: parameter \"%s\" (current value: \"%s\", source: %s)\n",
                p.framework.c_str(), comp.c_str(), p.full_name.c_str(), display_value(p).c_str(),
                where.c_str());
    if (p.scope == WEFT_MCA_SCOPE_INFO)
        std::printf("        information (read only), level %d\n", p.level);
    else
        std::printf("        type %s, level %d, scope %s, default \"%s\"\n", type_name(p.type),
                    p.level, p.scope == WEFT_MCA_SCOPE_ALL_EQUAL ? "all ranks equal" : "local",
                    p.default_text.c_str());
    for (const auto &line : wrap(p.help, 88))
        std::printf("        %s\n", line.c_str());
    if (!p.enums.empty())
        std::printf("        Valid values: %s\n", expected_values(p).c_str());
    if (!p.range.empty())
        std::printf("        Range: %s\n", p.range.c_str());
    for (const auto &s : p.synonyms)
        std::printf("        Deprecated synonym: %s\n", s.c_str());
}

bool matches(const Param &p, const std::string &fw, const std::string &comp)
{
    if (fw != "all" && p.framework != fw)
        return false;
    if (comp == "all")
        return true;
    return (p.component.empty() ? std::string("base") : p.component) == comp;
}

int print_params(const Options &o)
{
    int shown = 0, hidden = 0;
    for (const auto &[fw, comp] : o.params) {
        // mca: the component system's own parameters; mpi: the MPI layer's (mpi_leave_pinned).
        if (fw != "all" && fw != "mca" && fw != "mpi" && !find_framework(fw)) {
            weft::output::error("--param: no framework '" + fw + "'");
            return 2;
        }
        bool any = false;
        for (const auto &p : Registry::instance().all()) {
            if (!matches(*p, fw, comp))
                continue;
            any = true;
            if (p->level > o.level) {
                ++hidden;
                continue;
            }
            print_param(*p, o.parsable);
            ++shown;
        }
        bool exists = false;
        for (Component *c : Repository::instance().components(fw == "all" ? "" : fw))
            exists |= c->name == comp;
        if (!any && comp != "all" && comp != "base" && !exists) {
            weft::output::error("--param " + fw + " " + comp +
                                ": no such component (see weft_info)");
            return 2;
        }
    }
    if (hidden && !o.parsable)
        std::printf("(%d more parameter%s above level %d; use --level 9 to see them)\n", hidden,
                    hidden == 1 ? "" : "s", o.level);
    return 0;
}

void print_config()
{
    std::printf("# Weft %s MCA parameters, as weft_info --config saw them.\n", PACKAGE_VERSION);
    std::printf("# Save as $HOME/.weft/mca-params.conf (or name it in WEFT_MCA_PARAM_FILES)\n");
    std::printf("# and edit; lines are 'name = value', '#' starts a comment.\n");
    std::string last_owner;
    for (const auto &p : Registry::instance().all()) {
        if (p->scope == WEFT_MCA_SCOPE_INFO)
            continue; // information, not a setting: a param file may not set it
        std::string owner = p->framework + (p->component.empty() ? "" : "/" + p->component);
        if (owner != last_owner) {
            std::printf("\n# ---- %s\n", owner.c_str());
            last_owner = owner;
        }
        std::printf("\n");
        for (const auto &line : wrap(p->help, 76))
            std::printf("# %s\n", line.c_str());
        std::printf("# type %s, level %d, default \"%s\"%s%s", type_name(p->type), p->level,
                    p->default_text.c_str(),
                    p->enums.empty() ? "" : ", one of: ", expected_values(*p).c_str());
        std::printf(", now from %s\n", source_name(p->source));
        std::printf("%s = %s\n", p->full_name.c_str(), display_value(*p).c_str());
    }
}

int print_selection(const std::string &fwname, bool parsable)
{
    FrameworkBase *base = framework_base(fwname);
    if (!base) {
        weft::output::error("--select: no framework '" + fwname + "'");
        return 2;
    }
    if (base->open() != WEFT_SUCCESS)
        return 1;
    std::vector<Candidate> chosen;
    weft_status_t rc = base->framework().pick == Pick::one ? [&] {
        Component *one = nullptr;
        weft_status_t r = base->select_one(one);
        if (one)
            chosen.push_back({one, 0});
        return r;
    }()
                                                           : base->select_all(chosen);
    if (rc != WEFT_SUCCESS)
        return 1;
    std::string names;
    for (const auto &c : chosen)
        names += (names.empty() ? "" : ",") + c.component->name;
    if (parsable)
        std::printf("select:%s:%s\n", fwname.c_str(), names.c_str());
    else
        std::printf("%s: selected %s\n", fwname.c_str(), names.empty() ? "(none)" : names.c_str());
    base->close();
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    Options o;
    bool any_output_option = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto need = [&](int n) {
            if (i + n >= argc) {
                std::fprintf(stderr, "weft_info: %s needs %d argument%s\n", a.c_str(), n,
                             n == 1 ? "" : "s");
                usage(stderr);
                std::exit(2);
            }
        };
        if (a == "--help" || a == "-h") {
            usage(stdout);
            return 0;
        } else if (a == "--version" || a == "-V") {
            std::printf("weft_info (Weft) %s\n", PACKAGE_VERSION);
            return 0;
        } else if (a == "--parsable" || a == "--parseable") {
            o.parsable = true;
        } else if (a == "--all" || a == "-a") {
            o.all = true;
            any_output_option = true;
        } else if (a == "--config") {
            o.config = true;
            any_output_option = true;
        } else if (a == "--components") {
            o.components_only = true;
            any_output_option = true;
        } else if (a == "--level") {
            need(1);
            char *end = nullptr;
            long l = std::strtol(argv[++i], &end, 10);
            if (*end || l < 1 || l > 9) {
                std::fprintf(stderr, "weft_info: --level '%s': expected 1 to 9\n", argv[i]);
                return 2;
            }
            o.level = int(l);
            o.level_given = true;
        } else if (a == "--param") {
            need(2);
            o.params.emplace_back(argv[i + 1], argv[i + 2]);
            i += 2;
            any_output_option = true;
        } else if (a == "--select") {
            need(1);
            o.selects.emplace_back(argv[++i]);
            any_output_option = true;
        } else if (a == "--mca" || a == "-mca") {
            need(2);
            if (weft_mca_cmdline_set(argv[i + 1], argv[i + 2]) != WEFT_SUCCESS)
                return 1;
            i += 2;
        } else {
            std::fprintf(stderr, "weft_info: unknown option '%s'\n", a.c_str());
            usage(stderr);
            return 2;
        }
    }
    if (o.all && !o.level_given)
        o.level = 9;

    int rc = register_all() == WEFT_SUCCESS ? 0 : 1;
    weft_mca_param_warn_unknown();

    if (o.config) {
        print_config();
        return rc;
    }
    if (!any_output_option || o.all) {
        print_build(o.parsable);
        print_components(o.parsable);
    } else if (o.components_only) {
        print_components(o.parsable);
    }
    if (o.all)
        o.params = {{"all", "all"}};
    if (!o.params.empty())
        if (int prc = print_params(o); prc != 0)
            return prc;
    for (const auto &fw : o.selects)
        if (int src = print_selection(fw, o.parsable); src != 0)
            rc = src;
    return rc;
}
