// Groups: ordered sets of world ranks, reference counted. The predefined
// MPI_GROUP_EMPTY stands for every empty result, so that comparing results
// with it works as users expect.
#include "mpi_internal.h"

#include <weft/runtime.h>

#include <string>
#include <unordered_map>
#include <unordered_set>

namespace weft::mpi {

weft_group *group_new(std::vector<int> world_ranks)
{
    // Through MPI_COMM_WORLD once it is set up: the same answer as the
    // runtime's, and the one a test that sets up MPI_COMM_WORLD itself gets.
    const int me =
        weft_mpi_comm_world.size > 0 ? weft_mpi_comm_world.rank : weft_runtime_world_rank();
    auto *g = new weft_group;
    g->ranks = std::move(world_ranks);
    g->my_rank = MPI_UNDEFINED;
    for (size_t i = 0; i < g->ranks.size(); ++i)
        if (g->ranks[i] == me) {
            g->my_rank = int(i);
            break;
        }
    return g;
}

void group_retain(weft_group *g)
{
    if (g && !g->predefined)
        ++g->refs;
}

void group_release(weft_group *g)
{
    if (g && !g->predefined && --g->refs == 0) {
        handle_forget(HandleKind::group, g);
        delete g;
    }
}

} // namespace weft::mpi

namespace {

using weft::mpi::raise;

int size_of(const weft_group *g) { return int(g->ranks.size()); }

// The handle for a computed group.
MPI_Group make_group(std::vector<int> world_ranks)
{
    if (world_ranks.empty())
        return MPI_GROUP_EMPTY;
    return weft::mpi::group_new(std::move(world_ranks));
}

// "not in 0..3", to follow a rank that is not one of the group's.
std::string not_in(const weft_group *g)
{
    return g->ranks.empty() ? std::string("not in the group (it is empty)")
                            : "not in 0.." + std::to_string(size_of(g) - 1);
}

// The common checks of a call on one group with an output pointer.
int check_args(const char *fn, MPI_Group group, const void *out, const char *out_name)
{
    if (int rc = weft::mpi::check_state(fn); rc != MPI_SUCCESS)
        return rc;
    if (!group)
        return raise(nullptr, MPI_ERR_GROUP, fn, "the group is MPI_GROUP_NULL");
    if (!out)
        return raise(nullptr, MPI_ERR_ARG, fn, std::string(out_name) + " is NULL");
    return MPI_SUCCESS;
}

int check_pair(const char *fn, MPI_Group group1, MPI_Group group2, const void *out,
               const char *out_name)
{
    if (int rc = check_args(fn, group1, out, out_name); rc != MPI_SUCCESS)
        return rc;
    if (!group2)
        return raise(nullptr, MPI_ERR_GROUP, fn, "group2 is MPI_GROUP_NULL");
    return MPI_SUCCESS;
}

// Checks `ranks` (n of them) as a list of distinct ranks of `group`; on
// success `picked` marks them.
int check_rank_list(const char *fn, MPI_Group group, int n, const int ranks[],
                    std::vector<bool> &picked)
{
    if (n < 0)
        return raise(nullptr, MPI_ERR_ARG, fn, "n is " + std::to_string(n));
    if (n > 0 && !ranks)
        return raise(nullptr, MPI_ERR_ARG, fn, "ranks is NULL");
    picked.assign(group->ranks.size(), false);
    for (int i = 0; i < n; ++i) {
        const int r = ranks[i];
        if (r < 0 || r >= size_of(group))
            return raise(nullptr, MPI_ERR_RANK, fn,
                         "ranks[" + std::to_string(i) + "] is " + std::to_string(r) + ", " +
                             not_in(group));
        if (picked[size_t(r)])
            return raise(nullptr, MPI_ERR_RANK, fn,
                         "rank " + std::to_string(r) + " appears twice (ranks[" +
                             std::to_string(i) + "])");
        picked[size_t(r)] = true;
    }
    return MPI_SUCCESS;
}

// Expands (first, last, stride) triplets to the ranks they name, in order:
// first, first + stride, ... while not past last (MPI-3.1 6.3.2). A triplet
// whose stride points away from last names just nothing.
int expand_ranges(const char *fn, MPI_Group group, int n, int ranges[][3], std::vector<int> &out,
                  std::vector<bool> &picked)
{
    if (n < 0)
        return raise(nullptr, MPI_ERR_ARG, fn, "n is " + std::to_string(n));
    if (n > 0 && !ranges)
        return raise(nullptr, MPI_ERR_ARG, fn, "ranges is NULL");
    const long long size = size_of(group);
    picked.assign(group->ranks.size(), false);
    out.clear();
    for (int i = 0; i < n; ++i) {
        const long long first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        const std::string which = "ranges[" + std::to_string(i) + "] = (" + std::to_string(first) +
                                  ", " + std::to_string(last) + ", " + std::to_string(stride) + ")";
        if (stride == 0)
            return raise(nullptr, MPI_ERR_ARG, fn, which + ": the stride is 0");
        if (first < 0 || first >= size || last < 0 || last >= size)
            return raise(nullptr, MPI_ERR_RANK, fn, which + ": " + not_in(group));
        for (long long r = first; stride > 0 ? r <= last : r >= last; r += stride) {
            if (picked[size_t(r)])
                return raise(nullptr, MPI_ERR_RANK, fn,
                             which + ": rank " + std::to_string(r) + " is named twice");
            picked[size_t(r)] = true;
            out.push_back(int(r));
        }
    }
    return MPI_SUCCESS;
}

} // namespace

extern "C" {

WEFT_PROFILED(MPI_Group_size)
int PMPI_Group_size(MPI_Group group, int *size)
{
    WEFT_API_GUARD;
    if (int rc = check_args("MPI_Group_size", group, size, "size"); rc != MPI_SUCCESS)
        return rc;
    *size = size_of(group);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Group_rank)
int PMPI_Group_rank(MPI_Group group, int *rank)
{
    WEFT_API_GUARD;
    if (int rc = check_args("MPI_Group_rank", group, rank, "rank"); rc != MPI_SUCCESS)
        return rc;
    *rank = group->my_rank;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Group_incl)
int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Group_incl";
    if (int rc = check_args(fn, group, newgroup, "newgroup"); rc != MPI_SUCCESS)
        return rc;
    std::vector<bool> picked;
    if (int rc = check_rank_list(fn, group, n, ranks, picked); rc != MPI_SUCCESS)
        return rc;
    std::vector<int> world(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
        world[size_t(i)] = group->ranks[size_t(ranks[i])];
    *newgroup = make_group(std::move(world));
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Group_excl)
int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Group_excl";
    if (int rc = check_args(fn, group, newgroup, "newgroup"); rc != MPI_SUCCESS)
        return rc;
    std::vector<bool> excluded;
    if (int rc = check_rank_list(fn, group, n, ranks, excluded); rc != MPI_SUCCESS)
        return rc;
    std::vector<int> world;
    world.reserve(group->ranks.size() - size_t(n));
    for (size_t r = 0; r < group->ranks.size(); ++r)
        if (!excluded[r])
            world.push_back(group->ranks[r]);
    *newgroup = make_group(std::move(world));
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Group_range_incl)
int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Group_range_incl";
    if (int rc = check_args(fn, group, newgroup, "newgroup"); rc != MPI_SUCCESS)
        return rc;
    std::vector<int> ranks;
    std::vector<bool> picked;
    if (int rc = expand_ranges(fn, group, n, ranges, ranks, picked); rc != MPI_SUCCESS)
        return rc;
    std::vector<int> world(ranks.size());
    for (size_t i = 0; i < ranks.size(); ++i)
        world[i] = group->ranks[size_t(ranks[i])];
    *newgroup = make_group(std::move(world));
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Group_range_excl)
int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Group_range_excl";
    if (int rc = check_args(fn, group, newgroup, "newgroup"); rc != MPI_SUCCESS)
        return rc;
    std::vector<int> ranks;
    std::vector<bool> excluded;
    if (int rc = expand_ranges(fn, group, n, ranges, ranks, excluded); rc != MPI_SUCCESS)
        return rc;
    std::vector<int> world;
    world.reserve(group->ranks.size() - ranks.size());
    for (size_t r = 0; r < group->ranks.size(); ++r)
        if (!excluded[r])
            world.push_back(group->ranks[r]);
    *newgroup = make_group(std::move(world));
    return MPI_SUCCESS;
}

// Union: group1's processes in group1's order, then group2's others in
// group2's order. Intersection and difference keep group1's order (MPI-3.1 6.3.2).
WEFT_PROFILED(MPI_Group_union)
int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    WEFT_API_GUARD;
    if (int rc = check_pair("MPI_Group_union", group1, group2, newgroup, "newgroup");
        rc != MPI_SUCCESS)
        return rc;
    std::vector<int> world = group1->ranks;
    std::unordered_set<int> seen(group1->ranks.begin(), group1->ranks.end());
    for (int w : group2->ranks)
        if (!seen.count(w))
            world.push_back(w);
    *newgroup = make_group(std::move(world));
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Group_intersection)
int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    WEFT_API_GUARD;
    if (int rc = check_pair("MPI_Group_intersection", group1, group2, newgroup, "newgroup");
        rc != MPI_SUCCESS)
        return rc;
    std::unordered_set<int> in2(group2->ranks.begin(), group2->ranks.end());
    std::vector<int> world;
    for (int w : group1->ranks)
        if (in2.count(w))
            world.push_back(w);
    *newgroup = make_group(std::move(world));
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Group_difference)
int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    WEFT_API_GUARD;
    if (int rc = check_pair("MPI_Group_difference", group1, group2, newgroup, "newgroup");
        rc != MPI_SUCCESS)
        return rc;
    std::unordered_set<int> in2(group2->ranks.begin(), group2->ranks.end());
    std::vector<int> world;
    for (int w : group1->ranks)
        if (!in2.count(w))
            world.push_back(w);
    *newgroup = make_group(std::move(world));
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Group_translate_ranks)
int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                               int ranks2[])
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Group_translate_ranks";
    if (int rc = weft::mpi::check_state(fn); rc != MPI_SUCCESS)
        return rc;
    if (!group1 || !group2)
        return raise(nullptr, MPI_ERR_GROUP, fn,
                     std::string(!group1 ? "group1" : "group2") + " is MPI_GROUP_NULL");
    if (n < 0)
        return raise(nullptr, MPI_ERR_ARG, fn, "n is " + std::to_string(n));
    if (n > 0 && (!ranks1 || !ranks2))
        return raise(nullptr, MPI_ERR_ARG, fn,
                     std::string(!ranks1 ? "ranks1" : "ranks2") + " is NULL");
    for (int i = 0; i < n; ++i) {
        const int r = ranks1[i];
        if (r != MPI_PROC_NULL && (r < 0 || r >= size_of(group1)))
            return raise(nullptr, MPI_ERR_RANK, fn,
                         "ranks1[" + std::to_string(i) + "] is " + std::to_string(r) + ", " +
                             not_in(group1) + " nor MPI_PROC_NULL");
    }
    std::unordered_map<int, int> rank_in2;
    rank_in2.reserve(group2->ranks.size());
    for (size_t j = 0; j < group2->ranks.size(); ++j)
        rank_in2.emplace(group2->ranks[j], int(j));
    for (int i = 0; i < n; ++i) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        auto it = rank_in2.find(group1->ranks[size_t(ranks1[i])]);
        ranks2[i] = it == rank_in2.end() ? MPI_UNDEFINED : it->second;
    }
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Group_compare)
int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    WEFT_API_GUARD;
    if (int rc = check_pair("MPI_Group_compare", group1, group2, result, "result");
        rc != MPI_SUCCESS)
        return rc;
    if (group1->ranks == group2->ranks) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (group1->ranks.size() != group2->ranks.size()) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    // A group's ranks are distinct, so equal sizes and inclusion make equal sets.
    std::unordered_set<int> in1(group1->ranks.begin(), group1->ranks.end());
    *result = MPI_SIMILAR;
    for (int w : group2->ranks)
        if (!in1.count(w)) {
            *result = MPI_UNEQUAL;
            break;
        }
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Group_free)
int PMPI_Group_free(MPI_Group *group)
{
    WEFT_API_GUARD;
    if (int rc = weft::mpi::check_state("MPI_Group_free"); rc != MPI_SUCCESS)
        return rc;
    if (!group)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Group_free", "group is NULL");
    if (!*group)
        return raise(nullptr, MPI_ERR_GROUP, "MPI_Group_free", "the group is MPI_GROUP_NULL");
    // MPI_GROUP_EMPTY may be freed like any result it stands for; releasing a
    // predefined group does nothing.
    weft::mpi::group_release(*group);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

} // extern "C"
