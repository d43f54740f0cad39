/*
 * weft/pmgr_collective_client.h: the classic PMGR_COLLECTIVE client API
 * (protocol 8), as MVAPICH-style launchers and programs expect it.
 *
 * Call order: pmgr_init, pmgr_open, any collectives, pmgr_close,
 * pmgr_finalize. Every call returns PMGR_SUCCESS (0) on success.
 *
 * Weft differs from the reference client in one way, on purpose: where the
 * reference calls exit(1) on bad input (a missing MPIRUN_* variable, mpirun
 * unreachable after the last retry, a broken tree link), Weft prints the same
 * kind of message and returns PMGR_FAILURE, so that the caller decides.
 */
#ifndef WEFT_PMGR_COLLECTIVE_CLIENT_H
#define WEFT_PMGR_COLLECTIVE_CLIENT_H

#ifdef __cplusplus
extern "C" {
#endif

#define PMGR_COLLECTIVE 8
#define PMGR_SUCCESS    0
#define PMGR_FAILURE    1

/* Read the MPIRUN_* environment. *np_p, *me_p, *id_p receive the job size,
 * this task's rank and the job id. Without MPIRUN_RANK: a singleton (rank 0
 * of 1). argc/argv are not used. */
int pmgr_init(int *argc_p, char ***argv_p, int *np_p, int *me_p, int *id_p);
/* Connect to mpirun (jobs of 2 or more) and build the tree. */
int pmgr_open(void);
int pmgr_barrier(void);
/* Every buffer is the caller's; sizes are bytes per rank. */
int pmgr_bcast(void *buf, int sendcount, int root);
int pmgr_gather(void *sendbuf, int sendcount, void *recvbuf, int root);
int pmgr_scatter(void *sendbuf, int sendcount, void *recvbuf, int root);
int pmgr_allgather(void *sendbuf, int sendcount, void *recvbuf);
int pmgr_alltoall(void *sendbuf, int sendcount, void *recvbuf);
/* Gather every rank's string: (*recvstr)[i] is rank i's. The caller frees
 * *recvstr and *recvbuf with free(). */
int pmgr_allgatherstr(char *sendstr, char ***recvstr, char **recvbuf);
/* The largest of every rank's *sendint, into *recvint. */
int pmgr_allreducemaxint(int *sendint, int *recvint);
/* Ask mpirun to end the job, printing the message. Returns; the caller is
 * expected to exit. */
int pmgr_abort(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int pmgr_close(void);
int pmgr_finalize(void);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_PMGR_COLLECTIVE_CLIENT_H */
