/*
 * mpi-ext.h: Weft's extensions to MPI, for C and C++.
 *
 * User Level Failure Mitigation (ULFM, the MPI Forum's fault-tolerance proposal as Open MPI
 * ships it). Its error classes, MPIX_ERR_PROC_FAILED, MPIX_ERR_PROC_FAILED_PENDING and
 * MPIX_ERR_REVOKED, are defined in mpi.h, so that a program can test for them with #ifdef.
 */
#ifndef WEFT_MPI_EXT_H
#define WEFT_MPI_EXT_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Make every operation on comm, pending or future, fail with MPIX_ERR_REVOKED at every member
 * (except the ones below, which work on a revoked communicator). */
int MPIX_Comm_revoke(MPI_Comm comm);
int MPIX_Comm_is_revoked(MPI_Comm comm, int *flag);
/* A new communicator of the members of comm that have not failed. Collective. */
int MPIX_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm);
/* The bitwise AND of flag over the live members; fails with MPIX_ERR_PROC_FAILED if a member
 * failed and that failure was not acknowledged before the call. Collective. */
int MPIX_Comm_agree(MPI_Comm comm, int *flag);
int MPIX_Comm_iagree(MPI_Comm comm, int *flag, MPI_Request *request);
/* Acknowledge the failures known now: MPI_ANY_SOURCE receives work again, and agree no longer
 * reports them. */
int MPIX_Comm_failure_ack(MPI_Comm comm);
/* The group of the failed processes acknowledged by the last MPIX_Comm_failure_ack. */
int MPIX_Comm_failure_get_acked(MPI_Comm comm, MPI_Group *failedgrp);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* WEFT_MPI_EXT_H */
