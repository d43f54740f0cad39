// pml/bfo: ob1 plus failover between rails (README.md). The engine of mca/pml/engine with a
// policy that, instead of ending the job when a rail fails, maps the rail out for the peer (or
// for every peer when the whole module failed) and carries on over the remaining rails, and
// sends again the fragments the failed rail may have lost whose copies the receiver can tell
// apart (those with a match sequence number: MATCH, RNDV, RGET). Chosen only by name:
// --mca pml bfo.
#include <pml/engine/pml_engine.h>

#include <string>

namespace weft::pml::bfo {

using engine::Frag;

const char *frag_name(Frag kind)
{
    switch (kind) {
    case Frag::match: return "MATCH";
    case Frag::rndv: return "RNDV";
    case Frag::rget: return "RGET";
    case Frag::ack: return "ACK";
    case Frag::frag: return "FRAG";
    case Frag::put: return "PUT";
    case Frag::fin: return "FIN";
    case Frag::extra: return "control";
    }
    return "?";
}

struct Policy : engine::NoFailover {
    static constexpr const char *name = "bfo";
    static constexpr uint32_t pml_flags = WEFT_PML_FLAG_FAILOVER;

    // Every fragment's completion: each one a failed link may have lost is seen.
    static constexpr bool wants_completions = true;
    static constexpr bool completion(Frag) { return true; }

    // Map btl out for world (world < 0: for every peer), and end the job for a peer left
    // without a rail, saying why failover could not happen.
    template <class E>
    static void map_out(weft_btl_module_t *btl, int world, const std::string &why)
    {
        auto *bml = E::P->bml;
        weft_status_t rc;
        if (world >= 0) {
            weft_proc_t *proc = weft_runtime_proc(world);
            rc = proc && bml->bml_del_proc_btl ? bml->bml_del_proc_btl(bml, proc, btl)
                                               : WEFT_ERR_NOT_FOUND;
        } else {
            rc = bml->bml_del_btl(bml, btl);
        }
        if (E::P->verbose >= 10)
            E::say(WEFT_OUTPUT_INFO,
                   E::who() + ": " + E::rail_name(btl) + " mapped out for " +
                       (world >= 0 ? "rank " + std::to_string(world) : std::string("every peer")) +
                       " (" + why + "; " + weft_status_string(rc) + ")");
        for (size_t w = 0; w < E::P->peers.size(); ++w) {
            if (world >= 0 && int(w) != world)
                continue;
            const engine::Peer &p = E::P->peers[w];
            if (p.eager_limit == 0 && weft_runtime_proc(int(w)) &&
                int(w) != weft_runtime_world_rank())
                E::unreachable(int(w), "its last rail, " + E::rail_name(btl) + ", failed (" + why +
                                           ") and no other rail to it is left to fail over to");
        }
    }

    // The BTL's error callback, before it completes the affected fragments in error.
    template <class E>
    static void link_error(weft_btl_module_t *btl, uint32_t flags, weft_proc_t *proc,
                           const std::string &description)
    {
        const int world = proc ? weft_proc_rank(proc) : -1;
        if (!(btl->btl_flags & WEFT_BTL_FLAG_FAILOVER_SUPPORT))
            E::unreachable(world, "the link over " + E::rail_name(btl) + " failed (" + description +
                                      ") and that BTL does not report errors per "
                                      "fragment (WEFT_BTL_FLAG_FAILOVER_SUPPORT; btl/openib has "
                                      "it when configured with --enable-btl-openib-failover), so "
                                      "pml/bfo cannot fail over from it");
        const bool whole = world < 0 || (flags & WEFT_BTL_ERROR_FLAG_FATAL);
        map_out<E>(btl, whole ? -1 : world, description);
    }

    // A fragment's completion. In error: its rail is mapped out for the peer (if the BTL did
    // not say so first), and a MATCH, RNDV or RGET is sent again from its bytes over the rails
    // left (a copy that arrived as well is dropped by the receiver's sequence window).
    template <class E>
    static void fragment_done(Frag kind, typename E::Req *owner, int world, weft_status_t status,
                              weft_btl_module_t *btl, const weft_btl_descriptor_t *des)
    {
        if (status == WEFT_SUCCESS || world < 0)
            return;
        if (E::peer_has_rail(world, btl))
            map_out<E>(btl, world,
                       std::string("a ") + frag_name(kind) +
                           " fragment failed: " + weft_status_string(status));
        if (kind != Frag::match && kind != Frag::rndv && kind != Frag::rget)
            E::unreachable(world, std::string("a ") + frag_name(kind) + " fragment failed on " +
                                      E::rail_name(btl) +
                                      ", and recovering a rendezvous transfer after it (the "
                                      "restart dance) is not built yet");
        std::string copy;
        for (size_t i = 0; i < des->des_segment_count; ++i)
            copy.append(static_cast<const char *>(des->des_segments[i].seg_addr),
                        des->des_segments[i].seg_len);
        if (E::P->verbose >= 20)
            E::trace(std::string("a ") + frag_name(kind) + " fragment to rank " +
                     std::to_string(world) + " failed on " + E::rail_name(btl) +
                     ": sent again over the rails left");
        ++E::P->resent;
        if (weft_status_t rc =
                E::send_bytes(world, copy.data(), copy.size(), nullptr, 0, true, kind, owner);
            rc != WEFT_SUCCESS)
            E::unreachable(world,
                           std::string("a ") + frag_name(kind) +
                               " fragment could not be sent again: " + weft_status_string(rc));
    }
};

using Engine = engine::Engine<Policy>;

// Below ob1: bfo runs only when asked for by name.
weft_status_t query(int *priority, char *, size_t)
{
    *priority = 5;
    return WEFT_SUCCESS;
}

} // namespace weft::pml::bfo

extern "C" {
__attribute__((visibility("default"))) extern const weft_pml_component_t mca_pml_bfo_component;
const weft_pml_component_t mca_pml_bfo_component = {
    .mca = {.struct_size = sizeof(weft_pml_component_t),
            .mca_abi_major = WEFT_MCA_ABI_MAJOR,
            .mca_abi_minor = WEFT_MCA_ABI_MINOR,
            .framework = "pml",
            .framework_abi_major = WEFT_PML_ABI_MAJOR,
            .framework_abi_minor = WEFT_PML_ABI_MINOR,
            .name = "bfo",
            .version = {.major = 0, .minor = 1, .patch = 0, .reserved = 0},
            .flags = WEFT_MCA_FLAG_EXPLICIT_ONLY,
            .reserved = 0,
            .register_params = weft::pml::bfo::Engine::register_params,
            .open = nullptr,
            .query = weft::pml::bfo::query,
            .close = nullptr},
    .init = weft::pml::bfo::Engine::init,
    .finalize = weft::pml::bfo::Engine::finalize,
};
}
