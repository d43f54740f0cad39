/*
 * mtl/mtl.h: the matching transport layer (MTL) framework ABI, version 1.0.
 *
 * An MTL hands whole MPI messages, with their (communicator, source, tag) matching, to a
 * network library that matches in the library or the NIC (ofi: libfabric tagged messages). Only
 * the cm PML drives an MTL; cm owns the requests and the MPI semantics around them. The one
 * component is ofi.
 *
 * Lifecycle, and who calls what:
 *
 *   1. register, open, query   mtl/base through the MCA repository (weft/mca.h), when the cm
 *                              PML is being considered; the highest priority wins.
 *   2. init                    cm's init calls init() on the winner, which opens the network
 *                              and returns the one module; NULL refuses (and cm refuses too).
 *   3. add_procs               cm, for the procs of MPI_COMM_WORLD and for procs connected
 *                              later (the MTL exchanges addresses through the modex).
 *   4. add_comm                cm, for each new communicator, before any traffic on it.
 *   5. use                     cm calls send/isend/irecv/probes/cancel from MPI calls and
 *                              progress from the progress engine. The MTL reports each request's
 *                              end through the request's completion callback.
 *   6. del_comm, del_procs     as communicators are freed and procs leave; never wait for a
 *                              dead process.
 *   7. finalize, close         cm's finalize calls mtl_finalize (the module frees itself); then
 *                              mtl/base closes the component.
 *
 * Threading: see weft/module.h. Communication calls are class "mpi"; progress, cancel and the
 * completion callbacks are "any".
 *
 * Failures (ulfm-components.md): an MTL never aborts. A peer failure is returned from the call
 * that sees it (WEFT_ERR_PROC_FAILED, WEFT_ERR_UNREACH) or stored in the affected requests'
 * status.error before their completion callback. cm cancels requests whose peer failed; the MTL
 * then completes them promptly, never waiting for the dead peer.
 *
 * A component exports one symbol, mca_mtl_<name>_component, of type weft_mtl_component_t, with
 * mca.framework "mtl" and framework_abi_major/minor WEFT_MTL_ABI_MAJOR/MINOR. New operations
 * are appended to weft_mtl_module_t (bumping WEFT_MTL_ABI_MINOR); callers check
 * WEFT_MODULE_HAS_OP before calling any operation added after 1.0.
 */
#ifndef WEFT_MTL_H
#define WEFT_MTL_H

#include <stddef.h>
#include <stdint.h>

#include <weft/mca.h>
#include <weft/module.h>
#include <weft/status.h>
#include <weft/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_MTL_ABI_MAJOR 1
#define WEFT_MTL_ABI_MINOR 0

typedef struct weft_mtl_module weft_mtl_module_t;
typedef struct weft_mtl_component weft_mtl_component_t;

/* A message taken out of the network's matching by mtl_improbe. Opaque, owned by the MTL until
 * mtl_imrecv consumes it. */
typedef struct weft_mtl_message weft_mtl_message_t;

/* mtl_flags */
#define WEFT_MTL_FLAG_PROC_FAILURE 0x0001u /* reports peer failures instead of aborting */
#define WEFT_MTL_FLAG_CANCEL_SEND  0x0002u /* mtl_cancel can cancel sends, not only receives */

typedef struct weft_mtl_request weft_mtl_request_t;

/* The end of a request: status is final. Called exactly once per request the MTL accepted.
 * cm may release the request from inside the callback. Thread: any. Must not block. */
typedef void (*weft_mtl_completion_fn_t)(weft_mtl_request_t *request);

/*
 * The start of every request cm hands to the MTL. cm allocates at least mtl_request_size bytes
 * for each request with this struct at their start, fills it, and keeps the memory until the
 * completion callback; the MTL keeps its own state in the bytes after it (its private request
 * struct begins with a weft_mtl_request_t). The fields are those the FT layer reads to find
 * the requests a failure or a revoke interrupts. Layout frozen for ABI major 1.
 */
struct weft_mtl_request {
    weft_request_t *request;                /* the MPI request this serves; set by cm */
    weft_mtl_completion_fn_t completion_cb; /* set by cm; called by the MTL */
    weft_comm_t *comm;                      /* set by cm */
    int32_t peer; /* set by cm: destination, or source as posted (may be WEFT_ANY_SOURCE) */
    int32_t tag;  /* set by cm: as posted (may be WEFT_ANY_TAG) */
    /* Set by the MTL before the callback: source, tag and byte count of what was received,
     * cancelled, and error. cm initializes error to WEFT_SUCCESS. */
    weft_msg_status_t status;
};

/*
 * Contract shared by the communication operations below, unless an operation says otherwise:
 *   ranks    dest/src are ranks in comm; src may be WEFT_ANY_SOURCE, tag may be WEFT_ANY_TAG
 *            for receives and probes. cm handles WEFT_PROC_NULL itself.
 *   memory   the convertor and the memory behind it, comm and the request are cm's and must
 *            stay valid until the completion callback (for blocking calls, until return).
 *   returns  WEFT_SUCCESS (for non-blocking calls: accepted, the callback will run; for
 *            anything else no callback runs); WEFT_ERR_BAD_PARAM; WEFT_ERR_OUT_OF_RESOURCE;
 *            WEFT_ERR_UNREACH, WEFT_ERR_PROC_FAILED (the peer is unreachable or dead).
 *   thread   mpi.
 */
struct weft_mtl_module {
    uint32_t struct_size;       /* sizeof(weft_mtl_module_t) as the component was built */
    uint32_t mtl_flags;         /* WEFT_MTL_FLAG_* */
    uint32_t mtl_max_contextid; /* largest communicator context id the network can match on */
    int32_t mtl_max_tag;        /* largest user tag */
    size_t mtl_request_size;    /* bytes cm allocates per request, base included (>= sizeof base) */

    /* Resolve the network addresses of procs. Blocking: local. Returns WEFT_SUCCESS,
     * WEFT_ERR_UNREACH, WEFT_ERR_OUT_OF_RESOURCE. Thread: init. */
    weft_status_t (*mtl_add_procs)(weft_mtl_module_t *module, weft_proc_t *const *procs,
                                   size_t nprocs);

    /* Forget procs. Blocking: local; never waits for a dead peer. Returns WEFT_SUCCESS,
     * WEFT_ERR_BAD_PARAM. Thread: init. */
    weft_status_t (*mtl_del_procs)(weft_mtl_module_t *module, weft_proc_t *const *procs,
                                   size_t nprocs);

    /* Complete what is pending (in error), close the network, free the module. Blocking:
     * local. Returns WEFT_SUCCESS or an error (the module is gone either way). Thread: init. */
    weft_status_t (*mtl_finalize)(weft_mtl_module_t *module);

    /* Send and return when the convertor's memory may be reused (synchronous mode: when the
     * receive matched). Blocking: yes. See the shared contract above. */
    weft_status_t (*mtl_send)(weft_mtl_module_t *module, weft_comm_t *comm, int dest, int tag,
                              weft_convertor_t *convertor, weft_send_mode_t mode);

    /* Start a send. Blocking: no. See the shared contract above. */
    weft_status_t (*mtl_isend)(weft_mtl_module_t *module, weft_comm_t *comm, int dest, int tag,
                               weft_convertor_t *convertor, weft_send_mode_t mode,
                               weft_mtl_request_t *request);

    /* Post a receive into the convertor; a longer message completes with status.error
     * WEFT_ERR_TRUNCATE. Blocking: no. See the shared contract above. */
    weft_status_t (*mtl_irecv)(weft_mtl_module_t *module, weft_comm_t *comm, int src, int tag,
                               weft_convertor_t *convertor, weft_mtl_request_t *request);

    /* Check for a matching message: *matched = 1 and *status filled if there is one, else 0.
     * Blocking: no. See the shared contract above. */
    weft_status_t (*mtl_iprobe)(weft_mtl_module_t *module, weft_comm_t *comm, int src, int tag,
                                int *matched, weft_msg_status_t *status);

    /* As iprobe, but a matched message is removed from matching and *message (the MTL's) is
     * set; NULL when nothing matched. Blocking: no. See the shared contract above. */
    weft_status_t (*mtl_improbe)(weft_mtl_module_t *module, weft_comm_t *comm, int src, int tag,
                                 int *matched, weft_mtl_message_t **message,
                                 weft_msg_status_t *status);

    /* Receive a message taken by improbe; consumes *message and sets it to NULL. Blocking: no.
     * See the shared contract above. */
    weft_status_t (*mtl_imrecv)(weft_mtl_module_t *module, weft_convertor_t *convertor,
                                weft_mtl_message_t **message, weft_mtl_request_t *request);

    /* Try to cancel an accepted request. The completion callback still runs exactly once: with
     * status.cancelled = 1 if the cancel won, or as a normal (or failed) completion if it lost.
     * A request whose peer failed must complete promptly. Blocking: no. Returns WEFT_SUCCESS,
     * WEFT_ERR_NOT_SUPPORTED (sends without WEFT_MTL_FLAG_CANCEL_SEND; the request completes on
     * its own). Thread: any. */
    weft_status_t (*mtl_cancel)(weft_mtl_module_t *module, weft_mtl_request_t *request);

    /* Prepare matching for comm. Blocking: local. Returns WEFT_SUCCESS,
     * WEFT_ERR_OUT_OF_RESOURCE. Thread: mpi. */
    weft_status_t (*mtl_add_comm)(weft_mtl_module_t *module, weft_comm_t *comm);

    /* Drop comm's matching state; cm has completed or cancelled its requests. Blocking: local;
     * never waits for a dead peer. Returns WEFT_SUCCESS. Thread: mpi. */
    weft_status_t (*mtl_del_comm)(weft_mtl_module_t *module, weft_comm_t *comm);

    /* Poll the network once and run the completion callbacks that are due. Returns the number
     * of requests completed. Blocking: no. Thread: any. */
    int (*mtl_progress)(weft_mtl_module_t *module);

    /* Operations added in 1.1 and later go here, at the end. */
};

struct weft_mtl_component {
    weft_mca_component_t mca; /* mca.struct_size = sizeof(weft_mtl_component_t) */

    /* Open the network and return the module, which stays the component's until
     * mtl_finalize. NULL refuses. Blocking: local. Thread: init. */
    weft_mtl_module_t *(*init)(int enable_progress_threads, int enable_mpi_threads);
};

#ifdef __cplusplus
} /* extern "C" */

#include <type_traits>

static_assert(std::is_standard_layout_v<weft_mtl_request_t> &&
                  std::is_trivially_copyable_v<weft_mtl_request_t>,
              "weft_mtl_request_t must stay a plain C struct");
static_assert(std::is_standard_layout_v<weft_mtl_module_t> &&
                  std::is_trivially_copyable_v<weft_mtl_module_t>,
              "weft_mtl_module_t must stay a plain C struct");
static_assert(std::is_standard_layout_v<weft_mtl_component_t> &&
                  std::is_trivially_copyable_v<weft_mtl_component_t>,
              "weft_mtl_component_t must stay a plain C struct");
static_assert(offsetof(weft_mtl_component_t, mca) == 0,
              "the MCA descriptor must be the first member of weft_mtl_component_t");
static_assert(offsetof(weft_mtl_module_t, struct_size) == 0,
              "struct_size must be the first member of weft_mtl_module_t");
#endif

#endif /* WEFT_MTL_H */
