// coll/basic's neighbourhood collectives (coll.h, 1.2): one round that posts a receive from
// every in-neighbour and a send to every out-neighbour. Receives are posted in the order of the
// sources and sends in the order of the destinations, on one tag, so that when a peer appears
// twice its messages match in order, as MPI-3.1 7.6 defines them. WEFT_PROC_NULL neighbours
// (the edges of a non-periodic grid) take no transfer, and their receive block stays as it
// was.
#include "coll_basic.h"

#include <vector>

namespace weft::coll::basic {

namespace {

// One neighbour's block: where it is (a byte offset from the buffer), its count and type.
struct Block {
    ptrdiff_t offset;
    size_t count;
    weft_datatype_t *type;
};

// The whole exchange, built into s.
void build_neighbor(Sched &s, const void *sendbuf, const std::vector<Block> &sends,
                    const int *destinations, void *recvbuf, const std::vector<Block> &recvs,
                    const int *sources)
{
    for (size_t j = 0; j < recvs.size(); ++j)
        if (sources[j] != WEFT_PROC_NULL)
            s.recv(sources[j], static_cast<char *>(recvbuf) + recvs[j].offset, recvs[j].count,
                   recvs[j].type);
    for (size_t j = 0; j < sends.size(); ++j)
        if (destinations[j] != WEFT_PROC_NULL)
            s.send(destinations[j], static_cast<const char *>(sendbuf) + sends[j].offset,
                   sends[j].count, sends[j].type);
    s.next();
}

// Blocks of `count` elements each, one after the other (every one at offset 0 if same).
std::vector<Block> uniform(int n, size_t count, weft_datatype_t *type, bool same)
{
    std::vector<Block> b(static_cast<size_t>(n));
    for (size_t j = 0; j < b.size(); ++j)
        b[j] = {same ? 0 : ptrdiff_t(j * count) * weft_datatype_extent(type), count, type};
    return b;
}

// Blocks of counts[j] elements at displs[j] elements (bytes when types is given, one type per
// block).
std::vector<Block> vector_blocks(int n, const size_t *counts, const ptrdiff_t *displs,
                                 weft_datatype_t *type, weft_datatype_t *const *types)
{
    std::vector<Block> b(static_cast<size_t>(n));
    for (size_t j = 0; j < b.size(); ++j)
        b[j] = types ? Block{displs[j], counts[j], types[j]}
                     : Block{displs[j] * weft_datatype_extent(type), counts[j], type};
    return b;
}

template <class Build> weft_status_t run(weft_comm_t *comm, weft_request_t **request, Build build)
{
    if (!request) {
        BlockingSched lease;
        Sched &s = lease.get();
        s.reset(comm, nullptr);
        build(s);
        return s.run();
    }
    Sched s;
    s.reset(comm, nullptr);
    build(s);
    return start_request(std::move(s), request);
}

weft_status_t allgather(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                        size_t rcount, weft_datatype_t *rtype, int indegree, const int *sources,
                        int outdegree, const int *destinations, weft_comm_t *comm,
                        weft_request_t **request)
{
    return run(comm, request, [&](Sched &s) {
        build_neighbor(s, sbuf, uniform(outdegree, scount, stype, true), destinations, rbuf,
                       uniform(indegree, rcount, rtype, false), sources);
    });
}

weft_status_t allgatherv(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                         const size_t *rcounts, const ptrdiff_t *displs, weft_datatype_t *rtype,
                         int indegree, const int *sources, int outdegree, const int *destinations,
                         weft_comm_t *comm, weft_request_t **request)
{
    return run(comm, request, [&](Sched &s) {
        build_neighbor(s, sbuf, uniform(outdegree, scount, stype, true), destinations, rbuf,
                       vector_blocks(indegree, rcounts, displs, rtype, nullptr), sources);
    });
}

weft_status_t alltoall(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                       size_t rcount, weft_datatype_t *rtype, int indegree, const int *sources,
                       int outdegree, const int *destinations, weft_comm_t *comm,
                       weft_request_t **request)
{
    return run(comm, request, [&](Sched &s) {
        build_neighbor(s, sbuf, uniform(outdegree, scount, stype, false), destinations, rbuf,
                       uniform(indegree, rcount, rtype, false), sources);
    });
}

weft_status_t alltoallv(const void *sbuf, const size_t *scounts, const ptrdiff_t *sdispls,
                        weft_datatype_t *stype, void *rbuf, const size_t *rcounts,
                        const ptrdiff_t *rdispls, weft_datatype_t *rtype, int indegree,
                        const int *sources, int outdegree, const int *destinations,
                        weft_comm_t *comm, weft_request_t **request)
{
    return run(comm, request, [&](Sched &s) {
        build_neighbor(s, sbuf, vector_blocks(outdegree, scounts, sdispls, stype, nullptr),
                       destinations, rbuf,
                       vector_blocks(indegree, rcounts, rdispls, rtype, nullptr), sources);
    });
}

weft_status_t alltoallw(const void *sbuf, const size_t *scounts, const ptrdiff_t *sdispls,
                        weft_datatype_t *const *stypes, void *rbuf, const size_t *rcounts,
                        const ptrdiff_t *rdispls, weft_datatype_t *const *rtypes, int indegree,
                        const int *sources, int outdegree, const int *destinations,
                        weft_comm_t *comm, weft_request_t **request)
{
    return run(comm, request, [&](Sched &s) {
        build_neighbor(s, sbuf, vector_blocks(outdegree, scounts, sdispls, nullptr, stypes),
                       destinations, rbuf,
                       vector_blocks(indegree, rcounts, rdispls, nullptr, rtypes), sources);
    });
}

} // namespace

weft_status_t neighbor_allgather(const void *sbuf, size_t scount, weft_datatype_t *stype,
                                 void *rbuf, size_t rcount, weft_datatype_t *rtype, int indegree,
                                 const int *sources, int outdegree, const int *destinations,
                                 weft_comm_t *comm, weft_coll_module_t *)
{
    return allgather(sbuf, scount, stype, rbuf, rcount, rtype, indegree, sources, outdegree,
                     destinations, comm, nullptr);
}
weft_status_t ineighbor_allgather(const void *sbuf, size_t scount, weft_datatype_t *stype,
                                  void *rbuf, size_t rcount, weft_datatype_t *rtype, int indegree,
                                  const int *sources, int outdegree, const int *destinations,
                                  weft_comm_t *comm, weft_request_t **req, weft_coll_module_t *)
{
    return allgather(sbuf, scount, stype, rbuf, rcount, rtype, indegree, sources, outdegree,
                     destinations, comm, req);
}

weft_status_t neighbor_allgatherv(const void *sbuf, size_t scount, weft_datatype_t *stype,
                                  void *rbuf, const size_t *rcounts, const ptrdiff_t *displs,
                                  weft_datatype_t *rtype, int indegree, const int *sources,
                                  int outdegree, const int *destinations, weft_comm_t *comm,
                                  weft_coll_module_t *)
{
    return allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, indegree, sources,
                      outdegree, destinations, comm, nullptr);
}
weft_status_t ineighbor_allgatherv(const void *sbuf, size_t scount, weft_datatype_t *stype,
                                   void *rbuf, const size_t *rcounts, const ptrdiff_t *displs,
                                   weft_datatype_t *rtype, int indegree, const int *sources,
                                   int outdegree, const int *destinations, weft_comm_t *comm,
                                   weft_request_t **req, weft_coll_module_t *)
{
    return allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, indegree, sources,
                      outdegree, destinations, comm, req);
}

weft_status_t neighbor_alltoall(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                                size_t rcount, weft_datatype_t *rtype, int indegree,
                                const int *sources, int outdegree, const int *destinations,
                                weft_comm_t *comm, weft_coll_module_t *)
{
    return alltoall(sbuf, scount, stype, rbuf, rcount, rtype, indegree, sources, outdegree,
                    destinations, comm, nullptr);
}
weft_status_t ineighbor_alltoall(const void *sbuf, size_t scount, weft_datatype_t *stype,
                                 void *rbuf, size_t rcount, weft_datatype_t *rtype, int indegree,
                                 const int *sources, int outdegree, const int *destinations,
                                 weft_comm_t *comm, weft_request_t **req, weft_coll_module_t *)
{
    return alltoall(sbuf, scount, stype, rbuf, rcount, rtype, indegree, sources, outdegree,
                    destinations, comm, req);
}

weft_status_t neighbor_alltoallv(const void *sbuf, const size_t *scounts, const ptrdiff_t *sdispls,
                                 weft_datatype_t *stype, void *rbuf, const size_t *rcounts,
                                 const ptrdiff_t *rdispls, weft_datatype_t *rtype, int indegree,
                                 const int *sources, int outdegree, const int *destinations,
                                 weft_comm_t *comm, weft_coll_module_t *)
{
    return alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, indegree,
                     sources, outdegree, destinations, comm, nullptr);
}
weft_status_t ineighbor_alltoallv(const void *sbuf, const size_t *scounts, const ptrdiff_t *sdispls,
                                  weft_datatype_t *stype, void *rbuf, const size_t *rcounts,
                                  const ptrdiff_t *rdispls, weft_datatype_t *rtype, int indegree,
                                  const int *sources, int outdegree, const int *destinations,
                                  weft_comm_t *comm, weft_request_t **req, weft_coll_module_t *)
{
    return alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, indegree,
                     sources, outdegree, destinations, comm, req);
}

weft_status_t neighbor_alltoallw(const void *sbuf, const size_t *scounts, const ptrdiff_t *sdispls,
                                 weft_datatype_t *const *stypes, void *rbuf, const size_t *rcounts,
                                 const ptrdiff_t *rdispls, weft_datatype_t *const *rtypes,
                                 int indegree, const int *sources, int outdegree,
                                 const int *destinations, weft_comm_t *comm, weft_coll_module_t *)
{
    return alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, indegree,
                     sources, outdegree, destinations, comm, nullptr);
}
weft_status_t ineighbor_alltoallw(const void *sbuf, const size_t *scounts, const ptrdiff_t *sdispls,
                                  weft_datatype_t *const *stypes, void *rbuf, const size_t *rcounts,
                                  const ptrdiff_t *rdispls, weft_datatype_t *const *rtypes,
                                  int indegree, const int *sources, int outdegree,
                                  const int *destinations, weft_comm_t *comm, weft_request_t **req,
                                  weft_coll_module_t *)
{
    return alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, indegree,
                     sources, outdegree, destinations, comm, req);
}

} // namespace weft::coll::basic
