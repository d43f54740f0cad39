// coll/basic on intercommunicators (MPI-3.1 5.2.2): each collective as one schedule whose
// steps inside a group run on the group's hidden intracommunicator (Sched::on_local), reusing
// the intracommunicator algorithms there, and whose steps between the groups go through the
// local leaders (rank 0 of each group), the root, or directly from every process to every
// process of the other group. root is WEFT_ROOT at the root, WEFT_PROC_NULL at the rest of its
// group, and the root's rank in the remote group at the other group's processes.
#include "coll_basic.h"

#include <weft/op.h>

#include <vector>

namespace weft::coll::basic {

namespace {

char *at(void *buf, ptrdiff_t elems, const weft_datatype_t *type)
{
    return static_cast<char *>(buf) + elems * weft_datatype_extent(type);
}
const char *at(const void *buf, ptrdiff_t elems, const weft_datatype_t *type)
{
    return static_cast<const char *>(buf) + elems * weft_datatype_extent(type);
}

// The intracommunicator algorithm build, over the local group, in the middle of s.
template <class Build> void in_local_group(Sched &s, Build build)
{
    s.next();
    s.on_local(true);
    build();
    s.next();
    s.on_local(false);
}

// count elements of every process of the local group reduced, in rank order, into a scratch
// buffer at the leader (returned there; NULL elsewhere).
char *reduce_to_leader(Sched &s, const void *sendbuf, size_t count, weft_datatype_t *type,
                       weft_comm_t *comm)
{
    weft_comm_t *local = weft_comm_local_comm(comm);
    char *acc = weft_comm_rank(comm) == 0 ? s.scratch_for(count, type) : nullptr;
    in_local_group(s, [&] { build_reduce(s, sendbuf, acc, count, type, s.op(), 0, local); });
    return acc;
}

// The leaders swap count elements: mine goes, theirs arrives (one round).
void leaders_swap(Sched &s, const void *mine, void *theirs, size_t count, weft_datatype_t *type,
                  weft_comm_t *comm)
{
    if (weft_comm_rank(comm) == 0) {
        s.recv(0, theirs, count, type);
        s.send(0, mine, count, type);
        s.next();
    }
}

} // namespace

void build_inter_barrier(Sched &s, weft_comm_t *comm)
{
    // Everyone here has entered; the leaders learn the same of the other group; the second
    // barrier holds everyone here until the leader knows.
    weft_comm_t *local = weft_comm_local_comm(comm);
    in_local_group(s, [&] { build_barrier(s, local); });
    leaders_swap(s, nullptr, nullptr, 0, type_bytes(), comm);
    in_local_group(s, [&] { build_barrier(s, local); });
}

void build_inter_bcast(Sched &s, void *buf, size_t count, weft_datatype_t *type, int root,
                       weft_comm_t *comm)
{
    if (root == WEFT_PROC_NULL)
        return;
    if (root == WEFT_ROOT) { // to the other group's leader, which passes it on
        s.send(0, buf, count, type);
        s.next();
        return;
    }
    if (weft_comm_rank(comm) == 0) {
        s.recv(root, buf, count, type);
        s.next();
    }
    weft_comm_t *local = weft_comm_local_comm(comm);
    in_local_group(s, [&] { build_bcast(s, buf, count, type, 0, local); });
}

void build_inter_reduce(Sched &s, const void *sendbuf, void *recvbuf, size_t count,
                        weft_datatype_t *type, int root, weft_comm_t *comm)
{
    if (root == WEFT_PROC_NULL)
        return;
    if (root == WEFT_ROOT) { // the other group's reduction, from its leader
        s.recv(0, recvbuf, count, type);
        s.next();
        return;
    }
    const char *acc = reduce_to_leader(s, sendbuf, count, type, comm);
    if (weft_comm_rank(comm) == 0) {
        s.send(root, acc, count, type);
        s.next();
    }
}

void build_inter_allreduce(Sched &s, const void *sendbuf, void *recvbuf, size_t count,
                           weft_datatype_t *type, weft_comm_t *comm)
{
    // Each group's reduction at its leader; the leaders swap them; each spreads what it got.
    const char *acc = reduce_to_leader(s, sendbuf, count, type, comm);
    leaders_swap(s, acc, recvbuf, count, type, comm);
    weft_comm_t *local = weft_comm_local_comm(comm);
    in_local_group(s, [&] { build_bcast(s, recvbuf, count, type, 0, local); });
}

void build_inter_gatherv(Sched &s, const void *sendbuf, size_t sendcount, weft_datatype_t *sendtype,
                         void *recvbuf, const size_t *recvcounts, const ptrdiff_t *displs,
                         weft_datatype_t *recvtype, int root, weft_comm_t *comm)
{
    if (root == WEFT_PROC_NULL)
        return;
    if (root == WEFT_ROOT) {
        for (int r = 0; r < weft_comm_peer_size(comm); ++r)
            s.recv(r, at(recvbuf, displs[r], recvtype), recvcounts[r], recvtype);
    } else {
        s.send(root, sendbuf, sendcount, sendtype);
    }
    s.next();
}

void build_inter_scatterv(Sched &s, const void *sendbuf, const size_t *sendcounts,
                          const ptrdiff_t *displs, weft_datatype_t *sendtype, void *recvbuf,
                          size_t recvcount, weft_datatype_t *recvtype, int root, weft_comm_t *comm)
{
    if (root == WEFT_PROC_NULL)
        return;
    if (root == WEFT_ROOT) {
        for (int r = 0; r < weft_comm_peer_size(comm); ++r)
            s.send(r, at(sendbuf, displs[r], sendtype), sendcounts[r], sendtype);
    } else {
        s.recv(root, recvbuf, recvcount, recvtype);
    }
    s.next();
}

void build_inter_allgatherv(Sched &s, const void *sendbuf, size_t sendcount,
                            weft_datatype_t *sendtype, void *recvbuf, const size_t *recvcounts,
                            const ptrdiff_t *displs, weft_datatype_t *recvtype, weft_comm_t *comm)
{
    // Every process sends its block to every process of the other group, in one round; each
    // starts with a different peer so that no process gets every first message.
    const int m = weft_comm_peer_size(comm), me = weft_comm_rank(comm);
    for (int r = 0; r < m; ++r)
        s.recv(r, at(recvbuf, displs[r], recvtype), recvcounts[r], recvtype);
    for (int k = 0; k < m; ++k)
        s.send((me + k) % m, sendbuf, sendcount, sendtype);
    s.next();
}

void build_inter_alltoallw(Sched &s, const void *sendbuf, const size_t *sendcounts,
                           const ptrdiff_t *sdispls, weft_datatype_t *const *sendtypes,
                           void *recvbuf, const size_t *recvcounts, const ptrdiff_t *rdispls,
                           weft_datatype_t *const *recvtypes, weft_comm_t *comm)
{
    // Block r of each side goes to, and comes from, rank r of the other group: one round.
    const int m = weft_comm_peer_size(comm), me = weft_comm_rank(comm);
    const char *src = static_cast<const char *>(sendbuf);
    char *dst = static_cast<char *>(recvbuf);
    for (int r = 0; r < m; ++r)
        s.recv(r, dst + rdispls[r], recvcounts[r], recvtypes[r]);
    for (int k = 0; k < m; ++k) {
        const int r = (me + k) % m;
        s.send(r, src + sdispls[r], sendcounts[r], sendtypes[r]);
    }
    s.next();
}

void build_inter_reduce_scatter(Sched &s, const void *sendbuf, void *recvbuf,
                                const size_t *recvcounts, weft_datatype_t *type, weft_comm_t *comm)
{
    // Both groups' vectors have the same length (MPI-3.1 5.10.1), the sum of the local counts.
    // Each group's reduction at its leader; the leaders swap them; each leader scatters the
    // other group's over its own as recvcounts say.
    weft_comm_t *local = weft_comm_local_comm(comm);
    const int n = weft_comm_size(comm), me = weft_comm_rank(comm);
    std::vector<ptrdiff_t> displs(size_t(n), 0);
    size_t total = 0;
    for (int i = 0; i < n; ++i) {
        displs[size_t(i)] = ptrdiff_t(total);
        total += recvcounts[i];
    }
    const char *acc = reduce_to_leader(s, sendbuf, total, type, comm);
    char *theirs = me == 0 ? s.scratch_for(total, type) : nullptr;
    leaders_swap(s, acc, theirs, total, type, comm);
    in_local_group(s, [&] {
        build_scatterv(s, theirs, recvcounts, displs.data(), type, recvbuf, recvcounts[me], type, 0,
                       local);
    });
}

} // namespace weft::coll::basic
