// Fault tolerance (ULFM, mpi-ext.h; docs/fault-tolerance.md): what each communicator knows of
// its failed members, receives from MPI_ANY_SOURCE stopped by a failure until it is
// acknowledged, and the acknowledgement and query calls.
//
// The runtime keeps the failures this process learnt, in order (weft::rt::failures()). A
// communicator's view of them is computed again only when that list grew (its epoch), so a
// wait that asks costs a comparison.
#include "mpi_internal.h"

#include "runtime.h"

#include <mpi-ext.h>

#include <algorithm>

namespace weft::mpi {

bool ft_enabled()
{
    static const bool on = weft_runtime_ft_enabled() != 0;
    return on;
}

const std::vector<int> &failed_members(weft_comm *comm)
{
    const std::vector<int> &all = weft::rt::failures();
    if (comm->ft_epoch == all.size())
        return comm->ft_failed;
    const std::vector<int> &peers = comm->peer_group()->ranks;
    for (size_t i = comm->ft_epoch; i < all.size(); ++i) {
        auto it = std::find(peers.begin(), peers.end(), all[i]);
        if (it != peers.end())
            comm->ft_failed.push_back(int(it - peers.begin()));
    }
    comm->ft_epoch = all.size();
    return comm->ft_failed;
}

bool any_source_blocked(weft_comm *comm) { return failed_members(comm).size() > comm->ft_acked; }

// A new group of the first n failed members of comm, in the order learnt (NULL when n is 0).
static weft_group *first_failed(weft_comm *comm, size_t n)
{
    if (n == 0)
        return nullptr;
    const std::vector<int> &failed = failed_members(comm);
    std::vector<int> world;
    for (size_t i = 0; i < n && i < failed.size(); ++i)
        world.push_back(comm->peer_group()->ranks[size_t(failed[i])]);
    return group_new(std::move(world));
}

weft_group *acked_group(weft_comm *comm) { return first_failed(comm, comm->ft_acked); }

int raise_revoked(weft_comm *comm, const char *fn)
{
    return raise(comm, MPIX_ERR_REVOKED, fn,
                 "the communicator was revoked (MPIX_Comm_revoke); shrink it to go on");
}

namespace {

// The group of the first n failed members of comm (MPI_GROUP_EMPTY itself when n is 0).
MPI_Group failed_group(weft_comm *comm, size_t n)
{
    MPI_Group g = first_failed(comm, n);
    return g ? g : MPI_GROUP_EMPTY;
}

int bad_ft_comm(MPI_Comm comm, const char *fn)
{
    if (int rc = check_state(fn); rc != MPI_SUCCESS)
        return rc;
    if (!valid_comm(comm))
        return raise(nullptr, MPI_ERR_COMM, fn, "invalid communicator");
    return MPI_SUCCESS;
}

} // namespace

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

WEFT_PROFILED(MPIX_Comm_revoke)
int PMPIX_Comm_revoke(MPI_Comm comm)
{
    WEFT_API_GUARD;
    if (int rc = bad_ft_comm(comm, "MPIX_Comm_revoke"); rc != MPI_SUCCESS)
        return rc;
    if (weft_status_t rc = pml()->pml_revoke_comm(pml(), comm, 0); rc != WEFT_SUCCESS)
        return raise_status(comm, rc, "MPIX_Comm_revoke");
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPIX_Comm_is_revoked)
int PMPIX_Comm_is_revoked(MPI_Comm comm, int *flag)
{
    WEFT_API_GUARD;
    if (int rc = bad_ft_comm(comm, "MPIX_Comm_is_revoked"); rc != MPI_SUCCESS)
        return rc;
    if (!flag)
        return raise(comm, MPI_ERR_ARG, "MPIX_Comm_is_revoked", "flag is NULL");
    weft_progress(); // notices from the other members
    *flag = weft_comm_is_revoked(comm);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPIX_Comm_failure_ack)
int PMPIX_Comm_failure_ack(MPI_Comm comm)
{
    WEFT_API_GUARD;
    if (int rc = bad_ft_comm(comm, "MPIX_Comm_failure_ack"); rc != MPI_SUCCESS)
        return rc;
    weft_progress(); // the failures learnt while the program computed
    comm->ft_acked = failed_members(comm).size();
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPIX_Comm_failure_get_acked)
int PMPIX_Comm_failure_get_acked(MPI_Comm comm, MPI_Group *failedgrp)
{
    WEFT_API_GUARD;
    if (int rc = bad_ft_comm(comm, "MPIX_Comm_failure_get_acked"); rc != MPI_SUCCESS)
        return rc;
    if (!failedgrp)
        return raise(comm, MPI_ERR_ARG, "MPIX_Comm_failure_get_acked", "failedgrp is NULL");
    *failedgrp = failed_group(comm, comm->ft_acked);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPIX_Comm_get_failed)
int PMPIX_Comm_get_failed(MPI_Comm comm, MPI_Group *failedgrp)
{
    WEFT_API_GUARD;
    if (int rc = bad_ft_comm(comm, "MPIX_Comm_get_failed"); rc != MPI_SUCCESS)
        return rc;
    if (!failedgrp)
        return raise(comm, MPI_ERR_ARG, "MPIX_Comm_get_failed", "failedgrp is NULL");
    weft_progress();
    *failedgrp = failed_group(comm, failed_members(comm).size());
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPIX_Comm_ack_failed)
int PMPIX_Comm_ack_failed(MPI_Comm comm, int num_to_ack, int *num_acked)
{
    WEFT_API_GUARD;
    if (int rc = bad_ft_comm(comm, "MPIX_Comm_ack_failed"); rc != MPI_SUCCESS)
        return rc;
    if (num_to_ack < 0 || !num_acked)
        return raise(comm, MPI_ERR_ARG, "MPIX_Comm_ack_failed",
                     num_acked ? "num_to_ack is negative" : "num_acked is NULL");
    weft_progress();
    const size_t known = failed_members(comm).size();
    comm->ft_acked = std::max(comm->ft_acked, std::min(size_t(num_to_ack), known));
    *num_acked = int(comm->ft_acked);
    return MPI_SUCCESS;
}

} // extern "C"
