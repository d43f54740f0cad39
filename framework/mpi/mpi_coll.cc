// Collectives: the coll framework's choice per communicator (each operation from the module of
// highest priority that provides it), the non-fault-tolerant agreement that coll/base provides,
// and the MPI collective calls with their argument checks.
#include "mpi_internal.h"

#include "coll/base/coll_base_select.h"
#include "mca_output.h"
#include "mca_select.h"

#include <coll/coll.h>
#include <mpi-ext.h>
#include <weft/op.h>

#include <algorithm>
#include <climits>
#include <cstring>

namespace weft::mpi {

namespace {

// The coll components that accepted this job (init_query succeeded).
std::vector<const weft_coll_component_t *> components;

// With coll_base_verbose >= 10: which module serves each operation of a new communicator.
void describe_choice(weft_comm *comm, const coll::base::Table &table,
                     const std::vector<std::pair<weft_coll_module_t *, std::string>> &names)
{
    std::string text = "coll: communicator " +
                       (comm->name.empty() ? "cid " + std::to_string(comm->cid) : comm->name) +
                       " (" + std::to_string(comm->size) + " ranks):";
    size_t k = 0;
#define WEFT_COLL_NAME(op)                                                                         \
    {                                                                                              \
        std::string who = "none";                                                                  \
        for (const auto &[m, n] : names)                                                           \
            if (table.owner[k] == m)                                                               \
                who = n;                                                                           \
        text += std::string(" ") + (#op + 5) + "=" + who;                                          \
        ++k;                                                                                       \
    }
    WEFT_COLL_OPS(WEFT_COLL_NAME)
#undef WEFT_COLL_NAME
    output::info(text);
}
bool coll_open = false;

struct CommColl {
    coll::base::Table table;
    std::vector<weft_coll_module_t *> modules; // every module comm_query returned
    std::vector<coll::base::Offer> ranked;     // the enabled ones, highest priority first
};

CommColl *coll_of(weft_comm *comm) { return static_cast<CommColl *>(comm->coll); }

// ---- coll/base's agreement: not fault tolerant, an allreduce of the flags with bitwise AND.
weft_status_t base_agree(int *flag, weft_group_t **group, weft_comm_t *comm, weft_coll_module_t *)
{
    CommColl *c = coll_of(comm);
    if (comm->is_inter())
        return WEFT_ERR_NOT_SUPPORTED;
    const auto k = size_t(coll::base::Op::coll_allreduce);
    if (!c->table.functions.coll_allreduce)
        return WEFT_ERR_NOT_SUPPORTED;
    if (weft_status_t rc = c->table.functions.coll_allreduce(WEFT_IN_PLACE, flag, 1, MPI_INT,
                                                             MPI_BAND, comm, c->table.owner[k]);
        rc != WEFT_SUCCESS)
        return rc;
    if (group)
        *group = MPI_GROUP_EMPTY; // nobody failed: nothing to agree on
    return WEFT_SUCCESS;
}

weft_status_t base_iagree(int *flag, weft_group_t **group, weft_comm_t *comm,
                          weft_request_t **request, weft_coll_module_t *)
{
    CommColl *c = coll_of(comm);
    const auto k = size_t(coll::base::Op::coll_iallreduce);
    if (comm->is_inter())
        return WEFT_ERR_NOT_SUPPORTED;
    if (!c->table.functions.coll_iallreduce)
        return WEFT_ERR_NOT_SUPPORTED;
    if (group)
        *group = MPI_GROUP_EMPTY;
    return c->table.functions.coll_iallreduce(WEFT_IN_PLACE, flag, 1, MPI_INT, MPI_BAND, comm,
                                              request, c->table.owner[k]);
}

// Offers the agreement only (every other operation is NULL).
weft_coll_module_t base_module = [] {
    weft_coll_module_t m{};
    m.struct_size = sizeof(weft_coll_module_t);
    m.coll_agree = base_agree;
    m.coll_iagree = base_iagree;
    return m;
}();

} // namespace

weft_status_t coll_init()
{
    components.clear();
    mca::FrameworkBase *base = mca::framework_base("coll");
    std::vector<mca::Candidate> chosen;
    if (!base)
        return WEFT_ERR_NOT_FOUND;
    // A bad --mca coll list (an unknown component, say) is an error, as for every framework.
    if (weft_status_t rc = base->open(); rc != WEFT_SUCCESS)
        return rc;
    if (weft_status_t rc = base->select_all(chosen); rc != WEFT_SUCCESS)
        return rc;
    for (const mca::Candidate &c : chosen) {
        const auto *comp = reinterpret_cast<const weft_coll_component_t *>(c.component->desc);
        if (comp->init_query) {
            if (weft_status_t rc = comp->init_query(0, 0); rc != WEFT_SUCCESS) {
                output::warning(std::string("coll/") + comp->mca.name +
                                " cannot run and is left out: " + weft_status_string(rc));
                continue;
            }
        }
        components.push_back(comp);
    }
    coll_open = true;
    return WEFT_SUCCESS;
}

void coll_finalize()
{
    components.clear();
    if (coll_open)
        mca::framework_base("coll")->close();
    coll_open = false;
}

weft_status_t coll_comm_enable(weft_comm *comm)
{
    auto *c = new CommColl;
    std::vector<coll::base::Offer> offers;
    std::vector<std::pair<weft_coll_module_t *, std::string>> names;
    // coll/base's agreement, below anything a component offers.
    offers.push_back({&base_module, INT_MIN});
    names.emplace_back(&base_module, "base");
    for (const weft_coll_component_t *comp : components) {
        int priority = 0;
        if (weft_coll_module_t *m =
                comp->comm_query ? comp->comm_query(comm, &priority) : nullptr) {
            offers.push_back({m, priority});
            c->modules.push_back(m);
            names.emplace_back(m, comp->mca.name);
        }
    }
    // Enable the winners (once each); one that fails is dropped and the choice made again
    // without it. Every rank goes through the same offers in the same order.
    std::vector<weft_coll_module_t *> enabled = {&base_module};
    auto is_enabled = [&](weft_coll_module_t *m) {
        return std::find(enabled.begin(), enabled.end(), m) != enabled.end();
    };
    for (bool again = true; again;) {
        again = false;
        coll::base::resolve(offers, c->table);
        for (size_t i = 1; i < offers.size(); ++i) {
            weft_coll_module_t *m = offers[i].module;
            bool won = false;
            for (weft_coll_module_t *owner : c->table.owner)
                won |= owner == m;
            if (!won || is_enabled(m))
                continue;
            if (m->coll_module_enable && m->coll_module_enable(m, comm) != WEFT_SUCCESS) {
                offers.erase(offers.begin() + ptrdiff_t(i));
                again = true;
                break;
            }
            enabled.push_back(m);
        }
    }
    // What a declined call may fall back to: enabled modules only, by priority.
    for (const coll::base::Offer &o : offers)
        if (is_enabled(o.module))
            c->ranked.push_back(o);
    std::stable_sort(c->ranked.begin(), c->ranked.end(),
                     [](const coll::base::Offer &a, const coll::base::Offer &b) {
                         return a.priority > b.priority;
                     });
    comm->coll = c;
    if (mca::framework_base("coll")->verbose() >= 10)
        describe_choice(comm, c->table, names);
    return WEFT_SUCCESS;
}

const coll::base::Table *coll_table(weft_comm *comm)
{
    CommColl *c = coll_of(comm);
    return c ? &c->table : nullptr;
}

const std::vector<coll::base::Offer> *coll_ranked(weft_comm *comm)
{
    CommColl *c = coll_of(comm);
    return c ? &c->ranked : nullptr;
}

void coll_comm_disable(weft_comm *comm)
{
    CommColl *c = coll_of(comm);
    if (!c)
        return;
    for (weft_coll_module_t *m : c->modules)
        if (m->coll_module_disable)
            m->coll_module_disable(m, comm);
    delete c;
    comm->coll = nullptr;
}

} // namespace weft::mpi

using namespace weft::mpi;

namespace {

using weft::coll::base::Op;

// Whether module's struct (as its component was built) reaches the operation at member.
template <class F> bool module_has(const weft_coll_module_t *module, F weft_coll_module_t::*member)
{
    const auto offset = size_t(reinterpret_cast<const char *>(&(module->*member)) -
                               reinterpret_cast<const char *>(module));
    return module->struct_size >= offset + sizeof(F);
}

// Call the function chosen on comm: the blocking one (request == NULL) or the non-blocking one.
// args end with comm; the request (non-blocking) and the module follow.
template <class B, class N, class... Args>
int call(const char *fn, MPI_Request *request, weft_comm *comm, B weft_coll_module_t::*blocking,
         Op b, N weft_coll_module_t::*nonblocking, Op nb, Args... args)
{
    const weft::coll::base::Table *t = coll_table(comm);
    weft_status_t rc;
    weft_coll_module_t *owner;
    if (!request) {
        B f = t ? t->functions.*blocking : nullptr;
        if (!f)
            return raise(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                         "no coll component provides it on this communicator (see --mca coll)");
        owner = t->owner[size_t(b)];
        rc = f(args..., owner);
    } else {
        N f = t ? t->functions.*nonblocking : nullptr;
        if (!f)
            return raise(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                         "no coll component provides it on this communicator (see --mca coll)");
        owner = t->owner[size_t(nb)];
        rc = f(args..., request, owner);
    }
    // A module may decline one call (coll.h): the next module by priority that provides the
    // operation takes it.
    if (rc == WEFT_ERR_NOT_SUPPORTED) {
        const auto *ranked = coll_ranked(comm);
        bool after = false;
        for (const weft::coll::base::Offer &o : *ranked) {
            if (o.module == owner) {
                after = true;
                continue;
            }
            if (!after)
                continue;
            if (!request && module_has(o.module, blocking) && o.module->*blocking) {
                if ((rc = (o.module->*blocking)(args..., o.module)) != WEFT_ERR_NOT_SUPPORTED)
                    break;
            } else if (request && module_has(o.module, nonblocking) && o.module->*nonblocking) {
                if ((rc = (o.module->*nonblocking)(args..., request, o.module)) !=
                    WEFT_ERR_NOT_SUPPORTED)
                    break;
            }
        }
    }
    return rc == WEFT_SUCCESS ? MPI_SUCCESS : raise_status(comm, rc, fn);
}

#define WEFT_PAIR(name)                                                                            \
    &weft_coll_module_t::coll_##name, Op::coll_##name, &weft_coll_module_t::coll_i##name,          \
        Op::coll_i##name

// The checks every collective makes, in order; rc is MPI_SUCCESS or the error raised.
struct Check {
    MPI_Comm comm;
    const char *fn;
    int rc = MPI_SUCCESS;

    Check(MPI_Comm c, const char *name, MPI_Request *request, bool nonblocking) : comm(c), fn(name)
    {
        if ((rc = check_state(name)) != MPI_SUCCESS)
            return;
        if (!valid_comm(c)) {
            comm = nullptr;
            rc = raise(nullptr, MPI_ERR_COMM, name, "invalid communicator");
        } else if (nonblocking && !request) {
            rc = raise(comm, MPI_ERR_REQUEST, fn, "request is NULL");
        }
    }
    bool ok() const { return rc == MPI_SUCCESS; }
    Check &count(int n)
    {
        if (ok() && n < 0)
            rc = raise(comm, MPI_ERR_COUNT, fn, "negative count " + std::to_string(n));
        return *this;
    }
    Check &counts(const int *n, const char *what)
    {
        if (ok() && !n)
            rc = raise(comm, MPI_ERR_ARG, fn, std::string(what) + " is NULL");
        for (int i = 0; ok() && i < comm->size; ++i)
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
        return *this;
    }
    Check &types(const MPI_Datatype *t, const char *what)
    {
        array(t, what);
        for (int i = 0; ok() && i < comm->size; ++i)
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
    Check &in_place_root_only(const void *sendbuf, int root)
    {
        if (ok() && sendbuf == MPI_IN_PLACE && comm->rank != root)
            rc = raise(comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is for the root only");
        return *this;
    }
};

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
    return call(fn, req, comm, WEFT_PAIR(barrier), comm);
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
    return call(fn, req, comm, WEFT_PAIR(bcast), buf, size_t(count), type, root, comm);
}

int reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
           MPI_Comm comm, MPI_Request *req, bool nb, const char *fn)
{
    Check k(comm, fn, req, nb);
    if (!k.count(count).type(type).op(op, type).root(root).in_place_root_only(sendbuf, root).ok())
        return k.rc;
    return call(fn, req, comm, WEFT_PAIR(reduce), sendbuf, recvbuf, size_t(count), type, op, root,
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
    return call(fn, req, comm, WEFT_PAIR(allreduce), sendbuf, recvbuf, size_t(count), type, op,
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
    const bool at_root = comm->rank == root, inplace = sendbuf == MPI_IN_PLACE;
    if (!inplace)
        k.count(sendcount).type(sendtype);
    if (at_root && vector)
        k.counts(recvcounts, "recvcounts").array(displs, "displs").type(recvtype);
    else if (at_root)
        k.count(recvcount).type(recvtype);
    if (!k.ok())
        return k.rc;
    if (!vector)
        return call(fn, req, comm, WEFT_PAIR(gather), sendbuf,
                    inplace ? size_t(recvcount) : size_t(sendcount), inplace ? recvtype : sendtype,
                    recvbuf, at_root ? size_t(recvcount) : 0, at_root ? recvtype : sendtype, root,
                    comm);
    const int n = comm->size;
    std::vector<size_t> rc = at_root ? sizes(recvcounts, n) : std::vector<size_t>(size_t(n), 0);
    std::vector<ptrdiff_t> rd = at_root ? offsets(displs, n) : std::vector<ptrdiff_t>(size_t(n), 0);
    return call(fn, req, comm, WEFT_PAIR(gatherv), sendbuf, inplace ? 0 : size_t(sendcount),
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
    const bool at_root = comm->rank == root, inplace = recvbuf == MPI_IN_PLACE;
    if (!inplace)
        k.count(recvcount).type(recvtype);
    if (at_root && vector)
        k.counts(sendcounts, "sendcounts").array(displs, "displs").type(sendtype);
    else if (at_root)
        k.count(sendcount).type(sendtype);
    if (!k.ok())
        return k.rc;
    const int n = comm->size;
    if (!vector)
        return call(fn, req, comm, WEFT_PAIR(scatter), sendbuf, at_root ? size_t(sendcount) : 0,
                    at_root ? sendtype : recvtype, recvbuf,
                    inplace ? size_t(sendcount) : size_t(recvcount), inplace ? sendtype : recvtype,
                    root, comm);
    std::vector<size_t> sc = at_root ? sizes(sendcounts, n) : std::vector<size_t>(size_t(n), 0);
    std::vector<ptrdiff_t> sd = at_root ? offsets(displs, n) : std::vector<ptrdiff_t>(size_t(n));
    return call(fn, req, comm, WEFT_PAIR(scatterv), sendbuf, static_cast<const size_t *>(sc.data()),
                static_cast<const ptrdiff_t *>(sd.data()), at_root ? sendtype : recvtype, recvbuf,
                inplace ? 0 : size_t(recvcount), inplace ? sendtype : recvtype, root, comm);
}

int allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               const int *recvcounts, const int *displs, int recvcount, MPI_Datatype recvtype,
               MPI_Comm comm, MPI_Request *req, bool nb, bool vector, const char *fn)
{
    Check k(comm, fn, req, nb);
    const bool inplace = sendbuf == MPI_IN_PLACE;
    if (k.ok() && !inplace)
        k.count(sendcount).type(sendtype);
    if (vector)
        k.counts(recvcounts, "recvcounts").array(displs, "displs").type(recvtype);
    else
        k.count(recvcount).type(recvtype);
    if (!k.ok())
        return k.rc;
    if (!vector)
        return call(fn, req, comm, WEFT_PAIR(allgather), sendbuf,
                    inplace ? size_t(recvcount) : size_t(sendcount), inplace ? recvtype : sendtype,
                    recvbuf, size_t(recvcount), recvtype, comm);
    const int n = comm->size;
    std::vector<size_t> rc = sizes(recvcounts, n);
    std::vector<ptrdiff_t> rd = offsets(displs, n);
    return call(fn, req, comm, WEFT_PAIR(allgatherv), sendbuf, inplace ? 0 : size_t(sendcount),
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
    if (k.ok() && !inplace)
        k.counts(sendcounts, "sendcounts").array(sdispls, "sdispls").types(sendtypes, "sendtypes");
    k.counts(recvcounts, "recvcounts").array(rdispls, "rdispls").types(recvtypes, "recvtypes");
    if (!k.ok())
        return k.rc;
    const int n = comm->size;
    std::vector<size_t> sc = sizes(inplace ? recvcounts : sendcounts, n), rc = sizes(recvcounts, n);
    std::vector<ptrdiff_t> sd = offsets(inplace ? rdispls : sdispls, n), rd = offsets(rdispls, n);
    return call(fn, req, comm, WEFT_PAIR(alltoallw), sendbuf,
                static_cast<const size_t *>(sc.data()), static_cast<const ptrdiff_t *>(sd.data()),
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
    if (k.ok() && !inplace)
        k.counts(sendcounts, "sendcounts").array(sdispls, "sdispls").type(sendtype);
    k.counts(recvcounts, "recvcounts").array(rdispls, "rdispls").type(recvtype);
    if (!k.ok())
        return k.rc;
    const int n = comm->size;
    std::vector<size_t> sc = sizes(inplace ? recvcounts : sendcounts, n), rc = sizes(recvcounts, n);
    std::vector<ptrdiff_t> sd = offsets(inplace ? rdispls : sdispls, n), rd = offsets(rdispls, n);
    return call(fn, req, comm, WEFT_PAIR(alltoallv), sendbuf,
                static_cast<const size_t *>(sc.data()), static_cast<const ptrdiff_t *>(sd.data()),
                inplace ? recvtype : sendtype, recvbuf, static_cast<const size_t *>(rc.data()),
                static_cast<const ptrdiff_t *>(rd.data()), recvtype, comm);
}

int alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req, bool nb,
             const char *fn)
{
    Check k(comm, fn, req, nb);
    const bool inplace = sendbuf == MPI_IN_PLACE;
    if (k.ok() && !inplace)
        k.count(sendcount).type(sendtype);
    if (!k.count(recvcount).type(recvtype).ok())
        return k.rc;
    return call(fn, req, comm, WEFT_PAIR(alltoall), sendbuf,
                inplace ? size_t(recvcount) : size_t(sendcount), inplace ? recvtype : sendtype,
                recvbuf, size_t(recvcount), recvtype, comm);
}

int reduce_scatter(const void *sendbuf, void *recvbuf, const int *recvcounts, int recvcount,
                   MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request *req, bool nb,
                   bool block, const char *fn)
{
    Check k(comm, fn, req, nb);
    if (block)
        k.count(recvcount);
    else
        k.counts(recvcounts, "recvcounts");
    if (!k.type(type).op(op, type).ok())
        return k.rc;
    if (block)
        return call(fn, req, comm, WEFT_PAIR(reduce_scatter_block), sendbuf, recvbuf,
                    size_t(recvcount), type, op, comm);
    std::vector<size_t> rc = sizes(recvcounts, comm->size);
    return call(fn, req, comm, WEFT_PAIR(reduce_scatter), sendbuf, recvbuf,
                static_cast<const size_t *>(rc.data()), type, op, comm);
}

int scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
         MPI_Request *req, bool nb, bool exclusive, const char *fn)
{
    Check k(comm, fn, req, nb);
    if (!k.count(count).type(type).op(op, type).ok())
        return k.rc;
    if (exclusive)
        return call(fn, req, comm, WEFT_PAIR(exscan), sendbuf, recvbuf, size_t(count), type, op,
                    comm);
    return call(fn, req, comm, WEFT_PAIR(scan), sendbuf, recvbuf, size_t(count), type, op, comm);
}

} // namespace

extern "C" {

int MPI_Barrier(MPI_Comm comm) { return barrier(comm, nullptr, "MPI_Barrier"); }

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    if (!request) // barrier() tells a blocking call by the NULL request
        return Check(comm, "MPI_Ibarrier", request, true).rc;
    return barrier(comm, request, "MPI_Ibarrier");
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    return bcast(buf, count, type, root, comm, nullptr, false, "MPI_Bcast");
}

int MPI_Ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
               MPI_Request *request)
{
    return bcast(buf, count, type, root, comm, request, true, "MPI_Ibcast");
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm)
{
    return reduce(sendbuf, recvbuf, count, type, op, root, comm, nullptr, false, "MPI_Reduce");
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request *request)
{
    return reduce(sendbuf, recvbuf, count, type, op, root, comm, request, true, "MPI_Ireduce");
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    return allreduce(sendbuf, recvbuf, count, type, op, comm, nullptr, false, "MPI_Allreduce");
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, MPI_Request *request)
{
    return allreduce(sendbuf, recvbuf, count, type, op, comm, request, true, "MPI_Iallreduce");
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return gatherv(sendbuf, sendcount, sendtype, recvbuf, nullptr, nullptr, recvcount, recvtype,
                   root, comm, nullptr, false, false, "MPI_Gather");
}

int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    return gatherv(sendbuf, sendcount, sendtype, recvbuf, nullptr, nullptr, recvcount, recvtype,
                   root, comm, request, true, false, "MPI_Igather");
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
    return gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 0, recvtype, root,
                   comm, nullptr, false, true, "MPI_Gatherv");
}

int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request *request)
{
    return gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 0, recvtype, root,
                   comm, request, true, true, "MPI_Igatherv");
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return scatterv(sendbuf, nullptr, nullptr, sendcount, sendtype, recvbuf, recvcount, recvtype,
                    root, comm, nullptr, false, false, "MPI_Scatter");
}

int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    return scatterv(sendbuf, nullptr, nullptr, sendcount, sendtype, recvbuf, recvcount, recvtype,
                    root, comm, request, true, false, "MPI_Iscatter");
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm)
{
    return scatterv(sendbuf, sendcounts, displs, 0, sendtype, recvbuf, recvcount, recvtype, root,
                    comm, nullptr, false, true, "MPI_Scatterv");
}

int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *request)
{
    return scatterv(sendbuf, sendcounts, displs, 0, sendtype, recvbuf, recvcount, recvtype, root,
                    comm, request, true, true, "MPI_Iscatterv");
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return allgatherv(sendbuf, sendcount, sendtype, recvbuf, nullptr, nullptr, recvcount, recvtype,
                      comm, nullptr, false, false, "MPI_Allgather");
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return allgatherv(sendbuf, sendcount, sendtype, recvbuf, nullptr, nullptr, recvcount, recvtype,
                      comm, request, true, false, "MPI_Iallgather");
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 0, recvtype, comm,
                      nullptr, false, true, "MPI_Allgatherv");
}

int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request)
{
    return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 0, recvtype, comm,
                      request, true, true, "MPI_Iallgatherv");
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr,
                    false, "MPI_Alltoall");
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request, true,
                    "MPI_Ialltoall");
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                     comm, nullptr, false, "MPI_Alltoallv");
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                     comm, request, true, "MPI_Ialltoallv");
}

int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                     recvtypes, comm, nullptr, false, "MPI_Alltoallw");
}

int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request *request)
{
    return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                     recvtypes, comm, request, true, "MPI_Ialltoallw");
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    return reduce_scatter(sendbuf, recvbuf, recvcounts, 0, type, op, comm, nullptr, false, false,
                          "MPI_Reduce_scatter");
}

int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return reduce_scatter(sendbuf, recvbuf, recvcounts, 0, type, op, comm, request, true, false,
                          "MPI_Ireduce_scatter");
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype type,
                             MPI_Op op, MPI_Comm comm)
{
    return reduce_scatter(sendbuf, recvbuf, nullptr, recvcount, type, op, comm, nullptr, false,
                          true, "MPI_Reduce_scatter_block");
}

int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype type,
                              MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return reduce_scatter(sendbuf, recvbuf, nullptr, recvcount, type, op, comm, request, true, true,
                          "MPI_Ireduce_scatter_block");
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
             MPI_Comm comm)
{
    return scan(sendbuf, recvbuf, count, type, op, comm, nullptr, false, false, "MPI_Scan");
}

int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
              MPI_Comm comm, MPI_Request *request)
{
    return scan(sendbuf, recvbuf, count, type, op, comm, request, true, false, "MPI_Iscan");
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm)
{
    return scan(sendbuf, recvbuf, count, type, op, comm, nullptr, false, true, "MPI_Exscan");
}

int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                MPI_Comm comm, MPI_Request *request)
{
    return scan(sendbuf, recvbuf, count, type, op, comm, request, true, true, "MPI_Iexscan");
}

// ULFM's agreement, here without fault tolerance (coll/base's, unless a component provides
// coll_agree): flag becomes the bitwise AND of every rank's flag.
int MPIX_Comm_agree(MPI_Comm comm, int *flag)
{
    Check k(comm, "MPIX_Comm_agree", nullptr, false);
    if (!k.array(flag, "flag").ok())
        return k.rc;
    weft_group_t *agreed = nullptr;
    const int rc =
        call("MPIX_Comm_agree", nullptr, comm, &weft_coll_module_t::coll_agree, Op::coll_agree,
             &weft_coll_module_t::coll_iagree, Op::coll_iagree, flag, &agreed, comm);
    if (agreed)
        group_release(agreed);
    return rc;
}

int MPIX_Comm_iagree(MPI_Comm comm, int *flag, MPI_Request *request)
{
    Check k(comm, "MPIX_Comm_iagree", request, true);
    if (!k.array(flag, "flag").ok())
        return k.rc;
    return call("MPIX_Comm_iagree", request, comm, &weft_coll_module_t::coll_agree, Op::coll_agree,
                &weft_coll_module_t::coll_iagree, Op::coll_iagree, flag,
                static_cast<weft_group_t **>(nullptr), comm);
}

} // extern "C"
