#include "mpirun_job.h"

#include "weft_config.h"

#ifdef WEFT_HAVE_HWLOC
#include <hwloc.h>
#endif

#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace weft::mpirun {

bool is_local_host(const std::string &name)
{
    if (name == "localhost" || name == "127.0.0.1" || name == "::1")
        return true;
    char buf[256] = "";
    if (gethostname(buf, sizeof buf - 1) == 0) {
        std::string me = buf;
        if (name == me || name == me.substr(0, me.find('.')))
            return true;
    }
    return false;
}

int local_cores()
{
#ifdef WEFT_HAVE_HWLOC
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) == 0) {
        int n = -1;
        if (hwloc_topology_load(topo) == 0)
            n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
        hwloc_topology_destroy(topo);
        if (n > 0)
            return n;
    }
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? int(n) : 1;
}

bool map_ranks(std::vector<Host> &hosts, int np, bool oversubscribe, std::vector<Rank> &ranks,
               std::string &error, MapBy by, const std::string &spelling)
{
    auto plural = [](int n, const char *word) {
        return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
    };
    auto place = [&](int r, Host &h) {
        ranks[size_t(r)].rank = r;
        ranks[size_t(r)].host = &h;
        ++h.placed;
    };
    if (by == MapBy::ppr) {
        // That many on every host, host after host.
        int total = 0;
        for (const auto &h : hosts)
            total += h.ppr_ranks;
        if (np != 0 && np != total) {
            error = "-np " + std::to_string(np) + " and " + spelling + " on " +
                    plural(int(hosts.size()), "host") + " (" + std::to_string(total) +
                    " ranks) disagree; give one of them";
            return false;
        }
        for (const auto &h : hosts)
            if (h.ppr_ranks > h.slots && !oversubscribe) {
                // -N N keeps the words it always had.
                error = spelling.rfind("-N ", 0) == 0
                            ? spelling + " ranks per host were asked for but " + h.name + " has " +
                                  plural(h.slots, "slot")
                            : spelling + " puts " + std::to_string(h.ppr_ranks) + " ranks on " +
                                  h.name + " (" + h.ppr_why + ") but it has " +
                                  plural(h.slots, "slot");
                error += ".\nUse --oversubscribe to run more ranks than slots.";
                return false;
            }
        ranks.clear();
        ranks.resize(size_t(total));
        int r = 0;
        for (auto &h : hosts)
            for (int k = 0; k < h.ppr_ranks; ++k)
                place(r++, h);
        return true;
    }
    int slots = 0;
    for (const auto &h : hosts)
        slots += h.slots;
    if (np == 0)
        np = slots;
    if (np > slots && !oversubscribe) {
        error = std::to_string(np) + " ranks were asked for but only " + std::to_string(slots) +
                " slot" + (slots == 1 ? "" : "s") + " are available (";
        for (size_t i = 0; i < hosts.size(); ++i)
            error += (i ? ", " : "") + hosts[i].name + ": " + std::to_string(hosts[i].slots);
        error += ").\nUse --oversubscribe to run more ranks than slots, or give more hosts or "
                 "slots with --host h:slots or --hostfile.";
        return false;
    }
    ranks.clear();
    ranks.resize(size_t(np));
    int r = 0;
    if (by == MapBy::node) {
        // One per host in turn, passing over hosts whose slots are full.
        for (bool placed = true; r < np && placed;) {
            placed = false;
            for (auto &h : hosts)
                if (r < np && h.placed < h.slots) {
                    place(r++, h);
                    placed = true;
                }
        }
    } else {
        for (auto &h : hosts)
            for (int s = 0; s < h.slots && r < np; ++s)
                place(r++, h);
    }
    // Oversubscribed: the rest round-robin over the hosts.
    for (size_t k = 0; r < np; ++r, ++k)
        place(r, hosts[k % hosts.size()]);
    return true;
}

std::string find_executable(const std::string &program)
{
    auto runnable = [](const std::string &p) {
        struct stat st;
        return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
    };
    if (program.find('/') != std::string::npos)
        return runnable(program) ? program : std::string{};
    const char *path = std::getenv("PATH");
    std::string p = path ? path : "/usr/local/bin:/usr/bin:/bin";
    size_t start = 0;
    while (start <= p.size()) {
        size_t end = p.find(':', start);
        if (end == std::string::npos)
            end = p.size();
        std::string dir = p.substr(start, end - start);
        std::string cand = (dir.empty() ? "." : dir) + "/" + program;
        if (runnable(cand))
            return cand;
        start = end + 1;
    }
    return {};
}

std::string shell_quote(const std::string &word)
{
    if (!word.empty() &&
        word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                               "0123456789_-./=:,+@%") == std::string::npos)
        return word;
    std::string out = "'";
    for (char c : word) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

} // namespace weft::mpirun
