// bml/r2: for each peer, the BTL modules of highest exclusivity that reach
// it, as eager, send and RDMA lists.
#include <bml/bml.h>
#include <btl/btl.h>
#include <weft/mca.h>
#include <weft/runtime.h>

#include <algorithm>
#include <map>
#include <vector>

struct weft_bml_endpoint {
    weft_proc_t *proc = nullptr;
    std::vector<weft_bml_btl_t> lists[3];
    size_t next[3] = {0, 0, 0};
};

namespace weft::bml::r2 {

namespace {

struct Module {
    weft_bml_module_t base;
    std::vector<weft_btl_module_t *> btls;
    std::map<int, weft_bml_endpoint> peers; // by world rank
};

Module *M;

void weigh(std::vector<weft_bml_btl_t> &list)
{
    double total = 0;
    for (const auto &b : list)
        total += b.btl->btl_bandwidth;
    for (auto &b : list)
        b.weight = total > 0 ? b.btl->btl_bandwidth / total : 1.0 / double(list.size());
}

weft_status_t add_procs(weft_bml_module_t *, weft_proc_t *const *procs, size_t n,
                        uint8_t *reachable)
{
    std::vector<weft_btl_endpoint_t *> eps(n);
    std::vector<uint8_t> reach(n);
    std::vector<std::vector<weft_bml_btl_t>> found(n);
    for (weft_btl_module_t *btl : M->btls) {
        std::fill(eps.begin(), eps.end(), nullptr);
        std::fill(reach.begin(), reach.end(), 0);
        if (weft_status_t rc = btl->btl_add_procs(btl, procs, n, eps.data(), reach.data());
            rc != WEFT_SUCCESS)
            return rc;
        for (size_t i = 0; i < n; ++i)
            if (reach[i])
                found[i].push_back({btl, eps[i], 0.0, btl->btl_flags, 0});
    }
    for (size_t i = 0; i < n; ++i) {
        reachable[i] = !found[i].empty();
        if (found[i].empty())
            continue;
        uint32_t top = 0;
        for (const auto &b : found[i])
            top = std::max(top, b.btl->btl_exclusivity);
        weft_bml_endpoint &ep = M->peers[weft_proc_rank(procs[i])];
        ep.proc = procs[i];
        for (auto &l : ep.lists)
            l.clear();
        for (const auto &b : found[i]) {
            if (b.btl->btl_exclusivity != top)
                continue;
            if (b.btl_flags & WEFT_BTL_FLAG_SEND) {
                ep.lists[WEFT_BML_LIST_EAGER].push_back(b);
                ep.lists[WEFT_BML_LIST_SEND].push_back(b);
            }
            if (b.btl_flags & WEFT_BTL_FLAG_RDMA)
                ep.lists[WEFT_BML_LIST_RDMA].push_back(b);
        }
        auto &eager = ep.lists[WEFT_BML_LIST_EAGER];
        std::stable_sort(eager.begin(), eager.end(), [](const auto &a, const auto &b) {
            return a.btl->btl_latency < b.btl->btl_latency;
        });
        for (auto &l : ep.lists)
            weigh(l);
    }
    return WEFT_SUCCESS;
}

weft_status_t del_procs(weft_bml_module_t *, weft_proc_t *const *procs, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        M->peers.erase(weft_proc_rank(procs[i]));
    return WEFT_SUCCESS;
}

weft_status_t add_btl(weft_bml_module_t *, weft_btl_module_t *btl)
{
    M->btls.push_back(btl);
    return WEFT_SUCCESS;
}

weft_status_t del_proc_btl(weft_bml_module_t *, weft_proc_t *proc, weft_btl_module_t *btl)
{
    auto it = M->peers.find(weft_proc_rank(proc));
    if (it == M->peers.end())
        return WEFT_ERR_NOT_FOUND;
    for (auto &l : it->second.lists) {
        l.erase(std::remove_if(l.begin(), l.end(), [&](const auto &b) { return b.btl == btl; }),
                l.end());
        weigh(l);
    }
    return WEFT_SUCCESS;
}

weft_status_t del_btl(weft_bml_module_t *m, weft_btl_module_t *btl)
{
    for (auto &[rank, ep] : M->peers)
        del_proc_btl(m, ep.proc, btl);
    M->btls.erase(std::remove(M->btls.begin(), M->btls.end(), btl), M->btls.end());
    return WEFT_SUCCESS;
}

weft_status_t reg(weft_bml_module_t *, weft_btl_tag_t tag, weft_btl_recv_fn_t fn, void *data)
{
    for (weft_btl_module_t *btl : M->btls)
        if (weft_status_t rc = btl->btl_register(btl, tag, fn, data); rc != WEFT_SUCCESS)
            return rc;
    return WEFT_SUCCESS;
}

weft_status_t reg_error(weft_bml_module_t *, weft_btl_error_fn_t fn, void *data)
{
    for (weft_btl_module_t *btl : M->btls)
        if (btl->btl_register_error)
            btl->btl_register_error(btl, fn, data);
    return WEFT_SUCCESS;
}

weft_status_t finalize(weft_bml_module_t *)
{
    delete M;
    M = nullptr;
    return WEFT_SUCCESS;
}

int progress(weft_bml_module_t *) { return weft_progress(); }

weft_status_t endpoint_get(weft_bml_module_t *, weft_proc_t *proc, weft_bml_endpoint_t **out)
{
    auto it = M->peers.find(weft_proc_rank(proc));
    if (it == M->peers.end())
        return WEFT_ERR_UNREACH;
    *out = &it->second;
    return WEFT_SUCCESS;
}

weft_status_t endpoint_info(weft_bml_module_t *, weft_bml_endpoint_t *ep,
                            weft_bml_endpoint_info_t *info)
{
    weft_bml_endpoint_info_t out{};
    out.struct_size = sizeof out;
    out.proc = ep->proc;
    size_t max_send = 0;
    for (const auto &l : ep->lists)
        for (const auto &b : l)
            out.btl_flags_or |= b.btl_flags;
    for (const auto &b : ep->lists[WEFT_BML_LIST_SEND])
        max_send =
            max_send ? std::min(max_send, b.btl->btl_max_send_size) : b.btl->btl_max_send_size;
    out.max_send_size = max_send;
    // The RDMA pipeline's limits: the tail and the threshold as the most demanding rail wants
    // them, the pieces as the most limited one can take them.
    for (const auto &b : ep->lists[WEFT_BML_LIST_RDMA]) {
        out.rdma_pipeline_send_length =
            std::max(out.rdma_pipeline_send_length, b.btl->btl_rdma_pipeline_send_length);
        out.min_rdma_pipeline_size =
            std::max(out.min_rdma_pipeline_size, b.btl->btl_min_rdma_pipeline_size);
        out.rdma_pipeline_frag_size =
            out.rdma_pipeline_frag_size
                ? std::min(out.rdma_pipeline_frag_size, b.btl->btl_rdma_pipeline_frag_size)
                : b.btl->btl_rdma_pipeline_frag_size;
    }
    const uint32_t size = std::min<uint32_t>(info->struct_size, sizeof out);
    std::copy_n(reinterpret_cast<const char *>(&out), size, reinterpret_cast<char *>(info));
    info->struct_size = size;
    return WEFT_SUCCESS;
}

size_t endpoint_count(weft_bml_module_t *, weft_bml_endpoint_t *ep, weft_bml_list_t list)
{
    return ep->lists[list].size();
}

weft_status_t endpoint_btl(weft_bml_module_t *, weft_bml_endpoint_t *ep, weft_bml_list_t list,
                           size_t index, weft_bml_btl_t *out)
{
    if (index >= ep->lists[list].size())
        return WEFT_ERR_NOT_FOUND;
    *out = ep->lists[list][index];
    return WEFT_SUCCESS;
}

weft_status_t endpoint_next(weft_bml_module_t *, weft_bml_endpoint_t *ep, weft_bml_list_t list,
                            weft_bml_btl_t *out)
{
    auto &l = ep->lists[list];
    if (l.empty())
        return WEFT_ERR_UNREACH;
    *out = l[ep->next[list]++ % l.size()];
    return WEFT_SUCCESS;
}

weft_status_t endpoint_find(weft_bml_module_t *, weft_bml_endpoint_t *ep, weft_bml_list_t list,
                            const weft_btl_module_t *btl, weft_bml_btl_t *out)
{
    for (const auto &b : ep->lists[list])
        if (b.btl == btl) {
            *out = b;
            return WEFT_SUCCESS;
        }
    return WEFT_ERR_NOT_FOUND;
}

weft_bml_module_t *init(int, int)
{
    M = new Module{};
    M->base = weft_bml_module_t{
        .struct_size = sizeof(weft_bml_module_t),
        .reserved = 0,
        .bml_add_procs = add_procs,
        .bml_del_procs = del_procs,
        .bml_add_btl = add_btl,
        .bml_del_btl = del_btl,
        .bml_del_proc_btl = del_proc_btl,
        .bml_register = reg,
        .bml_register_error = reg_error,
        .bml_finalize = finalize,
        .bml_progress = progress,
        .bml_endpoint_get = endpoint_get,
        .bml_endpoint_info = endpoint_info,
        .bml_endpoint_count = endpoint_count,
        .bml_endpoint_btl = endpoint_btl,
        .bml_endpoint_next = endpoint_next,
        .bml_endpoint_find = endpoint_find,
    };
    return &M->base;
}

weft_status_t query(int *priority, char *, size_t)
{
    *priority = 10;
    return WEFT_SUCCESS;
}

} // namespace

} // namespace weft::bml::r2

extern "C" {
extern const weft_bml_component_t mca_bml_r2_component;
const weft_bml_component_t mca_bml_r2_component = {
    .mca = {WEFT_MCA_COMPONENT_HEADER(weft_bml_component_t, "bml", WEFT_BML_ABI_MAJOR,
                                      WEFT_BML_ABI_MINOR, "r2", 0, 1, 0),
            .register_params = nullptr, .open = nullptr, .query = weft::bml::r2::query,
            .close = nullptr},
    .init = weft::bml::r2::init,
};
}
