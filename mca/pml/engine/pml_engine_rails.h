// pml/engine: rails: each peer's copy of its BML lists, made anew when they change; link errors.
// Part of Engine<Policy>: included by pml_engine.h only.
#ifndef WEFT_PML_ENGINE_RAILS_H
#define WEFT_PML_ENGINE_RAILS_H

#include <algorithm>
#include <cstring>

namespace weft::pml::engine {

// One of a peer's lists, as Rails.
template <class Policy>
std::vector<Rail> Engine<Policy>::rails(weft_bml_endpoint_t *ep, weft_bml_list_t list)
{
    std::vector<Rail> out;
    const size_t n = P->bml->bml_endpoint_count(P->bml, ep, list);
    for (size_t i = 0; i < n; ++i) {
        weft_bml_btl_t b;
        if (P->bml->bml_endpoint_btl(P->bml, ep, list, i, &b) != WEFT_SUCCESS)
            continue;
        Rail rail;
        rail.btl = b.btl;
        rail.ep = b.btl_endpoint;
        rail.weight = b.weight;
        rail.flags = b.btl_flags;
        rail.key = rail_key(b.btl);
        rail.index =
            int(std::find(P->modules.begin(), P->modules.end(), b.btl) - P->modules.begin());
        if (size_t(rail.index) >= P->modules.size() || rail.index >= 32)
            continue;
        // Without put/get operations a module is no RDMA rail, whatever its flags say.
        if (list == WEFT_BML_LIST_RDMA &&
            (((rail.flags & WEFT_BTL_FLAG_PUT) && !b.btl->btl_put) ||
             ((rail.flags & WEFT_BTL_FLAG_GET) && !b.btl->btl_get) || !b.btl->btl_register_mem))
            continue;
        out.push_back(rail);
    }
    return out;
}

// The peer's copy of its BML lists, made anew: at add_procs, and whenever the BML removed one
// of its rails. No rail left: eager_limit 0, and the next operation with the peer fails with
// WEFT_ERR_UNREACH.
template <class Policy> void Engine<Policy>::refresh_peer(weft_proc_t *proc)
{
    const int world = weft_proc_rank(proc);
    if (world < 0)
        return;
    if (P->peers.size() <= size_t(world))
        P->peers.resize(size_t(world) + 1);
    Peer &peer = P->peers[size_t(world)];
    weft_btl_module_t *const old_btl = peer.eager_btl;
    weft_btl_endpoint_t *const old_ep = peer.eager_ep;
    // The old lists stay allocated until finalize: a protocol step may hold a Rail of them
    // across the BTL call inside which this runs (a link error reported during btl_send,
    // btl_put, btl_get). Rail changes are few, and so is what this keeps.
    P->retired_rails.push_back(std::move(peer.send));
    P->retired_rails.push_back(std::move(peer.rdma));
    const bool failed = peer.failed;
    peer = Peer{};
    // A process that failed (fault tolerance) gets no rails back: no traffic goes to it.
    if (failed) {
        peer.failed = true;
        return;
    }
    weft_bml_endpoint_t *ep;
    if (P->bml->bml_endpoint_get(P->bml, proc, &ep) != WEFT_SUCCESS)
        return;
    for (weft_bml_list_t list : {WEFT_BML_LIST_EAGER, WEFT_BML_LIST_SEND, WEFT_BML_LIST_RDMA}) {
        weft_bml_btl_t b;
        for (size_t i = 0; P->bml->bml_endpoint_btl(P->bml, ep, list, i, &b) == WEFT_SUCCESS; ++i)
            P->endpoint_world[b.btl_endpoint] = world;
    }
    const size_t neager = P->bml->bml_endpoint_count(P->bml, ep, WEFT_BML_LIST_EAGER);
    weft_bml_btl_t b;
    if (neager == 0 || P->bml->bml_endpoint_btl(P->bml, ep, WEFT_BML_LIST_EAGER,
                                                Policy::eager_rail(neager), &b) != WEFT_SUCCESS)
        return;
    weft_bml_endpoint_info_t info{};
    info.struct_size = sizeof info;
    P->bml->bml_endpoint_info(P->bml, ep, &info);
    peer.eager_btl = b.btl;
    peer.eager_ep = b.btl_endpoint;
    peer.send_inplace = (b.btl_flags & WEFT_BTL_FLAG_SEND_INPLACE) != 0;
    // The limits every eager rail of the peer takes, so that a copy made for one (queued, or
    // handed back by a failed link) still fits another when the first is removed.
    peer.eager_limit = b.btl->btl_eager_limit;
    peer.rndv_first = b.btl->btl_rndv_eager_limit;
    weft_bml_btl_t e;
    for (size_t i = 0;
         P->bml->bml_endpoint_btl(P->bml, ep, WEFT_BML_LIST_EAGER, i, &e) == WEFT_SUCCESS; ++i) {
        peer.eager_limit = std::min(peer.eager_limit, e.btl->btl_eager_limit);
        peer.rndv_first = std::min(peer.rndv_first, e.btl->btl_rndv_eager_limit);
    }
    peer.rndv_first = std::min(peer.rndv_first, peer.eager_limit);
    peer.min_rdma_pipeline_size = info.min_rdma_pipeline_size;
    peer.pipeline_send_length = info.rdma_pipeline_send_length;
    peer.pipeline_frag_size = info.rdma_pipeline_frag_size;
    peer.send = rails(ep, WEFT_BML_LIST_SEND);
    peer.rdma = rails(ep, WEFT_BML_LIST_RDMA);
    if (P->receiver_chooses && !peer.rdma.empty() &&
        (peer.rdma[0].btl->btl_flags & WEFT_BTL_FLAG_RECEIVER_CHOOSES)) {
        peer.chooser = chooser_of(peer.rdma[0].btl);
        peer.stores_choice = peer.rdma[0].btl->btl_flags & WEFT_BTL_FLAG_STORES_CHOICE;
    }
    // Matching fragments the old eager rail still holds must not be overtaken by too many on
    // the new one. (With no rail left, nothing new is sent: no fence.)
    if (old_btl && (old_btl != peer.eager_btl || old_ep != peer.eager_ep))
        start_fence(world, old_btl, old_ep);
}

// The BML changed proc's lists (NULL: every peer's).
template <class Policy> void Engine<Policy>::rails_changed(weft_proc_t *proc, void *)
{
    if (!P)
        return;
    if (proc) {
        refresh_peer(proc);
        return;
    }
    for (size_t w = 0; w < P->peers.size(); ++w)
        if (weft_proc_t *p = weft_runtime_proc(int(w)))
            refresh_peer(p);
}

// world's eager rail moved off btl: new matching fragments to world wait (held() says so) until
// a FENCE sent down btl, behind everything sent there before, is acknowledged by the peer.
template <class Policy>
void Engine<Policy>::start_fence(int world, weft_btl_module_t *btl, weft_btl_endpoint_t *ep)
{
    for (const Fence &f : P->fences)
        if (f.world == world && f.btl == btl && f.ep == ep)
            return; // fenced already
    P->fences.push_back(Fence{world, btl, ep, P->next_fence++, false});
    if (P->verbose >= 10)
        say(WEFT_OUTPUT_INFO, who() + ": rank " + std::to_string(world) + "'s eager rail " +
                                  rail_name(btl) + " was removed: fence " +
                                  std::to_string(P->fences.back().id) +
                                  " sent down it; new messages to that rank wait for it");
    send_fences();
}

// Hand the fences not sent yet to their rails; one whose rail failed is lifted.
template <class Policy> void Engine<Policy>::send_fences()
{
    std::vector<uint32_t> unsent;
    for (const Fence &f : P->fences)
        if (!f.sent)
            unsent.push_back(f.id);
    for (uint32_t id : unsent) {
        auto it = std::find_if(P->fences.begin(), P->fences.end(),
                               [id](const Fence &f) { return f.id == id; });
        if (it == P->fences.end())
            continue;
        weft_btl_module_t *btl = it->btl;
        const FenceHdr h{.type = hdr_fence, .reserved = {}, .id = id};
        weft_btl_descriptor_t *des = nullptr;
        weft_status_t rc = btl->btl_alloc(
            btl, it->ep, WEFT_BTL_NO_ORDER, sizeof h,
            WEFT_BTL_DES_FLAG_BTL_OWNERSHIP | WEFT_BTL_DES_FLAG_ALWAYS_CALLBACK, &des);
        if (rc == WEFT_SUCCESS) {
            std::memcpy(des->des_segments[0].seg_addr, &h, sizeof h);
            des->des_cbfunc = fence_sent;
            des->des_cbdata = reinterpret_cast<void *>(uintptr_t(id));
            it->sent = true; // the callback may run inside btl_send
            rc = btl->btl_send(btl, it->ep, des, kTag);
            if (rc == WEFT_SUCCESS || rc == WEFT_IN_PROGRESS)
                continue;
            btl->btl_free(btl, des);
            auto again = std::find_if(P->fences.begin(), P->fences.end(),
                                      [id](const Fence &f) { return f.id == id; });
            if (again != P->fences.end())
                again->sent = false;
        }
        if (rc == WEFT_ERR_OUT_OF_RESOURCE)
            continue; // from the next progress call
        // The old rail failed: what it held comes back failed or in error (rule 3), and
        // nothing it still delivers can be overtaken by the new rail's traffic for long.
        lift_fence(id, std::string("its rail failed: ") + weft_status_string(rc));
    }
}

template <class Policy>
void Engine<Policy>::fence_sent(weft_btl_module_t *, weft_btl_endpoint_t *,
                                weft_btl_descriptor_t *des, weft_status_t status)
{
    if (!P || status == WEFT_SUCCESS)
        return; // the answer lifts it
    lift_fence(uint32_t(reinterpret_cast<uintptr_t>(des->des_cbdata)),
               std::string("its rail failed: ") + weft_status_string(status));
}

template <class Policy> void Engine<Policy>::lift_fence(uint32_t id, const std::string &why)
{
    auto it = std::find_if(P->fences.begin(), P->fences.end(),
                           [id](const Fence &f) { return f.id == id; });
    if (it == P->fences.end())
        return;
    const int world = it->world;
    P->fences.erase(it);
    ++P->fences_done;
    if (P->verbose >= 10)
        say(WEFT_OUTPUT_INFO, who() + ": fence " + std::to_string(id) + " to rank " +
                                  std::to_string(world) + " lifted: " + why);
}

// A FENCE from a peer (everything it sent down this rail before has been handled: the rail
// delivers in order) is answered over this process's rails to it; the peer's answer to ours
// lifts it.
template <class Policy>
void Engine<Policy>::handle_fence(weft_btl_module_t *btl, weft_btl_endpoint_t *ep, const char *msg,
                                  size_t len)
{
    if (len != sizeof(FenceHdr))
        return malformed("fence of " + std::to_string(len) + " bytes");
    FenceHdr h;
    std::memcpy(&h, msg, sizeof h);
    auto who_sent = P->endpoint_world.find(ep);
    if (who_sent == P->endpoint_world.end())
        return malformed("fence from " + rail_name(btl) + " on an endpoint the PML never used");
    const int world = who_sent->second;
    if (h.type == hdr_fence_ack) {
        auto it = std::find_if(P->fences.begin(), P->fences.end(),
                               [&](const Fence &f) { return f.id == h.id && f.world == world; });
        if (it == P->fences.end()) {
            // Lifted already when its rail reported a failure, after delivering it after all.
            if (P->verbose >= 10)
                say(WEFT_OUTPUT_INFO, who() + ": answer to fence " + std::to_string(h.id) +
                                          " from rank " + std::to_string(world) + " ignored");
            return;
        }
        return lift_fence(h.id, "answered");
    }
    const FenceHdr ack{.type = hdr_fence_ack, .reserved = {}, .id = h.id};
    if (weft_status_t rc = send_bytes(world, &ack, sizeof ack, nullptr, 0, true);
        rc != WEFT_SUCCESS)
        unreachable(world, std::string("a fence could not be answered: ") + weft_status_string(rc));
}

template <class Policy> std::string Engine<Policy>::rail_name(const weft_btl_module_t *btl)
{
    return std::string("btl/") + (btl->btl_component ? btl->btl_component->mca.name : "?") + ":" +
           std::to_string(rail_key(const_cast<weft_btl_module_t *>(btl)) & 0xffu);
}

template <class Policy> std::string Engine<Policy>::rails_text(uint32_t mask)
{
    std::string out;
    for (size_t i = 0; i < P->modules.size() && i < 32; ++i) {
        if (!(mask & (1u << i)))
            continue;
        weft_btl_module_t *m = P->modules[i];
        out += (out.empty() ? "" : "+") +
               std::string(m->btl_component ? m->btl_component->mca.name : "?") + ":" +
               std::to_string(rail_key(m) & 0xffu);
    }
    return out.empty() ? "the eager rail" : out;
}

// A BTL's error callback: flags 0 is a notice (logged); a broken link or module goes to the
// policy, which maps the rail out or ends the job.
template <class Policy>
void Engine<Policy>::on_error(weft_btl_module_t *btl, uint32_t flags, weft_proc_t *proc,
                              const char *description, void *)
{
    const std::string what = description ? description : "?";
    if (!(flags & (WEFT_BTL_ERROR_FLAG_FATAL | WEFT_BTL_ERROR_FLAG_LINK |
                   WEFT_BTL_ERROR_FLAG_PROC_FAILED))) {
        say(WEFT_OUTPUT_ERROR, who() + ": " + rail_name(btl) + " reported: " + what);
        return;
    }
    if (!P)
        return;
    Policy::template link_error<Engine>(btl, flags, proc, what);
}

// world cannot be reached any more and a message would be lost: the job ends, naming the peer
// (world < 0: several) and why.
template <class Policy> void Engine<Policy>::unreachable(int world, const std::string &why)
{
    weft_runtime_abort(1, (who() + ": " + peer_name(world) + " cannot be reached: " + why).c_str());
}

// "rank 3 (host b)", for messages that end the job.
template <class Policy> std::string Engine<Policy>::peer_name(int world)
{
    weft_proc_t *proc = world >= 0 ? weft_runtime_proc(world) : nullptr;
    return proc ? "rank " + std::to_string(world) + " (host " + weft_proc_hostname(proc) + ")"
                : std::string("a peer");
}

// Test faults: pml_<name>_fault_remove_rails, "<n>:<btl>[:<index>],...": once this process has
// started or matched n rendezvous messages, remove that BTL module (every module of the
// component without an index) from every peer's lists, as a failover PML would.
template <class Policy> void Engine<Policy>::remove_rails_now()
{
    const uint64_t rendezvous = P->next_id - 1;
    for (auto it = P->remove_rails.begin(); it != P->remove_rails.end();) {
        if (rendezvous < it->first) {
            ++it;
            continue;
        }
        const std::string spec = it->second;
        it = P->remove_rails.erase(it);
        const size_t colon = spec.find(':');
        const std::string comp = spec.substr(0, colon);
        for (weft_btl_module_t *m : P->modules) {
            const std::string name = m->btl_component ? m->btl_component->mca.name : "?";
            if (name != comp || (colon != std::string::npos &&
                                 spec.substr(colon + 1) != std::to_string(rail_key(m) & 0xffu)))
                continue;
            const weft_status_t rc = P->bml->bml_del_btl(P->bml, m);
            say(WEFT_OUTPUT_INFO, who() + ": fault injection: " + rail_name(m) + " removed after " +
                                      std::to_string(rendezvous) + " rendezvous messages (" +
                                      weft_status_string(rc) + ")");
            if (!WEFT_MODULE_HAS_OP(P->bml, weft_bml_module_t, bml_register_rails_changed))
                rails_changed(nullptr, nullptr);
        }
    }
}

} // namespace weft::pml::engine

#endif
