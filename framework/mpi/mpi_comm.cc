// Communicators: rank, size, dup, split, split_type, create, free, compare,
// group, attributes, names; and the library's own point-to-point steps that
// building them needs (context ids must agree).
#include "mpi_internal.h"

#include "runtime.h"

#include <mpi-ext.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <functional>
#include <numeric>
#include <random>
#include <set>
#include <unistd.h>

namespace weft::mpi {

namespace {

constexpr int tag_cid = internal_tag_base - 1;
constexpr int tag_split = internal_tag_base - 2;
// MPI_Finalize's barrier: a fault-tolerant protocol's tag, which no revoke stops (the program
// may have revoked MPI_COMM_WORLD).
constexpr int tag_finalize = WEFT_FT_TAG_FIRST - 1;
constexpr int tag_intercomm = internal_tag_base - 4;

// Context ids (0 and 1 are MPI_COMM_WORLD and MPI_COMM_SELF). The even ones are the
// program's blocking calls' (dup, split, create, MPI_Intercomm_create), each the largest next
// even id of the members; the odd ones are MPIX_Comm_shrink's and _ishrink's, which may run in
// the background, beside those calls and beside each other, so their ids come apart from the
// others'. Shrinks under way at once choose theirs apart (shrink_taken) and try again when two
// chose the same one. Both stay small, in the PML's table of ids rather than its map.
uint32_t next_cid = 2;
uint32_t next_shrink_cid = 3;
// The ids shrinks took here. Kept after their communicators are freed: a slow shrink's result
// may still name one (its members offered before the id was taken), and an id is never used
// twice in a process (late messages for a freed communicator must not reach another).
std::set<uint32_t> shrink_taken;
// Retries step past a random number of ids: two shrinks of different lowest members that chose
// the same id, each taken first at its own root, would otherwise choose the same again.
std::minstd_rand shrink_rng{uint32_t(getpid()) * 2654435761u ^ uint32_t(time(nullptr))};

// Gather `bytes` from every rank of comm to rank 0, then give everyone all
// of it (linear; communicator construction is not a hot path).
weft_status_t allgather(weft_comm *comm, const void *in, void *out, size_t bytes, int tag)
{
    auto *o = static_cast<char *>(out);
    if (comm->rank == 0) {
        std::memcpy(o, in, bytes);
        for (int r = 1; r < comm->size; ++r)
            if (weft_status_t rc = internal_recv(comm, o + size_t(r) * bytes, bytes, r, tag);
                rc != WEFT_SUCCESS)
                return rc;
        for (int r = 1; r < comm->size; ++r)
            if (weft_status_t rc = internal_send(comm, o, bytes * size_t(comm->size), r, tag);
                rc != WEFT_SUCCESS)
                return rc;
        return WEFT_SUCCESS;
    }
    if (weft_status_t rc = internal_send(comm, in, bytes, 0, tag); rc != WEFT_SUCCESS)
        return rc;
    return internal_recv(comm, o, bytes * size_t(comm->size), 0, tag);
}

// Ids that a communicator creation under way in a thread of this process proposed or chose and
// has not taken yet (MPI_THREAD_MULTIPLE: a creation's wait lets other threads run theirs).
std::set<uint32_t> cid_busy;

// One value combined over every process of a communicator's creation, the same result at
// each: the largest of them (max) or the smallest. Each kind of creation has its own.
using CidReduce = std::function<weft_status_t(uint32_t in, uint32_t &out, bool max)>;

// A context id every process of a creation agrees on (through reduce) and none of them uses.
weft_status_t choose_cid(const CidReduce &reduce, uint32_t &cid)
{
    if (!g_api_threads.load(std::memory_order_relaxed)) {
        if (weft_status_t rc = reduce(next_cid, cid, true); rc != WEFT_SUCCESS)
            return rc;
        next_cid = std::max(next_cid, cid + 2);
        return WEFT_SUCCESS;
    }
    // Threads: another thread's creation (on another communicator) may read next_cid while this
    // one waits, and the two agree on the same id. So each proposes an id no creation here
    // holds, they agree on the largest, and keep it only if no other creation holds it at any
    // process (a second round); else they try again above it, a random step apart.
    uint32_t floor = next_cid;
    for (;;) {
        uint32_t mine = floor;
        while (cid_busy.count(mine))
            mine += 2;
        cid_busy.insert(mine);
        uint32_t cand = 0;
        weft_status_t rc = reduce(mine, cand, true);
        cid_busy.erase(mine);
        if (rc != WEFT_SUCCESS)
            return rc;
        const uint32_t ok = cand >= next_cid && !cid_busy.count(cand);
        if (ok)
            cid_busy.insert(cand);
        uint32_t all_ok = 0;
        rc = reduce(ok, all_ok, false);
        if (ok)
            cid_busy.erase(cand);
        if (rc != WEFT_SUCCESS)
            return rc;
        if (all_ok == 1) {
            cid = cand;
            next_cid = std::max(next_cid, cid + 2);
            return WEFT_SUCCESS;
        }
        floor = std::max(cand + 2, next_cid) + 2 * uint32_t(shrink_rng() % 4);
    }
}

uint32_t combine(const std::vector<uint32_t> &v, bool max)
{
    return max ? *std::max_element(v.begin(), v.end()) : *std::min_element(v.begin(), v.end());
}

// Over every rank of an intracommunicator.
CidReduce intra_reduce(weft_comm *comm)
{
    return [comm](uint32_t in, uint32_t &out, bool max) {
        std::vector<uint32_t> all(size_t(comm->size));
        if (weft_status_t rc = allgather(comm, &in, all.data(), sizeof in, tag_cid);
            rc != WEFT_SUCCESS)
            return rc;
        out = combine(all, max);
        return WEFT_SUCCESS;
    };
}

// A context id every rank of `parent` agrees on and none of them uses.
weft_status_t agree_cid(weft_comm *parent, uint32_t &cid)
{
    return choose_cid(intra_reduce(parent), cid);
}

// The last reference to a freed communicator is gone: take it down.
void destroy_comm(weft_comm *c)
{
    coll_comm_disable(c);
    pml()->pml_del_comm(pml(), c);
    // The hidden local communicator goes with its last reference too: the intercommunicator
    // holds one, and requests of its collectives' local steps may still hold theirs (released
    // from the PML's next progress call).
    if (c->local_comm)
        weft_comm_release(c->local_comm);
    group_release(c->remote_group);
    group_release(c->group);
    errhandler_release(c->errhandler);
    handle_forget(HandleKind::comm, c);
    delete c;
}

weft_comm *make_comm(uint32_t cid, weft_group *group, weft_errhandler *eh)
{
    auto *c = new weft_comm;
    c->destroy = destroy_comm;
    c->cid = cid;
    c->group = group;
    c->rank = group->my_rank;
    c->size = int(group->ranks.size());
    c->errhandler = eh;
    if (eh)
        ++eh->refs;
    return c;
}

// ---- intercommunicators' constructors (dup, split, create, merge): both groups take part.

// The two groups of intercommunicator ic swap a vector through their leaders (rank 0 of each):
// each leader sends its group's `mine` and gets the other group's, which it gives to its group
// over the hidden local communicator. At most `most` entries are taken from the other side.
weft_status_t leaders_swap(weft_comm *ic, const std::vector<uint32_t> &mine,
                           std::vector<uint32_t> &theirs, size_t most)
{
    weft_comm *local = ic->local_comm;
    uint32_t n = 0;
    weft_status_t rc = WEFT_SUCCESS;
    if (local->rank == 0) {
        const uint32_t len = uint32_t(mine.size());
        auto send = [&] {
            rc = internal_send(ic, &len, sizeof len, 0, tag_intercomm);
            if (rc == WEFT_SUCCESS && len)
                rc = internal_send(ic, mine.data(), len * sizeof(uint32_t), 0, tag_intercomm);
        };
        auto recv = [&] {
            rc = internal_recv(ic, &n, sizeof n, 0, tag_intercomm);
            if (rc == WEFT_SUCCESS && n > most)
                rc = WEFT_ERR_BAD_PARAM; // the other side's leader disagrees on the sizes
            theirs.assign(n, 0);
            if (rc == WEFT_SUCCESS && n)
                rc = internal_recv(ic, theirs.data(), n * sizeof(uint32_t), 0, tag_intercomm);
        };
        // The leader of the lower world rank sends first.
        if (weft_runtime_world_rank() < ic->remote_group->ranks[0]) {
            send();
            if (rc == WEFT_SUCCESS)
                recv();
        } else {
            recv();
            if (rc == WEFT_SUCCESS)
                send();
        }
        for (int r = 1; r < local->size && rc == WEFT_SUCCESS; ++r) {
            rc = internal_send(local, &n, sizeof n, r, tag_intercomm);
            if (rc == WEFT_SUCCESS && n)
                rc = internal_send(local, theirs.data(), n * sizeof(uint32_t), r, tag_intercomm);
        }
        return rc;
    }
    rc = internal_recv(local, &n, sizeof n, 0, tag_intercomm);
    if (rc == WEFT_SUCCESS && n > most)
        return WEFT_ERR_BAD_PARAM;
    theirs.assign(n, 0);
    if (rc == WEFT_SUCCESS && n)
        rc = internal_recv(local, theirs.data(), n * sizeof(uint32_t), 0, tag_intercomm);
    return rc;
}

// Context ids for a new intercommunicator made from ic (both groups call): `cid` agreed by both
// groups, `local_cid` (its hidden local communicator's) by this group.
weft_status_t inter_agree_cid(weft_comm *ic, uint32_t &cid, uint32_t &local_cid)
{
    if (weft_status_t rc = agree_cid(ic->local_comm, local_cid); rc != WEFT_SUCCESS)
        return rc;
    // Each group's value, then the two groups' through their leaders.
    return choose_cid(
        [ic](uint32_t in, uint32_t &out, bool max) {
            uint32_t ours = 0;
            if (weft_status_t rc = intra_reduce(ic->local_comm)(in, ours, max); rc != WEFT_SUCCESS)
                return rc;
            std::vector<uint32_t> theirs;
            if (weft_status_t rc = leaders_swap(ic, {ours}, theirs, 1); rc != WEFT_SUCCESS)
                return rc;
            if (theirs.size() != 1)
                return WEFT_ERR_BAD_PARAM;
            out = max ? std::max(ours, theirs[0]) : std::min(ours, theirs[0]);
            return WEFT_SUCCESS;
        },
        cid);
}

// A new intercommunicator of the local group `group` and the remote group `remote` (the new
// communicator takes both references), activated.
int make_inter(weft_comm *parent, uint32_t cid, uint32_t local_cid, weft_group *group,
               weft_group *remote, MPI_Comm *newcomm)
{
    group_retain(group);
    weft_comm *local = make_comm(local_cid, group, parent->errhandler);
    weft_comm *c = make_comm(cid, group, parent->errhandler);
    c->remote_group = remote;
    c->local_comm = local;
    *newcomm = c;
    if (int rc = comm_activate(local); rc != MPI_SUCCESS)
        return rc;
    return comm_activate(c);
}

// The world ranks of the members of `of` (a group's ranks) whose entry in `colors` (color, key
// pairs, by rank of that group) has `color`, ordered by key, then rank.
std::vector<int> members_of(const std::vector<int> &of, const std::vector<uint32_t> &colors,
                            int color)
{
    std::vector<int> idx;
    for (size_t r = 0; r < of.size() && 2 * r + 1 < colors.size(); ++r)
        if (int(colors[2 * r]) == color)
            idx.push_back(int(r));
    std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) {
        return int(colors[2 * size_t(a) + 1]) < int(colors[2 * size_t(b) + 1]);
    });
    std::vector<int> world;
    for (int r : idx)
        world.push_back(of[size_t(r)]);
    return world;
}

int inter_dup(weft_comm *comm, MPI_Comm *newcomm, const char *fn)
{
    uint32_t cid, local_cid;
    if (weft_status_t rc = inter_agree_cid(comm, cid, local_cid); rc != WEFT_SUCCESS)
        return raise_status(comm, rc, fn);
    group_retain(comm->group);
    group_retain(comm->remote_group);
    if (int rc = make_inter(comm, cid, local_cid, comm->group, comm->remote_group, newcomm);
        rc != MPI_SUCCESS)
        return raise(comm, rc, fn, "the new communicator cannot be set up");
    static_cast<weft_comm *>(*newcomm)->hints = comm->hints;
    return comm_dup_attrs(comm, newcomm, fn);
}

// MPI-3.1 6.4.2: the processes of each color in the local group with those of the same color in
// the remote group (MPI_COMM_NULL where either side has none).
int inter_split(weft_comm *comm, int color, int key, MPI_Comm *newcomm, const char *fn)
{
    const uint32_t mine[2] = {uint32_t(color), uint32_t(key)};
    std::vector<uint32_t> local(2 * size_t(comm->size)), remote;
    weft_status_t rc = allgather(comm->local_comm, mine, local.data(), sizeof mine, tag_split);
    if (rc == WEFT_SUCCESS)
        rc = leaders_swap(comm, local, remote, 2 * size_t(comm->peer_size()));
    if (rc == WEFT_SUCCESS && remote.size() != 2 * size_t(comm->peer_size()))
        rc = WEFT_ERR_BAD_PARAM;
    uint32_t cid = 0, local_cid = 0;
    if (rc == WEFT_SUCCESS)
        rc = inter_agree_cid(comm, cid, local_cid);
    if (rc != WEFT_SUCCESS)
        return raise_status(comm, rc, fn);
    *newcomm = MPI_COMM_NULL;
    if (color == MPI_UNDEFINED)
        return MPI_SUCCESS;
    std::vector<int> ours = members_of(comm->group->ranks, local, color);
    std::vector<int> theirs = members_of(comm->remote_group->ranks, remote, color);
    if (theirs.empty())
        return MPI_SUCCESS;
    if (int r = make_inter(comm, cid, local_cid, group_new(ours), group_new(theirs), newcomm);
        r != MPI_SUCCESS)
        return raise(comm, r, fn, "the new communicator cannot be set up");
    return MPI_SUCCESS;
}

// MPI-3.1 6.4.2: each group names a subgroup of itself; the result joins the two (MPI_COMM_NULL
// outside them, or where either is empty).
int inter_create(weft_comm *comm, weft_group *group, MPI_Comm *newcomm, const char *fn)
{
    std::vector<uint32_t> mine(group->ranks.begin(), group->ranks.end()), theirs;
    weft_status_t rc = leaders_swap(comm, mine, theirs, size_t(comm->peer_size()));
    uint32_t cid = 0, local_cid = 0;
    if (rc == WEFT_SUCCESS)
        rc = inter_agree_cid(comm, cid, local_cid);
    if (rc != WEFT_SUCCESS)
        return raise_status(comm, rc, fn);
    *newcomm = MPI_COMM_NULL;
    if (group->my_rank < 0 || theirs.empty())
        return MPI_SUCCESS;
    group_retain(group);
    if (int r = make_inter(comm, cid, local_cid, group,
                           group_new(std::vector<int>(theirs.begin(), theirs.end())), newcomm);
        r != MPI_SUCCESS)
        return raise(comm, r, fn, "the new communicator cannot be set up");
    return MPI_SUCCESS;
}

int bad_comm(MPI_Comm comm, const char *fn)
{
    if (int rc = check_state(fn); rc != MPI_SUCCESS)
        return rc;
    if (!valid_comm(comm))
        return raise(nullptr, MPI_ERR_COMM, fn, "invalid communicator");
    return MPI_SUCCESS;
}

// bad_comm, and a revoked communicator (ULFM) makes no new communicator.
int bad_live_comm(MPI_Comm comm, const char *fn)
{
    if (int rc = bad_comm(comm, fn); rc != MPI_SUCCESS)
        return rc;
    return weft_comm_is_revoked(comm) ? raise_revoked(comm, fn) : MPI_SUCCESS;
}

int tag_ub = INT32_MAX;
int host_val = MPI_PROC_NULL;
int io_val = MPI_ANY_SOURCE;
int wtime_global = 0;
int appnum = 0;
int universe = 0;
int ft_val = 0;

} // namespace

void comm_update_view(weft_comm *comm)
{
    const weft_group *peers = comm->peer_group();
    comm->weft_comm_view_t::peer_size = int32_t(peers->ranks.size());
    comm->peer_world = peers->ranks.data();
    comm->local_world = comm->group->ranks.data();
    comm->flags = comm->remote_group ? WEFT_COMM_FLAG_INTER : 0;
}

int comm_activate(weft_comm *comm)
{
    comm_update_view(comm);
    weft_status_t rc = pml()->pml_add_comm(pml(), comm);
    if (rc == WEFT_SUCCESS)
        rc = coll_comm_enable(comm);
    return rc == WEFT_SUCCESS ? MPI_SUCCESS : error_class_of(rc);
}

// Fan-in to rank 0, then fan-out.
weft_status_t internal_barrier(weft_comm *comm)
{
    char token = 0;
    weft_status_t rc = WEFT_SUCCESS;
    if (comm->rank == 0) {
        for (int r = 1; r < comm->size && rc == WEFT_SUCCESS; ++r)
            rc = internal_recv(comm, &token, 1, r, tag_finalize);
        for (int r = 1; r < comm->size && rc == WEFT_SUCCESS; ++r)
            rc = internal_send(comm, &token, 1, r, tag_finalize);
    } else {
        rc = internal_send(comm, &token, 1, 0, tag_finalize);
        if (rc == WEFT_SUCCESS)
            rc = internal_recv(comm, &token, 1, 0, tag_finalize);
    }
    return rc;
}

// Fault tolerance: every rank sends a token to every other and waits for the token of each
// peer that has not failed. A peer's failure (the runtime learns it from progress) ends the wait
// for it: its receive is cancelled, and a send to it is left to the PML. Every live rank has
// then reached the barrier: what each sent before it is in the transports (pml_enable(0)).
// Linear in the ranks, and used only by MPI_Finalize with fault tolerance on.
weft_status_t ft_barrier(weft_comm *comm)
{
    char out = 0;
    const int n = comm->size;
    std::vector<char> in(static_cast<size_t>(n));
    weft_progress(); // the failures learnt while this rank computed
    std::vector<weft_request_t *> recvs(size_t(n), nullptr), sends(size_t(n), nullptr);
    auto failed = [&](int r) {
        return weft_runtime_proc_failed(weft_comm_peer_world_rank(comm, r)) != 0;
    };
    for (int r = 0; r < n; ++r) {
        if (r == comm->rank || failed(r))
            continue;
        // A fault-tolerant protocol's tag: neither the failure nor a revoke stops it.
        pml()->pml_irecv(pml(), &in[size_t(r)], 1, MPI_BYTE, r, WEFT_FT_TAG_FIRST, comm,
                         &recvs[size_t(r)]);
        pml()->pml_isend(pml(), &out, 1, MPI_BYTE, r, WEFT_FT_TAG_FIRST, WEFT_SEND_STANDARD, comm,
                         &sends[size_t(r)]);
    }
    auto settled = [&](const std::vector<weft_request_t *> &reqs) {
        for (int r = 0; r < n; ++r)
            if (reqs[size_t(r)] && !reqs[size_t(r)]->complete && !failed(r))
                return false;
        return true;
    };
    weft::progress_wait([&] { return settled(recvs) && settled(sends); });
    for (auto *reqs : {&recvs, &sends})
        for (weft_request_t *q : *reqs) {
            if (!q)
                continue;
            if (!q->complete && q->pml_cancel)
                q->pml_cancel(q);
            q->pml_free(q);
        }
    return WEFT_SUCCESS;
}

weft_status_t internal_send(weft_comm *comm, const void *buf, size_t bytes, int dst, int tag)
{
    return pml()->pml_send(pml(), buf, bytes, MPI_BYTE, dst, tag, WEFT_SEND_STANDARD, comm);
}

weft_status_t internal_recv(weft_comm *comm, void *buf, size_t bytes, int src, int tag)
{
    weft_msg_status_t st{};
    return pml()->pml_recv(pml(), buf, bytes, MPI_BYTE, src, tag, comm, &st);
}

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

WEFT_PROFILED(MPI_Comm_rank)
int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    WEFT_API_GUARD;
    if (int rc = bad_comm(comm, "MPI_Comm_rank"); rc != MPI_SUCCESS)
        return rc;
    if (!rank)
        return raise(comm, MPI_ERR_ARG, "MPI_Comm_rank", "rank is NULL");
    *rank = comm->rank;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Comm_size)
int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    WEFT_API_GUARD;
    if (int rc = bad_comm(comm, "MPI_Comm_size"); rc != MPI_SUCCESS)
        return rc;
    if (!size)
        return raise(comm, MPI_ERR_ARG, "MPI_Comm_size", "size is NULL");
    *size = comm->size;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Comm_dup)
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    WEFT_API_GUARD;
    if (int rc = bad_live_comm(comm, "MPI_Comm_dup"); rc != MPI_SUCCESS)
        return rc;
    if (!newcomm)
        return raise(comm, MPI_ERR_ARG, "MPI_Comm_dup", "newcomm is NULL");
    if (comm->is_inter())
        return inter_dup(comm, newcomm, "MPI_Comm_dup");
    uint32_t cid;
    if (weft_status_t rc = agree_cid(comm, cid); rc != WEFT_SUCCESS)
        return raise_status(comm, rc, "MPI_Comm_dup");
    group_retain(comm->group);
    weft_comm *c = make_comm(cid, comm->group, comm->errhandler);
    c->topo = comm->topo; // MPI-3.1 6.4.2: the copy keeps the topology
    c->hints = comm->hints;
    *newcomm = c;
    if (int rc = comm_activate(c); rc != MPI_SUCCESS)
        return rc;
    return comm_dup_attrs(comm, newcomm, "MPI_Comm_dup"); // through their copy callbacks
}

WEFT_PROFILED(MPI_Comm_split)
int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    WEFT_API_GUARD;
    if (int rc = bad_live_comm(comm, "MPI_Comm_split"); rc != MPI_SUCCESS)
        return rc;
    if (color < 0 && color != MPI_UNDEFINED)
        return raise(comm, MPI_ERR_ARG, "MPI_Comm_split",
                     "color " + std::to_string(color) + " is negative and not MPI_UNDEFINED");
    if (!newcomm)
        return raise(comm, MPI_ERR_ARG, "MPI_Comm_split", "newcomm is NULL");
    if (comm->is_inter())
        return inter_split(comm, color, key, newcomm, "MPI_Comm_split");
    int mine[2] = {color, key};
    std::vector<int> all(2 * size_t(comm->size));
    if (weft_status_t rc = allgather(comm, mine, all.data(), sizeof mine, tag_split);
        rc != WEFT_SUCCESS)
        return raise_status(comm, rc, "MPI_Comm_split");
    uint32_t cid;
    if (weft_status_t rc = agree_cid(comm, cid); rc != WEFT_SUCCESS)
        return raise_status(comm, rc, "MPI_Comm_split");
    if (color == MPI_UNDEFINED) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    std::vector<int> members;
    for (int r = 0; r < comm->size; ++r)
        if (all[2 * size_t(r)] == color)
            members.push_back(r);
    std::stable_sort(members.begin(), members.end(),
                     [&](int a, int b) { return all[2 * size_t(a) + 1] < all[2 * size_t(b) + 1]; });
    std::vector<int> world;
    for (int r : members)
        world.push_back(comm->group->ranks[size_t(r)]);
    weft_comm *c = make_comm(cid, group_new(world), comm->errhandler);
    *newcomm = c;
    return comm_activate(c);
}

WEFT_PROFILED(MPI_Comm_split_type)
int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info, MPI_Comm *newcomm)
{
    WEFT_API_GUARD;
    if (int rc = bad_live_comm(comm, "MPI_Comm_split_type"); rc != MPI_SUCCESS)
        return rc;
    if (split_type == MPI_UNDEFINED)
        return PMPI_Comm_split(comm, MPI_UNDEFINED, key, newcomm);
    if (split_type != MPI_COMM_TYPE_SHARED)
        return raise(comm, MPI_ERR_ARG, "MPI_Comm_split_type",
                     "only MPI_COMM_TYPE_SHARED is known");
    // Color: the lowest rank of comm on this host.
    int color = comm->rank;
    for (int r = 0; r < comm->size; ++r)
        if (weft_proc_is_local(weft_runtime_proc(comm->group->ranks[size_t(r)]))) {
            color = r;
            break;
        }
    return PMPI_Comm_split(comm, color, key, newcomm);
}

WEFT_PROFILED(MPI_Comm_create)
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    WEFT_API_GUARD;
    if (int rc = bad_live_comm(comm, "MPI_Comm_create"); rc != MPI_SUCCESS)
        return rc;
    if (!group)
        return raise(comm, MPI_ERR_GROUP, "MPI_Comm_create", "invalid group");
    if (!newcomm)
        return raise(comm, MPI_ERR_ARG, "MPI_Comm_create", "newcomm is NULL");
    for (int w : group->ranks)
        if (std::find(comm->group->ranks.begin(), comm->group->ranks.end(), w) ==
            comm->group->ranks.end())
            return raise(comm, MPI_ERR_GROUP, "MPI_Comm_create",
                         "the group is not a subset of the communicator's group");
    if (comm->is_inter())
        return inter_create(comm, group, newcomm, "MPI_Comm_create");
    uint32_t cid;
    if (weft_status_t rc = agree_cid(comm, cid); rc != WEFT_SUCCESS)
        return raise_status(comm, rc, "MPI_Comm_create");
    if (group->my_rank == MPI_UNDEFINED || group->my_rank < 0) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    group_retain(group);
    weft_comm *c = make_comm(cid, group, comm->errhandler);
    *newcomm = c;
    return comm_activate(c);
}

// MPIX_Comm_ishrink and MPIX_Comm_shrink (mpi-ext.h), one state machine driven by progress:
// agree on the failed members (coll_iagree_group), take the largest next context id of the
// survivors through the lowest of them on a tag of the fault-tolerant protocols, and agree that
// this worked everywhere; a member that failed midway makes every survivor try again. The
// survivors, in the old rank order, then make the new communicator.
// An intercommunicator agrees over both groups at once (coll/ftagree); each group's lowest
// survivor gathers its group's offers over the hidden local communicator, the two exchange
// theirs over the intercommunicator, and each tells its group. The new intercommunicator
// takes the id agreed, its hidden local communicator the next odd one (the two groups' hidden
// communicators share that id: no process is in both).
namespace {

constexpr int tag_shrink = WEFT_FT_TAG_FIRST - 3;

struct Offer {
    uint32_t attempt;
    uint32_t cid;
};

struct Shrink : weft_request_t {
    weft_comm *comm = nullptr; // retained
    MPI_Comm *out = nullptr;
    // MPI_Comm_idup: the same agreement and choice of id, but every member must be there (a
    // failure is an error), and the new communicator gets the topology, hints and attributes.
    bool dup = false;
    // queued: behind an earlier shrink of the same communicator (they run one at a time, in
    // the order they were called, which is the same at every member).
    enum { queued, agree_failed, exchange, agree_ok, done } phase = queued;
    uint32_t attempt = 0;
    int flag = 1;
    weft_group_t *failed = nullptr;
    weft_request_t *agreement = nullptr;
    std::vector<int> survivors;
    uint32_t cid = 0;
    bool ok = true;
    Offer mine{}, result{};
    std::vector<Offer> offers;        // at the root: each survivor's (by index in survivors)
    std::vector<weft_request_t *> io; // the exchange's sends and receives
    // The exchange's step at the root: 0 offers gathered, 1 (intercommunicator) the other
    // group's root heard, 2 results sent.
    int stage = 0;
    // An intercommunicator's: the remote group's survivors (remote ranks), and what its root
    // sent and this group's root sends it.
    std::vector<int> remote_survivors;
    Offer theirs{}, ours{};
    bool took = false; // this attempt's ids are in shrink_taken
};

// The ids a shrink takes: an intercommunicator's hidden local communicator has the next odd one.
uint32_t span(const Shrink *s) { return s->comm->is_inter() ? 4 : 2; }

std::vector<Shrink *> g_shrinks;
bool g_shrink_busy = false;

void finish_shrink(Shrink *s, weft_status_t rc)
{
    s->phase = Shrink::done;
    s->status.error = rc;
    s->active = false;
    s->complete = true;
}

bool start_agreement(Shrink *s)
{
    s->failed = nullptr;
    s->agreement = nullptr;
    const weft_status_t rc = iagree_group_status(s->comm, &s->flag, &s->failed, &s->agreement);
    if (rc != WEFT_SUCCESS || !s->agreement) {
        finish_shrink(s, rc != WEFT_SUCCESS ? rc : WEFT_ERR_NOT_SUPPORTED);
        return false;
    }
    return true;
}

// The agreement's outcome (PROC_FAILED is an outcome like success here), its request freed.
bool take_agreement(Shrink *s)
{
    const weft_status_t rc = s->agreement->status.error;
    s->agreement->pml_free(s->agreement);
    s->agreement = nullptr;
    if (rc != WEFT_SUCCESS && rc != WEFT_ERR_PROC_FAILED) {
        if (s->failed)
            group_release(s->failed);
        finish_shrink(s, rc);
        return false;
    }
    return true;
}

// On comm: a member of this group (for an intercommunicator, its hidden local communicator),
// or with across, the other group's.
void post(Shrink *s, bool send, void *buf, int peer, bool across = false)
{
    weft_comm *comm = s->comm->is_inter() && !across ? s->comm->local_comm : s->comm;
    weft_request_t *r = nullptr;
    const weft_status_t rc =
        send ? pml()->pml_isend(pml(), buf, sizeof(Offer), MPI_BYTE, peer, tag_shrink,
                                WEFT_SEND_STANDARD, comm, &r)
             : pml()->pml_irecv(pml(), buf, sizeof(Offer), MPI_BYTE, peer, tag_shrink, comm, &r);
    if (rc == WEFT_SUCCESS && r)
        s->io.push_back(r);
    else
        s->ok = false;
}

// The exchange's requests: true once all are complete (each then freed); ok says whether each
// succeeded.
bool io_done(Shrink *s)
{
    for (weft_request_t *r : s->io)
        if (!r->complete)
            return false;
    for (weft_request_t *r : s->io) {
        s->ok = s->ok && r->status.error == WEFT_SUCCESS;
        r->pml_free(r);
    }
    s->io.clear();
    return true;
}

// One step further if it can go; false while it waits.
bool step(Shrink *s)
{
    switch (s->phase) {
    case Shrink::queued:
        for (Shrink *e : g_shrinks) {
            if (e == s)
                break;
            if (e->comm == s->comm)
                return false;
        }
        s->phase = Shrink::agree_failed;
        start_agreement(s);
        return true;
    case Shrink::agree_failed: {
        if (!s->agreement->complete)
            return false;
        if (!take_agreement(s))
            return true;
        const auto live = [&](const weft_group *g) {
            std::vector<int> out;
            for (int r = 0; r < int(g->ranks.size()); ++r) {
                bool gone = false;
                for (int i = 0; s->failed && i < weft_group_size(s->failed); ++i)
                    gone |= weft_group_world_rank(s->failed, i) == g->ranks[size_t(r)];
                if (!gone)
                    out.push_back(r);
            }
            return out;
        };
        s->survivors = live(s->comm->group);
        if (s->comm->is_inter())
            s->remote_survivors = live(s->comm->remote_group);
        if (s->failed)
            group_release(s->failed);
        s->failed = nullptr;
        if (s->comm->is_inter() && s->remote_survivors.empty()) {
            // Nobody left on the other side (agreed: the same in this whole group).
            finish_shrink(s, WEFT_ERR_PROC_FAILED);
            return true;
        }
        // The largest next context id of the survivors, through the lowest of them.
        s->ok = true;
        s->cid = next_shrink_cid;
        s->mine = Offer{s->attempt, next_shrink_cid};
        const int root = s->survivors.front();
        s->stage = 0;
        if (s->comm->rank == root) {
            s->offers.assign(s->survivors.size(), Offer{});
            for (size_t i = 0; i < s->survivors.size(); ++i)
                if (s->survivors[i] != root)
                    post(s, false, &s->offers[i], s->survivors[i]);
        } else {
            post(s, true, &s->mine, root);
            post(s, false, &s->result, root);
        }
        s->phase = Shrink::exchange;
        return true;
    }
    case Shrink::exchange: {
        if (!io_done(s))
            return false;
        const int root = s->survivors.front();
        if (s->comm->rank == root && s->stage == 0) {
            // Its own id as of now: another shrink it chose for since its offer has it.
            s->cid = std::max(s->cid, next_shrink_cid);
            for (size_t i = 0; i < s->survivors.size(); ++i)
                if (s->survivors[i] != root) {
                    s->ok = s->ok && s->offers[i].attempt == s->attempt;
                    s->cid = std::max(s->cid, s->offers[i].cid);
                }
            s->offers.clear();
            s->stage = 1;
            if (s->comm->is_inter()) { // this group's to the other's root, and theirs
                s->ours = Offer{s->attempt, s->ok ? s->cid : 0};
                post(s, true, &s->ours, s->remote_survivors.front(), true);
                post(s, false, &s->theirs, s->remote_survivors.front(), true);
                return true; // this phase again, for the other group's
            }
        }
        if (s->comm->rank == root && s->stage == 1) {
            if (s->comm->is_inter()) {
                s->ok = s->ok && s->theirs.attempt == s->attempt && s->theirs.cid != 0;
                s->cid = std::max(s->cid, s->theirs.cid);
            }
            s->result = Offer{s->attempt, s->ok ? s->cid : 0};
            // Kept from the next shrink this member chooses for.
            next_shrink_cid = std::max(next_shrink_cid, s->cid + span(s));
            s->stage = 2;
            for (int r : s->survivors)
                if (r != root)
                    post(s, true, &s->result, r);
            return true; // this phase again, for the sends
        }
        if (s->comm->rank != root) {
            s->ok = s->ok && s->result.attempt == s->attempt && s->result.cid != 0;
            s->cid = s->result.cid;
        }
        // Not taken here already by another shrink (odd ids only: the result is an offer, or
        // 0 for "again").
        const auto taken = [&](uint32_t id) { return id % 2 == 0 || shrink_taken.count(id); };
        s->ok = s->ok && !taken(s->cid) && !(s->comm->is_inter() && taken(s->cid + 2));
        s->took = s->ok;
        if (s->ok) {
            shrink_taken.insert(s->cid);
            if (s->comm->is_inter())
                shrink_taken.insert(s->cid + 2);
        }
        // Past it in any case: a retry offers larger ones.
        if (s->cid % 2)
            next_shrink_cid = std::max(next_shrink_cid, s->cid + span(s));
        s->flag = s->ok ? 1 : 0;
        s->phase = Shrink::agree_ok;
        start_agreement(s);
        return true;
    }
    case Shrink::agree_ok: {
        if (!s->agreement->complete)
            return false;
        if (!take_agreement(s))
            return true;
        if (s->failed)
            group_release(s->failed);
        s->failed = nullptr;
        if (!s->flag) { // a member failed midway, or the id was taken somewhere: again
            if (s->took) {
                shrink_taken.erase(s->cid);
                if (s->comm->is_inter())
                    shrink_taken.erase(s->cid + 2);
            }
            s->took = false;
            next_shrink_cid += 2 * uint32_t(1 + shrink_rng() % 16);
            ++s->attempt;
            s->flag = 1;
            s->phase = Shrink::agree_failed;
            start_agreement(s);
            return true;
        }
        const auto world_of = [](const std::vector<int> &ranks, const weft_group *g) {
            std::vector<int> world;
            for (int r : ranks)
                world.push_back(g->ranks[size_t(r)]);
            return world;
        };
        if (s->dup &&
            (s->survivors.size() != size_t(s->comm->size) ||
             (s->comm->is_inter() && s->remote_survivors.size() != size_t(s->comm->peer_size())))) {
            finish_shrink(s, WEFT_ERR_PROC_FAILED);
            return true;
        }
        const std::vector<int> world = world_of(s->survivors, s->comm->group);
        weft_comm *c = make_comm(s->cid, group_new(world), s->comm->errhandler);
        if (s->comm->is_inter()) {
            c->local_comm = make_comm(s->cid + 2, group_new(world), s->comm->errhandler);
            c->remote_group = group_new(world_of(s->remote_survivors, s->comm->remote_group));
        }
        // Local: no coll component talks to the other members when a communicator is made
        // (coll/sm sets up at its first call), so shrinks under way at once may complete in
        // any order.
        int rc = c->local_comm && comm_activate(c->local_comm) != MPI_SUCCESS ? MPI_ERR_INTERN
                                                                              : comm_activate(c);
        *s->out = c;
        if (s->dup && rc == MPI_SUCCESS) {
            c->topo = s->comm->topo;
            c->hints = s->comm->hints;
            rc = comm_dup_attrs(s->comm, s->out, "MPI_Comm_idup"); // their copy callbacks
        }
        finish_shrink(s, rc == MPI_SUCCESS ? WEFT_SUCCESS : WEFT_ERROR);
        return true;
    }
    case Shrink::done: return false;
    }
    return false;
}

void free_shrink(weft_request_t *r);

int progress_shrinks()
{
    if (g_shrink_busy)
        return 0;
    g_shrink_busy = true;
    int n = 0;
    const std::vector<Shrink *> now = g_shrinks;
    for (Shrink *s : now) {
        while (s->phase != Shrink::done && step(s))
            ++n;
        if (s->phase == Shrink::done) {
            std::erase(g_shrinks, s);
            if (s->freed) // by MPI_Request_free while under way
                free_shrink(s);
        }
    }
    if (g_shrinks.empty())
        weft_progress_unregister(progress_shrinks);
    g_shrink_busy = false;
    return n;
}

void free_shrink(weft_request_t *r)
{
    auto *s = static_cast<Shrink *>(r);
    if (!s->complete) { // it goes when it completes
        s->freed = true;
        return;
    }
    comm_release(s->comm);
    delete s;
}

weft_status_t no_cancel(weft_request_t *) { return WEFT_SUCCESS; }

int ishrink(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request, const char *fn,
            bool dup = false)
{
    if (int rc = dup ? bad_live_comm(comm, fn) : bad_comm(comm, fn); rc != MPI_SUCCESS)
        return rc;
    if (!newcomm)
        return raise(comm, MPI_ERR_ARG, fn, "newcomm is NULL");
    if (request == nullptr)
        return raise(comm, MPI_ERR_ARG, fn, "request is NULL");
    auto *s = new Shrink;
    weft_request_init(s, WEFT_REQUEST_COMM, comm, WEFT_PROC_NULL, tag_shrink);
    s->active = true;
    s->pml_free = free_shrink;
    s->pml_cancel = no_cancel;
    comm_retain(comm);
    s->comm = comm;
    s->out = newcomm;
    s->dup = dup;
    *newcomm = MPI_COMM_NULL;
    *request = s;
    if (g_shrinks.empty())
        weft_progress_register(progress_shrinks);
    g_shrinks.push_back(s);
    weft_progress(); // the failures learnt while the program computed; and it starts
    return MPI_SUCCESS;
}

} // namespace

// MPI-3.1 6.4.2: a non-blocking MPI_Comm_dup. It is a shrink that no failure may shrink: its
// id is chosen and agreed in the background, apart from the blocking calls' ids, beside any
// number of others under way (on the same or other communicators, started in any order).
WEFT_PROFILED(MPI_Comm_idup)
int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    WEFT_API_RETURN(ishrink(comm, newcomm, request, "MPI_Comm_idup", true));
}

WEFT_PROFILED(MPIX_Comm_ishrink)
int PMPIX_Comm_ishrink(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    WEFT_API_RETURN(ishrink(comm, newcomm, request, "MPIX_Comm_ishrink"));
}

WEFT_PROFILED(MPIX_Comm_shrink)
int PMPIX_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm)
{
    WEFT_API_GUARD;
    const char *fn = "MPIX_Comm_shrink";
    MPI_Request r = nullptr;
    if (int rc = ishrink(comm, newcomm, &r, fn); rc != MPI_SUCCESS)
        return rc;
    weft::progress_wait([&] { return r->complete; });
    const weft_status_t rc = r->status.error;
    free_shrink(r);
    return rc == WEFT_SUCCESS ? MPI_SUCCESS : raise_status(comm, rc, fn);
}

WEFT_PROFILED(MPI_Comm_free)
int PMPI_Comm_free(MPI_Comm *comm)
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Comm_free"); rc != MPI_SUCCESS)
        return rc;
    if (!comm || !valid_comm(*comm))
        return raise(nullptr, MPI_ERR_COMM, "MPI_Comm_free", "invalid communicator");
    weft_comm *c = *comm;
    if (c->predefined)
        return raise(c, MPI_ERR_COMM, "MPI_Comm_free",
                     "MPI_COMM_WORLD and MPI_COMM_SELF cannot be freed");
    if (int rc = comm_delete_attrs(c); rc != MPI_SUCCESS)
        return raise(c, rc, "MPI_Comm_free", "an attribute's delete callback failed");
    // The handle goes now; the communicator itself when its pending non-blocking collectives
    // (which hold references) have completed (MPI-3.1 6.4.3).
    c->freed = true;
    weft::mpi::comm_release(c);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Comm_compare)
int PMPI_Comm_compare(MPI_Comm a, MPI_Comm b, int *result)
{
    WEFT_API_GUARD;
    if (int rc = bad_comm(a, "MPI_Comm_compare"); rc != MPI_SUCCESS)
        return rc;
    if (!valid_comm(b))
        return raise(a, MPI_ERR_COMM, "MPI_Comm_compare", "invalid second communicator");
    if (a == b) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (a->group->ranks == b->group->ranks) {
        *result = MPI_CONGRUENT;
        return MPI_SUCCESS;
    }
    auto x = a->group->ranks, y = b->group->ranks;
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    *result = x == y ? MPI_SIMILAR : MPI_UNEQUAL;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Comm_group)
int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    WEFT_API_GUARD;
    if (int rc = bad_comm(comm, "MPI_Comm_group"); rc != MPI_SUCCESS)
        return rc;
    group_retain(comm->group);
    *group = comm->group;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Comm_test_inter)
int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    WEFT_API_GUARD;
    if (int rc = bad_comm(comm, "MPI_Comm_test_inter"); rc != MPI_SUCCESS)
        return rc;
    if (!flag)
        return raise(comm, MPI_ERR_ARG, "MPI_Comm_test_inter", "flag is NULL");
    *flag = comm->is_inter();
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Comm_remote_size)
int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    WEFT_API_GUARD;
    if (int rc = bad_comm(comm, "MPI_Comm_remote_size"); rc != MPI_SUCCESS)
        return rc;
    if (!comm->is_inter())
        return raise(comm, MPI_ERR_COMM, "MPI_Comm_remote_size", "not an intercommunicator");
    if (!size)
        return raise(comm, MPI_ERR_ARG, "MPI_Comm_remote_size", "size is NULL");
    *size = comm->peer_size();
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Comm_remote_group)
int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    WEFT_API_GUARD;
    if (int rc = bad_comm(comm, "MPI_Comm_remote_group"); rc != MPI_SUCCESS)
        return rc;
    if (!comm->is_inter())
        return raise(comm, MPI_ERR_COMM, "MPI_Comm_remote_group", "not an intercommunicator");
    if (!group)
        return raise(comm, MPI_ERR_ARG, "MPI_Comm_remote_group", "group is NULL");
    group_retain(comm->remote_group);
    *group = comm->remote_group;
    return MPI_SUCCESS;
}

// The leaders agree over peer_comm (on the user's tag) on a context id no member of either
// group uses, and hand their group's world ranks to each other; each leader passes the
// other group and the id on to its group.
WEFT_PROFILED(MPI_Intercomm_create)
int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                          int remote_leader, int tag, MPI_Comm *newintercomm)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Intercomm_create";
    if (int rc = bad_live_comm(local_comm, fn); rc != MPI_SUCCESS)
        return rc;
    if (local_comm->is_inter())
        return raise(local_comm, MPI_ERR_COMM, fn, "local_comm is an intercommunicator");
    if (local_leader < 0 || local_leader >= local_comm->size)
        return raise(local_comm, MPI_ERR_RANK, fn,
                     "local_leader " + std::to_string(local_leader) + " is not in 0.." +
                         std::to_string(local_comm->size - 1));
    if (!newintercomm)
        return raise(local_comm, MPI_ERR_ARG, fn, "newintercomm is NULL");
    const bool leader = local_comm->rank == local_leader;
    // The leader's own arguments: a problem there is reported at every rank of the group (the
    // leader tells the others, below), never left for them to wait on.
    int leader_error = MPI_SUCCESS;
    std::string leader_problem;
    if (leader) {
        if (!valid_comm(peer_comm)) {
            leader_error = MPI_ERR_COMM;
            leader_problem = "invalid peer_comm";
        } else if (remote_leader < 0 || remote_leader >= peer_comm->peer_size()) {
            leader_error = MPI_ERR_RANK;
            leader_problem =
                "remote_leader " + std::to_string(remote_leader) + " is not in peer_comm";
        } else if (tag < 0) {
            leader_error = MPI_ERR_TAG;
            leader_problem = "tag " + std::to_string(tag) + " is negative";
        }
    }
    // The hidden local communicator's id.
    uint32_t local_cid;
    if (weft_status_t rc = agree_cid(local_comm, local_cid); rc != WEFT_SUCCESS)
        return raise_status(local_comm, rc, fn);
    // What the leader tells its group: [1 (go on), remote size, remote world ranks...].
    std::vector<uint32_t> info;
    weft_status_t rc = WEFT_SUCCESS;
    if (leader && leader_error != MPI_SUCCESS) {
        // Context id 0 (MPI_COMM_WORLD's, never a new one) tells the group to give up.
        const uint32_t refuse[2] = {0, uint32_t(leader_error)};
        for (int r = 0; r < local_comm->size; ++r)
            if (r != local_comm->rank)
                internal_send(local_comm, refuse, sizeof refuse, r, tag_intercomm);
        return raise(local_comm, leader_error, fn, leader_problem);
    }
    if (leader) {
        std::vector<uint32_t> mine = {1, uint32_t(local_comm->size)};
        for (int w : local_comm->group->ranks)
            mine.push_back(uint32_t(w));
        // Sizes first, then the ranks; the leader of lower world rank sends first.
        const bool first =
            weft_runtime_world_rank() < peer_comm->peer_group()->ranks[size_t(remote_leader)];
        uint32_t theirs_head[2];
        auto send_mine = [&] {
            weft_status_t r =
                internal_send(peer_comm, mine.data(), 2 * sizeof(uint32_t), remote_leader, tag);
            return r == WEFT_SUCCESS
                       ? internal_send(peer_comm, mine.data() + 2,
                                       (mine.size() - 2) * sizeof(uint32_t), remote_leader, tag)
                       : r;
        };
        std::vector<uint32_t> theirs;
        auto recv_theirs = [&] {
            weft_status_t r =
                internal_recv(peer_comm, theirs_head, sizeof theirs_head, remote_leader, tag);
            if (r != WEFT_SUCCESS)
                return r;
            theirs.assign(theirs_head[1], 0);
            return internal_recv(peer_comm, theirs.data(), theirs.size() * sizeof(uint32_t),
                                 remote_leader, tag);
        };
        rc = first ? send_mine() : recv_theirs();
        if (rc == WEFT_SUCCESS)
            rc = first ? recv_theirs() : send_mine();
        if (rc == WEFT_SUCCESS) {
            info = {1, theirs_head[1]};
            info.insert(info.end(), theirs.begin(), theirs.end());
            for (int r = 0; r < local_comm->size && rc == WEFT_SUCCESS; ++r)
                if (r != local_comm->rank) {
                    rc = internal_send(local_comm, info.data(), 2 * sizeof(uint32_t), r,
                                       tag_intercomm);
                    if (rc == WEFT_SUCCESS)
                        rc = internal_send(local_comm, info.data() + 2,
                                           (info.size() - 2) * sizeof(uint32_t), r, tag_intercomm);
                }
        }
    } else {
        uint32_t head[2];
        rc = internal_recv(local_comm, head, sizeof head, local_leader, tag_intercomm);
        if (rc == WEFT_SUCCESS && head[0] == 0)
            return raise(local_comm, int(head[1]), fn, "the local leader's arguments are invalid");
        if (rc == WEFT_SUCCESS) {
            info.assign(2 + size_t(head[1]), 0);
            info[0] = head[0];
            info[1] = head[1];
            rc = internal_recv(local_comm, info.data() + 2, size_t(head[1]) * sizeof(uint32_t),
                               local_leader, tag_intercomm);
        }
    }
    // The id: each group's value, the leaders' exchange over peer_comm, then the leader's word.
    uint32_t cid = 0;
    if (rc == WEFT_SUCCESS)
        rc = choose_cid(
            [&](uint32_t in, uint32_t &out, bool max) {
                uint32_t ours = 0;
                if (weft_status_t r = intra_reduce(local_comm)(in, ours, max); r != WEFT_SUCCESS)
                    return r;
                if (!leader)
                    return internal_recv(local_comm, &out, sizeof out, local_leader, tag_intercomm);
                uint32_t theirs = 0;
                const bool first = weft_runtime_world_rank() <
                                   peer_comm->peer_group()->ranks[size_t(remote_leader)];
                weft_status_t r =
                    first ? internal_send(peer_comm, &ours, sizeof ours, remote_leader, tag)
                          : internal_recv(peer_comm, &theirs, sizeof theirs, remote_leader, tag);
                if (r == WEFT_SUCCESS)
                    r = first ? internal_recv(peer_comm, &theirs, sizeof theirs, remote_leader, tag)
                              : internal_send(peer_comm, &ours, sizeof ours, remote_leader, tag);
                out = max ? std::max(ours, theirs) : std::min(ours, theirs);
                for (int m = 0; m < local_comm->size && r == WEFT_SUCCESS; ++m)
                    if (m != local_comm->rank)
                        r = internal_send(local_comm, &out, sizeof out, m, tag_intercomm);
                return r;
            },
            cid);
    if (rc != WEFT_SUCCESS)
        return raise_status(local_comm, rc, fn);
    std::vector<int> remote(info.begin() + 2, info.end());
    group_retain(local_comm->group);
    weft_comm *local = make_comm(local_cid, local_comm->group, local_comm->errhandler);
    group_retain(local_comm->group);
    weft_comm *c = make_comm(cid, local_comm->group, local_comm->errhandler);
    c->remote_group = group_new(remote);
    c->local_comm = local;
    *newintercomm = c;
    if (int r = comm_activate(local); r != MPI_SUCCESS)
        return raise(local_comm, r, fn);
    if (int r = comm_activate(c); r != MPI_SUCCESS)
        return raise(local_comm, r, fn);
    return MPI_SUCCESS;
}

// MPI-3.1 6.6.2: one intracommunicator of both groups, the group that passed high = false
// first (the group of the lower leader's world rank first when both passed the same).
WEFT_PROFILED(MPI_Intercomm_merge)
int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Intercomm_merge";
    if (int rc = bad_live_comm(intercomm, fn); rc != MPI_SUCCESS)
        return rc;
    if (!intercomm->is_inter())
        return raise(intercomm, MPI_ERR_COMM, fn, "the communicator is not an intercommunicator");
    if (!newintracomm)
        return raise(intercomm, MPI_ERR_ARG, fn, "newintracomm is NULL");
    std::vector<uint32_t> theirs;
    weft_status_t rc = leaders_swap(intercomm, {high ? 1u : 0u}, theirs, 1);
    if (rc == WEFT_SUCCESS && theirs.size() != 1)
        rc = WEFT_ERR_BAD_PARAM;
    uint32_t cid = 0, local_cid = 0;
    if (rc == WEFT_SUCCESS)
        rc = inter_agree_cid(intercomm, cid, local_cid);
    if (rc != WEFT_SUCCESS)
        return raise_status(intercomm, rc, fn);
    const bool mine_high = high != 0, their_high = theirs[0] != 0;
    const bool we_first = mine_high != their_high
                              ? !mine_high
                              : intercomm->group->ranks[0] < intercomm->remote_group->ranks[0];
    const weft_group *first = we_first ? intercomm->group : intercomm->remote_group;
    const weft_group *second = we_first ? intercomm->remote_group : intercomm->group;
    std::vector<int> all(first->ranks);
    all.insert(all.end(), second->ranks.begin(), second->ranks.end());
    weft_comm *c = make_comm(cid, group_new(std::move(all)), intercomm->errhandler);
    *newintracomm = c;
    if (int r = comm_activate(c); r != MPI_SUCCESS)
        return raise(intercomm, r, fn, "the new communicator cannot be set up");
    return MPI_SUCCESS;
}

// MPI-3.1 6.4.2: collective over the members of group only (a tag tells concurrent calls
// apart); a process outside the group gets MPI_COMM_NULL.
WEFT_PROFILED(MPI_Comm_create_group)
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Comm_create_group";
    if (int rc = bad_live_comm(comm, fn); rc != MPI_SUCCESS)
        return rc;
    if (comm->is_inter())
        return raise(comm, MPI_ERR_COMM, fn, "the communicator is an intercommunicator");
    if (!group)
        return raise(comm, MPI_ERR_GROUP, fn, "invalid group");
    if (!newcomm)
        return raise(comm, MPI_ERR_ARG, fn, "newcomm is NULL");
    if (tag < 0)
        return raise(comm, MPI_ERR_TAG, fn, "tag " + std::to_string(tag) + " is negative");
    // The members' ranks in comm.
    std::vector<int> at;
    for (int w : group->ranks) {
        auto it = std::find(comm->group->ranks.begin(), comm->group->ranks.end(), w);
        if (it == comm->group->ranks.end())
            return raise(comm, MPI_ERR_GROUP, fn,
                         "the group is not a subset of the communicator's group");
        at.push_back(int(it - comm->group->ranks.begin()));
    }
    *newcomm = MPI_COMM_NULL;
    if (group->my_rank < 0)
        return MPI_SUCCESS;
    // The id, combined over the members through the first one, on an internal tag made from
    // the program's (tags 2^29 apart share one).
    const int itag = -(1 << 29) - (tag & ((1 << 29) - 1));
    uint32_t cid = 0;
    weft_status_t rc = choose_cid(
        [&](uint32_t in, uint32_t &out, bool max) {
            weft_status_t r = WEFT_SUCCESS;
            out = in;
            if (group->my_rank != 0) {
                r = internal_send(comm, &in, sizeof in, at[0], itag);
                return r == WEFT_SUCCESS ? internal_recv(comm, &out, sizeof out, at[0], itag) : r;
            }
            for (size_t m = 1; m < at.size() && r == WEFT_SUCCESS; ++m) {
                uint32_t theirs = 0;
                r = internal_recv(comm, &theirs, sizeof theirs, at[m], itag);
                out = max ? std::max(out, theirs) : std::min(out, theirs);
            }
            for (size_t m = 1; m < at.size() && r == WEFT_SUCCESS; ++m)
                r = internal_send(comm, &out, sizeof out, at[m], itag);
            return r;
        },
        cid);
    if (rc != WEFT_SUCCESS)
        return raise_status(comm, rc, fn);
    group_retain(group);
    weft_comm *c = make_comm(cid, group, comm->errhandler);
    *newcomm = c;
    if (int r = comm_activate(c); r != MPI_SUCCESS)
        return raise(comm, r, fn, "the new communicator cannot be set up");
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Comm_get_attr)
int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void *value, int *flag)
{
    WEFT_API_GUARD;
    if (int rc = bad_comm(comm, "MPI_Comm_get_attr"); rc != MPI_SUCCESS)
        return rc;
    universe = weft_runtime_world_size();
    int *v = nullptr;
    switch (keyval) {
    case MPI_TAG_UB: v = &tag_ub; break;
    case MPI_HOST: v = &host_val; break;
    case MPI_IO: v = &io_val; break;
    case MPI_WTIME_IS_GLOBAL: v = &wtime_global; break;
    case MPI_APPNUM: v = &appnum; break;
    case MPI_UNIVERSE_SIZE: v = &universe; break;
    case MPI_LASTUSEDCODE: v = last_used_code(); break;
    case MPIX_FT:
        ft_val = weft_runtime_ft_enabled();
        v = &ft_val;
        break;
    default: return comm_get_user_attr(comm, keyval, value, flag, "MPI_Comm_get_attr");
    }
    if (!value || !flag)
        return raise(comm, MPI_ERR_ARG, "MPI_Comm_get_attr",
                     value ? "flag is NULL" : "attribute_val is NULL");
    *static_cast<int **>(value) = v;
    *flag = 1;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Comm_set_name)
int PMPI_Comm_set_name(MPI_Comm comm, const char *name)
{
    WEFT_API_GUARD;
    if (int rc = bad_comm(comm, "MPI_Comm_set_name"); rc != MPI_SUCCESS)
        return rc;
    comm->name = std::string(name ? name : "").substr(0, MPI_MAX_OBJECT_NAME - 1);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Comm_get_name)
int PMPI_Comm_get_name(MPI_Comm comm, char *name, int *resultlen)
{
    WEFT_API_GUARD;
    if (int rc = bad_comm(comm, "MPI_Comm_get_name"); rc != MPI_SUCCESS)
        return rc;
    std::strncpy(name, comm->name.c_str(), MPI_MAX_OBJECT_NAME);
    name[MPI_MAX_OBJECT_NAME - 1] = '\0';
    *resultlen = int(std::strlen(name));
    return MPI_SUCCESS;
}

} // extern "C"
