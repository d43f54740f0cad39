// pml/engine: the receiver's choice of how a rendezvous message moves, over a BTL that asks for
// it (WEFT_BTL_FLAG_RECEIVER_CHOOSES: btl/sm with its single-copy mechanism on auto).
//
// Which way is fastest between two processes of one host is not a property of the host alone:
// on a virtual machine it changes with where the hypervisor runs the two vCPUs (sharing caches
// or not), while a job runs, and a measurement kept from an earlier moment is then wrong by 2x
// (docs/performance.md). So the receiver measures the messages themselves and keeps choosing:
// the sender offers a get for the rendezvous messages the receiver may want to take one for
// (offer(): at first, then those it asks for), and for each one the receiver reads it alone
// (get), reads it with the sender writing part of it (shared), or asks for the send/receive
// pipeline (pipeline); the others come as RNDVs, the pipeline's. Per size class (a power of two)
// and per case it keeps an estimate of each way's time per byte:
//   - a message alone (no other rendezvous from the peer under way or just ended): the time
//     from the choice to its last byte, each way in its own caches: a message that follows
//     another way's chosen message is not measured (a get after pipeline messages finds the
//     sender's data in the sender's cache, not the receiver's, and took twice its time in a
//     row on a Zen 5 VM). Each way is tried kFirstSamples times first (one more try each, for
//     that), the BTL's advice (its size bounds) first; then the way with the best estimate,
//     except on turns to explore, when another way goes twice in a row, so that an estimate
//     that went stale is measured again. The turns cost at most kAloneBudget of the time,
//     each way's as its share allows (a way far slower than the best comes rarely); the
//     receiver asks the sender to offer the messages its turns need (asking_next). The
//     pipeline's messages that come with no offer (RNDVs, most of them while it is the best)
//     are timed too, one in kTimeEvery, from their match (time_unoffered);
//   - a message exchanged: this process sends the peer a rendezvous message of its own
//     meanwhile (the pairwise exchanges of collectives, halo swaps). The ways then differ in
//     whose core does the work: a get takes the receiver's, the pipeline and the shared get
//     take the peer's too, which is busy with the other direction. A receiver timing only its
//     own message learns to hand its work to the peer (at 1 MiB on a 2-core EPYC both
//     receivers learned the shared get, and the exchange took 20% longer than by gets).
//     So an exchanged message is timed to the end of the exchange (this process's own send
//     over too: the pair's time, the same for both), with estimates of its own, between the
//     get and the pipeline (the shared get is the other's core by design); chosen as a
//     message alone is, from them;
//   - a message of a stream: messages overlap and their ends come in batches, so a message's
//     own time says little. The stream goes in runs, each run one way; a measured run starts
//     when nothing of the peer's is under way and the next run waits for its end, so that its
//     time is its own (pick_stream has the schedule). In a stream the sender offers gets only
//     while the receiver asks for them (its answers say so: asking(), told()): for the runs of
//     a get or a shared get. Its other messages come as RNDVs, which take the runs of the
//     pipeline (either stores: the receiver's ACK says which), with no offer to make and no
//     registration. An offer the receiver declines costs both sides about 0.1 us (a choice,
//     clock readings, a registration), and a sender that has sent a window of messages hears
//     the answers only after it: offers that followed the declines would come a window at a
//     time;
//   - an estimate moves a quarter of the way towards each new time, and a time more than
//     twice or less than half the estimate counts as twice or half of it: a message that met
//     a busy neighbour does not turn the choice, a lasting change does within a few messages;
//   - what the BTL measured before the job (btl_way_rate: sm's calibration, per host and boot)
//     is where a class starts, alone and in a stream (prime()): a way it found kClearMargin
//     slower than its best is not tried first, only measured on turns to explore, costed from
//     that rate (first tries of every way took 5% of a 512 KiB stream's time on a Zen 5 VM,
//     and one start in eight, measuring the pipeline in cold pages, kept a way 2x slower for
//     most of the run). Where the rates are wrong (the host changed since: a VM's vCPUs moved
//     apart), alone, the best way measures slower than its rate and they are dropped (prior_of);
//     in a stream the turns find it, within their budget (a stream's measured runs of small
//     messages take 5x the calibrated time anyway: no telling).
// No state is shared between processes: each receiver learns for itself.
#ifndef WEFT_PML_ENGINE_CHOOSE_H
#define WEFT_PML_ENGINE_CHOOSE_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace weft::pml::engine {

// streamed: the pipeline with its fragments written with streaming stores (a BTL with
// WEFT_BTL_FLAG_STORES_CHOICE), which on some hosts and moments is 2.5x faster than with
// cached ones, and on others 2.5x slower.
enum class Way : uint8_t { pipeline = 0, get = 1, shared = 2, streamed = 3 };
// What else moves between the two processes when a message is chosen (see above).
enum class Case : uint8_t { alone = 0, stream = 1, exchange = 2 };
inline constexpr size_t kWays = 4;
inline constexpr unsigned way_bit(Way w) { return 1u << unsigned(w); }
inline const char *way_name(Way w)
{
    return w == Way::pipeline ? "pipeline"
           : w == Way::get    ? "get"
           : w == Way::shared ? "shared get"
                              : "pipeline with streaming stores";
}
inline const char *case_name(Case c)
{
    return c == Case::stream ? "in a stream" : c == Case::exchange ? "exchanged" : "alone";
}

class Chooser {
  public:
    // The BTL's measurement of a way for messages of `bytes` (bytes per second; 0: none).
    using RateFn = double (*)(const void *ctx, size_t bytes, bool stream, Way w);
    static constexpr uint32_t kFirstSamples = 2; // each way measured this often first
    // Alone: turns to explore at least this many messages apart. A way close to the best
    // costs its turn little by its estimates, but a change of way disturbs the caches of the
    // messages around it too (4 KiB ping-pongs on a Zen 5 VM, cached and streaming stores
    // within 10% of each other: turns every 32 messages cost 3% of the time).
    static constexpr uint32_t kTurnEvery = 256;
    // Alone: but for large messages, whose caches a turn hardly disturbs, at least this many
    // bytes apart (turn_every(): 64 messages of 4 MiB, 16 of 16 MiB), so that a wrong first
    // measurement does not hold for minutes. Found at 4 MiB on a Xeon VM: one receiver measured
    // the shared get 375 us in its first tries (warm-up), the pipeline 362, kept the pipeline,
    // and in the benchmark's 377 messages never had a turn, where its peer's receiver, taking
    // the shared get, measured 251; the ping-pong took 311 us against 270 with the shared get
    // forced.
    static constexpr uint64_t kTurnBytes = uint64_t(256) << 20;
    static constexpr uint32_t kTurnLeast = 8;
    static constexpr uint32_t turn_every(size_t k)
    {
        return uint32_t(std::clamp<uint64_t>(k < 64 ? kTurnBytes >> k : 0, kTurnLeast, kTurnEvery));
    }
    // Alone: one RNDV in this many is timed as the pipeline's (time_unoffered()). A timed one
    // reads the clock twice (costly on a VM) and plans again (plan()): a 4 KiB ping-pong on a
    // Zen 5 VM took 1.040 of the pipeline forced's time timing one in 16, 1.007 one in 64.
    static constexpr uint32_t kTimeEvery = 64;
    // Alone: in the steady state, one message of the best way in this many is measured
    // (Ticket::untimed). In a 64 KiB ping-pong of gets on a Xeon VM, a message's end took
    // 91-97 ns with its measurement (a clock read and done()) against 49-68 without the
    // receiver's choice; grids after the change stayed within their noise (32 KiB 1.076 of the
    // get forced's time, 1.081 before). Few enough that a lasting change of the host is still
    // followed within some tens of messages.
    static constexpr uint32_t kMeasureBestEvery = 8;
    static constexpr uint32_t kEpoch = 8;      // stream: messages of a measured run
    static constexpr uint32_t kRunLength = 32; // stream: messages of any other run, at least
    // Stream: and at least this many bytes. A run's end costs a choice (pick_stream, the ways'
    // estimates gone through: about 500 instructions); in runs of 32 messages, 15 of the 130
    // more a message that an 8 KiB stream's receiver ran than with the pipeline forced
    // (cachegrind). The turns to measure come after kMeasureEvery runs and kTurnGapNs, which
    // at small sizes is the later of the two anyway.
    static constexpr double kRunBytes = 2.0 * 1024 * 1024;
    static constexpr uint32_t kMeasureEvery = 8; // stream: one measured run in this many
    // Stream: a way this much slower than the best is measured again kRareFactor times less
    // often than the ways close to it (a run of a way r times slower costs r - 1 runs' time).
    // Both: a way's first tries stop at one if its first measurement is this much slower.
    static constexpr double kClearMargin = 1.5;
    static constexpr uint32_t kRareFactor = 4;
    // Alone: measuring the other ways again may cost this share of the messages' time (at the
    // best's estimate), split evenly between them. A turn measures a way twice in a row (the
    // first in the other way's caches) and costs about twice the difference to the best; a
    // way's turn comes when its share covers that, so with k other ways one r times slower
    // than the best comes once in 2 k (r - 1) / kAloneBudget messages (k = 3, a get 3x slower
    // than the pipeline: once in 2400), one close to it at most every turn_every() messages.
    static constexpr double kAloneBudget = 0.005;
    // A measured run whose stream stopped for longer than this many times its messages' mean
    // time (a sender that waits between windows of messages) is not measured: the wait is
    // not the way's.
    static constexpr uint64_t kGapFactor = 4;
    // Stream: measuring turns at least this far apart (ns). A turn costs a drain of the stream
    // (about one message's latency: 12 us at 512 KiB) and a run of a way that may be several
    // times slower: every kMeasureEvery runs of kRunLength small messages (4 KiB: 1 MiB of
    // data, 60 us at 16 GB/s) that cost a stream about 10%, every 2 ms 0.3-0.6%, every 8 ms
    // 0.1-0.2%. A level change of a VM's vCPUs lasts seconds to minutes.
    static constexpr uint64_t kTurnGapNs = 8000000;
    // And each way's turns far enough apart that their runs cost the stream at most this share
    // of its time, split between the ways other than the best: a run of kEpoch messages of a
    // way r times slower costs (r - 1) * kEpoch messages' time (1 MiB, a get 3x slower than the
    // pipeline, two other ways: 0.6 ms, so one every 240 ms). At 2% (one budget for all, from
    // the last turn of any way) a 512 KiB stream of 7000 messages on a Zen 5 VM ran 4-5% below
    // the pipeline forced.
    static constexpr double kTurnBudget = 0.005;
    // Stream: messages a run that needs offers waits for one (several windows of a sender
    // that hears the answers a window late) before it is given up.
    static constexpr uint32_t kOfferWait = 512;
    // The pipeline's streaming stores are taken for its cached ones only when measured this much
    // faster. Where the two are as fast (small messages, whose runs measure mostly latency),
    // the estimates cross back and forth on noise; and there cached stores are the right ones
    // whenever the receiver reads the data at once (streaming ones send it to memory first).
    static constexpr double kStoresMargin = 1.1;
    // In a stream, this much: a measured run of small messages after a drain measures their
    // latency more than the stream's pace (at 32 KiB, 5x the calibration's stream time), and
    // there streaming stores measured as fast as cached ones took two thirds of a stream
    // that the calibration had them 3.7x slower in (0.93 of the cached pipeline's bandwidth).
    static constexpr double kStreamStoresMargin = kClearMargin;
    static constexpr uint32_t kDeclines = kFirstSamples * kEpoch; // offer(): declined in a row
    static constexpr size_t kClasses = 64;

    // Where each size class starts (alone and in a stream): the BTL's rates, read on its first
    // message (prime()). Before any pick.
    void rates(RateFn fn, const void *ctx)
    {
        rate_fn_ = fn;
        rate_ctx_ = ctx;
    }

    // Why pick() chose what it did, for the protocol trace.
    enum class Reason : uint8_t { advice, first, best, explore };

    // What pick() chose, to give back to done(). wait: nothing chosen yet; ask again once
    // the peer's messages under way are over (a measured run must run alone).
    // Eight bytes, passed by value in a register. (A ticket built field by field on the stack
    // and copied with wider loads stalled each stream RNDV on store forwarding: rndv_go, 70% of
    // its samples on one load, on a Zen 5 VM. The cheap path hands over only a way.)
    struct Ticket {
        Way way = Way::pipeline;
        bool wait = false;
        bool warm : 1 = true;     // alone: the class's message before it went the same way
        bool explore : 1 = false; // alone: a turn to explore's or the next (charged())
        bool untimed : 1 =
            false;        // alone: not measured (no clock read at its end; done() ignores it)
        uint32_t run = 0; // stream: the measured run it belongs to (0: none)
    };
    static_assert(sizeof(Ticket) == 8);

    // The way for a message of `bytes`; `allowed` has a bit per way (way_bit), `advice` is the
    // BTL's (allowed); `active`: the peer's rendezvous messages under way; now_ns: the time.
    // In a stream, `possible` is the ways this message can take (an RNDV: the pipeline's), the
    // others being allowed for the stream's runs (they need an offer); elsewhere it must hold
    // every allowed way.
    Ticket pick(size_t bytes, Case c, Way advice, unsigned allowed, uint32_t active,
                uint64_t now_ns, Reason *why = nullptr, unsigned possible = ~0u)
    {
        Reason r = Reason::best;
        Ticket t;
        if (c == Case::stream) {
            Stream &st = streams_[class_of(bytes)];
            if (const auto on = run_on(st, possible & allowed))
                t = Ticket{*on};
            else {
                prime(st.prior, st.primed, bytes, true);
                t = pick_stream(st, double(bytes), advice, allowed, possible & allowed, active,
                                now_ns, &r);
            }
        } else {
            const bool ex = c == Case::exchange && (allowed & ~way_bit(Way::shared));
            Alone &a = ex ? exchange_[class_of(bytes)] : alone_[class_of(bytes)];
            if (!ex) // (the BTL measured no exchanges)
                prime(a.prior, a.primed, bytes, false);
            bool steady = false;
            t.way = pick_alone(a, advice, ex ? allowed & ~way_bit(Way::shared) : allowed, &r,
                               &steady, turn_every(class_of(bytes)));
            t.warm = follows(a, t.way);
            t.explore = charged(a, r);
            if (!steady)
                plan(a);
            else // the steady state's best: one message in kMeasureBestEvery measured
                t.untimed = ++a.untimed % kMeasureBestEvery != 0;
            refresh(class_of(bytes), ex);
        }
        if (why)
            *why = r;
        if (!t.wait)
            count(c, class_of(bytes), t.way);
        return t;
    }

    // Stream: the next message of `bytes` when it goes on with a run under way that is not
    // measured and whose way it can take (`possible`): its way (pick() would give it a ticket
    // of that way and nothing else); else none (pick() decides). The cheap path of a stream's
    // RNDVs.
    std::optional<Way> next_in_run(size_t bytes, unsigned possible)
    {
        const size_t k = class_of(bytes);
        const auto w = run_on(streams_[k], possible);
        if (w)
            count(Case::stream, k, *w);
        return w;
    }

    // The message of `bytes` that pick() gave t is over (ok: it arrived whole, and its time
    // measures its way: else it measures nothing, and costs a turn's budget nothing); now_ns
    // is the time, service_ns how long it took since it was chosen. Returns the seconds per byte it
    // measured (a message alone, or the last message of a measured run), else 0.
    double done(size_t bytes, Case cs, Ticket t, bool ok, uint64_t now_ns, uint64_t service_ns)
    {
        if (t.untimed)
            return 0;
        if (cs != Case::stream) {
            const size_t k = class_of(bytes);
            const bool ex = cs == Case::exchange;
            Alone &c = ex ? exchange_[k] : alone_[k];
            const double per = per_byte(service_ns, bytes);
            if (t.explore && ok) { // what it cost over the best, as it came: from the budget
                double best_est = 0;
                best_of(c.est, c.n, c.allowed, Way::pipeline, &best_est);
                c.budget[c.explore_next] -= std::max(per - best_est, 0.0); // the turn's way
            }
            const bool measured = ok && t.warm; // (a first message after another way's is
            if (measured)                       // measured in its caches)
                update(c.est[size_t(t.way)], c.n[size_t(t.way)], per);
            // The best measured again and still the best: what plan() gives is the same but
            // for ready_at, which moves with the best's estimate by a little and is made again
            // at the next full pick (pick_alone).
            // (And the BTL's rates still hold or not, as they did: prior_of.)
            double unused = 0;
            if (!(c.steady && !t.explore && t.way == c.best_way &&
                  best_of(c.est, c.n, c.allowed, Way::pipeline, &unused) == t.way &&
                  (prior_of(c, t.way, c.est[size_t(t.way)]) != nullptr) == c.rates_hold))
                plan(c);
            refresh(k, ex);
            refresh_stores(k);
            return measured ? per : 0;
        }
        if (t.run == 0)
            return 0;
        Stream &st = streams_[class_of(bytes)];
        if (st.run != t.run || !st.measuring)
            return 0;
        st.run_ok = st.run_ok && ok;
        st.run_bytes += double(bytes);
        st.run_last = now_ns;
        if (++st.run_done < kEpoch)
            return 0;
        // The run ran alone: from its first choice to its last byte.
        st.measuring = false;
        if (!st.run_ok || now_ns <= st.run_start)
            return 0;
        const double per = double(now_ns - st.run_start) * 1e-9 / st.run_bytes;
        update(st.est[size_t(st.way)], st.n[size_t(st.way)], per);
        refresh_stores(class_of(bytes));
        return per;
    }

    // Whether a sender in this process should offer a get for a message of `bytes` (else it
    // sends a RNDV, which costs less when the pipeline runs anyway: no registration, no
    // choice). In a stream: while the peer's receiver asks for offers for that size (told();
    // at first it does, trying each way), at most kEpoch + 1 after its last answer: a sender
    // that posts a window of messages hears the answers a window late, and a receiver that
    // asked for a run of kEpoch gets declined the rest of a window of offers (686 of a 32 KiB
    // stream's 36000 messages offered, 37 taken, on a Zen 5 VM). Alone: when the peer's receiver
    // asked for this one (its turn to explore, its first tries, or a get its best: asking_next),
    // and until it declined kDeclines gets offered for that size (it asked for the pipeline:
    // taken(); it may be trying each way meanwhile). Nothing more: the receiver asks for what
    // its turns need and times the pipeline on RNDVs (time_unoffered), and an offer it declines
    // costs both sides (a sender offering one message in 32 besides took a 4 KiB ping-pong 1.07x
    // the pipeline forced's time on a Zen 5 VM, 1.0x without).
    bool offer(size_t bytes, bool stream)
    {
        const size_t k = class_of(bytes);
        if (stream) {
            uint32_t &left = streams_[k].offers_left;
            if (left == 0)
                return false;
            --left;
            return true;
        }
        Stream &st = streams_[k];
        if (st.wanted) { // the peer's receiver asked for this one
            st.wanted = false;
            return true;
        }
        return st.declines <= kDeclines;
    }

    // Receiver: whether it asks the sender to offer gets for messages of `bytes` in a stream
    // (its answers carry this): while a run of a way that needs one is due, or has messages
    // still to take (not once they are all taken: the answers to a run's last messages brought
    // a window of offers after it), or gets' first runs are still to come.
    bool asking(size_t bytes) const { return asks_for(bytes).now; }

    // Receiver: whether it asks the sender to offer a get for the next message of `bytes` that
    // comes alone or exchanged (its answers carry this: AckOffers' offers_next). A sender that
    // heard the pipeline is the fastest offers nothing else (offer()); turns that waited for
    // its offers would come rarely or never, too rarely to follow the host (on a VM, the get
    // overtook the pipeline at 32-128 KiB for minutes while the vCPUs' cross-core latency was
    // 4x its usual). So the receiver asks for the messages of its turns to explore, for those
    // that its first tries of each way need, and for all while its best is a get.
    bool asking_next(size_t bytes) const { return asks_for(bytes).next; } // (asks(): refresh())

    // Receiver: both of the above for an answer about a message of `bytes`, from one look at
    // its class.
    // stream_get, alone_get: the receiver's best way for the class in a stream, alone or
    // exchanged, is a get (told()).
    // next_of: `next` for messages alone (0) and exchanged (1) apart.
    struct Asks {
        bool now, next, stream_get, alone_get;
        bool next_of[2];
    };
    Asks asks_for(size_t bytes) const
    {
        const Stream &st = streams_[class_of(bytes)];
        return {st.want_offer || (!is_pipeline(st.way) && st.left > 0) || st.untried_gets,
                st.asks[0] || st.asks[1],
                st.get_best,
                st.alone_get[0] || st.alone_get[1],
                {st.asks[0], st.asks[1]}};
    }

    // Receiver: a message of `bytes` came alone or exchanged without an offer (a RNDV): it
    // counts towards the class's next turn to explore and its budget (not as a way chosen:
    // a get then a RNDV then a get, the second get is measured; an application that sends
    // some messages of a class non-contiguous gets its gets measured too).
    // Returns time_unoffered()'s answer for it (alone; exchanged, false): one look at the class.
    bool unoffered(size_t bytes, Case c)
    {
        const size_t k = class_of(bytes);
        Alone &a = c == Case::exchange ? exchange_[k] : alone_[k];
        a.due += a.due < UINT32_MAX;
        a.since += a.since < UINT32_MAX;
        a.rndv_warm = a.last_pipeline; // (time_unoffered())
        a.last_pipeline = true;
        const bool ex = c == Case::exchange;
        ++streams_[k].rndvs[ex];
        refresh(k, ex);
        return !ex && timed(a);
    }

    // Receiver: whether to time the RNDV of `bytes` that just came alone (unoffered()): one in
    // kTimeEvery, and only after a message of the pipeline (its own caches). Most of the
    // pipeline's messages come so while it is the best, and they are its steady state: the
    // offered messages a receiver declines were measured at 4.4 us where RNDVs took 9.3 (64
    // KiB, a Zen 5 VM at its slow cross-core level; the get 6-7 us), so with offers alone the
    // pipeline looked the fastest and was not.
    bool time_unoffered(size_t bytes) const { return timed(alone_[class_of(bytes)]); }

    // Receiver: a RNDV timed (time_unoffered()) took service_ns by the pipeline's stores w.
    void unoffered_done(size_t bytes, Way w, uint64_t service_ns)
    {
        Alone &a = alone_[class_of(bytes)];
        update(a.est[size_t(w)], a.n[size_t(w)], per_byte(service_ns, bytes));
        plan(a);
        refresh(class_of(bytes), false);
        refresh_stores(class_of(bytes));
    }

    // Sender: what the peer's receiver answered about messages of `bytes`: whether it asks for
    // offers in streams (want), and for the next message alone or exchanged (next); whether its
    // best way is a get in streams (stream_get: then every message of a stream is offered, not
    // kEpoch + 1 after each answer) and alone or exchanged (alone_get). Where the best is a
    // get, an offer goes without the message's first bytes (first_bytes()).
    void told(size_t bytes, bool want, bool next = false, bool stream_get = false,
              bool alone_get = false)
    {
        Stream &st = streams_[class_of(bytes)];
        st.offers_left = stream_get ? UINT32_MAX : want ? kEpoch + 1 : 0;
        st.wanted = next;
        st.told_get[0] = alone_get;
        st.told_get[1] = stream_get;
    }

    // Sender: whether a get offered for a message of `bytes` (in a stream or not) carries the
    // message's first bytes, as a RNDV would, so that a receiver that declines it pays nothing
    // for the offer. Not where the peer's receiver said its best is a get: the first bytes then
    // go through the pipeline's pool for nothing (an 8 KiB ping-pong took 2.6 us with them
    // against 1.7 without, on a Xeon VM where the get alone takes 1.4).
    bool first_bytes(size_t bytes, bool stream) const
    {
        return !streams_[class_of(bytes)].told_get[stream ? 1 : 0];
    }

    // Receiver: whether pick() for a message of `bytes` in a stream needs the time (it may
    // start a run, or a measured run goes on); else it does not read now_ns.
    bool needs_time(size_t bytes) const
    {
        const Stream &st = streams_[class_of(bytes)];
        return st.left == 0 || st.measuring;
    }

    // The pipeline's stores for a message of `bytes` whose way this process did not choose
    // (a RNDV: no get offered, and no clock read for it): streaming if they measured faster
    // than cached ones for that size, in streams (where RNDVs mostly come) if both were measured
    // there, else alone; *known false if neither case has both measured (the BTL decides: one
    // measured alone says nothing about the other).
    // (Kept in the class's first line by refresh_stores() whenever an estimate changes: read
    // for every RNDV alone, it read the stream's and the alone's estimates each time.)
    bool streamed_pipeline(size_t bytes, bool *known) const
    {
        const Stream &st = streams_[class_of(bytes)];
        *known = st.stores_known;
        return st.stores_streamed;
    }

    static bool is_pipeline(Way w) { return w == Way::pipeline || w == Way::streamed; }

    // What the peer's receiver did with a get this process offered for a message of `bytes`
    // alone: took it (a get), or declined it (the pipeline). A take does not bring the offers
    // back: it may be a turn to explore; a receiver whose best is a get asks for them.
    void taken(size_t bytes, bool took)
    {
        uint32_t &d = streams_[class_of(bytes)].declines;
        d += !took && d <= kDeclines;
    }

    // Seconds per byte (0: not measured yet).
    double estimate(size_t bytes, Case c, Way way) const
    {
        const size_t k = class_of(bytes), w = size_t(way);
        if (c == Case::stream)
            return streams_[k].n[w] ? streams_[k].est[w] : 0;
        const Alone &a = c == Case::exchange ? exchange_[k] : alone_[k];
        return a.n[w] ? a.est[w] : 0;
    }

    // What was chosen and measured, one line per size class and case that saw a message: how
    // many messages took each way and the time its estimate gives a message of the class's
    // lower bound. `line` is called with each (the PML's summary at verbose level).
    template <class Line> void report(Line &&line) const
    {
        for (size_t k = 0; k < kClasses; ++k)
            for (Case c : {Case::alone, Case::exchange, Case::stream}) {
                uint64_t m[kWays];
                for (size_t w = 0; w < kWays; ++w)
                    m[w] =
                        chosen_[size_t(c)][k][w] + (c == Case::stream ? streams_[k].counted[w] : 0);
                const uint64_t rndv =
                    c == Case::stream ? 0 : streams_[k].rndvs[c == Case::exchange];
                if (m[0] + m[1] + m[2] + m[3] + rndv == 0)
                    continue;
                const size_t bytes = size_t(1) << k;
                std::string s = std::to_string(bytes) + " bytes and up, " + case_name(c) + ":";
                const char *sep = " ";
                for (size_t w = 0; w < kWays; ++w) {
                    const double est = estimate(bytes, c, Way(w));
                    if (m[w] == 0 && est == 0)
                        continue;
                    char t[64] = "not measured";
                    if (est > 0)
                        std::snprintf(t, sizeof t, "%.2f us", est * double(bytes) * 1e6);
                    s += sep + std::string(way_name(Way(w))) + " " + std::to_string(m[w]) + " (" +
                         t + ")";
                    sep = ", ";
                }
                if (rndv > 0)
                    s += std::string(*sep == ',' ? "; " : " ") + std::to_string(rndv) +
                         (*sep == ',' ? " more" : "") + " by the pipeline, no get offered";
                line(s);
            }
    }

    // Seconds per byte of a message of `bytes` that took `ns`.
    static double per_byte(uint64_t ns, size_t bytes)
    {
        return double(std::max<uint64_t>(ns, 1)) * 1e-9 / double(std::max<size_t>(bytes, 1));
    }

    static size_t class_of(size_t bytes)
    {
        return bytes == 0 ? 0 : size_t(63 - __builtin_clzll(uint64_t(bytes)));
    }

  private:
    // What a RNDV alone reads and writes (unoffered(), time_unoffered(), asks()), from due to
    // after_turn, in its second cache line.
    struct alignas(64) Alone {
        double est[kWays] = {};
        uint32_t n[kWays] = {};      // times measured
        uint32_t picked[kWays] = {}; // times chosen while trying each way
        uint32_t count = 0;
        uint32_t due = 0;               // messages since the last turn to explore, offered or not
        double budget[kWays] = {};      // seconds per byte each way's turns to explore may cost now
        uint32_t since = 0;             // messages since the shares were last given (settle())
        uint32_t ready_at = UINT32_MAX; // since when a way's share will cover its turn (plan())
        bool ask = false;      // plan(): each way still tried first, or the best a get: ask for all
        bool get_best = false; // plan(): the best is a get
        unsigned allowed = 0;  // at the last pick (0: never picked)
        uint8_t explore_next = 0; // the last turn's way
        Way prev = Way::pipeline; // the way of the class's last message
        bool has_prev = false;
        bool last_pipeline = false; // the class's last message, RNDVs too, was the pipeline's
        bool rndv_warm = false;     // the last RNDV followed a message of the pipeline
        uint8_t again = 0;          // explored: the next messages go the same way (measured warm)
        bool after_turn = false;    // the last message ended a turn to explore
        uint32_t untimed = 0;       // messages chosen in the steady state (pick())
        bool steady = false;        // plan(): every way tried first, the best measured: best_way
        bool rates_hold = false;    // plan(): prior_of() gave the rates
        Way best_way = Way::pipeline;
        double prior[kWays] = {}; // the BTL's rates, seconds per byte (prime())
        bool primed = false;
    };
    // Whether a message picked for reason r is a turn to explore's, or the one after a turn
    // (in the caches the turn left): its cost over the best is the budget's.
    static bool charged(Alone &a, Reason r)
    {
        const bool after = a.after_turn;
        a.after_turn = r == Reason::explore && a.again == 0;
        return r == Reason::explore || after;
    }
    // Whether w follows the same way's message (the pipeline's stores counted as one), and
    // remember it as the last.
    static bool follows(Alone &a, Way w)
    {
        const bool warm = a.has_prev && (a.prev == w || (is_pipeline(a.prev) && is_pipeline(w)));
        a.prev = w;
        a.has_prev = true;
        a.last_pipeline = is_pipeline(w);
        return warm;
    }
    // Alone: the BTL's rates for a, unless they no longer hold: once the best way, measured
    // more than its first samples (the first meet cold pages), is kClearMargin slower than its
    // rate, the host is not as the BTL measured it (a VM's vCPUs moved apart: the pipeline's
    // 64 KiB ping-pong 3-4x its calibrated time on a Zen 5 VM, the others then faster), and
    // every way is tried first as without rates (a turn would come only after some thousand
    // messages). A message alone measures about what the calibration's alone does (the
    // pipeline's 64 KiB: 1.9 against 2.85 us); a stream's measured run of small messages does
    // not (5x at 32 KiB), so streams keep the rates (their turns correct them).
    static const double *prior_of(const Alone &a, Way best, double best_est)
    {
        const double p = a.prior[size_t(best)];
        return a.n[size_t(best)] > kFirstSamples && p > 0 && best_est > kClearMargin * p ? nullptr
                                                                                         : a.prior;
    }
    // Alone: what a turn to explore way w costs (seconds per byte): two messages at its
    // estimate (else from the BTL's rates pr: figure()) rather than the best's.
    static double explore_cost(const Alone &a, const double *pr, Way w, Way best, double best_est)
    {
        const double f = figure(a.est, a.n, pr, size_t(w), best, best_est);
        return f > 0 ? 2 * std::max(f - best_est, 0.0) : 0;
    }
    // Per message, each way but the best gets its share of kAloneBudget of its time (at the
    // best's estimate), kept to what the way's turn costs (no reserve for a burst of them).
    // A turn's messages take what they cost from it as they end (done(): below 0 if more than
    // their estimates, as the first of a pair and the message after may).
    static double share(const Alone &a, Way best, double best_est)
    {
        const int k = __builtin_popcount(a.allowed & ~way_bit(best));
        return k > 0 ? kAloneBudget * best_est / k : 0;
    }
    // The shares of the messages since the last time (since).
    static void settle(Alone &a, const double *pr, Way best, double best_est)
    {
        const double add = share(a, best, best_est) * a.since;
        for (size_t w = 0; w < kWays; ++w)
            if ((a.allowed & ~way_bit(best)) & (1u << w))
                a.budget[w] =
                    std::min(a.budget[w] + add,
                             std::max(explore_cost(a, pr, Way(w), best, best_est), a.budget[w]));
        a.since = 0;
    }
    // Alone: the picks way w takes while each way is tried first: one unmeasured (it follows
    // another way's message), then its first samples; none for a way the BTL's rates put far.
    static uint32_t tries(const Alone &a, const double *pr, size_t w, double best_est)
    {
        const uint32_t k = first_samples(a.est, a.n, pr, a.allowed, w, best_est);
        return k == 0 ? 0 : 1 + k;
    }
    // After a pick or a measurement, what asking_next() needs (it runs for every answer, so it
    // only reads these): whether to ask for every message (each way still tried first, or a
    // get the best), and after how many messages (since) a way's share covers its turn.
    static void plan(Alone &a)
    {
        double best_est = 0;
        const Way best = best_of(a.est, a.n, a.allowed, Way::pipeline, &best_est);
        const double *pr = prior_of(a, best, best_est);
        a.ask = !is_pipeline(best);
        a.get_best = a.ask;
        a.best_way = best;
        a.steady = best_est > 0 && a.n[size_t(best)] > kFirstSamples; // (prior_of)
        a.rates_hold = pr != nullptr;
        for (size_t w = 0; w < kWays; ++w)
            if ((a.allowed & (1u << w)) && a.picked[w] < tries(a, pr, w, best_est))
                a.ask = true, a.steady = false;
        a.ready_at = UINT32_MAX;
        const double s = share(a, best, best_est);
        if (best_est <= 0 || s <= 0)
            return;
        for (size_t w = 0; w < kWays; ++w)
            if ((a.allowed & ~way_bit(best)) & (1u << w)) {
                const double need = (explore_cost(a, pr, Way(w), best, best_est) - a.budget[w]) / s;
                a.ready_at = std::min<uint32_t>(a.ready_at, need <= 0     ? 0
                                                            : need >= 4e9 ? UINT32_MAX
                                                                          : uint32_t(need) + 1);
            }
    }
    // The way whose turn to explore comes now: the first after the last turn's, in turn, whose
    // share covers its cost; kWays if none.
    static size_t turn_way(const Alone &a, const double *pr, Way best, double best_est)
    {
        const unsigned others = a.allowed & ~way_bit(best);
        for (size_t k = 1; k <= kWays; ++k) {
            const size_t w = (a.explore_next + k) % kWays;
            if ((others & (1u << w)) && a.budget[w] >= explore_cost(a, pr, Way(w), best, best_est))
                return w;
        }
        return kWays;
    }
    // A size class's stream, and first, in one cache line, what every rendezvous message of the
    // class reads or writes on the common paths: a stream's (next_in_run, asking), a sender's
    // (offer, told), a receiver's answer (asking_next) and a RNDV alone's (its count, its stores:
    // streamed_pipeline). A message's copies push the rest out
    // of the L1 between messages: with this and the chooser kept in the peer (chooser_for), a
    // 4 KiB ping-pong went from 1.07x the pipeline forced's time to 1.03x on a Zen 5 VM
    // (docs/performance.md).
    struct alignas(64) Stream {
        Way way = Way::pipeline;  // of the current run
        bool measuring = false;   // a measured run is not over
        bool want_offer = false;  // receiver: the next run is of a way that needs an offer
        bool untried_gets = true; // a get's first runs were still to come at the last run's start
        bool asks[2] = {};        // receiver: asks() of the class's alone and exchanged (refresh())
        bool wanted = false;    // sender: the peer's receiver asked for the next one alone (told())
        uint32_t left = 0;      // messages the current run still takes
        uint32_t unoffered = 0; // receiver: messages since, none of them an offer
        uint32_t offers_left = kEpoch + 1; // sender: offers the peer's receiver asks for (told())
        uint32_t declines = 0; // sender: gets offered alone the peer's receiver declined (taken())
        uint32_t counted[kWays] = {}; // messages of the stream per way, not yet in chosen_
        uint64_t rndvs[2] = {}; // receiver: RNDVs alone and exchanged (unoffered(), for report())
        bool stores_known = false, stores_streamed = false; // streamed_pipeline()
        bool get_best = false;  // receiver: the best in a stream (at the last run's start)
        bool alone_get[2] = {}; // receiver: the best alone, exchanged (refresh())
        bool told_get[2] = {};  // sender: the peer's receiver said so, alone and in a stream
        double est[kWays] = {};
        uint32_t n[kWays] = {};
        uint32_t tried[kWays] = {}; // measured runs started of each way
        uint32_t run = 0;           // the current run's number, if measured
        bool run_ok = true;
        uint32_t run_done = 0;
        uint64_t run_start = 0;
        uint64_t run_last = 0; // when its last message so far ended
        double run_bytes = 0;
        uint32_t runs_since_measure = 0;
        uint32_t measure_turns = 0;    // times runs_since_measure reached kMeasureEvery
        uint64_t last_turn = 0;        // when the last turn went ahead (ns)
        uint64_t way_turn[kWays] = {}; // and the last of each way's (the first run's at first;
                                       // later than the last while its waits are paid off)
        uint64_t turn_from = 0;        // when the turn under way was first asked for
        uint8_t measure_next = 0;
        double prior[kWays] = {}; // the BTL's rates, seconds per byte (prime())
        bool primed = false;
    };
    static_assert(offsetof(Stream, est) <= 64, "a stream's common fields fill one cache line");
    static_assert(offsetof(Alone, due) >= 64 && offsetof(Alone, after_turn) < 128,
                  "what a RNDV alone reads of its class is in one cache line");

    // An estimate moves a quarter of the way towards each time, clipped to half or twice it;
    // the first ones take the best time seen (the first may pay for cold pages).
    static void update(double &est, uint32_t &n, double per)
    {
        if (n == 0)
            est = per;
        else if (n < kFirstSamples)
            est = std::min(est, per);
        else
            est = 0.75 * est + 0.25 * std::clamp(per, est / 2, est * 2);
        if (n < UINT32_MAX)
            ++n;
    }

    // How often way w is tried first: kFirstSamples, but once if its first measurement was
    // kClearMargin slower than the best so far (a get 3-5x slower than the pipeline: a second
    // try of it, at 8 MiB in a stream 16 messages, took a tenth of a bandwidth run), and never
    // while the BTL's rates (pr; nullptr or 0: none) put it kClearMargin slower than the best of
    // them.
    // A first measurement spoilt by cold pages is corrected on the rare measuring turns.
    static uint32_t first_samples(const double *est, const uint32_t *n, const double *pr,
                                  unsigned allowed, size_t w, double best_est)
    {
        if (pr && n[w] == 0 && pr[w] > 0) {
            double least = pr[w];
            for (size_t v = 0; v < kWays; ++v)
                if ((allowed & (1u << v)) && pr[v] > 0)
                    least = std::min(least, pr[v]);
            if (pr[w] >= kClearMargin * least)
                return 0;
        }
        return n[w] > 0 && best_est > 0 && est[w] >= kClearMargin * best_est ? 1 : kFirstSamples;
    }

    // Stream: whether way k still needs a first run: measured fewer than its first samples,
    // with up to as many runs again for those that ended unmeasured (a run that met a pause of
    // the stream, or a failure), so that a way is not judged by one cold run.
    static bool to_try(const Stream &st, const double *pr, unsigned allowed, size_t k,
                       double best_est)
    {
        const uint32_t want = first_samples(st.est, st.n, pr, allowed, k, best_est);
        return (allowed & (1u << k)) && st.n[k] < want && st.tried[k] < 2 * want;
    }

    // The BTL's rates for a class (seconds per byte, 0: none), read once, on its first pick.
    void prime(double *prior, bool &primed, size_t bytes, bool stream)
    {
        if (primed)
            return;
        primed = true;
        for (size_t w = 0; w < kWays && rate_fn_; ++w) {
            const double rate = rate_fn_(rate_ctx_, bytes, stream, Way(w));
            prior[w] = rate > 0 && rate < 1e15 ? 1 / rate : 0;
        }
    }

    // A way's figure (seconds per byte): its estimate once measured; else, from the rates pr
    // (nullptr or 0: none), as much slower than the best (best, at best_est) as the BTL measured it
    // (the job's times differ from the BTL's: a pipeline's first messages in cold pages
    // measured 3x its later ones, and a measured run of 8 small messages after a drain 5x the
    // calibration's stream rate at 32 KiB); else 0 (unknown).
    static double figure(const double *est, const uint32_t *n, const double *pr, size_t w, Way best,
                         double best_est)
    {
        if (n[w] > 0)
            return est[w];
        if (!pr || pr[w] <= 0)
            return 0;
        const double b = pr[size_t(best)];
        return best_est > 0 && b > 0 ? pr[w] * (best_est / b) : pr[w];
    }

    // The allowed way with the best estimate among those measured; `fallback` if none is.
    // Streaming stores only when `margin` faster than cached ones.
    static Way best_of(const double *est, const uint32_t *n, unsigned allowed, Way fallback,
                       double *best_est, double margin = kStoresMargin)
    {
        Way best = fallback;
        *best_est = 0;
        for (size_t w = 0; w < kWays; ++w)
            if ((allowed & (1u << w)) && n[w] > 0 && (*best_est == 0 || est[w] < *best_est)) {
                best = Way(w);
                *best_est = est[w];
            }
        const size_t p = size_t(Way::pipeline), g = size_t(Way::get);
        if (best == Way::streamed && (allowed & way_bit(Way::pipeline)) && n[p] > 0 &&
            *best_est * margin > est[p]) {
            best = Way::pipeline;
            *best_est = est[p];
        }
        // Likewise the shared get for the get: it takes the peer's core too, and where the two
        // measure alike (a 4 KiB message, one piece) the choice flipped between them on noise,
        // each time asking the peer for help for nothing (a 4 KiB ping-pong 1.07x the get
        // forced's time on a Xeon VM).
        if (best == Way::shared && (allowed & way_bit(Way::get)) && n[g] > 0 &&
            *best_est * kStoresMargin > est[g]) {
            best = Way::get;
            *best_est = est[g];
        }
        return best;
    }

    // The allowed ways but `best` worth measuring again now (way_bit mask): those within
    // kClearMargin of best_est (or not measured), and on a rare turn those farther (if any).
    static unsigned worth_measuring(const double *est, const uint32_t *n, const double *pr,
                                    unsigned allowed, Way best, double best_est, bool rare_turn)
    {
        unsigned close = 0, far = 0;
        for (size_t w = 0; w < kWays; ++w)
            if ((allowed & (1u << w)) && w != size_t(best)) {
                const double f = figure(est, n, pr, w, best, best_est);
                (f == 0 || f < kClearMargin * best_est ? close : far) |= 1u << w;
            }
        return rare_turn && far ? far : close;
    }

    // The next allowed way after `turn`, other than `skip` (kWays: none), in turn.
    static Way next_way(uint8_t &turn, unsigned allowed, size_t skip)
    {
        for (size_t k = 1; k <= kWays; ++k) {
            const size_t w = (turn + k) % kWays;
            if ((allowed & (1u << w)) && w != skip) {
                turn = uint8_t(w);
                return Way(w);
            }
        }
        return Way(turn % kWays);
    }

    // *steady: the steady state's path was taken (nothing to try, no turn possible: the best
    // as plan() last found it, without going through the ways; in a 32 KiB ping-pong, by
    // callgrind, plan() ran about 620 instructions a message and this about 470), and plan()
    // need not run.
    static Way pick_alone(Alone &c, Way advice, unsigned allowed, Reason *why, bool *steady,
                          uint32_t gap)
    {
        ++c.count;
        c.since += c.since < UINT32_MAX;
        c.due += c.due < UINT32_MAX;
        if (c.steady && c.again == 0 && allowed == c.allowed &&
            !(c.due >= gap && c.since >= c.ready_at)) {
            *steady = true;
            *why = Reason::best;
            return c.best_way;
        }
        c.allowed = allowed;
        // First each way a few times (counted when chosen), the advice first.
        auto first = [&](size_t w) {
            if (c.picked[w] < UINT32_MAX)
                ++c.picked[w];
            return Way(w);
        };
        if (c.again > 0 && (allowed & way_bit(Way(c.explore_next)))) {
            --c.again; // the turn's way once more
            *why = Reason::explore;
            return Way(c.explore_next);
        }
        double best_est = 0;
        const Way best = best_of(c.est, c.n, allowed, advice, &best_est);
        const double *pr = prior_of(c, best, best_est);
        settle(c, pr, best, best_est);
        // A first try after another way's message is not measured (follows): each way's
        // first tries count from the second.
        auto to_try = [&](size_t w) {
            return (allowed & (1u << w)) && c.picked[w] < tries(c, pr, w, best_est);
        };
        if (to_try(size_t(advice))) {
            *why = c.count == 1 ? Reason::advice : Reason::first;
            return first(size_t(advice));
        }
        for (size_t w = 0; w < kWays; ++w)
            if (to_try(w)) {
                *why = Reason::first;
                return first(w);
            }
        // A turn to explore, each other way in turn, at most every gap (turn_every) messages of
        // the class (those that came without an offer counted too: unoffered) and when the
        // budget covers it (kAloneBudget). The sender offers the message a turn falls on when
        // asked (asking_next), so the turn does not wait for its own offers.
        if (c.due >= gap && best_est > 0) {
            const size_t w = turn_way(c, pr, best, best_est);
            if (w != kWays) { // (its messages' cost taken from its share as they end: done())
                c.due = 0;
                c.explore_next = uint8_t(w);
                *why = Reason::explore;
                // Twice in a row: the first in the other way's caches, the second measured.
                c.again = 1;
                return Way(w);
            }
        }
        *why = Reason::best;
        return best;
    }

    // Receiver: whether the RNDV that just came as a's do is timed (time_unoffered()).
    static bool timed(const Alone &a)
    {
        return a.allowed != 0 && a.rndv_warm && a.since % kTimeEvery == 0;
    }
    // Receiver: whether its answers ask for a get offered for the next message that comes as
    // a's do (asking_next()).
    static bool asks(const Alone &a, uint32_t gap)
    {
        return a.allowed != 0 && // never chosen: the sender offers (not declined yet)
               (a.again > 0 || a.ask || (a.due + 1 >= gap && a.since + 1 >= a.ready_at));
    }
    // After every change to class k's alone (or exchanged: ex) state: what asking_next() reads.
    void refresh(size_t k, bool ex)
    {
        const Alone &a = ex ? exchange_[k] : alone_[k];
        streams_[k].asks[ex ? 1 : 0] = asks(a, turn_every(k));
        streams_[k].alone_get[ex ? 1 : 0] = a.allowed != 0 && a.get_best;
    }
    // After an estimate of class k changed: what streamed_pipeline() answers.
    void refresh_stores(size_t k)
    {
        const size_t p = size_t(Way::pipeline), s = size_t(Way::streamed);
        Stream &st = streams_[k];
        const Alone &al = alone_[k];
        const bool in_stream = st.n[p] > 0 && st.n[s] > 0;
        st.stores_known = in_stream || (al.n[p] > 0 && al.n[s] > 0);
        st.stores_streamed =
            st.stores_known && (in_stream ? st.est[s] * kStreamStoresMargin < st.est[p]
                                          : al.est[s] * kStoresMargin < al.est[p]);
    }
    // A message of class k chosen in case c to go way w, for report(): a stream's counted in
    // its class's first line (the count in chosen_ would be one more line per message).
    void count(Case c, size_t k, Way w)
    {
        if (c == Case::stream) {
            uint32_t &n = streams_[k].counted[size_t(w)];
            if (++n == UINT32_MAX) {
                chosen_[size_t(c)][k][size_t(w)] += n;
                n = 0;
            }
            return;
        }
        uint64_t &m = chosen_[size_t(c)][k][size_t(w)];
        m += m < UINT64_MAX;
    }

    // Stream: the next message goes on with the run under way, if it is not measured and the
    // message can take its way (next_in_run()).
    static std::optional<Way> run_on(Stream &st, unsigned possible)
    {
        if (st.left == 0 || st.measuring || !(possible & way_bit(st.way)))
            return std::nullopt;
        --st.left;
        st.unoffered = 0;
        return st.way;
    }

    // The messages of a run of `bytes` each that is not measured (kRunLength, kRunBytes).
    static uint32_t run_length(double bytes)
    {
        return bytes * kRunLength < kRunBytes ? uint32_t(kRunBytes / std::max(bytes, 1.0))
                                              : kRunLength;
    }

    // A stream goes in runs, each run one way. Messages overlap in a stream, and completions
    // come in batches, so a message's own time says little: a measured run (kEpoch messages)
    // starts when none of the peer's messages is under way and the next run waits until it is
    // over, and its time is from its first choice to its last byte. First each way gets
    // kFirstSamples measured runs (the advice first), then runs of run_length() messages go the
    // best way, and one run in kMeasureEvery is measured, each way in turn (the best too: it
    // may have become slower); a way kClearMargin slower than the best only on one such turn
    // in kRareFactor.
    // A message that cannot take the way its run needs (an RNDV while the stream runs gets)
    // goes the best way it can, outside the runs; the run is asked for (asking()), its offers
    // awaited.
    static Ticket pick_stream(Stream &st, double bytes, Way advice, unsigned allowed,
                              unsigned possible, uint32_t active, uint64_t now_ns, Reason *why)
    {
        Ticket t;
        *why = Reason::best;
        auto outside = [&] {
            double unused = 0;
            t.way = best_of(st.est, st.n, possible, Way::pipeline, &unused, kStreamStoresMargin);
            t.run = 0;
            return t;
        };
        if (st.measuring && st.run_done > 0 && now_ns > st.run_last &&
            now_ns - st.run_last > kGapFactor * (st.run_last - st.run_start) / st.run_done)
            st.run_ok = false; // (now_ns 0: not read, outside measured runs)
        if (st.left > 0 && !(possible & way_bit(st.way))) {
            if (st.measuring) // the run is no longer alone
                st.run_ok = false;
            if (++st.unoffered >= kOfferWait) { // the offers stopped: the run is given up
                st.left = 0;
                st.measuring = false;
                st.unoffered = 0;
            }
            return outside();
        }
        if (st.left == 0) {
            if (st.measuring) { // the measured run's messages are not all over
                t.wait = true;
                return t;
            }
            Way w = advice;
            uint8_t next = st.measure_next; // the turn's way, kept once the run goes ahead
            bool measure = false, turn = false, turn_passed = false;
            Reason r = Reason::best;
            double best_est = 0;
            const Way best = best_of(st.est, st.n, allowed, advice, &best_est, kStreamStoresMargin);
            st.get_best = !is_pipeline(best);
            const double *pr = st.prior;
            const int others = std::max(__builtin_popcount(allowed & ~way_bit(best)), 1);
            for (uint64_t &since : st.way_turn) // each way's budget counts from the first run
                since = since == 0 ? now_ns : since;
            // The ways still to try (the advice first, then in order); the gets among them
            // make the receiver ask for offers (asking()).
            unsigned trying = 0;
            for (size_t k = 0; k < kWays; ++k)
                trying |= to_try(st, pr, allowed, k, best_est) ? 1u << k : 0;
            st.untried_gets = trying & ~(way_bit(Way::pipeline) | way_bit(Way::streamed));
            size_t untried = (trying & way_bit(advice)) ? size_t(advice)
                             : trying                   ? size_t(__builtin_ctz(trying))
                                                        : kWays;
            if (untried != kWays) {
                w = Way(untried);
                measure = true;
                r = st.tried[0] + st.tried[1] + st.tried[2] + st.tried[3] == 0 ? Reason::advice
                                                                               : Reason::first;
            } else if (st.runs_since_measure + 1 >= kMeasureEvery &&
                       (now_ns == 0 || now_ns - st.last_turn >= kTurnGapNs)) {
                // The best and the ways close to it measured in turn; the others on rare turns
                // only, and with no way close, nothing but on those.
                turn = true; // counted once it goes ahead (a run that must wait asks again)
                const bool rare = (st.measure_turns + 1) % kRareFactor == 0;
                const unsigned again =
                    worth_measuring(st.est, st.n, pr, allowed, best, best_est, rare);
                if (again) {
                    w = next_way(next, again | way_bit(best), kWays);
                    measure = true;
                    r = w == best ? Reason::best : Reason::explore;
                    // Not yet, if that run would cost the stream more than the way's share of
                    // kTurnBudget of the time since its last turn: the best's run instead, the
                    // turn kept.
                    const double f = figure(st.est, st.n, pr, size_t(w), best, best_est);
                    const double extra = (f - best_est) * bytes * kEpoch * 1e9;
                    const uint64_t since = st.way_turn[size_t(w)];
                    if (now_ns != 0 && f > 0 && extra > 0 &&
                        (now_ns < since || double(now_ns - since) * kTurnBudget < extra * others)) {
                        w = best;
                        measure = turn = false;
                        next = st.measure_next;
                        r = Reason::best;
                    }
                } else {
                    w = best;
                    turn_passed = true;
                }
            } else {
                w = best;
            }
            if (!(possible & way_bit(w))) {
                // Asked for, nothing committed: the same run again, unless no offer came for
                // kOfferWait messages (a sender that cannot offer: non-contiguous data). Then
                // the run is given up (tried, or the turn passed), and a run of the best way
                // this message can take goes instead, so that the schedule goes on.
                if (++st.unoffered < kOfferWait) {
                    st.want_offer = true;
                    if (turn && measure && st.turn_from == 0)
                        st.turn_from = now_ns;
                    return outside();
                }
                st.turn_from = 0;
                if (untried != kWays)
                    st.tried[untried] = 2 * kFirstSamples;
                turn_passed = turn;
                measure = false;
                untried = kWays;
                w = outside().way;
            }
            if (measure && active > 0) { // it must run alone: after the peer's messages
                if (turn && st.turn_from == 0)
                    st.turn_from = now_ns;
                t.wait = true;
                return t;
            }
            st.want_offer = false;
            st.unoffered = 0;
            st.measure_next = next;
            if (turn) {
                ++st.measure_turns;
                st.last_turn = st.way_turn[size_t(w)] = now_ns;
                // What the turn waited for (its offers, a window late; the stream to drain)
                // is its cost too, beyond its run's estimate: a way's next turn waits for its
                // share of the budget to cover it (at 4 KiB a get's turn waited 0.7-1.3 ms, 10-20x
                // its run's estimated extra time, every 26 ms: 3% of the stream).
                if (w != best && st.turn_from != 0 && now_ns > st.turn_from)
                    st.way_turn[size_t(w)] +=
                        uint64_t(double(now_ns - st.turn_from) * others / kTurnBudget);
                st.turn_from = 0;
            }
            st.way = w;
            st.left = measure ? kEpoch : run_length(bytes);
            st.runs_since_measure = measure || turn_passed ? 0 : st.runs_since_measure + 1;
            if (measure) {
                st.tried[size_t(w)] += st.tried[size_t(w)] < UINT32_MAX; // (turns' runs too)
                st.run = st.run + 1 == 0 ? 1 : st.run + 1;
                st.measuring = true;
                st.run_ok = true;
                st.run_done = 0;
                st.run_bytes = 0;
                st.run_start = now_ns;
            }
            *why = r;
        }
        --st.left;
        st.unoffered = 0;
        t.way = st.way;
        t.run = st.measuring ? st.run : 0;
        return t;
    }

    RateFn rate_fn_ = nullptr;
    const void *rate_ctx_ = nullptr;
    Alone alone_[kClasses];
    Alone exchange_[kClasses];
    uint64_t chosen_[3][kClasses][kWays] = {}; // messages per case, class and way
    Stream streams_[kClasses];
};

inline const char *reason_name(Chooser::Reason r)
{
    switch (r) {
    case Chooser::Reason::advice: return "the BTL's advice";
    case Chooser::Reason::first: return "trying each way";
    case Chooser::Reason::best: return "fastest measured";
    case Chooser::Reason::explore: return "measuring again";
    }
    return "?";
}

} // namespace weft::pml::engine

#endif
