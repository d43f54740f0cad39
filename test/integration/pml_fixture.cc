// pml/fixture: a TEST FIXTURE, not a messaging layer. It exists so that a test can start a job
// in which one rank selects a different PML than the others and check that MPI_Init stops with
// a clear error instead of hanging. Its init hands out a module whose operations all answer
// WEFT_ERR_NOT_SUPPORTED; the same-PML check ends the job before any of them is called.
#include <weft/mca.h>

#include <pml/pml.h>

namespace {

weft_pml_module_t g_module;

weft_status_t refuse_procs(weft_pml_module_t *, weft_proc_t *const *, size_t)
{
    return WEFT_ERR_NOT_SUPPORTED;
}
weft_status_t refuse_enable(weft_pml_module_t *, int) { return WEFT_ERR_NOT_SUPPORTED; }
int no_progress(weft_pml_module_t *) { return 0; }
weft_status_t refuse_comm(weft_pml_module_t *, weft_comm_t *) { return WEFT_ERR_NOT_SUPPORTED; }
weft_status_t refuse_recv_init(weft_pml_module_t *, void *, size_t, weft_datatype_t *, int, int,
                               weft_comm_t *, weft_request_t **)
{
    return WEFT_ERR_NOT_SUPPORTED;
}
weft_status_t refuse_recv(weft_pml_module_t *, void *, size_t, weft_datatype_t *, int, int,
                          weft_comm_t *, weft_msg_status_t *)
{
    return WEFT_ERR_NOT_SUPPORTED;
}
weft_status_t refuse_send_init(weft_pml_module_t *, const void *, size_t, weft_datatype_t *, int,
                               int, weft_send_mode_t, weft_comm_t *, weft_request_t **)
{
    return WEFT_ERR_NOT_SUPPORTED;
}
weft_status_t refuse_send(weft_pml_module_t *, const void *, size_t, weft_datatype_t *, int, int,
                          weft_send_mode_t, weft_comm_t *)
{
    return WEFT_ERR_NOT_SUPPORTED;
}
weft_status_t refuse_iprobe(weft_pml_module_t *, int, int, weft_comm_t *, int *,
                            weft_msg_status_t *)
{
    return WEFT_ERR_NOT_SUPPORTED;
}
weft_status_t refuse_probe(weft_pml_module_t *, int, int, weft_comm_t *, weft_msg_status_t *)
{
    return WEFT_ERR_NOT_SUPPORTED;
}
weft_status_t refuse_improbe(weft_pml_module_t *, int, int, weft_comm_t *, int *, weft_message_t **,
                             weft_msg_status_t *)
{
    return WEFT_ERR_NOT_SUPPORTED;
}
weft_status_t refuse_mprobe(weft_pml_module_t *, int, int, weft_comm_t *, weft_message_t **,
                            weft_msg_status_t *)
{
    return WEFT_ERR_NOT_SUPPORTED;
}
weft_status_t refuse_imrecv(weft_pml_module_t *, void *, size_t, weft_datatype_t *,
                            weft_message_t **, weft_request_t **)
{
    return WEFT_ERR_NOT_SUPPORTED;
}
weft_status_t refuse_mrecv(weft_pml_module_t *, void *, size_t, weft_datatype_t *,
                           weft_message_t **, weft_msg_status_t *)
{
    return WEFT_ERR_NOT_SUPPORTED;
}
weft_status_t refuse_start(weft_pml_module_t *, size_t, weft_request_t **)
{
    return WEFT_ERR_NOT_SUPPORTED;
}
weft_status_t no_dump(weft_pml_module_t *, weft_comm_t *, int) { return WEFT_SUCCESS; }
weft_status_t refuse_revoke(weft_pml_module_t *, weft_comm_t *, int)
{
    return WEFT_ERR_NOT_SUPPORTED;
}

weft_pml_module_t *init(int, int)
{
    g_module = weft_pml_module_t{
        .struct_size = sizeof(weft_pml_module_t),
        .pml_flags = 0,
        .pml_max_contextid = 0,
        .pml_max_tag = 0,
        .pml_add_procs = refuse_procs,
        .pml_del_procs = refuse_procs,
        .pml_enable = refuse_enable,
        .pml_progress = no_progress,
        .pml_add_comm = refuse_comm,
        .pml_del_comm = refuse_comm,
        .pml_irecv_init = refuse_recv_init,
        .pml_irecv = refuse_recv_init,
        .pml_recv = refuse_recv,
        .pml_isend_init = refuse_send_init,
        .pml_isend = refuse_send_init,
        .pml_send = refuse_send,
        .pml_iprobe = refuse_iprobe,
        .pml_probe = refuse_probe,
        .pml_improbe = refuse_improbe,
        .pml_mprobe = refuse_mprobe,
        .pml_imrecv = refuse_imrecv,
        .pml_mrecv = refuse_mrecv,
        .pml_start = refuse_start,
        .pml_dump = no_dump,
        .pml_revoke_comm = refuse_revoke,
    };
    return &g_module;
}

weft_status_t finalize() { return WEFT_SUCCESS; }

// Never chosen unless named (--mca pml fixture).
weft_status_t query(int *priority, char *, size_t)
{
    *priority = 1;
    return WEFT_SUCCESS;
}

} // namespace

extern "C" {
extern const weft_pml_component_t mca_pml_fixture_component;
const weft_pml_component_t mca_pml_fixture_component = {
    .mca = {WEFT_MCA_COMPONENT_HEADER(weft_pml_component_t, "pml", WEFT_PML_ABI_MAJOR,
                                      WEFT_PML_ABI_MINOR, "fixture", 0, 1, 0),
            .register_params = nullptr, .open = nullptr, .query = query, .close = nullptr},
    .init = init,
    .finalize = finalize,
};
}
