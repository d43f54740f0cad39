// Tests for btl/sm's claim_range (mca/btl/sm/btl_sm_segment.h): which ring lines a sender asks
// for ahead of writing them. A wrong range costs no data, only time, so these check the
// properties that keep it cheap: never the line where the receiver waits for the next stamp,
// never a slot the receiver has not consumed, every line of a stream asked for before it is
// written and about once, and rarely for a ping-pong of one-slot messages.
#include "check_util.h"

#include <btl_sm_segment.h>

#include <random>
#include <vector>

using weft::btl::sm::claim_range;
using weft::btl::sm::ClaimRange;
using weft::btl::sm::kClaimMaxSlots;
using weft::btl::sm::kClaimMinSlots;
using weft::btl::sm::kLineSlots;

namespace {

constexpr uint64_t kRing = 4096; // slots: btl_sm_ring_size 128k

// A sender that writes messages of the given sizes with the receiver keeping up (head at the
// tail before each message, as the sender last saw it), asking as publish() does. Counts the
// lines asked for, the lines written that had not been asked for, and the askings.
struct Stream {
    uint64_t tail = 0, claimed = 0;
    std::vector<uint64_t> asked_at; // per line: how many times asked
    uint64_t unasked_writes = 0, asks = 0, lines_asked = 0;

    Stream() : asked_at(1 << 16, 0) {}
    void send(uint64_t nslots, uint64_t head)
    {
        // The lines this message writes: was each asked for (earlier)?
        for (uint64_t line = tail / kLineSlots; line <= (tail + nslots - 1) / kLineSlots; ++line)
            if (!asked_at[line])
                ++unasked_writes;
        tail += nslots;
        const ClaimRange r = claim_range(tail, claimed, head, kRing, nslots);
        if (r.to > r.from) {
            ++asks;
            for (uint64_t i = r.from; i < r.to; i += kLineSlots) {
                ++asked_at[i / kLineSlots];
                ++lines_asked;
            }
            claimed = r.to;
        }
    }
};

START_TEST(test_never_the_tail_line_nor_unconsumed)
{
    std::mt19937_64 rng(7);
    for (int k = 0; k < 200000; ++k) {
        const uint64_t tail = rng() % (1u << 20);
        const uint64_t head = tail - rng() % (kRing + 1); // 0..kRing slots in use
        const uint64_t claimed = tail - 64 + rng() % 256; // behind or ahead of the tail
        const uint64_t nslots = 1 + rng() % 300;
        const ClaimRange r = claim_range(tail, claimed, head, kRing, nslots);
        if (r.to <= r.from)
            continue;
        // On a line's start, past the line holding the tail.
        ck_assert_uint_eq(r.from % kLineSlots, 0);
        ck_assert_uint_eq(r.to % kLineSlots, 0);
        ck_assert_uint_gt(r.from / kLineSlots, tail / kLineSlots);
        // Only consumed slots, and not more than a message's worth ahead.
        ck_assert_uint_le(r.to, head + kRing);
        ck_assert_uint_le(r.to, tail + kClaimMaxSlots + 2 * kLineSlots);
    }
}
END_TEST

START_TEST(test_a_full_ring_asks_for_nothing)
{
    // The receiver has not consumed anything of the next lap: nothing may be asked for.
    for (uint64_t nslots : {1u, 2u, 33u, 128u}) {
        const ClaimRange r = claim_range(kRing * 3, kRing * 3, kRing * 2, kRing, nslots);
        ck_assert_uint_le(r.to, r.from);
    }
}
END_TEST

START_TEST(test_stream_lines_asked_before_written)
{
    // Streams of one size each: after the first message every line written was asked for, and
    // each line about once.
    for (uint64_t nslots : {1u, 2u, 3u, 9u, 33u, 65u, 128u}) {
        Stream s;
        const int messages = int(20000 / nslots);
        for (int i = 0; i < messages; ++i)
            s.send(nslots, s.tail);
        const uint64_t lines = (s.tail + kLineSlots - 1) / kLineSlots;
        // The first message's lines, and at most a line per message where a message ends
        // mid-line (its first line is the one the last asking skipped).
        ck_assert_msg(s.unasked_writes <= (nslots + 2 * kLineSlots) / kLineSlots + 1,
                      "%llu-slot messages: %llu of %llu lines written unasked",
                      (unsigned long long)nslots, (unsigned long long)s.unasked_writes,
                      (unsigned long long)lines);
        ck_assert_msg(s.lines_asked <= lines + kClaimMaxSlots / kLineSlots + 2,
                      "%llu-slot messages: %llu lines asked for %llu written",
                      (unsigned long long)nslots, (unsigned long long)s.lines_asked,
                      (unsigned long long)lines);
    }
}
END_TEST

START_TEST(test_small_messages_ask_in_steps)
{
    // One-slot messages (a ping-pong of small ones): an asking per kClaimMinSlots messages,
    // not per message.
    Stream s;
    for (int i = 0; i < 10000; ++i)
        s.send(1, s.tail);
    ck_assert_uint_le(s.asks, 10000 / kClaimMinSlots + 2);
    ck_assert_uint_ge(s.asks, 10000 / kClaimMinSlots - 2);
    // Messages of a line or more ask after each message that leaves new lines to ask for.
    Stream big;
    for (int i = 0; i < 1000; ++i)
        big.send(2, big.tail);
    ck_assert_uint_ge(big.asks, 990);
}
END_TEST

START_TEST(test_mixed_sizes_never_the_tail_line)
{
    // A stream of random sizes, the receiver lagging by a random amount: the properties hold
    // at every message, and the claimed mark never passes what may be asked for.
    std::mt19937_64 rng(11);
    uint64_t tail = 0, claimed = 0, head = 0;
    for (int k = 0; k < 100000; ++k) {
        const uint64_t nslots = 1 + rng() % 140;
        // Room as reserve() makes it: the receiver consumes until the message fits.
        while (tail + nslots - head > kRing)
            head += 1 + rng() % 64;
        if (head > tail)
            head = tail;
        tail += nslots;
        const uint64_t seen = head - std::min<uint64_t>(head, rng() % 64); // a stale head
        const ClaimRange r = claim_range(tail, claimed, seen, kRing, nslots);
        if (r.to > r.from) {
            ck_assert_uint_gt(r.from / kLineSlots, tail / kLineSlots);
            ck_assert_uint_le(r.to, seen + kRing);
            claimed = r.to;
        }
        head += rng() % 2 ? nslots : 0;
        if (head > tail)
            head = tail;
    }
}
END_TEST

} // namespace

int main()
{
    Suite *s = suite_create("btl_sm_claim");
    TCase *tc = tcase_create("claim");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_never_the_tail_line_nor_unconsumed);
    tcase_add_test(tc, test_a_full_ring_asks_for_nothing);
    tcase_add_test(tc, test_stream_lines_asked_before_written);
    tcase_add_test(tc, test_small_messages_ask_in_steps);
    tcase_add_test(tc, test_mixed_sizes_never_the_tail_line);
    suite_add_tcase(s, tc);
    return weft::test::run_suite(s);
}
