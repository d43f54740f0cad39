// pml/bfo: the failover policy (README.md; the seed's pml_bfo_failover.c): instead of ending
// the job when a rail fails, map the rail out for the peer (or for every peer when the whole
// module failed) and carry on over the remaining rails; send again the fragments the failed
// rail may have lost whose copies the receiver can tell apart (those with a match sequence
// number: MATCH, RNDV, RGET); and restart a send/receive pipeline whose FRAG or ACK failed (the
// restart dance, with an attempt number in every FRAG and ACK so that those of an earlier
// attempt are dropped). pml_bfo_component.cc instantiates the engine with it.
#ifndef WEFT_PML_BFO_FAILOVER_H
#define WEFT_PML_BFO_FAILOVER_H

#include <pml/engine/pml_engine.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace weft::pml::bfo {

using engine::Frag;

inline const char *frag_name(Frag kind)
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
    case Frag::rdma: return "RDMA";
    }
    return "?";
}

// The restart dance's messages (the engine hands types from hdr_policy_first on to the policy).
enum : uint8_t {
    hdr_restart_notify = engine::hdr_policy_first, // sender -> receiver: restart attempt n
    hdr_recv_err_notify,                           // receiver -> sender: my side failed
    hdr_restart_ack,                               // receiver -> sender: reset, send it all again
    hdr_restart_nack,                              // receiver -> sender: it arrived whole already
    hdr_rail_down,                                 // either way: I mapped this rail out for you
    hdr_rail_up                                    // either way: I took this rail back for you
};
// A rail one side mapped out for the other, told to the other over a rail left so that both
// map the same rail out (a failure only one side saw would otherwise leave the other sending
// into it; the seed's section 9).
struct RailDownHdr {
    uint8_t type;
    uint8_t reserved[3];
    uint32_t rail; // rail_key(): the same on both sides
    int32_t src;   // the sender's world rank: it may come over a rail the receiver does not use
                   // for the sender yet (a standby BTL, bml_r2_standby), whose endpoint the
                   // engine cannot name
    uint32_t reserved2;
};
// bfo's FIN: the engine's, with the message's match header (the seed's section 7: context,
// source, tag and sequence number), the piece it finishes and the attempt. A FIN whose match
// header is not its request's is refused; a copy of a FIN sent again (its first completed in
// error, yet arrived) and a FIN of an earlier attempt are recognised and dropped.
struct BfoFin : engine::FinHdr {
    engine::MatchHdr match;
    uint64_t offset;
    uint8_t attempt;
    uint8_t reserved2[7];
};
static_assert(std::is_trivially_copyable_v<BfoFin> &&
              sizeof(BfoFin) == sizeof(engine::FinHdr) + 32);
struct RestartHdr {
    uint8_t type;
    uint8_t attempt; // the sender's attempt this is about
    uint8_t reserved[6];
    uint64_t send_id;
    uint64_t recv_id;
};
inline const char *restart_name(uint8_t type)
{
    switch (type) {
    case hdr_restart_notify: return "RNDVRESTARTNOTIFY";
    case hdr_recv_err_notify: return "RECVERRNOTIFY";
    case hdr_restart_ack: return "RNDVRESTARTACK";
    case hdr_restart_nack: return "RNDVRESTARTNACK";
    }
    return "?";
}

struct Failover : engine::NoFailover {
    static constexpr uint32_t pml_flags = WEFT_PML_FLAG_FAILOVER;

    // Re-admission (pml_bfo_readmit_interval): the rails mapped out, per peer, since when.
    static inline weft_mca_param_t *p_readmit = nullptr;
    // What a failed RDMA operation or PUT request costs (pml_bfo_rdma_recovery): the restart
    // dance (the seed's way: the whole message again, as FRAGs) or only the failed piece.
    enum { recover_restart = 0, recover_resume = 1 };
    static inline weft_mca_param_t *p_recovery = nullptr;
    static bool resume() { return p_recovery && weft_mca_param_enum(p_recovery) == recover_resume; }
    // Requests (by id) whose RDMA operation completed while they were in error: the restart
    // dance is looked at for them from progress, once the engine is done with the completion.
    static inline std::vector<uint64_t> to_settle;
    struct Out {
        int world;
        weft_btl_module_t *btl;
        uint64_t since_ms;
    };
    static inline std::vector<Out> mapped;
    // The engine's parameters, then bfo's own.
    template <class E> static weft_status_t register_params()
    {
        if (weft_status_t rc = E::register_params(); rc != WEFT_SUCCESS)
            return rc;
        static const weft_mca_enum_value_t recoveries[] = {
            {"restart", recover_restart}, {"resume", recover_resume}, {nullptr, 0}};
        const weft_mca_param_def_t defs[] = {
            {.name = "readmit_interval",
             .type = WEFT_MCA_PARAM_INT,
             .default_value = "0",
             .help = "Milliseconds after which a rail mapped out for a peer is tried again (the "
                     "BTL starts its endpoint over; the peer is told to do the same): if it "
                     "answers, it carries traffic again, else it is mapped out again and tried "
                     "after the next interval. 0: never, as the bfo design says (a mapped-out "
                     "rail stays out for the rest of the job).",
             .level = 4,
             .scope = WEFT_MCA_SCOPE_LOCAL,
             .enum_values = nullptr,
             .synonyms = nullptr,
             .range = "0..86400000"},
            {.name = "rdma_recovery",
             .type = WEFT_MCA_PARAM_ENUM,
             .default_value = "restart",
             .help = "What a failed RDMA put or get, or a failed PUT request of the receiver, "
                     "costs. restart: the seed's way: the request is marked in error and, once "
                     "nothing of it is in flight, the restart dance sends the whole message "
                     "again as FRAGs over the rails left. resume: only the failed piece moves, "
                     "as FRAGs (a put or get), or is asked for again (a PUT request; the sender "
                     "drops a copy by its offset).",
             .level = 5,
             .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
             .enum_values = recoveries,
             .synonyms = nullptr,
             .range = nullptr},
        };
        weft_mca_param_t *handles[2] = {};
        const weft_status_t rc =
            weft_mca_param_register_table("pml", "bfo", defs, 2, sizeof defs[0], handles);
        p_readmit = handles[0];
        p_recovery = handles[1];
        return rc;
    }
    static inline uint64_t next_readmit_ms = 0;
    static uint64_t now_ms()
    {
        return uint64_t(std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count());
    }
    static uint64_t readmit_interval()
    {
        return p_readmit ? uint64_t(std::max<int64_t>(weft_mca_param_int(p_readmit), 0)) : 0;
    }
    // Take btl back for world (the BML asks the BTL to start its endpoint over); true if the
    // rail is in the peer's lists again. tell: ask the peer to do the same (RAILUP).
    template <class E> static bool readmit(weft_btl_module_t *btl, int world, bool tell)
    {
        auto *bml = E::P->bml;
        weft_proc_t *proc = weft_runtime_proc(world);
        if (!proc || !WEFT_MODULE_HAS_OP(bml, weft_bml_module_t, bml_readd_proc_btl))
            return false;
        const weft_status_t rc = bml->bml_readd_proc_btl(bml, proc, btl);
        const std::string rail = E::rail_name(btl), rank = std::to_string(world);
        if (rc != WEFT_SUCCESS) {
            if (E::P->verbose >= 10)
                E::say(WEFT_OUTPUT_INFO, E::who() + ": " + rail +
                                             " could not be readmitted for rank " + rank +
                                             " yet (" + weft_status_string(rc) + ")");
            return false;
        }
        if (E::P->verbose >= 10)
            E::say(WEFT_OUTPUT_INFO, E::who() + ": " + rail + " readmitted for rank " + rank +
                                         (tell ? "" : " (rank " + rank + " readmitted it)"));
        std::erase_if(mapped, [&](const Out &o) { return o.world == world && o.btl == btl; });
        if (tell)
            tell_rail<E>(world, hdr_rail_up, btl);
        return true;
    }
    // RAILDOWN or RAILUP for btl, to world over the rails it has.
    template <class E> static void tell_rail(int world, uint8_t type, weft_btl_module_t *btl)
    {
        if (weft_runtime_proc_failed(world)) // a failed process (ULFM) is told nothing
            return;
        const RailDownHdr h{.type = type,
                            .reserved = {},
                            .rail = E::rail_key(btl),
                            .src = weft_runtime_world_rank(),
                            .reserved2 = 0};
        E::send_bytes(world, &h, sizeof h, nullptr, 0, true, Frag::extra);
    }
    template <class E> static int progress()
    {
        int settled = 0;
        if (!to_settle.empty()) [[unlikely]] {
            const std::vector<uint64_t> ids = std::move(to_settle);
            to_settle.clear();
            for (uint64_t id : ids)
                if (typename E::Req *r = E::P->live.find(id)) {
                    if (r->is_send)
                        sender_settle<E>(r);
                    else
                        receiver_settle<E>(r);
                    ++settled;
                }
        }
        if (mapped.empty()) [[likely]]
            return settled;
        const uint64_t interval = readmit_interval();
        if (interval == 0)
            return settled;
        const uint64_t now = now_ms();
        if (now < next_readmit_ms)
            return settled;
        next_readmit_ms = now + 50; // the clock is read at most every 50 ms
        int n = settled;
        // A failed process's rails (ULFM) are not tried again.
        std::erase_if(mapped, [](const Out &o) { return weft_runtime_proc_failed(o.world); });
        const std::vector<Out> due = mapped;
        for (const Out &o : due)
            if (now - o.since_ms >= interval) {
                if (readmit<E>(o.btl, o.world, true))
                    ++n;
                else
                    for (Out &m : mapped) // tried: the next try after another interval
                        if (m.world == o.world && m.btl == o.btl)
                            m.since_ms = now;
            }
        return n;
    }

    // Every fragment's completion: each one a failed link may have lost is seen.
    static constexpr bool wants_completions = true;
    static constexpr bool completion(Frag) { return true; }

    // Each request's completions still to come, its error, and its attempt.
    struct RequestExtra {
        uint32_t outstanding = 0; // fragments handed to a BTL whose completion is to come
        bool error = false;       // a fragment of it failed: restart once outstanding is 0
        bool restarting = false;  // send: RNDVRESTARTNOTIFY sent, waiting for the answer
        bool notify_wait = false; // recv: a RNDVRESTARTNOTIFY waits for outstanding 0
        uint8_t attempt = 0;      // send: the current attempt; recv: the one being received
        engine::MatchHdr match{}; // the message's match header (a rendezvous's: for its FINs)
        // The pieces of this attempt whose FIN (or, at a sender, whose PUT) arrived: a copy
        // of either is dropped (few: one per rail and RDMA fragment).
        std::vector<uint64_t> fins, puts;
    };

    using Fin = BfoFin;
    static constexpr bool wants_match = true;
    template <class E> static void rndv_match(typename E::Req *r, const engine::MatchHdr &h)
    {
        r->extra.match = h;
    }
    template <class E> static void fill_fin(Fin &fin, const typename E::Req *r, uint64_t offset)
    {
        if (r)
            fin.match = r->extra.match;
        fin.offset = offset;
        fin.attempt = r ? r->extra.attempt : 0;
    }
    static bool same_message(const engine::MatchHdr &a, const engine::MatchHdr &b)
    {
        return a.cid == b.cid && a.src == b.src && a.tag == b.tag && a.seq == b.seq;
    }
    static bool first_time(std::vector<uint64_t> &seen, uint64_t offset)
    {
        if (std::find(seen.begin(), seen.end(), offset) != seen.end())
            return false;
        seen.push_back(offset);
        return true;
    }
    template <class E> static bool accept_fin(typename E::Req *r, const Fin &fin)
    {
        return same_message(fin.match, r->extra.match) && fin.attempt == r->extra.attempt &&
               !r->extra.restarting && first_time(r->extra.fins, fin.offset);
    }
    template <class E> static bool accept_piece(typename E::Req *r, uint64_t offset)
    {
        return first_time(r->extra.puts, offset);
    }
    // A new attempt: nothing of it has arrived yet.
    static void new_attempt(RequestExtra &x)
    {
        x.fins.clear();
        x.puts.clear();
    }

    // A put (sender) or get (receiver) failed: the rail is mapped out for the peer, and the
    // piece goes as FRAGs over the rails left instead (asked for by the receiver after a get;
    // a FRAG rewrites whatever part of the piece the failed transfer wrote). No FIN for it.
    template <class E>
    static bool rdma_failed(typename E::Req *r, weft_btl_module_t *btl, bool get, uint64_t send_id,
                            uint64_t offset, uint64_t length, weft_status_t status)
    {
        const int world = get ? r->world_peer : E::send_world(r);
        if (E::peer_has_rail(world, btl))
            map_out<E>(btl, world,
                       std::string("an RDMA ") + (get ? "get" : "put") +
                           " failed: " + weft_status_string(status));
        if (!resume()) {
            // The seed's way: the request is in error, and the restart dance runs once nothing
            // of it is in flight (no FIN for the piece).
            r->extra.error = true;
            to_settle.push_back(r->id);
            say30<E>(std::string("an RDMA ") + (get ? "get" : "put") + " of " +
                     std::to_string(length) + " bytes at " + std::to_string(offset) + " to rank " +
                     std::to_string(world) + " failed; " + std::to_string(r->extra.outstanding) +
                     " events of its request in flight");
            return true;
        }
        say30<E>(std::string("an RDMA ") + (get ? "get" : "put") + " of " + std::to_string(length) +
                 " bytes at " + std::to_string(offset) + " to rank " + std::to_string(world) +
                 " failed; the piece goes as FRAGs");
        if (get) {
            E::ask_frags(r, send_id, size_t(offset), size_t(length));
        } else {
            r->frag_fallback = true;
            r->frag_work.push_back({size_t(offset), size_t(offset + length)});
            E::schedule(r);
        }
        return true;
    }

    template <class E> static void fragment_out(Frag kind, typename E::Req *owner, int delta)
    {
        if (!owner)
            return;
        if (delta > 0)
            ++owner->extra.outstanding;
        else if (owner->extra.outstanding)
            --owner->extra.outstanding;
        // An RDMA operation's completion does not come through fragment_done: a request in
        // error is settled from progress once the engine has taken the completion.
        if (kind == Frag::rdma && delta < 0 && owner->extra.error && owner->extra.outstanding == 0)
            to_settle.push_back(owner->id);
    }
    // A send completes once every fragment of it has completed: until then it may have to
    // be sent again.
    template <class E> static bool may_complete(const typename E::Req *r)
    {
        if (r->extra.outstanding)
            return false;
        // A send to a process that failed (fault tolerance: the engine ended it) ends in that
        // error, whatever its restart dance was doing: there is nobody to restart with.
        return r->status.error == WEFT_ERR_PROC_FAILED || (!r->extra.error && !r->extra.restarting);
    }
    template <class E> static uint8_t attempt(const typename E::Req *r) { return r->extra.attempt; }
    template <class E> static bool accept_attempt(const typename E::Req *r, uint8_t attempt)
    {
        return r->extra.attempt == attempt && !r->extra.restarting;
    }
    static constexpr bool late_fragments_expected = true;

    template <class E> static void say30(const std::string &what)
    {
        if (E::P->verbose >= 30)
            E::trace("restart: " + what);
    }

    template <class E>
    static void send_restart(int world, uint8_t type, uint8_t attempt, uint64_t send_id,
                             uint64_t recv_id)
    {
        RestartHdr h{};
        h.type = type;
        h.attempt = attempt;
        h.send_id = send_id;
        h.recv_id = recv_id;
        say30<E>(std::string(restart_name(type)) + " to rank " + std::to_string(world) +
                 " (attempt " + std::to_string(attempt) + ")");
        weft_status_t rc = E::send_bytes(world, &h, sizeof h, nullptr, 0, true, Frag::extra);
        if (rc == WEFT_SUCCESS)
            return;
        const std::string why = std::string("a ") + restart_name(type) +
                                " could not be sent: " + weft_status_string(rc);
        // With fault tolerance on, a peer no rail reaches is a failed process: the engine ends
        // its requests (this one too) with MPIX_ERR_PROC_FAILED.
        if (weft_runtime_ft_enabled() &&
            (weft_runtime_proc_failed(world) ||
             weft_runtime_report_failure(world, why.c_str()) == WEFT_SUCCESS))
            return;
        E::unreachable(world, why);
    }

    // Send s failed (its error flag) and nothing of it is in flight: ask the receiver to
    // restart (a new attempt), or, before it answered at all, wait for its ACK.
    template <class E> static void sender_settle(typename E::Req *s)
    {
        if (!s->extra.error || s->extra.outstanding || s->extra.restarting)
            return;
        if (!s->answered && s->peer_recv_id == 0) {
            // No ACK yet: the receiver has not matched it; its RNDV was sent again if it
            // failed, and the ACK to come starts the pipeline.
            s->extra.error = false;
            return;
        }
        s->extra.error = false;
        s->extra.restarting = true;
        ++s->extra.attempt;
        new_attempt(s->extra);
        s->frag_work.clear();
        send_restart<E>(E::send_world(s), hdr_restart_notify, s->extra.attempt, s->id,
                        s->peer_recv_id);
    }

    // Receive r failed (its ACK did) and nothing of it is in flight: tell the sender.
    template <class E> static void receiver_settle(typename E::Req *r)
    {
        if (r->extra.outstanding)
            return;
        if (r->extra.notify_wait) {
            r->extra.notify_wait = false;
            r->extra.error = false;
            reset_recv<E>(r);
            return;
        }
        if (!r->extra.error)
            return;
        r->extra.error = false;
        send_restart<E>(r->world_peer, hdr_recv_err_notify, r->extra.attempt, r->peer_send_id,
                        r->id);
    }

    // The receiver's side of a restart: everything is received again, from byte 0.
    template <class E> static void reset_recv(typename E::Req *r)
    {
        r->received = 0;
        say30<E>("receive of " + std::to_string(r->total) + " bytes from rank " +
                 std::to_string(r->world_peer) + " reset for attempt " +
                 std::to_string(r->extra.attempt));
        send_restart<E>(r->world_peer, hdr_restart_ack, r->extra.attempt, r->peer_send_id, r->id);
    }

    template <class E> static bool handle_extra(const char *msg, size_t len, int world)
    {
        if (len == sizeof(RailDownHdr) && (static_cast<uint8_t>(msg[0]) == hdr_rail_down ||
                                           static_cast<uint8_t>(msg[0]) == hdr_rail_up)) {
            RailDownHdr h;
            std::memcpy(&h, msg, sizeof h);
            if (world < 0)
                world = h.src;
            if (world < 0 || world >= weft_runtime_world_size() ||
                world == weft_runtime_world_rank())
                return true;
            if (h.type == hdr_rail_up) {
                // The peer took the rail back: so does this side, if it has it mapped out.
                for (weft_btl_module_t *m : E::P->modules)
                    if (E::rail_key(m) == h.rail && !E::peer_has_rail(world, m))
                        readmit<E>(m, world, false);
                return true;
            }
            for (weft_btl_module_t *m : E::P->modules)
                if (E::rail_key(m) == h.rail && E::peer_has_rail(world, m))
                    map_out<E>(m, world, "rank " + std::to_string(world) + " mapped it out", false);
            return true; // a rail gone already (or unknown here): nothing to do
        }
        if (len != sizeof(RestartHdr))
            return false;
        RestartHdr h;
        std::memcpy(&h, msg, sizeof h);
        switch (h.type) {
        case hdr_restart_notify: {
            // A receive that is over (not found) got all its bytes: NACK.
            typename E::Req *r = E::P->live.find(h.recv_id);
            if (!r || r->is_send) {
                if (world >= 0)
                    send_restart<E>(world, hdr_restart_nack, h.attempt, h.send_id, 0);
                return true;
            }
            if (uint8_t(h.attempt - r->extra.attempt) >= 0x80u || h.attempt == r->extra.attempt) {
                // This attempt was reset already (a copy of the notice): answer again.
                if (h.attempt == r->extra.attempt && !r->extra.notify_wait)
                    send_restart<E>(r->world_peer, hdr_restart_ack, r->extra.attempt,
                                    r->peer_send_id, r->id);
                return true;
            }
            r->extra.attempt = h.attempt;
            new_attempt(r->extra);
            r->peer_send_id = h.send_id;
            if (r->extra.outstanding) {
                r->extra.notify_wait = true; // once its ACK's completion is in
                return true;
            }
            reset_recv<E>(r);
            return true;
        }
        case hdr_recv_err_notify: {
            typename E::Req *s = E::P->live.find(h.send_id);
            if (!s || !s->is_send || h.attempt != s->extra.attempt || s->extra.restarting) {
                E::late("a RECVERRNOTIFY of an earlier attempt");
                return true;
            }
            if (s->peer_recv_id == 0)
                s->peer_recv_id = h.recv_id; // its ACK was lost
            s->answered = true;
            s->extra.error = true;
            sender_settle<E>(s);
            return true;
        }
        case hdr_restart_ack:
        case hdr_restart_nack: {
            typename E::Req *s = E::P->live.find(h.send_id);
            if (!s || !s->is_send || !s->extra.restarting || h.attempt != s->extra.attempt) {
                E::late(std::string("a ") + restart_name(h.type) + " of an earlier attempt");
                return true;
            }
            s->extra.restarting = false;
            s->answered = true;
            if (h.type == hdr_restart_nack) {
                say30<E>("the receiver had it all: send of " + std::to_string(s->bytes) +
                         " bytes complete");
                s->frag_work.clear();
                s->done_bytes = s->bytes;
                E::maybe_complete_send(s);
                return true;
            }
            // Everything again, from byte 0, to the receive as it is now.
            s->peer_recv_id = h.recv_id;
            s->done_bytes = 0;
            s->striped.fill(0);
            s->ran = engine::Proto::pipeline;
            s->frag_work.clear();
            s->frag_work.push_back({0, s->bytes});
            say30<E>("send of " + std::to_string(s->bytes) + " bytes restarted (attempt " +
                     std::to_string(s->extra.attempt) + ")");
            E::schedule(s);
            return true;
        }
        }
        return false;
    }

    // Map btl out for world (world < 0: for every peer), and end the job for a peer left
    // without a rail, saying why failover could not happen.
    template <class E>
    static void map_out(weft_btl_module_t *btl, int world, const std::string &why, bool tell = true)
    {
        auto *bml = E::P->bml;
        // The peers that have it, to tell (before it is gone from their lists).
        std::vector<int> told;
        if (tell)
            for (size_t w = 0; w < E::P->peers.size(); ++w)
                if ((world < 0 || int(w) == world) && int(w) != weft_runtime_world_rank() &&
                    E::peer_has_rail(int(w), btl))
                    told.push_back(int(w));
        // Remembered for re-admission: each peer that had it.
        if (readmit_interval() > 0)
            for (size_t w = 0; w < E::P->peers.size(); ++w)
                if ((world < 0 || int(w) == world) && int(w) != weft_runtime_world_rank() &&
                    E::peer_has_rail(int(w), btl) &&
                    std::none_of(mapped.begin(), mapped.end(),
                                 [&](const Out &o) { return o.world == int(w) && o.btl == btl; }))
                    mapped.push_back({int(w), btl, now_ms()});
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
                int(w) != weft_runtime_world_rank()) {
                // With fault tolerance (ULFM), a peer that no rail reaches any more is a
                // failed process: the job goes on without it.
                const std::string gone =
                    "its last rail, " + E::rail_name(btl) + ", failed (" + why + ")";
                if (weft_runtime_ft_enabled() &&
                    weft_runtime_report_failure(int(w), gone.c_str()) == WEFT_SUCCESS) {
                    E::warn_peer_error(int(w), gone);
                    continue;
                }
                E::unreachable(int(w), "its last rail, " + E::rail_name(btl) + ", failed (" + why +
                                           ") and no other rail to it is left to fail over to");
            }
        }
        for (int w : told) {
            if (E::P->verbose >= 10)
                E::say(WEFT_OUTPUT_INFO, E::who() + ": rank " + std::to_string(w) + " told that " +
                                             E::rail_name(btl) + " is mapped out");
            tell_rail<E>(w, hdr_rail_down, btl);
        }
    }

    // The BTL's error callback, before it completes the affected fragments in error.
    template <class E>
    static void link_error(weft_btl_module_t *btl, uint32_t flags, weft_proc_t *proc,
                           const std::string &description)
    {
        const int world = proc ? weft_proc_rank(proc) : -1;
        if (!(btl->btl_flags & WEFT_BTL_FLAG_FAILOVER_SUPPORT)) {
            // With fault tolerance on, a broken link that cannot be failed over from is its
            // peer's failure (as under ob1): the job goes on without the peer.
            const std::string why = E::rail_name(btl) + ": " + description;
            if (world >= 0 && weft_runtime_ft_enabled() &&
                weft_runtime_report_failure(world, why.c_str()) == WEFT_SUCCESS) {
                E::warn_peer_error(world, why);
                return;
            }
            E::unreachable(world, "the link over " + E::rail_name(btl) + " failed (" + description +
                                      ") and that BTL does not report errors per "
                                      "fragment (WEFT_BTL_FLAG_FAILOVER_SUPPORT; btl/openib has "
                                      "it when configured with --enable-btl-openib-failover), so "
                                      "pml/bfo cannot fail over from it");
        }
        const bool whole = world < 0 || (flags & WEFT_BTL_ERROR_FLAG_FATAL);
        map_out<E>(btl, whole ? -1 : world, description);
    }

    // A fragment's completion. In error: its rail is mapped out for the peer (if the BTL did
    // not say so first); a MATCH, RNDV or RGET, or a message of the restart dance, is sent
    // again from its bytes over the rails left (a copy that arrived as well is dropped: by the
    // receiver's sequence window, or by its attempt number); a FRAG or an ACK marks its
    // request in error, and once none of the request's fragments is in flight the restart
    // dance begins.
    template <class E>
    static void fragment_done(Frag kind, typename E::Req *owner, int world, weft_status_t status,
                              weft_btl_module_t *btl, const weft_btl_descriptor_t *des)
    {
        if (owner)
            fragment_out<E>(kind, owner, -1);
        if (status != WEFT_SUCCESS && world >= 0) {
            if (E::peer_has_rail(world, btl))
                map_out<E>(btl, world,
                           std::string("a ") + frag_name(kind) +
                               " fragment failed: " + weft_status_string(status));
            switch (kind) {
            case Frag::match:
            case Frag::rndv:
            case Frag::rget:
            case Frag::extra:
                E::send_again(world, des->des_segments, des->des_segment_count, kind, owner, btl);
                break;
            case Frag::put:
                // The receive's request for a piece (by put, or as FRAGs). resume: asked again
                // (the sender drops a copy by its offset; a handle for a rail mapped out
                // meanwhile makes it send FRAGs). restart (the seed): the receive is in error,
                // as for a failed ACK. A receive that is over asked for nothing more.
                if (owner && resume()) {
                    E::send_again(world, des->des_segments, des->des_segment_count, kind, owner,
                                  btl);
                    break;
                }
                if (owner) {
                    owner->extra.error = true;
                    say30<E>(std::string("a PUT of a receive of ") + std::to_string(owner->total) +
                             " bytes failed; " + std::to_string(owner->extra.outstanding) +
                             " of its fragments still in flight");
                }
                break;
            case Frag::fin:
                // Sent again: a copy is dropped by its piece and attempt.
                E::send_again(world, des->des_segments, des->des_segment_count, kind, nullptr, btl);
                break;
            case Frag::rdma: break; // (not a fragment: rdma_failed)
            case Frag::ack:
                // An ACK that only tells the sender its message matched (all of it came with
                // the RNDV: a synchronous send waits for it) belongs to a receive that is over:
                // sent again (a copy is harmless: the send is answered already, or over). Any
                // other ACK of a receive that is over was had: every byte came.
                if (!owner) {
                    engine::AckHdr a{};
                    if (des->des_segment_count > 0 && des->des_segments[0].seg_len >= sizeof a)
                        std::memcpy(&a, des->des_segments[0].seg_addr, sizeof a);
                    if (a.recv_id == 0 && a.send_id != 0)
                        E::send_again(world, des->des_segments, des->des_segment_count, kind,
                                      nullptr, btl);
                    break;
                }
                [[fallthrough]];
            case Frag::frag:
                if (owner) {
                    owner->extra.error = true;
                    say30<E>(std::string("a ") + frag_name(kind) + " of a " +
                             (owner->is_send ? "send" : "receive") + " of " +
                             std::to_string(owner->is_send ? owner->bytes : owner->total) +
                             " bytes failed; " + std::to_string(owner->extra.outstanding) +
                             " of its fragments still in flight");
                }
                break;
            }
        }
        if (!owner)
            return;
        if (owner->is_send)
            sender_settle<E>(owner); // the engine then sees whether it may complete
        else
            receiver_settle<E>(owner);
    }
};

} // namespace weft::pml::bfo

#endif
