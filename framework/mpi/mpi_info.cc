// Info objects (MPI-3.1 chapter 9), MPI_INFO_ENV (8.8), and the info hints of communicators
// (6.4.4: MPI_Comm_set_info, _get_info, MPI_Comm_dup_with_info).
//
// An info object keeps its entries in the order their keys were first set, which is the order
// MPI_Info_get_nthkey numbers them in. Like every MPI call but a few, these may be made only
// between MPI_Init and MPI_Finalize (MPI-3.1 8.7; MPI-4 allows them at any time). Their errors
// go to MPI_COMM_WORLD's error handler (an info object has none, MPI-3.1 8.3); the
// communicator calls' to the communicator's.
#include "mpi_internal.h"

#include "runtime.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <unordered_set>

#include <sys/utsname.h>

extern "C" {
weft_info weft_mpi_info_env = [] {
    weft_info i;
    i.predefined = true;
    return i;
}();
} // extern "C"

namespace weft::mpi {

namespace {

// The info objects made and not freed yet, so that a freed or stray handle is refused.
std::unordered_set<const weft_info *> live_infos;

// By address alone: a freed handle is never read.
bool valid_info(MPI_Info info) { return info == &weft_mpi_info_env || live_infos.count(info); }

weft_info *new_info(InfoEntries entries)
{
    auto *i = new weft_info;
    i->entries = std::move(entries);
    live_infos.insert(i);
    return i;
}

int check_info(MPI_Info info, const char *fn)
{
    if (int rc = check_state(fn); rc != MPI_SUCCESS)
        return rc;
    if (!valid_info(info))
        return raise(nullptr, MPI_ERR_INFO, fn,
                     info ? "invalid info object (freed?)" : "info is MPI_INFO_NULL");
    return MPI_SUCCESS;
}

// MPI_INFO_ENV may be read and duplicated, not changed or freed.
int check_writable(MPI_Info info, const char *fn)
{
    if (int rc = check_info(info, fn); rc != MPI_SUCCESS)
        return rc;
    if (info->predefined)
        return raise(nullptr, MPI_ERR_INFO, fn, "MPI_INFO_ENV cannot be changed or freed");
    return MPI_SUCCESS;
}

int check_key(const char *key, const char *fn)
{
    if (!key)
        return raise(nullptr, MPI_ERR_INFO_KEY, fn, "key is NULL");
    const size_t len = strnlen(key, MPI_MAX_INFO_KEY + 1);
    if (len == 0)
        return raise(nullptr, MPI_ERR_INFO_KEY, fn, "the key is empty");
    if (len > MPI_MAX_INFO_KEY)
        return raise(nullptr, MPI_ERR_INFO_KEY, fn,
                     "the key is longer than MPI_MAX_INFO_KEY (" +
                         std::to_string(MPI_MAX_INFO_KEY) + ") characters");
    return MPI_SUCCESS;
}

InfoEntries::iterator find_key(InfoEntries &entries, const char *key)
{
    return std::find_if(entries.begin(), entries.end(),
                        [&](const auto &e) { return e.first == key; });
}

void set_entry(InfoEntries &entries, const std::string &key, const std::string &value)
{
    auto it = find_key(entries, key.c_str());
    if (it != entries.end())
        it->second = value;
    else
        entries.emplace_back(key, value);
}

// This process's command line: the program, and its arguments joined by spaces.
void command_line(std::string &command, std::string &args)
{
    FILE *f = std::fopen("/proc/self/cmdline", "r");
    if (!f)
        return;
    std::string all;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;)
        all.append(buf, n);
    std::fclose(f);
    size_t start = 0;
    for (bool first = true; start < all.size(); first = false) {
        size_t end = all.find('\0', start);
        if (end == std::string::npos)
            end = all.size();
        const std::string arg = all.substr(start, end - start);
        if (first)
            command = arg;
        else
            args += (args.empty() ? "" : " ") + arg;
        start = end + 1;
    }
}

const char *thread_level_name(int level)
{
    switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
    }
}

} // namespace

void info_env_init(int thread_level)
{
    std::string command, args;
    command_line(command, args);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    char wdir[PATH_MAX] = "";
    if (!getcwd(wdir, sizeof wdir))
        wdir[0] = '\0';
    utsname u{};
    uname(&u);
    // The keys of MPI-3.1 8.8 this process knows; "soft" and "file" it does not.
    const std::pair<const char *, std::string> keys[] = {
        {"command", command},
        {"argv", args},
        {"maxprocs", std::to_string(weft_runtime_world_size())},
        {"host", host},
        {"arch", u.machine},
        {"wdir", wdir},
        {"thread_level", thread_level_name(thread_level)},
    };
    InfoEntries &env = weft_mpi_info_env.entries;
    env.clear();
    for (const auto &[key, value] : keys)
        set_entry(env, key, value.substr(0, MPI_MAX_INFO_VAL));
}

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

WEFT_PROFILED(MPI_Info_create)
int PMPI_Info_create(MPI_Info *info)
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Info_create"); rc != MPI_SUCCESS)
        return rc;
    if (!info)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Info_create", "info is NULL");
    *info = new_info({});
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Info_dup)
int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    WEFT_API_GUARD;
    if (int rc = check_info(info, "MPI_Info_dup"); rc != MPI_SUCCESS)
        return rc;
    if (!newinfo)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Info_dup", "newinfo is NULL");
    *newinfo = new_info(info->entries);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Info_free)
int PMPI_Info_free(MPI_Info *info)
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Info_free"); rc != MPI_SUCCESS)
        return rc;
    if (!info)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Info_free", "info is NULL");
    if (int rc = check_writable(*info, "MPI_Info_free"); rc != MPI_SUCCESS)
        return rc;
    live_infos.erase(*info);
    handle_forget(HandleKind::info, *info);
    delete *info;
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Info_set)
int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Info_set";
    if (int rc = check_writable(info, fn); rc != MPI_SUCCESS)
        return rc;
    if (int rc = check_key(key, fn); rc != MPI_SUCCESS)
        return rc;
    if (!value)
        return raise(nullptr, MPI_ERR_INFO_VALUE, fn, "value is NULL");
    if (strnlen(value, MPI_MAX_INFO_VAL + 1) > MPI_MAX_INFO_VAL)
        return raise(nullptr, MPI_ERR_INFO_VALUE, fn,
                     "the value is longer than MPI_MAX_INFO_VAL (" +
                         std::to_string(MPI_MAX_INFO_VAL) + ") characters");
    set_entry(info->entries, key, value);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Info_delete)
int PMPI_Info_delete(MPI_Info info, const char *key)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Info_delete";
    if (int rc = check_writable(info, fn); rc != MPI_SUCCESS)
        return rc;
    if (int rc = check_key(key, fn); rc != MPI_SUCCESS)
        return rc;
    auto it = find_key(info->entries, key);
    if (it == info->entries.end())
        return raise(nullptr, MPI_ERR_INFO_NOKEY, fn, std::string("no key \"") + key + "\"");
    info->entries.erase(it);
    return MPI_SUCCESS;
}

// At most valuelen characters of the value and a terminating null: value has room for
// valuelen + 1 (MPI-3.1 9).
WEFT_PROFILED(MPI_Info_get)
int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Info_get";
    if (int rc = check_info(info, fn); rc != MPI_SUCCESS)
        return rc;
    if (int rc = check_key(key, fn); rc != MPI_SUCCESS)
        return rc;
    if (valuelen < 0)
        return raise(nullptr, MPI_ERR_ARG, fn, "negative valuelen " + std::to_string(valuelen));
    if (!value || !flag)
        return raise(nullptr, MPI_ERR_ARG, fn, value ? "flag is NULL" : "value is NULL");
    auto it = find_key(info->entries, key);
    *flag = it != info->entries.end();
    if (*flag) {
        const size_t n = std::min(it->second.size(), size_t(valuelen));
        std::memcpy(value, it->second.data(), n);
        value[n] = '\0';
    }
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Info_get_valuelen)
int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Info_get_valuelen";
    if (int rc = check_info(info, fn); rc != MPI_SUCCESS)
        return rc;
    if (int rc = check_key(key, fn); rc != MPI_SUCCESS)
        return rc;
    if (!valuelen || !flag)
        return raise(nullptr, MPI_ERR_ARG, fn, valuelen ? "flag is NULL" : "valuelen is NULL");
    auto it = find_key(info->entries, key);
    *flag = it != info->entries.end();
    if (*flag)
        *valuelen = int(it->second.size());
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Info_get_nkeys)
int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    WEFT_API_GUARD;
    if (int rc = check_info(info, "MPI_Info_get_nkeys"); rc != MPI_SUCCESS)
        return rc;
    if (!nkeys)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Info_get_nkeys", "nkeys is NULL");
    *nkeys = int(info->entries.size());
    return MPI_SUCCESS;
}

// key has room for MPI_MAX_INFO_KEY characters and a terminating null.
WEFT_PROFILED(MPI_Info_get_nthkey)
int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Info_get_nthkey";
    if (int rc = check_info(info, fn); rc != MPI_SUCCESS)
        return rc;
    if (n < 0 || size_t(n) >= info->entries.size())
        return raise(nullptr, MPI_ERR_ARG, fn,
                     "n " + std::to_string(n) + " is not in 0.." +
                         std::to_string(int(info->entries.size()) - 1));
    if (!key)
        return raise(nullptr, MPI_ERR_ARG, fn, "key is NULL");
    const std::string &k = info->entries[size_t(n)].first;
    std::memcpy(key, k.c_str(), k.size() + 1);
    return MPI_SUCCESS;
}

// ---- communicators' hints

WEFT_PROFILED(MPI_Comm_set_info)
int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Comm_set_info";
    if (int rc = check_state(fn); rc != MPI_SUCCESS)
        return rc;
    if (!valid_comm(comm))
        return raise(nullptr, MPI_ERR_COMM, fn, "invalid communicator");
    if (info != MPI_INFO_NULL && !valid_info(info))
        return raise(comm, MPI_ERR_INFO, fn, "invalid info object");
    // New values for the keys info has; the other hints stay.
    if (info)
        for (const auto &[key, value] : info->entries)
            set_entry(comm->hints, key, value);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Comm_get_info)
int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Comm_get_info";
    if (int rc = check_state(fn); rc != MPI_SUCCESS)
        return rc;
    if (!valid_comm(comm))
        return raise(nullptr, MPI_ERR_COMM, fn, "invalid communicator");
    if (!info_used)
        return raise(comm, MPI_ERR_ARG, fn, "info_used is NULL");
    *info_used = new_info(comm->hints);
    return MPI_SUCCESS;
}

// MPI_Comm_dup (which copies the attributes, and whatever else a communicator carries), with
// info's hints in place of comm's.
WEFT_PROFILED(MPI_Comm_dup_with_info)
int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Comm_dup_with_info";
    if (int rc = check_state(fn); rc != MPI_SUCCESS)
        return rc;
    if (!valid_comm(comm))
        return raise(nullptr, MPI_ERR_COMM, fn, "invalid communicator");
    if (info != MPI_INFO_NULL && !valid_info(info))
        return raise(comm, MPI_ERR_INFO, fn, "invalid info object");
    if (!newcomm)
        return raise(comm, MPI_ERR_ARG, fn, "newcomm is NULL");
    if (int rc = PMPI_Comm_dup(comm, newcomm); rc != MPI_SUCCESS)
        return rc;
    (*newcomm)->hints = info ? info->entries : InfoEntries{};
    return MPI_SUCCESS;
}

} // extern "C"
