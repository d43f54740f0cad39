#include "pmgr_protocol.h"

namespace weft::pmgr {

const char *opcode_name(int op)
{
    switch (op) {
    case op_open: return "PMGR_OPEN";
    case op_close: return "PMGR_CLOSE";
    case op_abort: return "PMGR_ABORT";
    case op_barrier: return "PMGR_BARRIER";
    case op_bcast: return "PMGR_BCAST";
    case op_gather: return "PMGR_GATHER";
    case op_scatter: return "PMGR_SCATTER";
    case op_allgather: return "PMGR_ALLGATHER";
    case op_alltoall: return "PMGR_ALLTOALL";
    default: return "unknown opcode";
    }
}

TreePosition tree_position(int rank, int nprocs)
{
    // Halve [low, high] until it is one rank; the rank at `low` adopts the
    // first rank of the upper half, whose subtree is that half.
    TreePosition t;
    int low = 0, high = nprocs - 1;
    while (high > low) {
        int mid = low + (high - low + 1) / 2;
        if (low == rank) {
            t.children.push_back(mid);
            t.child_incl.push_back(high - mid + 1);
        }
        if (mid == rank)
            t.parent = low;
        if (mid <= rank)
            low = mid;
        else
            high = mid - 1;
    }
    return t;
}

} // namespace weft::pmgr
