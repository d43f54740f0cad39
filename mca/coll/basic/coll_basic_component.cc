// coll/basic: the component, its parameters, and the module's operations (each builds a
// schedule, coll_basic.h, and runs it here or hands it to a request).
#include "coll_basic.h"

#include <weft/mca.h>
#include <weft/op.h>

#include <vector>

// The one symbol the component exports (it is built with -fvisibility=hidden).
extern "C" {
__attribute__((visibility("default"))) extern const weft_coll_component_t mca_coll_basic_component;
}

namespace weft::coll::basic {

Tuning tuning;

namespace {

enum Param {
    kPriority,
    kBcastPipelineMin,
    kBcastSegment,
    kAllreduceRsagMin,
    kAllgatherBruckMax,
    kBarrierAlgorithm,
    kDirectMaxBytes,
    kDirectMaxRanks,
    kBcastAlgorithm,
    kReduceAlgorithm,
    kAllreduceAlgorithm,
    kAllgatherAlgorithm,
    kAlltoallAlgorithm,
    kVerbose,
    kNumParams
};
weft_mca_param_t *params[kNumParams];

const weft_mca_enum_value_t barrier_algorithms[] = {
    {"dissemination", 0}, {"recursive_doubling", 1}, {"binomial", 2}, {nullptr, 0}};
constexpr weft_mca_enum_value_t alg(const char *name, Alg a) { return {name, int(a)}; }
const weft_mca_enum_value_t bcast_algorithms[] = {alg("auto", Alg::automatic),
                                                  alg("binomial", Alg::binomial),
                                                  alg("pipeline", Alg::pipeline),
                                                  {nullptr, 0}};
const weft_mca_enum_value_t reduce_algorithms[] = {alg("auto", Alg::automatic),
                                                   alg("binomial", Alg::binomial),
                                                   alg("direct", Alg::direct),
                                                   {nullptr, 0}};
const weft_mca_enum_value_t allreduce_algorithms[] = {
    alg("auto", Alg::automatic),
    alg("recursive_doubling", Alg::recursive_doubling),
    alg("rabenseifner", Alg::rabenseifner),
    alg("direct", Alg::direct),
    {nullptr, 0}};
const weft_mca_enum_value_t allgather_algorithms[] = {alg("auto", Alg::automatic),
                                                      alg("bruck", Alg::bruck),
                                                      alg("ring", Alg::ring),
                                                      alg("direct", Alg::direct),
                                                      {nullptr, 0}};
const weft_mca_enum_value_t alltoall_algorithms[] = {alg("auto", Alg::automatic),
                                                     alg("pairwise", Alg::pairwise),
                                                     alg("direct", Alg::direct),
                                                     {nullptr, 0}};

weft_status_t register_params()
{
    // One row per Param, in the same order. The thresholds choose algorithms, so every rank
    // must have the same values.
    const weft_mca_param_def_t defs[kNumParams] = {
        {.name = "priority",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "10",
         .help = "Priority of coll/basic for every collective of every communicator; a "
                 "component with a higher priority for an operation replaces basic for that "
                 "operation only.",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "bcast_pipeline_min",
         .type = WEFT_MCA_PARAM_SIZE,
         .default_value = "256k",
         .help = "Messages of at least this many bytes are broadcast along a pipelined chain "
                 "of bcast_segment pieces; smaller ones down a binomial tree.",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "bcast_segment",
         .type = WEFT_MCA_PARAM_SIZE,
         .default_value = "64k",
         .help = "Piece size, in bytes, of the pipelined broadcast.",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "allreduce_rsag_min",
         .type = WEFT_MCA_PARAM_SIZE,
         .default_value = "32k",
         .help = "Allreduces of at least this many bytes with a commutative op use "
                 "Rabenseifner's algorithm (reduce-scatter by recursive halving, then "
                 "allgather by recursive doubling); smaller ones, and non-commutative ops, "
                 "recursive doubling.",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "allgather_bruck_max",
         .type = WEFT_MCA_PARAM_SIZE,
         .default_value = "1k",
         .help = "Allgathers of at most this many bytes per rank use Bruck's algorithm "
                 "(log2(n) rounds); larger ones a ring (n - 1 rounds of one block).",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "barrier_algorithm",
         .type = WEFT_MCA_PARAM_ENUM,
         .default_value = "recursive_doubling",
         .help = "Barrier algorithm: dissemination, recursive_doubling (ranks beyond the "
                 "largest power of two check in with a partner) or binomial (fan-in and "
                 "fan-out).",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = barrier_algorithms,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "direct_max_bytes",
         .type = WEFT_MCA_PARAM_SIZE,
         .default_value = "32k",
         .help = "Allgathers and alltoalls of at most this many bytes per rank, on "
                 "communicators of at most direct_max_ranks ranks, post every transfer at once "
                 "(direct: one round, so each rank waits once); larger ones go round by round "
                 "(ring, pairwise), which keeps large transfers from crowding each other, "
                 "except where the host's ranks share cores: there every wait is a context "
                 "switch, and they go direct at any size.",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "direct_max_ranks",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "8",
         .help = "See direct_max_bytes; also the size from which bcast's automatic choice "
                 "may take the pipelined chain.",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "1..1048576"},
        {.name = "bcast_algorithm",
         .type = WEFT_MCA_PARAM_ENUM,
         .default_value = "auto",
         .help = "Bcast algorithm: auto (binomial tree; a pipelined chain from "
                 "bcast_pipeline_min bytes on communicators larger than direct_max_ranks, where "
                 "a chain's many hand-offs pay off), binomial or pipeline.",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = bcast_algorithms,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "reduce_algorithm",
         .type = WEFT_MCA_PARAM_ENUM,
         .default_value = "auto",
         .help = "Reduce algorithm: auto (binomial), binomial, or direct (each rank folds one "
                 "block of everyone's contributions, then the root gathers the blocks; slower "
                 "than binomial on the development machine at 2 and 4 ranks).",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = reduce_algorithms,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "allreduce_algorithm",
         .type = WEFT_MCA_PARAM_ENUM,
         .default_value = "auto",
         .help = "Allreduce algorithm: auto (recursive doubling below allreduce_rsag_min "
                 "bytes, Rabenseifner from there for commutative ops), recursive_doubling, "
                 "rabenseifner (commutative ops only) or direct (reduce-scatter and allgather, "
                 "each one round).",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = allreduce_algorithms,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "allgather_algorithm",
         .type = WEFT_MCA_PARAM_ENUM,
         .default_value = "auto",
         .help = "Allgather algorithm: auto (direct within direct_max_bytes and "
                 "direct_max_ranks; else Bruck up to allgather_bruck_max bytes per rank, ring "
                 "above), bruck, ring or direct.",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = allgather_algorithms,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "alltoall_algorithm",
         .type = WEFT_MCA_PARAM_ENUM,
         .default_value = "auto",
         .help = "Alltoall algorithm: auto (direct within direct_max_bytes and "
                 "direct_max_ranks, else pairwise), pairwise (n - 1 rounds of one exchange) or "
                 "direct.",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = alltoall_algorithms,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "verbose",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "0",
         .help = "10: say once per process which algorithm each shape of collective "
                 "(operation, ranks, bytes) took and why; 20: every call.",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "0..100"},
    };
    return weft_mca_param_register_table("coll", "basic", defs, kNumParams, sizeof defs[0], params);
}

// A blocking collective: build into the shared schedule and run it here.
template <class Build> weft_status_t blocking(weft_comm_t *comm, weft_op_t *op, Build build)
{
    BlockingSched lease;
    Sched &s = lease.get();
    s.reset(comm, op);
    build(s);
    return s.run();
}

// A non-blocking one: build, then hand the schedule to a request.
template <class Build>
weft_status_t nonblocking(weft_comm_t *comm, weft_op_t *op, weft_request_t **request, Build build)
{
    Sched s;
    s.reset(comm, op);
    build(s);
    return start_request(std::move(s), request);
}

// count elements per rank, and their displacements, rank after rank.
std::vector<size_t> uniform_counts(const weft_comm_t *comm, size_t count)
{
    return std::vector<size_t>(size_t(weft_comm_size(comm)), count);
}
std::vector<ptrdiff_t> uniform_displs(const weft_comm_t *comm, size_t count)
{
    std::vector<ptrdiff_t> d(size_t(weft_comm_size(comm)));
    for (size_t i = 0; i < d.size(); ++i)
        d[i] = ptrdiff_t(i * count);
    return d;
}

// Each collective once, as a builder over its arguments; the module's blocking and
// non-blocking operations wrap it.
struct Gather {
    const void *sendbuf;
    size_t sendcount;
    weft_datatype_t *sendtype;
    void *recvbuf;
    size_t recvcount;
    weft_datatype_t *recvtype;
    int root;
    weft_comm_t *comm;
    void operator()(Sched &s) const
    {
        build_gatherv(s, sendbuf, sendcount, sendtype, recvbuf,
                      uniform_counts(comm, recvcount).data(),
                      uniform_displs(comm, recvcount).data(), recvtype, root, comm);
    }
};

struct Scatter {
    const void *sendbuf;
    size_t sendcount;
    weft_datatype_t *sendtype;
    void *recvbuf;
    size_t recvcount;
    weft_datatype_t *recvtype;
    int root;
    weft_comm_t *comm;
    void operator()(Sched &s) const
    {
        build_scatterv(s, sendbuf, uniform_counts(comm, sendcount).data(),
                       uniform_displs(comm, sendcount).data(), sendtype, recvbuf, recvcount,
                       recvtype, root, comm);
    }
};

// Alltoall and alltoallv as alltoallw: byte displacements, one type per rank (of the remote
// group on an intercommunicator).
struct Alltoallv {
    const void *sendbuf;
    const size_t *sendcounts;
    const ptrdiff_t *sdispls;
    weft_datatype_t *sendtype;
    void *recvbuf;
    const size_t *recvcounts;
    const ptrdiff_t *rdispls;
    weft_datatype_t *recvtype;
    weft_comm_t *comm;
    void operator()(Sched &s) const
    {
        const size_t n = size_t(weft_comm_peer_size(comm));
        std::vector<ptrdiff_t> sd(n), rd(n);
        for (size_t i = 0; i < n; ++i) {
            sd[i] = sdispls[i] * weft_datatype_extent(sendtype);
            rd[i] = rdispls[i] * weft_datatype_extent(recvtype);
        }
        std::vector<weft_datatype_t *> st(n, sendtype), rt(n, recvtype);
        (weft_comm_is_inter(comm) ? build_inter_alltoallw : build_alltoallw)(
            s, sendbuf, sendcounts, sd.data(), st.data(), recvbuf, recvcounts, rd.data(), rt.data(),
            comm);
    }
};

struct Alltoall {
    const void *sendbuf;
    size_t sendcount;
    weft_datatype_t *sendtype;
    void *recvbuf;
    size_t recvcount;
    weft_datatype_t *recvtype;
    weft_comm_t *comm;
    void operator()(Sched &s) const
    {
        if (sendbuf != WEFT_IN_PLACE) {
            build_alltoall(s, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
            return;
        }
        const size_t n = size_t(weft_comm_size(comm));
        std::vector<size_t> sc(n, sendcount), rc(n, recvcount);
        std::vector<ptrdiff_t> sd(n), rd(n);
        for (size_t i = 0; i < n; ++i) {
            sd[i] = ptrdiff_t(i * sendcount);
            rd[i] = ptrdiff_t(i * recvcount);
        }
        Alltoallv{sendbuf,   sc.data(), sd.data(), sendtype, recvbuf,
                  rc.data(), rd.data(), recvtype,  comm}(s);
    }
};

struct ReduceScatterBlock {
    const void *sendbuf;
    void *recvbuf;
    size_t recvcount;
    weft_datatype_t *type;
    weft_op_t *op;
    weft_comm_t *comm;
    void operator()(Sched &s) const
    {
        build_reduce_scatter(s, sendbuf, recvbuf, uniform_counts(comm, recvcount).data(), type, op,
                             comm);
    }
};

// ---- the module's operations

weft_status_t barrier(weft_comm_t *comm, weft_coll_module_t *)
{
    return blocking(comm, nullptr, [&](Sched &s) { build_barrier(s, comm); });
}
weft_status_t ibarrier(weft_comm_t *comm, weft_request_t **req, weft_coll_module_t *)
{
    return nonblocking(comm, nullptr, req, [&](Sched &s) { build_barrier(s, comm); });
}

weft_status_t bcast(void *buf, size_t count, weft_datatype_t *type, int root, weft_comm_t *comm,
                    weft_coll_module_t *)
{
    return blocking(comm, nullptr, [&](Sched &s) { build_bcast(s, buf, count, type, root, comm); });
}
weft_status_t ibcast(void *buf, size_t count, weft_datatype_t *type, int root, weft_comm_t *comm,
                     weft_request_t **req, weft_coll_module_t *)
{
    return nonblocking(comm, nullptr, req,
                       [&](Sched &s) { build_bcast(s, buf, count, type, root, comm); });
}

weft_status_t reduce(const void *sbuf, void *rbuf, size_t count, weft_datatype_t *type,
                     weft_op_t *op, int root, weft_comm_t *comm, weft_coll_module_t *)
{
    return blocking(comm, op,
                    [&](Sched &s) { build_reduce(s, sbuf, rbuf, count, type, op, root, comm); });
}
weft_status_t ireduce(const void *sbuf, void *rbuf, size_t count, weft_datatype_t *type,
                      weft_op_t *op, int root, weft_comm_t *comm, weft_request_t **req,
                      weft_coll_module_t *)
{
    return nonblocking(comm, op, req,
                       [&](Sched &s) { build_reduce(s, sbuf, rbuf, count, type, op, root, comm); });
}

weft_status_t allreduce(const void *sbuf, void *rbuf, size_t count, weft_datatype_t *type,
                        weft_op_t *op, weft_comm_t *comm, weft_coll_module_t *)
{
    return blocking(comm, op,
                    [&](Sched &s) { build_allreduce(s, sbuf, rbuf, count, type, op, comm); });
}
weft_status_t iallreduce(const void *sbuf, void *rbuf, size_t count, weft_datatype_t *type,
                         weft_op_t *op, weft_comm_t *comm, weft_request_t **req,
                         weft_coll_module_t *)
{
    return nonblocking(comm, op, req,
                       [&](Sched &s) { build_allreduce(s, sbuf, rbuf, count, type, op, comm); });
}

weft_status_t gather(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                     size_t rcount, weft_datatype_t *rtype, int root, weft_comm_t *comm,
                     weft_coll_module_t *)
{
    return blocking(comm, nullptr, Gather{sbuf, scount, stype, rbuf, rcount, rtype, root, comm});
}
weft_status_t igather(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                      size_t rcount, weft_datatype_t *rtype, int root, weft_comm_t *comm,
                      weft_request_t **req, weft_coll_module_t *)
{
    return nonblocking(comm, nullptr, req,
                       Gather{sbuf, scount, stype, rbuf, rcount, rtype, root, comm});
}

weft_status_t gatherv(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                      const size_t *rcounts, const ptrdiff_t *displs, weft_datatype_t *rtype,
                      int root, weft_comm_t *comm, weft_coll_module_t *)
{
    return blocking(comm, nullptr, [&](Sched &s) {
        build_gatherv(s, sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
    });
}
weft_status_t igatherv(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                       const size_t *rcounts, const ptrdiff_t *displs, weft_datatype_t *rtype,
                       int root, weft_comm_t *comm, weft_request_t **req, weft_coll_module_t *)
{
    return nonblocking(comm, nullptr, req, [&](Sched &s) {
        build_gatherv(s, sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
    });
}

weft_status_t scatter(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                      size_t rcount, weft_datatype_t *rtype, int root, weft_comm_t *comm,
                      weft_coll_module_t *)
{
    return blocking(comm, nullptr, Scatter{sbuf, scount, stype, rbuf, rcount, rtype, root, comm});
}
weft_status_t iscatter(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                       size_t rcount, weft_datatype_t *rtype, int root, weft_comm_t *comm,
                       weft_request_t **req, weft_coll_module_t *)
{
    return nonblocking(comm, nullptr, req,
                       Scatter{sbuf, scount, stype, rbuf, rcount, rtype, root, comm});
}

weft_status_t scatterv(const void *sbuf, const size_t *scounts, const ptrdiff_t *displs,
                       weft_datatype_t *stype, void *rbuf, size_t rcount, weft_datatype_t *rtype,
                       int root, weft_comm_t *comm, weft_coll_module_t *)
{
    return blocking(comm, nullptr, [&](Sched &s) {
        build_scatterv(s, sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
    });
}
weft_status_t iscatterv(const void *sbuf, const size_t *scounts, const ptrdiff_t *displs,
                        weft_datatype_t *stype, void *rbuf, size_t rcount, weft_datatype_t *rtype,
                        int root, weft_comm_t *comm, weft_request_t **req, weft_coll_module_t *)
{
    return nonblocking(comm, nullptr, req, [&](Sched &s) {
        build_scatterv(s, sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
    });
}

weft_status_t allgather(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                        size_t rcount, weft_datatype_t *rtype, weft_comm_t *comm,
                        weft_coll_module_t *)
{
    return blocking(comm, nullptr, [&](Sched &s) {
        build_allgather(s, sbuf, scount, stype, rbuf, rcount, rtype, comm);
    });
}
weft_status_t iallgather(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                         size_t rcount, weft_datatype_t *rtype, weft_comm_t *comm,
                         weft_request_t **req, weft_coll_module_t *)
{
    return nonblocking(comm, nullptr, req, [&](Sched &s) {
        build_allgather(s, sbuf, scount, stype, rbuf, rcount, rtype, comm);
    });
}

weft_status_t allgatherv(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                         const size_t *rcounts, const ptrdiff_t *displs, weft_datatype_t *rtype,
                         weft_comm_t *comm, weft_coll_module_t *)
{
    return blocking(comm, nullptr, [&](Sched &s) {
        build_allgatherv(s, sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
    });
}
weft_status_t iallgatherv(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                          const size_t *rcounts, const ptrdiff_t *displs, weft_datatype_t *rtype,
                          weft_comm_t *comm, weft_request_t **req, weft_coll_module_t *)
{
    return nonblocking(comm, nullptr, req, [&](Sched &s) {
        build_allgatherv(s, sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
    });
}

weft_status_t alltoall(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                       size_t rcount, weft_datatype_t *rtype, weft_comm_t *comm,
                       weft_coll_module_t *)
{
    return blocking(comm, nullptr, Alltoall{sbuf, scount, stype, rbuf, rcount, rtype, comm});
}
weft_status_t ialltoall(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                        size_t rcount, weft_datatype_t *rtype, weft_comm_t *comm,
                        weft_request_t **req, weft_coll_module_t *)
{
    return nonblocking(comm, nullptr, req,
                       Alltoall{sbuf, scount, stype, rbuf, rcount, rtype, comm});
}

weft_status_t alltoallv(const void *sbuf, const size_t *scounts, const ptrdiff_t *sdispls,
                        weft_datatype_t *stype, void *rbuf, const size_t *rcounts,
                        const ptrdiff_t *rdispls, weft_datatype_t *rtype, weft_comm_t *comm,
                        weft_coll_module_t *)
{
    return blocking(comm, nullptr,
                    Alltoallv{sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm});
}
weft_status_t ialltoallv(const void *sbuf, const size_t *scounts, const ptrdiff_t *sdispls,
                         weft_datatype_t *stype, void *rbuf, const size_t *rcounts,
                         const ptrdiff_t *rdispls, weft_datatype_t *rtype, weft_comm_t *comm,
                         weft_request_t **req, weft_coll_module_t *)
{
    return nonblocking(
        comm, nullptr, req,
        Alltoallv{sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm});
}

weft_status_t alltoallw(const void *sbuf, const size_t *scounts, const ptrdiff_t *sdispls,
                        weft_datatype_t *const *stypes, void *rbuf, const size_t *rcounts,
                        const ptrdiff_t *rdispls, weft_datatype_t *const *rtypes, weft_comm_t *comm,
                        weft_coll_module_t *)
{
    return blocking(comm, nullptr, [&](Sched &s) {
        build_alltoallw(s, sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm);
    });
}
weft_status_t ialltoallw(const void *sbuf, const size_t *scounts, const ptrdiff_t *sdispls,
                         weft_datatype_t *const *stypes, void *rbuf, const size_t *rcounts,
                         const ptrdiff_t *rdispls, weft_datatype_t *const *rtypes,
                         weft_comm_t *comm, weft_request_t **req, weft_coll_module_t *)
{
    return nonblocking(comm, nullptr, req, [&](Sched &s) {
        build_alltoallw(s, sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm);
    });
}

weft_status_t reduce_scatter(const void *sbuf, void *rbuf, const size_t *rcounts,
                             weft_datatype_t *type, weft_op_t *op, weft_comm_t *comm,
                             weft_coll_module_t *)
{
    return blocking(
        comm, op, [&](Sched &s) { build_reduce_scatter(s, sbuf, rbuf, rcounts, type, op, comm); });
}
weft_status_t ireduce_scatter(const void *sbuf, void *rbuf, const size_t *rcounts,
                              weft_datatype_t *type, weft_op_t *op, weft_comm_t *comm,
                              weft_request_t **req, weft_coll_module_t *)
{
    return nonblocking(comm, op, req, [&](Sched &s) {
        build_reduce_scatter(s, sbuf, rbuf, rcounts, type, op, comm);
    });
}

weft_status_t reduce_scatter_block(const void *sbuf, void *rbuf, size_t rcount,
                                   weft_datatype_t *type, weft_op_t *op, weft_comm_t *comm,
                                   weft_coll_module_t *)
{
    return blocking(comm, op, ReduceScatterBlock{sbuf, rbuf, rcount, type, op, comm});
}
weft_status_t ireduce_scatter_block(const void *sbuf, void *rbuf, size_t rcount,
                                    weft_datatype_t *type, weft_op_t *op, weft_comm_t *comm,
                                    weft_request_t **req, weft_coll_module_t *)
{
    return nonblocking(comm, op, req, ReduceScatterBlock{sbuf, rbuf, rcount, type, op, comm});
}

weft_status_t scan(const void *sbuf, void *rbuf, size_t count, weft_datatype_t *type, weft_op_t *op,
                   weft_comm_t *comm, weft_coll_module_t *)
{
    return blocking(comm, op,
                    [&](Sched &s) { build_scan(s, sbuf, rbuf, count, type, comm, false); });
}
weft_status_t iscan(const void *sbuf, void *rbuf, size_t count, weft_datatype_t *type,
                    weft_op_t *op, weft_comm_t *comm, weft_request_t **req, weft_coll_module_t *)
{
    return nonblocking(comm, op, req,
                       [&](Sched &s) { build_scan(s, sbuf, rbuf, count, type, comm, false); });
}

weft_status_t exscan(const void *sbuf, void *rbuf, size_t count, weft_datatype_t *type,
                     weft_op_t *op, weft_comm_t *comm, weft_coll_module_t *)
{
    return blocking(comm, op,
                    [&](Sched &s) { build_scan(s, sbuf, rbuf, count, type, comm, true); });
}
weft_status_t iexscan(const void *sbuf, void *rbuf, size_t count, weft_datatype_t *type,
                      weft_op_t *op, weft_comm_t *comm, weft_request_t **req, weft_coll_module_t *)
{
    return nonblocking(comm, op, req,
                       [&](Sched &s) { build_scan(s, sbuf, rbuf, count, type, comm, true); });
}

// ---- intercommunicators (coll_basic_inter.cc): every collective but scan and exscan, which
// MPI does not define there. Arrays have one entry per rank of the remote group.

std::vector<size_t> remote_counts(const weft_comm_t *comm, size_t count)
{
    return std::vector<size_t>(size_t(weft_comm_peer_size(comm)), count);
}
std::vector<ptrdiff_t> remote_displs(const weft_comm_t *comm, size_t count)
{
    std::vector<ptrdiff_t> d(size_t(weft_comm_peer_size(comm)));
    for (size_t i = 0; i < d.size(); ++i)
        d[i] = ptrdiff_t(i * count);
    return d;
}

// Each operation once, blocking (request NULL) or not.
template <class Build>
weft_status_t inter_run(weft_comm_t *comm, weft_op_t *op, weft_request_t **request, Build build)
{
    return request ? nonblocking(comm, op, request, build) : blocking(comm, op, build);
}

weft_status_t inter_ibarrier(weft_comm_t *comm, weft_request_t **req, weft_coll_module_t *)
{
    return inter_run(comm, nullptr, req, [&](Sched &s) { build_inter_barrier(s, comm); });
}
weft_status_t inter_barrier(weft_comm_t *comm, weft_coll_module_t *m)
{
    return inter_ibarrier(comm, nullptr, m);
}

weft_status_t inter_ibcast(void *buf, size_t count, weft_datatype_t *type, int root,
                           weft_comm_t *comm, weft_request_t **req, weft_coll_module_t *)
{
    return inter_run(comm, nullptr, req,
                     [&](Sched &s) { build_inter_bcast(s, buf, count, type, root, comm); });
}
weft_status_t inter_bcast(void *buf, size_t count, weft_datatype_t *type, int root,
                          weft_comm_t *comm, weft_coll_module_t *m)
{
    return inter_ibcast(buf, count, type, root, comm, nullptr, m);
}

weft_status_t inter_ireduce(const void *sbuf, void *rbuf, size_t count, weft_datatype_t *type,
                            weft_op_t *op, int root, weft_comm_t *comm, weft_request_t **req,
                            weft_coll_module_t *)
{
    return inter_run(comm, op, req,
                     [&](Sched &s) { build_inter_reduce(s, sbuf, rbuf, count, type, root, comm); });
}
weft_status_t inter_reduce(const void *sbuf, void *rbuf, size_t count, weft_datatype_t *type,
                           weft_op_t *op, int root, weft_comm_t *comm, weft_coll_module_t *m)
{
    return inter_ireduce(sbuf, rbuf, count, type, op, root, comm, nullptr, m);
}

weft_status_t inter_iallreduce(const void *sbuf, void *rbuf, size_t count, weft_datatype_t *type,
                               weft_op_t *op, weft_comm_t *comm, weft_request_t **req,
                               weft_coll_module_t *)
{
    return inter_run(comm, op, req,
                     [&](Sched &s) { build_inter_allreduce(s, sbuf, rbuf, count, type, comm); });
}
weft_status_t inter_allreduce(const void *sbuf, void *rbuf, size_t count, weft_datatype_t *type,
                              weft_op_t *op, weft_comm_t *comm, weft_coll_module_t *m)
{
    return inter_iallreduce(sbuf, rbuf, count, type, op, comm, nullptr, m);
}

weft_status_t inter_igatherv(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                             const size_t *rcounts, const ptrdiff_t *displs, weft_datatype_t *rtype,
                             int root, weft_comm_t *comm, weft_request_t **req,
                             weft_coll_module_t *)
{
    return inter_run(comm, nullptr, req, [&](Sched &s) {
        build_inter_gatherv(s, sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
    });
}
weft_status_t inter_gatherv(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                            const size_t *rcounts, const ptrdiff_t *displs, weft_datatype_t *rtype,
                            int root, weft_comm_t *comm, weft_coll_module_t *m)
{
    return inter_igatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, nullptr,
                          m);
}
weft_status_t inter_igather(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                            size_t rcount, weft_datatype_t *rtype, int root, weft_comm_t *comm,
                            weft_request_t **req, weft_coll_module_t *m)
{
    return inter_igatherv(sbuf, scount, stype, rbuf, remote_counts(comm, rcount).data(),
                          remote_displs(comm, rcount).data(), rtype, root, comm, req, m);
}
weft_status_t inter_gather(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                           size_t rcount, weft_datatype_t *rtype, int root, weft_comm_t *comm,
                           weft_coll_module_t *m)
{
    return inter_igather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, nullptr, m);
}

weft_status_t inter_iscatterv(const void *sbuf, const size_t *scounts, const ptrdiff_t *displs,
                              weft_datatype_t *stype, void *rbuf, size_t rcount,
                              weft_datatype_t *rtype, int root, weft_comm_t *comm,
                              weft_request_t **req, weft_coll_module_t *)
{
    return inter_run(comm, nullptr, req, [&](Sched &s) {
        build_inter_scatterv(s, sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
    });
}
weft_status_t inter_scatterv(const void *sbuf, const size_t *scounts, const ptrdiff_t *displs,
                             weft_datatype_t *stype, void *rbuf, size_t rcount,
                             weft_datatype_t *rtype, int root, weft_comm_t *comm,
                             weft_coll_module_t *m)
{
    return inter_iscatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, nullptr,
                           m);
}
weft_status_t inter_iscatter(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                             size_t rcount, weft_datatype_t *rtype, int root, weft_comm_t *comm,
                             weft_request_t **req, weft_coll_module_t *m)
{
    return inter_iscatterv(sbuf, remote_counts(comm, scount).data(),
                           remote_displs(comm, scount).data(), stype, rbuf, rcount, rtype, root,
                           comm, req, m);
}
weft_status_t inter_scatter(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                            size_t rcount, weft_datatype_t *rtype, int root, weft_comm_t *comm,
                            weft_coll_module_t *m)
{
    return inter_iscatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, nullptr, m);
}

weft_status_t inter_iallgatherv(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                                const size_t *rcounts, const ptrdiff_t *displs,
                                weft_datatype_t *rtype, weft_comm_t *comm, weft_request_t **req,
                                weft_coll_module_t *)
{
    return inter_run(comm, nullptr, req, [&](Sched &s) {
        build_inter_allgatherv(s, sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
    });
}
weft_status_t inter_allgatherv(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                               const size_t *rcounts, const ptrdiff_t *displs,
                               weft_datatype_t *rtype, weft_comm_t *comm, weft_coll_module_t *m)
{
    return inter_iallgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, nullptr, m);
}
weft_status_t inter_iallgather(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                               size_t rcount, weft_datatype_t *rtype, weft_comm_t *comm,
                               weft_request_t **req, weft_coll_module_t *m)
{
    return inter_iallgatherv(sbuf, scount, stype, rbuf, remote_counts(comm, rcount).data(),
                             remote_displs(comm, rcount).data(), rtype, comm, req, m);
}
weft_status_t inter_allgather(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                              size_t rcount, weft_datatype_t *rtype, weft_comm_t *comm,
                              weft_coll_module_t *m)
{
    return inter_iallgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, nullptr, m);
}

weft_status_t inter_ialltoallw(const void *sbuf, const size_t *scounts, const ptrdiff_t *sdispls,
                               weft_datatype_t *const *stypes, void *rbuf, const size_t *rcounts,
                               const ptrdiff_t *rdispls, weft_datatype_t *const *rtypes,
                               weft_comm_t *comm, weft_request_t **req, weft_coll_module_t *)
{
    return inter_run(comm, nullptr, req, [&](Sched &s) {
        build_inter_alltoallw(s, sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes,
                              comm);
    });
}
weft_status_t inter_alltoallw(const void *sbuf, const size_t *scounts, const ptrdiff_t *sdispls,
                              weft_datatype_t *const *stypes, void *rbuf, const size_t *rcounts,
                              const ptrdiff_t *rdispls, weft_datatype_t *const *rtypes,
                              weft_comm_t *comm, weft_coll_module_t *m)
{
    return inter_ialltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm,
                            nullptr, m);
}
weft_status_t inter_ialltoallv(const void *sbuf, const size_t *scounts, const ptrdiff_t *sdispls,
                               weft_datatype_t *stype, void *rbuf, const size_t *rcounts,
                               const ptrdiff_t *rdispls, weft_datatype_t *rtype, weft_comm_t *comm,
                               weft_request_t **req, weft_coll_module_t *)
{
    return inter_run(comm, nullptr, req,
                     Alltoallv{sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm});
}
weft_status_t inter_alltoallv(const void *sbuf, const size_t *scounts, const ptrdiff_t *sdispls,
                              weft_datatype_t *stype, void *rbuf, const size_t *rcounts,
                              const ptrdiff_t *rdispls, weft_datatype_t *rtype, weft_comm_t *comm,
                              weft_coll_module_t *m)
{
    return inter_ialltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm,
                            nullptr, m);
}
weft_status_t inter_ialltoall(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                              size_t rcount, weft_datatype_t *rtype, weft_comm_t *comm,
                              weft_request_t **req, weft_coll_module_t *m)
{
    return inter_ialltoallv(sbuf, remote_counts(comm, scount).data(),
                            remote_displs(comm, scount).data(), stype, rbuf,
                            remote_counts(comm, rcount).data(), remote_displs(comm, rcount).data(),
                            rtype, comm, req, m);
}
weft_status_t inter_alltoall(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                             size_t rcount, weft_datatype_t *rtype, weft_comm_t *comm,
                             weft_coll_module_t *m)
{
    return inter_ialltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, nullptr, m);
}

weft_status_t inter_ireduce_scatter(const void *sbuf, void *rbuf, const size_t *rcounts,
                                    weft_datatype_t *type, weft_op_t *op, weft_comm_t *comm,
                                    weft_request_t **req, weft_coll_module_t *)
{
    return inter_run(comm, op, req, [&](Sched &s) {
        build_inter_reduce_scatter(s, sbuf, rbuf, rcounts, type, comm);
    });
}
weft_status_t inter_reduce_scatter(const void *sbuf, void *rbuf, const size_t *rcounts,
                                   weft_datatype_t *type, weft_op_t *op, weft_comm_t *comm,
                                   weft_coll_module_t *m)
{
    return inter_ireduce_scatter(sbuf, rbuf, rcounts, type, op, comm, nullptr, m);
}
// recvcount elements at each process of the local group.
weft_status_t inter_ireduce_scatter_block(const void *sbuf, void *rbuf, size_t rcount,
                                          weft_datatype_t *type, weft_op_t *op, weft_comm_t *comm,
                                          weft_request_t **req, weft_coll_module_t *m)
{
    return inter_ireduce_scatter(sbuf, rbuf, uniform_counts(comm, rcount).data(), type, op, comm,
                                 req, m);
}
weft_status_t inter_reduce_scatter_block(const void *sbuf, void *rbuf, size_t rcount,
                                         weft_datatype_t *type, weft_op_t *op, weft_comm_t *comm,
                                         weft_coll_module_t *m)
{
    return inter_ireduce_scatter_block(sbuf, rbuf, rcount, type, op, comm, nullptr, m);
}

// The module holds no state of its own: one serves every communicator.
weft_status_t module_disable(weft_coll_module_t *, weft_comm_t *) { return WEFT_SUCCESS; }

weft_coll_module_t the_module = {
    .struct_size = sizeof(weft_coll_module_t),
    .reserved = 0,
    .coll_module_enable = nullptr,
    .coll_module_disable = module_disable,
    .coll_barrier = barrier,
    .coll_bcast = bcast,
    .coll_reduce = reduce,
    .coll_allreduce = allreduce,
    .coll_gather = gather,
    .coll_gatherv = gatherv,
    .coll_scatter = scatter,
    .coll_scatterv = scatterv,
    .coll_allgather = allgather,
    .coll_allgatherv = allgatherv,
    .coll_alltoall = alltoall,
    .coll_alltoallv = alltoallv,
    .coll_alltoallw = alltoallw,
    .coll_reduce_scatter = reduce_scatter,
    .coll_reduce_scatter_block = reduce_scatter_block,
    .coll_scan = scan,
    .coll_exscan = exscan,
    .coll_ibarrier = ibarrier,
    .coll_ibcast = ibcast,
    .coll_ireduce = ireduce,
    .coll_iallreduce = iallreduce,
    .coll_igather = igather,
    .coll_igatherv = igatherv,
    .coll_iscatter = iscatter,
    .coll_iscatterv = iscatterv,
    .coll_iallgather = iallgather,
    .coll_iallgatherv = iallgatherv,
    .coll_ialltoall = ialltoall,
    .coll_ialltoallv = ialltoallv,
    .coll_ialltoallw = ialltoallw,
    .coll_ireduce_scatter = ireduce_scatter,
    .coll_ireduce_scatter_block = ireduce_scatter_block,
    .coll_iscan = iscan,
    .coll_iexscan = iexscan,
    .coll_agree = nullptr, // coll/base's serves
    .coll_iagree = nullptr,
    .coll_iagree_group = nullptr,
    .coll_neighbor_allgather = neighbor_allgather,
    .coll_neighbor_allgatherv = neighbor_allgatherv,
    .coll_neighbor_alltoall = neighbor_alltoall,
    .coll_neighbor_alltoallv = neighbor_alltoallv,
    .coll_neighbor_alltoallw = neighbor_alltoallw,
    .coll_ineighbor_allgather = ineighbor_allgather,
    .coll_ineighbor_allgatherv = ineighbor_allgatherv,
    .coll_ineighbor_alltoall = ineighbor_alltoall,
    .coll_ineighbor_alltoallv = ineighbor_alltoallv,
    .coll_ineighbor_alltoallw = ineighbor_alltoallw,
};

weft_status_t query(int *priority, char *, size_t)
{
    *priority = int(weft_mca_param_int(params[kPriority]));
    return WEFT_SUCCESS;
}

weft_status_t init_query(int, int)
{
    tuning.bcast_pipeline_min = weft_mca_param_size(params[kBcastPipelineMin]);
    tuning.bcast_segment = weft_mca_param_size(params[kBcastSegment]);
    tuning.allreduce_rsag_min = weft_mca_param_size(params[kAllreduceRsagMin]);
    tuning.allgather_bruck_max = weft_mca_param_size(params[kAllgatherBruckMax]);
    tuning.barrier_algorithm = weft_mca_param_enum(params[kBarrierAlgorithm]);
    tuning.direct_max_bytes = weft_mca_param_size(params[kDirectMaxBytes]);
    tuning.direct_max_ranks = int(weft_mca_param_int(params[kDirectMaxRanks]));
    tuning.bcast = Alg(weft_mca_param_enum(params[kBcastAlgorithm]));
    tuning.reduce = Alg(weft_mca_param_enum(params[kReduceAlgorithm]));
    tuning.allreduce = Alg(weft_mca_param_enum(params[kAllreduceAlgorithm]));
    tuning.allgather = Alg(weft_mca_param_enum(params[kAllgatherAlgorithm]));
    tuning.alltoall = Alg(weft_mca_param_enum(params[kAlltoallAlgorithm]));
    tuning.verbose = int(weft_mca_param_int(params[kVerbose]));
    return WEFT_SUCCESS;
}

// Intercommunicators: every collective but the scans (MPI-3.1 5.2.2) and the neighbourhood ones
// (no topology on an intercommunicator).
weft_coll_module_t inter_module = [] {
    weft_coll_module_t m{};
    m.struct_size = sizeof(weft_coll_module_t);
    m.coll_module_disable = module_disable;
    m.coll_barrier = inter_barrier;
    m.coll_bcast = inter_bcast;
    m.coll_reduce = inter_reduce;
    m.coll_allreduce = inter_allreduce;
    m.coll_gather = inter_gather;
    m.coll_gatherv = inter_gatherv;
    m.coll_scatter = inter_scatter;
    m.coll_scatterv = inter_scatterv;
    m.coll_allgather = inter_allgather;
    m.coll_allgatherv = inter_allgatherv;
    m.coll_alltoall = inter_alltoall;
    m.coll_alltoallv = inter_alltoallv;
    m.coll_alltoallw = inter_alltoallw;
    m.coll_reduce_scatter = inter_reduce_scatter;
    m.coll_reduce_scatter_block = inter_reduce_scatter_block;
    m.coll_ibarrier = inter_ibarrier;
    m.coll_ibcast = inter_ibcast;
    m.coll_ireduce = inter_ireduce;
    m.coll_iallreduce = inter_iallreduce;
    m.coll_igather = inter_igather;
    m.coll_igatherv = inter_igatherv;
    m.coll_iscatter = inter_iscatter;
    m.coll_iscatterv = inter_iscatterv;
    m.coll_iallgather = inter_iallgather;
    m.coll_iallgatherv = inter_iallgatherv;
    m.coll_ialltoall = inter_ialltoall;
    m.coll_ialltoallv = inter_ialltoallv;
    m.coll_ialltoallw = inter_ialltoallw;
    m.coll_ireduce_scatter = inter_ireduce_scatter;
    m.coll_ireduce_scatter_block = inter_ireduce_scatter_block;
    return m;
}();

weft_coll_module_t *comm_query(weft_comm_t *comm, int *priority)
{
    *priority = int(weft_mca_param_int(params[kPriority]));
    return weft_comm_is_inter(comm) ? &inter_module : &the_module;
}

weft_status_t close_component()
{
    stop_progress();
    return WEFT_SUCCESS;
}

} // namespace

} // namespace weft::coll::basic

extern "C" {
const weft_coll_component_t mca_coll_basic_component = {
    .mca = {WEFT_MCA_COMPONENT_HEADER(weft_coll_component_t, "coll", WEFT_COLL_ABI_MAJOR,
                                      WEFT_COLL_ABI_MINOR, "basic", 0, 1, 0),
            .register_params = weft::coll::basic::register_params, .open = nullptr,
            .query = weft::coll::basic::query, .close = weft::coll::basic::close_component},
    .init_query = weft::coll::basic::init_query,
    .comm_query = weft::coll::basic::comm_query,
};
}
