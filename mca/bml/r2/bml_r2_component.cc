// bml/r2: for each peer, the BTL modules of highest exclusivity that reach
// it, as eager, send and RDMA lists. With bml_r2_standby, once a failover PML has removed every
// one of them, those of the next exclusivity take their place.
#include <bml/bml.h>
#include <btl/btl.h>
#include <weft/mca.h>
#include <weft/runtime.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

struct weft_bml_endpoint {
    weft_proc_t *proc = nullptr;
    std::vector<weft_bml_btl_t> found; // every module that reaches the peer (for standby)
    std::vector<weft_bml_btl_t> lists[3];
    size_t next[3] = {0, 0, 0};
};

namespace weft::bml::r2 {

namespace {

struct Callback {
    weft_btl_recv_fn_t fn;
    void *data;
};

struct Module : weft_bml_module_t {
    // One guard for the whole module rather than one per endpoint: it is held only to copy a
    // rail or to edit lists, never while calling out, and ob1 keeps its own copy of each
    // peer's rails (rebuilt from the rails-changed callback), so it is rarely contended.
    std::mutex lock;
    std::vector<weft_btl_module_t *> btls;
    std::map<int, weft_bml_endpoint> peers; // by world rank; map nodes never move
    // What makes a removal last for the job: a module del_btl took out is never taken again,
    // and add_procs never asks a module again for a peer del_proc_btl took it from (by world
    // rank, which outlives del_procs).
    std::set<const weft_btl_module_t *> dropped;
    std::set<std::pair<int, const weft_btl_module_t *>> removed;
    // Kept for modules added later (the header promises "present and future").
    std::map<weft_btl_tag_t, Callback> tags;
    weft_btl_error_fn_t error_fn = nullptr;
    void *error_data = nullptr;
    weft_bml_rails_changed_fn_t changed_fn = nullptr;
    void *changed_data = nullptr;
};

Module *self(weft_bml_module_t *m) { return static_cast<Module *>(m); }

weft_mca_param_t *p_standby = nullptr;

bool valid(weft_bml_list_t list) { return unsigned(list) <= unsigned(WEFT_BML_LIST_RDMA); }

// A peer can take messages only with a rail in both lists that carry them.
bool usable(const weft_bml_endpoint &ep)
{
    return !ep.lists[WEFT_BML_LIST_EAGER].empty() && !ep.lists[WEFT_BML_LIST_SEND].empty();
}

void weigh(std::vector<weft_bml_btl_t> &list)
{
    double total = 0;
    for (const auto &b : list)
        total += b.btl->btl_bandwidth;
    for (auto &b : list)
        b.weight = total > 0 ? b.btl->btl_bandwidth / total : 1.0 / double(list.size());
}

// Fill ep's lists from the rails found for it: only those of the highest exclusivity.
void build(weft_bml_endpoint &ep, const std::vector<weft_bml_btl_t> &found)
{
    for (auto &l : ep.lists)
        l.clear();
    std::fill(std::begin(ep.next), std::end(ep.next), 0);
    uint32_t top = 0;
    for (const auto &b : found)
        top = std::max(top, b.btl->btl_exclusivity);
    for (const auto &b : found) {
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

// The rails of ep's peer (rank) still allowed: found, minus what was removed for it or for all.
std::vector<weft_bml_btl_t> allowed(const Module *m, int rank, const weft_bml_endpoint &ep)
{
    std::vector<weft_bml_btl_t> left;
    for (const auto &b : ep.found)
        if (!m->dropped.count(b.btl) && !m->removed.count({rank, b.btl}))
            left.push_back(b);
    return left;
}

// With bml_r2_standby, a peer left without a usable rail gets the modules of the highest
// exclusivity among those that reach it and were not removed. True if it did.
bool promote_standby(const Module *m, int rank, weft_bml_endpoint &ep)
{
    if (usable(ep) || !p_standby || !weft_mca_param_bool(p_standby))
        return false;
    const std::vector<weft_bml_btl_t> left = allowed(m, rank, ep);
    if (left.empty())
        return false;
    build(ep, left);
    return usable(ep);
}

// Take btl out of ep's lists; true if it was in one.
bool remove_rail(weft_bml_endpoint &ep, const weft_btl_module_t *btl)
{
    bool removed = false;
    for (auto &l : ep.lists) {
        const auto end =
            std::remove_if(l.begin(), l.end(), [&](const auto &b) { return b.btl == btl; });
        if (end == l.end())
            continue;
        l.erase(end, l.end());
        weigh(l);
        removed = true;
    }
    return removed;
}

weft_status_t add_procs(weft_bml_module_t *base, weft_proc_t *const *procs, size_t n,
                        uint8_t *reachable)
{
    Module *m = self(base);
    std::vector<weft_btl_module_t *> btls;
    std::set<std::pair<int, const weft_btl_module_t *>> removed;
    {
        std::lock_guard<std::mutex> guard(m->lock);
        btls = m->btls;
        removed = m->removed;
    }
    std::vector<std::vector<weft_bml_btl_t>> found(n);
    std::vector<weft_proc_t *> ask;
    std::vector<size_t> index;
    std::vector<weft_btl_endpoint_t *> eps;
    std::vector<uint8_t> reach;
    for (weft_btl_module_t *btl : btls) {
        // Each module is asked only for the procs it still serves.
        ask.clear();
        index.clear();
        for (size_t i = 0; i < n; ++i) {
            const int rank = weft_proc_rank(procs[i]);
            if (rank >= 0 && !removed.count({rank, btl})) {
                ask.push_back(procs[i]);
                index.push_back(i);
            }
        }
        if (ask.empty())
            continue;
        eps.assign(ask.size(), nullptr);
        reach.assign(ask.size(), 0);
        if (weft_status_t rc =
                btl->btl_add_procs(btl, ask.data(), ask.size(), eps.data(), reach.data());
            rc != WEFT_SUCCESS)
            return rc;
        for (size_t k = 0; k < ask.size(); ++k)
            if (reach[k])
                found[index[k]].push_back({btl, eps[k], 0.0, btl->btl_flags, 0});
    }
    std::lock_guard<std::mutex> guard(m->lock);
    for (size_t i = 0; i < n; ++i) {
        const int rank = weft_proc_rank(procs[i]);
        if (rank < 0)
            continue;
        weft_bml_endpoint &ep = m->peers[rank];
        ep.proc = procs[i];
        ep.found = found[i];
        build(ep, found[i]);
        reachable[i] = usable(ep);
    }
    return WEFT_SUCCESS;
}

weft_status_t del_procs(weft_bml_module_t *base, weft_proc_t *const *procs, size_t n)
{
    Module *m = self(base);
    if (n > 0 && !procs)
        return WEFT_ERR_BAD_PARAM;
    std::lock_guard<std::mutex> guard(m->lock);
    for (size_t i = 0; i < n; ++i)
        m->peers.erase(weft_proc_rank(procs[i]));
    return WEFT_SUCCESS;
}

weft_status_t add_btl(weft_bml_module_t *base, weft_btl_module_t *btl)
{
    Module *m = self(base);
    std::map<weft_btl_tag_t, Callback> tags;
    weft_btl_error_fn_t error_fn;
    void *error_data;
    {
        std::lock_guard<std::mutex> guard(m->lock);
        if (m->dropped.count(btl) ||
            std::find(m->btls.begin(), m->btls.end(), btl) != m->btls.end())
            return WEFT_ERR_EXISTS;
        tags = m->tags;
        error_fn = m->error_fn;
        error_data = m->error_data;
    }
    for (const auto &[tag, cb] : tags)
        if (weft_status_t rc = btl->btl_register(btl, tag, cb.fn, cb.data); rc != WEFT_SUCCESS)
            return rc;
    // A refusal leaves the module's errors fatal; it can still carry traffic.
    if (error_fn && btl->btl_register_error)
        btl->btl_register_error(btl, error_fn, error_data);
    std::lock_guard<std::mutex> guard(m->lock);
    m->btls.push_back(btl);
    return WEFT_SUCCESS;
}

void report_changed(weft_bml_rails_changed_fn_t fn, void *data,
                    const std::vector<weft_proc_t *> &procs)
{
    if (fn)
        for (weft_proc_t *p : procs)
            fn(p, data);
}

weft_status_t del_proc_btl(weft_bml_module_t *base, weft_proc_t *proc, weft_btl_module_t *btl)
{
    Module *m = self(base);
    weft_bml_rails_changed_fn_t fn;
    void *data;
    weft_proc_t *peer;
    weft_status_t rc;
    {
        std::lock_guard<std::mutex> guard(m->lock);
        const int rank = weft_proc_rank(proc);
        auto it = m->peers.find(rank);
        if (it == m->peers.end() || !remove_rail(it->second, btl))
            return WEFT_ERR_NOT_FOUND;
        m->removed.insert({rank, btl});
        promote_standby(m, rank, it->second);
        rc = usable(it->second) ? WEFT_SUCCESS : WEFT_ERR_UNREACH;
        peer = it->second.proc;
        fn = m->changed_fn;
        data = m->changed_data;
    }
    report_changed(fn, data, {peer});
    return rc;
}

weft_status_t del_btl(weft_bml_module_t *base, weft_btl_module_t *btl)
{
    Module *m = self(base);
    weft_bml_rails_changed_fn_t fn;
    void *data;
    std::vector<weft_proc_t *> changed;
    bool unreach = false;
    {
        std::lock_guard<std::mutex> guard(m->lock);
        auto it = std::find(m->btls.begin(), m->btls.end(), btl);
        if (it == m->btls.end())
            return WEFT_ERR_NOT_FOUND;
        m->btls.erase(it);
        m->dropped.insert(btl);
        for (auto &[rank, ep] : m->peers)
            if (remove_rail(ep, btl)) {
                promote_standby(m, rank, ep);
                changed.push_back(ep.proc);
                unreach = unreach || !usable(ep);
            }
        fn = m->changed_fn;
        data = m->changed_data;
    }
    report_changed(fn, data, changed);
    return unreach ? WEFT_ERR_UNREACH : WEFT_SUCCESS;
}

weft_status_t reg(weft_bml_module_t *base, weft_btl_tag_t tag, weft_btl_recv_fn_t fn, void *data)
{
    Module *m = self(base);
    if (!fn)
        return WEFT_ERR_BAD_PARAM;
    std::vector<weft_btl_module_t *> btls;
    {
        std::lock_guard<std::mutex> guard(m->lock);
        m->tags[tag] = Callback{fn, data};
        btls = m->btls;
    }
    weft_status_t first = WEFT_SUCCESS;
    for (weft_btl_module_t *btl : btls)
        if (weft_status_t rc = btl->btl_register(btl, tag, fn, data);
            rc != WEFT_SUCCESS && first == WEFT_SUCCESS)
            first = rc;
    return first;
}

weft_status_t reg_error(weft_bml_module_t *base, weft_btl_error_fn_t fn, void *data)
{
    Module *m = self(base);
    std::vector<weft_btl_module_t *> btls;
    {
        std::lock_guard<std::mutex> guard(m->lock);
        m->error_fn = fn;
        m->error_data = data;
        btls = m->btls;
    }
    bool taken = btls.empty();
    for (weft_btl_module_t *btl : btls)
        if (btl->btl_register_error && btl->btl_register_error(btl, fn, data) == WEFT_SUCCESS)
            taken = true;
    return taken ? WEFT_SUCCESS : WEFT_ERR_NOT_SUPPORTED;
}

weft_status_t reg_rails_changed(weft_bml_module_t *base, weft_bml_rails_changed_fn_t fn, void *data)
{
    Module *m = self(base);
    std::lock_guard<std::mutex> guard(m->lock);
    m->changed_fn = fn;
    m->changed_data = data;
    return WEFT_SUCCESS;
}

weft_status_t finalize(weft_bml_module_t *base)
{
    delete self(base);
    return WEFT_SUCCESS;
}

int progress(weft_bml_module_t *) { return weft_progress(); }

weft_status_t endpoint_get(weft_bml_module_t *base, weft_proc_t *proc, weft_bml_endpoint_t **out)
{
    Module *m = self(base);
    std::lock_guard<std::mutex> guard(m->lock);
    auto it = m->peers.find(weft_proc_rank(proc));
    if (it == m->peers.end())
        return WEFT_ERR_NOT_FOUND;
    if (!usable(it->second))
        return WEFT_ERR_UNREACH;
    *out = &it->second;
    return WEFT_SUCCESS;
}

weft_status_t endpoint_info(weft_bml_module_t *base, weft_bml_endpoint_t *ep,
                            weft_bml_endpoint_info_t *info)
{
    if (!ep || !info)
        return WEFT_ERR_BAD_PARAM;
    weft_bml_endpoint_info_t out{};
    out.struct_size = sizeof out;
    out.proc = ep->proc;
    size_t max_send = 0;
    std::lock_guard<std::mutex> guard(self(base)->lock);
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

size_t endpoint_count(weft_bml_module_t *base, weft_bml_endpoint_t *ep, weft_bml_list_t list)
{
    if (!ep || !valid(list))
        return 0;
    std::lock_guard<std::mutex> guard(self(base)->lock);
    return ep->lists[list].size();
}

weft_status_t endpoint_btl(weft_bml_module_t *base, weft_bml_endpoint_t *ep, weft_bml_list_t list,
                           size_t index, weft_bml_btl_t *out)
{
    if (!ep || !valid(list))
        return WEFT_ERR_NOT_FOUND;
    std::lock_guard<std::mutex> guard(self(base)->lock);
    if (index >= ep->lists[list].size())
        return WEFT_ERR_NOT_FOUND;
    *out = ep->lists[list][index];
    return WEFT_SUCCESS;
}

weft_status_t endpoint_next(weft_bml_module_t *base, weft_bml_endpoint_t *ep, weft_bml_list_t list,
                            weft_bml_btl_t *out)
{
    if (!ep || !valid(list))
        return WEFT_ERR_UNREACH;
    std::lock_guard<std::mutex> guard(self(base)->lock);
    auto &l = ep->lists[list];
    if (l.empty())
        return WEFT_ERR_UNREACH;
    *out = l[ep->next[list]++ % l.size()];
    return WEFT_SUCCESS;
}

weft_status_t endpoint_find(weft_bml_module_t *base, weft_bml_endpoint_t *ep, weft_bml_list_t list,
                            const weft_btl_module_t *btl, weft_bml_btl_t *out)
{
    if (!ep || !valid(list))
        return WEFT_ERR_NOT_FOUND;
    std::lock_guard<std::mutex> guard(self(base)->lock);
    for (const auto &b : ep->lists[list])
        if (b.btl == btl) {
            *out = b;
            return WEFT_SUCCESS;
        }
    return WEFT_ERR_NOT_FOUND;
}

weft_status_t readd_proc_btl(weft_bml_module_t *base, weft_proc_t *proc, weft_btl_module_t *btl)
{
    Module *m = self(base);
    const int rank = proc ? weft_proc_rank(proc) : -1;
    {
        std::lock_guard<std::mutex> guard(m->lock);
        auto it = m->peers.find(rank);
        if (rank < 0 || it == m->peers.end() ||
            (!m->removed.count({rank, btl}) && !m->dropped.count(btl)))
            return WEFT_ERR_NOT_FOUND;
    }
    // Asked again, outside the guard (the module may start its endpoint over).
    weft_btl_endpoint_t *bep = nullptr;
    uint8_t reach = 0;
    if (weft_status_t rc = btl->btl_add_procs(btl, &proc, 1, &bep, &reach); rc != WEFT_SUCCESS)
        return rc;
    if (!reach)
        return WEFT_ERR_UNREACH;
    weft_bml_rails_changed_fn_t fn;
    void *data;
    {
        std::lock_guard<std::mutex> guard(m->lock);
        auto it = m->peers.find(rank);
        if (it == m->peers.end())
            return WEFT_ERR_NOT_FOUND;
        if (m->dropped.count(btl)) {
            // Removed for every peer: back in use, and still removed for the others.
            for (const auto &[r, ep] : m->peers)
                if (r != rank)
                    m->removed.insert({r, btl});
            m->dropped.erase(btl);
            m->btls.push_back(btl);
        }
        m->removed.erase({rank, btl});
        weft_bml_endpoint &ep = it->second;
        const weft_bml_btl_t fresh{btl, bep, 0.0, btl->btl_flags, 0};
        auto f = std::find_if(ep.found.begin(), ep.found.end(),
                              [&](const weft_bml_btl_t &b) { return b.btl == btl; });
        if (f != ep.found.end())
            *f = fresh;
        else
            ep.found.push_back(fresh);
        build(ep, allowed(m, rank, ep));
        fn = m->changed_fn;
        data = m->changed_data;
    }
    report_changed(fn, data, {proc});
    return WEFT_SUCCESS;
}

weft_bml_module_t *init(int, int)
{
    auto *m = new Module;
    static_cast<weft_bml_module_t &>(*m) = weft_bml_module_t{
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
        .bml_register_rails_changed = reg_rails_changed,
        .bml_readd_proc_btl = readd_proc_btl,
    };
    return m;
}

weft_status_t register_params()
{
    const weft_mca_param_def_t def = {
        .name = "standby",
        .type = WEFT_MCA_PARAM_BOOL,
        .default_value = "false",
        .help = "When a failover PML (pml/bfo) has removed every rail of a peer's highest "
                "exclusivity, carry on over the BTLs of the next exclusivity that reach it (tcp "
                "behind openib, or behind sm on one host) instead of giving the peer up. Off: "
                "only the highest exclusivity is ever used, as in Open MPI.",
        .level = 4,
        .scope = WEFT_MCA_SCOPE_LOCAL,
        .enum_values = nullptr,
        .synonyms = nullptr,
        .range = nullptr};
    return weft_mca_param_register_table("bml", "r2", &def, 1, sizeof def, &p_standby);
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
                                      WEFT_BML_ABI_MINOR, "r2", 0, 2, 0),
            .register_params = weft::bml::r2::register_params, .open = nullptr,
            .query = weft::bml::r2::query, .close = nullptr},
    .init = weft::bml::r2::init,
};
}
