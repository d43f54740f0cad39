// pml/engine: the PML module's operations, parameters, set-up and tear-down.
// Part of Engine<Policy>: included by pml_engine.h only.
#ifndef WEFT_PML_ENGINE_MODULE_H
#define WEFT_PML_ENGINE_MODULE_H

#include <algorithm>
#include <cstring>

namespace weft::pml::engine {

template <class Policy> std::string Engine<Policy>::who()
{
    return std::string("pml/") + Policy::name;
}

template <class Policy> void Engine<Policy>::say(weft_output_kind_t kind, const std::string &text)
{
    weft_output(kind, "%s", text.c_str());
}

// A parameter's full name, pml_<name>_<param>.
template <class Policy> std::string Engine<Policy>::param_name(const char *name)
{
    return std::string("pml_") + Policy::name + "_" + name;
}

template <class Policy> void Engine<Policy>::trace(const std::string &line)
{
    say(WEFT_OUTPUT_INFO, who() + ": " + line);
}

template <class Policy> void Engine<Policy>::malformed(const std::string &what)
{
    ++P->malformed;
    say(WEFT_OUTPUT_ERROR, who() + ": a malformed fragment arrived (" + what + "); it was dropped");
}

// A malformed fragment that took a sequence number: nothing after it from that peer could be
// matched in order, so the job ends (as for an unreachable peer) rather than hang.
template <class Policy> void Engine<Policy>::broken_stream(int world, const std::string &what)
{
    ++P->malformed;
    weft_runtime_abort(1, (who() + ": a malformed fragment from " + peer_name(world) + ": " + what +
                           "; later messages from it cannot be matched in order")
                              .c_str());
}

template <class Policy>
weft_status_t Engine<Policy>::add_procs(weft_pml_module_t *, weft_proc_t *const *procs, size_t n)
{
    std::vector<uint8_t> reach(n, 0);
    if (weft_status_t rc = P->bml->bml_add_procs(P->bml, procs, n, reach.data());
        rc != WEFT_SUCCESS)
        return rc;
    for (size_t i = 0; i < n; ++i)
        if (reach[i])
            refresh_peer(procs[i]);
    for (size_t i = 0; i < n; ++i)
        if (!reach[i]) {
            say(WEFT_OUTPUT_ERROR, who() + ": no BTL reaches rank " +
                                       std::to_string(weft_proc_rank(procs[i])) + " on host " +
                                       weft_proc_hostname(procs[i]) +
                                       " (check --mca btl; e.g. sm reaches only this host)");
            return WEFT_ERR_UNREACH;
        }
    return WEFT_SUCCESS;
}

template <class Policy>
weft_status_t Engine<Policy>::del_procs(weft_pml_module_t *, weft_proc_t *const *procs, size_t n)
{
    return P->bml->bml_del_procs(P->bml, procs, n);
}

template <class Policy> weft_status_t Engine<Policy>::enable(weft_pml_module_t *, int on)
{
    if (on)
        return WEFT_SUCCESS;
    weft::progress_wait([] { return P->pending.empty() && P->sched.empty(); });
    release_comms();
    for (weft_btl_module_t *btl : P->modules)
        if (btl->btl_flush)
            btl->btl_flush(btl, nullptr);
    return WEFT_SUCCESS;
}

template <class Policy> int Engine<Policy>::progress(weft_pml_module_t *)
{
    return weft_progress();
}

template <class Policy>
weft_status_t Engine<Policy>::add_comm(weft_pml_module_t *, weft_comm_t *comm)
{
    auto *s = new CommState;
    s->send_seq.assign(size_t(weft_comm_peer_size(comm)), 0);
    s->recv_seq.assign(size_t(weft_comm_peer_size(comm)), 0);
    s->sent_total.assign(size_t(weft_comm_peer_size(comm)), 0);
    s->arrived_total.assign(size_t(weft_comm_peer_size(comm)), 0);
    s->ahead.resize(size_t(weft_comm_peer_size(comm)));
    s->unexpected.resize(size_t(weft_comm_peer_size(comm)));
    weft_comm_set_pml_state(comm, s);
    set_comm(weft_comm_cid(comm), comm);
    auto it = P->early.find(weft_comm_cid(comm));
    if (it != P->early.end()) {
        std::vector<std::string> frags = std::move(it->second);
        P->early.erase(it);
        for (const auto &f : frags)
            handle(f.data(), f.size(), nullptr, 0);
    }
    // A member already known failed (ULFM): its collectives are revoked from the start.
    if (weft_runtime_failure_epoch() != 0) [[unlikely]] {
        const weft_comm_view_t *v = weft_comm_view(comm);
        bool any = false;
        for (int r = 0; r < v->peer_size; ++r)
            any |= weft_runtime_proc_failed(v->peer_world[r]) != 0;
        for (int r = 0; r < v->size; ++r)
            any |= weft_runtime_proc_failed(v->local_world[r]) != 0;
        if (any)
            revoke_collectives(comm);
    }
    // Revoked by another member before this one had it (ULFM).
    if (auto r = std::find(P->revoked_early.begin(), P->revoked_early.end(), weft_comm_cid(comm));
        r != P->revoked_early.end()) [[unlikely]] {
        P->revoked_early.erase(r);
        revoke_here(comm);
    }
    return WEFT_SUCCESS;
}

template <class Policy>
weft_status_t Engine<Policy>::del_comm(weft_pml_module_t *, weft_comm_t *comm)
{
    set_comm(weft_comm_cid(comm), nullptr);
    delete static_cast<CommState *>(weft_comm_pml_state(comm));
    weft_comm_set_pml_state(comm, nullptr);
    return WEFT_SUCCESS;
}

template <class Policy>
weft_status_t Engine<Policy>::irecv_init(weft_pml_module_t *, void *buf, size_t count,
                                         weft_datatype_t *dtype, int src, int tag,
                                         weft_comm_t *comm, weft_request_t **req)
{
    *req = make(false, buf, count, dtype, src, tag, WEFT_SEND_STANDARD, comm, true);
    return WEFT_SUCCESS;
}

template <class Policy>
weft_status_t Engine<Policy>::irecv(weft_pml_module_t *, void *buf, size_t count,
                                    weft_datatype_t *dtype, int src, int tag, weft_comm_t *comm,
                                    weft_request_t **req)
{
    Req *r = make(false, buf, count, dtype, src, tag, WEFT_SEND_STANDARD, comm, false);
    *req = r;
    return start_recv(r);
}

template <class Policy>
weft_status_t Engine<Policy>::recv(weft_pml_module_t *, void *buf, size_t count,
                                   weft_datatype_t *dtype, int src, int tag, weft_comm_t *comm,
                                   weft_msg_status_t *status)
{
    // A blocking receive waits here, so its request can live on the stack.
    Req r;
    r.kind = WEFT_REQUEST_PML_RECV;
    set_dtype(&r, buf, count, dtype);
    r.comm = comm;
    r.peer = r.src = src;
    r.tag = tag;
    if (weft_status_t rc = start_recv(&r); rc != WEFT_SUCCESS) {
        drop_dtype(&r);
        return rc;
    }
    weft::progress_wait([&] { return r.complete; });
    untrack(&r);
    drop_dtype(&r);
    if (status)
        *status = r.status;
    return r.status.error;
}

template <class Policy>
weft_status_t Engine<Policy>::isend_init(weft_pml_module_t *, const void *buf, size_t count,
                                         weft_datatype_t *dtype, int dst, int tag,
                                         weft_send_mode_t mode, weft_comm_t *comm,
                                         weft_request_t **req)
{
    *req = make(true, buf, count, dtype, dst, tag, mode, comm, true);
    return WEFT_SUCCESS;
}

template <class Policy>
weft_status_t Engine<Policy>::isend(weft_pml_module_t *, const void *buf, size_t count,
                                    weft_datatype_t *dtype, int dst, int tag, weft_send_mode_t mode,
                                    weft_comm_t *comm, weft_request_t **req)
{
    Req *r = make(true, buf, count, dtype, dst, tag, mode, comm, false);
    *req = r;
    const weft_status_t rc = start_send(r);
    if (rc != WEFT_SUCCESS) {
        // Not started: the caller gets no request (nothing else would release it).
        untrack(r);
        release_request(r);
        *req = nullptr;
    }
    return rc;
}

template <class Policy>
weft_status_t Engine<Policy>::send(weft_pml_module_t *m, const void *buf, size_t count,
                                   weft_datatype_t *dtype, int dst, int tag, weft_send_mode_t mode,
                                   weft_comm_t *comm)
{
    // Fast path: an eager message needs no request at all.
    const size_t bytes = count * weft_datatype_size(dtype);
    if (mode != WEFT_SEND_SYNCHRONOUS && dst >= 0 && weft_datatype_is_contiguous(dtype, count)) {
        const int world = weft_comm_peer_world_rank(comm, int(dst));
        if (sizeof(MatchHdr) + bytes <= eager_limit(world)) {
            MatchHdr h;
            h.flags = 0;
            h.cid = weft_comm_cid(comm);
            h.src = weft_comm_rank(comm);
            h.tag = tag;
            CommState &s = cs(comm);
            h.seq = s.send_seq[size_t(dst)]++;
            ++s.sent_total[size_t(dst)];
            return send_eager(nullptr, comm, dst, world, h, static_cast<const char *>(buf), bytes,
                              mode);
        }
    }
    weft_request_t *req;
    if (weft_status_t rc = isend(m, buf, count, dtype, dst, tag, mode, comm, &req);
        rc != WEFT_SUCCESS)
        return rc;
    weft_msg_status_t st;
    wait_and_release(static_cast<Req *>(req), &st);
    return st.error;
}

template <class Policy>
weft_status_t Engine<Policy>::iprobe(weft_pml_module_t *, int src, int tag, weft_comm_t *comm,
                                     int *matched, weft_msg_status_t *status)
{
    weft_progress();
    const Unexpected *u = find_unexpected(src, tag, comm);
    *matched = u != nullptr;
    if (u)
        probe_status(*u, status);
    return WEFT_SUCCESS;
}

template <class Policy>
weft_status_t Engine<Policy>::probe(weft_pml_module_t *m, int src, int tag, weft_comm_t *comm,
                                    weft_msg_status_t *status)
{
    int matched = 0;
    weft::progress_wait([&] {
        iprobe(m, src, tag, comm, &matched, status);
        return matched != 0;
    });
    return WEFT_SUCCESS;
}

template <class Policy>
weft_status_t Engine<Policy>::improbe(weft_pml_module_t *, int src, int tag, weft_comm_t *comm,
                                      int *matched, weft_message_t **message,
                                      weft_msg_status_t *status)
{
    weft_progress();
    CommState &s = cs(comm);
    if (const auto [q, it] = unexpected_match(s, src, tag); q) {
        probe_status(*it, status);
        auto *msg = new weft_message;
        msg->comm = comm;
        msg->source = it->src;
        msg->tag = it->tag;
        msg->count = it->total;
        msg->pml_data = new Unexpected(std::move(*it));
        q->erase(it);
        *message = msg;
        *matched = 1;
        return WEFT_SUCCESS;
    }
    *matched = 0;
    return WEFT_SUCCESS;
}

template <class Policy>
weft_status_t Engine<Policy>::mprobe(weft_pml_module_t *m, int src, int tag, weft_comm_t *comm,
                                     weft_message_t **message, weft_msg_status_t *status)
{
    int matched = 0;
    weft::progress_wait([&] {
        improbe(m, src, tag, comm, &matched, message, status);
        return matched != 0;
    });
    return WEFT_SUCCESS;
}

template <class Policy>
weft_status_t Engine<Policy>::imrecv(weft_pml_module_t *, void *buf, size_t count,
                                     weft_datatype_t *dtype, weft_message_t **message,
                                     weft_request_t **req)
{
    weft_message *msg = *message;
    auto *u = static_cast<Unexpected *>(msg->pml_data);
    Req *r = make(false, buf, count, dtype, u->src, u->tag, WEFT_SEND_STANDARD, msg->comm, false);
    r->active = true;
    *req = r;
    deliver(r, msg->comm, *u);
    delete u;
    delete msg;
    *message = nullptr;
    return WEFT_SUCCESS;
}

template <class Policy>
weft_status_t Engine<Policy>::mrecv(weft_pml_module_t *m, void *buf, size_t count,
                                    weft_datatype_t *dtype, weft_message_t **message,
                                    weft_msg_status_t *status)
{
    weft_request_t *req;
    imrecv(m, buf, count, dtype, message, &req);
    weft_msg_status_t st;
    wait_and_release(static_cast<Req *>(req), &st);
    if (status)
        *status = st;
    return st.error;
}

template <class Policy>
weft_status_t Engine<Policy>::start(weft_pml_module_t *, size_t count, weft_request_t **reqs)
{
    for (size_t i = 0; i < count; ++i)
        if (weft_status_t rc = start_any(reqs[i]); rc != WEFT_SUCCESS)
            return rc;
    return WEFT_SUCCESS;
}

template <class Policy>
weft_status_t Engine<Policy>::dump(weft_pml_module_t *, weft_comm_t *comm, int)
{
    CommState &s = cs(comm);
    say(WEFT_OUTPUT_INFO,
        who() + ": communicator " + std::to_string(weft_comm_cid(comm)) + ": " +
            std::to_string(s.posted.size()) + " posted, " + std::to_string(s.unexpected_count()) +
            " unexpected, " + std::to_string(P->pending.size()) + " pending sends, " +
            std::to_string(P->malformed) + " malformed fragments dropped, " +
            std::to_string(P->duplicates) + " duplicates dropped, " + std::to_string(P->resent) +
            " fragments a failed link handed back sent again, " + std::to_string(P->fences.size()) +
            " rail-change fences open (" + std::to_string(P->fences_done) + " lifted)");
    return WEFT_SUCCESS;
}

// The protocol parameters into P; false (with the reason printed) when one cannot work.
static_assert(kMaxRails == 8, "the ranges of max_rdma_per_request and max_send_per_range say 1..8");

template <class Policy> bool Engine<Policy>::read_params()
{
    struct Check {
        weft_mca_param_t *p;
        const char *name;
        int64_t lo, hi;
    };
    const Check checks[] = {{p_depth, "send_pipeline_depth", 1, 1024},
                            {p_max_rdma, "max_rdma_per_request", 1, int64_t(kMaxRails)},
                            {p_max_send, "max_send_per_range", 1, int64_t(kMaxRails)},
                            {p_rcache_unused, "rcache_max_unused", 0, 65536}};
    for (const Check &c : checks) {
        const int64_t v = weft_mca_param_int(c.p);
        if (v < c.lo || v > c.hi) {
            say(WEFT_OUTPUT_ERROR, who() + ": " + param_name(c.name) + " is " + std::to_string(v) +
                                       ", outside " + std::to_string(c.lo) + ".." +
                                       std::to_string(c.hi));
            return false;
        }
    }
    P->send_pipeline_depth = int(weft_mca_param_int(p_depth));
    P->max_rdma_per_request = size_t(weft_mca_param_int(p_max_rdma));
    P->max_send_per_range = size_t(weft_mca_param_int(p_max_send));
    const weft_mca_param_t *lp = weft_mca_param_find("mpi_leave_pinned");
    P->leave_pinned = lp && weft_mca_param_bool(lp);
    P->rcache =
        std::make_unique<RegCache>(P->leave_pinned, size_t(weft_mca_param_int(p_rcache_unused)));
    for (auto [p, name] : {std::pair{p_fault_fail_sendi, "fault_fail_sendi"},
                           std::pair{p_fault_dup_sendi, "fault_duplicate_sendi"},
                           std::pair{p_fault_stray_put, "fault_stray_put"},
                           std::pair{p_fault_stray_get, "fault_stray_get"}})
        if (weft_mca_param_int(p) < 0) {
            say(WEFT_OUTPUT_ERROR, who() + ": " + param_name(name) + " is " +
                                       std::to_string(weft_mca_param_int(p)) +
                                       ", it must be 0 or more");
            return false;
        }
    P->fail_sendi_in = uint64_t(weft_mca_param_int(p_fault_fail_sendi));
    P->dup_sendi_in = uint64_t(weft_mca_param_int(p_fault_dup_sendi));
    P->stray_put_in = uint64_t(weft_mca_param_int(p_fault_stray_put));
    P->stray_get_in = uint64_t(weft_mca_param_int(p_fault_stray_get));
    P->receiver_chooses = weft_mca_param_bool(p_receiver_chooses);
    P->sendi_faults = P->fail_sendi_in != 0 || P->dup_sendi_in != 0;
    // "<n>:<btl>[:<index>]" items, comma-separated.
    const std::string spec = weft_mca_param_string(p_fault_remove);
    for (size_t at = 0; at < spec.size();) {
        size_t end = spec.find(',', at);
        if (end == std::string::npos)
            end = spec.size();
        const std::string item = spec.substr(at, end - at);
        at = end + 1;
        const size_t colon = item.find(':');
        char *stop = nullptr;
        const unsigned long long n =
            colon == std::string::npos ? 0 : std::strtoull(item.c_str(), &stop, 10);
        if (colon == std::string::npos || colon == 0 || stop != item.c_str() + colon ||
            colon + 1 >= item.size()) {
            say(WEFT_OUTPUT_ERROR, who() + ": " + param_name("fault_remove_rails") + " item '" +
                                       item + "' is not <messages>:<btl>[:<index>]");
            return false;
        }
        P->remove_rails.emplace_back(uint64_t(n), item.substr(colon + 1));
    }
    return true;
}

// Fault injection for tests: one fragment of every malformed kind to one
// rank, once MPI_COMM_WORLD exists here.
template <class Policy> void Engine<Policy>::inject_faults()
{
    const int to = int(weft_mca_param_int(p_fault_to));
    if (to < 0 || to >= weft_runtime_world_size()) {
        P->fault_sent = true; // nothing to inject: stop asking
        return;
    }
    if (P->fault_sent || !find_comm(0))
        return;
    P->fault_sent = true;
    const uint8_t unknown[4] = {99, 0, 0, 0};
    send_bytes(to, unknown, sizeof unknown, nullptr, 0, true);
    MatchHdr short_match{};
    short_match.type = hdr_match;
    send_bytes(to, &short_match, sizeof short_match - 4, nullptr, 0, true);
    AckHdr ack{};
    ack.type = hdr_ack;
    ack.send_id = 0xdeadbeef;
    send_bytes(to, &ack, sizeof ack, nullptr, 0, true);
    FragHdr frag{};
    frag.type = hdr_frag;
    frag.recv_id = 0xfeedface;
    send_bytes(to, &frag, sizeof frag, "xyz", 3, true);
    MatchHdr bad_src{};
    bad_src.type = hdr_match;
    bad_src.src = 1 << 20;
    send_bytes(to, &bad_src, sizeof bad_src, nullptr, 0, true);
    PutHdr put{};
    put.type = hdr_put;
    put.send_id = 0xdeadbeef;
    send_bytes(to, &put, sizeof put, nullptr, 0, true);
    FinHdr fin{};
    fin.type = hdr_fin;
    fin.id = 0xfeedface;
    send_bytes(to, &fin, sizeof fin, nullptr, 0, true);
    // An RGET from a source outside the communicator: reported before it can match.
    RgetHdr rget{};
    rget.rndv.match.type = hdr_rget;
    rget.rndv.match.src = 1 << 20; // outside any communicator: reported before matching
    rget.nsegs = 1;
    send_bytes(to, &rget, sizeof rget, nullptr, 0, true);
    // Cancels: cut short; taking back a message of another process (the receiver's own, in
    // MPI_COMM_WORLD); and an answer to a cancel never asked.
    CancelHdr cancel{};
    cancel.type = hdr_cancel;
    send_bytes(to, &cancel, sizeof cancel - 8, nullptr, 0, true);
    cancel.src = to;
    send_bytes(to, &cancel, sizeof cancel, nullptr, 0, true);
    CancelReplyHdr reply{};
    reply.type = hdr_cancel_reply;
    reply.cancelled = 1;
    reply.cancel_id = 0xdeadbeef;
    send_bytes(to, &reply, sizeof reply, nullptr, 0, true);
}

template <class Policy> int Engine<Policy>::progress_fn()
{
    if (!P->fault_sent && p_fault_to)
        inject_faults();
    if (!P->comm_releases.empty()) [[unlikely]]
        release_comms();
    int n = P->pending.empty() && P->fences.empty() ? 0 : progress_pending();
    if (!P->parked.empty()) [[unlikely]]
        n += resume_parked();
    if (!P->sched.empty()) [[unlikely]]
        n += progress_sched();
    if (!P->remove_rails.empty()) [[unlikely]]
        remove_rails_now();
    return n + Policy::template progress<Engine>();
}

template <class Policy> weft_status_t Engine<Policy>::register_params()
{
    const weft_mca_param_def_t defs[] = {
        {.name = "fault_malformed_to",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "-1",
         .help = "Fault injection for tests: once MPI_Init is done, send the given world rank one "
                 "fragment of every malformed kind (unknown type, truncated MATCH, ACK, FRAG, "
                 "PUT and FIN for unknown requests, a MATCH and an RGET from a source outside "
                 "the communicator). -1: never. Not for production use.",
         .level = 9,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "verbose",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "0",
         .help = "Verbosity of the PML (0-100). At 20 and above every message is traced: the "
                 "protocol the sender chose and the one that ran (eager immediate, prepared or "
                 "allocated; send/receive, buffered or RDMA pipeline; RDMA direct put or get) "
                 "with the rails it used, the protocol the receiver ran, and messages kept "
                 "unexpected; the receiver's choices of way (pml_<name>_receiver_chooses) and "
                 "why. At 30 also each measured run of a stream and the estimates it left, at 40 "
                 "each measured message alone. At 10 and above, at the end, the receiver's "
                 "choices: per size class and case, how many messages took each way and the "
                 "time it was last estimated at.",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "send_pipeline_depth",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "16",
         .help = "Most FRAG fragments of one message handed to the BTLs and not yet completed "
                 "(the send/receive and RDMA pipelines), 1 to 1024.",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "1..1024"},
        {.name = "max_rdma_per_request",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "4",
         .help = "Most RDMA-capable BTLs one message is striped over (RDMA direct put and get), "
                 "1 to 8.",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "1..8"},
        {.name = "max_send_per_range",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "4",
         .help = "Most BTLs the FRAG fragments of one message are striped over (by bandwidth), "
                 "1 to 8.",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "1..8"},
        {.name = "rcache_max_unused",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "64",
         .help = "With mpi_leave_pinned: most registrations kept for buffers no message uses "
                 "now (least recently used go first), 0 to 65536.",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "0..65536"},
        {.name = "fault_remove_rails",
         .type = WEFT_MCA_PARAM_STRING,
         .default_value = "",
         .help = "Fault injection for tests: comma-separated <n>:<btl>[:<index>] items; once "
                 "this process has started or matched n rendezvous messages, that BTL module "
                 "(every module of the component without an index) is removed from every "
                 "peer's rails, as a failover PML removes a failed one. Empty: never. Not for "
                 "production use.",
         .level = 9,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "fault_fail_sendi",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "0",
         .help = "Fault injection for tests: the n-th eager immediate send (btl_sendi) is not "
                 "sent but handed back to the PML as a BTL whose link failed hands it back "
                 "(WEFT_BTL_RECV_FLAG_SEND_FAILED). 0: never. Not for production use.",
         .level = 9,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "0.."},
        {.name = "fault_duplicate_sendi",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "0",
         .help = "Fault injection for tests: the n-th eager immediate send (btl_sendi) is sent "
                 "and also handed back to the PML as failed, so that the PML sends it again and "
                 "the peer gets it twice (and must drop the copy). 0: never. Not for production "
                 "use.",
         .level = 9,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "0.."},
        {.name = "receiver_chooses",
         .type = WEFT_MCA_PARAM_BOOL,
         .default_value = "true",
         .help = "Over a BTL that asks for it (WEFT_BTL_FLAG_RECEIVER_CHOOSES: btl/sm with "
                 "btl_sm_single_copy_mechanism auto), the sender offers a get for every "
                 "rendezvous message and the receiver chooses, per message, between reading "
                 "it, reading it with the sender's help and the send/receive pipeline, from "
                 "what it measures on the messages themselves (pml/engine README, "
                 "\"The receiver's choice\"). false: the sender chooses from the BTL's size "
                 "bounds, as over any other BTL.",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "fault_stray_put",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "0",
         .help = "Fault injection for tests: the n-th RDMA put this process makes is aimed at "
                 "address 16 of the peer, where nothing is registered, as a corrupted PUT "
                 "header would aim it: a BTL that checks the addresses it is sent refuses it. "
                 "0: never. Not for production use.",
         .level = 9,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "0.."},
        {.name = "fault_stray_get",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "0",
         .help = "Fault injection for tests: the n-th RDMA get this process makes reads from "
                 "address 16 of the peer, where nothing is registered, as a corrupted RGET "
                 "would make it: a BTL that checks the addresses it is asked for refuses it. "
                 "0: never. Not for production use.",
         .level = 9,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "0.."},
    };
    constexpr size_t n = sizeof defs / sizeof defs[0];
    weft_mca_param_t *h[n] = {};
    weft_status_t rc =
        weft_mca_param_register_table("pml", Policy::name, defs, n, sizeof defs[0], h);
    p_fault_to = h[0];
    p_verbose = h[1];
    p_depth = h[2];
    p_max_rdma = h[3];
    p_max_send = h[4];
    p_rcache_unused = h[5];
    p_fault_remove = h[6];
    p_fault_fail_sendi = h[7];
    p_fault_dup_sendi = h[8];
    p_receiver_chooses = h[9];
    p_fault_stray_put = h[10];
    p_fault_stray_get = h[11];
    return rc;
}

template <class Policy> weft_pml_module_t *Engine<Policy>::init(int, int)
{
    P = new State;
    P->verbose = int(weft_mca_param_int(p_verbose));
    size_t nbtl = 0;
    weft_btl_module_t *const *btls = weft_btl_modules(&nbtl);
    P->modules.assign(btls, btls + nbtl);
    if (!read_params()) {
        delete P;
        P = nullptr;
        return nullptr;
    }
    if (weft_bml_select(0, 0, &P->bml) != WEFT_SUCCESS) {
        delete P;
        P = nullptr;
        return nullptr;
    }
    for (weft_btl_module_t *btl : P->modules)
        P->bml->bml_add_btl(P->bml, btl);
    if (weft_status_t rc = P->bml->bml_register(P->bml, kTag, on_recv, nullptr);
        rc != WEFT_SUCCESS) {
        say(WEFT_OUTPUT_ERROR,
            who() + ": cannot take the BTLs' messages: " + weft_status_string(rc));
        P->bml->bml_finalize(P->bml);
        weft_bml_close();
        delete P;
        P = nullptr;
        return nullptr;
    }
    P->bml->bml_register_error(P->bml, on_error, nullptr);
    // Large FRAGs go straight into the user's buffer on the BTLs that can (tcp).
    for (weft_btl_module_t *btl : P->modules)
        if (WEFT_MODULE_HAS_OP(btl, weft_btl_module_t, btl_register_place))
            btl->btl_register_place(btl, kTag, sizeof(FragHdr), place_frag, nullptr);
    // A BML before 1.1 cannot say when a peer's lists change; the engine then rebuilds its
    // copies itself after the removals it makes.
    if (WEFT_MODULE_HAS_OP(P->bml, weft_bml_module_t, bml_register_rails_changed))
        P->bml->bml_register_rails_changed(P->bml, rails_changed, nullptr);
    weft_progress_register(progress_fn);
    if (weft_runtime_ft_enabled())
        weft_runtime_failure_register(proc_failed, nullptr);
    register_pvars();
    P->base = weft_pml_module_t{
        .struct_size = sizeof(weft_pml_module_t),
        .pml_flags = Policy::pml_flags,
        .pml_max_contextid = UINT32_MAX,
        .pml_max_tag = INT32_MAX,
        .pml_add_procs = add_procs,
        .pml_del_procs = del_procs,
        .pml_enable = enable,
        .pml_progress = progress,
        .pml_add_comm = add_comm,
        .pml_del_comm = del_comm,
        .pml_irecv_init = irecv_init,
        .pml_irecv = irecv,
        .pml_recv = recv,
        .pml_isend_init = isend_init,
        .pml_isend = isend,
        .pml_send = send,
        .pml_iprobe = iprobe,
        .pml_probe = probe,
        .pml_improbe = improbe,
        .pml_mprobe = mprobe,
        .pml_imrecv = imrecv,
        .pml_mrecv = mrecv,
        .pml_start = start,
        .pml_dump = dump,
        .pml_revoke_comm = revoke_comm,
    };
    return &P->base;
}

template <class Policy> void Engine<Policy>::register_pvars()
{
    enum Which : uintptr_t { unexpected, posted, malformed, duplicates, resent, late };
    // Nothing on the message path: the levels walk the communicators' queues when read, the
    // counters are the engine's own.
    auto read = +[](void *arg) -> uint64_t {
        if (!P)
            return 0;
        uint64_t n = 0;
        auto each_comm = [](auto f) {
            for (weft_comm_t *c : P->dense_comms)
                if (c)
                    f(cs(c));
            for (const auto &[cid, c] : P->comms)
                f(cs(c));
        };
        switch (Which(reinterpret_cast<uintptr_t>(arg))) {
        case unexpected:
            each_comm([&n](CommState &s) {
                n += s.unexpected_count();
                for (const auto &early : s.ahead)
                    n += early.size();
            });
            return n;
        case posted: each_comm([&n](CommState &s) { n += s.posted.size(); }); return n;
        case malformed: return P->malformed;
        case duplicates: return P->duplicates;
        case resent: return P->resent;
        case late: return P->late;
        }
        return 0;
    };
    const struct {
        const char *name;
        weft_mca_pvar_class_t cls;
        Which which;
        const char *help;
    } vars[] = {
        {"unexpected", WEFT_MCA_PVAR_LEVEL, unexpected,
         "Messages arrived here and not received yet (unexpected, or ahead of their turn), on "
         "every communicator."},
        {"posted", WEFT_MCA_PVAR_LEVEL, posted,
         "Receives posted here and not matched yet, on every communicator."},
        {"malformed", WEFT_MCA_PVAR_COUNTER, malformed,
         "Fragments from peers refused as malformed (each also reported)."},
        {"duplicates", WEFT_MCA_PVAR_COUNTER, duplicates,
         "Matching fragments that came twice (a rail failover's resend) and were dropped."},
        {"resent", WEFT_MCA_PVAR_COUNTER, resent,
         "Fragments a failed link handed back, sent again on another rail."},
        {"late", WEFT_MCA_PVAR_COUNTER, late,
         "Fragments of transfers already restarted or finished, dropped."},
    };
    for (const auto &v : vars) {
        const weft_mca_pvar_def_t def{.name = v.name,
                                      .var_class = v.cls,
                                      .help = v.help,
                                      .level = v.cls == WEFT_MCA_PVAR_LEVEL ? 4 : 5,
                                      .read = read,
                                      .arg = reinterpret_cast<void *>(uintptr_t(v.which))};
        weft_mca_pvar_register("pml", Policy::name, &def, sizeof def);
    }
}

template <class Policy> weft_status_t Engine<Policy>::finalize()
{
    if (!P)
        return WEFT_SUCCESS;
    // Tools keep reading the counts as they are now (MPI_T outlives MPI_Finalize).
    weft_mca_pvar_unregister("pml", Policy::name);
    // Whatever is still queued must leave before the transports close.
    weft::progress_wait([] { return P->pending.empty(); });
    weft_progress_unregister(progress_fn);
    if (P->verbose >= 10) [[unlikely]]
        for (const auto &[btl, ch] : P->choosers)
            ch->report([btl](const std::string &line) {
                trace("the receiver's choices over " + rail_name(btl) + ", " + line);
            });
    P->rcache->clear(); // registrations kept by leave_pinned, while the modules still exist
    P->bml->bml_finalize(P->bml);
    weft_bml_close();
    for (Req *r : P->request_pool)
        delete r;
    delete P;
    P = nullptr;
    return WEFT_SUCCESS;
}

} // namespace weft::pml::engine

#endif
