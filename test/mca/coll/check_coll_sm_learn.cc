// Tests for mca/coll/sm/coll_sm_learn.h: how coll/sm chooses, per operation and size class,
// between its large slots and the modules below it, driven here by simulated call times as the
// component drives it (begin_call, the ranks' sums at a choice, next, took). Each test forces
// one outcome, so both ways of the choice are covered.
#include "check_util.h"

#include <coll/sm/coll_sm_learn.h>

#include <cmath>
#include <functional>

using weft::coll::sm::kBelow;
using weft::coll::sm::kSlots;
using weft::coll::sm::Learner;
using weft::coll::sm::Way;

namespace {

// A communicator of `ranks` ranks whose ranks all see the same times: times(way, k) is the
// k-th call of that way (from 0), in us. Runs `calls` calls and counts the calls of each way;
// `ways` gets each call's way.
struct Run {
    int taken[2] = {0, 0};
    std::vector<Way> ways;
    std::vector<unsigned> choices_at; // call numbers at which the ranks chose
};

Run simulate(Learner &l, int calls, const std::function<double(Way, int)> &times, int ranks = 2)
{
    Run r;
    for (int c = 0; c < calls; ++c) {
        l.begin_call();
        if (l.choosing()) {
            // Every rank put the same least times: the sums are ranks times them.
            l.chose(
                Learner::decide(ranks * double(l.least[kSlots]), ranks * double(l.least[kBelow])));
            r.choices_at.push_back(unsigned(c));
        }
        const Way w = l.next();
        l.took(times(w, r.taken[w]));
        ++r.taken[w];
        r.ways.push_back(w);
    }
    return r;
}

START_TEST(test_round_schedule)
{
    // A round: kWarm untimed calls each way, alternating, then kTimed timed each way, each way
    // as often after the other.
    int warm[2] = {0, 0}, timed[2] = {0, 0};
    for (unsigned c = 0; c < Learner::kRound; ++c)
        ++(Learner::timed(c) ? timed : warm)[Learner::scheduled(c)];
    ck_assert_int_eq(warm[kSlots], int(Learner::kWarm));
    ck_assert_int_eq(warm[kBelow], int(Learner::kWarm));
    ck_assert_int_eq(timed[kSlots], int(Learner::kTimed));
    ck_assert_int_eq(timed[kBelow], int(Learner::kTimed));
    int after[2][2] = {};
    for (unsigned c = 2 * Learner::kWarm + 1; c < Learner::kRound; ++c)
        ++after[Learner::scheduled(c - 1)][Learner::scheduled(c)];
    ck_assert_int_eq(after[kSlots][kBelow], after[kBelow][kSlots]);
    // The first call has no choice to make yet; the choice comes at the round's end.
    Learner l;
    l.begin_call();
    ck_assert(!l.choosing());
    ck_assert_int_eq(l.next(), Learner::scheduled(0));
}
END_TEST

START_TEST(test_below_faster_chosen)
{
    // The modules below: 5 us a call; the slots 8 us.
    Learner l;
    const Run r = simulate(l, 1000, [](Way w, int) { return w == kBelow ? 5.0 : 8.0; });
    ck_assert_int_eq(l.way, kBelow);
    ck_assert_uint_eq(r.choices_at.front(), Learner::kRound);
    // After the first round the slots run only in later rounds' calls: 6 of them a round.
    const int rounds = int(r.choices_at.size());
    ck_assert_int_eq(r.taken[kSlots], rounds * int(Learner::kWarm + Learner::kTimed));
    ck_assert_int_lt(r.taken[kSlots], 1000 / 20);
}
END_TEST

START_TEST(test_slots_faster_chosen)
{
    Learner l;
    const Run r = simulate(l, 1000, [](Way w, int) { return w == kBelow ? 9.0 : 6.0; });
    ck_assert_int_eq(l.way, kSlots);
    ck_assert_int_lt(r.taken[kBelow], 1000 / 20);
    // A tie keeps the slots; a way never timed is not chosen.
    ck_assert_int_eq(Learner::decide(4.0, 4.0), kSlots);
    ck_assert_int_eq(Learner::decide(INFINITY, 3.0), kBelow);
    ck_assert_int_eq(Learner::decide(3.0, INFINITY), kSlots);
}
END_TEST

START_TEST(test_settles_after_a_slow_start)
{
    // The way below is slow for its first 10 calls (the PML's rendezvous settling), 5 us after;
    // the slots 8 us. The first round sees it slow and keeps the slots; a later one finds it
    // faster, and from then on it is taken.
    Learner l;
    const Run r = simulate(l, 400, [](Way w, int k) {
        return w == kSlots ? 8.0 : k < 10 ? 12.0 : 5.0;
    });
    ck_assert_int_eq(l.way, kBelow);
    ck_assert_uint_ge(r.choices_at.size(), 3);
    // The first choice, on the slow start, was the slots; the way below won by the third round.
    int below_from = -1;
    for (int c = 0; c < int(r.ways.size()) && below_from < 0; ++c)
        if (c > int(r.choices_at[1]) && r.ways[size_t(c)] == kBelow)
            below_from = c;
    ck_assert_int_ge(below_from, 0);
    int slots_after = 0;
    for (size_t c = r.choices_at[2]; c < r.ways.size(); ++c)
        slots_after += r.ways[c] == kSlots;
    ck_assert_int_le(slots_after, 2 * int(Learner::kWarm + Learner::kTimed));
}
END_TEST

START_TEST(test_a_blip_does_not_flip)
{
    // The way below is faster, but one of its timed calls in each round is a stall (another
    // process took the core): its least time still wins.
    Learner l;
    simulate(l, 600, [](Way w, int k) { return w == kBelow ? (k % 4 == 2 ? 500.0 : 5.0) : 8.0; });
    ck_assert_int_eq(l.way, kBelow);
}
END_TEST

START_TEST(test_rounds_grow_apart)
{
    // Rounds at the first calls, then kFirstGap calls after the choice, then four times as
    // many each time.
    Learner l;
    const Run r = simulate(l, 3000, [](Way w, int) { return w == kBelow ? 5.0 : 8.0; });
    ck_assert_uint_ge(r.choices_at.size(), 4);
    for (size_t i = 1; i < r.choices_at.size(); ++i)
        ck_assert_uint_eq(r.choices_at[i] - r.choices_at[i - 1],
                          Learner::gap(unsigned(i)) + Learner::kRound);
    ck_assert_uint_eq(Learner::gap(1), Learner::kFirstGap);
    ck_assert_uint_eq(Learner::gap(2), 4 * Learner::kFirstGap);
    // The gap stops growing before it overflows.
    ck_assert_uint_eq(Learner::gap(255), Learner::kFirstGap << 24);
}
END_TEST

START_TEST(test_failed_calls_not_timed)
{
    // A call that failed (negative time) counts as a call of the round but gives no time: a
    // way whose every timed call failed is never chosen.
    Learner l;
    simulate(l, int(Learner::kRound) + 1, [](Way w, int) { return w == kBelow ? -1.0 : 8.0; });
    ck_assert_int_eq(l.way, kSlots);
    ck_assert(std::isinf(l.least[kBelow]));
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
    tcase_add_test(tc, test_settles_after_a_slow_start);
    tcase_add_test(tc, test_a_blip_does_not_flip);
    tcase_add_test(tc, test_rounds_grow_apart);
    tcase_add_test(tc, test_failed_calls_not_timed);
    suite_add_tcase(s, tc);
    return weft::test::run_suite(s);
}
