// Collectives: the MPI collective calls with their argument checks, each calling the function
// coll/base chose for the communicator (coll.h: weft_coll_comm_enable, weft_coll_call).
#include "mpi_internal.h"
#include "mpi_topo.h"

#include <coll/coll.h>
#include <mpi-ext.h>
#include <weft/op.h>

#include <algorithm>
#include <climits>
#include <cstring>

namespace weft::mpi {

namespace {

weft_coll_choice_t *coll_of(weft_comm *comm)
{
    return static_cast<weft_coll_choice_t *>(comm->coll);
}

} // namespace

weft_status_t coll_init() { return weft_coll_base_init(MPI_INT, MPI_BAND, MPI_GROUP_EMPTY); }

void coll_finalize() { weft_coll_base_finalize(); }

weft_status_t coll_comm_enable(weft_comm *comm)
{
    const std::string label = comm->name.empty() ? "cid " + std::to_string(comm->cid) : comm->name;
    weft_coll_choice_t *choice = nullptr;
    weft_status_t rc = weft_coll_comm_enable(comm, label.c_str(), &choice);
    comm->coll = choice;
    return rc;
}

void coll_comm_disable(weft_comm *comm)
{
    weft_coll_comm_disable(comm, coll_of(comm));
    comm->coll = nullptr;
}

} // namespace weft::mpi

using namespace weft::mpi;

namespace {

// An operation of weft_coll_module_t, by place: WEFT_COLL_SLOT(coll_bcast).
struct Slot {
    size_t offset;
    size_t size;
};
#define WEFT_COLL_SLOT(op) (Slot{offsetof(weft_coll_module_t, op), sizeof(weft_coll_module_t::op)})

// weft_coll_call_min with a C++ callable.
template <class F>
weft_status_t call_op(weft_comm *comm, Slot slot, unsigned min_minor, F &&invoke, bool &found)
{
    int f = 0;
    const weft_status_t rc = weft_coll_call_min(
        coll_of(comm), slot.offset, slot.size, min_minor,
        [](void *context, weft_coll_module_t *module) {
            return (*static_cast<std::remove_reference_t<F> *>(context))(module);
        },
        &invoke, &f);
    found = f != 0;
    return rc;
}

// Call the function chosen on comm: the blocking one (request == NULL) or the non-blocking one
// (coll/base falls back to the next module when the chosen one declines). args end with comm;
// the request (non-blocking) and the module follow.
// min_minor: the least coll ABI minor version a module must be built for to take the call
// (Check::abi_needed).
template <class B, class N, class... Args>
int call_min(const char *fn, unsigned min_minor, MPI_Request *request, weft_comm *comm,
             B weft_coll_module_t::*blocking, Slot b, N weft_coll_module_t::*nonblocking, Slot nb,
             Args... args)
{
    bool found = false;
    weft_status_t rc;
    if (!request) {
        rc = call_op(
            comm, b, min_minor,
            [&](weft_coll_module_t *m) {
                B f = m->*blocking;
                return f ? f(args..., m) : WEFT_ERR_NOT_SUPPORTED;
            },
            found);
    } else {
        rc = call_op(
            comm, nb, min_minor,
            [&](weft_coll_module_t *m) {
                N f = m->*nonblocking;
                return f ? f(args..., request, m) : WEFT_ERR_NOT_SUPPORTED;
            },
            found);
    }
    if (!found)
        return raise(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                     "no coll component provides it on this communicator (see --mca coll)");
    return rc == WEFT_SUCCESS ? MPI_SUCCESS : raise_status(comm, rc, fn);
}
template <class... Args> int call(const char *fn, MPI_Request *request, Args... args)
{
    return call_min(fn, 0, request, args...);
}

} // namespace

namespace weft::mpi {

weft_status_t iagree_group_status(weft_comm *comm, int *flag, weft_group_t **failed,
                                  weft_request_t **request)
{
    bool found = false;
    const weft_status_t rc = call_op(
        comm, WEFT_COLL_SLOT(coll_iagree_group), 0,
        [&](weft_coll_module_t *m) {
            return m->coll_iagree_group
                       ? m->coll_iagree_group(flag, nullptr, failed, comm, request, m)
                       : WEFT_ERR_NOT_SUPPORTED;
        },
        found);
    return found ? rc : WEFT_ERR_NOT_SUPPORTED;
}

} // namespace weft::mpi

namespace {

#define WEFT_PAIR(name)                                                                            \
    &weft_coll_module_t::coll_##name, WEFT_COLL_SLOT(coll_##name),                                 \
        &weft_coll_module_t::coll_i##name, WEFT_COLL_SLOT(coll_i##name)

// The checks every collective makes, in order; rc is MPI_SUCCESS or the error raised.
struct Check {
    MPI_Comm comm;
    const char *fn;
    int rc = MPI_SUCCESS;
    // The coll ABI minor version a module must be built for to be given this call: 2 when a
    // datatype is not contiguous (modules built before 1.2 were never given one).
    unsigned abi_needed = 0;

    Check(MPI_Comm c, const char *name, MPI_Request *request, bool nonblocking) : comm(c), fn(name)
    {
        if ((rc = check_state(name)) != MPI_SUCCESS)
            return;
        if (!valid_comm(c)) {
            comm = nullptr;
            rc = raise(nullptr, MPI_ERR_COMM, name, "invalid communicator");
        } else if (weft_comm_is_revoked(c) && std::strncmp(name, "MPIX_", 5) != 0) {
            rc = raise_revoked(comm, name); // the agreement works on a revoked communicator
        } else if (nonblocking && !request) {
            rc = raise(comm, MPI_ERR_REQUEST, fn, "request is NULL");
        }
    }
    bool ok() const { return rc == MPI_SUCCESS; }
    // Entries of a per-rank array: one per rank of the remote group on an intercommunicator.
    int peers() const { return comm->is_inter() ? comm->peer_size() : comm->size; }
    Check &count(int n)
    {
        if (ok() && n < 0)
            rc = raise(comm, MPI_ERR_COUNT, fn, "negative count " + std::to_string(n));
        return *this;
    }
    // local_group: one per rank of the local group (reduce_scatter's recvcounts), else peers().
    Check &counts(const int *n, const char *what, bool local_group = false)
    {
        if (ok() && !n)
            rc = raise(comm, MPI_ERR_ARG, fn, std::string(what) + " is NULL");
        for (int i = 0; ok() && i < (local_group ? comm->size : peers()); ++i)
            if (n[i] < 0)
                rc = raise(comm, MPI_ERR_COUNT, fn,
                           std::string(what) + "[" + std::to_string(i) + "] is negative");
        return *this;
    }
    Check &array(const void *a, const char *what)
    {
        if (ok() && !a)
            rc = raise(comm, MPI_ERR_ARG, fn, std::string(what) + " is NULL");
        return *this;
    }
    Check &type(MPI_Datatype t)
    {
        if (ok() && !valid_datatype(t))
            rc = raise(comm, MPI_ERR_TYPE, fn, datatype_problem(t));
        if (ok() && !t->dense)
            abi_needed = 2;
        return *this;
    }
    Check &types(const MPI_Datatype *t, const char *what)
    {
        array(t, what);
        for (int i = 0; ok() && i < peers(); ++i)
            type(t[i]);
        return *this;
    }
    Check &op(MPI_Op o, MPI_Datatype t)
    {
        if (!ok())
            return *this;
        if (!valid_op(o))
            rc = raise(comm, MPI_ERR_OP, fn, "invalid op");
        else if (!weft_op_valid_for(o, t))
            rc = raise(comm, MPI_ERR_OP, fn,
                       std::string(o->name) + " is not defined for " + t->name);
        return *this;
    }
    Check &root(int r)
    {
        // On an intercommunicator: MPI_ROOT at the root, MPI_PROC_NULL in the rest of its
        // group, the root's rank in the remote group at the others.
        if (ok() && comm->is_inter()) {
            if (r != MPI_ROOT && r != MPI_PROC_NULL && (r < 0 || r >= comm->peer_size()))
                rc = raise(comm, MPI_ERR_ROOT, fn,
                           "root " + std::to_string(r) +
                               " is not MPI_ROOT, MPI_PROC_NULL or a rank of the remote group");
            return *this;
        }
        if (ok() && (r < 0 || r >= comm->size))
            rc = raise(comm, MPI_ERR_ROOT, fn,
                       "root " + std::to_string(r) + " outside 0.." +
                           std::to_string(comm->size - 1));
        return *this;
    }
    Check &buffer(const void *p, int n)
    {
        if (ok() && n > 0 && !p)
            rc = raise(comm, MPI_ERR_BUFFER, fn, "NULL buffer");
        return *this;
    }
    // MPI_IN_PLACE has no meaning on an intercommunicator (MPI-3.1 5.2.2).
    Check &not_in_place_inter(const void *buf)
    {
        if (ok() && buf == MPI_IN_PLACE && comm->is_inter())
            rc = raise(comm, MPI_ERR_BUFFER, fn,
                       "MPI_IN_PLACE is not allowed on an intercommunicator");
        return *this;
    }
    Check &in_place_root_only(const void *sendbuf, int root)
    {
        if (ok() && comm->is_inter())
            return not_in_place_inter(sendbuf);
        if (ok() && sendbuf == MPI_IN_PLACE && comm->rank != root)
            rc = raise(comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is for the root only");
        return *this;
    }
};

// The call, with what the checks found the module must be built for.
template <class... Args> int call(const Check &k, MPI_Request *request, Args... args)
{
    return call_min(k.fn, k.abi_needed, request, args...);
}

std::vector<size_t> sizes(const int *v, int n)
{
    return v ? std::vector<size_t>(v, v + n) : std::vector<size_t>(size_t(n), 0);
}
std::vector<ptrdiff_t> offsets(const int *v, int n)
{
    return v ? std::vector<ptrdiff_t>(v, v + n) : std::vector<ptrdiff_t>(size_t(n), 0);
}

int barrier(MPI_Comm comm, MPI_Request *req, const char *fn)
{
    Check k(comm, fn, req, req != nullptr);
    if (!k.ok())
        return k.rc;
    return call(k, req, comm, WEFT_PAIR(barrier), comm);
}

int bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *req,
          bool nb, const char *fn)
{
    Check k(comm, fn, req, nb);
    // On an intercommunicator the ranks that pass MPI_PROC_NULL take no part in the data: their
    // buffer and datatype are not significant.
    const bool no_data = k.ok() && comm->is_inter() && root == MPI_PROC_NULL;
    if (!k.count(count).root(root).ok())
        return k.rc;
    if (!no_data && !k.type(type).buffer(buf, count).ok())
        return k.rc;
    return call(k, req, comm, WEFT_PAIR(bcast), buf, size_t(count), type, root, comm);
}

int reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
           MPI_Comm comm, MPI_Request *req, bool nb, const char *fn)
{
    Check k(comm, fn, req, nb);
    // As bcast's: an intercommunicator's MPI_PROC_NULL ranks pass no data.
    const bool no_data = k.ok() && comm->is_inter() && root == MPI_PROC_NULL;
    if (!k.count(count).root(root).in_place_root_only(sendbuf, root).ok())
        return k.rc;
    if (!no_data && !k.type(type).op(op, type).ok())
        return k.rc;
    return call(k, req, comm, WEFT_PAIR(reduce), sendbuf, recvbuf, size_t(count), type, op, root,
                comm);
}

int allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
              MPI_Comm comm, MPI_Request *req, bool nb, const char *fn)
{
    Check k(comm, fn, req, nb);
    if (!k.count(count).type(type).op(op, type).buffer(recvbuf, count).ok())
        return k.rc;
    if (sendbuf == MPI_IN_PLACE && comm->is_inter())
        return raise(comm, MPI_ERR_BUFFER, fn,
                     "MPI_IN_PLACE is not allowed on an intercommunicator");
    return call(k, req, comm, WEFT_PAIR(allreduce), sendbuf, recvbuf, size_t(count), type, op,
                comm);
}

// Gather and scatter: the root's arguments count at the root only; with MPI_IN_PLACE the
// root's own block stays where it is. Counts and displacements go to the module as arrays of
// one entry per rank.
int gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
            const int *recvcounts, const int *displs, int recvcount, MPI_Datatype recvtype,
            int root, MPI_Comm comm, MPI_Request *req, bool nb, bool vector, const char *fn)
{
    Check k(comm, fn, req, nb);
    if (!k.root(root).in_place_root_only(sendbuf, root).ok())
        return k.rc;
    // On an intercommunicator the root (MPI_ROOT) only receives and the rest of its group
    // (MPI_PROC_NULL) takes no part; the other group sends.
    const bool inter = comm->is_inter();
    const bool at_root = inter ? root == MPI_ROOT : comm->rank == root,
               inplace = sendbuf == MPI_IN_PLACE;
    const bool sends = !inter || (root != MPI_ROOT && root != MPI_PROC_NULL);
    if (!inplace && sends)
        k.count(sendcount).type(sendtype);
    if (at_root && vector)
        k.counts(recvcounts, "recvcounts").array(displs, "displs").type(recvtype);
    else if (at_root)
        k.count(recvcount).type(recvtype);
    if (!k.ok())
        return k.rc;
    if (!vector)
        return call(k, req, comm, WEFT_PAIR(gather), sendbuf,
                    inplace ? size_t(recvcount) : size_t(sendcount), inplace ? recvtype : sendtype,
                    recvbuf, at_root ? size_t(recvcount) : 0, at_root ? recvtype : sendtype, root,
                    comm);
    const int n = k.peers();
    std::vector<size_t> rc = at_root ? sizes(recvcounts, n) : std::vector<size_t>(size_t(n), 0);
    std::vector<ptrdiff_t> rd = at_root ? offsets(displs, n) : std::vector<ptrdiff_t>(size_t(n), 0);
    return call(k, req, comm, WEFT_PAIR(gatherv), sendbuf, inplace ? 0 : size_t(sendcount),
                inplace ? recvtype : sendtype, recvbuf, static_cast<const size_t *>(rc.data()),
                static_cast<const ptrdiff_t *>(rd.data()), at_root ? recvtype : sendtype, root,
                comm);
}

int scatterv(const void *sendbuf, const int *sendcounts, const int *displs, int sendcount,
             MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
             MPI_Comm comm, MPI_Request *req, bool nb, bool vector, const char *fn)
{
    Check k(comm, fn, req, nb);
    if (!k.root(root).in_place_root_only(recvbuf, root).ok())
        return k.rc;
    // On an intercommunicator the root (MPI_ROOT) only sends and the rest of its group
    // (MPI_PROC_NULL) takes no part; the other group receives.
    const bool inter = comm->is_inter();
    const bool at_root = inter ? root == MPI_ROOT : comm->rank == root,
               inplace = recvbuf == MPI_IN_PLACE;
    const bool receives = !inter || (root != MPI_ROOT && root != MPI_PROC_NULL);
    if (!inplace && receives)
        k.count(recvcount).type(recvtype);
    if (at_root && vector)
        k.counts(sendcounts, "sendcounts").array(displs, "displs").type(sendtype);
    else if (at_root)
        k.count(sendcount).type(sendtype);
    if (!k.ok())
        return k.rc;
    const int n = k.peers();
    if (!vector)
        return call(k, req, comm, WEFT_PAIR(scatter), sendbuf, at_root ? size_t(sendcount) : 0,
                    at_root ? sendtype : recvtype, recvbuf,
                    inplace ? size_t(sendcount) : size_t(recvcount), inplace ? sendtype : recvtype,
                    root, comm);
    std::vector<size_t> sc = at_root ? sizes(sendcounts, n) : std::vector<size_t>(size_t(n), 0);
    std::vector<ptrdiff_t> sd = at_root ? offsets(displs, n) : std::vector<ptrdiff_t>(size_t(n));
    return call(k, req, comm, WEFT_PAIR(scatterv), sendbuf, static_cast<const size_t *>(sc.data()),
                static_cast<const ptrdiff_t *>(sd.data()), at_root ? sendtype : recvtype, recvbuf,
                inplace ? 0 : size_t(recvcount), inplace ? sendtype : recvtype, root, comm);
}

int allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               const int *recvcounts, const int *displs, int recvcount, MPI_Datatype recvtype,
               MPI_Comm comm, MPI_Request *req, bool nb, bool vector, const char *fn)
{
    Check k(comm, fn, req, nb);
    const bool inplace = sendbuf == MPI_IN_PLACE;
    if (k.not_in_place_inter(sendbuf).ok() && !inplace)
        k.count(sendcount).type(sendtype);
    if (vector)
        k.counts(recvcounts, "recvcounts").array(displs, "displs").type(recvtype);
    else
        k.count(recvcount).type(recvtype);
    if (!k.ok())
        return k.rc;
    if (!vector)
        return call(k, req, comm, WEFT_PAIR(allgather), sendbuf,
                    inplace ? size_t(recvcount) : size_t(sendcount), inplace ? recvtype : sendtype,
                    recvbuf, size_t(recvcount), recvtype, comm);
    const int n = k.peers();
    std::vector<size_t> rc = sizes(recvcounts, n);
    std::vector<ptrdiff_t> rd = offsets(displs, n);
    return call(k, req, comm, WEFT_PAIR(allgatherv), sendbuf, inplace ? 0 : size_t(sendcount),
                inplace ? recvtype : sendtype, recvbuf, static_cast<const size_t *>(rc.data()),
                static_cast<const ptrdiff_t *>(rd.data()), recvtype, comm);
}

// Alltoall, alltoallv and alltoallw; with MPI_IN_PLACE the send arguments are ignored.
int alltoallw(const void *sendbuf, const int *sendcounts, const int *sdispls,
              const MPI_Datatype *sendtypes, void *recvbuf, const int *recvcounts,
              const int *rdispls, const MPI_Datatype *recvtypes, MPI_Comm comm, MPI_Request *req,
              bool nb, const char *fn)
{
    Check k(comm, fn, req, nb);
    const bool inplace = sendbuf == MPI_IN_PLACE;
    if (k.not_in_place_inter(sendbuf).ok() && !inplace)
        k.counts(sendcounts, "sendcounts").array(sdispls, "sdispls").types(sendtypes, "sendtypes");
    k.counts(recvcounts, "recvcounts").array(rdispls, "rdispls").types(recvtypes, "recvtypes");
    if (!k.ok())
        return k.rc;
    const int n = k.peers();
    std::vector<size_t> sc = sizes(inplace ? recvcounts : sendcounts, n), rc = sizes(recvcounts, n);
    std::vector<ptrdiff_t> sd = offsets(inplace ? rdispls : sdispls, n), rd = offsets(rdispls, n);
    return call(k, req, comm, WEFT_PAIR(alltoallw), sendbuf, static_cast<const size_t *>(sc.data()),
                static_cast<const ptrdiff_t *>(sd.data()),
                static_cast<weft_datatype *const *>(inplace ? recvtypes : sendtypes), recvbuf,
                static_cast<const size_t *>(rc.data()), static_cast<const ptrdiff_t *>(rd.data()),
                static_cast<weft_datatype *const *>(recvtypes), comm);
}

int alltoallv(const void *sendbuf, const int *sendcounts, const int *sdispls, MPI_Datatype sendtype,
              void *recvbuf, const int *recvcounts, const int *rdispls, MPI_Datatype recvtype,
              MPI_Comm comm, MPI_Request *req, bool nb, const char *fn)
{
    Check k(comm, fn, req, nb);
    const bool inplace = sendbuf == MPI_IN_PLACE;
    if (k.not_in_place_inter(sendbuf).ok() && !inplace)
        k.counts(sendcounts, "sendcounts").array(sdispls, "sdispls").type(sendtype);
    k.counts(recvcounts, "recvcounts").array(rdispls, "rdispls").type(recvtype);
    if (!k.ok())
        return k.rc;
    const int n = k.peers();
    std::vector<size_t> sc = sizes(inplace ? recvcounts : sendcounts, n), rc = sizes(recvcounts, n);
    std::vector<ptrdiff_t> sd = offsets(inplace ? rdispls : sdispls, n), rd = offsets(rdispls, n);
    return call(k, req, comm, WEFT_PAIR(alltoallv), sendbuf, static_cast<const size_t *>(sc.data()),
                static_cast<const ptrdiff_t *>(sd.data()), inplace ? recvtype : sendtype, recvbuf,
                static_cast<const size_t *>(rc.data()), static_cast<const ptrdiff_t *>(rd.data()),
                recvtype, comm);
}

int alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req, bool nb,
             const char *fn)
{
    Check k(comm, fn, req, nb);
    const bool inplace = sendbuf == MPI_IN_PLACE;
    if (k.not_in_place_inter(sendbuf).ok() && !inplace)
        k.count(sendcount).type(sendtype);
    if (!k.count(recvcount).type(recvtype).ok())
        return k.rc;
    return call(k, req, comm, WEFT_PAIR(alltoall), sendbuf,
                inplace ? size_t(recvcount) : size_t(sendcount), inplace ? recvtype : sendtype,
                recvbuf, size_t(recvcount), recvtype, comm);
}

int reduce_scatter(const void *sendbuf, void *recvbuf, const int *recvcounts, int recvcount,
                   MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request *req, bool nb,
                   bool block, const char *fn)
{
    Check k(comm, fn, req, nb);
    k.not_in_place_inter(sendbuf);
    if (block)
        k.count(recvcount);
    else
        k.counts(recvcounts, "recvcounts", true); // the local group's blocks
    if (!k.type(type).op(op, type).ok())
        return k.rc;
    if (block)
        return call(k, req, comm, WEFT_PAIR(reduce_scatter_block), sendbuf, recvbuf,
                    size_t(recvcount), type, op, comm);
    std::vector<size_t> rc = sizes(recvcounts, comm->size);
    return call(k, req, comm, WEFT_PAIR(reduce_scatter), sendbuf, recvbuf,
                static_cast<const size_t *>(rc.data()), type, op, comm);
}

int scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
         MPI_Request *req, bool nb, bool exclusive, const char *fn)
{
    Check k(comm, fn, req, nb);
    if (k.ok() && comm->is_inter())
        return raise(comm, MPI_ERR_COMM, fn, "not defined on an intercommunicator");
    if (!k.count(count).type(type).op(op, type).ok())
        return k.rc;
    if (exclusive)
        return call(k, req, comm, WEFT_PAIR(exscan), sendbuf, recvbuf, size_t(count), type, op,
                    comm);
    return call(k, req, comm, WEFT_PAIR(scan), sendbuf, recvbuf, size_t(count), type, op, comm);
}

} // namespace

extern "C" {

WEFT_PROFILED(MPI_Barrier)
int PMPI_Barrier(MPI_Comm comm) { WEFT_API_RETURN(barrier(comm, nullptr, "MPI_Barrier")); }

WEFT_PROFILED(MPI_Ibarrier)
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    WEFT_API_GUARD;
    if (!request) // barrier() tells a blocking call by the NULL request
        return Check(comm, "MPI_Ibarrier", request, true).rc;
    return barrier(comm, request, "MPI_Ibarrier");
}

WEFT_PROFILED(MPI_Bcast)
int PMPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    WEFT_API_RETURN(bcast(buf, count, type, root, comm, nullptr, false, "MPI_Bcast"));
}

WEFT_PROFILED(MPI_Ibcast)
int PMPI_Ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                MPI_Request *request)
{
    WEFT_API_RETURN(bcast(buf, count, type, root, comm, request, true, "MPI_Ibcast"));
}

WEFT_PROFILED(MPI_Reduce)
int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                int root, MPI_Comm comm)
{
    WEFT_API_RETURN(
        reduce(sendbuf, recvbuf, count, type, op, root, comm, nullptr, false, "MPI_Reduce"));
}

WEFT_PROFILED(MPI_Ireduce)
int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                 int root, MPI_Comm comm, MPI_Request *request)
{
    WEFT_API_RETURN(
        reduce(sendbuf, recvbuf, count, type, op, root, comm, request, true, "MPI_Ireduce"));
}

WEFT_PROFILED(MPI_Allreduce)
int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm)
{
    WEFT_API_RETURN(
        allreduce(sendbuf, recvbuf, count, type, op, comm, nullptr, false, "MPI_Allreduce"));
}

WEFT_PROFILED(MPI_Iallreduce)
int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                    MPI_Comm comm, MPI_Request *request)
{
    WEFT_API_RETURN(
        allreduce(sendbuf, recvbuf, count, type, op, comm, request, true, "MPI_Iallreduce"));
}

WEFT_PROFILED(MPI_Gather)
int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    WEFT_API_RETURN(gatherv(sendbuf, sendcount, sendtype, recvbuf, nullptr, nullptr, recvcount,
                            recvtype, root, comm, nullptr, false, false, "MPI_Gather"));
}

WEFT_PROFILED(MPI_Igather)
int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    WEFT_API_RETURN(gatherv(sendbuf, sendcount, sendtype, recvbuf, nullptr, nullptr, recvcount,
                            recvtype, root, comm, request, true, false, "MPI_Igather"));
}

WEFT_PROFILED(MPI_Gatherv)
int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm)
{
    WEFT_API_RETURN(gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 0, recvtype,
                            root, comm, nullptr, false, true, "MPI_Gatherv"));
}

WEFT_PROFILED(MPI_Igatherv)
int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                  MPI_Comm comm, MPI_Request *request)
{
    WEFT_API_RETURN(gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 0, recvtype,
                            root, comm, request, true, true, "MPI_Igatherv"));
}

WEFT_PROFILED(MPI_Scatter)
int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    WEFT_API_RETURN(scatterv(sendbuf, nullptr, nullptr, sendcount, sendtype, recvbuf, recvcount,
                             recvtype, root, comm, nullptr, false, false, "MPI_Scatter"));
}

WEFT_PROFILED(MPI_Iscatter)
int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    WEFT_API_RETURN(scatterv(sendbuf, nullptr, nullptr, sendcount, sendtype, recvbuf, recvcount,
                             recvtype, root, comm, request, true, false, "MPI_Iscatter"));
}

WEFT_PROFILED(MPI_Scatterv)
int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm)
{
    WEFT_API_RETURN(scatterv(sendbuf, sendcounts, displs, 0, sendtype, recvbuf, recvcount, recvtype,
                             root, comm, nullptr, false, true, "MPI_Scatterv"));
}

WEFT_PROFILED(MPI_Iscatterv)
int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm, MPI_Request *request)
{
    WEFT_API_RETURN(scatterv(sendbuf, sendcounts, displs, 0, sendtype, recvbuf, recvcount, recvtype,
                             root, comm, request, true, true, "MPI_Iscatterv"));
}

WEFT_PROFILED(MPI_Allgather)
int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    WEFT_API_RETURN(allgatherv(sendbuf, sendcount, sendtype, recvbuf, nullptr, nullptr, recvcount,
                               recvtype, comm, nullptr, false, false, "MPI_Allgather"));
}

WEFT_PROFILED(MPI_Iallgather)
int PMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    WEFT_API_RETURN(allgatherv(sendbuf, sendcount, sendtype, recvbuf, nullptr, nullptr, recvcount,
                               recvtype, comm, request, true, false, "MPI_Iallgather"));
}

WEFT_PROFILED(MPI_Allgatherv)
int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm)
{
    WEFT_API_RETURN(allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 0,
                               recvtype, comm, nullptr, false, true, "MPI_Allgatherv"));
}

WEFT_PROFILED(MPI_Iallgatherv)
int PMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm, MPI_Request *request)
{
    WEFT_API_RETURN(allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 0,
                               recvtype, comm, request, true, true, "MPI_Iallgatherv"));
}

WEFT_PROFILED(MPI_Alltoall)
int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    WEFT_API_RETURN(alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                             nullptr, false, "MPI_Alltoall"));
}

WEFT_PROFILED(MPI_Ialltoall)
int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    WEFT_API_RETURN(alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                             request, true, "MPI_Ialltoall"));
}

WEFT_PROFILED(MPI_Alltoallv)
int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    WEFT_API_RETURN(alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                              recvtype, comm, nullptr, false, "MPI_Alltoallv"));
}

WEFT_PROFILED(MPI_Ialltoallv)
int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    WEFT_API_RETURN(alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                              recvtype, comm, request, true, "MPI_Ialltoallv"));
}

WEFT_PROFILED(MPI_Alltoallw)
int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    WEFT_API_RETURN(alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                              recvtypes, comm, nullptr, false, "MPI_Alltoallw"));
}

WEFT_PROFILED(MPI_Ialltoallw)
int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Request *request)
{
    WEFT_API_RETURN(alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                              recvtypes, comm, request, true, "MPI_Ialltoallw"));
}

WEFT_PROFILED(MPI_Reduce_scatter)
int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    WEFT_API_RETURN(reduce_scatter(sendbuf, recvbuf, recvcounts, 0, type, op, comm, nullptr, false,
                                   false, "MPI_Reduce_scatter"));
}

WEFT_PROFILED(MPI_Ireduce_scatter)
int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                         MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    WEFT_API_RETURN(reduce_scatter(sendbuf, recvbuf, recvcounts, 0, type, op, comm, request, true,
                                   false, "MPI_Ireduce_scatter"));
}

WEFT_PROFILED(MPI_Reduce_scatter_block)
int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype type,
                              MPI_Op op, MPI_Comm comm)
{
    WEFT_API_RETURN(reduce_scatter(sendbuf, recvbuf, nullptr, recvcount, type, op, comm, nullptr,
                                   false, true, "MPI_Reduce_scatter_block"));
}

WEFT_PROFILED(MPI_Ireduce_scatter_block)
int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype type,
                               MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    WEFT_API_RETURN(reduce_scatter(sendbuf, recvbuf, nullptr, recvcount, type, op, comm, request,
                                   true, true, "MPI_Ireduce_scatter_block"));
}

WEFT_PROFILED(MPI_Scan)
int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
              MPI_Comm comm)
{
    WEFT_API_RETURN(
        scan(sendbuf, recvbuf, count, type, op, comm, nullptr, false, false, "MPI_Scan"));
}

WEFT_PROFILED(MPI_Iscan)
int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm, MPI_Request *request)
{
    WEFT_API_RETURN(
        scan(sendbuf, recvbuf, count, type, op, comm, request, true, false, "MPI_Iscan"));
}

WEFT_PROFILED(MPI_Exscan)
int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                MPI_Comm comm)
{
    WEFT_API_RETURN(
        scan(sendbuf, recvbuf, count, type, op, comm, nullptr, false, true, "MPI_Exscan"));
}

WEFT_PROFILED(MPI_Iexscan)
int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                 MPI_Comm comm, MPI_Request *request)
{
    WEFT_API_RETURN(
        scan(sendbuf, recvbuf, count, type, op, comm, request, true, true, "MPI_Iexscan"));
}

// ULFM's agreement, here without fault tolerance (coll/base's, unless a component provides
// coll_agree): flag becomes the bitwise AND of every rank's flag.
WEFT_PROFILED(MPIX_Comm_agree)
int PMPIX_Comm_agree(MPI_Comm comm, int *flag)
{
    WEFT_API_GUARD;
    Check k(comm, "MPIX_Comm_agree", nullptr, false);
    if (!k.array(flag, "flag").ok())
        return k.rc;
    // In: the failures this rank acknowledged; out: those agreed.
    weft_group_t *acked = ft_enabled() ? acked_group(comm) : nullptr;
    weft_group_t *agreed = acked;
    const int rc = call("MPIX_Comm_agree", nullptr, comm, &weft_coll_module_t::coll_agree,
                        WEFT_COLL_SLOT(coll_agree), &weft_coll_module_t::coll_iagree,
                        WEFT_COLL_SLOT(coll_iagree), flag, &agreed, comm);
    if (agreed && agreed != acked)
        group_release(agreed);
    if (acked)
        group_release(acked);
    return rc;
}

WEFT_PROFILED(MPIX_Comm_iagree)
int PMPIX_Comm_iagree(MPI_Comm comm, int *flag, MPI_Request *request)
{
    WEFT_API_GUARD;
    Check k(comm, "MPIX_Comm_iagree", request, true);
    if (!k.array(flag, "flag").ok())
        return k.rc;
    // The failures this rank acknowledged, read at the call.
    weft_group_t *acked = ft_enabled() ? acked_group(comm) : nullptr;
    weft_group_t *in = acked;
    const int rc = call("MPIX_Comm_iagree", request, comm, &weft_coll_module_t::coll_agree,
                        WEFT_COLL_SLOT(coll_agree), &weft_coll_module_t::coll_iagree,
                        WEFT_COLL_SLOT(coll_iagree), flag, &in, comm);
    if (acked)
        group_release(acked);
    return rc;
}

} // extern "C"

// ---- Neighbourhood collectives (MPI-3.1 7.6): the communicator's topology gives each rank its
// in- and out-neighbours, which the coll operation receives along with the buffers.
namespace {

#define WEFT_NEIGHBOR_PAIR(name)                                                                   \
    &weft_coll_module_t::coll_neighbor_##name, WEFT_COLL_SLOT(coll_neighbor_##name),               \
        &weft_coll_module_t::coll_ineighbor_##name, WEFT_COLL_SLOT(coll_ineighbor_##name)

// The checks of every neighbourhood collective beyond Check's: a topology (whose neighbours
// fill nb) and no MPI_IN_PLACE (MPI-3.1 has none for them).
Check &neighbors(Check &k, const void *sendbuf, Neighbors &nb)
{
    if (!k.ok())
        return k;
    if (!k.comm->topo)
        k.rc = raise(k.comm, MPI_ERR_TOPOLOGY, k.fn, "the communicator has no process topology");
    else if (sendbuf == MPI_IN_PLACE)
        k.rc = raise(k.comm, MPI_ERR_BUFFER, k.fn,
                     "MPI_IN_PLACE is not allowed in a neighbourhood collective");
    else
        nb = topo_neighbors(*k.comm->topo, k.comm->rank);
    return k;
}

// Counts and displacements, one per neighbour; and the w-forms' datatypes.
Check &per_neighbor(Check &k, const int *counts, const void *displs, size_t n, const char *side)
{
    const std::string s(side);
    if (k.ok() && n > 0 && (!counts || !displs))
        k.rc = raise(k.comm, MPI_ERR_ARG, k.fn, s + (counts ? "displs" : "counts") + " is NULL");
    for (size_t i = 0; k.ok() && i < n; ++i)
        if (counts[i] < 0)
            k.rc = raise(k.comm, MPI_ERR_COUNT, k.fn,
                         s + "counts[" + std::to_string(i) + "] is negative");
    return k;
}
Check &per_neighbor_types(Check &k, const MPI_Datatype *types, size_t n, const char *side)
{
    if (k.ok() && n > 0 && !types)
        k.rc = raise(k.comm, MPI_ERR_ARG, k.fn, std::string(side) + "types is NULL");
    for (size_t i = 0; k.ok() && i < n; ++i)
        k.type(types[i]);
    return k;
}

int degree(const std::vector<int> &v) { return int(v.size()); }

int neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        const int *recvcounts, const int *displs, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req, bool nb_call,
                        bool vector, const char *fn)
{
    Check k(comm, fn, req, nb_call);
    Neighbors nb;
    if (!neighbors(k, sendbuf, nb).count(sendcount).type(sendtype).type(recvtype).ok())
        return k.rc;
    if (vector ? !per_neighbor(k, recvcounts, displs, nb.in.size(), "recv").ok()
               : !k.count(recvcount).ok())
        return k.rc;
    if (!vector)
        return call(k, req, comm, WEFT_NEIGHBOR_PAIR(allgather), sendbuf, size_t(sendcount),
                    sendtype, recvbuf, size_t(recvcount), recvtype, degree(nb.in),
                    static_cast<const int *>(nb.in.data()), degree(nb.out),
                    static_cast<const int *>(nb.out.data()), comm);
    const std::vector<size_t> rc = sizes(recvcounts, degree(nb.in));
    const std::vector<ptrdiff_t> rd = offsets(displs, degree(nb.in));
    return call(k, req, comm, WEFT_NEIGHBOR_PAIR(allgatherv), sendbuf, size_t(sendcount), sendtype,
                recvbuf, rc.data(), rd.data(), recvtype, degree(nb.in),
                static_cast<const int *>(nb.in.data()), degree(nb.out),
                static_cast<const int *>(nb.out.data()), comm);
}

int neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req,
                      bool nb_call, const char *fn)
{
    Check k(comm, fn, req, nb_call);
    Neighbors nb;
    if (!neighbors(k, sendbuf, nb)
             .count(sendcount)
             .type(sendtype)
             .count(recvcount)
             .type(recvtype)
             .ok())
        return k.rc;
    return call(k, req, comm, WEFT_NEIGHBOR_PAIR(alltoall), sendbuf, size_t(sendcount), sendtype,
                recvbuf, size_t(recvcount), recvtype, degree(nb.in),
                static_cast<const int *>(nb.in.data()), degree(nb.out),
                static_cast<const int *>(nb.out.data()), comm);
}

int neighbor_alltoallv(const void *sendbuf, const int *sendcounts, const int *sdispls,
                       MPI_Datatype sendtype, void *recvbuf, const int *recvcounts,
                       const int *rdispls, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req,
                       bool nb_call, const char *fn)
{
    Check k(comm, fn, req, nb_call);
    Neighbors nb;
    if (!neighbors(k, sendbuf, nb).type(sendtype).type(recvtype).ok() ||
        !per_neighbor(k, sendcounts, sdispls, nb.out.size(), "send").ok() ||
        !per_neighbor(k, recvcounts, rdispls, nb.in.size(), "recv").ok())
        return k.rc;
    const std::vector<size_t> sc = sizes(sendcounts, degree(nb.out)),
                              rc = sizes(recvcounts, degree(nb.in));
    const std::vector<ptrdiff_t> sd = offsets(sdispls, degree(nb.out)),
                                 rd = offsets(rdispls, degree(nb.in));
    return call(k, req, comm, WEFT_NEIGHBOR_PAIR(alltoallv), sendbuf, sc.data(), sd.data(),
                sendtype, recvbuf, rc.data(), rd.data(), recvtype, degree(nb.in),
                static_cast<const int *>(nb.in.data()), degree(nb.out),
                static_cast<const int *>(nb.out.data()), comm);
}

int neighbor_alltoallw(const void *sendbuf, const int *sendcounts, const MPI_Aint *sdispls,
                       const MPI_Datatype *sendtypes, void *recvbuf, const int *recvcounts,
                       const MPI_Aint *rdispls, const MPI_Datatype *recvtypes, MPI_Comm comm,
                       MPI_Request *req, bool nb_call, const char *fn)
{
    Check k(comm, fn, req, nb_call);
    Neighbors nb;
    if (!neighbors(k, sendbuf, nb).ok() ||
        !per_neighbor(k, sendcounts, sdispls, nb.out.size(), "send").ok() ||
        !per_neighbor_types(k, sendtypes, nb.out.size(), "send").ok() ||
        !per_neighbor(k, recvcounts, rdispls, nb.in.size(), "recv").ok() ||
        !per_neighbor_types(k, recvtypes, nb.in.size(), "recv").ok())
        return k.rc;
    const std::vector<size_t> sc = sizes(sendcounts, degree(nb.out)),
                              rc = sizes(recvcounts, degree(nb.in));
    const std::vector<ptrdiff_t> sd(sdispls, sdispls + nb.out.size()),
        rd(rdispls, rdispls + nb.in.size());
    return call(k, req, comm, WEFT_NEIGHBOR_PAIR(alltoallw), sendbuf, sc.data(), sd.data(),
                static_cast<weft_datatype_t *const *>(sendtypes), recvbuf, rc.data(), rd.data(),
                static_cast<weft_datatype_t *const *>(recvtypes), degree(nb.in),
                static_cast<const int *>(nb.in.data()), degree(nb.out),
                static_cast<const int *>(nb.out.data()), comm);
}

} // namespace

extern "C" {

WEFT_PROFILED(MPI_Neighbor_allgather)
int PMPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    WEFT_API_RETURN(neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, nullptr, nullptr,
                                        recvcount, recvtype, comm, nullptr, false, false,
                                        "MPI_Neighbor_allgather"));
}

WEFT_PROFILED(MPI_Ineighbor_allgather)
int PMPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request)
{
    WEFT_API_RETURN(neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, nullptr, nullptr,
                                        recvcount, recvtype, comm, request, true, false,
                                        "MPI_Ineighbor_allgather"));
}

WEFT_PROFILED(MPI_Neighbor_allgatherv)
int PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm)
{
    WEFT_API_RETURN(neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                        0, recvtype, comm, nullptr, false, true,
                                        "MPI_Neighbor_allgatherv"));
}

WEFT_PROFILED(MPI_Ineighbor_allgatherv)
int PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    WEFT_API_RETURN(neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                        0, recvtype, comm, request, true, true,
                                        "MPI_Ineighbor_allgatherv"));
}

WEFT_PROFILED(MPI_Neighbor_alltoall)
int PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    WEFT_API_RETURN(neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                      comm, nullptr, false, "MPI_Neighbor_alltoall"));
}

WEFT_PROFILED(MPI_Ineighbor_alltoall)
int PMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request)
{
    WEFT_API_RETURN(neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                      comm, request, true, "MPI_Ineighbor_alltoall"));
}

WEFT_PROFILED(MPI_Neighbor_alltoallv)
int PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    WEFT_API_RETURN(neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                       rdispls, recvtype, comm, nullptr, false,
                                       "MPI_Neighbor_alltoallv"));
}

WEFT_PROFILED(MPI_Ineighbor_alltoallv)
int PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request)
{
    WEFT_API_RETURN(neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                       rdispls, recvtype, comm, request, true,
                                       "MPI_Ineighbor_alltoallv"));
}

WEFT_PROFILED(MPI_Neighbor_alltoallw)
int PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    WEFT_API_RETURN(neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                       rdispls, recvtypes, comm, nullptr, false,
                                       "MPI_Neighbor_alltoallw"));
}

WEFT_PROFILED(MPI_Ineighbor_alltoallw)
int PMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                             MPI_Comm comm, MPI_Request *request)
{
    WEFT_API_RETURN(neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                       rdispls, recvtypes, comm, request, true,
                                       "MPI_Ineighbor_alltoallw"));
}

} // extern "C"
