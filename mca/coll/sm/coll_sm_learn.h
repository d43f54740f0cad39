// coll/sm: which way a large operation takes: its large slots (each rank copies in, then out),
// the modules below coll/sm (coll/basic's point-to-point algorithms over the PML), or, for
// bcast, reduce, allgather and alltoall where cross-memory attach works, a single copy (each rank
// reads what it needs straight from the others' buffers), learnt on the host the job runs on. Which
// is faster depends on the host, the ranks and the size. A Learner serves one operation and
// one size class (sizes from 2^(k-1) to 2^k - 1) on one communicator, among `ways` ways (2: the
// slots and below; 3: and the single copy). All its ranks run the same calls of an operation and
// size class in the same order (collectives are called so, and the class and the ways depend
// on what every rank has alike), so each call's way is the same at every rank without a word
// between them. A round compares the ways in runs of kRun calls of one way, each way's run in
// turn, twice (the second time in the reverse order, so that each way follows each as often):
//   - a run's first call is not timed (the way's first call after another: the slots' pages,
//     the PML's rendezvous settling, the ranks' skew left by the other way);
//   - each rank times the rest of the run as a whole, from the end of its first call to the end
//     of its last, per call: what a loop of such calls costs. Not each call alone: a rank's
//     calls of an arrival-based way differ (short where it came last and found the others
//     done), and on oversubscribed cores a rank's wait for the others' turns on the core falls
//     partly between its calls; per-call times put the slots ahead of the single copy for
//     4-rank alltoalls of 64 KiB on 2 cores (least 23-29 us against 24-34), where loops of
//     them took 64 us against 38;
//   - each rank keeps the lesser of its two runs per way (a stall, another process taking the
//     core, spoils one), and at the next call the ranks share them through the small slots;
//     every rank takes the way whose times, averaged over the ranks, are least.
// A round runs at the first calls, then again kFirstGap calls after that choice, and after
// four times as many calls each time (64, 256, 1024, ...): the PML's own choices for a size
// take some tens of messages to settle (a first round sees the point-to-point way at its
// slowest), and what is faster may change; the rounds cost less and less.
// No header beyond <algorithm>, <cstdint>, <iterator> and <limits>: the unit test includes it
// alone.
#ifndef WEFT_COLL_SM_LEARN_H
#define WEFT_COLL_SM_LEARN_H

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>

namespace weft::coll::sm {

enum Way : uint8_t { kSlots = 0, kBelow = 1, kSingle = 2 };
constexpr unsigned kMaxWays = 3;

struct Learner {
    static constexpr unsigned kRun = 5, kPasses = 2;
    static constexpr uint32_t kFirstGap = 64; // calls from the first choice to the next round

    uint32_t since = 0;      // calls since the last choice
    uint8_t ways = 2;        // compared: kSlots and kBelow, and kSingle when 3
    uint8_t calls = 0;       // calls taken in the current round
    uint8_t rounds = 0;      // rounds finished (at most 255)
    int8_t way = -1;         // the way chosen, -1 before the first choice
    bool in_round = true;    // comparing the ways
    bool fixed = false;      // one way only from now on (nothing below provides the operation)
    bool run_failed = false; // a call of the current run failed: the run is not counted
    double run_start = 0;    // the end of the current run's first call (us, any clock)
    float best[kMaxWays] = {std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::infinity()}; // us a call, this rank's

    explicit Learner(unsigned n = 2) : ways(uint8_t(std::clamp(n, 2u, kMaxWays))) {}

    // Calls of a round before the ranks share their times.
    unsigned round_calls() const { return ways * kRun * kPasses; }
    // The way of round call number `call` (< round_calls()), and its place in its run.
    Way scheduled(unsigned call) const
    {
        const unsigned pass = call / (ways * kRun), run = call % (ways * kRun) / kRun;
        return Way(pass % 2 ? ways - 1 - run : run);
    }
    static unsigned place(unsigned call) { return call % kRun; }
    // Calls between a choice and the next round, after `rounds` rounds (at least one).
    static uint32_t gap(unsigned rounds) { return kFirstGap << std::min(2u * (rounds - 1), 24u); }

    // Before each call: a round begins when it is due.
    void begin_call()
    {
        if (!in_round && !fixed && since >= gap(rounds)) {
            in_round = true;
            calls = 0;
            std::fill(std::begin(best), std::end(best), std::numeric_limits<float>::infinity());
        }
    }
    // Whether this call is the one at which the ranks share their times and choose (chose).
    bool choosing() const { return in_round && calls >= round_calls(); }
    // The way of this call (after begin_call, and chose when choosing).
    Way next() const { return in_round ? scheduled(calls) : Way(way); }
    // The choice from the ranks' summed times (sums[w] for each of the ways): the least; a tie
    // goes to the lower way (the slots first); a way never timed is infinitely slow.
    Way decide(const double *sums) const
    {
        unsigned best_way = kSlots;
        for (unsigned w = 1; w < ways; ++w)
            if (sums[w] < sums[best_way])
                best_way = w;
        return Way(best_way);
    }
    void chose(Way w)
    {
        way = int8_t(w);
        in_round = false;
        since = 0;
        if (rounds < 255)
            ++rounds;
    }
    // This call done, at time `end` (us, any clock; ok: it succeeded).
    void took(double end, bool ok = true)
    {
        if (!in_round) {
            ++since;
            return;
        }
        const unsigned at = place(calls);
        if (at == 0) {
            run_start = end;
            run_failed = !ok;
        } else {
            run_failed |= !ok;
            if (at == kRun - 1 && !run_failed) {
                const Way w = scheduled(calls);
                const float per = float((end - run_start) / (kRun - 1));
                if (per < best[w])
                    best[w] = per;
            }
        }
        ++calls;
    }
    // Nothing below provides the operation: the slots for good.
    void slots_only()
    {
        way = int8_t(kSlots);
        in_round = false;
        fixed = true;
    }
};

} // namespace weft::coll::sm

#endif
