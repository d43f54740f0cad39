// pml/engine: the seams where a PML built on the engine differs from another (README.md,
// "Policy seams"). A policy is a struct of static members and types; NoFailover is ob1's, and
// the base a policy derives from, hiding only what it changes. Every hook of NoFailover is
// empty or constant, so the engine instantiated with it is the engine without the seams.
//
// Hooks that need the engine are templates over it (E = Engine<Policy>), called by the engine
// as Policy::template hook<Engine>(...), so that a policy can use the engine's functions
// without naming the engine before it exists.
#ifndef WEFT_PML_ENGINE_POLICY_H
#define WEFT_PML_ENGINE_POLICY_H

#include "pml_engine_hdr.h"

#include <bml/bml.h>
#include <weft/runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace weft::pml::engine {

// What a fragment is, for the completion seam.
enum class Frag : uint8_t {
    match,
    rndv,
    rget,
    ack,
    frag,
    put,
    fin,
    extra,
    rdma // a put or get of the request in flight (fragment_out only)
};

struct NoFailover {
    // The component's name: parameters are pml_<name>_*, messages say pml/<name>.
    static constexpr const char *name = "engine";
    // weft_pml_module_t::pml_flags (WEFT_PML_FLAG_FAILOVER for a PML that survives a rail).
    static constexpr uint32_t pml_flags = 0;

    // Seam 1, per-request state: a policy's own fields in every request. Empty here, and
    // [[no_unique_address]] in the request, so ob1's requests carry no byte of it.
    struct RequestExtra {};

    // Seam 2, completion of every fragment type: with wants_completions, each fragment whose
    // kind completion() accepts goes out with a completion callback (MATCH, RNDV and RGET too,
    // and the copies the engine queues), and fragment_done() gets the BTL's status unchanged,
    // the module it went on and the descriptor (its bytes, valid during the call, to send
    // again). owner is the request the fragment belongs to while it is still pending (NULL for
    // an eager MATCH, for answers such as ACK and FIN, and for a request that completed before
    // this fragment did). The hook does not complete requests: the engine looks at the send
    // again after it. Off here: the hook and the callback are compiled out. A policy may also
    // define the first form, fragment_done<E>(kind, owner, world, status).
    static constexpr bool wants_completions = false;
    static constexpr bool completion(Frag) { return false; }
    template <class E>
    static void fragment_done(Frag, typename E::Req *owner, int world, weft_status_t status,
                              weft_btl_module_t *btl, const weft_btl_descriptor_t *des)
    {
        (void)owner, (void)world, (void)status, (void)btl, (void)des;
    }

    // Seam 2b, fragments in flight: fragment_out(kind, owner, +1) before a fragment with a
    // completion callback is handed to a BTL, -1 when the BTL refused it (not queued), so that
    // a policy can count each request's outstanding completions; and may_complete(send
    // request): false keeps a send that has handed everything over from completing (a policy
    // that may have to send it again waits for its fragments' completions).
    template <class E> static void fragment_out(Frag, typename E::Req *owner, int delta)
    {
        (void)owner, (void)delta;
    }
    template <class E> static bool may_complete(const typename E::Req *r)
    {
        (void)r;
        return true;
    }

    // Seam 2c, the attempt a FRAG or ACK belongs to: stamp() writes it into the header's
    // `attempt` byte, accept() drops a fragment of an earlier attempt of a restarted transfer
    // (false). Here there is one attempt: 0, always accepted.
    template <class E> static uint8_t attempt(const typename E::Req *r)
    {
        (void)r;
        return 0;
    }
    template <class E> static bool accept_attempt(const typename E::Req *r, uint8_t attempt)
    {
        (void)r, (void)attempt;
        return true;
    }
    // A fragment naming a request that is gone: reported as malformed here; a policy that
    // restarts transfers expects late ones (true: dropped quietly, traced at verbose 20).
    static constexpr bool late_fragments_expected = false;

    // Seam 3, before matching: every MATCH, RNDV and RGET that is not behind the window (the
    // engine drops those as duplicates itself) comes here before it is matched or held back;
    // false drops it (a policy that resends can recognise a copy it already delivered).
    template <class E>
    static bool before_match(const weft_comm_t *comm, const MatchHdr &h, int world)
    {
        (void)comm, (void)h, (void)world;
        return true;
    }

    // Seam 4, the FIN header: FinHdr, or a struct that begins with one (bfo adds the match
    // header, to recognise a duplicate FIN). fill_fin completes the extra fields. With
    // wants_match, rndv_match gives the policy each rendezvous's match header: at the sender
    // when the message takes its sequence number, at the receiver when it is matched.
    static constexpr bool wants_match = false;
    template <class E> static void rndv_match(typename E::Req *r, const MatchHdr &h)
    {
        (void)r, (void)h;
    }
    using Fin = FinHdr;
    template <class E> static void fill_fin(Fin &fin, const typename E::Req *r, uint64_t offset)
    {
        (void)fin, (void)r, (void)offset;
    }
    // A FIN for request r, or a PUT (the piece at `offset` of send r): false drops it (a copy
    // of one that arrived already, or one of an earlier attempt).
    template <class E> static bool accept_fin(typename E::Req *r, const Fin &fin)
    {
        (void)r, (void)fin;
        return true;
    }
    template <class E> static bool accept_piece(typename E::Req *r, uint64_t offset)
    {
        (void)r, (void)offset;
        return true;
    }

    // Seam 4b, a failed put (at the sender) or get (at the receiver) of [offset, offset +
    // length) of r over btl; send_id: the sender's request. true: the policy recovers it (no
    // FIN is sent, the request is not failed); false: the FIN carries the error and the
    // request ends in error.
    template <class E>
    static bool rdma_failed(typename E::Req *r, weft_btl_module_t *btl, bool get, uint64_t send_id,
                            uint64_t offset, uint64_t length, weft_status_t status)
    {
        (void)r, (void)btl, (void)get, (void)send_id, (void)offset, (void)length, (void)status;
        return false;
    }

    // Seam 5, extra header types (hdr_policy_first and up), whole in one segment, with the
    // world rank of the process that sent it (-1 if its endpoint is unknown): false means
    // unknown, and the fragment is reported as malformed.
    template <class E> static bool handle_extra(const char *msg, size_t len, int world)
    {
        (void)msg, (void)len, (void)world;
        return false;
    }

    // Seam 5b, the policy's own work, from every progress call of the PML (timers): returns
    // the events it handled.
    template <class E> static int progress() { return 0; }

    // Seam 6, rail selection: which of a peer's eager rails (ordered by latency, count >= 1)
    // carries its MATCH, RNDV and RGET fragments and its control messages.
    static size_t eager_rail(size_t count)
    {
        (void)count;
        return 0;
    }

    // Seam 7, link errors: the BTL's error callback (before it completes the affected fragments
    // in error). Without failover the job ends, as Open MPI's ob1 ends it: a fragment may be
    // lost and nothing would send it again.
    // With fault tolerance on (mpi_ft_enable), a broken link to one peer is that peer's failure:
    // the runtime marks it failed, and the engine ends its traffic (pml_engine_ft.h).
    template <class E>
    static void link_error(weft_btl_module_t *btl, uint32_t flags, weft_proc_t *proc,
                           const std::string &description)
    {
        (void)flags;
        if (proc && weft_runtime_ft_enabled() &&
            weft_runtime_report_failure(weft_proc_rank(proc),
                                        (E::rail_name(btl) + ": " + description).c_str()) ==
                WEFT_SUCCESS) {
            E::warn_peer_error(weft_proc_rank(proc), E::rail_name(btl) + ": " + description);
            return;
        }
        E::unreachable(proc ? weft_proc_rank(proc) : -1, "the link over " + E::rail_name(btl) +
                                                             " failed and " + E::who() +
                                                             " cannot fail over: " + description);
    }
};

} // namespace weft::pml::engine

#endif
