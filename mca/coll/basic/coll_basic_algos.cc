// coll/basic's algorithms: each builds the whole schedule of one collective (coll_basic.h).
// Ranks are the communicator's; "vrank" is a rank renumbered so that the root is 0.
#include "coll_basic.h"

#include <weft/op.h>

#include <weft/mca.h>
#include <weft/output.h>
#include <weft/runtime.h>

#include <algorithm>
#include <mutex>
#include <numeric>
#include <set>
#include <string>
#include <tuple>

namespace weft::coll::basic {

// Whether an allgather or alltoall of `bytes` per rank on n ranks posts every transfer at
// once: within direct_max_ranks, up to direct_max_bytes, or at any size where this host's
// ranks share cores. There every wait for a peer is a context switch, and a round by round
// algorithm waits n - 1 times: at 4 and 8 ranks on 2 cores, alltoalls and allgathers of
// 64 KiB and 1 MiB took 10-25% less time direct (docs/performance.md). Where each rank has a
// core, large transfers posted at once crowd each other instead.
namespace {
bool direct_for(int n, size_t bytes, const char **why)
{
    if (n > tuning.direct_max_ranks)
        return false;
    if (bytes <= tuning.direct_max_bytes) {
        *why = "within direct_max_ranks and direct_max_bytes";
        return true;
    }
    if (weft_runtime_oversubscribed()) {
        *why = "within direct_max_ranks, ranks sharing cores";
        return true;
    }
    return false;
}
} // namespace

const char *alg_name(Alg a)
{
    switch (a) {
    case Alg::automatic: return "auto";
    case Alg::binomial: return "binomial";
    case Alg::pipeline: return "pipeline";
    case Alg::recursive_doubling: return "recursive_doubling";
    case Alg::rabenseifner: return "rabenseifner";
    case Alg::direct: return "direct";
    case Alg::bruck: return "bruck";
    case Alg::ring: return "ring";
    case Alg::pairwise: return "pairwise";
    }
    return "?";
}

void say_choice(const char *collective, int ranks, size_t bytes, Alg alg, const char *why)
{
    if (tuning.verbose < 10)
        return;
    static std::mutex lock;
    static std::set<std::tuple<std::string, int, size_t, int>> said;
    {
        std::lock_guard g(lock);
        if (tuning.verbose < 20 && !said.emplace(collective, ranks, bytes, int(alg)).second)
            return;
    }
    weft_output(WEFT_OUTPUT_INFO, "coll/basic: %s of %zu bytes on %d ranks: %s (%s)", collective,
                bytes, ranks, alg_name(alg), why);
}

namespace {

// The blocks of count elements over n ranks: block i is cnt(i) elements from disp(i).
struct Blocks {
    size_t count, n;
    size_t cnt(size_t i) const { return count / n + (i < count % n ? 1 : 0); }
    size_t disp(size_t i) const { return i * (count / n) + std::min(i, count % n); }
};

bool in_place(const void *p) { return p == WEFT_IN_PLACE; }

char *at(void *buf, ptrdiff_t elems, const weft_datatype_t *type)
{
    return static_cast<char *>(buf) + elems * weft_datatype_extent(type);
}
const char *at(const void *buf, ptrdiff_t elems, const weft_datatype_t *type)
{
    return static_cast<const char *>(buf) + elems * weft_datatype_extent(type);
}

size_t bytes_of(size_t count, const weft_datatype_t *type)
{
    return count * weft_datatype_size(type);
}

int pow2_floor(int n)
{
    int p = 1;
    while (p * 2 <= n)
        p *= 2;
    return p;
}

// A binomial tree node's children's parts: at most one per bit of an int (no allocation per
// call).
struct Parts {
    char *p[32];
    int n = 0;
    void push(char *part) { p[n++] = part; }
    char *const *begin() const { return p; }
    char *const *end() const { return p + n; }
};

// In the current round, receive the partial result of every child of vrank in a binomial tree
// (vrank + m for the powers of two m below vrank's lowest set bit, inside n) into scratch
// buffers, in order; mask is left at the parent's distance (vrank - mask), or at the first
// power of two from n at vrank 0. real maps a vrank to a rank. With `first`, the first child's
// goes there instead, and is not one of the parts returned.
template <class Real>
Parts recv_children(Sched &s, size_t count, weft_datatype_t *type, int vrank, int n, Real real,
                    int &mask, char *first = nullptr)
{
    Parts parts;
    for (mask = 1; mask < n; mask <<= 1) {
        if (vrank & mask)
            break;
        if (vrank + mask < n) {
            char *part = first ? first : s.scratch_for(count, type);
            s.recv(real(vrank + mask), part, count, type);
            if (part != first)
                parts.push(part);
            first = nullptr;
        }
    }
    return parts;
}

// Reduce count elements from every rank into acc at vrank 0 of a binomial tree, children in
// rank order, so that a non-commutative op sees rank 0 op 1 op ... op n-1 when real(v) = v.
// acc holds this rank's contribution on entry (a scratch buffer, never the user's send
// buffer); on return, at vrank 0, the result. real maps a vrank to a rank.
template <class Real>
void binomial_reduce(Sched &s, char *&acc, size_t count, weft_datatype_t *type, int vrank, int n,
                     Real real)
{
    // Receive every child's partial result at once, then fold them in order.
    int mask = 1;
    const Parts parts = recv_children(s, count, type, vrank, n, real, mask);
    // Once they are in (a round's local steps run after its transfers): acc covers
    // [vrank, vrank + m) and the next child [vrank + m, vrank + 2m), so part = acc op part,
    // which then becomes acc.
    for (char *part : parts) {
        s.reduce(acc, part, count, type);
        acc = part;
    }
    s.next();
    if (vrank != 0) {
        s.send(real(vrank - mask), acc, count, type);
        s.next();
    }
}

// One round: every rank sends block j of its contribution `mine` to rank j and folds block me
// of everyone's into acc, in rank order (c0 op c1 op ... op cn-1, right to left, so that a
// non-commutative op keeps MPI's order). acc may be mine's own block (in place).
void direct_reduce_scatter(Sched &s, const void *mine, char *acc, const Blocks &b,
                           weft_datatype_t *type, bool commutative, int me, int n)
{
    const size_t my = size_t(me), mycnt = b.cnt(my);
    std::vector<const char *> part(size_t(n), nullptr);
    for (int k = 1; k < n; ++k) {
        const int from = (me - k + n) % n;
        char *p = s.scratch_for(mycnt, type);
        s.recv(from, p, mycnt, type);
        part[size_t(from)] = p;
    }
    for (int k = 1; k < n; ++k) {
        const size_t to = size_t((me + k) % n);
        s.send(int(to), at(mine, ptrdiff_t(b.disp(to)), type), b.cnt(to), type);
    }
    const char *own = at(mine, ptrdiff_t(b.disp(my)), type);
    if (commutative) {
        s.copy(own, acc, mycnt, type);
        for (int r = 0; r < n; ++r)
            if (r != me)
                s.reduce(part[size_t(r)], acc, mycnt, type);
    } else {
        if (own == acc && me != n - 1) {
            // acc is about to take the last rank's block: keep the own one aside first.
            char *keep = s.scratch_for(mycnt, type);
            s.copy(own, keep, mycnt, type);
            own = keep;
        }
        part[my] = own;
        s.copy(part[size_t(n - 1)], acc, mycnt, type);
        for (int r = n - 2; r >= 0; --r)
            s.reduce(part[size_t(r)], acc, mycnt, type);
    }
    s.next();
}

} // namespace

void build_barrier(Sched &s, weft_comm_t *comm)
{
    const int n = weft_comm_size(comm), me = weft_comm_rank(comm);
    if (tuning.barrier_algorithm == 1) {
        // Recursive doubling over the largest power of two; the ranks beyond it check in with
        // a partner first and are released by it last.
        const int p2 = pow2_floor(n);
        if (me >= p2) {
            s.send(me - p2, nullptr, 0, type_bytes());
            s.next();
            s.recv(me - p2, nullptr, 0, type_bytes());
            s.next();
            return;
        }
        if (me + p2 < n) {
            s.recv(me + p2, nullptr, 0, type_bytes());
            s.next();
        }
        for (int mask = 1; mask < p2; mask <<= 1) {
            s.recv(me ^ mask, nullptr, 0, type_bytes());
            s.send(me ^ mask, nullptr, 0, type_bytes());
            s.next();
        }
        if (me + p2 < n) {
            s.send(me + p2, nullptr, 0, type_bytes());
            s.next();
        }
        return;
    }
    if (tuning.barrier_algorithm == 2) {
        // Binomial fan-in to rank 0, then fan-out.
        int mask = 1;
        for (; mask < n; mask <<= 1) {
            if (me & mask)
                break;
            if (me + mask < n)
                s.recv(me + mask, nullptr, 0, type_bytes());
        }
        s.next();
        if (me != 0) {
            s.send(me - mask, nullptr, 0, type_bytes());
            s.next();
            s.recv(me - mask, nullptr, 0, type_bytes());
            s.next();
        }
        for (mask >>= 1; mask > 0; mask >>= 1)
            if (me + mask < n)
                s.send(me + mask, nullptr, 0, type_bytes());
        s.next();
        return;
    }
    // Dissemination: in round k, signal rank + 2^k and hear from rank - 2^k.
    for (int k = 1; k < n; k <<= 1) {
        s.recv((me - k + n) % n, nullptr, 0, type_bytes());
        s.send((me + k) % n, nullptr, 0, type_bytes());
        s.next();
    }
}

void build_bcast(Sched &s, void *buf, size_t count, weft_datatype_t *type, int root,
                 weft_comm_t *comm)
{
    const int n = weft_comm_size(comm), me = weft_comm_rank(comm);
    if (n == 1 || count == 0)
        return;
    const int vrank = (me - root + n) % n;
    auto real = [&](int v) { return (v + root) % n; };
    const size_t bytes = bytes_of(count, type);
    // A chain pays a hand-off per segment and hop, which ranks sharing cores pay in context
    // switches: automatic takes it only on communicators larger than direct_max_ranks.
    Alg alg = tuning.bcast;
    const char *why = "forced by coll_basic_bcast_algorithm";
    if (alg == Alg::automatic) {
        const bool chain = bytes >= tuning.bcast_pipeline_min && n > tuning.direct_max_ranks;
        alg = chain ? Alg::pipeline : Alg::binomial;
        why = chain ? "bcast_pipeline_min bytes or more, more than direct_max_ranks ranks"
                    : "below bcast_pipeline_min bytes, or at most direct_max_ranks ranks";
    }
    if (alg == Alg::pipeline && tuning.bcast_segment < weft_datatype_size(type)) {
        alg = Alg::binomial;
        why = "bcast_segment is smaller than one element";
    }
    say_choice("bcast", n, bytes, alg, why);
    if (alg == Alg::pipeline) {
        // Pipelined chain: vrank v receives segment i from v - 1 while it passes segment i - 1
        // on to v + 1.
        const size_t per = std::max<size_t>(1, tuning.bcast_segment / weft_datatype_size(type));
        const size_t nseg = (count + per - 1) / per;
        auto seg = [&](size_t i) { return at(buf, ptrdiff_t(i * per), type); };
        auto len = [&](size_t i) { return std::min(per, count - i * per); };
        for (size_t i = 0; i <= nseg; ++i) {
            if (vrank > 0 && i < nseg)
                s.recv(real(vrank - 1), seg(i), len(i), type);
            if (vrank + 1 < n && i > 0)
                s.send(real(vrank + 1), seg(i - 1), len(i - 1), type);
            s.next();
        }
        return;
    }
    // Binomial tree.
    int mask = 1;
    for (; mask < n; mask <<= 1) {
        if (vrank & mask) {
            s.recv(real(vrank - mask), buf, count, type);
            s.next();
            break;
        }
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vrank + mask < n)
            s.send(real(vrank + mask), buf, count, type);
    s.next();
}

void build_reduce(Sched &s, const void *sendbuf, void *recvbuf, size_t count, weft_datatype_t *type,
                  weft_op_t *op, int root, weft_comm_t *comm)
{
    const int n = weft_comm_size(comm), me = weft_comm_rank(comm);
    const void *mine = in_place(sendbuf) ? recvbuf : sendbuf;
    if (n == 1) {
        s.copy(mine, recvbuf, count, type);
        return;
    }
    const size_t bytes = bytes_of(count, type);
    Alg alg = tuning.reduce;
    const char *why = "forced by coll_basic_reduce_algorithm";
    if (alg == Alg::automatic) {
        alg = Alg::binomial;
        why = "automatic";
    }
    say_choice("reduce", n, bytes, alg, why);
    if (alg == Alg::direct) {
        // Each rank folds one block of everyone's contributions; the root gathers the blocks.
        const Blocks b{count, size_t(n)};
        const size_t my = size_t(me);
        char *acc =
            me == root ? at(recvbuf, ptrdiff_t(b.disp(my)), type) : s.scratch_for(b.cnt(my), type);
        direct_reduce_scatter(s, mine, acc, b, type, weft_op_commutative(op), me, n);
        if (me == root) {
            for (int k = 1; k < n; ++k) {
                const size_t from = size_t((me - k + n) % n);
                s.recv(int(from), at(recvbuf, ptrdiff_t(b.disp(from)), type), b.cnt(from), type);
            }
        } else {
            s.send(root, acc, b.cnt(my), type);
        }
        s.next();
        return;
    }
    if (weft_op_commutative(op)) {
        // The order of the operands does not matter: the root folds straight into recvbuf, a
        // leaf sends its own buffer (never a copy it just wrote: a peer reading freshly
        // written lines out of this core's cache is much slower than reading clean ones), and
        // only the inner ranks of the tree fold into a scratch buffer.
        const int vrank = (me - root + n) % n;
        auto real = [&](int v) { return (v + root) % n; };
        int mask = 1;
        while (mask < n && !(vrank & mask))
            mask <<= 1;
        // Children: vrank + m for the powers of two m below mask that stay inside n.
        const bool leaf = vrank != 0 && (mask == 1 || vrank + 1 >= n);
        if (leaf) {
            s.send(real(vrank - mask), mine, count, type);
            s.next();
            return;
        }
        // An inner rank (every rank that is not a leaf has a child) receives its first child's
        // contribution straight into acc and folds its own into it (acc = mine op child), the
        // others' into scratch buffers: no copy of its own contribution into acc first, a whole
        // pass over the data (at 2 ranks, a 1 MiB reduce's root took 1 MiB copy, the transfer and
        // the fold). In place at the root, mine is acc already.
        char *acc = vrank == 0 ? static_cast<char *>(recvbuf) : s.scratch_for(count, type);
        const bool straight = acc != mine;
        const Parts parts =
            recv_children(s, count, type, vrank, n, real, mask, straight ? acc : nullptr);
        if (straight)
            s.reduce(mine, acc, count, type);
        for (char *part : parts)
            s.reduce(part, acc, count, type);
        s.next();
        if (vrank != 0) {
            s.send(real(vrank - mask), acc, count, type);
            s.next();
        }
        return;
    }
    char *acc = s.scratch_for(count, type);
    s.copy(mine, acc, count, type);
    s.next();
    // Non-commutative: reduce in rank order to rank 0, which hands the result to root.
    binomial_reduce(s, acc, count, type, me, n, [](int v) { return v; });
    if (root == 0) {
        if (me == 0)
            s.copy(acc, recvbuf, count, type);
        return;
    }
    if (me == 0)
        s.send(root, acc, count, type);
    else if (me == root)
        s.recv(0, recvbuf, count, type);
    s.next();
}

void build_allreduce(Sched &s, const void *sendbuf, void *recvbuf, size_t count,
                     weft_datatype_t *type, weft_op_t *op, weft_comm_t *comm)
{
    const int n = weft_comm_size(comm), me = weft_comm_rank(comm);
    const size_t bytes = bytes_of(count, type);
    const bool commutative = weft_op_commutative(op);
    const int p2 = pow2_floor(n), rem = n - p2;
    // Rabenseifner's needs a commutative op and an element per block.
    const bool rsag_ok = commutative && count >= size_t(p2);
    Alg alg = tuning.allreduce;
    const char *why = "forced by coll_basic_allreduce_algorithm";
    if (alg == Alg::rabenseifner && !rsag_ok)
        alg = Alg::automatic;
    if (alg == Alg::automatic) {
        if (bytes < tuning.allreduce_rsag_min) {
            alg = Alg::recursive_doubling;
            why = "below allreduce_rsag_min bytes";
        } else if (rsag_ok) {
            alg = Alg::rabenseifner;
            why = "allreduce_rsag_min bytes or more";
        } else {
            alg = Alg::recursive_doubling;
            why = "a non-commutative op, or fewer elements than ranks";
        }
    }
    if (n > 1 && count > 0)
        say_choice("allreduce", n, bytes, alg, why);
    if (alg == Alg::direct && n > 1 && count > 0) {
        // Reduce-scatter, then every rank sends its folded block to all: two rounds.
        const Blocks b{count, size_t(n)};
        const size_t my = size_t(me);
        char *acc = at(recvbuf, ptrdiff_t(b.disp(my)), type);
        direct_reduce_scatter(s, in_place(sendbuf) ? recvbuf : sendbuf, acc, b, type, commutative,
                              me, n);
        for (int k = 1; k < n; ++k) {
            const size_t from = size_t((me - k + n) % n);
            s.recv(int(from), at(recvbuf, ptrdiff_t(b.disp(from)), type), b.cnt(from), type);
        }
        for (int k = 1; k < n; ++k)
            s.send((me + k) % n, acc, b.cnt(my), type);
        s.next();
        return;
    }
    // Rabenseifner's over a power of two ranks, not in place, needs no copy of the send buffer
    // first: its first round sends half of it and folds the other half into what the partner
    // sent (a 1 MiB allreduce at 2 ranks reads and writes 1 MiB less per rank).
    const bool from_sendbuf =
        alg == Alg::rabenseifner && rem == 0 && n > 1 && count > 0 && !in_place(sendbuf);
    if (!in_place(sendbuf) && !from_sendbuf)
        s.copy(sendbuf, recvbuf, count, type);
    s.next();
    if (n == 1 || count == 0)
        return;
    // Fold the ranks beyond the largest power of two p2 into their even neighbours: of the
    // first 2 * rem ranks, the odd ones go on (new rank = rank / 2), the even ones wait.
    int newrank;
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            s.send(me + 1, recvbuf, count, type);
            s.next();
            newrank = -1;
        } else {
            char *tmp = s.scratch_for(count, type);
            s.recv(me - 1, tmp, count, type);
            s.reduce(tmp, recvbuf, count, type); // rank me - 1 is the lower
            s.next();
            newrank = me / 2;
        }
    } else {
        newrank = me - rem;
    }
    auto real = [&](int v) { return v < rem ? v * 2 + 1 : v + rem; };
    if (newrank >= 0) {
        if (alg == Alg::rabenseifner) {
            // Rabenseifner: reduce-scatter by recursive halving, allgather by recursive
            // doubling, over p2 blocks of recvbuf.
            std::vector<size_t> cnt(static_cast<size_t>(p2)), disp(static_cast<size_t>(p2) + 1, 0);
            for (int i = 0; i < p2; ++i)
                cnt[size_t(i)] = count / size_t(p2) + (size_t(i) < count % size_t(p2) ? 1 : 0);
            for (int i = 0; i < p2; ++i)
                disp[size_t(i) + 1] = disp[size_t(i)] + cnt[size_t(i)];
            auto span = [&](int lo, int hi) { return disp[size_t(hi)] - disp[size_t(lo)]; };
            char *tmp = s.scratch_for(count, type);
            int lo = 0, hi = p2;
            for (int mask = p2 / 2; mask > 0; mask >>= 1) {
                const int partner = newrank ^ mask, mid = lo + (hi - lo) / 2;
                const bool lower = newrank < partner;
                const int klo = lower ? lo : mid, khi = lower ? mid : hi; // kept
                const int slo = lower ? mid : lo, shi = lower ? hi : mid; // sent
                char *keep = at(recvbuf, ptrdiff_t(disp[size_t(klo)]), type);
                if (from_sendbuf && mask == p2 / 2) {
                    // The partner's half straight into recvbuf, the own folded into it (the op
                    // is commutative).
                    s.recv(real(partner), keep, span(klo, khi), type);
                    s.send(real(partner), at(sendbuf, ptrdiff_t(disp[size_t(slo)]), type),
                           span(slo, shi), type);
                    s.reduce(at(sendbuf, ptrdiff_t(disp[size_t(klo)]), type), keep, span(klo, khi),
                             type);
                } else {
                    s.recv(real(partner), tmp, span(klo, khi), type);
                    s.send(real(partner), at(recvbuf, ptrdiff_t(disp[size_t(slo)]), type),
                           span(slo, shi), type);
                    s.reduce(tmp, keep, span(klo, khi), type);
                }
                s.next();
                lo = klo;
                hi = khi;
            }
            for (int mask = 1; mask < p2; mask <<= 1) {
                const int partner = newrank ^ mask;
                // The partner holds the window of the same size next to ours.
                const int width = hi - lo;
                const int plo = (newrank & mask) ? lo - width : hi, phi = plo + width;
                s.recv(real(partner), at(recvbuf, ptrdiff_t(disp[size_t(plo)]), type),
                       span(plo, phi), type);
                s.send(real(partner), at(recvbuf, ptrdiff_t(disp[size_t(lo)]), type), span(lo, hi),
                       type);
                s.next();
                lo = std::min(lo, plo);
                hi = std::max(hi, phi);
            }
        } else {
            // Recursive doubling; each side's data covers a contiguous range of ranks, the
            // lower range goes first (non-commutative ops keep MPI's order).
            char *data = static_cast<char *>(recvbuf);
            char *tmp = s.scratch_for(count, type);
            for (int mask = 1; mask < p2; mask <<= 1) {
                const int partner = newrank ^ mask;
                s.recv(real(partner), tmp, count, type);
                s.send(real(partner), data, count, type);
                if (partner < newrank) {
                    s.reduce(tmp, data, count, type);
                } else {
                    s.reduce(data, tmp, count, type);
                    std::swap(data, tmp);
                }
                s.next();
            }
            s.copy(data, recvbuf, count, type);
            s.next();
        }
    }
    // The folded ranks get the result back.
    if (me < 2 * rem) {
        if (me % 2 == 0)
            s.recv(me + 1, recvbuf, count, type);
        else
            s.send(me - 1, recvbuf, count, type);
        s.next();
    }
}

void build_gatherv(Sched &s, const void *sendbuf, size_t sendcount, weft_datatype_t *sendtype,
                   void *recvbuf, const size_t *recvcounts, const ptrdiff_t *displs,
                   weft_datatype_t *recvtype, int root, weft_comm_t *comm)
{
    const int n = weft_comm_size(comm), me = weft_comm_rank(comm);
    if (me != root) {
        s.send(root, sendbuf, sendcount, sendtype);
        s.next();
        return;
    }
    for (int r = 0; r < n; ++r)
        if (r != me)
            s.recv(r, at(recvbuf, displs[r], recvtype), recvcounts[r], recvtype);
    if (!in_place(sendbuf))
        s.copy(sendbuf, sendcount, sendtype, at(recvbuf, displs[me], recvtype), recvcounts[me],
               recvtype);
    s.next();
}

void build_scatterv(Sched &s, const void *sendbuf, const size_t *sendcounts,
                    const ptrdiff_t *displs, weft_datatype_t *sendtype, void *recvbuf,
                    size_t recvcount, weft_datatype_t *recvtype, int root, weft_comm_t *comm)
{
    const int n = weft_comm_size(comm), me = weft_comm_rank(comm);
    if (me != root) {
        s.recv(root, recvbuf, recvcount, recvtype);
        s.next();
        return;
    }
    for (int r = 0; r < n; ++r)
        if (r != me)
            s.send(r, at(sendbuf, displs[r], sendtype), sendcounts[r], sendtype);
    if (!in_place(recvbuf))
        s.copy(at(sendbuf, displs[me], sendtype), sendcounts[me], sendtype, recvbuf, recvcount,
               recvtype);
    s.next();
}

void build_allgatherv(Sched &s, const void *sendbuf, size_t sendcount, weft_datatype_t *sendtype,
                      void *recvbuf, const size_t *recvcounts, const ptrdiff_t *displs,
                      weft_datatype_t *recvtype, weft_comm_t *comm)
{
    const int n = weft_comm_size(comm), me = weft_comm_rank(comm);
    if (!in_place(sendbuf))
        s.copy(sendbuf, sendcount, sendtype, at(recvbuf, displs[me], recvtype), recvcounts[me],
               recvtype);
    s.next();
    // Ring: in step k, pass on the block of rank me - k, take that of me - k - 1. The own
    // block goes from the send buffer, not from the copy just made in recvbuf (reading
    // freshly written lines out of this core's cache is slow for the peer).
    const int right = (me + 1) % n, left = (me - 1 + n) % n;
    for (int k = 0; k < n - 1; ++k) {
        const int out = (me - k + n) % n, in = (me - k - 1 + n) % n;
        s.recv(left, at(recvbuf, displs[in], recvtype), recvcounts[in], recvtype);
        if (k == 0 && !in_place(sendbuf))
            s.send(right, sendbuf, sendcount, sendtype);
        else
            s.send(right, at(recvbuf, displs[out], recvtype), recvcounts[out], recvtype);
        s.next();
    }
}

void build_allgather(Sched &s, const void *sendbuf, size_t sendcount, weft_datatype_t *sendtype,
                     void *recvbuf, size_t recvcount, weft_datatype_t *recvtype, weft_comm_t *comm)
{
    const int n = weft_comm_size(comm), me = weft_comm_rank(comm);
    const size_t block = bytes_of(recvcount, recvtype);
    Alg alg = tuning.allgather;
    const char *why = "forced by coll_basic_allgather_algorithm";
    if (alg == Alg::automatic) {
        if (direct_for(n, block, &why)) {
            alg = Alg::direct;
        } else if (block <= tuning.allgather_bruck_max) {
            alg = Alg::bruck;
            why = "at most allgather_bruck_max bytes each";
        } else {
            alg = Alg::ring;
            why = "over allgather_bruck_max bytes each";
        }
    }
    if (n > 1)
        say_choice("allgather", n, block, alg, why);
    if (alg == Alg::direct && n > 1) {
        // Every block to every rank at once; the own block goes from the send buffer.
        const void *mine = in_place(sendbuf)
                               ? at(recvbuf, ptrdiff_t(me) * ptrdiff_t(recvcount), recvtype)
                               : sendbuf;
        for (int k = 1; k < n; ++k) {
            const int from = (me - k + n) % n;
            s.recv(from, at(recvbuf, ptrdiff_t(from) * ptrdiff_t(recvcount), recvtype), recvcount,
                   recvtype);
        }
        for (int k = 1; k < n; ++k) {
            if (in_place(sendbuf))
                s.send((me + k) % n, mine, recvcount, recvtype);
            else
                s.send((me + k) % n, mine, sendcount, sendtype);
        }
        if (!in_place(sendbuf))
            s.copy(sendbuf, sendcount, sendtype,
                   at(recvbuf, ptrdiff_t(me) * ptrdiff_t(recvcount), recvtype), recvcount,
                   recvtype);
        s.next();
        return;
    }
    if (alg == Alg::bruck && n > 2) {
        // Bruck: blocks gathered in rotated order (block i from rank me + i) in scratch, packed
        // (block bytes of data each, whatever the type's layout), the number held doubling
        // each round, then rotated into place.
        char *tmp = s.scratch(block * size_t(n));
        if (in_place(sendbuf))
            s.copy(at(recvbuf, ptrdiff_t(me) * ptrdiff_t(recvcount), recvtype), recvcount, recvtype,
                   tmp, block, type_bytes());
        else
            s.copy(sendbuf, sendcount, sendtype, tmp, block, type_bytes());
        s.next();
        for (int k = 1; k < n; k <<= 1) {
            const int m = std::min(k, n - k);
            s.recv((me + k) % n, tmp + size_t(k) * block, size_t(m) * block, type_bytes());
            s.send((me - k + n) % n, tmp, size_t(m) * block, type_bytes());
            s.next();
        }
        for (int i = 0; i < n; ++i)
            s.copy(tmp + size_t(i) * block, block, type_bytes(),
                   at(recvbuf, ptrdiff_t((me + i) % n) * ptrdiff_t(recvcount), recvtype), recvcount,
                   recvtype);
        s.next();
        return;
    }
    std::vector<size_t> counts(size_t(n), recvcount);
    std::vector<ptrdiff_t> displs(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
        displs[size_t(i)] = ptrdiff_t(i) * ptrdiff_t(recvcount);
    build_allgatherv(s, sendbuf, sendcount, sendtype, recvbuf, counts.data(), displs.data(),
                     recvtype, comm);
}

void build_alltoallw(Sched &s, const void *sendbuf, const size_t *sendcounts,
                     const ptrdiff_t *sdispls, weft_datatype_t *const *sendtypes, void *recvbuf,
                     const size_t *recvcounts, const ptrdiff_t *rdispls,
                     weft_datatype_t *const *recvtypes, weft_comm_t *comm)
{
    const int n = weft_comm_size(comm), me = weft_comm_rank(comm);
    if (in_place(sendbuf)) {
        // Send from a packed copy of what recvbuf held (each block's data, whatever its type's
        // layout), so that no block is overwritten before it left.
        std::vector<size_t> at(static_cast<size_t>(n) + 1, 0);
        for (int r = 0; r < n; ++r)
            at[size_t(r) + 1] =
                at[size_t(r)] + (r == me ? 0 : bytes_of(recvcounts[r], recvtypes[r]));
        char *copy = s.scratch(at[size_t(n)]);
        for (int r = 0; r < n; ++r)
            if (r != me)
                s.copy(static_cast<char *>(recvbuf) + rdispls[r], recvcounts[r], recvtypes[r],
                       copy + at[size_t(r)], at[size_t(r) + 1] - at[size_t(r)], type_bytes());
        s.next();
        for (int k = 1; k < n; ++k) {
            const int to = (me + k) % n, from = (me - k + n) % n;
            s.recv(from, static_cast<char *>(recvbuf) + rdispls[from], recvcounts[from],
                   recvtypes[from]);
            s.send(to, copy + at[size_t(to)], at[size_t(to) + 1] - at[size_t(to)], type_bytes());
            s.next();
        }
        return;
    }
    const char *src = static_cast<const char *>(sendbuf);
    s.copy(src + sdispls[me], sendcounts[me], sendtypes[me],
           static_cast<char *>(recvbuf) + rdispls[me], recvcounts[me], recvtypes[me]);
    s.next();
    // Pairwise: in step k, send to me + k and receive from me - k.
    for (int k = 1; k < n; ++k) {
        const int to = (me + k) % n, from = (me - k + n) % n;
        s.recv(from, static_cast<char *>(recvbuf) + rdispls[from], recvcounts[from],
               recvtypes[from]);
        s.send(to, src + sdispls[to], sendcounts[to], sendtypes[to]);
        s.next();
    }
}

void build_alltoall(Sched &s, const void *sendbuf, size_t sendcount, weft_datatype_t *sendtype,
                    void *recvbuf, size_t recvcount, weft_datatype_t *recvtype, weft_comm_t *comm)
{
    // Not in place (the caller takes alltoallw's path for that): block i of sendbuf goes to
    // rank i, block i of recvbuf comes from it.
    const int n = weft_comm_size(comm), me = weft_comm_rank(comm);
    Alg alg = tuning.alltoall;
    const char *why = "forced by coll_basic_alltoall_algorithm";
    if (alg == Alg::automatic) {
        const bool direct = direct_for(n, bytes_of(sendcount, sendtype), &why);
        alg = direct ? Alg::direct : Alg::pairwise;
        if (!direct)
            why = "beyond direct_max_ranks or direct_max_bytes";
    }
    if (n > 1)
        say_choice("alltoall", n, bytes_of(sendcount, sendtype), alg, why);
    auto sblock = [&](int r) { return at(sendbuf, ptrdiff_t(r) * ptrdiff_t(sendcount), sendtype); };
    auto rblock = [&](int r) { return at(recvbuf, ptrdiff_t(r) * ptrdiff_t(recvcount), recvtype); };
    for (int k = 1; k < n; ++k) {
        const int to = (me + k) % n, from = (me - k + n) % n;
        s.recv(from, rblock(from), recvcount, recvtype);
        s.send(to, sblock(to), sendcount, sendtype);
        if (alg != Alg::direct)
            s.next();
    }
    s.copy(sblock(me), sendcount, sendtype, rblock(me), recvcount, recvtype);
    s.next();
}

void build_reduce_scatter(Sched &s, const void *sendbuf, void *recvbuf, const size_t *recvcounts,
                          weft_datatype_t *type, weft_op_t *op, weft_comm_t *comm)
{
    // Reduce everything to rank 0 (in rank order), then scatter the blocks.
    const int n = weft_comm_size(comm), me = weft_comm_rank(comm);
    std::vector<ptrdiff_t> displs(static_cast<size_t>(n));
    size_t total = 0;
    for (int i = 0; i < n; ++i) {
        displs[size_t(i)] = ptrdiff_t(total);
        total += recvcounts[i];
    }
    const void *mine = in_place(sendbuf) ? recvbuf : sendbuf;
    char *full = me == 0 ? s.scratch_for(total, type) : nullptr;
    build_reduce(s, mine, full, total, type, op, 0, comm);
    s.next();
    build_scatterv(s, full, recvcounts, displs.data(), type, recvbuf, recvcounts[me], type, 0,
                   comm);
}

void build_scan(Sched &s, const void *sendbuf, void *recvbuf, size_t count, weft_datatype_t *type,
                weft_comm_t *comm, bool exclusive)
{
    // Recursive doubling: after the round of distance k, partial covers ranks
    // [me - 2k + 1, me]; what arrives from me - k is lower and goes first.
    const int n = weft_comm_size(comm), me = weft_comm_rank(comm);
    const void *mine = in_place(sendbuf) ? recvbuf : sendbuf;
    char *partial = exclusive ? s.scratch_for(count, type) : static_cast<char *>(recvbuf);
    s.copy(mine, partial, count, type);
    s.next();
    bool have_excl = false;
    for (int k = 1; k < n; k <<= 1) {
        char *tmp = nullptr;
        if (me - k >= 0) {
            tmp = s.scratch_for(count, type);
            s.recv(me - k, tmp, count, type);
        }
        if (me + k < n)
            s.send(me + k, partial, count, type);
        if (tmp) {
            if (exclusive) {
                // recvbuf = what arrived op recvbuf (the ranks before those already in it).
                if (have_excl) {
                    s.reduce(tmp, recvbuf, count, type);
                } else {
                    s.copy(tmp, recvbuf, count, type);
                    have_excl = true;
                }
            }
            s.reduce(tmp, partial, count, type);
        }
        s.next();
    }
}

} // namespace weft::coll::basic
