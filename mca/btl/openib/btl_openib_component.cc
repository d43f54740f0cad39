// btl/openib: InfiniBand/RoCE through libibverbs.
//
// This version finds the verbs devices and ports that the job may use and
// registers the component's parameters; it refuses to run, saying why, until
// the reliable-connection data path lands (see README.md). With no verbs
// device, the usual case on machines without RDMA hardware, it steps aside
// quietly.
#include <btl/btl.h>
#include <weft/mca.h>

#include <infiniband/verbs.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace weft::btl::openib {

namespace {

weft_mca_param_t *if_include;
weft_mca_param_t *if_exclude;

weft_status_t register_params()
{
    const weft_mca_param_def_t defs[] = {
        {.name = "if_include",
         .type = WEFT_MCA_PARAM_LIST,
         .default_value = "",
         .help = "Verbs devices to use, by name (e.g. mlx5_0,mlx5_1); empty means all. Each "
                 "active port becomes one rail. Cannot be combined with btl_openib_if_exclude.",
         .level = 2,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "if_exclude",
         .type = WEFT_MCA_PARAM_LIST,
         .default_value = "",
         .help = "Verbs devices never to use, by name. Cannot be combined with "
                 "btl_openib_if_include.",
         .level = 2,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
    };
    weft_mca_param_t *h[2] = {};
    weft_status_t rc = weft_mca_param_register_table("btl", "openib", defs, 2, sizeof defs[0], h);
    if_include = h[0];
    if_exclude = h[1];
    return rc;
}

std::vector<std::string> list_of(const weft_mca_param_t *p)
{
    std::vector<std::string> out;
    for (size_t i = 0; i < weft_mca_param_list_count(p); ++i)
        out.emplace_back(weft_mca_param_list_item(p, i));
    return out;
}

weft_status_t query(int *priority, char *why, size_t why_len)
{
    const auto include = list_of(if_include), exclude = list_of(if_exclude);
    if (!include.empty() && !exclude.empty()) {
        std::snprintf(why, why_len, "btl_openib_if_include and btl_openib_if_exclude are both set");
        return WEFT_ERR_BAD_PARAM;
    }
    int n = 0;
    ibv_device **list = ibv_get_device_list(&n);
    std::vector<std::string> usable;
    for (int i = 0; list && i < n; ++i) {
        std::string name = ibv_get_device_name(list[i]);
        bool in = include.empty() || std::count(include.begin(), include.end(), name);
        bool out = std::count(exclude.begin(), exclude.end(), name) > 0;
        if (in && !out)
            usable.push_back(name);
    }
    if (list)
        ibv_free_device_list(list);
    if (usable.empty()) {
        std::snprintf(why, why_len, "no usable verbs device (%d found)", n);
        return WEFT_ERR_NOT_AVAILABLE;
    }
    *priority = 0;
    std::snprintf(why, why_len,
                  "found %zu verbs device(s) (%s...) but this build has no openib "
                  "data path yet",
                  usable.size(), usable.front().c_str());
    return WEFT_ERR_NOT_SUPPORTED;
}

weft_btl_module_t **init(int *num_modules, int, int)
{
    *num_modules = 0;
    return nullptr;
}

} // namespace

} // namespace weft::btl::openib

extern "C" {
extern const weft_btl_component_t mca_btl_openib_component;
const weft_btl_component_t mca_btl_openib_component = {
    .mca = {WEFT_MCA_COMPONENT_HEADER(weft_btl_component_t, "btl", WEFT_BTL_ABI_MAJOR,
                                      WEFT_BTL_ABI_MINOR, "openib", 0, 1, 0),
            .register_params = weft::btl::openib::register_params, .open = nullptr,
            .query = weft::btl::openib::query, .close = nullptr},
    .init = weft::btl::openib::init,
    .progress = nullptr,
};
}
