/*
 * weft/runtime.h: what the runtime offers components, in C: the processes of
 * the job, the modex (each component publishes its addresses before the
 * exchange and reads its peers' after it), and the progress engine.
 *
 * Order at MPI init (framework/runtime): boot (rank, size, job id) -> every
 * BTL component's init (it calls weft_modex_send) -> the modex exchange ->
 * the procs exist (weft_runtime_proc) -> PML and BML add_procs (BTLs call
 * weft_modex_recv) -> MPI_Init returns. Everything here is callable from the
 * thread that initializes MPI; weft_progress and the proc accessors from any
 * thread that holds the progress lock (Weft provides MPI_THREAD_FUNNELED).
 */
#ifndef WEFT_RUNTIME_H
#define WEFT_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include <weft/status.h>
#include <weft/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* This process and the job. Valid from boot to finalize. */
int weft_runtime_world_rank(void);
int weft_runtime_world_size(void);
/* Rank among the processes of this host (0..local_size-1), and how many.
 * Known before the BTLs' init (the runtime exchanges host names first). */
int weft_runtime_local_rank(void);
int weft_runtime_local_size(void);
const char *weft_runtime_jobid(void);
/* "weft-<job id>" with every character a file name cannot take replaced: the start of the name
 * of every file a component makes for the job (shared-memory segments), which the launcher
 * removes when the job ends, whatever became of the process that made it. */
const char *weft_runtime_job_file_prefix(void);
/* Whether more processes of the job run on this host than it has cores: then
 * waiting processes must yield the CPU. */
int weft_runtime_oversubscribed(void);

/* The process of world rank `rank` (NULL if out of range). Valid after the
 * modex exchange, until finalize. */
weft_proc_t *weft_runtime_proc(int rank);
int weft_proc_rank(const weft_proc_t *proc);
const char *weft_proc_hostname(const weft_proc_t *proc);
/* Same host as this process (shared memory can reach it). */
int weft_proc_is_local(const weft_proc_t *proc);

/* Where proc runs relative to this process (from hwloc): WEFT_LOCALITY_NODE if on this node,
 * plus a flag for each level that both processes' CPU bindings touch (an unbound process
 * touches every object of its node). 0 for a process on another node. */
#define WEFT_LOCALITY_NODE    0x01u
#define WEFT_LOCALITY_PACKAGE 0x02u
#define WEFT_LOCALITY_NUMA    0x04u
#define WEFT_LOCALITY_L3      0x08u
#define WEFT_LOCALITY_CORE    0x10u
uint32_t weft_proc_locality(const weft_proc_t *proc);
/* The locality flags as text, e.g. "node,package,numa,l3" (static storage). */
const char *weft_locality_string(uint32_t flags);
int weft_proc_is_self(const weft_proc_t *proc);

/* Publish `len` bytes under `key` (e.g. "btl.tcp") for every peer. Only
 * before the exchange; a key is published once. Copied. */
weft_status_t weft_modex_send(const char *key, const void *data, size_t len);
/* The bytes `proc` published under `key`: *data stays valid until finalize.
 * WEFT_ERR_NOT_FOUND if it published nothing under that key. */
weft_status_t weft_modex_recv(const char *key, const weft_proc_t *proc, const void **data,
                              size_t *len);

/* The progress engine: each registered function is called by weft_progress
 * and returns how many events it handled. Register from init only. */
typedef int (*weft_progress_fn_t)(void);
weft_status_t weft_progress_register(weft_progress_fn_t fn);
weft_status_t weft_progress_unregister(weft_progress_fn_t fn);
/* Call every progress function once; returns the events handled. */
int weft_progress(void);

/* Drive progress until done(arg) returns nonzero; done is asked first, so a condition that
 * already holds costs no progress call. Between progress calls that found nothing to do the
 * waiter yields the CPU: at once when the host is oversubscribed (the process waited for may
 * need this core), after a while of spinning otherwise. The one wait loop of the library:
 * waits that spin on their own would starve the others on an oversubscribed host. done must
 * turn true when a peer fails too (a failed request completes in error). Blocking: yes.
 * Thread: the one that drives MPI. */
void weft_progress_wait(int (*done)(void *arg), void *arg);

/* End the whole job: message goes to the launcher, which prints it and ends every rank (without
 * a launcher, to this process's error output), and the process exits with code. For an error that
 * leaves the job unable to go on correctly (a PML that cannot deliver a message any more).
 * Blocking: does not return. Thread: any. */
void weft_runtime_abort(int code, const char *message) __attribute__((noreturn));

/* The job's secret (docs/security.md), for components that authenticate their connections:
 * WEFT_JOB_SECRET_SIZE bytes, the same in every process of the job, valid from boot to finalize.
 * Prefer weft_runtime_job_mac, which keeps the key inside the runtime. Thread: any. */
#define WEFT_JOB_SECRET_SIZE 32
#define WEFT_JOB_MAC_SIZE    32
const unsigned char *weft_runtime_job_secret(size_t *len);
/* Where it came from: "launcher" (mpirun's WEFT_JOB_SECRET), "pmi" (rank 0's, through the PMI
 * KVS), "singleton" (a job of one), or "derived" (from the job id: a classic PMGR launcher
 * without a secret; tells jobs apart but proves nothing). Static storage. */
const char *weft_runtime_job_secret_source(void);
/* HMAC-SHA-256 of data[0..len-1] keyed with the job's secret, into mac. Blocking: no. */
void weft_runtime_job_mac(const void *data, size_t len, unsigned char mac[WEFT_JOB_MAC_SIZE]);

/* Files this process made and removes itself (shared-memory segments). Registered here, they are
 * removed as well when the process leaves without exit() running destructors
 * (weft_runtime_abort, a lost mpirun). add 1 registers path (copied; at most
 * WEFT_RUNTIME_OWN_FILES_MAX, each shorter than 512 bytes: more are not registered), add 0
 * forgets it. Blocking: no. Thread: any. */
#define WEFT_RUNTIME_OWN_FILES_MAX 16
void weft_runtime_own_file(const char *path, int add);
/* Remove every registered file now; for a way out that runs no destructors. Thread: any. */
void weft_runtime_remove_own_files(void);

/*
 * Process failures (ULFM; mpi_ft_enable). The runtime owns each process's failed state: it
 * learns a failure from the launcher's notice (read by weft_progress, so a rank learns while it
 * waits in any call, and at its next call when it computes), or from a component that saw the
 * peer die in-band (weft_runtime_report_failure). Each failed process is announced once, from
 * progress, to the functions registered here (the MPI layer, the PML). Without fault tolerance
 * a failure ends the job (the launcher does it) and none of this is used.
 */
/* Whether fault tolerance is on for this job (mpi_ft_enable). Valid after boot. */
int weft_runtime_ft_enabled(void);
/* Whether MPI_THREAD_MULTIPLE is on: several threads call MPI, one at a time under the
 * library's lock, which a wait (weft_progress_wait) lets go between progress calls. So a
 * component's state can change under a wait; state it must keep in order (a sequence number
 * it took) it must not hold across one. */
int weft_runtime_threads(void);
/* Whether world rank `rank` is known to have failed. Thread: any. */
int weft_runtime_proc_failed(int rank);
/* How many process failures this process has learnt; a waiter that sees it change re-checks
 * what it waits for. Thread: any. */
uint64_t weft_runtime_failure_epoch(void);
/* A component saw world rank `rank` fail (a connection reset by a dead peer, a shared-memory
 * peer gone). With fault tolerance: the process is marked failed (once) and announced at the
 * next progress call. Without: WEFT_ERR_NOT_SUPPORTED, nothing changes (the caller handles the
 * error as it always did). Blocking: no. Thread: the one that drives MPI. */
weft_status_t weft_runtime_report_failure(int rank, const char *why);
/* For a boot component whose own thread reads the launcher's events (boot/pmgr's watchdog):
 * "events are waiting for boot_poll_event". Once a component has called it, progress asks
 * boot_poll_event only after a call (so the fault-free progress loop costs one load); a
 * component that never calls it is asked at every progress call. Thread: any. */
void weft_runtime_boot_events_ready(void);
/* Called once for each failed process, from progress, in the order they were learnt. Register
 * from init; at most 8 functions. */
typedef void (*weft_failure_fn_t)(int rank, void *arg);
weft_status_t weft_runtime_failure_register(weft_failure_fn_t fn, void *arg);

#ifdef __cplusplus
}

namespace weft {
/* weft_progress_wait with any C++ callable. */
template <class Pred> void progress_wait(Pred pred)
{
    if (pred())
        return;
    weft_progress_wait([](void *p) -> int { return (*static_cast<Pred *>(p))() ? 1 : 0; }, &pred);
}
} // namespace weft
#endif

#endif /* WEFT_RUNTIME_H */
