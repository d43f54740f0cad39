/*
 * pml/pml.h: the point-to-point messaging layer (PML) framework ABI, version 1.0.
 *
 * The PML implements MPI point-to-point semantics: matching by (communicator, source, tag) in
 * order, the send modes, probes, persistent requests, cancellation, and, with ULFM, completing
 * in error whatever a process failure or a revoke interrupts. Components: ob1 (protocols over
 * BML/BTL), bfo (ob1 plus rail failover), cm (over one MTL). Exactly one PML runs in a job and
 * every rank must run the same one.
 *
 * Lifecycle, and who calls what:
 *
 *   1. register, open, query   pml/base through the MCA repository (weft/mca.h); the highest
 *                              priority wins.
 *   2. init                    pml/base calls init() on the winner, which sets up what it runs
 *                              on (ob1/bfo: the BML and BTLs; cm: the MTL) and returns the one
 *                              module; NULL refuses and the next component is tried. The others
 *                              are closed. The runtime then checks through the modex that every
 *                              rank chose the same component.
 *   3. add_procs               the runtime, with every proc of MPI_COMM_WORLD, and again for
 *                              procs connected later (spawn, connect/accept).
 *   4. enable(1)               before the first communicator exists.
 *   5. add_comm                framework/mpi, for each new communicator, before any traffic on
 *                              it; messages that arrive for it earlier are kept until then.
 *   6. use                     framework/mpi calls send/recv/probe/start from MPI calls; the
 *                              progress engine calls progress; framework/mpi's error manager
 *                              calls revoke_comm when a communicator is revoked or, with
 *                              coll_only, when one of its processes failed.
 *   7. del_comm                when a communicator is freed; never waits for dead processes.
 *   8. enable(0), del_procs    at MPI finalize; then the component's finalize, then close.
 *
 * Threading: see weft/module.h. Communication calls are class "mpi"; progress and revoke_comm
 * are "any" (revoke notices arrive in BTL callbacks on the progress thread).
 *
 * Failures (ulfm-components.md): the PML never aborts. Operations with a failed peer complete
 * with WEFT_ERR_PROC_FAILED, pending WEFT_ANY_SOURCE receives with WEFT_ERR_PROC_FAILED_PENDING,
 * operations on a revoked communicator with WEFT_ERR_REVOKED. Every request the PML creates
 * carries, from its creation, the fields the FT layer reads (weft_request_t): status error
 * (initially WEFT_SUCCESS), communicator, peer and tag.
 *
 * A component exports one symbol, mca_pml_<name>_component, of type weft_pml_component_t, with
 * mca.framework "pml" and framework_abi_major/minor WEFT_PML_ABI_MAJOR/MINOR. New operations
 * are appended to weft_pml_module_t (bumping WEFT_PML_ABI_MINOR); callers check
 * WEFT_MODULE_HAS_OP before calling any operation added after 1.0.
 */
#ifndef WEFT_PML_H
#define WEFT_PML_H

#include <stddef.h>
#include <stdint.h>

#include <weft/mca.h>
#include <weft/module.h>
#include <weft/status.h>
#include <weft/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_PML_ABI_MAJOR 1
#define WEFT_PML_ABI_MINOR 0

typedef struct weft_pml_module weft_pml_module_t;
typedef struct weft_pml_component weft_pml_component_t;

/* pml_flags */
#define WEFT_PML_FLAG_REQUIRE_WORLD 0x0001u /* add_procs must get all of MPI_COMM_WORLD at once */
#define WEFT_PML_FLAG_FT            0x0002u /* survives process failures; revoke_comm works */
#define WEFT_PML_FLAG_FAILOVER      0x0004u /* survives the loss of a rail (bfo) */

/*
 * Contract shared by the communication operations below, unless an operation says otherwise:
 *   src/dst  rank in comm, or WEFT_PROC_NULL (completes at once, empty); src may be
 *            WEFT_ANY_SOURCE. tag >= 0 and <= pml_max_tag, or WEFT_ANY_TAG for receives and
 *            probes. count is in elements of dtype.
 *   memory   buffers, datatypes and the communicator are the caller's and must stay valid until
 *            the operation completes. *request is created by the PML and belongs to the caller,
 *            who releases it through framework/mpi's request functions.
 *   returns  WEFT_SUCCESS; WEFT_ERR_BAD_PARAM; WEFT_ERR_OUT_OF_RESOURCE; WEFT_ERR_PROC_FAILED
 *            (the peer is known to have failed; for blocking calls, it failed while waiting);
 *            WEFT_ERR_PROC_FAILED_PENDING (blocking WEFT_ANY_SOURCE receive or probe interrupted
 *            by a failure in comm); WEFT_ERR_REVOKED (comm is revoked). A non-blocking call that
 *            returns WEFT_SUCCESS reports later errors in the request, not in its return value.
 *   thread   mpi.
 */
struct weft_pml_module {
    uint32_t struct_size;       /* sizeof(weft_pml_module_t) as the component was built */
    uint32_t pml_flags;         /* WEFT_PML_FLAG_* */
    uint32_t pml_max_contextid; /* largest communicator context id the PML can carry */
    int32_t pml_max_tag;        /* largest user tag (MPI_TAG_UB) */

    /* Make procs reachable (ob1: BML add_procs; cm: MTL add_procs). Blocking: local.
     * Returns WEFT_SUCCESS, WEFT_ERR_UNREACH (some proc cannot be reached: fatal for the job
     * unless FT is on), WEFT_ERR_OUT_OF_RESOURCE. Thread: init. */
    weft_status_t (*pml_add_procs)(weft_pml_module_t *module, weft_proc_t *const *procs,
                                   size_t nprocs);

    /* Forget procs; pending operations with them are completed in error first. Never waits for
     * a dead process. Blocking: local. Returns WEFT_SUCCESS, WEFT_ERR_BAD_PARAM. Thread: init. */
    weft_status_t (*pml_del_procs)(weft_pml_module_t *module, weft_proc_t *const *procs,
                                   size_t nprocs);

    /* Start (enable = 1) or stop (0) taking part in progress. Blocking: local. Returns
     * WEFT_SUCCESS or an error. Thread: init. */
    weft_status_t (*pml_enable)(weft_pml_module_t *module, int enable);

    /* Advance the protocols once. Returns the number of events handled. Blocking: no.
     * Thread: any. */
    int (*pml_progress)(weft_pml_module_t *module);

    /* Prepare matching state for comm and deliver what arrived for it early. Blocking: local.
     * Returns WEFT_SUCCESS, WEFT_ERR_OUT_OF_RESOURCE. Thread: mpi. */
    weft_status_t (*pml_add_comm)(weft_pml_module_t *module, weft_comm_t *comm);

    /* Drop comm's matching state. Pending operations on comm were completed or revoked by
     * framework/mpi; never waits for a dead process. Blocking: local. Returns WEFT_SUCCESS.
     * Thread: mpi. */
    weft_status_t (*pml_del_comm)(weft_pml_module_t *module, weft_comm_t *comm);

    /* Create an inactive persistent receive; pml_start posts it. Blocking: no. See the shared
     * contract above. */
    weft_status_t (*pml_irecv_init)(weft_pml_module_t *module, void *buf, size_t count,
                                    weft_datatype_t *dtype, int src, int tag, weft_comm_t *comm,
                                    weft_request_t **request);

    /* Post a receive. Blocking: no. See the shared contract above. */
    weft_status_t (*pml_irecv)(weft_pml_module_t *module, void *buf, size_t count,
                               weft_datatype_t *dtype, int src, int tag, weft_comm_t *comm,
                               weft_request_t **request);

    /* Receive; status (may be NULL) gets the outcome, including a WEFT_ERR_TRUNCATE error.
     * Blocking: yes. Returns the shared statuses and WEFT_ERR_TRUNCATE. */
    weft_status_t (*pml_recv)(weft_pml_module_t *module, void *buf, size_t count,
                              weft_datatype_t *dtype, int src, int tag, weft_comm_t *comm,
                              weft_msg_status_t *status);

    /* Create an inactive persistent send; pml_start starts it. Blocking: no. See the shared
     * contract above. */
    weft_status_t (*pml_isend_init)(weft_pml_module_t *module, const void *buf, size_t count,
                                    weft_datatype_t *dtype, int dst, int tag, weft_send_mode_t mode,
                                    weft_comm_t *comm, weft_request_t **request);

    /* Start a send. Blocking: no (a buffered send copies into the attached buffer first).
     * See the shared contract above. */
    weft_status_t (*pml_isend)(weft_pml_module_t *module, const void *buf, size_t count,
                               weft_datatype_t *dtype, int dst, int tag, weft_send_mode_t mode,
                               weft_comm_t *comm, weft_request_t **request);

    /* Send; returns when buf may be reused (synchronous mode: when the receive matched).
     * Blocking: yes. See the shared contract above. */
    weft_status_t (*pml_send)(weft_pml_module_t *module, const void *buf, size_t count,
                              weft_datatype_t *dtype, int dst, int tag, weft_send_mode_t mode,
                              weft_comm_t *comm);

    /* Check for a matching message without receiving it: *matched = 1 and status (may be NULL)
     * filled if there is one, else *matched = 0. Blocking: no (runs progress once). See the
     * shared contract above. */
    weft_status_t (*pml_iprobe)(weft_pml_module_t *module, int src, int tag, weft_comm_t *comm,
                                int *matched, weft_msg_status_t *status);

    /* Wait for a matching message without receiving it. Blocking: yes. See the shared
     * contract above. */
    weft_status_t (*pml_probe)(weft_pml_module_t *module, int src, int tag, weft_comm_t *comm,
                               weft_msg_status_t *status);

    /* Like iprobe, but a matched message is removed from matching and returned in *message
     * (created by the PML; the caller gives it to imrecv/mrecv, which consume it). *message is
     * NULL when nothing matched. Blocking: no. See the shared contract above. */
    weft_status_t (*pml_improbe)(weft_pml_module_t *module, int src, int tag, weft_comm_t *comm,
                                 int *matched, weft_message_t **message, weft_msg_status_t *status);

    /* Wait for a matching message and remove it from matching, as improbe. Blocking: yes.
     * See the shared contract above. */
    weft_status_t (*pml_mprobe)(weft_pml_module_t *module, int src, int tag, weft_comm_t *comm,
                                weft_message_t **message, weft_msg_status_t *status);

    /* Receive a message taken by improbe/mprobe; consumes *message and sets it to NULL.
     * Blocking: no. See the shared contract above. */
    weft_status_t (*pml_imrecv)(weft_pml_module_t *module, void *buf, size_t count,
                                weft_datatype_t *dtype, weft_message_t **message,
                                weft_request_t **request);

    /* Receive a message taken by improbe/mprobe; consumes *message and sets it to NULL.
     * Blocking: yes (the data may still be in flight). See the shared contract above. */
    weft_status_t (*pml_mrecv)(weft_pml_module_t *module, void *buf, size_t count,
                               weft_datatype_t *dtype, weft_message_t **message,
                               weft_msg_status_t *status);

    /* Start count inactive persistent requests made by irecv_init/isend_init. The requests
     * stay the caller's. Blocking: no. Returns the shared statuses; on an error, requests
     * before the failing one were started. Thread: mpi. */
    weft_status_t (*pml_start)(weft_pml_module_t *module, size_t count, weft_request_t **requests);

    /* Print the PML's state for comm (NULL: everything) to the debug output; verbose 0-9.
     * Blocking: local. Returns WEFT_SUCCESS. Thread: any. */
    weft_status_t (*pml_dump)(weft_pml_module_t *module, weft_comm_t *comm, int verbose);

    /*
     * Revoke comm in this process (ULFM). With coll_only = 0 (MPIX_Comm_revoke, or a revoke
     * notice from a peer): purge comm from the posted and unexpected queues, complete every
     * pending operation on comm with WEFT_ERR_REVOKED, refuse (NACK) rendezvous that arrive
     * for it later, and fail later operations on it. With coll_only = 1 (a process of comm
     * failed): do this only for operations in the collective tag space, so that collectives
     * complete everywhere while point-to-point goes on. Idempotent. Blocking: no. Returns
     * WEFT_SUCCESS, WEFT_ERR_NOT_SUPPORTED (the module lacks WEFT_PML_FLAG_FT). Thread: any.
     */
    weft_status_t (*pml_revoke_comm)(weft_pml_module_t *module, weft_comm_t *comm, int coll_only);

    /* Operations added in 1.1 and later go here, at the end. */
};

struct weft_pml_component {
    weft_mca_component_t mca; /* mca.struct_size = sizeof(weft_pml_component_t) */

    /* Set up the layers below and return the module, which stays the component's. NULL
     * refuses (pml/base tries the next component). Blocking: local. Thread: init. */
    weft_pml_module_t *(*init)(int enable_progress_threads, int enable_mpi_threads);

    /* Tear down what init set up, after pml_del_procs; the module is gone afterwards.
     * Blocking: local, never waits for a dead process. Returns WEFT_SUCCESS or an error.
     * Thread: init. */
    weft_status_t (*finalize)(void);
};

/* The PML module this process selected, from MPI_Init (after pml_add_procs) to MPI_Finalize;
 * NULL otherwise. Other frameworks (coll) send through it. Defined in pml/base. Thread: any. */
weft_pml_module_t *weft_pml_selected(void);
/* Set by framework/mpi at MPI_Init and MPI_Finalize. Thread: init. */
void weft_pml_set_selected(weft_pml_module_t *module);

#ifdef __cplusplus
} /* extern "C" */

#include <type_traits>

static_assert(std::is_standard_layout_v<weft_pml_module_t> &&
                  std::is_trivially_copyable_v<weft_pml_module_t>,
              "weft_pml_module_t must stay a plain C struct");
static_assert(std::is_standard_layout_v<weft_pml_component_t> &&
                  std::is_trivially_copyable_v<weft_pml_component_t>,
              "weft_pml_component_t must stay a plain C struct");
static_assert(offsetof(weft_pml_component_t, mca) == 0,
              "the MCA descriptor must be the first member of weft_pml_component_t");
static_assert(offsetof(weft_pml_module_t, struct_size) == 0,
              "struct_size must be the first member of weft_pml_module_t");
#endif

#endif /* WEFT_PML_H */
