/*
 * mpi-ext.h: Weft's extensions to MPI, for C and C++.
 *
 * User Level Failure Mitigation (ULFM, the MPI Forum's fault-tolerance proposal as Open MPI
 * ships it; docs/fault-tolerance.md says what works). Its error classes, MPIX_ERR_PROC_FAILED,
 * MPIX_ERR_PROC_FAILED_PENDING and MPIX_ERR_REVOKED, are defined in mpi.h, so that a program can
 * test for them with #ifdef. Run with mpirun --with-ft ulfm. Every function declared here is
 * checked to link (test/integration/mpi_links).
 */
#ifndef WEFT_MPI_EXT_H
#define WEFT_MPI_EXT_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Feature macros: the fault-tolerance extension is here. OMPI_HAVE_MPI_EXT_FTMPI is the name
 * programs written for Open MPI's ULFM test, so that their fault-tolerant path compiles here. */
#define WEFT_HAVE_MPI_EXT_FTMPI 1
#define OMPI_HAVE_MPI_EXT_FTMPI 1

/* Attribute of MPI_COMM_WORLD (MPI_Comm_get_attr): *(int *)value is 1 when fault tolerance is on
 * for the job (mpirun --with-ft ulfm, or mpi_ft_enable), else 0. */
#define MPIX_FT 7

/* Revoke comm at every member (ULFM): pending and later operations on it, at every member, end
 * with MPIX_ERR_REVOKED, except MPIX_Comm_agree, _iagree, _shrink, _ishrink, _revoke and the
 * failure queries; messages already matched are delivered. Local: returns at once; the other
 * members learn of it as they progress. MPIX_Comm_is_revoked says whether comm is revoked. */
int MPIX_Comm_revoke(MPI_Comm comm);
int MPIX_Comm_is_revoked(MPI_Comm comm, int *flag);

/* A new communicator of comm's members that have not failed, in their order in comm, the same
 * at every one of them, with comm's error handler. Collective over the survivors; completes
 * when members fail before or during it, and on a revoked comm. Intracommunicators. */
int MPIX_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm);
/* Non-blocking MPIX_Comm_shrink: *newcomm is set when *request completes. */
int MPIX_Comm_ishrink(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request);

/* Failure acknowledgement and queries (ULFM). MPIX_Comm_failure_ack acknowledges every failure of
 * a member of comm this process knows of, which lets receives from MPI_ANY_SOURCE on comm go on
 * again; MPIX_Comm_failure_get_acked gives those acknowledged, MPIX_Comm_get_failed every one
 * known (as MPI_GROUP_EMPTY itself when there is none); MPIX_Comm_ack_failed acknowledges the
 * first num_to_ack of MPIX_Comm_get_failed's group and gives how many are acknowledged. Local. */
int MPIX_Comm_failure_ack(MPI_Comm comm);
int MPIX_Comm_failure_get_acked(MPI_Comm comm, MPI_Group *failedgrp);
int MPIX_Comm_get_failed(MPI_Comm comm, MPI_Group *failedgrp);
int MPIX_Comm_ack_failed(MPI_Comm comm, int num_to_ack, int *num_acked);

/* *flag becomes the bitwise AND of flag over the members of comm that did not fail, the same at
 * every member that returns, with the same error: MPIX_ERR_PROC_FAILED while some failure agreed
 * is not acknowledged (MPIX_Comm_failure_ack) by every member, else MPI_SUCCESS. Collective;
 * completes when members fail before or during it, and on a revoked comm. Fault tolerant with
 * fault tolerance on (coll/ftagree); without it, an allreduce (coll/base). */
int MPIX_Comm_agree(MPI_Comm comm, int *flag);
int MPIX_Comm_iagree(MPI_Comm comm, int *flag, MPI_Request *request);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* WEFT_MPI_EXT_H */
