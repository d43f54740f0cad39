// Conformance of bml/r2 to the contracts of bml.h, against BTL test doubles: fake modules whose
// btl_add_procs reach a chosen set of world ranks and whose btl_register/btl_register_error only
// record what they were given. r2 is loaded the way the library loads it, through the MCA
// repository from the build tree's component path.
// The standard headers before <check.h>, which defines a macro named fail.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "check_util.h"
#include "mca_repository.h"
#include "runtime.h" // struct weft_proc, to make procs with chosen ranks

#include <bml/bml.h>

namespace {

constexpr int max_rank = 64;

// The BTL test double. Each endpoint it hands out is the address of its token for that rank,
// so that a rail can be checked to pair the right module with the right endpoint.
struct FakeBtl : weft_btl_module_t {
    std::set<int> reaches;
    std::vector<int> asked; // every rank btl_add_procs was asked for, in order
    std::map<weft_btl_tag_t, std::pair<weft_btl_recv_fn_t, void *>> tags;
    weft_status_t register_answer = WEFT_SUCCESS;
    weft_status_t register_error_answer = WEFT_SUCCESS;
    weft_btl_error_fn_t error_fn = nullptr;
    void *error_data = nullptr;
    int register_error_calls = 0;
    char tokens[max_rank] = {};

    weft_btl_endpoint_t *endpoint(int rank)
    {
        return reinterpret_cast<weft_btl_endpoint_t *>(&tokens[rank]);
    }
};

FakeBtl *fake(weft_btl_module_t *m) { return static_cast<FakeBtl *>(m); }

weft_status_t fake_add_procs(weft_btl_module_t *m, weft_proc_t *const *procs, size_t n,
                             weft_btl_endpoint_t **endpoints, uint8_t *reachable)
{
    for (size_t i = 0; i < n; ++i) {
        const int rank = weft_proc_rank(procs[i]);
        fake(m)->asked.push_back(rank);
        if (fake(m)->reaches.count(rank)) {
            endpoints[i] = fake(m)->endpoint(rank);
            reachable[i] = 1;
        }
    }
    return WEFT_SUCCESS;
}

weft_status_t fake_register(weft_btl_module_t *m, weft_btl_tag_t tag, weft_btl_recv_fn_t fn,
                            void *data)
{
    if (fake(m)->register_answer != WEFT_SUCCESS)
        return fake(m)->register_answer;
    fake(m)->tags[tag] = {fn, data};
    return WEFT_SUCCESS;
}

weft_status_t fake_register_error(weft_btl_module_t *m, weft_btl_error_fn_t fn, void *data)
{
    ++fake(m)->register_error_calls;
    if (fake(m)->register_error_answer != WEFT_SUCCESS)
        return fake(m)->register_error_answer;
    fake(m)->error_fn = fn;
    fake(m)->error_data = data;
    return WEFT_SUCCESS;
}

// A module that does send/receive and RDMA, reaching `reaches`.
void make(FakeBtl &b, std::set<int> reaches, uint32_t latency, uint32_t bandwidth,
          uint32_t exclusivity = 100)
{
    static_cast<weft_btl_module_t &>(b) = weft_btl_module_t{};
    b.struct_size = sizeof(weft_btl_module_t);
    b.btl_flags = WEFT_BTL_FLAG_SEND | WEFT_BTL_FLAG_RDMA;
    b.btl_max_send_size = 1000 + bandwidth; // tells the rails apart in endpoint_info
    b.btl_exclusivity = exclusivity;
    b.btl_latency = latency;
    b.btl_bandwidth = bandwidth;
    b.btl_add_procs = fake_add_procs;
    b.btl_register = fake_register;
    b.btl_register_error = fake_register_error;
    b.reaches = std::move(reaches);
}

weft_proc procs[max_rank];

weft_proc_t *proc(int rank)
{
    procs[rank].rank = rank;
    return &procs[rank];
}

// The recorded rails-changed reports.
std::vector<weft_proc_t *> changed;
weft_bml_module_t *changed_bml = nullptr;
size_t changed_saw_eager = SIZE_MAX; // endpoint_count read from inside the callback

void on_changed(weft_proc_t *p, void *data)
{
    ck_assert_ptr_eq(data, &changed);
    changed.push_back(p);
    // The callback may call the accessors: r2 must not hold its lock here (it would deadlock,
    // and the tcase timeout would fail the test).
    weft_bml_endpoint_t *ep = nullptr;
    if (changed_bml->bml_endpoint_get(changed_bml, p, &ep) == WEFT_SUCCESS)
        changed_saw_eager = changed_bml->bml_endpoint_count(changed_bml, ep, WEFT_BML_LIST_EAGER);
    else
        changed_saw_eager = 0;
}

void on_recv(weft_btl_module_t *, const weft_btl_recv_descriptor_t *) {}
void on_recv_other(weft_btl_module_t *, const weft_btl_recv_descriptor_t *) {}
void on_error(weft_btl_module_t *, uint32_t, weft_proc_t *, const char *, void *) {}

// Load bml/r2 through the repository and make its module, with the rails-changed callback set
// (and bml_r2_standby on if asked).
weft_bml_module_t *make_bml(bool standby = false)
{
    weft::test::isolate_components(weft::test::env_or_fail("WEFT_TEST_COMPONENT_PATH"));
    if (standby)
        setenv("WEFT_MCA_bml_r2_standby", "true", 1);
    ck_assert_int_eq(weft::mca::Repository::instance().scan(), WEFT_SUCCESS);
    const weft_bml_component_t *r2 = nullptr;
    for (auto *c : weft::mca::Repository::instance().components("bml"))
        if (c->name == "r2")
            r2 = reinterpret_cast<const weft_bml_component_t *>(c->desc);
    ck_assert_msg(r2 != nullptr, "bml/r2 was not found:\n%s", weft::test::all_messages().c_str());
    ck_assert_uint_eq(r2->mca.framework_abi_minor, WEFT_BML_ABI_MINOR);
    weft_bml_module_t *bml = r2->init(1, 1);
    ck_assert_ptr_nonnull(bml);
    ck_assert(WEFT_MODULE_HAS_OP(bml, weft_bml_module_t, bml_register_rails_changed));
    ck_assert_int_eq(bml->bml_register_rails_changed(bml, on_changed, &changed), WEFT_SUCCESS);
    changed.clear();
    changed_bml = bml;
    changed_saw_eager = SIZE_MAX;
    return bml;
}

void done(weft_bml_module_t *bml)
{
    ck_assert_int_eq(bml->bml_finalize(bml), WEFT_SUCCESS);
    ck_assert_msg(weft::test::messages().empty(), "unexpected messages:\n%s",
                  weft::test::all_messages().c_str());
}

weft_bml_endpoint_t *endpoint(weft_bml_module_t *bml, int rank)
{
    weft_bml_endpoint_t *ep = nullptr;
    ck_assert_int_eq(bml->bml_endpoint_get(bml, proc(rank), &ep), WEFT_SUCCESS);
    return ep;
}

void add_procs(weft_bml_module_t *bml, std::vector<int> ranks, std::vector<uint8_t> want)
{
    std::vector<weft_proc_t *> ps;
    for (int r : ranks)
        ps.push_back(proc(r));
    std::vector<uint8_t> reach(ps.size(), 0);
    ck_assert_int_eq(bml->bml_add_procs(bml, ps.data(), ps.size(), reach.data()), WEFT_SUCCESS);
    for (size_t i = 0; i < ps.size(); ++i)
        ck_assert_msg(reach[i] == want[i], "rank %d: reachable %d, expected %d", ranks[i], reach[i],
                      want[i]);
}

std::vector<weft_btl_module_t *> list_of(weft_bml_module_t *bml, weft_bml_endpoint_t *ep,
                                         weft_bml_list_t list)
{
    std::vector<weft_btl_module_t *> out;
    weft_bml_btl_t b;
    for (size_t i = 0; bml->bml_endpoint_btl(bml, ep, list, i, &b) == WEFT_SUCCESS; ++i)
        out.push_back(b.btl);
    ck_assert_uint_eq(out.size(), bml->bml_endpoint_count(bml, ep, list));
    return out;
}

double weight(weft_bml_module_t *bml, weft_bml_endpoint_t *ep, weft_bml_list_t list,
              const weft_btl_module_t *btl)
{
    weft_bml_btl_t b{};
    ck_assert_int_eq(bml->bml_endpoint_find(bml, ep, list, btl, &b), WEFT_SUCCESS);
    return b.weight;
}

START_TEST(test_register_error_reaches_late_module)
{
    weft_bml_module_t *bml = make_bml();
    FakeBtl a, late;
    make(a, {1}, 1, 100);
    make(late, {1}, 1, 100);
    int data = 0;
    // No module yet: remembered, and not "nobody can report errors".
    ck_assert_int_eq(bml->bml_register_error(bml, on_error, &data), WEFT_SUCCESS);
    ck_assert_int_eq(bml->bml_add_btl(bml, &a), WEFT_SUCCESS);
    ck_assert(a.error_fn == on_error);
    ck_assert_ptr_eq(a.error_data, &data);
    ck_assert_int_eq(bml->bml_add_btl(bml, &late), WEFT_SUCCESS);
    ck_assert(late.error_fn == on_error);
    ck_assert_ptr_eq(late.error_data, &data);
    ck_assert_int_eq(late.register_error_calls, 1);
    // Every present module refuses: NOT_SUPPORTED, and a module refusing on add_btl is still
    // taken (its errors stay fatal, its traffic does not).
    a.register_error_answer = late.register_error_answer = WEFT_ERR_NOT_SUPPORTED;
    ck_assert_int_eq(bml->bml_register_error(bml, on_error, nullptr), WEFT_ERR_NOT_SUPPORTED);
    FakeBtl refusing;
    make(refusing, {1}, 1, 100);
    refusing.register_error_answer = WEFT_ERR_NOT_SUPPORTED;
    ck_assert_int_eq(bml->bml_add_btl(bml, &refusing), WEFT_SUCCESS);
    ck_assert_int_eq(refusing.register_error_calls, 1);
    add_procs(bml, {1}, {1});
    ck_assert_uint_eq(list_of(bml, endpoint(bml, 1), WEFT_BML_LIST_SEND).size(), 3);
    done(bml);
}
END_TEST

START_TEST(test_register_reaches_late_module)
{
    weft_bml_module_t *bml = make_bml();
    FakeBtl a, b, c, refusing;
    make(a, {1}, 1, 100);
    make(b, {1}, 1, 100);
    make(c, {1}, 1, 100);
    make(refusing, {1}, 1, 100);
    int d7 = 0, d9 = 0, d7b = 0;
    ck_assert_int_eq(bml->bml_register(bml, 7, nullptr, nullptr), WEFT_ERR_BAD_PARAM);
    ck_assert_int_eq(bml->bml_register(bml, 7, on_recv, &d7), WEFT_SUCCESS);
    ck_assert_int_eq(bml->bml_add_btl(bml, &a), WEFT_SUCCESS);
    ck_assert_uint_eq(a.tags.size(), 1);
    ck_assert(a.tags[7].first == on_recv && a.tags[7].second == &d7);
    ck_assert_int_eq(bml->bml_register(bml, 9, on_recv, &d9), WEFT_SUCCESS);
    ck_assert_int_eq(bml->bml_add_btl(bml, &b), WEFT_SUCCESS);
    ck_assert_uint_eq(b.tags.size(), 2);
    ck_assert(b.tags[7].second == &d7 && b.tags[9].second == &d9);
    // A second registration of a tag replaces it, on present and later modules.
    ck_assert_int_eq(bml->bml_register(bml, 7, on_recv_other, &d7b), WEFT_SUCCESS);
    ck_assert(a.tags[7].first == on_recv_other && b.tags[7].second == &d7b);
    ck_assert_int_eq(bml->bml_add_btl(bml, &c), WEFT_SUCCESS);
    ck_assert(c.tags[7].first == on_recv_other && c.tags[7].second == &d7b);
    ck_assert(c.tags[9].second == &d9);
    // Adding the same module twice is refused, and it is not registered twice.
    ck_assert_int_eq(bml->bml_add_btl(bml, &c), WEFT_ERR_EXISTS);
    // A late module that refuses a tag is not taken.
    refusing.register_answer = WEFT_ERR_BAD_PARAM;
    ck_assert_int_eq(bml->bml_add_btl(bml, &refusing), WEFT_ERR_BAD_PARAM);
    ck_assert_int_eq(bml->bml_del_btl(bml, &refusing), WEFT_ERR_NOT_FOUND);
    add_procs(bml, {1}, {1});
    ck_assert(refusing.asked.empty());
    done(bml);
}
END_TEST

START_TEST(test_remove_one_of_two)
{
    weft_bml_module_t *bml = make_bml();
    FakeBtl slow, fast;
    make(slow, {1, 2}, 5, 1000);
    make(fast, {1, 2}, 1, 3000);
    ck_assert_int_eq(bml->bml_add_btl(bml, &slow), WEFT_SUCCESS);
    ck_assert_int_eq(bml->bml_add_btl(bml, &fast), WEFT_SUCCESS);
    add_procs(bml, {1, 2}, {1, 1});
    weft_bml_endpoint_t *ep = endpoint(bml, 1);
    // Eager by latency, send weighted by bandwidth.
    const auto eager = list_of(bml, ep, WEFT_BML_LIST_EAGER);
    ck_assert_uint_eq(eager.size(), 2);
    ck_assert_ptr_eq(eager[0], &fast);
    ck_assert_double_eq_tol(weight(bml, ep, WEFT_BML_LIST_SEND, &slow), 0.25, 1e-9);
    ck_assert_double_eq_tol(weight(bml, ep, WEFT_BML_LIST_SEND, &fast), 0.75, 1e-9);
    weft_bml_btl_t rail{};
    ck_assert_int_eq(bml->bml_endpoint_find(bml, ep, WEFT_BML_LIST_RDMA, &fast, &rail),
                     WEFT_SUCCESS);
    ck_assert_ptr_eq(rail.btl_endpoint, fast.endpoint(1));

    ck_assert_int_eq(bml->bml_del_proc_btl(bml, proc(1), &fast), WEFT_SUCCESS);
    ck_assert_uint_eq(changed.size(), 1);
    ck_assert_ptr_eq(changed[0], proc(1));
    ck_assert_uint_eq(changed_saw_eager, 1); // read from inside the callback, after the change
    for (weft_bml_list_t l : {WEFT_BML_LIST_EAGER, WEFT_BML_LIST_SEND, WEFT_BML_LIST_RDMA}) {
        const auto left = list_of(bml, ep, l);
        ck_assert_uint_eq(left.size(), 1);
        ck_assert_ptr_eq(left[0], &slow);
        ck_assert_double_eq_tol(weight(bml, ep, l, &slow), 1.0, 1e-9);
        ck_assert_int_eq(bml->bml_endpoint_find(bml, ep, l, &fast, &rail), WEFT_ERR_NOT_FOUND);
    }
    for (int i = 0; i < 3; ++i) {
        ck_assert_int_eq(bml->bml_endpoint_next(bml, ep, WEFT_BML_LIST_SEND, &rail), WEFT_SUCCESS);
        ck_assert_ptr_eq(rail.btl, &slow);
        ck_assert_ptr_eq(rail.btl_endpoint, slow.endpoint(1));
    }
    weft_bml_endpoint_info_t info{};
    info.struct_size = sizeof info;
    ck_assert_int_eq(bml->bml_endpoint_info(bml, ep, &info), WEFT_SUCCESS);
    ck_assert_uint_eq(info.max_send_size, slow.btl_max_send_size);
    // The other peer keeps both.
    ck_assert_uint_eq(list_of(bml, endpoint(bml, 2), WEFT_BML_LIST_SEND).size(), 2);
    done(bml);
}
END_TEST

START_TEST(test_remove_last_rail)
{
    weft_bml_module_t *bml = make_bml();
    FakeBtl only;
    make(only, {1}, 1, 100);
    ck_assert_int_eq(bml->bml_add_btl(bml, &only), WEFT_SUCCESS);
    add_procs(bml, {1}, {1});
    weft_bml_endpoint_t *ep = endpoint(bml, 1);
    ck_assert_int_eq(bml->bml_del_proc_btl(bml, proc(1), &only), WEFT_ERR_UNREACH);
    ck_assert_uint_eq(changed.size(), 1);
    ck_assert_ptr_eq(changed[0], proc(1));
    weft_bml_endpoint_t *again = nullptr;
    ck_assert_int_eq(bml->bml_endpoint_get(bml, proc(1), &again), WEFT_ERR_UNREACH);
    ck_assert_ptr_null(again);
    weft_bml_btl_t rail{};
    for (weft_bml_list_t l : {WEFT_BML_LIST_EAGER, WEFT_BML_LIST_SEND, WEFT_BML_LIST_RDMA}) {
        ck_assert_uint_eq(bml->bml_endpoint_count(bml, ep, l), 0);
        ck_assert_int_eq(bml->bml_endpoint_next(bml, ep, l, &rail), WEFT_ERR_UNREACH);
        ck_assert_int_eq(bml->bml_endpoint_btl(bml, ep, l, 0, &rail), WEFT_ERR_NOT_FOUND);
    }
    // Nothing left to remove: NOT_FOUND, and no report.
    ck_assert_int_eq(bml->bml_del_proc_btl(bml, proc(1), &only), WEFT_ERR_NOT_FOUND);
    ck_assert_uint_eq(changed.size(), 1);
    done(bml);
}
END_TEST

START_TEST(test_del_btl_across_peers)
{
    weft_bml_module_t *bml = make_bml();
    FakeBtl a, b;
    make(a, {1, 2, 3}, 1, 100);
    make(b, {1, 2}, 1, 100);
    ck_assert_int_eq(bml->bml_add_btl(bml, &a), WEFT_SUCCESS);
    ck_assert_int_eq(bml->bml_add_btl(bml, &b), WEFT_SUCCESS);
    add_procs(bml, {1, 2, 3}, {1, 1, 1});
    // Every peer b served still has a: SUCCESS, one report per peer that lost a rail.
    ck_assert_int_eq(bml->bml_del_btl(bml, &b), WEFT_SUCCESS);
    std::set<weft_proc_t *> got(changed.begin(), changed.end());
    ck_assert_uint_eq(changed.size(), 2);
    ck_assert(got == std::set<weft_proc_t *>({proc(1), proc(2)}));
    for (int r : {1, 2, 3}) {
        const auto left = list_of(bml, endpoint(bml, r), WEFT_BML_LIST_SEND);
        ck_assert_uint_eq(left.size(), 1);
        ck_assert_ptr_eq(left[0], &a);
    }
    ck_assert_int_eq(bml->bml_del_btl(bml, &b), WEFT_ERR_NOT_FOUND);
    ck_assert_uint_eq(changed.size(), 2);
    // The last rail of every peer: UNREACH, all three reported.
    changed.clear();
    ck_assert_int_eq(bml->bml_del_btl(bml, &a), WEFT_ERR_UNREACH);
    got = std::set<weft_proc_t *>(changed.begin(), changed.end());
    ck_assert_uint_eq(changed.size(), 3);
    ck_assert(got == std::set<weft_proc_t *>({proc(1), proc(2), proc(3)}));
    weft_bml_endpoint_t *ep = nullptr;
    for (int r : {1, 2, 3})
        ck_assert_int_eq(bml->bml_endpoint_get(bml, proc(r), &ep), WEFT_ERR_UNREACH);
    // Removed for the job: not taken again, not asked for procs added later.
    ck_assert_int_eq(bml->bml_add_btl(bml, &b), WEFT_ERR_EXISTS);
    const size_t asked_a = a.asked.size(), asked_b = b.asked.size();
    add_procs(bml, {4}, {0});
    ck_assert_uint_eq(a.asked.size(), asked_a);
    ck_assert_uint_eq(b.asked.size(), asked_b);
    ck_assert_int_eq(bml->bml_endpoint_get(bml, proc(4), &ep), WEFT_ERR_UNREACH);
    done(bml);
}
END_TEST

START_TEST(test_not_found)
{
    weft_bml_module_t *bml = make_bml();
    FakeBtl a, other, lesser, never;
    make(a, {1, 2}, 1, 100);
    make(other, {2}, 1, 100);
    make(lesser, {1}, 1, 100, 10); // reaches 1, but below a's exclusivity: not used for it
    make(never, {1}, 1, 100);
    for (FakeBtl *b : {&a, &other, &lesser})
        ck_assert_int_eq(bml->bml_add_btl(bml, b), WEFT_SUCCESS);
    add_procs(bml, {1, 2}, {1, 1});
    weft_bml_endpoint_t *ep = nullptr;
    ck_assert_int_eq(bml->bml_endpoint_get(bml, proc(5), &ep), WEFT_ERR_NOT_FOUND);
    ck_assert_int_eq(bml->bml_del_proc_btl(bml, proc(5), &a), WEFT_ERR_NOT_FOUND);
    ck_assert_int_eq(bml->bml_del_proc_btl(bml, proc(1), &other), WEFT_ERR_NOT_FOUND);
    ck_assert_int_eq(bml->bml_del_proc_btl(bml, proc(1), &lesser), WEFT_ERR_NOT_FOUND);
    ck_assert_int_eq(bml->bml_del_proc_btl(bml, proc(1), &never), WEFT_ERR_NOT_FOUND);
    ck_assert_int_eq(bml->bml_del_btl(bml, &never), WEFT_ERR_NOT_FOUND);
    ck_assert_uint_eq(changed.size(), 0);
    ck_assert_uint_eq(list_of(bml, endpoint(bml, 1), WEFT_BML_LIST_SEND).size(), 1);
    // After del_procs the endpoint is gone: NOT_FOUND, not UNREACH.
    weft_proc_t *one = proc(1);
    ck_assert_int_eq(bml->bml_del_procs(bml, &one, 1), WEFT_SUCCESS);
    ck_assert_int_eq(bml->bml_endpoint_get(bml, proc(1), &ep), WEFT_ERR_NOT_FOUND);
    ck_assert_int_eq(bml->bml_del_proc_btl(bml, proc(1), &a), WEFT_ERR_NOT_FOUND);
    done(bml);
}
END_TEST

START_TEST(test_add_procs_again_keeps_removal)
{
    weft_bml_module_t *bml = make_bml();
    FakeBtl a, b;
    make(a, {1, 2}, 1, 100);
    make(b, {1, 2}, 2, 100);
    ck_assert_int_eq(bml->bml_add_btl(bml, &a), WEFT_SUCCESS);
    ck_assert_int_eq(bml->bml_add_btl(bml, &b), WEFT_SUCCESS);
    add_procs(bml, {1, 2}, {1, 1});
    ck_assert_int_eq(bml->bml_del_proc_btl(bml, proc(1), &b), WEFT_SUCCESS);
    b.asked.clear();
    a.asked.clear();
    add_procs(bml, {1, 2}, {1, 1});
    ck_assert(b.asked == std::vector<int>({2})); // b is no longer asked for rank 1
    ck_assert(a.asked == std::vector<int>({1, 2}));
    auto left = list_of(bml, endpoint(bml, 1), WEFT_BML_LIST_SEND);
    ck_assert_uint_eq(left.size(), 1);
    ck_assert_ptr_eq(left[0], &a);
    ck_assert_uint_eq(list_of(bml, endpoint(bml, 2), WEFT_BML_LIST_SEND).size(), 2);
    // Nor after del_procs and a reconnect.
    weft_proc_t *one = proc(1);
    ck_assert_int_eq(bml->bml_del_procs(bml, &one, 1), WEFT_SUCCESS);
    add_procs(bml, {1}, {1});
    left = list_of(bml, endpoint(bml, 1), WEFT_BML_LIST_RDMA);
    ck_assert_uint_eq(left.size(), 1);
    ck_assert_ptr_eq(left[0], &a);
    // add_procs is the PML's own call: no report.
    ck_assert_uint_eq(changed.size(), 1);
    done(bml);
}
END_TEST

// A second thread reads rails without pause while this one removes them, front first (each
// removal shifts every rail after it), from one peer after another. Every rail it copies out
// must be one of the peer's modules with that module's endpoint for the peer, and never one
// whose removal had returned before the read began (an accessor sees a list before or after a
// removal, never half-way).
START_TEST(test_removal_during_traffic)
{
    weft_bml_module_t *bml = make_bml();
    constexpr int nrails = 32, rounds = 12, first_rank = 10;
    std::vector<FakeBtl> rails(nrails);
    std::set<int> ranks;
    std::vector<int> round_ranks;
    for (int r = 0; r < rounds; ++r) {
        ranks.insert(first_rank + r);
        round_ranks.push_back(first_rank + r);
    }
    for (int i = 0; i < nrails; ++i) {
        make(rails[size_t(i)], ranks, uint32_t(1 + i), uint32_t(100 * (i + 1)));
        ck_assert_int_eq(bml->bml_add_btl(bml, &rails[size_t(i)]), WEFT_SUCCESS);
    }
    add_procs(bml, round_ranks, std::vector<uint8_t>(rounds, 1));
    std::vector<weft_bml_endpoint_t *> eps;
    for (int r : round_ranks)
        eps.push_back(endpoint(bml, r));

    // round * 64 + how many of that round's peer's rails are gone (rails[0..gone-1]).
    std::atomic<int> state{0};
    std::atomic<bool> stop{false};
    std::atomic<long> reads{0}, bad{0}, stale{0}, unreach{0};
    auto check = [&](const weft_bml_btl_t &b, int rank, int gone) {
        const auto it =
            std::find_if(rails.begin(), rails.end(), [&](const FakeBtl &r) { return b.btl == &r; });
        if (it == rails.end() || b.btl_endpoint != it->endpoint(rank) || !(b.weight > 0) ||
            b.weight > 1.0)
            ++bad;
        else if (it - rails.begin() < gone)
            ++stale;
    };
    std::thread reader([&] {
        size_t i = 0;
        while (!stop.load()) {
            const int st = state.load(), round = std::min(st / 64, rounds - 1), gone = st % 64;
            weft_bml_endpoint_t *ep = eps[size_t(round)];
            const int rank = round_ranks[size_t(round)];
            weft_bml_btl_t b{};
            weft_status_t rc = bml->bml_endpoint_next(bml, ep, WEFT_BML_LIST_SEND, &b);
            if (rc == WEFT_SUCCESS)
                check(b, rank, gone);
            else if (rc == WEFT_ERR_UNREACH)
                ++unreach;
            else
                ++bad;
            rc = bml->bml_endpoint_btl(bml, ep, WEFT_BML_LIST_EAGER, i++ % nrails, &b);
            if (rc == WEFT_SUCCESS)
                check(b, rank, gone);
            else if (rc != WEFT_ERR_NOT_FOUND)
                ++bad;
            if (bml->bml_endpoint_find(bml, ep, WEFT_BML_LIST_RDMA, &rails.back(), &b) ==
                WEFT_SUCCESS)
                check(b, rank, gone);
            if (bml->bml_endpoint_count(bml, ep, WEFT_BML_LIST_RDMA) > size_t(nrails - gone))
                ++stale;
            ++reads;
        }
    });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    auto wait_reads = [&](long n) {
        const long from = reads.load();
        while (reads.load() < from + n && std::chrono::steady_clock::now() < deadline)
            std::this_thread::yield();
    };
    wait_reads(1000);
    std::vector<weft_status_t> got;
    for (int round = 0; round < rounds; ++round) {
        for (int i = 0; i < nrails; ++i) {
            FakeBtl *b = &rails[size_t(i)];
            // The last round takes one module out of the job (every peer's lists are empty
            // by then but this one's); the others remove per peer.
            got.push_back(round == rounds - 1 && i == nrails / 2
                              ? bml->bml_del_btl(bml, b)
                              : bml->bml_del_proc_btl(bml, proc(round_ranks[size_t(round)]), b));
            state = round * 64 + i + 1;
            wait_reads(100);
        }
        state = (round + 1) * 64;
    }
    wait_reads(1000);
    stop = true;
    reader.join();
    ck_assert_msg(std::chrono::steady_clock::now() < deadline, "the reader made no progress");
    ck_assert_int_eq(bad.load(), 0);
    ck_assert_int_eq(stale.load(), 0);
    ck_assert_int_gt(unreach.load(), 0); // it saw the end
    for (size_t i = 0; i < got.size(); ++i)
        ck_assert_int_eq(got[i], i % nrails == nrails - 1 ? WEFT_ERR_UNREACH : WEFT_SUCCESS);
    ck_assert_uint_eq(changed.size(), size_t(rounds * nrails));
    printf("removal during traffic: %ld reads while %d rails went from %d peers\n", reads.load(),
           nrails, rounds);
    done(bml);
}
END_TEST

// bml_r2_standby: once every rail of the highest exclusivity is removed for a peer, the next
// exclusivity that reaches it takes over, one level at a time; a peer with nothing left is
// unreachable as without standby.
START_TEST(test_standby)
{
    weft_bml_module_t *bml = make_bml(true);
    FakeBtl top, middle, low, elsewhere;
    make(top, {1, 2}, 1, 100, 100);
    make(middle, {1}, 1, 100, 50);
    make(low, {1, 2}, 1, 100, 10);
    make(elsewhere, {2}, 1, 100, 100);
    for (FakeBtl *b : {&top, &middle, &low, &elsewhere})
        ck_assert_int_eq(bml->bml_add_btl(bml, b), WEFT_SUCCESS);
    add_procs(bml, {1, 2}, {1, 1});
    auto only = [&](int rank, weft_btl_module_t *want) {
        const auto l = list_of(bml, endpoint(bml, rank), WEFT_BML_LIST_SEND);
        ck_assert_uint_eq(l.size(), 1);
        ck_assert_ptr_eq(l[0], want);
        const auto e = list_of(bml, endpoint(bml, rank), WEFT_BML_LIST_EAGER);
        ck_assert_uint_eq(e.size(), 1);
        ck_assert_ptr_eq(e[0], want);
    };
    only(1, &top);
    // Rank 1 loses top: middle (50) takes over, not low (10).
    ck_assert_int_eq(bml->bml_del_proc_btl(bml, proc(1), &top), WEFT_SUCCESS);
    ck_assert_uint_eq(changed.size(), 1);
    ck_assert_uint_eq(changed_saw_eager, 1);
    only(1, &middle);
    // Then middle: low.
    ck_assert_int_eq(bml->bml_del_proc_btl(bml, proc(1), &middle), WEFT_SUCCESS);
    only(1, &low);
    // Rank 2 still has top and elsewhere, both of the highest exclusivity: no standby yet.
    ck_assert_uint_eq(list_of(bml, endpoint(bml, 2), WEFT_BML_LIST_SEND).size(), 2);
    ck_assert_int_eq(bml->bml_del_btl(bml, &top), WEFT_SUCCESS);
    only(2, &elsewhere);
    // The whole of low goes: rank 1 has nothing left (top and middle were removed for it),
    // rank 2 keeps elsewhere (low was only its standby: no change for it).
    changed.clear();
    ck_assert_int_eq(bml->bml_del_btl(bml, &low), WEFT_ERR_UNREACH);
    ck_assert_uint_eq(changed.size(), 1);
    ck_assert_ptr_eq(changed[0], proc(1));
    weft_bml_endpoint_t *ep = nullptr;
    ck_assert_int_eq(bml->bml_endpoint_get(bml, proc(1), &ep), WEFT_ERR_UNREACH);
    only(2, &elsewhere);
    done(bml);
}
END_TEST

} // namespace

int main()
{
    Suite *s = suite_create("bml/r2");
    TCase *tc = tcase_create("contracts");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_register_error_reaches_late_module);
    tcase_add_test(tc, test_register_reaches_late_module);
    tcase_add_test(tc, test_remove_one_of_two);
    tcase_add_test(tc, test_remove_last_rail);
    tcase_add_test(tc, test_del_btl_across_peers);
    tcase_add_test(tc, test_not_found);
    tcase_add_test(tc, test_add_procs_again_keeps_removal);
    tcase_add_test(tc, test_removal_during_traffic);
    tcase_add_test(tc, test_standby);
    suite_add_tcase(s, tc);
    return weft::test::run_suite(s);
}
