// Unit tests of the engine's matching (pml_engine_match.h), instantiated with a test policy and
// fed fragments as a BTL would hand them over: in order, out of order, duplicates behind the
// window, the window's edges and its wrap at 2^16, wildcards. A BTL test double (an emulated
// module that records what it is asked to send; no transport) takes what the engine sends: a
// btl_sendi fragment handed back as failed must be sent again over the peer's rail; a peer whose
// eager rail is removed gets a fence down the old rail before any new matching fragment.
#include "check_util.h"

#include "mpi_objects.h" // to make a communicator as framework/mpi does
#include "pml_engine.h"

#include <cstring>
#include <string>
#include <vector>

namespace {

struct TestPolicy : weft::pml::engine::NoFailover {
    static constexpr const char *name = "enginetest";
};
using E = weft::pml::engine::Engine<TestPolicy>;
using weft::pml::engine::hdr_match;
using weft::pml::engine::MatchHdr;

// ---- the BTL test double: alloc gives a buffer, send records the bytes.
struct Sent {
    std::string bytes;
    weft_btl_tag_t tag;
    weft_btl_module_t *rail;
};
std::vector<Sent> sent;
// What the next emu_send answers (WEFT_SUCCESS: delivered inside the call).
weft_status_t send_answer = WEFT_SUCCESS;
struct Desc {
    weft_btl_descriptor_t des;
    weft_btl_segment_t seg;
    std::string buf;
};

weft_status_t emu_alloc(weft_btl_module_t *, weft_btl_endpoint_t *, uint8_t, size_t size,
                        uint32_t flags, weft_btl_descriptor_t **out)
{
    auto *d = new Desc{};
    d->buf.resize(size);
    d->seg = {d->buf.data(), size};
    d->des.des_segments = &d->seg;
    d->des.des_segment_count = 1;
    d->des.des_flags = flags;
    *out = &d->des;
    return WEFT_SUCCESS;
}

weft_status_t emu_free(weft_btl_module_t *, weft_btl_descriptor_t *des)
{
    delete reinterpret_cast<Desc *>(des);
    return WEFT_SUCCESS;
}

weft_status_t emu_send(weft_btl_module_t *m, weft_btl_endpoint_t *ep, weft_btl_descriptor_t *des,
                       weft_btl_tag_t tag)
{
    if (send_answer != WEFT_SUCCESS)
        return send_answer; // not queued: the caller keeps des
    sent.push_back({std::string(static_cast<char *>(des->des_segments[0].seg_addr),
                                des->des_segments[0].seg_len),
                    tag, m});
    if ((des->des_flags & WEFT_BTL_DES_FLAG_ALWAYS_CALLBACK) && des->des_cbfunc)
        des->des_cbfunc(m, ep, des, WEFT_SUCCESS);
    delete reinterpret_cast<Desc *>(des); // BTL_OWNERSHIP: delivered inside the call
    return WEFT_SUCCESS;
}

weft_btl_module_t emu_btl()
{
    weft_btl_module_t m{};
    m.struct_size = sizeof m;
    m.btl_flags = WEFT_BTL_FLAG_SEND;
    m.btl_eager_limit = 4096;
    m.btl_max_send_size = 65536;
    m.btl_alloc = emu_alloc;
    m.btl_free = emu_free;
    m.btl_send = emu_send;
    return m;
}

weft_btl_module_t btl, btl2; // two rails
auto *const peer_ep = reinterpret_cast<weft_btl_endpoint_t *>(0x1000);
auto *const peer_ep2 = reinterpret_cast<weft_btl_endpoint_t *>(0x3000); // rank 1 over btl2

// ---- a communicator of 3 ranks (this process is rank 0, world 0), and the engine's state
weft_group group;
weft_comm comm;

void setup()
{
    weft::test::isolate();
    sent.clear();
    send_answer = WEFT_SUCCESS;
    btl = emu_btl();
    btl2 = emu_btl();
    E::P = new E::State;
    E::P->rcache = std::make_unique<weft::pml::engine::RegCache>(false, 0);
    E::P->modules = {&btl, &btl2};
    E::P->peers.resize(3);
    for (auto &p : E::P->peers) {
        p.eager_btl = &btl;
        p.eager_ep = peer_ep;
        p.eager_limit = btl.btl_eager_limit;
    }
    E::P->endpoint_world[peer_ep] = 1;
    E::P->endpoint_world[peer_ep2] = 1;
    group = weft_group{};
    group.ranks = {0, 1, 2};
    group.my_rank = 0;
    comm = weft_comm{};
    comm.cid = 7;
    comm.group = &group;
    comm.rank = 0;
    comm.size = 3;
    static_cast<weft_comm_view_t &>(comm).peer_size = 3;
    comm.peer_world = group.ranks.data();
    comm.local_world = group.ranks.data();
    comm.refs = 1000; // never destroyed by the requests' references
    ck_assert_int_eq(E::add_comm(nullptr, &comm), WEFT_SUCCESS);
}

void teardown()
{
    E::del_comm(nullptr, &comm);
    for (E::Req *r : E::P->request_pool)
        delete r;
    delete E::P;
    E::P = nullptr;
}

// A MATCH with sequence number `seq`, source rank `src`, tag `tag` and an int payload.
std::string match_frag(int src, uint16_t seq, int tag, int value)
{
    MatchHdr h{};
    h.type = hdr_match;
    h.seq = seq;
    h.cid = comm.cid;
    h.src = src;
    h.tag = tag;
    std::string frag(reinterpret_cast<const char *>(&h), sizeof h);
    frag.append(reinterpret_cast<const char *>(&value), sizeof value);
    return frag;
}

// Hand frag to the engine's receive callback as a BTL does, from endpoint ep with flags.
void hand_over(const std::string &frag, uint32_t flags = 0, weft_btl_endpoint_t *ep = peer_ep,
               weft_btl_module_t *rail = &btl)
{
    weft_btl_segment_t seg{const_cast<char *>(frag.data()), frag.size()};
    weft_btl_recv_descriptor_t rd{};
    rd.endpoint = ep;
    rd.segments = &seg;
    rd.segment_count = 1;
    rd.flags = flags;
    rd.tag = weft::pml::engine::kTag;
    E::on_recv(rail, &rd);
}

// A MATCH from `src`, as it arrives.
void arrive(int src, uint16_t seq, int tag, int value)
{
    hand_over(match_frag(src, seq, tag, value));
}

struct Posted {
    int value = -1;
    weft_request_t *req = nullptr;
};

// Post a receive of one int from src/tag (wildcards allowed).
void post(Posted &p, int src, int tag)
{
    ck_assert_int_eq(
        E::irecv(nullptr, &p.value, sizeof p.value, weft_datatype_bytes(), src, tag, &comm, &p.req),
        WEFT_SUCCESS);
}

bool done(const Posted &p) { return p.req->complete; }

// Check that p completed with value from src/tag, and release it.
void expect(Posted &p, int src, int tag, int value)
{
    ck_assert_msg(p.req->complete, "receive (src %d tag %d) not complete", src, tag);
    ck_assert_int_eq(p.req->status.error, WEFT_SUCCESS);
    ck_assert_int_eq(p.req->status.source, src);
    ck_assert_int_eq(p.req->status.tag, tag);
    ck_assert_uint_eq(p.req->status.count, sizeof(int));
    ck_assert_int_eq(p.value, value);
    p.req->pml_free(p.req);
}

START_TEST(test_in_order)
{
    Posted a, b, c;
    post(a, 1, 5);
    post(b, 1, 5);
    post(c, 1, 5);
    arrive(1, 0, 5, 100);
    arrive(1, 1, 5, 101);
    arrive(1, 2, 5, 102);
    expect(a, 1, 5, 100);
    expect(b, 1, 5, 101);
    expect(c, 1, 5, 102);
    ck_assert_uint_eq(E::P->duplicates, 0);
}
END_TEST

START_TEST(test_out_of_order)
{
    // Numbers 2 and 1 overtake 0: held back until 0 is here, then matched in sending order,
    // whatever the order of arrival, both to posted receives and to the unexpected queue.
    Posted a;
    post(a, 1, WEFT_ANY_TAG);
    arrive(1, 2, 9, 202);
    arrive(1, 1, 8, 201);
    ck_assert(!done(a));
    arrive(1, 0, 7, 200);
    expect(a, 1, 7, 200);
    Posted b, c;
    post(b, WEFT_ANY_SOURCE, WEFT_ANY_TAG);
    post(c, WEFT_ANY_SOURCE, WEFT_ANY_TAG);
    expect(b, 1, 8, 201);
    expect(c, 1, 9, 202);
    ck_assert_uint_eq(E::P->duplicates, 0);
}
END_TEST

START_TEST(test_live_table)
{
    // The ids headers carry: a reused slot gets a new generation, so an earlier request's id
    // (a late FIN, a duplicate ACK) names nothing; any id from the wire is safe to look up.
    weft::pml::engine::LiveTable<int> t;
    int a = 1, b = 2, c = 3;
    const uint64_t ia = t.add(&a), ib = t.add(&b);
    ck_assert_uint_ne(ia, 0);
    ck_assert_uint_ne(ia, ib);
    ck_assert_ptr_eq(t.find(ia), &a);
    ck_assert_ptr_eq(t.find(ib), &b);
    t.remove(ia);
    ck_assert_ptr_null(t.find(ia));
    const uint64_t ic = t.add(&c); // the slot of a, again
    ck_assert_uint_eq(uint32_t(ic), uint32_t(ia));
    ck_assert_uint_ne(ic, ia);
    ck_assert_ptr_null(t.find(ia));
    ck_assert_ptr_eq(t.find(ic), &c);
    t.remove(ia); // a stale id removes nothing
    ck_assert_ptr_eq(t.find(ic), &c);
    for (uint64_t id :
         {uint64_t(0), ~uint64_t(0), uint64_t(1) << 32 | 999999, ib + (uint64_t(1) << 32)})
        ck_assert_ptr_null(t.find(id));
    ck_assert_uint_eq(t.size(), 2);
}
END_TEST

START_TEST(test_unexpected_per_source)
{
    // Rank 1 runs far ahead of rank 2: a receive from rank 2 finds its message among them
    // (each source has its own queue); an ANY_SOURCE receive takes the earliest to arrive that
    // matches, across sources; a tag that only a later message has is found behind the others.
    for (int i = 0; i < 100; ++i)
        arrive(1, uint16_t(i), 5, 1000 + i);
    arrive(2, 0, 5, 2000);
    arrive(2, 1, 6, 2001);
    arrive(1, 100, 6, 1100);
    ck_assert_uint_eq(E::cs(&comm).unexpected_count(), 103);
    Posted a, b, c, d, e;
    post(a, 2, 5);
    expect(a, 2, 5, 2000);
    post(b, WEFT_ANY_SOURCE, 6);
    expect(b, 2, 6, 2001); // arrived before rank 1's tag 6
    post(c, WEFT_ANY_SOURCE, WEFT_ANY_TAG);
    expect(c, 1, 5, 1000);
    post(d, 1, 6);
    expect(d, 1, 6, 1100);
    post(e, WEFT_ANY_SOURCE, 5);
    expect(e, 1, 5, 1001);
    ck_assert_uint_eq(E::cs(&comm).unexpected_count(), 98);
    for (int i = 2; i < 100; ++i) {
        Posted f;
        post(f, 1, WEFT_ANY_TAG);
        expect(f, 1, 5, 1000 + i);
    }
    ck_assert_uint_eq(E::cs(&comm).unexpected_count(), 0);
}
END_TEST

START_TEST(test_duplicates_dropped)
{
    Posted a, b;
    post(a, 1, 3);
    arrive(1, 0, 3, 10);
    expect(a, 1, 3, 10);
    // The same number again (a fragment sent again after its link failed): dropped, and a
    // receive posted for it stays waiting.
    post(b, 1, 3);
    arrive(1, 0, 3, 10);
    ck_assert(!done(b));
    ck_assert_uint_eq(E::P->duplicates, 1);
    // A copy of a number held back (ahead) is dropped too; the original is delivered once.
    arrive(1, 2, 3, 12);
    arrive(1, 2, 3, 12);
    ck_assert_uint_eq(E::P->duplicates, 2);
    arrive(1, 1, 3, 11);
    expect(b, 1, 3, 11);
    Posted c, d;
    post(c, 1, 3);
    post(d, 1, 3);
    expect(c, 1, 3, 12);
    ck_assert(!done(d));
    arrive(1, 3, 3, 13);
    expect(d, 1, 3, 13);
    ck_assert_uint_eq(E::P->duplicates, 2);
}
END_TEST

START_TEST(test_window_edges)
{
    // Expected next: 0. Up to 2^15 - 1 ahead is held back; 2^15 ahead is the same as 2^15
    // behind, which is a duplicate: the window splits the 16-bit circle in halves.
    Posted a;
    post(a, 2, WEFT_ANY_TAG);
    arrive(2, 32767, 1, 1);
    ck_assert_uint_eq(E::P->duplicates, 0);
    arrive(2, 32768, 1, 2);
    ck_assert_uint_eq(E::P->duplicates, 1);
    arrive(2, 65535, 1, 3); // one behind
    ck_assert_uint_eq(E::P->duplicates, 2);
    ck_assert(!done(a));
    // The held-back number 32767 is not delivered before 0..32766.
    arrive(2, 0, 4, 40);
    expect(a, 2, 4, 40);
    Posted b;
    post(b, 2, WEFT_ANY_TAG);
    ck_assert(!done(b));
    b.req->pml_cancel(b.req);
    b.req->pml_free(b.req);
}
END_TEST

START_TEST(test_wrap)
{
    // Sequence numbers wrap at 2^16: 65534, 65535, 0, 1 are in order; 65535 afterwards is a
    // duplicate, however large the number looks.
    weft::pml::engine::CommState<E::Req> &s = E::cs(&comm);
    s.recv_seq[1] = 65534;
    Posted p[4];
    for (auto &x : p)
        post(x, 1, 6);
    arrive(1, 0, 6, 3); // ahead, across the wrap
    arrive(1, 65534, 6, 1);
    arrive(1, 65535, 6, 2);
    arrive(1, 1, 6, 4);
    for (int i = 0; i < 4; ++i)
        expect(p[i], 1, 6, i + 1);
    arrive(1, 65535, 6, 2);
    arrive(1, 0, 6, 3);
    ck_assert_uint_eq(E::P->duplicates, 2);
    ck_assert_uint_eq(s.recv_seq[1], 2);
}
END_TEST

START_TEST(test_wildcards)
{
    // Unexpected messages from two sources; receives by source, by tag, and by both wildcards
    // take the earliest message they match, and sequence numbers are per source.
    arrive(1, 0, 10, 110);
    arrive(2, 0, 20, 220);
    arrive(1, 1, 20, 120);
    arrive(2, 1, 10, 210);
    Posted a, b, c, d;
    post(a, WEFT_ANY_SOURCE, 20);
    expect(a, 2, 20, 220);
    post(b, 2, WEFT_ANY_TAG);
    expect(b, 2, 10, 210);
    post(c, WEFT_ANY_SOURCE, WEFT_ANY_TAG);
    expect(c, 1, 10, 110);
    post(d, 1, 20);
    expect(d, 1, 20, 120);
    // A negative (library-internal) tag never matches MPI_ANY_TAG.
    arrive(1, 2, -5, 1);
    Posted e;
    post(e, 1, WEFT_ANY_TAG);
    ck_assert(!done(e));
    Posted f;
    post(f, 1, -5);
    expect(f, 1, -5, 1);
    e.req->pml_cancel(e.req);
    ck_assert(e.req->complete && e.req->status.cancelled);
    e.req->pml_free(e.req);
}
END_TEST

START_TEST(test_failed_sendi_sent_again)
{
    // The BTL hands back one of this process's btl_sendi fragments (it may not have arrived):
    // the engine sends the same bytes again over the peer's rail, and counts it. Number 41 was
    // sent to rank 1, and 42 is the next.
    E::cs(&comm).send_seq[1] = 42;
    const std::string frag = match_frag(0, 41, 3, 4242);
    hand_over(frag, WEFT_BTL_RECV_FLAG_SEND_FAILED);
    ck_assert_uint_eq(sent.size(), 1);
    ck_assert(sent[0].bytes == frag);
    ck_assert_uint_eq(sent[0].tag, weft::pml::engine::kTag);
    ck_assert_uint_eq(E::P->resent, 1);
    // Not taken for a message from a peer: nothing is matched.
    ck_assert_uint_eq(E::cs(&comm).unexpected_count(), 0);
    // From an endpoint the engine never used: reported, nothing sent.
    hand_over(frag, WEFT_BTL_RECV_FLAG_SEND_FAILED,
              reinterpret_cast<weft_btl_endpoint_t *>(0x2000));
    ck_assert_uint_eq(sent.size(), 1);
    ck_assert_int_eq(
        weft::test::count_messages(weft::output::Kind::error, "for an endpoint the PML never used"),
        1);
}
END_TEST

// A copy handed back after 2^15 later messages to the same peer could alias a new number at
// the receiver: the job ends (weft_runtime_abort, exit status 1) instead of sending it.
START_TEST(test_failed_sendi_too_late)
{
    E::cs(&comm).send_seq[1] = uint16_t(5 + 0x8000);
    hand_over(match_frag(0, 5, 3, 0), WEFT_BTL_RECV_FLAG_SEND_FAILED);
    ck_abort_msg("a copy 2^15 behind was sent again");
}
END_TEST

// An RNDV whose number is in the window but whose first part is longer than the whole message:
// dropped, it would leave a gap every later message from rank 1 waits behind for ever; the job
// ends instead (weft_runtime_abort, exit status 1).
START_TEST(test_malformed_sequenced_ends_job)
{
    weft::pml::engine::RndvHdr h{};
    h.match.type = weft::pml::engine::hdr_rndv;
    h.match.seq = 0;
    h.match.cid = comm.cid;
    h.match.src = 1;
    h.match.tag = 1;
    h.total = 2; // but 4 bytes follow
    h.send_id = 9;
    std::string frag(reinterpret_cast<const char *>(&h), sizeof h);
    frag.append("abcd");
    hand_over(frag);
    ck_abort_msg("a malformed RNDV with a sequence number was dropped and the job went on");
}
END_TEST

// ---- rail-change fences

// Send one int to `dst` with tag `tag` (standard mode: eager, complete once handed over).
void send_int(int dst, int tag, int value)
{
    ck_assert_int_eq(E::send(nullptr, &value, sizeof value, weft_datatype_bytes(), dst, tag,
                             WEFT_SEND_STANDARD, &comm),
                     WEFT_SUCCESS);
}

std::string fence_frag(uint8_t type, uint32_t id)
{
    weft::pml::engine::FenceHdr h{.type = type, .reserved = {}, .id = id};
    return std::string(reinterpret_cast<const char *>(&h), sizeof h);
}

// The MATCH headers among what the test double sent, rail by rail: (rail, dst world, seq).
MatchHdr header_of(const Sent &s)
{
    MatchHdr h{};
    ck_assert_uint_ge(s.bytes.size(), sizeof h);
    std::memcpy(&h, s.bytes.data(), sizeof h);
    return h;
}

// Rank 1's eager rail moves from btl to btl2, as refresh_peer does when the BML removed it.
void move_rank1_to_btl2()
{
    auto &peer = E::P->peers[1];
    weft_btl_module_t *old = peer.eager_btl;
    weft_btl_endpoint_t *old_ep = peer.eager_ep;
    peer.eager_btl = &btl2;
    peer.eager_ep = peer_ep2;
    E::start_fence(1, old, old_ep);
}

START_TEST(test_fence_holds_matching_until_answered)
{
    // Two messages to rank 1 over btl; then its eager rail becomes btl2 while btl still works
    // (and may still hold those two). A FENCE goes down btl behind them, and nothing matching
    // goes to rank 1 on btl2 until rank 1 answers it: however long btl takes to deliver, no
    // new message can overtake its last ones (the window's rule 4).
    send_int(1, 5, 100);
    send_int(1, 5, 101);
    ck_assert_uint_eq(sent.size(), 2);
    move_rank1_to_btl2();
    ck_assert_uint_eq(sent.size(), 3);
    ck_assert_ptr_eq(sent[2].rail, &btl);
    ck_assert_uint_eq(uint8_t(sent[2].bytes[0]), weft::pml::engine::hdr_fence);
    weft::pml::engine::FenceHdr fence;
    std::memcpy(&fence, sent[2].bytes.data(), sizeof fence);
    ck_assert_uint_eq(E::P->fences.size(), 1);

    // Sent while fenced: the sends complete (eager copies), nothing leaves for rank 1, and a
    // message to rank 2 (not fenced) still goes at once.
    send_int(1, 5, 102);
    send_int(1, 6, 103);
    send_int(2, 5, 200);
    E::progress_pending();
    ck_assert_uint_eq(sent.size(), 4);
    ck_assert_int_eq(header_of(sent[3]).tag, 5);
    ck_assert_ptr_eq(sent[3].rail, &btl); // rank 2 keeps btl
    ck_assert_uint_eq(E::P->pending.size(), 2);

    // Rank 1 fences its own rail change towards us at the same time: the answer is not a
    // matching fragment and passes our held ones (two fences crossing cannot wait for each
    // other).
    hand_over(fence_frag(weft::pml::engine::hdr_fence, 77), 0, peer_ep, &btl);
    E::progress_pending();
    ck_assert_uint_eq(sent.size(), 5);
    ck_assert_ptr_eq(sent[4].rail, &btl2);
    ck_assert(sent[4].bytes == fence_frag(weft::pml::engine::hdr_fence_ack, 77));
    ck_assert_uint_eq(E::P->pending.size(), 2);

    // An answer to some other fence, or from another peer, lifts nothing.
    hand_over(fence_frag(weft::pml::engine::hdr_fence_ack, fence.id + 1), 0, peer_ep2, &btl2);
    E::progress_pending();
    ck_assert_uint_eq(sent.size(), 5);

    // The answer: the held messages leave over btl2, in sequence order, whole.
    hand_over(fence_frag(weft::pml::engine::hdr_fence_ack, fence.id), 0, peer_ep2, &btl2);
    ck_assert_uint_eq(E::P->fences.size(), 0);
    ck_assert_uint_eq(E::P->fences_done, 1);
    E::progress_pending();
    ck_assert_uint_eq(sent.size(), 7);
    ck_assert(E::P->pending.empty());
    for (size_t i = 5; i < 7; ++i) {
        ck_assert_ptr_eq(sent[i].rail, &btl2);
        const MatchHdr h = header_of(sent[i]);
        ck_assert_uint_eq(h.seq, i - 3); // 0 and 1 went before the fence
        int value;
        std::memcpy(&value, sent[i].bytes.data() + sizeof h, sizeof value);
        ck_assert_int_eq(value, int(97 + i));
    }
    // And from now on straight to btl2.
    send_int(1, 5, 104);
    ck_assert_uint_eq(sent.size(), 8);
    ck_assert_ptr_eq(sent[7].rail, &btl2);
    ck_assert_uint_eq(header_of(sent[7]).seq, 4);
    ck_assert_uint_eq(E::P->malformed, 0);
}
END_TEST

START_TEST(test_fence_on_failed_rail_lifts)
{
    // The old rail has failed: the FENCE cannot be sent, what the rail held comes back failed
    // (and is sent again, rule 3), so nothing waits for an answer that cannot come.
    send_int(1, 5, 1);
    send_answer = WEFT_ERR_LINK_DOWN;
    move_rank1_to_btl2();
    send_answer = WEFT_SUCCESS;
    ck_assert_uint_eq(E::P->fences.size(), 0);
    ck_assert_uint_eq(E::P->fences_done, 1);
    send_int(1, 5, 2);
    ck_assert_uint_eq(sent.size(), 2);
    ck_assert_ptr_eq(sent[1].rail, &btl2);
    ck_assert_uint_eq(header_of(sent[1]).seq, 1);
}
END_TEST

START_TEST(test_fence_full_rail_retried)
{
    // The old rail has no room for the FENCE yet: it is sent from progress once it has, and the
    // held messages wait for it all the same.
    send_answer = WEFT_ERR_OUT_OF_RESOURCE;
    move_rank1_to_btl2();
    ck_assert_uint_eq(E::P->fences.size(), 1);
    ck_assert(!E::P->fences[0].sent);
    send_answer = WEFT_SUCCESS;
    send_int(1, 5, 1);
    ck_assert(sent.empty());
    E::progress_pending();
    ck_assert_uint_eq(sent.size(), 1);
    ck_assert_uint_eq(uint8_t(sent[0].bytes[0]), weft::pml::engine::hdr_fence);
    ck_assert_uint_eq(E::P->pending.size(), 1);
}
END_TEST

START_TEST(test_fence_malformed)
{
    // A fence of the wrong length, or on an endpoint no peer is behind: dropped and counted.
    std::string shortened = fence_frag(weft::pml::engine::hdr_fence, 1);
    shortened.pop_back();
    hand_over(shortened);
    hand_over(fence_frag(weft::pml::engine::hdr_fence, 1), 0,
              reinterpret_cast<weft_btl_endpoint_t *>(0x2000));
    ck_assert_uint_eq(E::P->malformed, 2);
    ck_assert(sent.empty());
}
END_TEST

} // namespace

int main()
{
    Suite *s = suite_create("pml engine matching");
    TCase *tc = tcase_create("matching");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_in_order);
    tcase_add_test(tc, test_out_of_order);
    tcase_add_test(tc, test_live_table);
    tcase_add_test(tc, test_unexpected_per_source);
    tcase_add_test(tc, test_duplicates_dropped);
    tcase_add_test(tc, test_window_edges);
    tcase_add_test(tc, test_wrap);
    tcase_add_test(tc, test_wildcards);
    tcase_add_test(tc, test_failed_sendi_sent_again);
    tcase_add_exit_test(tc, test_failed_sendi_too_late, 1);
    tcase_add_exit_test(tc, test_malformed_sequenced_ends_job, 1);
    tcase_add_test(tc, test_fence_holds_matching_until_answered);
    tcase_add_test(tc, test_fence_on_failed_rail_lifts);
    tcase_add_test(tc, test_fence_full_rail_retried);
    tcase_add_test(tc, test_fence_malformed);
    suite_add_tcase(s, tc);
    return weft::test::run_suite(s);
}
