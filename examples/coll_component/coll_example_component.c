/*
 * coll/example: a collective component built outside the Weft tree, against the installed
 * headers alone (pkg-config weft-mca). It provides one operation, allreduce, for
 * intracommunicators; every other collective stays with the modules below it (coll/basic).
 *
 * Its allreduce is simple and right rather than fast: every rank sends its contribution to
 * rank 0, which reduces them in rank order (so non-commutative user ops are right too) and
 * sends the result back. It shows what a coll component reads of a communicator (weft/comm.h),
 * how it sends through the job's PML on a tag of the collective's own, how it reduces
 * (weft/op.h), and how it declines a call it does not want (a datatype whose data is not
 * contiguous, or more bytes than coll_example_max_bytes: the module below it then takes that call).
 *
 * With --mca coll_base_verbose 10 the framework lists, per communicator, which module serves
 * each operation (allreduce=example), and the component says at the end how many calls it
 * served.
 */
#include <coll/coll.h>
#include <pml/pml.h>
#include <weft/comm.h>
#include <weft/mca.h>
#include <weft/op.h>
#include <weft/output.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static weft_mca_param_t *params[2]; /* priority, max_bytes */
static unsigned long calls_served, calls_declined;

static weft_status_t example_register_params(void)
{
    static const weft_mca_param_def_t defs[] = {
        {.name = "priority",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "50",
         .help = "Priority of the example's allreduce (coll/basic has 10, coll/sm 30); 0 or "
                 "less turns it off.",
         .level = 3,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = NULL,
         .synonyms = NULL,
         .range = NULL},
        /* Every rank must decline the same calls, so every rank needs the same value. */
        {.name = "max_bytes",
         .type = WEFT_MCA_PARAM_SIZE,
         .default_value = "64k",
         .help = "Largest allreduce, in bytes, the example serves; larger ones it declines and "
                 "the next module (coll/basic) serves.",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = NULL,
         .synonyms = NULL,
         .range = NULL},
    };
    return weft_mca_param_register_table("coll", "example", defs, 2, sizeof defs[0], params);
}

static weft_status_t example_query(int *priority, char *why, size_t why_len)
{
    const int64_t p = weft_mca_param_int(params[0]);
    if (p <= 0) {
        snprintf(why, why_len, "coll_example_priority is %lld", (long long)p);
        return WEFT_ERR_NOT_AVAILABLE;
    }
    *priority = (int)p;
    return WEFT_SUCCESS;
}

static weft_status_t example_close(void)
{
    if (weft_output_verbosity("coll") >= 10)
        weft_output(WEFT_OUTPUT_INFO, "coll/example: served %lu allreduce calls, declined %lu",
                    calls_served, calls_declined);
    return WEFT_SUCCESS;
}

static weft_status_t example_allreduce(const void *sendbuf, void *recvbuf, size_t count,
                                       weft_datatype_t *dtype, weft_op_t *op, weft_comm_t *comm,
                                       weft_coll_module_t *module)
{
    (void)module;
    /* Decline before communicating, on what every rank passes alike (coll.h): coll/basic
     * takes the call. */
    const size_t bytes = count * weft_datatype_size(dtype);
    if (!weft_datatype_is_contiguous(dtype, count) || bytes > weft_mca_param_size(params[1])) {
        ++calls_declined;
        return WEFT_ERR_NOT_SUPPORTED;
    }
    weft_pml_module_t *pml = weft_pml_selected();
    const int tag = weft_comm_coll_tag(comm);
    if (sendbuf != WEFT_IN_PLACE && bytes)
        memcpy(recvbuf, sendbuf, bytes);
    weft_status_t rc = WEFT_SUCCESS;
    if (weft_comm_rank(comm) == 0) {
        char *part = malloc(bytes ? bytes : 1);
        if (!part)
            return WEFT_ERR_OUT_OF_RESOURCE;
        for (int r = 1; r < weft_comm_size(comm) && rc == WEFT_SUCCESS; ++r) {
            weft_msg_status_t st;
            rc = pml->pml_recv(pml, part, count, dtype, r, tag, comm, &st);
            /* recvbuf holds ranks 0..r-1, which go first: part = recvbuf op part. */
            if (rc == WEFT_SUCCESS)
                rc = weft_op_reduce(op, recvbuf, part, count, dtype);
            if (rc == WEFT_SUCCESS && bytes)
                memcpy(recvbuf, part, bytes);
        }
        free(part);
        for (int r = 1; r < weft_comm_size(comm) && rc == WEFT_SUCCESS; ++r)
            rc = pml->pml_send(pml, recvbuf, count, dtype, r, tag, WEFT_SEND_STANDARD, comm);
    } else {
        weft_msg_status_t st;
        rc = pml->pml_send(pml, recvbuf, count, dtype, 0, tag, WEFT_SEND_STANDARD, comm);
        if (rc == WEFT_SUCCESS)
            rc = pml->pml_recv(pml, recvbuf, count, dtype, 0, tag, comm, &st);
    }
    ++calls_served;
    return rc;
}

/* The module holds no state of its own: one serves every communicator, and is never freed. */
static weft_status_t example_module_disable(weft_coll_module_t *module, weft_comm_t *comm)
{
    (void)module;
    (void)comm;
    return WEFT_SUCCESS;
}

static weft_coll_module_t example_module = {
    .struct_size = sizeof(weft_coll_module_t),
    .reserved = 0,
    .coll_module_enable = NULL,
    .coll_module_disable = example_module_disable,
    .coll_barrier = NULL,
    .coll_bcast = NULL,
    .coll_reduce = NULL,
    .coll_allreduce = example_allreduce,
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
};

/* Intracommunicators only: an intercommunicator's allreduce has other semantics (each group
 * gets the other's result), which this module does not implement. */
static weft_coll_module_t *example_comm_query(weft_comm_t *comm, int *priority)
{
    if (weft_comm_is_inter(comm))
        return NULL;
    *priority = (int)weft_mca_param_int(params[0]);
    return &example_module;
}

/* The one exported symbol: mca_<framework>_<name>_component. */
const weft_coll_component_t mca_coll_example_component = {
    .mca = {WEFT_MCA_COMPONENT_HEADER(weft_coll_component_t, "coll", WEFT_COLL_ABI_MAJOR,
                                      WEFT_COLL_ABI_MINOR, "example", 0, 1, 0),
            .register_params = example_register_params, .open = NULL, .query = example_query,
            .close = example_close},
    .init_query = NULL,
    .comm_query = example_comm_query,
};
