// btl/base: the RDMA protocol limits shared by the BTLs that offer put/get.
#include "btl_base_rdma.h"

#include <cstring>

namespace weft::btl::base {

namespace {

struct FlagName {
    const char *name;
    uint32_t flag;
};
constexpr FlagName kFlagNames[] = {
    {"send", WEFT_BTL_FLAG_SEND},
    {"put", WEFT_BTL_FLAG_PUT},
    {"get", WEFT_BTL_FLAG_GET},
    {"inplace", WEFT_BTL_FLAG_SEND_INPLACE},
};

} // namespace

std::string flags_text(uint32_t flags)
{
    std::string out;
    for (const FlagName &f : kFlagNames)
        if (flags & f.flag)
            out += (out.empty() ? "" : ",") + std::string(f.name);
    return out.empty() ? "none" : out;
}

weft_status_t register_rdma_params(const char *component, const RdmaDefaults &d, RdmaParams &out)
{
    const weft_mca_param_def_t defs[] = {
        {.name = "rdma_pipeline_send_length",
         .type = WEFT_MCA_PARAM_SIZE,
         .default_value = d.pipeline_send_length,
         .help = "RDMA pipeline protocol: bytes at the end of a message that travel by "
                 "send/receive fragments while the middle goes by RDMA writes.",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr},
        {.name = "rdma_pipeline_frag_size",
         .type = WEFT_MCA_PARAM_SIZE,
         .default_value = d.pipeline_frag_size,
         .help = "RDMA pipeline protocol: largest RDMA write; the middle of a message is "
                 "registered and written in pieces of this size (at least 1).",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr},
        {.name = "min_rdma_pipeline_size",
         .type = WEFT_MCA_PARAM_SIZE,
         .default_value = d.min_rdma_pipeline_size,
         .help = "Contiguous messages up to this size go by RDMA direct get (or put, without "
                 "get) in one piece; larger ones by the RDMA pipeline when the BTL can put "
                 "and mpi_leave_pinned is off.",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr},
        {.name = "flags",
         .type = WEFT_MCA_PARAM_LIST,
         .default_value = "",
         .help = "What the PML may use this BTL for, among what it can do: a list of send, "
                 "put, get, inplace. Empty: everything it can. E.g. \"send,put\" keeps the "
                 "PML from RDMA reads.",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr},
    };
    weft_mca_param_t *h[4] = {};
    const weft_status_t rc =
        weft_mca_param_register_table("btl", component, defs, 4, sizeof defs[0], h);
    out = RdmaParams{h[0], h[1], h[2], h[3]};
    return rc;
}

bool apply_rdma_params(const char *component, const RdmaParams &p, weft_btl_module_t &m,
                       std::string &why)
{
    const std::string prefix = std::string("btl_") + component + "_";
    if (p.send_length)
        m.btl_rdma_pipeline_send_length = size_t(weft_mca_param_size(p.send_length));
    if (p.frag_size)
        m.btl_rdma_pipeline_frag_size = size_t(weft_mca_param_size(p.frag_size));
    if (p.min_pipeline)
        m.btl_min_rdma_pipeline_size = size_t(weft_mca_param_size(p.min_pipeline));
    if (m.btl_rdma_pipeline_frag_size == 0) {
        why = prefix + "rdma_pipeline_frag_size is 0 (at least 1)";
        return false;
    }
    const size_t n = p.flags ? weft_mca_param_list_count(p.flags) : 0;
    if (n == 0)
        return true;
    uint32_t want = 0;
    for (size_t i = 0; i < n; ++i) {
        const char *item = weft_mca_param_list_item(p.flags, i);
        uint32_t flag = 0;
        for (const FlagName &f : kFlagNames)
            if (std::strcmp(item, f.name) == 0)
                flag = f.flag;
        if (flag == 0) {
            why =
                prefix + "flags names \"" + item + "\" (expected some of send, put, get, inplace)";
            return false;
        }
        if (!(m.btl_flags & flag)) {
            why = prefix + "flags asks for " + item +
                  ", which this BTL cannot do here (it can: " + flags_text(m.btl_flags) + ")";
            return false;
        }
        want |= flag;
    }
    if (!(want & WEFT_BTL_FLAG_SEND)) {
        why = prefix + "flags lacks send (every BTL the PML uses must send)";
        return false;
    }
    constexpr uint32_t maskable =
        WEFT_BTL_FLAG_SEND | WEFT_BTL_FLAG_RDMA | WEFT_BTL_FLAG_SEND_INPLACE;
    m.btl_flags = (m.btl_flags & ~maskable) | want;
    return true;
}

} // namespace weft::btl::base
