/*
 * btl/btl.h: the byte transfer layer (BTL) framework ABI, version 1.0.
 *
 * A BTL moves bytes between two processes over one kind of link: active messages (send, sendi)
 * delivered to a callback registered for a one-byte tag, and, if the link can, one-sided RDMA
 * (put, get) on registered memory. It knows nothing of MPI matching; the PML builds its
 * protocols (ob1-protocols.rst) on top. Components: self, sm, tcp, openib.
 *
 * Lifecycle, and who calls what:
 *
 *   1. register, open, query   btl/base through the MCA repository (weft/mca.h). Unlike most
 *                              frameworks, every component that accepts in query is kept.
 *   2. init                    btl/base calls the component's init() once. It returns an array
 *                              of modules, one per usable link (tcp: one per interface, openib:
 *                              one per port), so several modules of one component are several
 *                              rails. Zero modules is a quiet refusal (no verbs device).
 *   3. add_btl                 bml/base hands every module to the BML (bml.h).
 *   4. register, register_error
 *                              the PML, through the BML, registers its tag callbacks and its
 *                              error callback on every module before any add_procs.
 *   5. add_procs               the BML, for the procs of MPI_COMM_WORLD and again for procs
 *                              connected later. The module creates an endpoint for each proc it
 *                              reaches; the BML builds each peer's rail lists from the modules'
 *                              exclusivity, latency and bandwidth.
 *   6. use                     the PML calls alloc/prepare_src/send/sendi/put/get and friends
 *                              through the BML's per-peer lists; the progress engine calls the
 *                              component's progress(), which runs callbacks: completion of a
 *                              descriptor, arrival of a message, errors.
 *   7. del_procs               when procs leave (disconnect) and at finalize.
 *   8. finalize, close         btl/base at MPI finalize: btl_finalize on each module (the
 *                              module frees itself), then the component's close.
 *
 * Threading: see weft/module.h for the words. Send-side operations are class "any": the PML
 * calls them from MPI threads and from callbacks on the progress thread (a rendezvous reply
 * triggers a put). A module flagged WEFT_BTL_FLAG_ACTIVE_THREAD may run callbacks on a thread of
 * its own; the PML then locks accordingly.
 *
 * Errors (bfo-design.txt, ulfm-components.md): a module never aborts the process. When a link
 * breaks it first calls the registered error callback (for one peer, or NULL for the whole
 * module), then completes every affected descriptor and RDMA operation through its callback
 * with an error status: each fragment that may not have arrived is reported, exactly once, and
 * a fragment reported successful has arrived. Send operations on a broken endpoint return
 * WEFT_ERR_LINK_DOWN, WEFT_ERR_UNREACH or WEFT_ERR_PROC_FAILED without queuing anything.
 *
 * A component exports one symbol, mca_btl_<name>_component, of type weft_btl_component_t, with
 * mca.framework "btl" and framework_abi_major/minor WEFT_BTL_ABI_MAJOR/MINOR. New operations
 * are appended to weft_btl_module_t (bumping WEFT_BTL_ABI_MINOR); callers check
 * WEFT_MODULE_HAS_OP before calling any operation added after 1.0.
 */
#ifndef WEFT_BTL_H
#define WEFT_BTL_H

#include <stddef.h>
#include <stdint.h>

#include <weft/mca.h>
#include <weft/module.h>
#include <weft/status.h>
#include <weft/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_BTL_ABI_MAJOR 1
#define WEFT_BTL_ABI_MINOR 5

typedef struct weft_btl_module weft_btl_module_t;
typedef struct weft_btl_component weft_btl_component_t;

/* A module's connection state for one peer, created by btl_add_procs. Opaque to everyone but
 * the module; valid until btl_del_procs for that peer or btl_finalize. */
typedef struct weft_btl_endpoint weft_btl_endpoint_t;

/* Whatever the peer needs to reach a registered region with put/get. Opaque; exactly
 * btl_registration_handle_size bytes, which the PML copies into its headers unchanged. */
typedef struct weft_btl_registration_handle weft_btl_registration_handle_t;

/* ------------------------------------------------------------------------------------------ */
/* Tags, orders and flags                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* Active-message tag: which registered callback receives a message. */
typedef uint8_t weft_btl_tag_t;

/* Tag ranges, so that layers never collide. */
#define WEFT_BTL_TAG_BTL_FIRST 0x00 /* a BTL's own control messages (openib failover notices) */
#define WEFT_BTL_TAG_BTL_LAST  0x3f
#define WEFT_BTL_TAG_PML_FIRST 0x40 /* the PML's headers: MATCH, RNDV, ACK, FRAG, PUT, FIN... */
#define WEFT_BTL_TAG_PML_LAST  0x5f
#define WEFT_BTL_TAG_FT_FIRST  0x60 /* revoke notices and agreement (framework/mpi, coll) */
#define WEFT_BTL_TAG_FT_LAST   0x6f
#define WEFT_BTL_TAG_MAX       0xff

/* Order channel: descriptors given the same order value to the same endpoint arrive in the
 * order they were sent. WEFT_BTL_NO_ORDER lets the module choose. */
#define WEFT_BTL_NO_ORDER 0xff

/* btl_flags: what the module can do. */
#define WEFT_BTL_FLAG_SEND         0x0001u /* send/sendi active messages */
#define WEFT_BTL_FLAG_PUT          0x0002u /* btl_put */
#define WEFT_BTL_FLAG_GET          0x0004u /* btl_get */
#define WEFT_BTL_FLAG_RDMA         (WEFT_BTL_FLAG_PUT | WEFT_BTL_FLAG_GET)
#define WEFT_BTL_FLAG_SEND_INPLACE 0x0008u /* prepare_src may send from user memory, no copy */
#define WEFT_BTL_FLAG_FAILOVER_SUPPORT                                                             \
    0x0010u                                 /* reports link errors and errors out every            \
                                             * affected fragment instead of aborting */
#define WEFT_BTL_FLAG_ACTIVE_THREAD 0x0020u /* may run callbacks on a thread of its own */
#define WEFT_BTL_FLAG_PROC_FAILURE  0x0040u /* can tell a dead peer from a broken link */
/* Added in 1.3. The receiver chooses how a rendezvous message moves: the sender offers a get
 * (RGET) at every size where it would otherwise send a RNDV, and the receiver reads it, or
 * answers with an ACK that asks for the send/receive pipeline, as what it measures on the
 * real transfers says is faster (the module's rdma size bounds are its starting advice). For
 * a module whose best way changes while the job runs (sm: where the two processes sit in the
 * caches). A PML that does not know the flag uses the bounds as before. */
#define WEFT_BTL_FLAG_RECEIVER_CHOOSES 0x0080u
/* Added in 1.3: btl_get takes WEFT_BTL_GET_FLAG_SHARED (the peer writes part of the data while
 * this process reads the rest) and WEFT_BTL_GET_FLAG_ALONE. */
#define WEFT_BTL_FLAG_SHARED_GET 0x0100u

/* Added in 1.4: btl_prepare_src takes WEFT_BTL_DES_FLAG_CACHED_STORES and
 * WEFT_BTL_DES_FLAG_STREAMING_STORES (how the fragment's data is written into the module's
 * memory; neither: the module decides). For a module whose faster stores change while a job
 * runs (sm on a virtual machine: 2.5x either way); its receivers choose them (with
 * WEFT_BTL_FLAG_RECEIVER_CHOOSES) as they choose between get and pipeline. */
#define WEFT_BTL_FLAG_STORES_CHOICE 0x0200u

/* Added in 1.5: the ways btl_way_rate reports on, as a receiver that chooses can take them. */
#define WEFT_BTL_WAY_PIPELINE  0u /* send/receive pipeline, cached stores */
#define WEFT_BTL_WAY_GET       1u /* btl_get, read alone */
#define WEFT_BTL_WAY_SHARED    2u /* btl_get with WEFT_BTL_GET_FLAG_SHARED */
#define WEFT_BTL_WAY_STREAMING 3u /* send/receive pipeline, streaming stores */

/* The flags argument of btl_get (1.3; 0: the module decides). */
#define WEFT_BTL_GET_FLAG_SHARED 0x0001u /* share the get with the peer */
#define WEFT_BTL_GET_FLAG_ALONE  0x0002u /* read everything without the peer's help */

/* des_flags and the flags argument of alloc/prepare_src/sendi. */
#define WEFT_BTL_DES_FLAG_PRIORITY 0x0001u /* latency-critical: send ahead of bulk data */
#define WEFT_BTL_DES_FLAG_BTL_OWNERSHIP                                                            \
    0x0002u /* the module frees the descriptor itself after                                        \
             * completion (after the callback, if any) */
#define WEFT_BTL_DES_FLAG_ALWAYS_CALLBACK                                                          \
    0x0004u /* call des_cbfunc even when send completes                                            \
             * inside the call */

/* Added in 1.4, for btl_prepare_src of a module with WEFT_BTL_FLAG_STORES_CHOICE: write the
 * data with cached stores, or with streaming (non-temporal) ones. Others ignore them. */
#define WEFT_BTL_DES_FLAG_CACHED_STORES    0x0008u
#define WEFT_BTL_DES_FLAG_STREAMING_STORES 0x0010u

/* flags of btl_register_mem: which accesses the region must allow. */
#define WEFT_BTL_REG_FLAG_LOCAL_WRITE  0x0001u
#define WEFT_BTL_REG_FLAG_REMOTE_READ  0x0002u
#define WEFT_BTL_REG_FLAG_REMOTE_WRITE 0x0004u

/* flags of the error callback. */
#define WEFT_BTL_ERROR_FLAG_FATAL       0x0001u /* the whole module is unusable */
#define WEFT_BTL_ERROR_FLAG_LINK        0x0002u /* the link to proc broke; proc may be alive */
#define WEFT_BTL_ERROR_FLAG_PROC_FAILED 0x0004u /* the module believes proc is dead */

/* flags of a received message. */
#define WEFT_BTL_RECV_FLAG_SEND_FAILED                                                             \
    0x0001u /* not a message from the peer: a fragment this                                        \
             * process sent with sendi that may not have                                           \
             * arrived, handed back to the sender's callback                                       \
             * for the tag so that it can be resent */

/* Added in 1.4, for modules that place (btl_register_place): the payload after the first
 * segment was written straight into the memory the tag's place callback named; segments[0] is
 * the message's first header_size bytes, segments[1] that memory. */
#define WEFT_BTL_RECV_FLAG_PLACED 0x0002u
/* Added in 1.4: not a message. The link broke while the module was writing a message into the
 * memory a place callback named: segments[0] is the message's first header_size bytes (its
 * header), and the memory holds an unknown part of the rest, which is not written any more.
 * Every placement ends with exactly one callback, PLACED or PLACE_FAILED. */
#define WEFT_BTL_RECV_FLAG_PLACE_FAILED 0x0004u

/* ------------------------------------------------------------------------------------------ */
/* Descriptors and callbacks                                                                  */
/* ------------------------------------------------------------------------------------------ */

/* One contiguous piece of a fragment, in the memory of this process. */
typedef struct weft_btl_segment {
    void *seg_addr;
    size_t seg_len;
} weft_btl_segment_t;

typedef struct weft_btl_descriptor weft_btl_descriptor_t;

/*
 * Local completion of a descriptor given to btl_send: the data has been delivered or has been
 * copied out of the descriptor's segments, or (status < 0) it may not have arrived. Called once
 * per send that returned WEFT_IN_PROGRESS (and for WEFT_SUCCESS with ALWAYS_CALLBACK).
 * Thread: any. status: WEFT_SUCCESS, WEFT_ERR_LINK_DOWN, WEFT_ERR_UNREACH, WEFT_ERR_PROC_FAILED.
 */
typedef void (*weft_btl_completion_fn_t)(weft_btl_module_t *module, weft_btl_endpoint_t *endpoint,
                                         weft_btl_descriptor_t *des, weft_status_t status);

/*
 * A send-side fragment, made by btl_alloc, btl_prepare_src or a failed btl_sendi. The module
 * owns the descriptor and its segments; the caller fills the segment bytes and the callback
 * fields. The layout is frozen for ABI major 1: modules embed it in their own fragments.
 */
struct weft_btl_descriptor {
    weft_btl_segment_t *des_segments; /* owned by the module */
    size_t des_segment_count;
    weft_btl_completion_fn_t des_cbfunc; /* may be NULL: no completion wanted */
    void *des_cbdata;                    /* for the callback's owner */
    void *des_context;                   /* for the callback's owner */
    uint32_t des_flags;                  /* WEFT_BTL_DES_FLAG_* */
    uint8_t order;                       /* order channel, or WEFT_BTL_NO_ORDER */
    uint8_t reserved[3];                 /* zero */
};

/* A message as it arrives; valid only during the receive callback, which copies what it keeps.
 * Layout frozen for ABI major 1. */
typedef struct weft_btl_recv_descriptor {
    weft_btl_endpoint_t *endpoint;      /* the sender's endpoint in this module */
    const weft_btl_segment_t *segments; /* the message, header first */
    size_t segment_count;
    void *cbdata;   /* as given to btl_register */
    uint32_t flags; /* WEFT_BTL_RECV_FLAG_* */
    weft_btl_tag_t tag;
    uint8_t reserved[3]; /* zero */
} weft_btl_recv_descriptor_t;

/* Arrival of an active message for a registered tag. Thread: any. Must not block. */
typedef void (*weft_btl_recv_fn_t)(weft_btl_module_t *module,
                                   const weft_btl_recv_descriptor_t *des);

/*
 * Added in 1.4. Where a message's payload may go, asked by a module that reads messages from a
 * byte stream (tcp) when the first header_size bytes of a message for the tag have arrived and
 * `rest` bytes follow them. Return 1 and set *dest to `rest` bytes of this process's memory:
 * the module then reads the rest straight into it (no copy through its own buffer), and the
 * memory must stay valid and untouched by anyone else until the tag's receive callback for this
 * message, flagged WEFT_BTL_RECV_FLAG_PLACED or WEFT_BTL_RECV_FLAG_PLACE_FAILED. Return 0 to
 * receive the message as usual. header is valid during the call and comes from the peer:
 * check it as any message. Thread: any. Must not block.
 */
typedef int (*weft_btl_place_fn_t)(weft_btl_module_t *module, weft_btl_endpoint_t *endpoint,
                                   const void *header, size_t header_size, size_t rest,
                                   void *cbdata, void **dest);

/*
 * A link error. proc is the peer whose link broke, or NULL when the whole module is unusable;
 * flags is WEFT_BTL_ERROR_FLAG_*; description is a one-line reason, valid during the call.
 * Called before the affected fragments are completed in error, so that the PML can map the
 * rail out first. Thread: any. Must not block.
 */
typedef void (*weft_btl_error_fn_t)(weft_btl_module_t *module, uint32_t flags, weft_proc_t *proc,
                                    const char *description, void *cbdata);

/*
 * Completion of a put or get: local_address is ready to reuse (put) or holds the data (get),
 * or (status < 0) the transfer may not have happened. context and cbdata are as given.
 * Thread: any. status: as for weft_btl_completion_fn_t.
 */
typedef void (*weft_btl_rdma_completion_fn_t)(weft_btl_module_t *module,
                                              weft_btl_endpoint_t *endpoint, void *local_address,
                                              weft_btl_registration_handle_t *local_handle,
                                              void *context, void *cbdata, weft_status_t status);

/* ------------------------------------------------------------------------------------------ */
/* The module                                                                                 */
/* ------------------------------------------------------------------------------------------ */

struct weft_btl_module {
    uint32_t struct_size;                /* sizeof(weft_btl_module_t) as the component was built */
    uint32_t btl_flags;                  /* WEFT_BTL_FLAG_* */
    weft_btl_component_t *btl_component; /* the component that made this module */

    /* Limits, read by the PML to pick a protocol per message (ob1-protocols.rst). Set by the
     * component before init returns and constant afterwards. */
    size_t btl_eager_limit;               /* largest eager message, PML header included */
    size_t btl_rndv_eager_limit;          /* data carried by the first fragment of a rendezvous */
    size_t btl_max_send_size;             /* largest send fragment, PML header included */
    size_t btl_rdma_pipeline_send_length; /* bytes sent by send/receive before RDMA pipelining */
    size_t btl_rdma_pipeline_frag_size;   /* largest RDMA fragment in the pipeline */
    size_t btl_min_rdma_pipeline_size;    /* smallest message for the RDMA pipeline */
    size_t btl_put_limit;                 /* largest single put; 0 = no put */
    size_t btl_get_limit;                 /* largest single get; 0 = no get */
    size_t btl_put_alignment;             /* required alignment of put addresses; 0 = any */
    size_t btl_get_alignment;             /* required alignment of get addresses; 0 = any */
    size_t btl_registration_handle_size;  /* bytes of a registration handle on the wire */
    uint32_t btl_exclusivity; /* for one peer, only the modules of highest exclusivity are used */
    uint32_t btl_latency;     /* microseconds, for ordering the eager list */
    uint32_t btl_bandwidth;   /* Mbit/s, for weighting the stripe over rails */
    uint32_t reserved;        /* zero */

    /*
     * Create endpoints for procs[0..nprocs-1]. For each proc this module can reach, set
     * endpoints[i] and reachable[i] = 1; leave both untouched otherwise (the caller zeroes them
     * and merges across modules). Blocking: local (may start connections; must not wait for
     * them). Memory: arrays are the caller's; endpoints are the module's. Returns WEFT_SUCCESS
     * (even if no proc is reachable), WEFT_ERR_OUT_OF_RESOURCE, WEFT_ERR_BAD_PARAM.
     * Thread: init.
     */
    weft_status_t (*btl_add_procs)(weft_btl_module_t *module, weft_proc_t *const *procs,
                                   size_t nprocs, weft_btl_endpoint_t **endpoints,
                                   uint8_t *reachable);

    /* Release the endpoints made for procs. Pending fragments to them complete in error first.
     * Blocking: local; never waits for a dead peer. Returns WEFT_SUCCESS, WEFT_ERR_BAD_PARAM.
     * Thread: init. */
    weft_status_t (*btl_del_procs)(weft_btl_module_t *module, weft_proc_t *const *procs,
                                   size_t nprocs, weft_btl_endpoint_t *const *endpoints);

    /* Deliver messages arriving with `tag` to cbfunc (cbdata is passed back in the receive
     * descriptor). A later call for the same tag replaces the callback. Blocking: no.
     * Returns WEFT_SUCCESS, WEFT_ERR_BAD_PARAM. Thread: init. */
    weft_status_t (*btl_register)(weft_btl_module_t *module, weft_btl_tag_t tag,
                                  weft_btl_recv_fn_t cbfunc, void *cbdata);

    /* Set the one error callback (replacing any earlier one). Without one, a module reports
     * errors only through completion statuses. Blocking: no. Returns WEFT_SUCCESS,
     * WEFT_ERR_NOT_SUPPORTED (the module cannot survive errors). Thread: init. */
    weft_status_t (*btl_register_error)(weft_btl_module_t *module, weft_btl_error_fn_t cbfunc,
                                        void *cbdata);

    /* Shut the module down: complete what is pending in error, release every endpoint and the
     * module itself. No call into the module may follow or be in flight. Blocking: local.
     * Returns WEFT_SUCCESS or an error (the module is gone either way). Thread: init. */
    weft_status_t (*btl_finalize)(weft_btl_module_t *module);

    /*
     * Allocate a descriptor with one segment of `size` bytes for the caller to fill (eager
     * allocated protocol). endpoint may be NULL if the module does not care. flags:
     * WEFT_BTL_DES_FLAG_*. On WEFT_SUCCESS *des is the module's; the caller gives it back with
     * btl_send or btl_free. Blocking: no. Returns WEFT_SUCCESS, WEFT_ERR_OUT_OF_RESOURCE (retry
     * after progress), WEFT_ERR_BAD_PARAM (size > btl_max_send_size). Thread: any.
     */
    weft_status_t (*btl_alloc)(weft_btl_module_t *module, weft_btl_endpoint_t *endpoint,
                               uint8_t order, size_t size, uint32_t flags,
                               weft_btl_descriptor_t **des);

    /* Return a descriptor that was not sent, or one sent without BTL_OWNERSHIP after its
     * completion. Blocking: no. Returns WEFT_SUCCESS, WEFT_ERR_BAD_PARAM. Thread: any. */
    weft_status_t (*btl_free)(weft_btl_module_t *module, weft_btl_descriptor_t *des);

    /*
     * Make a descriptor whose first segment has `reserve` bytes for the caller's header and
     * whose data comes from convertor: up to *size bytes, and *size is set to what the
     * descriptor holds. With WEFT_BTL_FLAG_SEND_INPLACE the data segments may point into user
     * memory, which must then stay untouched until completion. Blocking: no. Returns
     * WEFT_SUCCESS, WEFT_ERR_OUT_OF_RESOURCE (retry after progress), WEFT_ERR_BAD_PARAM.
     * Thread: any.
     */
    weft_status_t (*btl_prepare_src)(weft_btl_module_t *module, weft_btl_endpoint_t *endpoint,
                                     weft_convertor_t *convertor, uint8_t order, size_t reserve,
                                     size_t *size, uint32_t flags, weft_btl_descriptor_t **des);

    /*
     * Send des to the callback registered for `tag` at the peer. Blocking: no.
     * Returns WEFT_IN_PROGRESS: queued; des_cbfunc (if set) runs at completion.
     *         WEFT_SUCCESS: delivered inside the call; des_cbfunc runs only with
     *             ALWAYS_CALLBACK; with BTL_OWNERSHIP the descriptor is already freed.
     *         WEFT_ERR_OUT_OF_RESOURCE: not queued; the caller keeps des and retries later.
     *         WEFT_ERR_LINK_DOWN, WEFT_ERR_UNREACH, WEFT_ERR_PROC_FAILED: not queued; the caller
     *             keeps des (and frees it or sends it on another rail).
     * Thread: any.
     */
    weft_status_t (*btl_send)(weft_btl_module_t *module, weft_btl_endpoint_t *endpoint,
                              weft_btl_descriptor_t *des, weft_btl_tag_t tag);

    /*
     * Send header (header_size bytes, copied) followed by payload_size bytes from convertor,
     * at once if the module can (eager immediate protocol). Blocking: no.
     * Returns WEFT_SUCCESS: handed to the link; nothing to complete. If a module with
     *             FAILOVER_SUPPORT later finds that the fragment may not have arrived, it hands
     *             the fragment back to this process's callback for `tag` flagged
     *             WEFT_BTL_RECV_FLAG_SEND_FAILED.
     *         WEFT_ERR_OUT_OF_RESOURCE: nothing sent; if des is not NULL and the module could
     *             allocate one, *des is a descriptor of header_size + payload_size bytes the
     *             caller may fill and btl_send (else *des is NULL).
     *         WEFT_ERR_LINK_DOWN, WEFT_ERR_UNREACH, WEFT_ERR_PROC_FAILED: nothing sent.
     * Thread: any.
     */
    weft_status_t (*btl_sendi)(weft_btl_module_t *module, weft_btl_endpoint_t *endpoint,
                               weft_convertor_t *convertor, const void *header, size_t header_size,
                               size_t payload_size, uint8_t order, uint32_t flags,
                               weft_btl_tag_t tag, weft_btl_descriptor_t **des);

    /*
     * Write size bytes from local_address (registered, local_handle) to remote_address at the
     * peer (remote_handle, copied from the peer). Blocking: no. On WEFT_SUCCESS cbfunc runs
     * exactly once, when local_address may be reused (or in error); local memory must stay
     * registered until then. Returns WEFT_SUCCESS, WEFT_ERR_OUT_OF_RESOURCE (nothing started;
     * retry), WEFT_ERR_NOT_SUPPORTED, WEFT_ERR_BAD_PARAM (size > btl_put_limit or misaligned),
     * WEFT_ERR_LINK_DOWN, WEFT_ERR_UNREACH, WEFT_ERR_PROC_FAILED (nothing started, no callback).
     * flags: zero. Thread: any.
     */
    weft_status_t (*btl_put)(weft_btl_module_t *module, weft_btl_endpoint_t *endpoint,
                             void *local_address, uint64_t remote_address,
                             weft_btl_registration_handle_t *local_handle,
                             const weft_btl_registration_handle_t *remote_handle, size_t size,
                             uint32_t flags, uint8_t order, weft_btl_rdma_completion_fn_t cbfunc,
                             void *cbcontext, void *cbdata);

    /* Read size bytes from remote_address at the peer into local_address. Same contract as
     * btl_put, with btl_get_limit; cbfunc runs when the data is in local_address. */
    weft_status_t (*btl_get)(weft_btl_module_t *module, weft_btl_endpoint_t *endpoint,
                             void *local_address, uint64_t remote_address,
                             weft_btl_registration_handle_t *local_handle,
                             const weft_btl_registration_handle_t *remote_handle, size_t size,
                             uint32_t flags, uint8_t order, weft_btl_rdma_completion_fn_t cbfunc,
                             void *cbcontext, void *cbdata);

    /*
     * Register [base, base + size) for RDMA with WEFT_BTL_REG_FLAG_* access; endpoint may be
     * NULL (any peer). *handle is the module's until btl_deregister_mem. Modules that need no
     * registration leave this NULL. Blocking: local. Returns WEFT_SUCCESS,
     * WEFT_ERR_OUT_OF_RESOURCE, WEFT_ERR_BAD_PARAM. Thread: any.
     */
    weft_status_t (*btl_register_mem)(weft_btl_module_t *module, weft_btl_endpoint_t *endpoint,
                                      void *base, size_t size, uint32_t flags,
                                      weft_btl_registration_handle_t **handle);

    /* Release a registration; no put/get may still use it. Blocking: local. Returns
     * WEFT_SUCCESS, WEFT_ERR_BAD_PARAM. Thread: any. */
    weft_status_t (*btl_deregister_mem)(weft_btl_module_t *module,
                                        weft_btl_registration_handle_t *handle);

    /* Wait until every put/get started to endpoint (NULL: to every peer) has completed and run
     * its callback, and every send queued for it has been handed to the link (the PML calls
     * this at finalize so that nothing queued is lost). Progresses while it waits.
     * Blocking: yes (returns early with the error when the link fails).
     * Returns WEFT_SUCCESS, WEFT_ERR_LINK_DOWN, WEFT_ERR_UNREACH, WEFT_ERR_PROC_FAILED.
     * Thread: mpi. */
    weft_status_t (*btl_flush)(weft_btl_module_t *module, weft_btl_endpoint_t *endpoint);

    /* Print the module's state for endpoint (NULL: all) to the debug output; verbose 0-9.
     * Blocking: local. Thread: any. */
    void (*btl_dump)(weft_btl_module_t *module, weft_btl_endpoint_t *endpoint, int verbose);

    /* Added in 1.1 (read it only if WEFT_MODULE_HAS_FIELD says the module has it). */

    /* Smallest message the PML should move with put/get on this module; smaller ones take the
     * send/receive pipeline. 0: any size. A module whose RDMA is slower than its sends below
     * some size (sm's single-copy mechanism on some machines) sets it. */
    size_t btl_min_rdma_size;

    /* Added in 1.2 (read it only if WEFT_MODULE_HAS_FIELD says the module has it). */

    /* Messages of this many bytes and more take the send/receive pipeline on this module, not
     * put/get. 0: no limit. A module whose send pipeline beats its RDMA above some size (sm's
     * single-copy mechanism on some machines, where the pipeline's two copies run in
     * parallel) sets it. */
    size_t btl_max_rdma_size;

    /* The same two bounds for a message that follows another large message to the same peer
     * still under way (a stream), where a module's send pipeline may overlap one message's
     * copies with the next one's while its put/get would not: the PML applies these instead of
     * btl_min_rdma_size and btl_max_rdma_size then. Both 0: the same bounds as alone; to
     * allow every size in a stream, 0 and SIZE_MAX; to allow none, SIZE_MAX and 0. */
    size_t btl_stream_min_rdma_size;
    size_t btl_stream_max_rdma_size;

    /* Added in 1.4 (call it only if WEFT_MODULE_HAS_OP says the module has it; modules that
     * cannot place leave it NULL). For messages with `tag` whose payload is at least
     * header_size bytes plus as many as the module's reads take at once (placing a shorter one
     * would only add system calls), ask placefn where the bytes after the first header_size go
     * (weft_btl_place_fn_t). The tag's receive callback must be registered too. A later call
     * for the same tag replaces it; placefn NULL stops placing. Blocking: no. Returns
     * WEFT_SUCCESS, WEFT_ERR_BAD_PARAM (header_size 0 or above 64). Thread: init. */
    weft_status_t (*btl_register_place)(weft_btl_module_t *module, weft_btl_tag_t tag,
                                        size_t header_size, weft_btl_place_fn_t placefn,
                                        void *cbdata);

    /* Added in 1.5 (call it only if WEFT_MODULE_HAS_OP says the module has it; NULL: it
     * measured nothing). For a module with WEFT_BTL_FLAG_RECEIVER_CHOOSES: the bytes per second
     * it measured for way (WEFT_BTL_WAY_*) with messages of `bytes`, alone (stream 0) or back
     * to back (stream 1), on this host before the job; 0 if it did not measure that way. The
     * receivers start from these, and measure for themselves: a way the module found much
     * slower is then measured only as often as its cost allows, not tried first.
     * Blocking: no. Thread: any. */
    double (*btl_way_rate)(const weft_btl_module_t *module, size_t bytes, int stream, unsigned way);

    /* Operations added in 1.6 and later go here, at the end. */
};

/* ------------------------------------------------------------------------------------------ */
/* The component                                                                              */
/* ------------------------------------------------------------------------------------------ */

struct weft_btl_component {
    weft_mca_component_t mca; /* mca.struct_size = sizeof(weft_btl_component_t) */

    /*
     * Create the modules, one per usable link. Returns an array of *num_modules pointers that
     * the caller frees with free(); the modules stay the component's until btl_finalize.
     * Returns NULL with *num_modules = 0 when nothing is usable here. Called once, after a
     * successful query. Blocking: local. Thread: init.
     */
    weft_btl_module_t **(*init)(int *num_modules, int enable_progress_threads,
                                int enable_mpi_threads);

    /* Poll every module of the component once and run the callbacks that are due. Returns
     * the number of completions and arrivals handled. Blocking: no. Thread: any. NULL if the
     * component progresses on its own (WEFT_BTL_FLAG_ACTIVE_THREAD). */
    int (*progress)(void);
};

/* For the runtime, at MPI init, before the modex (the modules' init publishes their addresses):
 * open the framework, keep every component that accepts (by priority) and make their modules.
 * Errors (a bad --mca btl list, a named component that refuses) are printed. Defined in
 * btl/base (libweft), like the two below. Thread: init. */
weft_status_t weft_btl_select(void);

/* The BTL modules of this process, in the order their components were selected (the BML
 * sorts them per peer), from MPI init (after every component's init) until finalize; *count
 * gets how many. The array belongs to btl/base. Thread: any. */
weft_btl_module_t *const *weft_btl_modules(size_t *count);

/* For the runtime, at MPI finalize: btl_finalize every module, forget them and close the
 * framework. Never waits for a dead peer. Thread: init. */
void weft_btl_close(void);

/* ------------------------------------------------------------------------------------------ */
/* What the BTLs that offer put/get share (btl/base, in libweft)                              */
/* ------------------------------------------------------------------------------------------ */

/*
 * The RDMA protocol limits (ob1-protocols.rst) are parameters of each such BTL,
 * btl_<name>_rdma_pipeline_send_length, _rdma_pipeline_frag_size, _min_rdma_pipeline_size and
 * _flags, registered and applied by these functions so that every BTL reads them the same way.
 */
typedef struct weft_btl_rdma_params {
    weft_mca_param_t *send_length;  /* btl_<name>_rdma_pipeline_send_length */
    weft_mca_param_t *frag_size;    /* btl_<name>_rdma_pipeline_frag_size */
    weft_mca_param_t *min_pipeline; /* btl_<name>_min_rdma_pipeline_size */
    weft_mca_param_t *flags;        /* btl_<name>_flags */
} weft_btl_rdma_params_t;

/* Register the four parameters of btl component `component`, with its defaults as parameter
 * text ("256k"), from register_params. *params receives the handles. Returns what
 * weft_mca_param_register_table returns. Thread: init. */
weft_status_t weft_btl_rdma_params_register(const char *component, const char *pipeline_send_length,
                                            const char *pipeline_frag_size,
                                            const char *min_rdma_pipeline_size,
                                            weft_btl_rdma_params_t *params);

/* The checks of weft_btl_rdma_params_apply that need no module (every name in btl_<name>_flags
 * known, send among them), for a component's query: a bad value there must end the job, not
 * leave the BTL out. WEFT_SUCCESS, or WEFT_ERR_BAD_PARAM with a one-line reason in why. */
weft_status_t weft_btl_rdma_params_check(const char *component,
                                         const weft_btl_rdma_params_t *params, char *why,
                                         size_t why_len);

/* Set module's pipeline limits from the parameters and narrow its btl_flags to those named in
 * btl_<name>_flags (empty: all it has). Returns WEFT_SUCCESS, or WEFT_ERR_BAD_PARAM with a
 * one-line reason in why (why_len bytes, NUL-terminated) when a value cannot work: a flag the
 * module lacks, no send, a fragment size of 0. Thread: init. */
weft_status_t weft_btl_rdma_params_apply(const char *component,
                                         const weft_btl_rdma_params_t *params,
                                         weft_btl_module_t *module, char *why, size_t why_len);

/* The flags as text, e.g. "send,put,get,inplace" ("none" for none), into buf (len bytes,
 * NUL-terminated, cut if short); returns buf. Thread: any. */
const char *weft_btl_flags_string(uint32_t flags, char *buf, size_t len);

#ifdef __cplusplus
} /* extern "C" */

#include <type_traits>

static_assert(std::is_standard_layout_v<weft_btl_segment_t> &&
                  std::is_trivially_copyable_v<weft_btl_segment_t>,
              "weft_btl_segment_t must stay a plain C struct");
static_assert(std::is_standard_layout_v<weft_btl_descriptor_t> &&
                  std::is_trivially_copyable_v<weft_btl_descriptor_t>,
              "weft_btl_descriptor_t must stay a plain C struct");
static_assert(std::is_standard_layout_v<weft_btl_recv_descriptor_t> &&
                  std::is_trivially_copyable_v<weft_btl_recv_descriptor_t>,
              "weft_btl_recv_descriptor_t must stay a plain C struct");
static_assert(std::is_standard_layout_v<weft_btl_module_t> &&
                  std::is_trivially_copyable_v<weft_btl_module_t>,
              "weft_btl_module_t must stay a plain C struct");
static_assert(std::is_standard_layout_v<weft_btl_component_t> &&
                  std::is_trivially_copyable_v<weft_btl_component_t>,
              "weft_btl_component_t must stay a plain C struct");
static_assert(std::is_standard_layout_v<weft_btl_rdma_params_t> &&
                  std::is_trivially_copyable_v<weft_btl_rdma_params_t>,
              "weft_btl_rdma_params_t must stay a plain C struct");
static_assert(offsetof(weft_btl_component_t, mca) == 0,
              "the MCA descriptor must be the first member of weft_btl_component_t");
static_assert(offsetof(weft_btl_module_t, struct_size) == 0,
              "struct_size must be the first member of weft_btl_module_t");
#endif

#endif /* WEFT_BTL_H */
