/*
 * bml/bml.h: the BTL management layer (BML) framework ABI, version 1.2.
 *
 * The BML sits between a BTL-based PML (ob1, bfo) and the BTL modules. For each peer it keeps
 * an endpoint with three lists of rails, each rail being one BTL module and that module's
 * endpoint for the peer: the eager list (first fragment of a message, lowest latency first),
 * the send list (later send/receive fragments, striped by bandwidth) and the RDMA list (modules
 * with put or get). Only the modules of highest exclusivity that reach a peer are used for it.
 * The one component is r2.
 *
 * Lifecycle, and who calls what:
 *
 *   1. register, open, query   bml/base through the MCA repository (weft/mca.h); the highest
 *                              priority wins, the others are closed.
 *   2. init                    bml/base calls init() on the winner, which returns the module.
 *   3. add_btl                 bml/base, once for each module btl/base selected (btl.h), before
 *                              any add_procs. Modules added later reach only procs added later.
 *   4. register, register_error
 *                              the PML registers its tag callbacks and its error callback; the
 *                              BML passes them to every BTL module, present and future.
 *   5. add_procs               the PML, for the procs of MPI_COMM_WORLD and again for procs
 *                              connected later; the BML calls btl_add_procs on each module and
 *                              builds the peers' endpoints.
 *   6. use                     the PML looks up a peer's endpoint and picks rails through the
 *                              endpoint accessors, then calls the BTL module directly. The
 *                              progress engine calls progress. On a link error bfo removes the
 *                              rail with del_proc_btl (one peer) or del_btl (every peer),
 *                              and the BML tells it through the rails-changed callback (1.1) so
 *                              that it can rebuild its cached copy of that peer's rails.
 *   7. del_procs, finalize     the PML at MPI finalize, then bml/base closes the component. The
 *                              BTL modules are finalized by btl/base, not by the BML.
 *
 * Threading: see weft/module.h. The endpoint accessors and del_proc_btl/del_btl are class "any":
 * the PML calls them from BTL callbacks on the progress thread as well as from MPI threads, so
 * the BML guards its lists itself: each of these operations is atomic with respect to the
 * others (an accessor sees a list either before or after a removal, never half-way). Accessors
 * copy a rail out (weft_bml_btl_t) instead of handing out a pointer into a list, so that a rail
 * removed concurrently cannot leave the caller with a dangling pointer; a removed module stays
 * alive (and merely fails its sends) until btl/base finalizes it. Two calls that each read a
 * list (count, then btl) may see different lists in between; a caller that needs a consistent
 * set of rails keeps its own copy and rebuilds it from the rails-changed callback. The BML
 * never holds its guard while it calls out (into a BTL module or a PML callback).
 *
 * A rail removed from a peer stays removed for the rest of the job (bfo-design.txt), unless the
 * PML takes it back with readd_proc_btl (1.2; bfo's pml_bfo_readmit_interval): a later
 * add_procs for that peer does not ask the removed module for it again, and a module removed
 * with del_btl is not taken again by add_btl nor used for procs added later. (r2 with
 * bml_r2_standby also falls back to modules of lower exclusivity once every rail of the
 * highest one is removed for a peer.)
 *
 * A component exports one symbol, mca_bml_<name>_component, of type weft_bml_component_t, with
 * mca.framework "bml" and framework_abi_major/minor WEFT_BML_ABI_MAJOR/MINOR. New operations
 * are appended to weft_bml_module_t (bumping WEFT_BML_ABI_MINOR); callers check
 * WEFT_MODULE_HAS_OP before calling any operation added after 1.0.
 */
#ifndef WEFT_BML_H
#define WEFT_BML_H

#include <stddef.h>
#include <stdint.h>

#include <btl/btl.h>
#include <weft/mca.h>
#include <weft/module.h>
#include <weft/status.h>
#include <weft/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_BML_ABI_MAJOR 1
#define WEFT_BML_ABI_MINOR 2

typedef struct weft_bml_module weft_bml_module_t;
typedef struct weft_bml_component weft_bml_component_t;

/* One peer's rails. Opaque: owned by the BML, read only through the accessor operations, valid
 * from the add_procs that created it until del_procs for that peer. */
typedef struct weft_bml_endpoint weft_bml_endpoint_t;

/* Which of a peer's lists an accessor reads. */
typedef enum weft_bml_list {
    WEFT_BML_LIST_EAGER = 0,
    WEFT_BML_LIST_SEND = 1,
    WEFT_BML_LIST_RDMA = 2
} weft_bml_list_t;

/* One rail for one peer, copied out of a list. Layout frozen for ABI major 1. */
typedef struct weft_bml_btl {
    weft_btl_module_t *btl;            /* the BTL module */
    weft_btl_endpoint_t *btl_endpoint; /* that module's endpoint for the peer */
    double weight;      /* this rail's share of the list's bandwidth, 0..1, for striping */
    uint32_t btl_flags; /* btl->btl_flags, narrowed to what works with this peer */
    uint32_t reserved;  /* zero */
} weft_bml_btl_t;

/* Called by the BML after it changed a peer's lists (a removal: del_proc_btl or del_btl), so
 * that the PML can rebuild its cached copy of that peer's rails. proc is the peer whose lists
 * changed, never NULL. It says only that they changed: the callee reads them again through the
 * accessors (which it may call: the BML holds no lock during the call). Two removals racing on
 * different threads may report in either order; lists read after the last report are current.
 * Runs on the thread that called the removing operation, before that operation returns.
 * Thread: any. Must not block. (1.1) */
typedef void (*weft_bml_rails_changed_fn_t)(weft_proc_t *proc, void *cbdata);

/* What the PML needs to know about a peer as a whole. The caller sets struct_size; the BML
 * fills only the fields that fit, so the struct can grow. */
typedef struct weft_bml_endpoint_info {
    uint32_t struct_size;             /* sizeof(weft_bml_endpoint_info_t) as the caller was built */
    uint32_t btl_flags_or;            /* OR of btl_flags over the peer's rails */
    weft_proc_t *proc;                /* the peer */
    size_t max_send_size;             /* smallest btl_max_send_size over the send list */
    size_t rdma_pipeline_send_length; /* largest over the send list */
    size_t rdma_pipeline_frag_size;   /* smallest over the RDMA list */
    size_t min_rdma_pipeline_size;    /* largest over the RDMA list */
} weft_bml_endpoint_info_t;

struct weft_bml_module {
    uint32_t struct_size; /* sizeof(weft_bml_module_t) as the component was built */
    uint32_t reserved;    /* zero */

    /*
     * Reach procs[0..nprocs-1] through every BTL module and build their endpoints. Sets
     * reachable[i] = 1 for each proc that has an eager and a send rail afterwards (the caller
     * zeroes the array); an unreachable proc still gets an endpoint, with empty lists, so that
     * endpoint_get answers WEFT_ERR_UNREACH for it. Calling it again for a proc rebuilds that
     * proc's lists, without the rails removed from it (see above). Does not call the
     * rails-changed callback: the PML reads the rails after this returns. Blocking: local.
     * Memory: arrays are the caller's. Returns WEFT_SUCCESS (even if some proc is unreachable:
     * the PML decides whether that is fatal), WEFT_ERR_OUT_OF_RESOURCE, or the error of a
     * module's btl_add_procs. Thread: init.
     */
    weft_status_t (*bml_add_procs)(weft_bml_module_t *module, weft_proc_t *const *procs,
                                   size_t nprocs, uint8_t *reachable);

    /* Drop the BML's endpoints of procs (their rail lists). The BTL modules keep their own
     * endpoints for them until btl_finalize (btl/base), which releases every one; the BML does
     * not call btl_del_procs. Never waits for a dead peer. Blocking: local. Returns
     * WEFT_SUCCESS, WEFT_ERR_BAD_PARAM. Thread: init. */
    weft_status_t (*bml_del_procs)(weft_bml_module_t *module, weft_proc_t *const *procs,
                                   size_t nprocs);

    /* Take a BTL module into use: registers on it every tag callback and the error callback
     * registered so far (a module that refuses the error callback is still taken). The module
     * stays btl/base's. Blocking: local. Returns WEFT_SUCCESS, WEFT_ERR_EXISTS (already in use,
     * or removed by del_btl: it stays removed), WEFT_ERR_OUT_OF_RESOURCE, or the error of the
     * module's btl_register (the module is not taken). Thread: init. */
    weft_status_t (*bml_add_btl)(weft_bml_module_t *module, weft_btl_module_t *btl);

    /* Remove a BTL module from every peer's lists (a whole rail failed), and from the modules
     * used for procs added later. Fragments already given to it still complete through their
     * callbacks. Calls the rails-changed callback once for each peer that lost a rail. Blocking:
     * local. Returns WEFT_SUCCESS, WEFT_ERR_NOT_FOUND (not a module in use: never added, or
     * already removed), WEFT_ERR_UNREACH (some peer that lost a rail has no eager or send rail
     * left: it was still removed). Thread: any. */
    weft_status_t (*bml_del_btl)(weft_bml_module_t *module, weft_btl_module_t *btl);

    /* Remove one BTL module from one peer's lists (bfo, after a link error for that peer), then
     * call the rails-changed callback for that peer. Blocking: local. Returns WEFT_SUCCESS,
     * WEFT_ERR_NOT_FOUND (proc was never added, or btl is in none of its lists: nothing
     * changed), WEFT_ERR_UNREACH (the peer has no eager or send rail left: it was still
     * removed). Thread: any. */
    weft_status_t (*bml_del_proc_btl)(weft_bml_module_t *module, weft_proc_t *proc,
                                      weft_btl_module_t *btl);

    /* Register a receive callback for tag on every BTL module, present and added later (a later
     * call for the same tag replaces it). Blocking: no. Returns WEFT_SUCCESS,
     * WEFT_ERR_BAD_PARAM (cbfunc NULL, or a present module refused: the first such error; the
     * callback is still remembered for the others and for later modules). Thread: init. */
    weft_status_t (*bml_register)(weft_bml_module_t *module, weft_btl_tag_t tag,
                                  weft_btl_recv_fn_t cbfunc, void *cbdata);

    /* Register the error callback on every BTL module, present and added later. A module that
     * refuses (cannot survive errors) keeps its errors fatal. Blocking: no. Returns
     * WEFT_SUCCESS (some present module took it, or none is present yet),
     * WEFT_ERR_NOT_SUPPORTED (every present module refused). Thread: init. */
    weft_status_t (*bml_register_error)(weft_bml_module_t *module, weft_btl_error_fn_t cbfunc,
                                        void *cbdata);

    /* Release every endpoint and the module itself. Blocking: local. Returns WEFT_SUCCESS or an
     * error (the module is gone either way). Thread: init. */
    weft_status_t (*bml_finalize)(weft_bml_module_t *module);

    /* Progress the BTL components in use once. Returns the number of events handled.
     * Blocking: no. Thread: any. */
    int (*bml_progress)(weft_bml_module_t *module);

    /* The endpoint of proc, set only on WEFT_SUCCESS. Blocking: no. Returns WEFT_SUCCESS,
     * WEFT_ERR_NOT_FOUND (never added, or deleted by del_procs), WEFT_ERR_UNREACH (no eager or
     * send rail left, or none ever). Thread: any. */
    weft_status_t (*bml_endpoint_get)(weft_bml_module_t *module, weft_proc_t *proc,
                                      weft_bml_endpoint_t **endpoint);

    /* Fill info (up to info->struct_size) for endpoint. Blocking: no. Returns WEFT_SUCCESS,
     * WEFT_ERR_BAD_PARAM. Thread: any. */
    weft_status_t (*bml_endpoint_info)(weft_bml_module_t *module, weft_bml_endpoint_t *endpoint,
                                       weft_bml_endpoint_info_t *info);

    /* Number of rails in a list now; it may shrink at any moment. Blocking: no. Thread: any. */
    size_t (*bml_endpoint_count)(weft_bml_module_t *module, weft_bml_endpoint_t *endpoint,
                                 weft_bml_list_t list);

    /* Copy rail `index` of a list into *out. Blocking: no. Returns WEFT_SUCCESS,
     * WEFT_ERR_NOT_FOUND (index past the end). Thread: any. */
    weft_status_t (*bml_endpoint_btl)(weft_bml_module_t *module, weft_bml_endpoint_t *endpoint,
                                      weft_bml_list_t list, size_t index, weft_bml_btl_t *out);

    /* Copy the next rail of a list, round-robin per endpoint and list, into *out. Blocking: no.
     * Returns WEFT_SUCCESS, WEFT_ERR_UNREACH (the list is empty). Thread: any. */
    weft_status_t (*bml_endpoint_next)(weft_bml_module_t *module, weft_bml_endpoint_t *endpoint,
                                       weft_bml_list_t list, weft_bml_btl_t *out);

    /* Copy the rail of a list that uses BTL module btl into *out (an RDMA rail matching the
     * eager rail a message came in on). Blocking: no. Returns WEFT_SUCCESS,
     * WEFT_ERR_NOT_FOUND. Thread: any. */
    weft_status_t (*bml_endpoint_find)(weft_bml_module_t *module, weft_bml_endpoint_t *endpoint,
                                       weft_bml_list_t list, const weft_btl_module_t *btl,
                                       weft_bml_btl_t *out);

    /* Operations added in 1.1 and later go here, at the end. Check WEFT_MODULE_HAS_OP first. */

    /* Set the one rails-changed callback (see weft_bml_rails_changed_fn_t), replacing any
     * earlier one; NULL removes it. The BML calls it after every change del_proc_btl or del_btl
     * makes to a peer's lists, outside its guard. Blocking: no. Returns WEFT_SUCCESS.
     * Thread: init. (1.1) */
    weft_status_t (*bml_register_rails_changed)(weft_bml_module_t *module,
                                                weft_bml_rails_changed_fn_t cbfunc, void *cbdata);

    /* Take btl back into proc's lists after del_proc_btl or del_btl removed it (a failover PML
     * re-admitting a rail, pml_bfo_readmit_interval): the module is asked for the peer again
     * (btl_add_procs; a module whose endpoint for it failed starts it over), and if it reaches
     * the peer, the peer's lists are made anew with it (by exclusivity, as at add_procs) and
     * the rails-changed callback is called. Other peers keep it removed. Blocking: local.
     * Returns WEFT_SUCCESS, WEFT_ERR_NOT_FOUND (proc unknown, or btl not removed for it),
     * WEFT_ERR_UNREACH (the module does not reach proc now: it stays removed), or the error of
     * btl_add_procs. Thread: any. (1.2) */
    weft_status_t (*bml_readd_proc_btl)(weft_bml_module_t *module, weft_proc_t *proc,
                                        weft_btl_module_t *btl);
};

struct weft_bml_component {
    weft_mca_component_t mca; /* mca.struct_size = sizeof(weft_bml_component_t) */

    /* Create the module, with no BTL and no peer yet. NULL refuses (bml/base then fails
     * init with the reason logged by the component). Blocking: local. Thread: init. */
    weft_bml_module_t *(*init)(int enable_progress_threads, int enable_mpi_threads);
};

/* For a PML that runs over the BML (its init): open the bml framework, pick its one component
 * (--mca bml, priorities) and make the module, with no BTL and no peer yet; the caller adds the
 * BTL modules (weft_btl_modules, btl.h) and finalizes the module before weft_bml_close.
 * Returns WEFT_SUCCESS, or an error with the reason printed. Defined in bml/base (libweft).
 * Thread: init. */
weft_status_t weft_bml_select(int enable_progress_threads, int enable_mpi_threads,
                              weft_bml_module_t **module);
/* Close the bml framework after the module was finalized. Thread: init. */
void weft_bml_close(void);

#ifdef __cplusplus
} /* extern "C" */

#include <type_traits>

static_assert(std::is_standard_layout_v<weft_bml_btl_t> &&
                  std::is_trivially_copyable_v<weft_bml_btl_t>,
              "weft_bml_btl_t must stay a plain C struct");
static_assert(std::is_standard_layout_v<weft_bml_endpoint_info_t> &&
                  std::is_trivially_copyable_v<weft_bml_endpoint_info_t>,
              "weft_bml_endpoint_info_t must stay a plain C struct");
static_assert(std::is_standard_layout_v<weft_bml_module_t> &&
                  std::is_trivially_copyable_v<weft_bml_module_t>,
              "weft_bml_module_t must stay a plain C struct");
static_assert(std::is_standard_layout_v<weft_bml_component_t> &&
                  std::is_trivially_copyable_v<weft_bml_component_t>,
              "weft_bml_component_t must stay a plain C struct");
static_assert(offsetof(weft_bml_component_t, mca) == 0,
              "the MCA descriptor must be the first member of weft_bml_component_t");
static_assert(offsetof(weft_bml_module_t, struct_size) == 0,
              "struct_size must be the first member of weft_bml_module_t");
#endif

#endif /* WEFT_BML_H */
