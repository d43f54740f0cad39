// pml/engine: the point-to-point engine of every ob1-style PML (ob1, bfo): matching, requests,
// the eager and rendezvous protocols of ob1-protocols.rst, the registration cache and the PML
// module's operations, over the BML's rails. A PML is this engine instantiated with a policy
// (README.md: the seams, and how a second PML is made):
//
//   struct MyPolicy : weft::pml::engine::NoFailover { static constexpr const char *name = "me"; };
//   using E = weft::pml::engine::Engine<MyPolicy>;   // E::register_params, E::init, E::finalize
//
// Everything is static: one PML runs in a process, and the BTL callbacks are plain C functions.
// The member functions are defined in the files below, one concern each; they are all part of
// this one class template, so the policy's hooks are resolved (and ob1's empty ones compiled
// away) at build time.
#ifndef WEFT_PML_ENGINE_H
#define WEFT_PML_ENGINE_H

#include "pml_engine_choose.h"
#include "pml_engine_hdr.h"
#include "pml_engine_policy.h"
#include "pml_engine_rcache.h"
#include "pml_engine_types.h"

#include <bml/bml.h>
#include <btl/btl.h>
#include <pml/pml.h>
#include <weft/comm.h>
#include <weft/convertor.h>
#include <weft/mca.h>
#include <weft/op.h>
#include <weft/output.h>
#include <weft/request.h>
#include <weft/runtime.h>

#include <deque>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace weft::pml::engine {

template <class Policy> class Engine {
  public:
    using Req = Request<Policy>;
    using CommState = engine::CommState<Req>;
    using Pending = engine::Pending<Req>;
    struct RdmaOp { // one put or get in flight
        Req *r;
        uint64_t offset;
        uint64_t length;
    };

    // ---- the component's entry points (pml_engine_module.h)
    // Register the engine's parameters as pml_<Policy::name>_*.
    static weft_status_t register_params();
    // Set up the BML and return the module; NULL refuses (the reason printed).
    static weft_pml_module_t *init(int enable_progress_threads, int enable_mpi_threads);
    static weft_status_t finalize();

    // ---- state
    struct State {
        weft_pml_module_t base;
        std::vector<Peer> peers; // by world rank
        weft_bml_module_t *bml = nullptr;
        std::vector<weft_btl_module_t *> modules; // every BTL module, for rail indexes and names
        std::vector<weft_comm_t *> dense_comms;   // by cid, below kDenseCids
        std::unordered_map<uint32_t, weft_comm_t *> comms;
        // Fragments for communicators this process has not created yet.
        std::unordered_map<uint32_t, std::vector<std::string>> early;
        // A process failed (fault tolerance): receives posted from then on look at their peer.
        bool any_failed = false;
        // Revoke notices for communicators this process has not created (yet).
        std::vector<uint32_t> revoked_early;
        LiveTable<Req> live;
        // Unexpected-queue nodes and queued-copy buffers given back, with their memory, for
        // the next ones: a stream of messages that outruns its receiver allocates nothing.
        std::list<Unexpected> spare_unexpected;
        std::vector<std::string> spare_bytes;
        std::string rget_msg; // send_rget's buffer
        uint64_t next_id = 1; // 1 + the requests tracked so far
        // Sends whose CANCEL awaits its reply, by cancel_id (pml_engine_request.h).
        std::unordered_map<uint64_t, Req *> cancels;
        uint64_t next_cancel = 1;
        std::deque<Pending> pending;
        // Peers whose matching fragments wait for a rail change's fence (few, and short-lived).
        std::vector<Fence> fences;
        // Each peer's rail lists as they were before each change (refresh_peer).
        std::vector<std::vector<Rail>> retired_rails;
        // Put and get records let go, for the next ones (new_rdma_op).
        std::vector<std::unique_ptr<RdmaOp>> spare_ops;
        uint32_t next_fence = 1;
        size_t fences_done = 0;
        // Rendezvous sends with FRAGs still to hand to the rails (no room, or the pipeline is
        // send_pipeline_depth deep): they go on from the user's buffer as room appears. Nodes
        // taken off it wait in sched_spare for the next (no allocation per message).
        std::list<Req *> sched, sched_spare;
        // Communicators whose references released requests held: dropped by the next progress.
        std::vector<weft_comm_t *> comm_releases;
        std::vector<weft_comm_t *> comm_room; // release_comms: an empty vector's room
        // The world rank behind each BTL endpoint the engine was given (to name the peer of a
        // fragment a BTL hands back), kept after its rail is removed.
        std::unordered_map<const weft_btl_endpoint_t *, int> endpoint_world;
        std::unique_ptr<RegCache> rcache;
        size_t malformed = 0;
        size_t duplicates = 0; // MATCH/RNDV/RGET behind the window: dropped
        size_t resent = 0;     // btl_sendi fragments a failed link handed back, sent again
        size_t late = 0;       // fragments of restarted or finished transfers, dropped
        int verbose = 0;       // pml_<name>_verbose: >= 20 traces every message's protocol
        // parameters
        int send_pipeline_depth = 0;
        size_t max_rdma_per_request = 0;
        size_t max_send_per_range = 0;
        bool leave_pinned = false;
        // Test faults (pml_<name>_fault_*): rails to remove after a number of rendezvous
        // messages; the immediate sends to take as failed (counting down, 0: none).
        std::vector<std::pair<uint64_t, std::string>> remove_rails;
        bool sendi_faults = false;
        uint64_t fail_sendi_in = 0, dup_sendi_in = 0;
        uint64_t stray_put_in = 0; // the put to aim where nothing is registered (0: none)
        uint64_t stray_get_in = 0; // the get likewise
        bool fault_sent = false;
        // Requests are recycled: the message-rate path allocates none.
        std::vector<Req *> request_pool;
        // The receiver's choice (pml_engine_choose.h): pml_<name>_receiver_chooses, what it
        // learned per module that asks for it, and per sender (world rank) the rendezvous
        // receives it has under way and when the last one ended.
        bool receiver_chooses = true;
        std::vector<std::pair<const weft_btl_module_t *, std::unique_ptr<Chooser>>> choosers;
        // Per peer (world rank): its rendezvous messages to this process, and this process's
        // to it.
        struct Flow {
            uint32_t active = 0; // chosen (or a RNDV that was not: in_flow), not over
            uint32_t parked = 0; // waiting for the choice
            // Rendezvous sends to the peer under way: a send that follows one is part of a
            // stream (btl_stream_min_rdma_size); a receive from the peer meanwhile, exchanged.
            uint32_t sends = 0;
            uint32_t started = 0;   // the peer's messages that entered `active`, ever (flow_mark)
            uint64_t last_done = 0; // ns, steady clock
            uint64_t last_service = 0; // ns the last one took
            // An exchanged message over while this process's own send to the peer is not:
            // measured when that ends too (chosen_done, exchange_sent).
            struct Held {
                Chooser *chooser = nullptr; // none held
                Chooser::Ticket ticket;
                size_t bytes = 0;
                uint64_t choose_ns = 0;
                bool ok = false;
            } held;
        };
        std::vector<Flow> flows;
        // RGETs and RNDVs matched whose way the receiver will choose once it may (in order).
        // id: r's (tracked) when parked; a request that ended meanwhile (its peer failed) is
        // no longer live under it, and its entry is dropped.
        struct Parked {
            Req *r;
            Unexpected u;
            uint64_t id;
        };
        std::deque<Parked> parked;
    };
    static inline State *P = nullptr;

    // ---- matching (pml_engine_match.h)
    static weft_comm_t *find_comm(uint32_t cid);
    static void set_comm(uint32_t cid, weft_comm_t *comm);
    static CommState &cs(weft_comm_t *c);
    static bool tag_matches(int want, int got);
    static bool src_matches(int want, int got);
    static void deliver(Req *r, weft_comm_t *, const Unexpected &u);
    static void match_one(weft_comm_t *comm, std::list<Unexpected> &node);
    static void arrive(weft_comm_t *comm, uint16_t seq, std::list<Unexpected> &node);
    static std::list<Unexpected> take_unexpected();
    static void give_unexpected(std::list<Unexpected> &from, std::list<Unexpected>::iterator it);
    static std::string take_bytes();
    static void give_bytes(std::string &&bytes);
    static void duplicate(const weft_comm_t *comm, int src, uint16_t seq);
    static size_t header_size(uint8_t type);
    static void handle_match_or_rndv(const char *msg, size_t len, const weft_btl_segment_t *more,
                                     size_t nmore);
    static void handle(const char *msg, size_t len, const weft_btl_segment_t *more, size_t nmore);
    static void on_recv(weft_btl_module_t *, const weft_btl_recv_descriptor_t *rd);
    static const Unexpected *find_unexpected(int src, int tag, weft_comm_t *comm);
    static std::pair<std::list<Unexpected> *, std::list<Unexpected>::iterator>
    unexpected_match(CommState &s, int src, int tag);
    static void probe_status(const Unexpected &u, weft_msg_status_t *status);

    // ---- requests (pml_engine_request.h)
    static uint64_t track(Req *r);
    static void untrack(Req *r);
    // Whether untrack has anything to do for r.
    static bool tracked(const Req *r) { return r->id != 0 || r->rndv_world >= 0; }
    static Req *new_request();
    static void release_request(Req *r);
    static void complete(Req *r);
    static void drop_dtype(Req *r);
    static void set_dtype(Req *r, void *buf, size_t count, weft_datatype_t *dtype);
    static Req *make(bool send, const void *buf, size_t count, weft_datatype_t *dtype, int peer,
                     int tag, weft_send_mode_t mode, weft_comm_t *comm, bool persistent);
    static weft_status_t start_any(weft_request *req);
    static weft_status_t cancel(weft_request *req);
    static void cancel_send(Req *r);
    static void cancel_answered(Req *r, bool cancelled);
    static void handle_cancel(const char *msg, size_t len, int from_world);
    static void free_request(weft_request *req);
    static void wait_and_release(Req *r, weft_msg_status_t *status);
    static void release_comms();

    // ---- fragments out (pml_engine_frag.h)
    static weft_status_t endpoint(int world, weft_bml_endpoint_t **ep);
    static size_t eager_limit(int world);
    static weft_status_t try_send(int world, const void *hdr, size_t hlen, const void *data,
                                  size_t dlen, bool eager, Frag kind, Req *owner);
    static weft_status_t try_send_once(int world, const void *hdr, size_t hlen, const void *data,
                                       size_t dlen, bool eager, Frag kind, Req *owner,
                                       weft_btl_module_t **used);
    static void late(const std::string &what);
    static bool peer_has_rail(int world, const weft_btl_module_t *btl);
    static bool failover_retry(int world, weft_btl_module_t *btl, weft_status_t rc);
    static weft_status_t send_bytes(int world, const void *hdr, size_t hlen, const void *data,
                                    size_t dlen, bool eager, Frag kind = Frag::extra,
                                    Req *owner = nullptr);
    static void ctl_done(weft_btl_module_t *, weft_btl_endpoint_t *, weft_btl_descriptor_t *des,
                         weft_status_t status);
    static int progress_pending();
    static void resend_failed(weft_btl_module_t *btl, const weft_btl_recv_descriptor_t *rd);
    static void send_again(int world, const weft_btl_segment_t *segs, size_t nsegs, Frag kind,
                           Req *owner, const weft_btl_module_t *btl);
    static void policy_fragment_done(Frag kind, Req *owner, int world, weft_status_t status,
                                     weft_btl_module_t *btl, const weft_btl_descriptor_t *des);

    // ---- send requests and the eager protocols (pml_engine_send.h)
    [[gnu::cold]] static void trace_send(const weft_comm_t *comm, int dst, int tag, size_t bytes,
                                         Proto chosen, Proto ran);
    static void send_load(Req *r, size_t offset, char *dst, size_t n);
    static void pack_at(Req *r, size_t offset, char *dst, size_t n);
    static void unpack_at(Req *r, size_t offset, const char *src, size_t n);
    static void prepared_done(weft_btl_module_t *, weft_btl_endpoint_t *,
                              weft_btl_descriptor_t *des, weft_status_t status);
    static weft_status_t send_eager(Req *r, const weft_comm_t *comm, int dst, int world,
                                    MatchHdr &h, const char *buf, size_t bytes,
                                    weft_send_mode_t mode);
    static weft_status_t start_send(Req *r);
    static weft_status_t faulty_sendi(weft_btl_module_t *btl, weft_btl_endpoint_t *ep,
                                      weft_convertor_t *cv, const MatchHdr &h, size_t bytes,
                                      uint32_t flags);

    // ---- receive requests (pml_engine_recv.h)
    static void recv_store(Req *r, size_t offset, const char *data, size_t n);
    static void recv_store(Req *r, size_t offset, const Payload &data);
    static void finish_recv(Req *r);
    static weft_status_t start_recv(Req *r);

    // ---- the rendezvous protocols (pml_engine_rndv.h)
    // From P->spare_ops when it has one: no allocation per put or get.
    static RdmaOp *new_rdma_op(Req *r, uint64_t offset, uint64_t length)
    {
        if (P->spare_ops.empty())
            return new RdmaOp{r, offset, length};
        RdmaOp *op = P->spare_ops.back().release();
        P->spare_ops.pop_back();
        *op = RdmaOp{r, offset, length};
        return op;
    }
    static void free_rdma_op(RdmaOp *op)
    {
        if (P && P->spare_ops.size() < 64) {
            P->spare_ops.emplace_back(op);
            return;
        }
        delete op;
    }
    enum class Want { send, recv, any };
    // Why schedule_step stopped.
    enum class Step {
        done,   // every FRAG handed over (or the send failed)
        depth,  // send_pipeline_depth fragments in flight: wait for completions
        no_room // the rails are full: nothing behind it can go either
    };
    // The RDMA segments of an RGET, checked.
    struct Seg {
        RdmaSeg seg;
        const char *handle;
        // The rail's module and endpoint, not the Rail: a failure reported inside one btl_get
        // remakes the peer's rail lists under the others.
        weft_btl_module_t *btl;
        weft_btl_endpoint_t *ep;
    };
    static int send_world(const Req *r);
    static const Peer *peer_of(int world);
    static size_t padded(size_t n);
    template <class H>
    static bool read_header(const char *msg, size_t len, H &h, const char *name, bool rest);
    static Req *named(uint64_t id, Want want, const char *name);
    [[gnu::cold]] static void trace_send_done(const Req *r);
    [[gnu::cold]] static void trace_recv(const Req *r, Proto offered, Proto running);
    static void enqueue(Req *r);
    static void maybe_complete_send(Req *r);
    static void fail_send(Req *r, weft_status_t why);
    static void frag_done(weft_btl_module_t *, weft_btl_endpoint_t *, weft_btl_descriptor_t *des,
                          weft_status_t status);
    static weft_status_t send_frag(Req *r, const Rail &rail, size_t off, size_t *n);
    static Step schedule_step(Req *r, int *handed);
    static void schedule(Req *r);
    static RailList rdma_rails(const Peer &peer, size_t bytes, uint32_t need, bool stream = false);
    static const Rail *find_rail(const Peer &peer, uint32_t key, uint32_t need);
    static Cuts split(size_t from, size_t to, const RailList &rails);
    static void append_seg(std::string &msg, const Rail &rail, const RegCache::Entry *e, char *buf,
                           size_t off, size_t len);
    static bool send_rget(Req *r, RndvHdr h, const RailList &rails, int world, bool stream,
                          size_t limit, weft_status_t *rc);
    static void send_fin(int world, uint64_t id, uint64_t offset, uint64_t length,
                         weft_status_t status, Req *r);
    static void put_done(weft_btl_module_t *, weft_btl_endpoint_t *, void *,
                         weft_btl_registration_handle_t *, void *context, void *,
                         weft_status_t status);
    static void get_done(weft_btl_module_t *, weft_btl_endpoint_t *, void *,
                         weft_btl_registration_handle_t *, void *context, void *cbdata,
                         weft_status_t status);
    static void ask_frags(Req *r, uint64_t send_id, size_t off, size_t len);
    static void send_ack(Req *r, uint64_t send_id, size_t send_offset);
    static bool send_puts(Req *r, uint64_t send_id, size_t from, size_t to, const RailList &rails,
                          size_t piece);
    static FixedVec<Seg, kMaxRails> parse_segs(const std::string &raw, size_t total,
                                               const Peer &peer, bool *bad);
    static bool start_gets(Req *r, const Unexpected &u, const FixedVec<Seg, kMaxRails> &segs,
                           uint32_t flags);
    static typename State::Flow &flow(int world);
    static typename State::Flow &grow_flow(int world);
    static uint64_t now_ns();
    static bool choose(Req *r, const Unexpected &u, weft_btl_module_t *btl, Chooser::Ticket *t);
    static void chosen_done(Req *r, bool ok);
    static void chosen_measured(Req *r, typename State::Flow &f, bool ok);
    static void exchange_sent(int world);
    static Chooser *chooser_of(const weft_btl_module_t *btl);
    static void offer_answered(Req *r, bool took, uint8_t offers);
    static void rndv_done(Req *r);
    static Chooser *chooser_for(const Peer &peer);
    static uint8_t offers_byte(int world, size_t total, uint8_t seen);
    static unsigned allowed_ways(const weft_btl_module_t *btl);
    static void chosen(Req *r, const Unexpected &u, typename State::Flow &f, Chooser *ch,
                       Chooser::Ticket t, Case c, uint64_t now, Chooser::Reason why);
    enum class RgetGo { got, parked, pipeline };
    static RgetGo rget_go(Req *r, const Unexpected &u, const Peer &peer, bool resuming);
    static RgetGo rndv_go(Req *r, const Unexpected &u, const Peer &peer, Chooser *ch,
                          bool resuming);
    static bool rndv_fast(Req *r, const Unexpected &u, const Peer &peer, Chooser *ch);
    static void unoffered_rndv(Req *r, const Unexpected &u, const Peer &peer, Chooser *ch,
                               typename State::Flow &f);
    static void trace_chosen(const Unexpected &u, Chooser::Ticket t, Case c, Chooser::Reason why);
    static void ask_pipeline(Req *r, const Unexpected &u, Proto offered);
    static int resume_parked();
    static uint32_t rail_key(weft_btl_module_t *btl);
    static void release_regs(Req *r);
    static weft_status_t start_rndv(Req *r, const MatchHdr &m, int world);
    static void rndv_matched(Req *r, const Unexpected &u);
    static void handle_ack(const char *msg, size_t len);
    static void handle_frag(const char *msg, size_t len, const weft_btl_segment_t *more,
                            size_t nmore);
    static int place_frag(weft_btl_module_t *, weft_btl_endpoint_t *, const void *header,
                          size_t header_size, size_t rest, void *, void **dest);
    static void placed_frag(const weft_btl_recv_descriptor_t *rd);
    static void handle_put(const char *msg, size_t len);
    static void handle_fin(const char *msg, size_t len);
    static int progress_sched();

    // ---- rails (pml_engine_rails.h)
    static std::vector<Rail> rails(weft_bml_endpoint_t *ep, weft_bml_list_t list);
    static void refresh_peer(weft_proc_t *proc);
    static void rails_changed(weft_proc_t *proc, void *);
    static std::string rails_text(uint32_t mask);
    static std::string rail_name(const weft_btl_module_t *btl);
    // ---- process failures (pml_engine_ft.h)
    static void proc_failed(int world, void *);
    static bool peer_failed(int world);
    static void warn_peer_error(int world, const std::string &what);
    static void revoke_here(weft_comm_t *comm);
    static void refuse_rndv(int world, uint64_t send_id, weft_status_t why);
    static void revoke_collectives(weft_comm_t *comm);
    static void purge(CommState &s, bool (*which)(int tag), weft_status_t why);
    static void handle_revoke(const char *msg, size_t len);
    static void on_error(weft_btl_module_t *btl, uint32_t flags, weft_proc_t *proc,
                         const char *description, void *);
    [[noreturn]] static void unreachable(int world, const std::string &why);
    static std::string peer_name(int world);
    static void remove_rails_now();
    // Rail-change fences (README.md, "Sequence numbers and the window", rule 4).
    static void start_fence(int world, weft_btl_module_t *btl, weft_btl_endpoint_t *ep);
    static void send_fences();
    static void fence_sent(weft_btl_module_t *, weft_btl_endpoint_t *, weft_btl_descriptor_t *des,
                           weft_status_t status);
    static void lift_fence(uint32_t id, const std::string &why);
    static void handle_fence(weft_btl_module_t *btl, weft_btl_endpoint_t *ep, const char *msg,
                             size_t len);
    // A fragment of this header type to world must wait for a fence.
    static bool held(int world, uint8_t type)
    {
        if (P->fences.empty() || !matching_type(type)) [[likely]]
            return false;
        for (const Fence &f : P->fences)
            if (f.world == world)
                return true;
        return false;
    }

    // ---- the module's operations and the rest (pml_engine_module.h)
    static std::string who();
    // Performance variables (MPI_T): what the engine keeps count of anyway, read on demand.
    static void register_pvars();
    static void say(weft_output_kind_t kind, const std::string &text);
    static std::string param_name(const char *name);
    [[gnu::cold]] static void trace(const std::string &line);
    static void malformed(const std::string &what);
    [[noreturn]] static void broken_stream(int world, const std::string &what);
    static weft_status_t add_procs(weft_pml_module_t *, weft_proc_t *const *procs, size_t n);
    static weft_status_t del_procs(weft_pml_module_t *, weft_proc_t *const *procs, size_t n);
    static weft_status_t enable(weft_pml_module_t *, int on);
    static int progress(weft_pml_module_t *);
    static weft_status_t add_comm(weft_pml_module_t *, weft_comm_t *comm);
    static weft_status_t del_comm(weft_pml_module_t *, weft_comm_t *comm);
    static weft_status_t irecv_init(weft_pml_module_t *, void *buf, size_t count,
                                    weft_datatype_t *dtype, int src, int tag, weft_comm_t *comm,
                                    weft_request_t **req);
    static weft_status_t irecv(weft_pml_module_t *, void *buf, size_t count, weft_datatype_t *dtype,
                               int src, int tag, weft_comm_t *comm, weft_request_t **req);
    static weft_status_t recv(weft_pml_module_t *, void *buf, size_t count, weft_datatype_t *dtype,
                              int src, int tag, weft_comm_t *comm, weft_msg_status_t *status);
    static weft_status_t isend_init(weft_pml_module_t *, const void *buf, size_t count,
                                    weft_datatype_t *dtype, int dst, int tag, weft_send_mode_t mode,
                                    weft_comm_t *comm, weft_request_t **req);
    static weft_status_t isend(weft_pml_module_t *, const void *buf, size_t count,
                               weft_datatype_t *dtype, int dst, int tag, weft_send_mode_t mode,
                               weft_comm_t *comm, weft_request_t **req);
    static weft_status_t send(weft_pml_module_t *m, const void *buf, size_t count,
                              weft_datatype_t *dtype, int dst, int tag, weft_send_mode_t mode,
                              weft_comm_t *comm);
    static weft_status_t iprobe(weft_pml_module_t *, int src, int tag, weft_comm_t *comm,
                                int *matched, weft_msg_status_t *status);
    static weft_status_t probe(weft_pml_module_t *m, int src, int tag, weft_comm_t *comm,
                               weft_msg_status_t *status);
    static weft_status_t improbe(weft_pml_module_t *, int src, int tag, weft_comm_t *comm,
                                 int *matched, weft_message_t **message, weft_msg_status_t *status);
    static weft_status_t mprobe(weft_pml_module_t *m, int src, int tag, weft_comm_t *comm,
                                weft_message_t **message, weft_msg_status_t *status);
    static weft_status_t imrecv(weft_pml_module_t *, void *buf, size_t count,
                                weft_datatype_t *dtype, weft_message_t **message,
                                weft_request_t **req);
    static weft_status_t mrecv(weft_pml_module_t *m, void *buf, size_t count,
                               weft_datatype_t *dtype, weft_message_t **message,
                               weft_msg_status_t *status);
    static weft_status_t start(weft_pml_module_t *, size_t count, weft_request_t **reqs);
    static weft_status_t dump(weft_pml_module_t *, weft_comm_t *comm, int);
    static weft_status_t revoke_comm(weft_pml_module_t *, weft_comm_t *, int);
    static bool read_params();
    static void inject_faults();
    static int progress_fn();

    // Parameter handles (register_params).
    static inline weft_mca_param_t *p_fault_to, *p_verbose, *p_depth, *p_max_rdma, *p_max_send,
        *p_rcache_unused, *p_fault_remove, *p_fault_fail_sendi, *p_fault_dup_sendi,
        *p_receiver_chooses, *p_fault_stray_put, *p_fault_stray_get;
};

} // namespace weft::pml::engine

#include "pml_engine_frag.h"
#include "pml_engine_ft.h"
#include "pml_engine_match.h"
#include "pml_engine_module.h"
#include "pml_engine_rails.h"
#include "pml_engine_recv.h"
#include "pml_engine_request.h"
#include "pml_engine_rndv.h"
#include "pml_engine_send.h"

#endif
