// Unit tests of the engine's matching (pml_engine_match.h), instantiated with a test policy and
// fed fragments as a BTL would hand them over: in order, out of order, duplicates behind the
// window, the window's edges and its wrap at 2^16, wildcards. A BTL test double (an emulated
// module that records what it is asked to send; no transport) takes what the engine sends: a
// btl_sendi fragment handed back as failed must be sent again over the peer's rail.
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
};
std::vector<Sent> sent;
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

weft_status_t emu_send(weft_btl_module_t *, weft_btl_endpoint_t *, weft_btl_descriptor_t *des,
                       weft_btl_tag_t tag)
{
    sent.push_back({std::string(static_cast<char *>(des->des_segments[0].seg_addr),
                                des->des_segments[0].seg_len),
                    tag});
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

weft_btl_module_t btl;
auto *const peer_ep = reinterpret_cast<weft_btl_endpoint_t *>(0x1000);

// ---- a communicator of 3 ranks (this process is rank 0, world 0), and the engine's state
weft_group group;
weft_comm comm;

void setup()
{
    weft::test::isolate();
    sent.clear();
    btl = emu_btl();
    E::P = new E::State;
    E::P->rcache = std::make_unique<weft::pml::engine::RegCache>(false, 0);
    E::P->modules = {&btl};
    E::P->peers.resize(3);
    for (auto &p : E::P->peers) {
        p.eager_btl = &btl;
        p.eager_ep = peer_ep;
        p.eager_limit = btl.btl_eager_limit;
    }
    E::P->endpoint_world[peer_ep] = 1;
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
void hand_over(const std::string &frag, uint32_t flags = 0, weft_btl_endpoint_t *ep = peer_ep)
{
    weft_btl_segment_t seg{const_cast<char *>(frag.data()), frag.size()};
    weft_btl_recv_descriptor_t rd{};
    rd.endpoint = ep;
    rd.segments = &seg;
    rd.segment_count = 1;
    rd.flags = flags;
    rd.tag = weft::pml::engine::kTag;
    E::on_recv(&btl, &rd);
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
    ck_assert(E::cs(&comm).unexpected.empty());
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

} // namespace

int main()
{
    Suite *s = suite_create("pml engine matching");
    TCase *tc = tcase_create("matching");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_in_order);
    tcase_add_test(tc, test_out_of_order);
    tcase_add_test(tc, test_duplicates_dropped);
    tcase_add_test(tc, test_window_edges);
    tcase_add_test(tc, test_wrap);
    tcase_add_test(tc, test_wildcards);
    tcase_add_test(tc, test_failed_sendi_sent_again);
    tcase_add_exit_test(tc, test_failed_sendi_too_late, 1);
    suite_add_tcase(s, tc);
    return weft::test::run_suite(s);
}
