// Unit tests of bfo's FIN (pml_bfo_failover.h; the seed's section 7): a FIN carries its
// message's match header, the piece it finishes and the attempt. The receiving side takes a
// FIN once, for its own message and its current attempt, and drops a copy, a FIN of another
// message (another sequence number, tag, source or communicator) and a FIN of an earlier
// attempt or of a request that is restarting.
// The standard headers before <check.h>, which defines a macro named fail.
#include <cstdint>
#include <vector>

#include <pml/bfo/pml_bfo_failover.h>

#include "check_util.h"

namespace {

using weft::pml::bfo::BfoFin;
using weft::pml::bfo::Failover;
using weft::pml::engine::MatchHdr;

// What the policy's FIN functions see of the engine: its request type.
struct E {
    struct Req {
        Failover::RequestExtra extra;
    };
};

MatchHdr header(uint16_t seq)
{
    MatchHdr m{};
    m.type = weft::pml::engine::hdr_rndv;
    m.seq = seq;
    m.cid = 7;
    m.src = 3;
    m.tag = 42;
    return m;
}

// The FIN the other side sends for its request `from` and the piece at `offset`.
BfoFin fin_of(const E::Req &from, uint64_t offset)
{
    BfoFin fin{};
    fin.type = weft::pml::engine::hdr_fin;
    fin.length = 4096;
    Failover::fill_fin<E>(fin, &from, offset);
    return fin;
}

START_TEST(test_fin_once_for_its_message)
{
    E::Req sender, receiver;
    Failover::rndv_match<E>(&sender, header(9));
    Failover::rndv_match<E>(&receiver, header(9));
    const BfoFin fin = fin_of(sender, 0);
    ck_assert_uint_eq(fin.match.seq, 9);
    ck_assert_int_eq(fin.match.tag, 42);
    ck_assert(Failover::accept_fin<E>(&receiver, fin));
    // The same FIN again (its first completed in error, yet arrived): a copy, dropped.
    ck_assert(!Failover::accept_fin<E>(&receiver, fin));
    // The next piece's FIN is taken.
    ck_assert(Failover::accept_fin<E>(&receiver, fin_of(sender, 65536)));
}
END_TEST

START_TEST(test_fin_of_another_message)
{
    E::Req receiver;
    Failover::rndv_match<E>(&receiver, header(9));
    for (int field = 0; field < 4; ++field) {
        E::Req other;
        MatchHdr m = header(9);
        switch (field) {
        case 0: m.seq = 10; break;
        case 1: m.tag = 43; break;
        case 2: m.src = 4; break;
        default: m.cid = 8; break;
        }
        Failover::rndv_match<E>(&other, m);
        ck_assert_msg(!Failover::accept_fin<E>(&receiver, fin_of(other, 0)),
                      "a FIN of another message (field %d differs) was taken", field);
    }
    // Nothing of those counted as this message's piece 0: its own FIN is still taken.
    E::Req sender;
    Failover::rndv_match<E>(&sender, header(9));
    ck_assert(Failover::accept_fin<E>(&receiver, fin_of(sender, 0)));
}
END_TEST

START_TEST(test_fin_of_another_attempt)
{
    E::Req sender, receiver;
    Failover::rndv_match<E>(&sender, header(9));
    Failover::rndv_match<E>(&receiver, header(9));
    const BfoFin first = fin_of(sender, 0);
    // The message restarts as attempt 1: a FIN of attempt 0 is late.
    sender.extra.attempt = receiver.extra.attempt = 1;
    ck_assert(!Failover::accept_fin<E>(&receiver, first));
    // While a send restarts, no FIN is taken, not even one of the current attempt.
    receiver.extra.restarting = true;
    ck_assert(!Failover::accept_fin<E>(&receiver, fin_of(sender, 0)));
    receiver.extra.restarting = false;
    ck_assert(Failover::accept_fin<E>(&receiver, fin_of(sender, 0)));
}
END_TEST

} // namespace

int main()
{
    Suite *s = suite_create("pml_bfo_fin");
    TCase *tc = tcase_create("fin");
    tcase_add_test(tc, test_fin_once_for_its_message);
    tcase_add_test(tc, test_fin_of_another_message);
    tcase_add_test(tc, test_fin_of_another_attempt);
    suite_add_tcase(s, tc);
    return weft::test::run_suite(s);
}
