// btl/base: the RDMA protocol limits shared by the BTLs that offer put/get (btl/btl.h).
#include <btl/btl.h>
#include <weft/mca.h>

#include <cstdio>
#include <cstring>
#include <string>

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

std::string flags_text(uint32_t flags)
{
    std::string out;
    for (const FlagName &f : kFlagNames)
        if (flags & f.flag)
            out += (out.empty() ? "" : ",") + std::string(f.name);
    return out.empty() ? "none" : out;
}

// The flag a btl_<x>_flags item names; 0 for none.
uint32_t flag_named(const char *item)
{
    for (const FlagName &f : kFlagNames)
        if (std::strcmp(item, f.name) == 0)
            return f.flag;
    return 0;
}

std::string unknown_flag(const std::string &prefix, const char *item)
{
    return prefix + "flags names \"" + item + "\" (expected some of send, put, get, inplace)";
}

// The whole reason, cut to the caller's buffer.
weft_status_t refuse(char *why, size_t why_len, const std::string &text)
{
    if (why && why_len)
        std::snprintf(why, why_len, "%s", text.c_str());
    return WEFT_ERR_BAD_PARAM;
}

} // namespace

extern "C" {

const char *weft_btl_flags_string(uint32_t flags, char *buf, size_t len)
{
    if (buf && len)
        std::snprintf(buf, len, "%s", flags_text(flags).c_str());
    return buf;
}

weft_status_t weft_btl_rdma_params_register(const char *component, const char *pipeline_send_length,
                                            const char *pipeline_frag_size,
                                            const char *min_rdma_pipeline_size,
                                            weft_btl_rdma_params_t *params)
{
    const weft_mca_param_def_t defs[] = {
        {.name = "rdma_pipeline_send_length",
         .type = WEFT_MCA_PARAM_SIZE,
         .default_value = pipeline_send_length,
         .help = "RDMA pipeline protocol: bytes at the end of a message that travel by "
                 "send/receive fragments while the middle goes by RDMA writes.",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "rdma_pipeline_frag_size",
         .type = WEFT_MCA_PARAM_SIZE,
         .default_value = pipeline_frag_size,
         .help = "RDMA pipeline protocol: largest RDMA write; the middle of a message is "
                 "registered and written in pieces of this size (at least 1).",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "1.."},
        {.name = "min_rdma_pipeline_size",
         .type = WEFT_MCA_PARAM_SIZE,
         .default_value = min_rdma_pipeline_size,
         .help = "Contiguous messages up to this size go by RDMA direct get (or put, without "
                 "get) in one piece; larger ones by the RDMA pipeline when the BTL can put "
                 "and mpi_leave_pinned is off.",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "flags",
         .type = WEFT_MCA_PARAM_LIST,
         .default_value = "",
         .help = "What the PML may use this BTL for, among what it can do: a list of send, "
                 "put, get, inplace. Empty: everything it can. E.g. \"send,put\" keeps the "
                 "PML from RDMA reads.",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
    };
    weft_mca_param_t *h[4] = {};
    const weft_status_t rc =
        weft_mca_param_register_table("btl", component, defs, 4, sizeof defs[0], h);
    if (params)
        *params = weft_btl_rdma_params_t{h[0], h[1], h[2], h[3]};
    return rc;
}

weft_status_t weft_btl_rdma_params_check(const char *component, const weft_btl_rdma_params_t *p,
                                         char *why, size_t why_len)
{
    if (!component || !p)
        return refuse(why, why_len, "weft_btl_rdma_params_check: an argument is NULL");
    const std::string prefix = std::string("btl_") + component + "_";
    const size_t n = p->flags ? weft_mca_param_list_count(p->flags) : 0;
    bool send = n == 0;
    for (size_t i = 0; i < n; ++i) {
        const char *item = weft_mca_param_list_item(p->flags, i);
        const uint32_t flag = flag_named(item);
        if (flag == 0)
            return refuse(why, why_len, unknown_flag(prefix, item));
        send |= flag == WEFT_BTL_FLAG_SEND;
    }
    if (!send)
        return refuse(why, why_len, prefix + "flags lacks send (every BTL the PML uses must send)");
    return WEFT_SUCCESS;
}

weft_status_t weft_btl_rdma_params_apply(const char *component, const weft_btl_rdma_params_t *p,
                                         weft_btl_module_t *m, char *why, size_t why_len)
{
    if (!component || !p || !m)
        return refuse(why, why_len, "weft_btl_rdma_params_apply: an argument is NULL");
    const std::string prefix = std::string("btl_") + component + "_";
    if (p->send_length)
        m->btl_rdma_pipeline_send_length = size_t(weft_mca_param_size(p->send_length));
    if (p->frag_size)
        m->btl_rdma_pipeline_frag_size = size_t(weft_mca_param_size(p->frag_size));
    if (p->min_pipeline)
        m->btl_min_rdma_pipeline_size = size_t(weft_mca_param_size(p->min_pipeline));
    if (m->btl_rdma_pipeline_frag_size == 0)
        return refuse(why, why_len, prefix + "rdma_pipeline_frag_size is 0 (at least 1)");
    const size_t n = p->flags ? weft_mca_param_list_count(p->flags) : 0;
    if (n == 0)
        return WEFT_SUCCESS;
    uint32_t want = 0;
    for (size_t i = 0; i < n; ++i) {
        const char *item = weft_mca_param_list_item(p->flags, i);
        const uint32_t flag = flag_named(item);
        if (flag == 0)
            return refuse(why, why_len, unknown_flag(prefix, item));
        if (!(m->btl_flags & flag))
            return refuse(
                why, why_len,
                prefix + "flags asks for " + item +
                    ", which this BTL cannot do here (it can: " + flags_text(m->btl_flags) + ")");
        want |= flag;
    }
    if (!(want & WEFT_BTL_FLAG_SEND))
        return refuse(why, why_len, prefix + "flags lacks send (every BTL the PML uses must send)");
    constexpr uint32_t maskable =
        WEFT_BTL_FLAG_SEND | WEFT_BTL_FLAG_RDMA | WEFT_BTL_FLAG_SEND_INPLACE;
    m->btl_flags = (m->btl_flags & ~maskable) | want;
    return WEFT_SUCCESS;
}

} // extern "C"
