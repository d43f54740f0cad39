/*
 * boot/boot.h: the bootstrap (boot) framework ABI, version 1.0.
 *
 * A boot module connects a process to whatever launched it and gives the runtime what it needs
 * before any MPI transport exists: its rank, the job size and id, a few slow collectives over
 * the launcher (barrier, allgather for the modex, bcast), a way to abort the job, and the
 * launcher's notices of process failures. Components: pmgr (PMGR_COLLECTIVE protocol 8 with
 * Weft's mpirun), pmi (PMI-1/PMI-2 wire, for Slurm and hydra), singleton (no launcher: one rank).
 *
 * Lifecycle, and who calls what:
 *
 *   1. register, open, query   boot/base through the MCA repository (weft/mca.h), first thing
 *                              in MPI init; each component looks at its environment (MPIRUN_*,
 *                              PMI_*) and the highest priority wins.
 *   2. init                    boot/base calls the component's init(), which returns the one
 *                              module; NULL fails the selection (the next component is not
 *                              tried: query is where a component declines). The runtime does
 *                              steps 1 and 2 with weft_boot_select (below), which also fills
 *                              the optional operations the module left NULL.
 *   3. boot_init               the runtime, once: connects to the launcher, learns rank, size
 *                              and job id. boot_event_fd and boot_flags are valid from here on.
 *   4. use                     the runtime calls barrier/allgather/bcast during init (modex)
 *                              and finalize; with fault tolerance its progress (weft_progress)
 *                              calls poll_event (at every call, or when the module said events
 *                              wait: weft_runtime_boot_events_ready), turning each PROC_FAILED
 *                              event into the process-failure handling; the error paths call
 *                              abort.
 *   5. boot_finalize, close    at MPI finalize (the module frees itself), then boot/base closes
 *                              the component (weft_boot_close).
 *
 * Threading: see weft/module.h. The collectives are class "init": the runtime calls them one
 * at a time from the thread initializing or finalizing MPI. poll_event and abort are class
 * "any": the module serializes them with a collective in flight on the same connection.
 *
 * A component exports one symbol, mca_boot_<name>_component, of type weft_boot_component_t,
 * with mca.framework "boot" and framework_abi_major/minor WEFT_BOOT_ABI_MAJOR/MINOR. New
 * operations are appended to weft_boot_module_t (bumping WEFT_BOOT_ABI_MINOR); callers check
 * WEFT_MODULE_HAS_OP before calling any operation added after 1.0.
 */
#ifndef WEFT_BOOT_H
#define WEFT_BOOT_H

#include <stddef.h>
#include <stdint.h>

#include <weft/mca.h>
#include <weft/module.h>
#include <weft/status.h>
#include <weft/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_BOOT_ABI_MAJOR 1
#define WEFT_BOOT_ABI_MINOR 0

typedef struct weft_boot_module weft_boot_module_t;
typedef struct weft_boot_component weft_boot_component_t;

/* boot_flags. FAILURE_EVENTS: the launcher reports process failures as events. */
#define WEFT_BOOT_FLAG_FAILURE_EVENTS 0x0001u

/* Kinds of launcher events (weft_boot_event_t.kind). */
typedef enum weft_boot_event_kind {
    /* A process of the job failed: it died, was killed, or exited without finalizing MPI.
     * rank is its MPI_COMM_WORLD rank. */
    WEFT_BOOT_EVENT_PROC_FAILED = 1,
    /* The launcher is tearing the job down (FT off, or an abort); rank is the rank that asked,
     * or -1 for the launcher itself. The process will be killed shortly. */
    WEFT_BOOT_EVENT_JOB_ABORT = 2
} weft_boot_event_kind_t;

/* One launcher event. The caller sets struct_size; the module fills only the fields that fit,
 * so the struct can grow. */
typedef struct weft_boot_event {
    uint32_t struct_size; /* sizeof(weft_boot_event_t) as the caller was built */
    uint32_t kind;        /* weft_boot_event_kind_t */
    int32_t rank;         /* see the kind */
    int32_t exit_code;    /* PROC_FAILED: exit status if the process exited, else -1 */
    int32_t signal;       /* PROC_FAILED: the signal that killed it, else 0 */
    uint32_t reserved;    /* zero */
} weft_boot_event_t;

struct weft_boot_module {
    uint32_t struct_size; /* sizeof(weft_boot_module_t) as the component was built */
    uint32_t boot_flags;  /* WEFT_BOOT_FLAG_*; valid after boot_init */
    /* A descriptor that becomes readable when an event may be pending, for the progress
     * thread's poll(); -1 if the module has no such descriptor (then poll boot_poll_event
     * now and then). Owned by the module; valid after boot_init until boot_finalize. */
    int boot_event_fd;
    uint32_t reserved; /* zero */

    /*
     * Connect to the launcher. Sets *rank (0 <= *rank < *size), *size, and the job id as a
     * NUL-terminated string in jobid[0..jobid_len-1] (the caller's buffer). Blocking: yes (the
     * connect may retry, bounded by the component's timeouts). Returns WEFT_SUCCESS,
     * WEFT_ERR_TRUNCATE (jobid_len too small; nothing else is set), WEFT_ERR_TIMEOUT,
     * WEFT_ERR_UNREACH (no launcher), WEFT_ERR_BAD_PARAM (bad environment, with a message
     * naming the variable). Thread: init.
     */
    weft_status_t (*boot_init)(weft_boot_module_t *module, int *rank, int *size, char *jobid,
                               size_t jobid_len);

    /* Wait until every rank has called boot_barrier. Blocking: yes. Returns WEFT_SUCCESS,
     * WEFT_ERR_TIMEOUT, WEFT_ERR_UNREACH (launcher lost), WEFT_ERR_PROC_FAILED (a rank died
     * before joining). Thread: init. */
    weft_status_t (*boot_barrier)(weft_boot_module_t *module);

    /* Gather len_per_rank bytes from every rank into out, in rank order (out holds
     * size * len_per_rank bytes; both buffers are the caller's). Blocking: yes. Returns as
     * boot_barrier, and WEFT_ERR_BAD_PARAM if ranks disagree on len_per_rank. Thread: init. */
    weft_status_t (*boot_allgather)(weft_boot_module_t *module, const void *in, void *out,
                                    size_t len_per_rank);

    /* Copy len bytes of buf at root into buf at every rank (the caller's buffer). Blocking: yes.
     * Returns as boot_barrier. Thread: init. */
    weft_status_t (*boot_bcast)(weft_boot_module_t *module, void *buf, size_t len, int root);

    /* Ask the launcher to abort the whole job with exit code `code`, printing msg (may be
     * NULL; copied). Returns once the request is sent; the caller then exits with `code`.
     * Blocking: local (bounded write to the launcher). Returns WEFT_SUCCESS, WEFT_ERR_UNREACH
     * (no launcher to tell). Thread: any. */
    weft_status_t (*boot_abort)(weft_boot_module_t *module, int code, const char *msg);

    /* Tell the launcher this process finalized cleanly (so that its exit is not a failure),
     * disconnect, free the module. Blocking: yes (bounded). Returns WEFT_SUCCESS or an error
     * (the module is gone either way). Thread: init. */
    weft_status_t (*boot_finalize)(weft_boot_module_t *module);

    /* Take the next pending launcher event, if any, into *ev (ev->struct_size set by the
     * caller). Events come in the order the launcher sent them; each is returned once.
     * Blocking: no. Returns WEFT_SUCCESS (an event was written), WEFT_ERR_NOT_FOUND (none
     * pending), WEFT_ERR_UNREACH (launcher lost), WEFT_ERR_NOT_SUPPORTED (module without
     * WEFT_BOOT_FLAG_FAILURE_EVENTS). Thread: any. */
    weft_status_t (*boot_poll_event)(weft_boot_module_t *module, weft_boot_event_t *ev);

    /* Operations added in 1.1 and later go here, at the end. */
};

struct weft_boot_component {
    weft_mca_component_t mca; /* mca.struct_size = sizeof(weft_boot_component_t) */

    /* Return the module, not yet connected (boot_init connects). NULL refuses. Blocking: local.
     * Thread: init. */
    weft_boot_module_t *(*init)(void);
};

/*
 * Defined in boot/base, exported by libweft (components outside the tree link it: weft-mca.pc).
 *
 * Typed defaults for the optional operations (weft/module.h): a component that lacks one
 * points the operation at the default, or leaves it NULL and weft_boot_select fills it in, so
 * that the core never tests for NULL. boot_init, boot_barrier, boot_allgather, boot_bcast and
 * boot_finalize have no default: a module without one of them is refused.
 */

/* boot_poll_event of a module without WEFT_BOOT_FLAG_FAILURE_EVENTS: returns
 * WEFT_ERR_NOT_SUPPORTED, touches nothing. Blocking: no. Thread: any. */
weft_status_t weft_boot_default_poll_event(weft_boot_module_t *module, weft_boot_event_t *ev);

/* boot_abort of a module with no launcher to tell: prints "the job aborted with code <code>"
 * and msg (if not NULL) as an error on stderr, since nobody else will, and returns
 * WEFT_ERR_UNREACH (no launcher to tell); the caller then exits with code as always.
 * Blocking: no. Thread: any. */
weft_status_t weft_boot_default_abort(weft_boot_module_t *module, int code, const char *msg);

/*
 * For the core (the runtime), not for components: the boot framework as a whole.
 *
 * Open the boot framework, select one component (the highest priority that accepts, or what
 * --mca boot names) and return its module, not yet connected (call boot_init), with its unset
 * optional operations filled with the defaults above. Errors are printed. Blocking: local.
 * Returns WEFT_SUCCESS, WEFT_ERR_NOT_FOUND (no component can run), WEFT_ERR_NOT_AVAILABLE (none
 * of the components --mca boot names can run, or the chosen one made no module or one without
 * a required operation), WEFT_ERR_BAD_PARAM (a malformed --mca boot). Thread: init.
 */
weft_status_t weft_boot_select(weft_boot_module_t **module);

/* Close the boot framework, after boot_finalize. Blocking: local. Thread: init. */
void weft_boot_close(void);

#ifdef __cplusplus
} /* extern "C" */

#include <type_traits>

static_assert(std::is_standard_layout_v<weft_boot_event_t> &&
                  std::is_trivially_copyable_v<weft_boot_event_t>,
              "weft_boot_event_t must stay a plain C struct");
static_assert(std::is_standard_layout_v<weft_boot_module_t> &&
                  std::is_trivially_copyable_v<weft_boot_module_t>,
              "weft_boot_module_t must stay a plain C struct");
static_assert(std::is_standard_layout_v<weft_boot_component_t> &&
                  std::is_trivially_copyable_v<weft_boot_component_t>,
              "weft_boot_component_t must stay a plain C struct");
static_assert(offsetof(weft_boot_component_t, mca) == 0,
              "the MCA descriptor must be the first member of weft_boot_component_t");
static_assert(offsetof(weft_boot_module_t, struct_size) == 0,
              "struct_size must be the first member of weft_boot_module_t");
#endif

#endif /* WEFT_BOOT_H */
