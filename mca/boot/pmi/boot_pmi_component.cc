// boot/pmi: bootstrap under Slurm (srun --mpi=pmi2) or MPICH's hydra through
// Weft's PMI-1/PMI-2 wire client; collectives ride on the KVS.
#include "pmi_client.h"

#include <boot/boot.h>
#include <weft/mca.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace weft::boot::pmi_comp {

namespace {

weft_mca_param_t *version_param;

struct State {
    pmi::Client client;
    int epoch = 1; // every collective uses fresh keys
} * S;

void report(const std::string &error)
{
    std::fprintf(stderr, "weft: boot/pmi: %s\n", error.c_str());
}

weft_status_t checked(weft_status_t rc, const std::string &error)
{
    if (rc != WEFT_SUCCESS)
        report(error);
    return rc;
}

weft_status_t boot_init(weft_boot_module_t *, int *rank, int *size, char *jobid, size_t jobid_len)
{
    S = new State;
    std::string error;
    if (weft_status_t rc = S->client.init(weft_mca_param_enum(version_param), error);
        rc != WEFT_SUCCESS)
        return checked(rc, error);
    std::string jid = "pmi-" + S->client.jobid();
    if (jid.size() + 1 > jobid_len)
        return WEFT_ERR_TRUNCATE;
    std::memcpy(jobid, jid.c_str(), jid.size() + 1);
    *rank = S->client.rank();
    *size = S->client.size();
    return WEFT_SUCCESS;
}

weft_status_t boot_barrier(weft_boot_module_t *)
{
    std::string error;
    return checked(S->client.fence(error), error);
}

weft_status_t boot_allgather(weft_boot_module_t *, const void *in, void *out, size_t len)
{
    std::string error;
    return checked(pmi::kvs_allgather(S->client, S->epoch++, in, out, len, error), error);
}

weft_status_t boot_bcast(weft_boot_module_t *, void *buf, size_t len, int root)
{
    if (root < 0 || root >= S->client.size())
        return WEFT_ERR_BAD_PARAM;
    std::string error;
    return checked(pmi::kvs_bcast(S->client, S->epoch++, buf, len, root, error), error);
}

weft_status_t boot_abort(weft_boot_module_t *, int code, const char *msg)
{
    return S->client.abort(code, msg ? msg : "");
}

weft_status_t boot_finalize(weft_boot_module_t *)
{
    weft_status_t rc = S->client.finalize();
    delete S;
    S = nullptr;
    return rc;
}

weft_boot_module_t module = {
    .struct_size = sizeof(weft_boot_module_t),
    .boot_flags = 0,
    .boot_event_fd = -1,
    .reserved = 0,
    .boot_init = boot_init,
    .boot_barrier = boot_barrier,
    .boot_allgather = boot_allgather,
    .boot_bcast = boot_bcast,
    .boot_abort = boot_abort,
    .boot_finalize = boot_finalize,
    .boot_poll_event = weft_boot_default_poll_event, // no failure events over PMI
};

weft_status_t register_params()
{
    static const weft_mca_enum_value_t versions[] = {{"auto", 0}, {"1", 1}, {"2", 2}, {nullptr, 0}};
    const weft_mca_param_def_t defs[] = {
        {.name = "version",
         .type = WEFT_MCA_PARAM_ENUM,
         .default_value = "auto",
         .help = "PMI wire version to speak: 1, 2, or auto (2 when PMI_JOBID is set, as under "
                 "Slurm; 1 otherwise, as under MPICH's hydra).",
         .level = 4,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = versions,
         .synonyms = nullptr,
         .range = nullptr},
    };
    return weft_mca_param_register_table("boot", "pmi", defs, 1, sizeof defs[0], &version_param);
}

weft_status_t query(int *priority, char *why, size_t why_len)
{
    if (pmi::Client::available()) {
        *priority = 40;
        return WEFT_SUCCESS;
    }
    std::snprintf(why, why_len,
                  "neither PMI_FD nor PMI_PORT is set (not started by a PMI launcher)");
    return WEFT_ERR_NOT_AVAILABLE;
}

weft_boot_module_t *init() { return &module; }

} // namespace

} // namespace weft::boot::pmi_comp

extern "C" {
extern const weft_boot_component_t mca_boot_pmi_component;
const weft_boot_component_t mca_boot_pmi_component = {
    .mca = {WEFT_MCA_COMPONENT_HEADER(weft_boot_component_t, "boot", WEFT_BOOT_ABI_MAJOR,
                                      WEFT_BOOT_ABI_MINOR, "pmi", 0, 1, 0),
            .register_params = weft::boot::pmi_comp::register_params, .open = nullptr,
            .query = weft::boot::pmi_comp::query, .close = nullptr},
    .init = weft::boot::pmi_comp::init,
};
}
