// Tests for mca/coll/sm/coll_sm_learn.h: how coll/sm chooses, per operation and size class,
// between its large slots, the modules below it and its single copy, driven here by simulated call
// times as the component drives it (begin_call, the ranks' sums at a choice, next, took). Each test
// forces one outcome, so each way of the choice is covered.
#include "check_util.h"

#include <coll/sm/coll_sm_learn.h>

#include <algorithm>
#include <cmath>
#include <functional>

using weft::coll::sm::kBelow;
using weft::coll::sm::kMaxWays;
using weft::coll::sm::kSingle;
using weft::coll::sm::kSlots;
using weft::coll::sm::Learner;
using weft::coll::sm::Way;

namespace {

// A communicator whose ranks all see the same times: times(way, k) is the k-th call of that
// way (from 0), in us, back to back on one clock. Runs `calls` calls and counts the calls of
// each way; `ways` gets each call's way, `choices_at` the call numbers at which the ranks chose.
struct Run {
    int taken[kMaxWays] = {0, 0, 0};
    std::vector<Way> ways;
    std::vector<unsigned> choices_at;
};

Run simulate(Learner &l, int calls, const std::function<double(Way, int)> &times, int ranks = 2)
{
    Run r;
    double clock = 0;
    for (int c = 0; c < calls; ++c) {
        l.begin_call();
        if (l.choosing()) {
            // Every rank put the same times: the sums are ranks times them.
            double sums[kMaxWays];
            for (unsigned w = 0; w < kMaxWays; ++w)
                sums[w] = ranks * double(l.best[w]);
            l.chose(l.decide(sums));
            r.choices_at.push_back(unsigned(c));
        }
        const Way w = l.next();
        const double t = times(w, r.taken[w]);
        clock += std::max(t, 0.0);
        l.took(clock, t >= 0);
        ++r.taken[w];
        r.ways.push_back(w);
    }
    return r;
}

START_TEST(test_round_schedule)
{
    // A round: kPasses runs of kRun calls of each way, the second pass in the reverse order
    // (each way after each as often); the first call of each run is not timed.
    for (unsigned ways = 2; ways <= kMaxWays; ++ways) {
        const Learner l(ways);
        ck_assert_uint_eq(l.round_calls(), ways * Learner::kRun * Learner::kPasses);
        int per_way[kMaxWays] = {};
        for (unsigned c = 0; c < l.round_calls(); ++c) {
            ++per_way[l.scheduled(c)];
            if (Learner::place(c) != 0)
                ck_assert_int_eq(l.scheduled(c), l.scheduled(c - 1)); // one way a run
        }
        for (unsigned w = 0; w < ways; ++w)
            ck_assert_int_eq(per_way[w], int(Learner::kRun * Learner::kPasses));
        ck_assert_int_eq(l.scheduled(0), l.scheduled(l.round_calls() - 1));
    }
    // The first call has no choice to make yet; the choice comes at the round's end.
    Learner l;
    l.begin_call();
    ck_assert(!l.choosing());
    ck_assert_int_eq(l.next(), l.scheduled(0));
}
END_TEST

START_TEST(test_below_faster_chosen)
{
    // The modules below: 5 us a call; the slots 8 us.
    Learner l;
    const Run r = simulate(l, 1000, [](Way w, int) { return w == kBelow ? 5.0 : 8.0; });
    ck_assert_int_eq(l.way, kBelow);
    ck_assert_uint_eq(r.choices_at.front(), l.round_calls());
    // After the first round the slots run only in later rounds' calls.
    const int rounds = int(r.choices_at.size());
    ck_assert_int_eq(r.taken[kSlots], rounds * int(Learner::kRun * Learner::kPasses));
    ck_assert_int_lt(r.taken[kSlots], 1000 / 10);
}
END_TEST

START_TEST(test_slots_faster_chosen)
{
    Learner l;
    const Run r = simulate(l, 1000, [](Way w, int) { return w == kBelow ? 9.0 : 6.0; });
    ck_assert_int_eq(l.way, kSlots);
    ck_assert_int_lt(r.taken[kBelow], 1000 / 10);
    // A tie keeps the slots; a way never timed is not chosen.
    const double tie[] = {4.0, 4.0}, slots_untimed[] = {INFINITY, 3.0},
                 below_untimed[] = {3.0, INFINITY};
    ck_assert_int_eq(l.decide(tie), kSlots);
    ck_assert_int_eq(l.decide(slots_untimed), kBelow);
    ck_assert_int_eq(l.decide(below_untimed), kSlots);
}
END_TEST

START_TEST(test_single_copy_chosen)
{
    // Three ways: the single copy fastest is chosen, and loses to a faster one.
    Learner a(3);
    simulate(a, 600, [](Way w, int) { return w == kSingle ? 4.0 : w == kBelow ? 7.0 : 6.0; });
    ck_assert_int_eq(a.way, kSingle);
    Learner b(3);
    simulate(b, 600, [](Way w, int) { return w == kSingle ? 9.0 : w == kBelow ? 7.0 : 6.0; });
    ck_assert_int_eq(b.way, kSlots);
    // Two ways never try the third.
    Learner c(2);
    const Run r = simulate(c, 600, [](Way w, int) { return w == kSingle ? 1.0 : 6.0; });
    ck_assert_int_eq(r.taken[kSingle], 0);
}
END_TEST

START_TEST(test_settles_after_a_slow_start)
{
    // The way below is slow for its first 12 calls (the PML's rendezvous settling), 5 us after;
    // the slots 8 us. The first round sees it slow and keeps the slots; a later one finds it
    // faster, and from then on it is taken.
    Learner l;
    const Run r = simulate(l, 600, [](Way w, int k) {
        return w == kSlots ? 8.0 : k < 12 ? 12.0 : 5.0;
    });
    ck_assert_int_eq(l.way, kBelow);
    ck_assert_uint_ge(r.choices_at.size(), 3);
    ck_assert_int_eq(r.ways[r.choices_at[0]], kSlots); // the first choice, on the slow start
    ck_assert_int_eq(r.ways[r.choices_at[1]], kBelow);
    int slots_after = 0;
    for (size_t c = r.choices_at[1]; c < r.choices_at[2]; ++c)
        slots_after += r.ways[c] == kSlots;
    ck_assert_int_le(slots_after, int(Learner::kRun * Learner::kPasses));
}
END_TEST

START_TEST(test_a_blip_does_not_flip)
{
    // The way below is faster, but one of its calls in each round is a stall (another process
    // took the core): its other run still wins.
    Learner l;
    simulate(l, 600, [](Way w, int k) { return w == kBelow ? (k % 10 == 3 ? 500.0 : 5.0) : 8.0; });
    ck_assert_int_eq(l.way, kBelow);
}
END_TEST

START_TEST(test_rounds_grow_apart)
{
    // Rounds at the first calls, then kFirstGap calls after the choice, then four times as
    // many each time.
    Learner l;
    const Run r = simulate(l, 6000, [](Way w, int) { return w == kBelow ? 5.0 : 8.0; });
    ck_assert_uint_ge(r.choices_at.size(), 4);
    for (size_t i = 1; i < r.choices_at.size(); ++i)
        ck_assert_uint_eq(r.choices_at[i] - r.choices_at[i - 1],
                          Learner::gap(unsigned(i)) + l.round_calls());
    ck_assert_uint_eq(Learner::gap(1), Learner::kFirstGap);
    ck_assert_uint_eq(Learner::gap(2), 4 * Learner::kFirstGap);
    // The gap stops growing before it overflows.
    ck_assert_uint_eq(Learner::gap(255), Learner::kFirstGap << 24);
}
END_TEST

START_TEST(test_failed_calls_not_timed)
{
    // A failed call spoils its run: a way whose every run had one is never chosen.
    Learner l;
    simulate(l, int(l.round_calls()) + 1, [](Way w, int) { return w == kBelow ? -1.0 : 8.0; });
    ck_assert_int_eq(l.way, kSlots);
    ck_assert(std::isinf(l.best[kBelow]));
    // Nothing below: the slots for good, no more rounds.
    Learner only;
    only.slots_only();
    const Run r = simulate(only, 500, [](Way, int) { return 1.0; });
    ck_assert_int_eq(r.taken[kBelow], 0);
    ck_assert(r.choices_at.empty());
}
END_TEST

} // namespace

int main()
{
    Suite *s = suite_create("coll_sm_learn");
    TCase *tc = tcase_create("learn");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_round_schedule);
    tcase_add_test(tc, test_below_faster_chosen);
    tcase_add_test(tc, test_slots_faster_chosen);
    tcase_add_test(tc, test_single_copy_chosen);
    tcase_add_test(tc, test_settles_after_a_slow_start);
    tcase_add_test(tc, test_a_blip_does_not_flip);
    tcase_add_test(tc, test_rounds_grow_apart);
    tcase_add_test(tc, test_failed_calls_not_timed);
    suite_add_tcase(s, tc);
    return weft::test::run_suite(s);
}
