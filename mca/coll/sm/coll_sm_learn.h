// coll/sm: which way a large operation takes, its large slots or the modules below coll/sm
// (coll/basic's point-to-point algorithms over the PML), learnt on the host the job runs on.
// Which is faster depends on the host and the ranks: where the PML moves a large message
// with one copy (a get), two ranks gain by it over the slots' copy in and copy out; with more
// ranks than cores the slots' single arrival may win. A Learner serves one operation and one
// size class (sizes from 2^(k-1) to 2^k - 1) on one communicator. All its ranks run the same
// calls of an operation and size class in the same order (collectives are called so, and the
// class depends on what every rank passes alike), so each call's way is the same at every rank
// without a word between them. The ways are compared in rounds of kRound calls:
//   - first kWarm calls each way, alternately, not timed (the slots' pages are touched for the
//     first time, the PML's rendezvous settle on their own ways);
//   - then kTimed calls each way, in the order below, slots, slots, below, ... (each way after
//     each as often), each rank keeping its least time per way (the least: a noisy neighbour
//     only adds);
//   - at the next call the ranks share their times through the small slots, and every rank
//     takes the way whose times, averaged over the ranks, are less.
// A round runs at the first calls, then again kFirstGap calls after that choice, and after
// four times as many calls each time (32, 128, 512, ...): the PML's own choices for a size take
// some tens of messages to settle (a first round has seen the point-to-point way at its
// slowest), and what is faster may change; the rounds cost less and less (a round's calls of
// the slower way, 6 in 32 calls after the first, 6 in 2048 after the fourth).
// No header beyond <algorithm>, <cstdint> and <limits>: the unit test includes it alone.
#ifndef WEFT_COLL_SM_LEARN_H
#define WEFT_COLL_SM_LEARN_H

#include <algorithm>
#include <cstdint>
#include <limits>

namespace weft::coll::sm {

enum Way : uint8_t { kSlots = 0, kBelow = 1 };

struct Learner {
    static constexpr unsigned kWarm = 2, kTimed = 4;
    // Calls of a round before the ranks share their times.
    static constexpr unsigned kRound = 2 * (kWarm + kTimed);
    static constexpr uint32_t kFirstGap = 32; // calls from the first choice to the next round

    uint32_t since = 0;   // calls since the last choice
    uint8_t calls = 0;    // calls taken in the current round
    uint8_t rounds = 0;   // rounds finished (at most 255)
    int8_t way = -1;      // the way chosen (kSlots or kBelow), -1 before the first choice
    bool in_round = true; // comparing the ways
    bool fixed = false;   // one way only from now on (nothing below provides the operation)
    float least[2] = {std::numeric_limits<float>::infinity(),
                      std::numeric_limits<float>::infinity()}; // this rank's, per way, in us

    // The way of round call number `call` (< kRound), and whether it is timed.
    static Way scheduled(unsigned call)
    {
        if (call < 2 * kWarm)
            return call % 2 ? kBelow : kSlots;
        const unsigned i = call - 2 * kWarm;
        return (i + 1) / 2 % 2 ? kSlots : kBelow;
    }
    static bool timed(unsigned call) { return call >= 2 * kWarm; }
    // Calls between a choice and the next round, after `rounds` rounds (at least one).
    static uint32_t gap(unsigned rounds) { return kFirstGap << std::min(2u * (rounds - 1), 24u); }

    // Before each call: a round begins when it is due.
    void begin_call()
    {
        if (!in_round && !fixed && since >= gap(rounds)) {
            in_round = true;
            calls = 0;
            least[kSlots] = least[kBelow] = std::numeric_limits<float>::infinity();
        }
    }
    // Whether this call is the one at which the ranks share their times and choose (chose).
    bool choosing() const { return in_round && calls >= kRound; }
    // The way of this call (after begin_call, and chose when choosing).
    Way next() const { return in_round ? scheduled(calls) : Way(way); }
    // The choice from the ranks' summed least times: the modules below only where they are
    // faster (a way that was never timed counts as infinitely slow; a tie keeps the slots).
    static Way decide(double slots_sum, double below_sum)
    {
        return below_sum < slots_sum ? kBelow : kSlots;
    }
    void chose(Way w)
    {
        way = int8_t(w);
        in_round = false;
        since = 0;
        if (rounds < 255)
            ++rounds;
    }
    // This call done, in `us` microseconds (negative: it failed, not timed).
    void took(double us)
    {
        if (!in_round) {
            ++since;
            return;
        }
        const Way w = scheduled(calls);
        if (timed(calls) && us >= 0 && float(us) < least[w])
            least[w] = float(us);
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
