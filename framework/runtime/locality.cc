// Process locality: node identity and hwloc binding description.
#include "locality.h"

#include "weft_config.h"

#include <weft/runtime.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#ifdef WEFT_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace weft::rt::locality {

std::string node_id()
{
    if (const char *h = std::getenv("WEFT_HOSTNAME"); h && *h)
        return h;
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    std::string boot;
    std::ifstream f("/proc/sys/kernel/random/boot_id");
    std::getline(f, boot);
    return boot.empty() ? std::string(host) : std::string(host) + "/" + boot;
}

namespace {

struct Level {
    const char *name;
    uint32_t flag;
};
constexpr Level kLevels[] = {{"package", WEFT_LOCALITY_PACKAGE},
                             {"numa", WEFT_LOCALITY_NUMA},
                             {"l3", WEFT_LOCALITY_L3},
                             {"core", WEFT_LOCALITY_CORE}};

// "package=0,1;numa=0" -> {"package": {0, 1}, "numa": {0}}
std::map<std::string, std::set<unsigned>> parse(const std::string &s)
{
    std::map<std::string, std::set<unsigned>> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ';')) {
        const size_t eq = item.find('=');
        if (eq == std::string::npos)
            continue;
        std::set<unsigned> ids;
        std::stringstream list(item.substr(eq + 1));
        std::string id;
        while (std::getline(list, id, ','))
            if (!id.empty() && id.find_first_not_of("0123456789") == std::string::npos)
                ids.insert(unsigned(std::strtoul(id.c_str(), nullptr, 10)));
        out[item.substr(0, eq)] = std::move(ids);
    }
    return out;
}

} // namespace

#ifdef WEFT_HAVE_HWLOC
namespace {

// The description, from hwloc in this process.
std::string describe_here()
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0)
        return "";
    // Only what the description needs: no I/O devices, no caches but L3 (a full discovery
    // costs time and memory in every process).
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_cache_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_icache_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_type_filter(topo, HWLOC_OBJ_L3CACHE, HWLOC_TYPE_FILTER_KEEP_ALL);
    std::string out;
    hwloc_bitmap_t bound = hwloc_bitmap_alloc();
    if (hwloc_topology_load(topo) == 0 && bound) {
        // Unbound (or the binding cannot be read): the whole machine.
        if (hwloc_get_cpubind(topo, bound, HWLOC_CPUBIND_PROCESS) != 0 ||
            hwloc_bitmap_iszero(bound))
            hwloc_bitmap_copy(bound, hwloc_topology_get_topology_cpuset(topo));
        const hwloc_obj_type_t types[] = {HWLOC_OBJ_PACKAGE, HWLOC_OBJ_NUMANODE, HWLOC_OBJ_L3CACHE,
                                          HWLOC_OBJ_CORE};
        for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i) {
            std::string ids;
            const int n = hwloc_get_nbobjs_by_type(topo, types[i]);
            for (int k = 0; k < n; ++k) {
                hwloc_obj_t o = hwloc_get_obj_by_type(topo, types[i], unsigned(k));
                if (o && o->cpuset && hwloc_bitmap_intersects(o->cpuset, bound))
                    ids += (ids.empty() ? "" : ",") + std::to_string(o->logical_index);
            }
            if (n > 0)
                out += std::string(out.empty() ? "" : ";") + kLevels[i].name + "=" + ids;
        }
    }
    if (bound)
        hwloc_bitmap_free(bound);
    hwloc_topology_destroy(topo);
    return out;
}

} // namespace

// The discovery runs in a child process that writes the description to a pipe: loading the
// topology in the process itself left it with shared-memory copies three times slower
// (measured at 64 KiB and up; the cause is not known yet), and the child's exit takes
// whatever hwloc left behind with it. Runs before any transport exists.
std::string describe()
{
    int fds[2];
    if (pipe(fds) != 0)
        return "";
    const pid_t child = fork();
    if (child < 0) {
        close(fds[0]);
        close(fds[1]);
        return "";
    }
    if (child == 0) {
        close(fds[0]);
        const std::string d = describe_here();
        size_t off = 0;
        while (off < d.size()) {
            const ssize_t n = write(fds[1], d.data() + off, d.size() - off);
            if (n <= 0)
                break;
            off += size_t(n);
        }
        _exit(0);
    }
    close(fds[1]);
    std::string out;
    char buf[256];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        out.append(buf, size_t(n));
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? out : std::string();
}

#else
std::string describe() { return ""; }
#endif

uint32_t relative(const std::string &a, const std::string &b)
{
    uint32_t flags = WEFT_LOCALITY_NODE;
    const auto pa = parse(a), pb = parse(b);
    for (const Level &level : kLevels) {
        const auto ia = pa.find(level.name), ib = pb.find(level.name);
        if (ia == pa.end() || ib == pb.end())
            continue; // unknown at one side: not claimed
        for (unsigned id : ia->second)
            if (ib->second.count(id)) {
                flags |= level.flag;
                break;
            }
    }
    return flags;
}

} // namespace weft::rt::locality
