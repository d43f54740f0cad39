/*
 * check_abi_headers.c: the framework ABI headers compile as C11, and a module and a component
 * of each framework can be written with designated initializers in declaration order. The
 * frozen layouts of the shared structs (the communicator's view, the request, mprobe's
 * message) are the same in C and in C++, and their inline accessors do what they say.
 * check_abi_headers_cxx.cc holds the same code for C++20, whose rules are stricter (order is
 * enforced, and g++ -Wextra wants every field named), which is why every field is named here.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <weft/comm.h>
#include <weft/convertor.h>
#include <weft/mca.h>
#include <weft/module.h>
#include <weft/op.h>
#include <weft/output.h>
#include <weft/request.h>
#include <weft/runtime.h>
#include <weft/status.h>
#include <weft/types.h>

#include <bml/bml.h>
#include <boot/boot.h>
#include <btl/btl.h>
#include <coll/coll.h>
#include <mtl/mtl.h>
#include <pml/pml.h>

/* Typed defaults: an operation a component lacks is NULL or one of these, never a cast. */

static weft_status_t check_query(int *priority, char *why, size_t why_len)
{
    (void)why;
    (void)why_len;
    *priority = 0;
    return WEFT_SUCCESS;
}

static weft_status_t
check_btl_put(weft_btl_module_t *module, weft_btl_endpoint_t *endpoint, void *local_address,
              uint64_t remote_address, weft_btl_registration_handle_t *local_handle,
              const weft_btl_registration_handle_t *remote_handle, size_t size, uint32_t flags,
              uint8_t order, weft_btl_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    (void)module;
    (void)endpoint;
    (void)local_address;
    (void)remote_address;
    (void)local_handle;
    (void)remote_handle;
    (void)size;
    (void)flags;
    (void)order;
    (void)cbfunc;
    (void)cbcontext;
    (void)cbdata;
    return WEFT_ERR_NOT_SUPPORTED;
}

static int check_pml_progress(weft_pml_module_t *module)
{
    (void)module;
    return 0;
}

static void check_bml_rails_changed(weft_proc_t *proc, void *cbdata)
{
    (void)proc;
    (void)cbdata;
}

static weft_status_t check_bml_register_rails_changed(weft_bml_module_t *module,
                                                      weft_bml_rails_changed_fn_t cbfunc,
                                                      void *cbdata)
{
    (void)module;
    (void)cbdata;
    cbfunc(NULL, NULL);
    return WEFT_SUCCESS;
}

static weft_status_t check_boot_poll_event(weft_boot_module_t *module, weft_boot_event_t *ev)
{
    (void)module;
    (void)ev;
    return WEFT_ERR_NOT_FOUND;
}

/* ---------------------------------------------------------------------------------------- */

weft_btl_module_t check_btl_module = {
    .struct_size = sizeof(weft_btl_module_t),
    .btl_flags = WEFT_BTL_FLAG_SEND | WEFT_BTL_FLAG_SEND_INPLACE,
    .btl_component = NULL,
    .btl_eager_limit = 4096,
    .btl_rndv_eager_limit = 4096,
    .btl_max_send_size = 65536,
    .btl_rdma_pipeline_send_length = 65536,
    .btl_rdma_pipeline_frag_size = 1048576,
    .btl_min_rdma_pipeline_size = 262144,
    .btl_put_limit = 0,
    .btl_get_limit = 0,
    .btl_put_alignment = 0,
    .btl_get_alignment = 0,
    .btl_registration_handle_size = 0,
    .btl_exclusivity = 0,
    .btl_latency = 10,
    .btl_bandwidth = 10000,
    .reserved = 0,
    .btl_add_procs = NULL,
    .btl_del_procs = NULL,
    .btl_register = NULL,
    .btl_register_error = NULL,
    .btl_finalize = NULL,
    .btl_alloc = NULL,
    .btl_free = NULL,
    .btl_prepare_src = NULL,
    .btl_send = NULL,
    .btl_sendi = NULL,
    .btl_put = check_btl_put,
    .btl_get = NULL,
    .btl_register_mem = NULL,
    .btl_deregister_mem = NULL,
    .btl_flush = NULL,
    .btl_dump = NULL,
    .btl_min_rdma_size = 0,
    .btl_max_rdma_size = 0,
    .btl_stream_min_rdma_size = 0,
    .btl_stream_max_rdma_size = 0,
    .btl_register_place = NULL,
    .btl_way_rate = NULL,
};

weft_btl_component_t check_btl_component = {
    .mca =
        {
            WEFT_MCA_COMPONENT_HEADER(weft_btl_component_t, "btl", WEFT_BTL_ABI_MAJOR,
                                      WEFT_BTL_ABI_MINOR, "check", 1, 0, 0),
            .register_params = NULL,
            .open = NULL,
            .query = check_query,
            .close = NULL,
        },
    .init = NULL,
    .progress = NULL,
};

weft_bml_module_t check_bml_module = {
    .struct_size = sizeof(weft_bml_module_t),
    .reserved = 0,
    .bml_add_procs = NULL,
    .bml_del_procs = NULL,
    .bml_add_btl = NULL,
    .bml_del_btl = NULL,
    .bml_del_proc_btl = NULL,
    .bml_register = NULL,
    .bml_register_error = NULL,
    .bml_finalize = NULL,
    .bml_progress = NULL,
    .bml_endpoint_get = NULL,
    .bml_endpoint_info = NULL,
    .bml_endpoint_count = NULL,
    .bml_endpoint_btl = NULL,
    .bml_endpoint_next = NULL,
    .bml_endpoint_find = NULL,
    .bml_register_rails_changed = check_bml_register_rails_changed,
    .bml_readd_proc_btl = NULL,
};

weft_bml_component_t check_bml_component = {
    .mca =
        {
            WEFT_MCA_COMPONENT_HEADER(weft_bml_component_t, "bml", WEFT_BML_ABI_MAJOR,
                                      WEFT_BML_ABI_MINOR, "check", 1, 0, 0),
            .register_params = NULL,
            .open = NULL,
            .query = check_query,
            .close = NULL,
        },
    .init = NULL,
};

weft_pml_module_t check_pml_module = {
    .struct_size = sizeof(weft_pml_module_t),
    .pml_flags = WEFT_PML_FLAG_FT,
    .pml_max_contextid = 65535,
    .pml_max_tag = 0x7fffffff,
    .pml_add_procs = NULL,
    .pml_del_procs = NULL,
    .pml_enable = NULL,
    .pml_progress = check_pml_progress,
    .pml_add_comm = NULL,
    .pml_del_comm = NULL,
    .pml_irecv_init = NULL,
    .pml_irecv = NULL,
    .pml_recv = NULL,
    .pml_isend_init = NULL,
    .pml_isend = NULL,
    .pml_send = NULL,
    .pml_iprobe = NULL,
    .pml_probe = NULL,
    .pml_improbe = NULL,
    .pml_mprobe = NULL,
    .pml_imrecv = NULL,
    .pml_mrecv = NULL,
    .pml_start = NULL,
    .pml_dump = NULL,
    .pml_revoke_comm = NULL,
};

weft_pml_component_t check_pml_component = {
    .mca =
        {
            WEFT_MCA_COMPONENT_HEADER(weft_pml_component_t, "pml", WEFT_PML_ABI_MAJOR,
                                      WEFT_PML_ABI_MINOR, "check", 1, 0, 0),
            .register_params = NULL,
            .open = NULL,
            .query = check_query,
            .close = NULL,
        },
    .init = NULL,
    .finalize = NULL,
};

weft_mtl_module_t check_mtl_module = {
    .struct_size = sizeof(weft_mtl_module_t),
    .mtl_flags = WEFT_MTL_FLAG_PROC_FAILURE,
    .mtl_max_contextid = 65535,
    .mtl_max_tag = 0x7fffffff,
    .mtl_request_size = sizeof(weft_mtl_request_t),
    .mtl_add_procs = NULL,
    .mtl_del_procs = NULL,
    .mtl_finalize = NULL,
    .mtl_send = NULL,
    .mtl_isend = NULL,
    .mtl_irecv = NULL,
    .mtl_iprobe = NULL,
    .mtl_improbe = NULL,
    .mtl_imrecv = NULL,
    .mtl_cancel = NULL,
    .mtl_add_comm = NULL,
    .mtl_del_comm = NULL,
    .mtl_progress = NULL,
};

weft_mtl_component_t check_mtl_component = {
    .mca =
        {
            WEFT_MCA_COMPONENT_HEADER(weft_mtl_component_t, "mtl", WEFT_MTL_ABI_MAJOR,
                                      WEFT_MTL_ABI_MINOR, "check", 1, 0, 0),
            .register_params = NULL,
            .open = NULL,
            .query = check_query,
            .close = NULL,
        },
    .init = NULL,
};

weft_coll_module_t check_coll_module = {
    .struct_size = sizeof(weft_coll_module_t),
    .reserved = 0,
    .coll_module_enable = NULL,
    .coll_module_disable = NULL,
    .coll_barrier = NULL,
    .coll_bcast = NULL,
    .coll_reduce = NULL,
    .coll_allreduce = NULL,
    .coll_gather = NULL,
    .coll_gatherv = NULL,
    .coll_scatter = NULL,
    .coll_scatterv = NULL,
    .coll_allgather = NULL,
    .coll_allgatherv = NULL,
    .coll_alltoall = NULL,
    .coll_alltoallv = NULL,
    .coll_alltoallw = NULL,
    .coll_reduce_scatter = NULL,
    .coll_reduce_scatter_block = NULL,
    .coll_scan = NULL,
    .coll_exscan = NULL,
    .coll_ibarrier = NULL,
    .coll_ibcast = NULL,
    .coll_ireduce = NULL,
    .coll_iallreduce = NULL,
    .coll_igather = NULL,
    .coll_igatherv = NULL,
    .coll_iscatter = NULL,
    .coll_iscatterv = NULL,
    .coll_iallgather = NULL,
    .coll_iallgatherv = NULL,
    .coll_ialltoall = NULL,
    .coll_ialltoallv = NULL,
    .coll_ialltoallw = NULL,
    .coll_ireduce_scatter = NULL,
    .coll_ireduce_scatter_block = NULL,
    .coll_iscan = NULL,
    .coll_iexscan = NULL,
    .coll_agree = NULL,
    .coll_iagree = NULL,
    .coll_iagree_group = NULL,
    .coll_neighbor_allgather = NULL,
    .coll_neighbor_allgatherv = NULL,
    .coll_neighbor_alltoall = NULL,
    .coll_neighbor_alltoallv = NULL,
    .coll_neighbor_alltoallw = NULL,
    .coll_ineighbor_allgather = NULL,
    .coll_ineighbor_allgatherv = NULL,
    .coll_ineighbor_alltoall = NULL,
    .coll_ineighbor_alltoallv = NULL,
    .coll_ineighbor_alltoallw = NULL,
};

weft_coll_component_t check_coll_component = {
    .mca =
        {
            WEFT_MCA_COMPONENT_HEADER(weft_coll_component_t, "coll", WEFT_COLL_ABI_MAJOR,
                                      WEFT_COLL_ABI_MINOR, "check", 1, 0, 0),
            .register_params = NULL,
            .open = NULL,
            .query = check_query,
            .close = NULL,
        },
    .init_query = NULL,
    .comm_query = NULL,
};

weft_boot_module_t check_boot_module = {
    .struct_size = sizeof(weft_boot_module_t),
    .boot_flags = WEFT_BOOT_FLAG_FAILURE_EVENTS,
    .boot_event_fd = -1,
    .reserved = 0,
    .boot_init = NULL,
    .boot_barrier = NULL,
    .boot_allgather = NULL,
    .boot_bcast = NULL,
    .boot_abort = NULL,
    .boot_finalize = NULL,
    .boot_poll_event = check_boot_poll_event,
};

weft_boot_component_t check_boot_component = {
    .mca =
        {
            WEFT_MCA_COMPONENT_HEADER(weft_boot_component_t, "boot", WEFT_BOOT_ABI_MAJOR,
                                      WEFT_BOOT_ABI_MINOR, "check", 1, 0, 0),
            .register_params = NULL,
            .open = NULL,
            .query = check_query,
            .close = NULL,
        },
    .init = NULL,
};

/* ---------------------------------------------------------------------------------------- */
/* The frozen layouts (LP64). A moved field changes the ABI of every PML and coll component. */

#define CHECK_AT(type, field, lp64)                                                                \
    static_assert(sizeof(void *) != 8 || offsetof(type, field) == (lp64), #field " moved")

CHECK_AT(weft_comm_view_t, cid, 0);
CHECK_AT(weft_comm_view_t, rank, 4);
CHECK_AT(weft_comm_view_t, size, 8);
CHECK_AT(weft_comm_view_t, peer_size, 12);
CHECK_AT(weft_comm_view_t, peer_world, 16);
CHECK_AT(weft_comm_view_t, local_world, 24);
CHECK_AT(weft_comm_view_t, flags, 32);
CHECK_AT(weft_comm_view_t, coll_seq, 36);
CHECK_AT(weft_comm_view_t, pml_state, 40);
CHECK_AT(weft_comm_view_t, group, 48);
CHECK_AT(weft_comm_view_t, remote_group, 56);
CHECK_AT(weft_comm_view_t, local_comm, 64);
CHECK_AT(weft_comm_view_t, refs, 72);
CHECK_AT(weft_comm_view_t, destroy, 80);
static_assert(sizeof(void *) != 8 || sizeof(weft_comm_view_t) == 88, "weft_comm_view_t grew");
CHECK_AT(weft_datatype_view_t, size, 0);
CHECK_AT(weft_datatype_view_t, dense, 8);
static_assert(sizeof(void *) != 8 || sizeof(weft_datatype_view_t) == 16,
              "weft_datatype_view_t grew");

CHECK_AT(weft_request_t, kind, 0);
CHECK_AT(weft_request_t, complete, 4);
CHECK_AT(weft_request_t, persistent, 5);
CHECK_AT(weft_request_t, active, 6);
CHECK_AT(weft_request_t, freed, 7);
CHECK_AT(weft_request_t, cancelled, 8);
CHECK_AT(weft_request_t, reported, 9);
CHECK_AT(weft_request_t, peer, 12);
CHECK_AT(weft_request_t, tag, 16);
CHECK_AT(weft_request_t, status, 24);
CHECK_AT(weft_request_t, comm, 48);
CHECK_AT(weft_request_t, bsend_block, 56);
CHECK_AT(weft_request_t, pml_data, 64);
CHECK_AT(weft_request_t, pml_free, 72);
CHECK_AT(weft_request_t, pml_start, 80);
CHECK_AT(weft_request_t, pml_cancel, 88);
static_assert(sizeof(void *) != 8 || sizeof(weft_request_t) == 96, "weft_request_t grew");
static_assert(sizeof(weft_request_kind_t) == 4, "weft_request_kind_t is not 4 bytes");

CHECK_AT(weft_mca_pvar_def_t, name, 0);
CHECK_AT(weft_mca_pvar_def_t, var_class, 8);
CHECK_AT(weft_mca_pvar_def_t, help, 16);
CHECK_AT(weft_mca_pvar_def_t, level, 24);
CHECK_AT(weft_mca_pvar_def_t, read, 32);
CHECK_AT(weft_mca_pvar_def_t, arg, 40);
static_assert(sizeof(void *) != 8 || sizeof(weft_mca_pvar_def_t) == 48,
              "weft_mca_pvar_def_t grew");

CHECK_AT(weft_message_t, comm, 0);
CHECK_AT(weft_message_t, source, 8);
CHECK_AT(weft_message_t, tag, 12);
CHECK_AT(weft_message_t, count, 16);
CHECK_AT(weft_message_t, pml_data, 24);

CHECK_AT(weft_msg_status_t, error, 8);
static_assert(sizeof(weft_convertor_state_t) >= 3 * sizeof(void *),
              "weft_convertor_state_t cannot hold the walker");

/* A communicator as a component sees it: nothing but the view. */
static int check_destroyed;
static void check_destroy(weft_comm_t *comm)
{
    (void)comm;
    ++check_destroyed;
}

static const int32_t check_local_world[3] = {4, 5, 6};
static const int32_t check_peer_world[2] = {7, 9};

static weft_comm_view_t check_view = {
    .cid = 12,
    .rank = 1,
    .size = 3,
    .peer_size = 2,
    .peer_world = check_peer_world,
    .local_world = check_local_world,
    .flags = WEFT_COMM_FLAG_INTER,
    .coll_seq = WEFT_COLL_TAG_COUNT - 1,
    .pml_state = NULL,
    .group = NULL,
    .remote_group = NULL,
    .local_comm = NULL,
    .refs = 1,
    .reserved = 0,
    .destroy = check_destroy,
};

/* Returns 0 if the communicator accessors read the view right, else the failed check. */
static int check_comm(void)
{
    weft_comm_t *comm = (weft_comm_t *)&check_view;
    int state = 0;
    if (weft_comm_cid(comm) != 12 || weft_comm_rank(comm) != 1 || weft_comm_size(comm) != 3)
        return 11;
    if (weft_comm_peer_size(comm) != 2 || !weft_comm_is_inter(comm))
        return 12;
    if (weft_comm_peer_world_rank(comm, 1) != 9 || weft_comm_peer_world_rank(comm, 2) != -1 ||
        weft_comm_peer_world_rank(comm, -1) != -1)
        return 13;
    if (weft_comm_local_world_rank(comm, 2) != 6 || weft_comm_local_world_rank(comm, 3) != -1)
        return 14;
    weft_comm_set_pml_state(comm, &state);
    if (weft_comm_pml_state(comm) != &state)
        return 15;
    /* The last tag of the space, then the first again. */
    if (weft_comm_coll_tag(comm) != WEFT_COLL_TAG_FIRST - (WEFT_COLL_TAG_COUNT - 1) ||
        weft_comm_coll_tag(comm) != WEFT_COLL_TAG_FIRST)
        return 16;
    if (!weft_tag_is_coll(WEFT_COLL_TAG_FIRST) || weft_tag_is_coll(-16) || weft_tag_is_coll(0) ||
        weft_tag_is_coll(WEFT_COLL_TAG_FIRST - WEFT_COLL_TAG_COUNT))
        return 17;
    weft_comm_retain(comm);
    weft_comm_release(comm);
    if (check_destroyed != 0 || check_view.refs != 1)
        return 18;
    weft_comm_release(comm);
    if (check_destroyed != 1)
        return 19;
    return 0;
}

/* Returns 0 if a request starts and moves through its states as documented. */
static int check_request(void)
{
    weft_request_t req;
    weft_comm_t *comm = (weft_comm_t *)&check_view;
    memset((void *)&req, 0xff, sizeof req); /* what a recycled request holds */
    weft_request_init(&req, WEFT_REQUEST_PML_RECV, comm, WEFT_ANY_SOURCE, 3);
    if (req.kind != WEFT_REQUEST_PML_RECV || req.comm != comm || req.peer != WEFT_ANY_SOURCE ||
        req.tag != 3)
        return 21;
    if (req.complete || req.persistent || req.active || req.freed || req.cancelled)
        return 22;
    if (req.status.error != WEFT_SUCCESS || req.status.count != 0 || req.bsend_block ||
        req.pml_data || req.pml_free || req.pml_start || req.pml_cancel)
        return 23;
    if (weft_request_state(&req) != WEFT_REQUEST_ACTIVE)
        return 24;
    req.status.error = WEFT_ERR_PROC_FAILED_PENDING;
    if (weft_request_state(&req) != WEFT_REQUEST_PENDING_FAILED)
        return 25;
    req.complete = true;
    if (weft_request_state(&req) != WEFT_REQUEST_COMPLETE)
        return 26;
    weft_request_init(&req, WEFT_REQUEST_PML_SEND, comm, 0, 0);
    req.persistent = true;
    if (weft_request_state(&req) != WEFT_REQUEST_INACTIVE)
        return 27;
    return 0;
}

/* Returns 0 if the size checks answer as they must, else the number of the failed check. */
static int check_has_op(void)
{
    weft_btl_module_t *btl = &check_btl_module;
    weft_pml_module_t *pml = &check_pml_module;
    weft_boot_module_t *boot = &check_boot_module;
    weft_coll_component_t *coll = &check_coll_component;
    weft_bml_module_t *bml = &check_bml_module;

    if (!WEFT_MODULE_HAS_OP(btl, weft_btl_module_t, btl_put)) {
        return 1;
    }
    if (WEFT_MODULE_HAS_OP(btl, weft_btl_module_t, btl_get)) { /* NULL: not provided */
        return 2;
    }
    if (!WEFT_MODULE_HAS_OP(pml, weft_pml_module_t, pml_progress)) {
        return 3;
    }
    /* A module built before boot_poll_event was appended: shorter struct, no such op. */
    weft_boot_module_t old_boot = check_boot_module;
    old_boot.struct_size = (uint32_t)offsetof(weft_boot_module_t, boot_poll_event);
    boot = &old_boot;
    if (WEFT_MODULE_HAS_OP(boot, weft_boot_module_t, boot_poll_event)) {
        return 4;
    }
    if (!WEFT_MODULE_HAS_FIELD(boot, weft_boot_module_t, boot_event_fd)) {
        return 5;
    }
    if (WEFT_COMPONENT_HAS_OP(coll, weft_coll_component_t, comm_query)) {
        return 6;
    }
    if (coll->mca.struct_size != sizeof(weft_coll_component_t)) {
        return 7;
    }
    /* bml 1.1 appended bml_register_rails_changed; a 1.0 module ends before it. */
    if (!WEFT_MODULE_HAS_OP(bml, weft_bml_module_t, bml_register_rails_changed) ||
        bml->bml_register_rails_changed(bml, check_bml_rails_changed, NULL) != WEFT_SUCCESS) {
        return 8;
    }
    weft_bml_module_t old_bml = check_bml_module;
    old_bml.struct_size = (uint32_t)offsetof(weft_bml_module_t, bml_register_rails_changed);
    bml = &old_bml;
    if (WEFT_MODULE_HAS_OP(bml, weft_bml_module_t, bml_register_rails_changed)) {
        return 9;
    }
    if (WEFT_BML_ABI_MINOR < 1) {
        return 10;
    }
    return 0;
}

int main(void)
{
    int rc = check_has_op();
    int comm_rc = check_comm();
    int request_rc = check_request();
    printf("ABI headers: modules and components of 6 frameworks filled by designated initializers; "
           "size checks %s; communicator view %s; request %s\n",
           rc == 0 ? "pass" : "FAIL", comm_rc == 0 ? "pass" : "FAIL",
           request_rc == 0 ? "pass" : "FAIL");
    if (comm_rc)
        printf("failed communicator check %d\n", comm_rc);
    if (request_rc)
        printf("failed request check %d\n", request_rc);
    return rc ? rc : comm_rc ? comm_rc : request_rc;
}
