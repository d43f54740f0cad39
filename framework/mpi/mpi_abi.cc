// The functions of weft/comm.h that are not inline (groups). They are in libweft, not libmpi,
// although they read framework/mpi's objects: components are loaded into programs that do not
// link libmpi (weft_info), so a component may not depend on libmpi's symbols.
#include "mpi_objects.h"

#include <weft/comm.h>
#include <weft/runtime.h>

extern "C" {

int weft_group_size(const weft_group_t *group) { return group ? int(group->ranks.size()) : 0; }

int weft_group_rank(const weft_group_t *group)
{
    // A group that does not hold this process says MPI_UNDEFINED.
    return group && group->my_rank >= 0 ? group->my_rank : -1;
}

int weft_group_world_rank(const weft_group_t *group, int rank)
{
    if (!group || rank < 0 || size_t(rank) >= group->ranks.size())
        return -1;
    return group->ranks[size_t(rank)];
}

weft_group_t *weft_group_new(const int *world_ranks, int n)
{
    if (n < 0 || (n > 0 && !world_ranks))
        return nullptr;
    auto *g = new weft_group;
    g->ranks.assign(world_ranks, world_ranks + n);
    g->my_rank = -32766; // MPI_UNDEFINED (mpi.h is libmpi's)
    const int me = weft_runtime_world_rank();
    for (int i = 0; i < n; ++i)
        if (world_ranks[i] == me) {
            g->my_rank = i;
            break;
        }
    return g;
}

} // extern "C"
