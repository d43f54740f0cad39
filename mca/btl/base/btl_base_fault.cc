// btl/base: fault injection on any BTL, for users and tests (docs/fault-injection.md).
//
// With btl_base_fault_rail naming a module, weft_btl_select wraps that module's send, put and
// get (and hides its sendi, so that every fragment goes through btl_send where faults are
// made) and injects faults into the fragments the parameters pick: a fragment type of the
// ob1-style PMLs' wire format (the first byte of a fragment sent with the PML's tag) or an
// RDMA put/get, the N-th of them or each with a probability drawn from a seeded generator (the
// same seed, rank and traffic give the same faults, so a failing case replays). A fault is
//   lost       the fragment is not sent; its completion reports WEFT_ERR_LINK_DOWN;
//   delivered  the fragment is sent, and its completion reports WEFT_ERR_LINK_DOWN all the
//              same (the case a failover PML finds hardest: a copy it resends arrives twice);
//   rail_down  the module's error callback says the module failed, then this fragment and
//              every later operation on the module fail.
// A fragment sent without a completion callback that is lost or delivered-in-error is
// reported through the error callback instead (the link, for its peer's PML, is broken).
// Each fault is printed with the rank, the seed and the fragment's number, to replay it.
#include "btl_base_fault.h"

#include <btl/btl.h>
#include <weft/mca.h>
#include <weft/output.h>
#include <weft/runtime.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace weft::btl::base {

namespace {

// What a fault may hit: the PML's fragment types (their header's first byte), then RDMA.
enum Kind : int {
    kAny = 0,
    kMatch = 1,
    kRndv = 2,
    kAck = 3,
    kFrag = 4,
    kRget = 5,
    kPut = 6,
    kFin = 7,
    kRdmaPut = 8,
    kRdmaGet = 9,
    kKinds = 10
};
const char *const kKindNames[kKinds] = {"any",  "MATCH", "RNDV", "ACK",      "FRAG",
                                        "RGET", "PUT",   "FIN",  "RDMA put", "RDMA get"};
constexpr weft_mca_enum_value_t kTypeValues[] = {
    {"any", kAny},          {"match", kMatch},      {"rndv", kRndv}, {"ack", kAck},
    {"frag", kFrag},        {"rget", kRget},        {"put", kPut},   {"fin", kFin},
    {"rdma_put", kRdmaPut}, {"rdma_get", kRdmaGet}, {nullptr, 0},
};
enum Mode : int { kLost = 0, kDelivered = 1, kRailDown = 2 };
constexpr weft_mca_enum_value_t kModeValues[] = {
    {"lost", kLost}, {"delivered", kDelivered}, {"rail_down", kRailDown}, {nullptr, 0}};

enum Param { P_RAIL, P_TYPE, P_AFTER, P_PROB, P_SEED, P_MODE, P_COUNT, P_RANK, P_N };
weft_mca_param_t *params[P_N];

// A completion to report from progress (a lost fragment's), never inside the caller's call.
struct Later {
    weft_btl_module_t *module;
    weft_btl_endpoint_t *ep;
    weft_btl_descriptor_t *des;                   // a send's, or NULL
    weft_btl_rdma_completion_fn_t rdma = nullptr; // a put/get's
    void *local = nullptr;
    weft_btl_registration_handle_t *local_handle = nullptr;
    void *context = nullptr;
    void *cbdata = nullptr;
};

// One wrapped module: its own operations, the PML's error callback, the fault state.
struct Wrapped {
    weft_btl_module_t *m = nullptr;
    std::string name; // btl/<component>:<index>
    decltype(weft_btl_module_t::btl_send) send = nullptr;
    decltype(weft_btl_module_t::btl_put) put = nullptr;
    decltype(weft_btl_module_t::btl_get) get = nullptr;
    decltype(weft_btl_module_t::btl_register_error) register_error = nullptr;
    decltype(weft_btl_module_t::btl_free) free = nullptr;
    weft_btl_error_fn_t err_fn = nullptr;
    void *err_data = nullptr;
    bool down = false;
    uint64_t seen = 0;   // fragments of the chosen kind
    uint64_t faults = 0; // injected
    std::mt19937_64 rng;
    // A delivered fragment's own callback, while the module holds it.
    struct Saved {
        weft_btl_completion_fn_t fn;
        void *cbdata;
        void *context;
        uint32_t flags;
    };
    std::unordered_map<weft_btl_descriptor_t *, Saved> saved;
};

struct Config {
    int kind = kAny;
    uint64_t after = 0;
    double probability = 0;
    uint64_t seed = 1;
    int mode = kLost;
    uint64_t count = 1;
    int rank = -1;
};

Config cfg;
std::vector<std::unique_ptr<Wrapped>> wrapped;
std::vector<Later> later;
bool progress_on = false;

Wrapped *find(const weft_btl_module_t *m)
{
    for (auto &w : wrapped)
        if (w->m == m)
            return w.get();
    return nullptr;
}

// A put/get's completion redirected: the original, to call with an error.
struct RdmaSaved {
    Wrapped *w;
    weft_btl_rdma_completion_fn_t fn;
    void *context;
};

void say(const Wrapped &w, const std::string &what)
{
    weft_output(WEFT_OUTPUT_INFO, "btl/base: fault injection on %s (rank %d, seed %llu): %s",
                w.name.c_str(), weft_runtime_world_rank(), (unsigned long long)cfg.seed,
                what.c_str());
}

// The link is broken as far as the peer's PML can tell (no completion to report it on).
void report_link(Wrapped &w, const char *why)
{
    if (w.err_fn)
        w.err_fn(w.m, WEFT_BTL_ERROR_FLAG_LINK, nullptr, why, w.err_data);
}

// Whether this operation of `kind` gets a fault, and which (-1: none).
int decide(Wrapped &w, int kind)
{
    if (cfg.rank >= 0 && cfg.rank != weft_runtime_world_rank())
        return -1;
    if (kind < 0 || (cfg.kind != kAny && cfg.kind != kind))
        return -1;
    ++w.seen;
    if (cfg.count && w.faults >= cfg.count)
        return -1;
    bool hit = cfg.after && w.seen % cfg.after == 0;
    if (!hit && cfg.probability > 0)
        hit = std::uniform_real_distribution<double>(0, 1)(w.rng) < cfg.probability;
    if (!hit)
        return -1;
    ++w.faults;
    say(w, std::string(kKindNames[kind]) + " #" + std::to_string(w.seen) + " " +
               (cfg.mode == kLost        ? "lost"
                : cfg.mode == kDelivered ? "delivered, reported failed"
                                         : "takes the rail down"));
    return cfg.mode;
}

int progress()
{
    if (later.empty())
        return 0;
    std::vector<Later> now;
    now.swap(later);
    for (const Later &l : now) {
        Wrapped *w = find(l.module);
        if (l.rdma) {
            l.rdma(l.module, l.ep, l.local, l.local_handle, l.context, l.cbdata,
                   WEFT_ERR_LINK_DOWN);
            continue;
        }
        if (l.des->des_cbfunc)
            l.des->des_cbfunc(l.module, l.ep, l.des, WEFT_ERR_LINK_DOWN);
        else if (w)
            report_link(*w, "fault injection: a fragment was lost");
        if (w && (l.des->des_flags & WEFT_BTL_DES_FLAG_BTL_OWNERSHIP))
            w->free(l.module, l.des);
    }
    return int(now.size());
}

void take_down(Wrapped &w)
{
    w.down = true;
    if (w.err_fn)
        w.err_fn(w.m, WEFT_BTL_ERROR_FLAG_FATAL, nullptr, "fault injection: rail down", w.err_data);
}

void delivered_done(weft_btl_module_t *m, weft_btl_endpoint_t *ep, weft_btl_descriptor_t *des,
                    weft_status_t)
{
    Wrapped *w = find(m);
    if (!w)
        return;
    auto it = w->saved.find(des);
    if (it == w->saved.end())
        return;
    const Wrapped::Saved s = it->second;
    w->saved.erase(it);
    des->des_cbfunc = s.fn;
    des->des_cbdata = s.cbdata;
    des->des_context = s.context;
    des->des_flags = s.flags;
    if (s.fn)
        s.fn(m, ep, des, WEFT_ERR_LINK_DOWN);
    else
        report_link(*w, "fault injection: a fragment was reported failed");
}

weft_status_t fault_send(weft_btl_module_t *m, weft_btl_endpoint_t *ep, weft_btl_descriptor_t *des,
                         weft_btl_tag_t tag)
{
    Wrapped *w = find(m);
    if (!w)
        return WEFT_ERR_BAD_PARAM;
    if (w->down)
        return WEFT_ERR_LINK_DOWN;
    int kind = -1;
    if (tag == WEFT_BTL_TAG_PML_FIRST && des && des->des_segment_count > 0 &&
        des->des_segments[0].seg_len > 0) {
        const int type = *static_cast<const uint8_t *>(des->des_segments[0].seg_addr);
        if (type >= kMatch && type <= kFin)
            kind = type;
    }
    switch (decide(*w, kind)) {
    case kLost: later.push_back(Later{m, ep, des}); return WEFT_IN_PROGRESS;
    case kDelivered:
        w->saved[des] =
            Wrapped::Saved{des->des_cbfunc, des->des_cbdata, des->des_context, des->des_flags};
        des->des_cbfunc = delivered_done;
        des->des_flags |= WEFT_BTL_DES_FLAG_ALWAYS_CALLBACK;
        if (weft_status_t rc = w->send(m, ep, des, tag);
            rc != WEFT_SUCCESS && rc != WEFT_IN_PROGRESS) {
            // Not sent after all: the caller keeps it, as it was.
            auto it = w->saved.find(des);
            if (it != w->saved.end()) {
                des->des_cbfunc = it->second.fn;
                des->des_flags = it->second.flags;
                w->saved.erase(it);
            }
            return rc;
        }
        return WEFT_IN_PROGRESS;
    case kRailDown: take_down(*w); return WEFT_ERR_LINK_DOWN;
    default: return w->send(m, ep, des, tag);
    }
}

void rdma_delivered_done(weft_btl_module_t *m, weft_btl_endpoint_t *ep, void *local,
                         weft_btl_registration_handle_t *handle, void *context, void *cbdata,
                         weft_status_t)
{
    auto *s = static_cast<RdmaSaved *>(context);
    const RdmaSaved saved = *s;
    delete s;
    saved.fn(m, ep, local, handle, saved.context, cbdata, WEFT_ERR_LINK_DOWN);
}

weft_status_t fault_rdma(bool write, weft_btl_module_t *m, weft_btl_endpoint_t *ep, void *local,
                         uint64_t remote, weft_btl_registration_handle_t *local_handle,
                         const weft_btl_registration_handle_t *remote_handle, size_t size,
                         uint32_t flags, uint8_t order, weft_btl_rdma_completion_fn_t cbfunc,
                         void *context, void *cbdata)
{
    Wrapped *w = find(m);
    if (!w || !cbfunc)
        return WEFT_ERR_BAD_PARAM;
    if (w->down)
        return WEFT_ERR_LINK_DOWN;
    auto real = write ? w->put : w->get;
    switch (decide(*w, write ? kRdmaPut : kRdmaGet)) {
    case kLost: {
        Later l{m, ep, nullptr};
        l.rdma = cbfunc;
        l.local = local;
        l.local_handle = local_handle;
        l.context = context;
        l.cbdata = cbdata;
        later.push_back(l);
        return WEFT_SUCCESS;
    }
    case kDelivered: {
        auto *s = new RdmaSaved{w, cbfunc, context};
        weft_status_t rc = real(m, ep, local, remote, local_handle, remote_handle, size, flags,
                                order, rdma_delivered_done, s, cbdata);
        if (rc != WEFT_SUCCESS)
            delete s;
        return rc;
    }
    case kRailDown: take_down(*w); return WEFT_ERR_LINK_DOWN;
    default:
        return real(m, ep, local, remote, local_handle, remote_handle, size, flags, order, cbfunc,
                    context, cbdata);
    }
}

weft_status_t fault_put(weft_btl_module_t *m, weft_btl_endpoint_t *ep, void *local, uint64_t remote,
                        weft_btl_registration_handle_t *lh,
                        const weft_btl_registration_handle_t *rh, size_t size, uint32_t flags,
                        uint8_t order, weft_btl_rdma_completion_fn_t fn, void *ctx, void *data)
{
    return fault_rdma(true, m, ep, local, remote, lh, rh, size, flags, order, fn, ctx, data);
}

weft_status_t fault_get(weft_btl_module_t *m, weft_btl_endpoint_t *ep, void *local, uint64_t remote,
                        weft_btl_registration_handle_t *lh,
                        const weft_btl_registration_handle_t *rh, size_t size, uint32_t flags,
                        uint8_t order, weft_btl_rdma_completion_fn_t fn, void *ctx, void *data)
{
    return fault_rdma(false, m, ep, local, remote, lh, rh, size, flags, order, fn, ctx, data);
}

// The PML's error callback, kept (faults call it) and passed on to the module.
weft_status_t fault_register_error(weft_btl_module_t *m, weft_btl_error_fn_t fn, void *data)
{
    Wrapped *w = find(m);
    if (!w)
        return WEFT_ERR_BAD_PARAM;
    w->err_fn = fn;
    w->err_data = data;
    return w->register_error ? w->register_error(m, fn, data) : WEFT_SUCCESS;
}

} // namespace

weft_status_t register_fault_params()
{
    const weft_mca_param_def_t defs[P_N] = {
        {.name = "fault_rail",
         .type = WEFT_MCA_PARAM_STRING,
         .default_value = "",
         .help = "Fault injection (docs/fault-injection.md): the BTL module to inject faults "
                 "into, as <component>[:<index>] (the index among that component's modules, "
                 "from 0; without it, every module of the component). Empty: none.",
         .level = 9,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "fault_type",
         .type = WEFT_MCA_PARAM_ENUM,
         .default_value = "any",
         .help = "Fault injection: what a fault may hit: a fragment type of the PML (match, "
                 "rndv, ack, frag, rget, put, fin), an RDMA operation (rdma_put, rdma_get), or "
                 "any of them.",
         .level = 9,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = kTypeValues,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "fault_after",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "0",
         .help = "Fault injection: every N-th fragment of that type on that module gets a "
                 "fault (up to btl_base_fault_count). 0: not by count.",
         .level = 9,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "0.."},
        {.name = "fault_probability",
         .type = WEFT_MCA_PARAM_DOUBLE,
         .default_value = "0",
         .help = "Fault injection: each fragment of that type gets a fault with this "
                 "probability, drawn from a generator seeded with btl_base_fault_seed and the "
                 "rank (so that a run replays).",
         .level = 9,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "0..1"},
        {.name = "fault_seed",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "1",
         .help = "Fault injection: the seed of btl_base_fault_probability's draws.",
         .level = 9,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "fault_mode",
         .type = WEFT_MCA_PARAM_ENUM,
         .default_value = "lost",
         .help = "Fault injection: lost (not sent; its completion reports an error), delivered "
                 "(sent; its completion reports an error all the same), rail_down (the "
                 "module's error callback says it failed; this and every later operation on it "
                 "fail).",
         .level = 9,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = kModeValues,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "fault_count",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "1",
         .help = "Fault injection: most faults per module. 0: no limit.",
         .level = 9,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "0.."},
        {.name = "fault_rank",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "-1",
         .help = "Fault injection: only this world rank injects faults (into what it sends). "
                 "-1: every rank.",
         .level = 9,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "-1.."},
    };
    if (weft_status_t rc =
            weft_mca_param_register_table("btl", "base", defs, P_N, sizeof defs[0], params);
        rc != WEFT_SUCCESS)
        return rc;
    const weft_mca_param_def_t warn = {
        .name = "warn_peer_error",
        .type = WEFT_MCA_PARAM_BOOL,
        .default_value = "0",
        .help = "With fault tolerance on (mpi_ft_enable), a connection that breaks with a peer "
                "is that peer's failure, which the program handles: it is not reported on the "
                "error output unless this is set (or the PML's verbose level is). Without fault "
                "tolerance such an error ends the job with a message either way.",
        .level = 4,
        .scope = WEFT_MCA_SCOPE_LOCAL,
        .enum_values = nullptr,
        .synonyms = nullptr,
        .range = nullptr};
    return weft_mca_param_register_table("btl", "base", &warn, 1, sizeof warn, nullptr);
}

void fault_wrap(std::vector<weft_btl_module_t *> &modules)
{
    const char *rail = params[P_RAIL] ? weft_mca_param_string(params[P_RAIL]) : nullptr;
    if (!rail || !*rail)
        return;
    const std::string spec = rail;
    const size_t colon = spec.find(':');
    const std::string comp = spec.substr(0, colon);
    const std::string index = colon == std::string::npos ? "" : spec.substr(colon + 1);
    cfg.kind = int(weft_mca_param_enum(params[P_TYPE]));
    cfg.after = uint64_t(weft_mca_param_int(params[P_AFTER]));
    cfg.probability = weft_mca_param_double(params[P_PROB]);
    cfg.seed = uint64_t(weft_mca_param_int(params[P_SEED]));
    cfg.mode = int(weft_mca_param_enum(params[P_MODE]));
    cfg.count = uint64_t(weft_mca_param_int(params[P_COUNT]));
    cfg.rank = int(weft_mca_param_int(params[P_RANK]));
    std::unordered_map<std::string, int> per_component;
    bool any = false;
    for (weft_btl_module_t *m : modules) {
        const std::string name = m->btl_component ? m->btl_component->mca.name : "?";
        const int i = per_component[name]++;
        if (name != comp || (!index.empty() && index != std::to_string(i)))
            continue;
        auto w = std::make_unique<Wrapped>();
        w->m = m;
        w->name = "btl/" + name + ":" + std::to_string(i);
        w->send = m->btl_send;
        w->put = m->btl_put;
        w->get = m->btl_get;
        w->register_error = m->btl_register_error;
        w->free = m->btl_free;
        // Distinct per rank and module, the same from run to run.
        w->rng.seed(cfg.seed * 0x9e3779b97f4a7c15ull + uint64_t(weft_runtime_world_rank()) * 1000 +
                    uint64_t(i));
        m->btl_send = fault_send;
        m->btl_sendi = nullptr; // every fragment through btl_send, where faults are made
        if (m->btl_put)
            m->btl_put = fault_put;
        if (m->btl_get)
            m->btl_get = fault_get;
        m->btl_register_error = fault_register_error;
        weft_output(WEFT_OUTPUT_INFO,
                    "btl/base: fault injection armed on %s: %s, %s, mode %s, at most %llu",
                    w->name.c_str(), kKindNames[cfg.kind],
                    cfg.after ? ("every " + std::to_string(cfg.after)).c_str()
                              : ("probability " + std::to_string(cfg.probability)).c_str(),
                    kModeValues[cfg.mode].name, (unsigned long long)cfg.count);
        wrapped.push_back(std::move(w));
        any = true;
    }
    if (!any)
        weft_output(WEFT_OUTPUT_WARNING,
                    "btl/base: btl_base_fault_rail names %s, which is no module of this process",
                    rail);
    else if (!progress_on)
        progress_on = weft_progress_register(progress) == WEFT_SUCCESS;
}

void fault_close()
{
    if (progress_on)
        weft_progress_unregister(progress);
    progress_on = false;
    later.clear();
    wrapped.clear();
}

} // namespace weft::btl::base
