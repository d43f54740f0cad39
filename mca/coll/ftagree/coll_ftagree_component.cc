// coll/ftagree: MPIX_Comm_agree and MPIX_Comm_iagree that complete despite process failures
// (ULFM), for intracommunicators when fault tolerance is on (README.md).
//
// Two ways, over a perfect failure detector (the runtime: only a process that ended is
// declared failed):
//
// - The tree (the failure-free path, logarithmic). Agreement k runs on a k-nomial tree over the
//   members that agreement k-1 did not agree failed (the same set at every member: agreements
//   are uniform). Parts (flag, known failures, acknowledged failures) are combined up the tree;
//   the root decides and the decision goes down it.
// - The rotating coordinator (linear, after a failure). A member goes over to it for agreement
//   k when it knows a member of k's tree failed, when it started k before k-1 was decided here,
//   or when it hears that another member went over. It sends its part (with its decision, if it
//   has one) to the coordinator, the lowest rank it does not know failed; a member that becomes
//   coordinator tells every member to go over, waits until each member contributed or is known
//   failed, and decides: a decision carried by a part (the tree's, or an earlier coordinator's)
//   if there is one, else the AND of the flags, every failure contributed or known, and what
//   every contributor acknowledged. A member that learns its coordinator failed contributes
//   again to the next one; it follows only its current coordinator's decision.
//
// While the tree's root lives it is also the coordinator (every member below it failed), so it
// decides once; after it fails, a member that has the tree's decision carries it to the next
// coordinator, which adopts it. So every member that returns gets the same decision, and
// nothing waits for a dead process. Members keep every undecided agreement and the last kKeep
// decided ones, since a coordinator may still need a member's part of one after the member
// went on. The program's agreements and the library's (coll_iagree_group, MPIX_Comm_ishrink)
// are numbered apart (Module::next).
// Every message travels on MPI_COMM_WORLD, on a tag of the fault-tolerant protocols, naming its
// communicator.
#include <coll/coll.h>
#include <pml/pml.h>
#include <weft/comm.h>
#include <weft/mca.h>
#include <weft/op.h>
#include <weft/output.h>
#include <weft/request.h>
#include <weft/runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <deque>
#include <list>
#include <string>
#include <vector>

extern "C" {
__attribute__((
    visibility("default"))) extern const weft_coll_component_t mca_coll_ftagree_component;
}

namespace weft::coll::ftagree {

namespace {

weft_mca_param_t *g_params[2] = {};
weft_mca_param_t *&p_priority = g_params[0];
weft_mca_param_t *&p_radix = g_params[1];

// A fault-tolerant protocol's tag: neither a failure nor a revoke stops it.
constexpr int kTag = WEFT_FT_TAG_FIRST - 2;
// Decided agreements a member keeps: a member is never further ahead of another than the
// agreements it has under way at once (MPIX_Comm_iagree without waiting), plus one.
constexpr size_t kKeep = 8;
// The two lines of agreements (Module::next).
enum Line : uint64_t { line_program = 0, line_library = 1 };
Line line_of(uint64_t seq) { return Line(seq & 1); }
uint64_t number_of(uint64_t seq) { return seq >> 1; }
// Messages: the coordinator's (contrib: a part to the coordinator; decide: its decision; linear:
// go over to the coordinator) and the tree's (up: the parts of a subtree; down: the decision).
enum : uint8_t { msg_contrib = 1, msg_decide = 2, msg_linear = 3, msg_up = 4, msg_down = 5 };

struct Header {
    uint8_t type;
    uint8_t decided; // msg_contrib: the sender has a decision (the bitmaps and flag are it)
    uint16_t reserved;
    uint32_t cid;  // the communicator agreeing (the messages travel on MPI_COMM_WORLD)
    uint64_t flag; // two 32-bit lanes (Module::lane)
    uint64_t seq;
    uint32_t words; // each bitmap's 64-bit words (both follow the header: failed, then acked)
    uint32_t reserved2;
};
static_assert(sizeof(Header) == 32, "part of the wire format");

using Bits = std::vector<uint64_t>;

bool test(const Bits &b, int r) { return (b[size_t(r) / 64] >> (r % 64)) & 1; }
void set(Bits &b, int r) { b[size_t(r) / 64] |= uint64_t(1) << (r % 64); }

struct Agreement {
    uint64_t seq = 0;
    // This member's part: its contribution, then its decision.
    uint64_t flag = ~uint64_t(0);
    Bits failed, acked;
    bool decided = false;
    bool linear = false; // gone over to the coordinator (else on the tree)
    // On the tree: its members (in rank order); this member's parent (-1 at the root) and
    // children as the failures known here shape the tree now; whose parts came (by member,
    // from any sender: the tree changes under failures); the parent the parts combined so far
    // went to, and the parent told of the decision.
    std::vector<int> tree;
    int parent = -1;
    std::vector<int> children;
    std::vector<uint8_t> heard;
    int sent_to = -2;
    int told = -2;
    // With the coordinator: whom this member's part went to last.
    int coordinator = -1;
    // As coordinator: who has contributed, and what.
    bool coordinating = false;
    std::vector<uint8_t> have;
    uint64_t acc_flag = ~uint64_t(0); // (on the tree: the subtree's parts combined)
    Bits acc_failed, acc_acked;
    bool adopt = false; // a contribution carried a decision: it is the decision
    uint64_t adopt_flag = 0;
    Bits adopt_failed, adopt_acked;
    // An MPIX_Comm_iagree's request and where its results go.
    weft_request_t *request = nullptr;
    int *out_flag = nullptr;
    weft_group_t **out_group = nullptr;
};

struct Module {
    weft_coll_module_t base; // first: the framework sees this
    weft_comm_t *comm = nullptr;
    // The members, by world rank, and this process's index among them. An intracommunicator's
    // in rank order. An intercommunicator agrees over both groups at once: the group holding
    // the lower world rank first, each in rank order. Each group's flags travel in a 32-bit lane
    // of the 64-bit flag (the first group's in the low half), the other lane all ones, so one
    // AND gives both groups' results; a member takes the remote group's lane.
    std::vector<int> world;
    int me = 0;
    int lane = 0; // this member's group's lane
    bool inter = false;
    int first_size = 0; // the first group's members
    int n = 0;
    size_t words = 0;
    // Two lines of agreements, each numbered on its own (an agreement's seq is its number times
    // 2 plus its line): coll_agree and coll_iagree's (the program's), and coll_iagree_group's
    // (the library's own, MPIX_Comm_ishrink), so that a shrink progressing in the background
    // never takes a number the program's next agreement takes elsewhere.
    uint64_t next[2] = {1, 1};
    // Per line, the last agreement decided here and the members it agreed failed: the next
    // agreement's tree leaves them out.
    uint64_t last_decided[2] = {0, 0};
    Bits last_failed[2];
    // Agreements started here, oldest first: every undecided one, and the newest kKeep decided
    // (a coordinator may still need this member's part of one after the member went on).
    std::deque<Agreement> recent;
    std::vector<std::string> future; // messages this member cannot take yet (sender appended)
    // Messages sent and not yet complete, with their bytes (no agreement waits for them; a send
    // to a process that fails ends in error; disable waits for those to live peers).
    std::list<std::pair<weft_request_t *, std::string>> outbox;
    uint64_t epoch = 0; // the runtime's failure epoch this module last looked at
};

std::vector<Module *> g_modules;
bool g_progress_registered = false;
size_t g_sends = 0; // messages in every module's outbox
// Communicators an agreement's request held until it completed: released from progress (the
// last release frees the communicator, and its module with it).
std::vector<weft_comm_t *> g_release;
// Context ids of the last kFreed communicators freed here: their late messages are dropped,
// not kept (ids are never used twice in a process). Bounded: a message for an older one is
// kept with the early ones, which are bounded too.
constexpr size_t kFreed = 1024;
std::deque<uint32_t> g_freed;
uint64_t g_epoch = 0; // the runtime's failure epoch progress last looked at
// Every agreement's messages travel on MPI_COMM_WORLD (context id 0, never destroyed), on one
// receive posted there: a receive posted on each communicator would hold it alive.
weft_comm_t *g_world = nullptr;
weft_request_t *g_listen = nullptr;
std::vector<char> g_in;
// Messages for communicators whose module is not enabled here yet, with their sender's world
// rank appended (bounded: they come from peers).
std::vector<std::string> g_early;

Module *self(weft_coll_module_t *m) { return reinterpret_cast<Module *>(m); }
weft_pml_module_t *pml() { return weft_pml_selected(); }

bool failed(const Module *m, int r) { return weft_runtime_proc_failed(m->world[size_t(r)]) != 0; }

int lowest_live(const Module *m)
{
    for (int r = 0; r < m->n; ++r)
        if (!failed(m, r))
            return r;
    return -1;
}

Bits known_failed(const Module *m)
{
    Bits b(m->words, 0);
    for (int r = 0; r < m->n; ++r)
        if (failed(m, r))
            set(b, r);
    return b;
}

void send_msg(Module *m, int to, uint8_t type, bool decided, uint64_t flag, uint64_t seq,
              const Bits &failed_bits, const Bits &acked_bits)
{
    if (failed(m, to) || !g_world)
        return;
    std::string msg(sizeof(Header) + 16 * m->words, '\0');
    Header h{.type = type,
             .decided = uint8_t(decided),
             .reserved = 0,
             .cid = weft_comm_cid(m->comm),
             .flag = flag,
             .seq = seq,
             .words = uint32_t(m->words),
             .reserved2 = 0};
    std::memcpy(msg.data(), &h, sizeof h);
    std::memcpy(msg.data() + sizeof h, failed_bits.data(), 8 * m->words);
    std::memcpy(msg.data() + sizeof h + 8 * m->words, acked_bits.data(), 8 * m->words);
    m->outbox.emplace_back(nullptr, std::move(msg));
    auto &[r, bytes] = m->outbox.back();
    if (pml()->pml_isend(pml(), bytes.data(), bytes.size(), weft_datatype_bytes(),
                         m->world[size_t(to)], kTag, WEFT_SEND_STANDARD, g_world,
                         &r) != WEFT_SUCCESS ||
        !r)
        m->outbox.pop_back();
    else
        ++g_sends;
}

void send_decision(Module *m, const Agreement &a, int to)
{
    send_msg(m, to, msg_decide, true, a.flag, a.seq, a.failed, a.acked);
}

// Give back the sends that completed.
void reap(Module *m)
{
    for (auto it = m->outbox.begin(); it != m->outbox.end();)
        if (it->first->complete) {
            it->first->pml_free(it->first);
            it = m->outbox.erase(it);
            --g_sends;
        } else {
            ++it;
        }
}

void decide(Module *m, Agreement &a, uint64_t flag, const Bits &f, const Bits &ack);
void handle(Module *m, int from, const char *msg, size_t len);

// Take again the kept messages of agreement seq (those still not for now are kept again).
void replay(Module *m, uint64_t seq)
{
    std::vector<std::string> kept;
    kept.swap(m->future);
    for (const std::string &msg : kept) {
        Header h;
        std::memcpy(&h, msg.data(), sizeof h);
        if (h.seq != seq) {
            m->future.push_back(msg);
            continue;
        }
        int from;
        std::memcpy(&from, msg.data() + msg.size() - sizeof from, sizeof from);
        handle(m, from, msg.data(), msg.size() - sizeof from);
    }
}

void keep(Module *m, int from, const char *msg, size_t len)
{
    if (m->future.size() >= 4096) // bounded: they come from peers
        return;
    std::string kept(msg, len);
    kept.append(reinterpret_cast<const char *>(&from), sizeof from);
    m->future.push_back(std::move(kept));
}

void combine(Module *m, Agreement &a, uint64_t flag, const Bits &f, const Bits &ack)
{
    a.acc_flag &= flag;
    for (size_t w = 0; w < m->words; ++w) {
        a.acc_failed[w] |= f[w];
        a.acc_acked[w] &= ack[w];
    }
}

// The decision from the combined parts: the AND of the flags, every failure contributed or
// known here, what every contributor acknowledged.
void decide_combined(Module *m, Agreement &a)
{
    Bits f = known_failed(m);
    for (size_t w = 0; w < m->words; ++w)
        f[w] |= a.acc_failed[w];
    decide(m, a, a.acc_flag, f, a.acc_acked);
}

// ---------------------------------------------------------------- the coordinator

// As coordinator: decide once every member has contributed or failed.
void try_finish(Module *m, Agreement &a)
{
    if (!a.coordinating || a.decided)
        return;
    for (int r = 0; r < m->n; ++r)
        if (!a.have[size_t(r)] && !failed(m, r))
            return;
    if (a.adopt)
        decide(m, a, a.adopt_flag, a.adopt_failed, a.adopt_acked);
    else
        decide_combined(m, a);
}

// A contribution to agreement a from member `from` (this member's own included).
void contribute(Module *m, Agreement &a, int from, bool decided, uint64_t flag, const Bits &f,
                const Bits &ack)
{
    if (!a.coordinating || a.have[size_t(from)])
        return;
    a.have[size_t(from)] = 1;
    if (decided && !a.adopt) {
        a.adopt = true;
        a.adopt_flag = flag;
        a.adopt_failed = f;
        a.adopt_acked = ack;
    }
    combine(m, a, flag, f, ack);
}

// Send this member's part of a to the coordinator it sees now (itself: start coordinating,
// and tell every member to go over).
void route(Module *m, Agreement &a)
{
    const int c = lowest_live(m);
    const int me = m->me;
    if (c < 0 || c == a.coordinator)
        return;
    a.coordinator = c;
    if (c != me) {
        send_msg(m, c, msg_contrib, a.decided, a.flag, a.seq, a.failed, a.acked);
        return;
    }
    a.coordinating = true;
    a.have.assign(size_t(m->n), 0);
    a.acc_flag = ~uint64_t(0);
    a.acc_failed.assign(m->words, 0);
    a.acc_acked.assign(m->words, ~uint64_t(0));
    for (int r = 0; r < m->n; ++r)
        if (r != me)
            send_msg(m, r, msg_linear, false, 0, a.seq, a.failed, a.acked);
    if (a.decided) { // on the tree, or a coordinator's before: that is the decision
        for (int r = 0; r < m->n; ++r)
            if (r != me)
                send_decision(m, a, r);
        return;
    }
    contribute(m, a, c, a.decided, a.flag, a.failed, a.acked);
    replay(m, a.seq); // what others sent before this member knew it would coordinate
    try_finish(m, a);
}

void go_linear(Module *m, Agreement &a)
{
    if (a.linear)
        return;
    a.linear = true;
    route(m, a);
}

// ---------------------------------------------------------------- the tree

// The tree under failures (as ERA, Herault et al., SC15, repairs its tree): a live member's
// parent is its nearest live ancestor on the k-nomial tree; a member with no live ancestor
// (the root failed) hangs from the lowest live member, which is the root now. The parts
// combine with AND and OR, which take a part twice without harm, so a member whose parent
// changed sends its part again to the new one; a member that decided tells a new parent and
// new children the decision. Every member learns of every failure (mpirun tells them all), so
// their trees become the same; until then a decision is taken only from the parent this member
// sees, so that no member takes a decision after its part went to another parent undecided.

// Position p's parent on the k-nomial tree of radix k rooted at position 0: p with its lowest
// nonzero base-k digit cleared (-1 for the root).
int64_t knomial_parent(size_t p, size_t k)
{
    for (size_t unit = 1; p != 0; unit *= k)
        if (const size_t digit = p / unit % k; digit != 0)
            return int64_t(p - digit * unit);
    return -1;
}

// Position p's parent in the tree as failures known here shape it (-1: p is the root).
int64_t live_parent(const Module *m, const Agreement &a, size_t p, size_t k)
{
    int64_t q = knomial_parent(p, k);
    while (q >= 0 && failed(m, a.tree[size_t(q)]))
        q = knomial_parent(size_t(q), k);
    if (q >= 0)
        return q;
    for (size_t l = 0; l < a.tree.size(); ++l)
        if (!failed(m, a.tree[l]))
            return l == p ? -1 : int64_t(l);
    return -1;
}

size_t radix() { return size_t(std::max<int64_t>(2, weft_mca_param_int(p_radix))); }

// This member's parent and children now.
void tree_shape(const Module *m, Agreement &a)
{
    const size_t k = radix(), n = a.tree.size(),
                 me =
                     size_t(std::lower_bound(a.tree.begin(), a.tree.end(), m->me) - a.tree.begin());
    a.children.clear();
    if (std::none_of(a.tree.begin(), a.tree.end(), [&](int r) { return failed(m, r); })) {
        // The k-nomial tree itself: position p's children set each base-k digit below its
        // lowest nonzero one.
        const int64_t p = knomial_parent(me, k);
        a.parent = p < 0 ? -1 : a.tree[size_t(p)];
        for (size_t unit = 1; unit < n && (me / unit) % k == 0; unit *= k) {
            for (size_t j = 1; j < k && me + j * unit < n; ++j)
                a.children.push_back(a.tree[me + j * unit]);
            if (unit > n / k)
                break;
        }
        return;
    }
    const int64_t p = live_parent(m, a, me, k);
    a.parent = p < 0 ? -1 : a.tree[size_t(p)];
    for (size_t c = 0; c < n; ++c)
        if (c != me && !failed(m, a.tree[c]) && live_parent(m, a, c, k) == int64_t(me))
            a.children.push_back(a.tree[c]);
}

bool in_tree(const Agreement &a, int r)
{
    return std::binary_search(a.tree.begin(), a.tree.end(), r);
}

// Every child's part is in: up to the parent (again, if the parent changed), or decide at the
// root.
void tree_try_up(Module *m, Agreement &a)
{
    if (a.linear || a.decided || a.sent_to == a.parent)
        return;
    for (int c : a.children)
        if (!a.heard[size_t(c)])
            return;
    if (a.parent < 0) {
        decide_combined(m, a);
        return;
    }
    a.sent_to = a.parent;
    // With the failures known here now: a child that failed before its part came is one.
    Bits f = known_failed(m);
    for (size_t w = 0; w < m->words; ++w)
        f[w] |= a.acc_failed[w];
    send_msg(m, a.parent, msg_up, false, a.acc_flag, a.seq, f, a.acc_acked);
}

// A decided member tells its parent (which may be a new root that does not know it yet).
void tell_parent(Module *m, Agreement &a)
{
    if (a.parent >= 0 && a.told != a.parent) {
        a.told = a.parent;
        send_msg(m, a.parent, msg_up, true, a.flag, a.seq, a.failed, a.acked);
    }
}

// Agreement a on the k-nomial tree over the members agreement a-1 did not agree failed.
void tree_start(Module *m, Agreement &a)
{
    for (int r = 0; r < m->n; ++r)
        if (!test(m->last_failed[line_of(a.seq)], r))
            a.tree.push_back(r);
    if (!in_tree(a, m->me)) {
        go_linear(m, a);
        return;
    }
    a.heard.assign(size_t(m->n), 0);
    a.acc_flag = a.flag;
    a.acc_failed = a.failed;
    a.acc_acked = a.acked;
    tree_shape(m, a);
    tree_try_up(m, a);
}

// Failures learnt: the tree again; a new parent gets this member's part or decision, new
// children the decision.
void tree_repair(Module *m, Agreement &a)
{
    const std::vector<int> before = a.children;
    tree_shape(m, a);
    if (!a.decided) {
        tree_try_up(m, a);
        return;
    }
    tell_parent(m, a);
    for (int c : a.children)
        if (std::find(before.begin(), before.end(), c) == before.end())
            send_msg(m, c, msg_down, true, a.flag, a.seq, a.failed, a.acked);
}

// A part from member `from` (a subtree's, or a decision a member passes up).
void tree_up(Module *m, Agreement &a, int from, bool decided, uint64_t flag, const Bits &f,
             const Bits &ack)
{
    if (!in_tree(a, from))
        return;
    if (a.decided) { // a member that sees this one as its parent now: it gets the decision
        send_msg(m, from, msg_down, true, a.flag, a.seq, a.failed, a.acked);
        return;
    }
    if (decided) { // the decision, from a member that had it from its parent before
        decide(m, a, flag, f, ack);
        tell_parent(m, a);
        return;
    }
    if (!a.heard[size_t(from)]) {
        a.heard[size_t(from)] = 1;
        combine(m, a, flag, f, ack);
    }
    tree_try_up(m, a);
}

// ---------------------------------------------------------------- both

void complete_request(Module *m, Agreement &a);

void decide(Module *m, Agreement &a, uint64_t flag, const Bits &f, const Bits &ack)
{
    if (!a.decided) {
        a.decided = true;
        a.flag = flag;
        a.failed = f;
        a.acked = ack;
        // What the others saw fail, this member now knows too (the detector is perfect: they
        // are gone), so that acknowledging after the agreement covers them.
        for (int r = 0; r < m->n; ++r)
            if (test(f, r) && !failed(m, r))
                weft_runtime_report_failure(m->world[size_t(r)],
                                            "agreed failed by MPIX_Comm_agree");
        if (const Line l = line_of(a.seq); number_of(a.seq) > m->last_decided[l]) {
            m->last_decided[l] = number_of(a.seq);
            m->last_failed[l] = f;
        }
    }
    if (!a.linear) // down the tree
        for (int c : a.children)
            send_msg(m, c, msg_down, true, a.flag, a.seq, a.failed, a.acked);
    else if (a.coordinating) // everyone gets it, the members that decided already too
        for (int r = 0; r < m->n; ++r)
            if (r != m->me)
                send_decision(m, a, r);
    complete_request(m, a);
}

Agreement *find(Module *m, uint64_t seq)
{
    for (Agreement &a : m->recent)
        if (a.seq == seq)
            return &a;
    return nullptr;
}

void handle(Module *m, int from, const char *msg, size_t len)
{
    Header h;
    if (len < sizeof h)
        return;
    std::memcpy(&h, msg, sizeof h);
    if (h.words != m->words || len != sizeof h + 16 * m->words || from < 0 || from >= m->n ||
        h.cid != weft_comm_cid(m->comm) || h.type < msg_contrib || h.type > msg_down) {
        weft_output(WEFT_OUTPUT_ERROR,
                    "coll/ftagree: a malformed agreement message from rank %d "
                    "(%zu bytes) was dropped",
                    from, len);
        return;
    }
    Agreement *a = find(m, h.seq);
    if (!a) {
        if (number_of(h.seq) >= m->next[line_of(h.seq)]) // not started here yet
            keep(m, from, msg, len);
        return; // else: one long over everywhere
    }
    Bits f(m->words), ack(m->words);
    std::memcpy(f.data(), msg + sizeof h, 8 * m->words);
    std::memcpy(ack.data(), msg + sizeof h + 8 * m->words, 8 * m->words);
    if (m->n % 64) { // no bits past the last member, whatever the peer sent
        const uint64_t mask = (uint64_t(1) << (m->n % 64)) - 1;
        f.back() &= mask;
        ack.back() &= mask;
    }
    switch (h.type) {
    case msg_linear: go_linear(m, *a); return;
    case msg_up:
        if (!a->linear)
            tree_up(m, *a, from, h.decided != 0, h.flag, f, ack);
        return;
    case msg_down:
        if (!a->linear && from == a->parent && !a->decided) {
            a->told = a->parent; // it knows
            decide(m, *a, h.flag, f, ack);
        }
        return;
    case msg_decide:
        // Only the coordinator this member follows decides for it.
        if (a->linear && from == a->coordinator && !a->decided)
            decide(m, *a, h.flag, f, ack);
        return;
    default: // msg_contrib: some member went over to the coordinator
        go_linear(m, *a);
        if (a->decided) // a coordinator that came after this member decided: tell it
            send_decision(m, *a, from);
        if (!a->coordinating) {
            keep(m, from, msg, len);
            return;
        }
        contribute(m, *a, from, h.decided, h.flag, f, ack);
        try_finish(m, *a);
    }
}

void post_listen()
{
    g_listen = nullptr;
    if (weft_status_t rc = pml()->pml_irecv(pml(), g_in.data(), g_in.size(), weft_datatype_bytes(),
                                            WEFT_ANY_SOURCE, kTag, g_world, &g_listen);
        rc != WEFT_SUCCESS)
        weft_output(WEFT_OUTPUT_ERROR,
                    "coll/ftagree: cannot post the receive of agreement messages (%s): "
                    "MPIX_Comm_agree will not complete",
                    weft_status_string(rc));
}

// A message from world rank `world`: to its communicator's module, or kept for it.
void dispatch(int world, const std::string &msg)
{
    Header h;
    if (msg.size() < sizeof h)
        return;
    std::memcpy(&h, msg.data(), sizeof h);
    for (Module *m : g_modules) {
        if (weft_comm_cid(m->comm) != h.cid)
            continue;
        const auto at = std::find(m->world.begin(), m->world.end(), world);
        const int from = at == m->world.end() ? -1 : int(at - m->world.begin());
        handle(m, from, msg.data(), msg.size());
        return;
    }
    if (std::find(g_freed.begin(), g_freed.end(), h.cid) != g_freed.end())
        return; // for a communicator freed here: late (a decision it no longer needs)
    if (g_early.size() < 4096)
        g_early.push_back(msg + std::string(reinterpret_cast<const char *>(&world), sizeof world));
}

int progress_listen()
{
    int n = 0;
    while (g_listen && g_listen->complete) {
        weft_request_t *r = g_listen;
        const int from = r->status.source;
        const bool ok = r->status.error == WEFT_SUCCESS;
        const std::string msg(g_in.data(), std::min(size_t(r->status.count), g_in.size()));
        r->pml_free(r);
        post_listen();
        if (ok)
            dispatch(from, msg);
        ++n;
    }
    return n;
}

// Progress: messages, and coordinators that failed.
int progress_module(Module *m)
{
    int n = 0;
    if (!m->outbox.empty())
        reap(m);
    if (const uint64_t e = weft_runtime_failure_epoch(); e != m->epoch) {
        m->epoch = e;
        for (Agreement &a : m->recent) {
            if (!a.linear)
                tree_repair(m, a); // a member of the tree failed: the tree changes
            else if (a.linear && a.coordinator >= 0 && failed(m, a.coordinator))
                route(m, a);
            try_finish(m, a);
        }
        ++n;
    }
    return n;
}

int progress()
{
    // The fast way out, from every progress call of the job: nothing arrived, nothing is being
    // sent, no failure since the last look, no communicator to give back.
    const uint64_t e = weft_runtime_failure_epoch();
    if ((!g_listen || !g_listen->complete) && g_sends == 0 && e == g_epoch && g_release.empty())
        [[likely]]
        return 0;
    g_epoch = e;
    int n = progress_listen();
    for (size_t i = 0; i < g_modules.size(); ++i)
        n += progress_module(g_modules[i]);
    // Last: giving one back may free the communicator, and its module.
    std::vector<weft_comm_t *> done;
    done.swap(g_release);
    for (weft_comm_t *c : done)
        weft_comm_release(c);
    return n + int(done.size());
}

weft_group_t *failed_group(const Module *m, const Bits &f)
{
    std::vector<int> world;
    for (int r = 0; r < m->n; ++r)
        if (test(f, r))
            world.push_back(m->world[size_t(r)]);
    return world.empty() ? nullptr : weft_group_new(world.data(), int(world.size()));
}

// The uniform error: a process agreed failed that not every contributor acknowledged.
weft_status_t verdict(const Module *m, const Agreement &a)
{
    for (size_t w = 0; w < m->words; ++w)
        if (a.failed[w] & ~a.acked[w])
            return WEFT_ERR_PROC_FAILED;
    return WEFT_SUCCESS;
}

void complete_request(Module *m, Agreement &a)
{
    if (!a.request)
        return;
    weft_request_t *r = a.request;
    a.request = nullptr;
    // The AND of the flags of this member's group (an intracommunicator's one lane) or of the
    // remote group (an intercommunicator's other lane).
    // The library's agreements (MPIX_Comm_shrink's) need one answer in both groups: the AND
    // of both lanes.
    const int lane = m->inter ? 1 - m->lane : m->lane;
    *a.out_flag = m->inter && line_of(a.seq) == line_library
                      ? int(uint32_t(a.flag) & uint32_t(a.flag >> 32))
                      : int(uint32_t(a.flag >> (32 * lane)));
    if (a.out_group)
        *a.out_group = failed_group(m, a.failed);
    r->status.error = verdict(m, a);
    r->active = false;
    r->complete = true;
    g_release.push_back(m->comm);
    if (r->freed) // by MPI_Request_free while under way
        delete r;
}

// Start the next agreement of line l with this member's part.
Agreement &start(Module *m, Line l, int flag, weft_group_t *acked_group)
{
    // Forget the oldest decided ones beyond kKeep, and what was kept for agreements over.
    size_t decided = 0;
    for (const Agreement &a : m->recent)
        decided += a.decided && !a.request;
    while (decided > kKeep && m->recent.front().decided && !m->recent.front().request) {
        m->recent.pop_front();
        --decided;
    }
    std::erase_if(m->future, [&](const std::string &msg) {
        Header h;
        std::memcpy(&h, msg.data(), sizeof h);
        return number_of(h.seq) < m->next[line_of(h.seq)] && !find(m, h.seq);
    });
    m->recent.emplace_back();
    Agreement &a = m->recent.back();
    a.seq = m->next[l]++ << 1 | l;
    const uint64_t other = m->lane ? 0xffffffffu : ~uint64_t(0) << 32;
    a.flag = uint64_t(uint32_t(flag)) << (32 * m->lane) | other;
    a.failed = known_failed(m);
    a.acked.assign(m->words, 0);
    for (int i = 0; acked_group && i < weft_group_size(acked_group); ++i) {
        const auto at =
            std::find(m->world.begin(), m->world.end(), weft_group_world_rank(acked_group, i));
        if (at != m->world.end())
            set(a.acked, int(at - m->world.begin()));
    }
    // On an intercommunicator a member acknowledges the remote group's failures (its failure
    // queries name that group's): for its own group's it contributes no objection, and the
    // remote group's members decide whether those are acknowledged.
    if (m->inter)
        for (int r = 0; r < m->n; ++r)
            if ((r < m->first_size) == (m->me < m->first_size))
                set(a.acked, r);
    return a;
}

void free_request(weft_request_t *r)
{
    if (r->complete)
        delete r;
    else
        r->freed = true; // deleted when its agreement completes (complete_request)
}

weft_status_t no_cancel(weft_request_t *) { return WEFT_SUCCESS; } // agreements are not cancelled

// An agreement under way, reported through *request; the failed group goes to *out_group (if
// not NULL) when it completes.
// The service starts with this process's first agreement: until then nothing here needs it
// (messages for agreements wait in the PML as unexpected ones), and a program that never agrees
// pays nothing for it: no receive posted on MPI_COMM_WORLD, no progress function. From then on
// it stays (a coordinator may need this member's part of an agreement long over here).
weft_status_t start_service()
{
    if (!g_progress_registered) {
        if (weft_status_t rc = weft_progress_register(progress); rc != WEFT_SUCCESS)
            return rc;
        g_progress_registered = true;
    }
    if (g_world && !g_listen)
        post_listen();
    return WEFT_SUCCESS;
}

weft_status_t begin(Line l, int *flag, weft_group_t *acked, weft_group_t **out_group,
                    weft_comm_t *comm, weft_request_t **request, Module *m)
{
    if (weft_status_t rc = start_service(); rc != WEFT_SUCCESS)
        return rc;
    Agreement &a = start(m, l, *flag, acked);
    weft_comm_retain(comm); // until it completes: the module must outlive it
    auto *r = new weft_request_t;
    weft_request_init(r, WEFT_REQUEST_COLL, comm, WEFT_PROC_NULL, kTag);
    r->active = true;
    r->pml_free = free_request;
    r->pml_cancel = no_cancel;
    a.request = r;
    a.out_flag = flag;
    a.out_group = out_group;
    *request = r;
    // On the tree if the agreement before this one was decided here (its failures are the
    // tree's: the same at every member), else with the coordinator.
    if (number_of(a.seq) == m->last_decided[l] + 1)
        tree_start(m, a);
    else
        go_linear(m, a);
    replay(m, a.seq); // what came before this member started it
    return WEFT_SUCCESS;
}

weft_status_t iagree(int *flag, weft_group_t **group, weft_comm_t *comm, weft_request_t **request,
                     weft_coll_module_t *module)
{
    return begin(line_program, flag, group ? *group : nullptr, nullptr, comm, request,
                 self(module));
}

weft_status_t iagree_group(int *flag, weft_group_t *acked, weft_group_t **failed, weft_comm_t *comm,
                           weft_request_t **request, weft_coll_module_t *module)
{
    return begin(line_library, flag, acked, failed, comm, request, self(module));
}

weft_status_t agree(int *flag, weft_group_t **group, weft_comm_t *comm, weft_coll_module_t *module)
{
    weft_request_t *r = nullptr;
    if (weft_status_t rc =
            begin(line_program, flag, group ? *group : nullptr, group, comm, &r, self(module));
        rc != WEFT_SUCCESS)
        return rc;
    weft::progress_wait([&] { return r->complete; });
    const weft_status_t rc = r->status.error;
    r->pml_free(r);
    return rc;
}

weft_status_t enable(weft_coll_module_t *module, weft_comm_t *comm)
{
    Module *m = self(module);
    m->comm = comm;
    std::vector<int> local, remote;
    for (int r = 0; r < weft_comm_size(comm); ++r)
        local.push_back(weft_comm_local_world_rank(comm, r));
    m->inter = weft_comm_is_inter(comm) != 0;
    for (int r = 0; m->inter && r < weft_comm_peer_size(comm); ++r)
        remote.push_back(weft_comm_peer_world_rank(comm, r));
    const bool local_first = remote.empty() || *std::min_element(local.begin(), local.end()) <
                                                   *std::min_element(remote.begin(), remote.end());
    m->lane = local_first ? 0 : 1;
    m->world = local_first ? local : remote;
    m->first_size = int(m->world.size());
    m->world.insert(m->world.end(), (local_first ? remote : local).begin(),
                    (local_first ? remote : local).end());
    m->me = weft_comm_rank(comm) + (local_first ? 0 : m->first_size);
    m->n = int(m->world.size());
    m->words = (size_t(m->n) + 63) / 64;
    for (Bits &b : m->last_failed)
        b.assign(m->words, 0);
    m->epoch = weft_runtime_failure_epoch();
    g_modules.push_back(m);
    if (weft_comm_cid(comm) == 0 && !g_world) { // MPI_COMM_WORLD: the transport
        g_world = comm;
        g_in.assign(sizeof(Header) + 16 * m->words, '\0');
    }
    // What came for this communicator before it existed here.
    std::vector<std::string> early;
    early.swap(g_early);
    for (const std::string &e : early) {
        int world;
        std::memcpy(&world, e.data() + e.size() - sizeof world, sizeof world);
        dispatch(world, e.substr(0, e.size() - sizeof world));
    }
    return WEFT_SUCCESS;
}

weft_status_t disable(weft_coll_module_t *module, weft_comm_t *)
{
    Module *m = self(module);
    std::erase(g_modules, m);
    // Sends still under way belong to the PML from here (their bytes go with this module: the
    // eager ones were copied out; the rest are to peers that failed).
    if (g_freed.size() == kFreed)
        g_freed.pop_front();
    g_freed.push_back(weft_comm_cid(m->comm));
    std::erase_if(g_early, [&](const std::string &e) {
        Header h;
        std::memcpy(&h, e.data(), sizeof h);
        return h.cid == weft_comm_cid(m->comm);
    });
    // (r->peer is a rank of MPI_COMM_WORLD, where every message travels: a world rank.)
    weft::progress_wait([&] {
        reap(m);
        for (const auto &[r, bytes] : m->outbox)
            if (!weft_runtime_proc_failed(r->peer))
                return false;
        return true;
    });
    for (auto &[r, bytes] : m->outbox)
        r->freed = true;
    g_sends -= m->outbox.size();
    if (m->comm == g_world) {
        if (g_listen && g_listen->pml_cancel)
            g_listen->pml_cancel(g_listen);
        if (g_listen && g_listen->complete)
            g_listen->pml_free(g_listen);
        else if (g_listen)
            g_listen->freed = true;
        g_listen = nullptr;
        g_world = nullptr;
        g_early.clear();
    }
    if (g_modules.empty() && g_progress_registered) {
        weft_progress_unregister(progress);
        g_progress_registered = false;
    }
    delete m;
    return WEFT_SUCCESS;
}

weft_status_t register_params()
{
    const weft_mca_param_def_t defs[2] = {
        {.name = "priority",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "50",
         .help = "Priority of coll/ftagree's fault-tolerant agreement (MPIX_Comm_agree, "
                 "MPIX_Comm_iagree, and MPIX_Comm_shrink's), offered on every communicator "
                 "when fault tolerance is on (mpi_ft_enable), and for MPIX_Comm_shrink's "
                 "alone when it is off; 0 or less turns it off.",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "tree_radix",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "4",
         .help = "Radix of the k-nomial tree of the failure-free agreement: a member hears from "
                 "at most (radix - 1) * log_radix(size) others, and the tree is log_radix(size) "
                 "deep (2 is binomial; the size or more is one level, all to the root).",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "2..65536"},
    };
    return weft_mca_param_register_table("coll", "ftagree", defs, 2, sizeof defs[0], g_params);
}

weft_status_t query(int *priority, char *why, size_t why_len)
{
    *priority = int(weft_mca_param_int(p_priority));
    if (*priority <= 0) {
        std::snprintf(why, why_len, "coll_ftagree_priority is %d", *priority);
        return WEFT_ERR_NOT_AVAILABLE;
    }
    return WEFT_SUCCESS;
}

// With fault tolerance off, the program's agreements are coll/base's (an allreduce), and this
// module serves only the library's (MPIX_Comm_shrink's), which a revoke must not stop.
weft_coll_module_t *comm_query(weft_comm_t *, int *priority)
{
    const bool ft = weft_runtime_ft_enabled() != 0;
    auto *m = new Module;
    m->base = weft_coll_module_t{};
    m->base.struct_size = sizeof(weft_coll_module_t);
    m->base.coll_module_enable = enable;
    m->base.coll_module_disable = disable;
    m->base.coll_agree = ft ? agree : nullptr;
    m->base.coll_iagree = ft ? iagree : nullptr;
    m->base.coll_iagree_group = iagree_group;
    *priority = int(weft_mca_param_int(p_priority));
    return &m->base;
}

} // namespace

} // namespace weft::coll::ftagree

extern "C" {
const weft_coll_component_t mca_coll_ftagree_component = {
    .mca = {WEFT_MCA_COMPONENT_HEADER(weft_coll_component_t, "coll", WEFT_COLL_ABI_MAJOR,
                                      WEFT_COLL_ABI_MINOR, "ftagree", 0, 1, 0),
            .register_params = weft::coll::ftagree::register_params, .open = nullptr,
            .query = weft::coll::ftagree::query, .close = nullptr},
    .init_query = nullptr,
    .comm_query = weft::coll::ftagree::comm_query,
};
}
