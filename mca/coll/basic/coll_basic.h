// coll/basic: every collective as a schedule of rounds over the PML.
//
// A schedule is built in full before it runs: a list of rounds, each a set of point-to-point
// transfers (posted together) followed by local steps (reductions, copies) that run once every
// transfer of the round has completed. A blocking collective runs its schedule to the end in
// the caller; a non-blocking one hands it to a request that the progress engine advances, so a
// Wait/Test loop is all it needs. The first transfer that fails ends the schedule with its
// error, which becomes the request's (what ULFM relies on).
//
// The algorithms (coll_basic_algos.cc) are chosen by message size and process count, with the
// thresholds as parameters (README.md).
#ifndef WEFT_COLL_BASIC_H
#define WEFT_COLL_BASIC_H

#include <coll/coll.h>
#include <weft/comm.h>
#include <weft/op.h>
#include <weft/request.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace weft::coll::basic {

struct Step {
    enum Kind : uint8_t { send, recv, reduce, copy } kind;
    int peer;        // send, recv: rank in the communicator
    const void *src; // send: data; reduce, copy: source
    void *dst;       // recv: buffer; reduce: in and out (dst = src op dst); copy: destination
    size_t count;    // elements of type
    weft_datatype_t *type;
    size_t dcount; // copy: the destination's elements of dtype (a copy may change the type, as
    weft_datatype_t *dtype; // a send and its receive do)
    bool local;             // send, recv: peer is a rank of the intercommunicator's local group
};

class Sched {
  public:
    // Start over (keeps the memory of an earlier schedule).
    void reset(weft_comm_t *comm, weft_op_t *op);

    // On an intercommunicator: the transfers added from now on go to ranks of the local group
    // (through its hidden intracommunicator, weft_comm_local_comm) when local, else to ranks of
    // the remote group. The local ones travel on a tag of the local communicator's (taken at
    // reset, as every member of the group does), so an intercommunicator's schedule can mix
    // steps inside its group with exchanges between the groups, and algorithms built for an
    // intracommunicator run on the local one unchanged.
    void on_local(bool local) { local_ = local && local_comm_; }

    // Building. Transfers go into the current round; reduce and copy run after them.
    void send(int peer, const void *buf, size_t count, weft_datatype_t *type)
    {
        steps_.push_back({Step::send, peer, buf, nullptr, count, type, 0, nullptr, local_});
        ++building_.sends;
        building_.large = building_.large || count * weft_datatype_size(type) > kOverlapMin;
    }
    void recv(int peer, void *buf, size_t count, weft_datatype_t *type)
    {
        steps_.push_back({Step::recv, peer, nullptr, buf, count, type, 0, nullptr, local_});
        ++building_.recvs;
    }
    // dst = src op dst: src holds the contribution of the lower ranks.
    void reduce(const void *src, void *dst, size_t count, weft_datatype_t *type)
    {
        if (count) {
            steps_.push_back({Step::reduce, -1, src, dst, count, type, 0, nullptr, false});
            building_.local = true;
        }
    }
    void copy(const void *src, void *dst, size_t count, weft_datatype_t *type)
    {
        copy(src, count, type, dst, count, type);
    }
    // The data of scount elements of stype at src into dcount of dtype at dst (as much as the
    // smaller holds; the type signatures agree, as a send's and its receive's do).
    void copy(const void *src, size_t scount, weft_datatype_t *stype, void *dst, size_t dcount,
              weft_datatype_t *dtype)
    {
        if (scount && dcount && (src != dst || stype != dtype || scount != dcount)) {
            steps_.push_back({Step::copy, -1, src, dst, scount, stype, dcount, dtype, false});
            building_.local = true;
        }
    }
    // End the current round (an empty round is dropped).
    void next()
    {
        const size_t begin = rounds_.empty() ? 0 : rounds_.back().end;
        if (steps_.size() > begin) {
            building_.end = steps_.size();
            rounds_.push_back(building_);
        }
        building_ = Round{};
    }
    // A scratch buffer that lives as long as the schedule.
    char *scratch(size_t bytes);
    // One for count elements of type, as they lie in memory (gaps included; the pointer is
    // the buffer pointer of the elements, which a type with a positive true lower bound puts
    // before the memory).
    char *scratch_for(size_t count, weft_datatype_t *type)
    {
        ptrdiff_t lb = 0;
        const size_t span = weft_datatype_span(type, count, &lb);
        return scratch(span) - lb;
    }

    // Running.
    weft_status_t start();
    // Advance as far as possible without waiting; true once the schedule ended (status() then
    // says how).
    bool advance();
    weft_status_t status() const { return status_; }
    weft_comm_t *comm() const { return comm_; }
    weft_op_t *op() const { return op_; }
    int tag() const { return tag_; }
    // Run to the end in the caller.
    weft_status_t run();
    // The datatypes the steps use, each once (appended to out).
    void types_used(std::vector<weft_datatype_t *> &out) const;

  private:
    weft_status_t post_round();
    void cancel_pending();

    weft_comm_t *comm_ = nullptr;
    weft_op_t *op_ = nullptr;
    int tag_ = 0;
    weft_comm_t *local_comm_ = nullptr; // an intercommunicator's local group, else NULL
    int local_tag_ = 0;
    bool local_ = false; // on_local
    std::vector<Step> steps_;
    // Round r is steps_[rounds_[r-1].end .. rounds_[r].end), with what it holds (counted while
    // building, so that running it needs no pass to find out).
    struct Round {
        size_t end = 0;
        uint32_t sends = 0, recvs = 0;
        bool large = false; // a send of more than kOverlapMin bytes
        bool local = false; // a copy or a reduce
    };
    // Several sends in a round of a blocking schedule are posted at once (not one blocking send
    // after the other) when one of them is larger than this.
    static constexpr size_t kOverlapMin = 16384;
    std::vector<Round> rounds_;
    Round building_;
    struct Scratch {
        std::unique_ptr<char[]> mem;
        size_t size;
    };
    std::vector<Scratch> scratch_; // the first scratch_used_ belong to this schedule
    size_t scratch_used_ = 0;
    std::vector<weft_request_t *> pending_;
    size_t round_ = 0;
    bool done_ = false;
    bool blocking_ = false; // run() in the caller: sends may block
    weft_status_t status_ = WEFT_SUCCESS;
};

// The request of a non-blocking collective. It holds a reference to its communicator and its
// op, so that MPI_Comm_free and MPI_Op_free before completion let it finish (MPI-3.1 6.4.3,
// 2.5.1).
struct CollRequest : weft_request_t {
    Sched sched;
    std::vector<weft_datatype_t *> types; // retained while the request lives
    CollRequest *next_active = nullptr;
    ~CollRequest();
};

// Start a non-blocking collective: takes the built schedule (sched is left empty).
weft_status_t start_request(Sched &&sched, weft_request_t **request);

// The schedule a blocking collective builds into and runs, for the scope of one: the one kept
// for reuse (its buffers stay allocated between calls), or a new one while that is in use (by
// another thread's collective on another communicator, which runs under MPI_THREAD_MULTIPLE
// while this one waits; or by a collective called from inside one).
Sched *take_blocking_sched();
void give_blocking_sched(Sched *s);
class BlockingSched {
  public:
    BlockingSched() : s_(take_blocking_sched()) {}
    ~BlockingSched() { give_blocking_sched(s_); }
    BlockingSched(const BlockingSched &) = delete;
    BlockingSched &operator=(const BlockingSched &) = delete;
    Sched &get() { return *s_; }

  private:
    Sched *s_;
};

// A datatype of single bytes, for what the algorithms move as raw bytes.
inline weft_datatype_t *type_bytes() { return weft_datatype_bytes(); }

// Stop advancing non-blocking collectives (at finalize).
void stop_progress();

// Parameters (coll_basic_component.cc).
// Each collective's algorithm: "automatic" chooses by size and ranks from the thresholds
// (README.md); any other value forces one wherever it applies (where it cannot, for example
// Rabenseifner's with a non-commutative op, auto's choice is made instead).
enum class Alg : int {
    automatic = 0,
    binomial,           // bcast, reduce
    pipeline,           // bcast: a chain of segments
    recursive_doubling, // allreduce
    rabenseifner,       // allreduce: reduce-scatter by halving, allgather by doubling
    direct,             // every transfer posted at once, one round (or two) for any size
    bruck,              // allgather
    ring,               // allgather
    pairwise,           // alltoall: n - 1 rounds of one exchange
};
const char *alg_name(Alg a);

struct Tuning {
    size_t bcast_pipeline_min;  // bytes from which bcast is a pipelined chain
    size_t bcast_segment;       // its segment size
    size_t allreduce_rsag_min;  // bytes from which a commutative allreduce is Rabenseifner's
    size_t allgather_bruck_max; // bytes per rank up to which allgather is Bruck's
    size_t direct_max_bytes;    // auto: direct for messages of at most this many bytes
    int direct_max_ranks;       // auto: and communicators of at most this many ranks
    int barrier_algorithm;      // 0 dissemination, 1 recursive doubling, 2 binomial tree
    Alg bcast, reduce, allreduce, allgather, alltoall; // forced, or automatic
    int verbose;                                       // coll_basic_verbose
};
extern Tuning tuning;

// With coll_basic_verbose >= 10, say once per process which algorithm a collective of this
// shape (ranks, bytes) took and why; >= 20, every time.
void say_choice(const char *collective, int ranks, size_t bytes, Alg alg, const char *why);

// ---- the algorithms: each builds the whole schedule of one collective into s (already reset
// for comm, with the op where there is one). Counts are in elements, displacements in elements
// (bytes for alltoallw); sendbuf may be WEFT_IN_PLACE where MPI allows it.
void build_barrier(Sched &s, weft_comm_t *comm);
void build_bcast(Sched &s, void *buf, size_t count, weft_datatype_t *type, int root,
                 weft_comm_t *comm);
void build_reduce(Sched &s, const void *sendbuf, void *recvbuf, size_t count, weft_datatype_t *type,
                  weft_op_t *op, int root, weft_comm_t *comm);
void build_allreduce(Sched &s, const void *sendbuf, void *recvbuf, size_t count,
                     weft_datatype_t *type, weft_op_t *op, weft_comm_t *comm);
void build_gatherv(Sched &s, const void *sendbuf, size_t sendcount, weft_datatype_t *sendtype,
                   void *recvbuf, const size_t *recvcounts, const ptrdiff_t *displs,
                   weft_datatype_t *recvtype, int root, weft_comm_t *comm);
void build_scatterv(Sched &s, const void *sendbuf, const size_t *sendcounts,
                    const ptrdiff_t *displs, weft_datatype_t *sendtype, void *recvbuf,
                    size_t recvcount, weft_datatype_t *recvtype, int root, weft_comm_t *comm);
void build_allgatherv(Sched &s, const void *sendbuf, size_t sendcount, weft_datatype_t *sendtype,
                      void *recvbuf, const size_t *recvcounts, const ptrdiff_t *displs,
                      weft_datatype_t *recvtype, weft_comm_t *comm);
void build_allgather(Sched &s, const void *sendbuf, size_t sendcount, weft_datatype_t *sendtype,
                     void *recvbuf, size_t recvcount, weft_datatype_t *recvtype, weft_comm_t *comm);
void build_alltoall(Sched &s, const void *sendbuf, size_t sendcount, weft_datatype_t *sendtype,
                    void *recvbuf, size_t recvcount, weft_datatype_t *recvtype, weft_comm_t *comm);
void build_alltoallw(Sched &s, const void *sendbuf, const size_t *sendcounts,
                     const ptrdiff_t *sdispls, weft_datatype_t *const *sendtypes, void *recvbuf,
                     const size_t *recvcounts, const ptrdiff_t *rdispls,
                     weft_datatype_t *const *recvtypes, weft_comm_t *comm);
void build_reduce_scatter(Sched &s, const void *sendbuf, void *recvbuf, const size_t *recvcounts,
                          weft_datatype_t *type, weft_op_t *op, weft_comm_t *comm);
// The op is the schedule's (Sched::reset).
void build_scan(Sched &s, const void *sendbuf, void *recvbuf, size_t count, weft_datatype_t *type,
                weft_comm_t *comm, bool exclusive);

// ---- the same on an intercommunicator (coll_basic_inter.cc), s reset for it: arrays have one
// entry per rank of the remote group, but reduce_scatter's recvcounts one per rank of the local
// group; root is WEFT_ROOT, WEFT_PROC_NULL or a rank of the remote group; no WEFT_IN_PLACE. The
// op is the schedule's (Sched::reset).
void build_inter_barrier(Sched &s, weft_comm_t *comm);
void build_inter_bcast(Sched &s, void *buf, size_t count, weft_datatype_t *type, int root,
                       weft_comm_t *comm);
void build_inter_reduce(Sched &s, const void *sendbuf, void *recvbuf, size_t count,
                        weft_datatype_t *type, int root, weft_comm_t *comm);
void build_inter_allreduce(Sched &s, const void *sendbuf, void *recvbuf, size_t count,
                           weft_datatype_t *type, weft_comm_t *comm);
void build_inter_gatherv(Sched &s, const void *sendbuf, size_t sendcount, weft_datatype_t *sendtype,
                         void *recvbuf, const size_t *recvcounts, const ptrdiff_t *displs,
                         weft_datatype_t *recvtype, int root, weft_comm_t *comm);
void build_inter_scatterv(Sched &s, const void *sendbuf, const size_t *sendcounts,
                          const ptrdiff_t *displs, weft_datatype_t *sendtype, void *recvbuf,
                          size_t recvcount, weft_datatype_t *recvtype, int root, weft_comm_t *comm);
void build_inter_allgatherv(Sched &s, const void *sendbuf, size_t sendcount,
                            weft_datatype_t *sendtype, void *recvbuf, const size_t *recvcounts,
                            const ptrdiff_t *displs, weft_datatype_t *recvtype, weft_comm_t *comm);
void build_inter_alltoallw(Sched &s, const void *sendbuf, const size_t *sendcounts,
                           const ptrdiff_t *sdispls, weft_datatype_t *const *sendtypes,
                           void *recvbuf, const size_t *recvcounts, const ptrdiff_t *rdispls,
                           weft_datatype_t *const *recvtypes, weft_comm_t *comm);
void build_inter_reduce_scatter(Sched &s, const void *sendbuf, void *recvbuf,
                                const size_t *recvcounts, weft_datatype_t *type, weft_comm_t *comm);

// ---- the neighbourhood collectives (coll_basic_neighbor.cc): the module's operations.
weft_status_t neighbor_allgather(const void *sbuf, size_t scount, weft_datatype_t *stype,
                                 void *rbuf, size_t rcount, weft_datatype_t *rtype, int indegree,
                                 const int *sources, int outdegree, const int *destinations,
                                 weft_comm_t *comm, weft_coll_module_t *module);
weft_status_t neighbor_allgatherv(const void *sbuf, size_t scount, weft_datatype_t *stype,
                                  void *rbuf, const size_t *rcounts, const ptrdiff_t *displs,
                                  weft_datatype_t *rtype, int indegree, const int *sources,
                                  int outdegree, const int *destinations, weft_comm_t *comm,
                                  weft_coll_module_t *module);
weft_status_t neighbor_alltoall(const void *sbuf, size_t scount, weft_datatype_t *stype, void *rbuf,
                                size_t rcount, weft_datatype_t *rtype, int indegree,
                                const int *sources, int outdegree, const int *destinations,
                                weft_comm_t *comm, weft_coll_module_t *module);
weft_status_t neighbor_alltoallv(const void *sbuf, const size_t *scounts, const ptrdiff_t *sdispls,
                                 weft_datatype_t *stype, void *rbuf, const size_t *rcounts,
                                 const ptrdiff_t *rdispls, weft_datatype_t *rtype, int indegree,
                                 const int *sources, int outdegree, const int *destinations,
                                 weft_comm_t *comm, weft_coll_module_t *module);
weft_status_t neighbor_alltoallw(const void *sbuf, const size_t *scounts, const ptrdiff_t *sdispls,
                                 weft_datatype_t *const *stypes, void *rbuf, const size_t *rcounts,
                                 const ptrdiff_t *rdispls, weft_datatype_t *const *rtypes,
                                 int indegree, const int *sources, int outdegree,
                                 const int *destinations, weft_comm_t *comm,
                                 weft_coll_module_t *module);
weft_status_t ineighbor_allgather(const void *sbuf, size_t scount, weft_datatype_t *stype,
                                  void *rbuf, size_t rcount, weft_datatype_t *rtype, int indegree,
                                  const int *sources, int outdegree, const int *destinations,
                                  weft_comm_t *comm, weft_request_t **req,
                                  weft_coll_module_t *module);
weft_status_t ineighbor_allgatherv(const void *sbuf, size_t scount, weft_datatype_t *stype,
                                   void *rbuf, const size_t *rcounts, const ptrdiff_t *displs,
                                   weft_datatype_t *rtype, int indegree, const int *sources,
                                   int outdegree, const int *destinations, weft_comm_t *comm,
                                   weft_request_t **req, weft_coll_module_t *module);
weft_status_t ineighbor_alltoall(const void *sbuf, size_t scount, weft_datatype_t *stype,
                                 void *rbuf, size_t rcount, weft_datatype_t *rtype, int indegree,
                                 const int *sources, int outdegree, const int *destinations,
                                 weft_comm_t *comm, weft_request_t **req,
                                 weft_coll_module_t *module);
weft_status_t ineighbor_alltoallv(const void *sbuf, const size_t *scounts, const ptrdiff_t *sdispls,
                                  weft_datatype_t *stype, void *rbuf, const size_t *rcounts,
                                  const ptrdiff_t *rdispls, weft_datatype_t *rtype, int indegree,
                                  const int *sources, int outdegree, const int *destinations,
                                  weft_comm_t *comm, weft_request_t **req,
                                  weft_coll_module_t *module);
weft_status_t ineighbor_alltoallw(const void *sbuf, const size_t *scounts, const ptrdiff_t *sdispls,
                                  weft_datatype_t *const *stypes, void *rbuf, const size_t *rcounts,
                                  const ptrdiff_t *rdispls, weft_datatype_t *const *rtypes,
                                  int indegree, const int *sources, int outdegree,
                                  const int *destinations, weft_comm_t *comm, weft_request_t **req,
                                  weft_coll_module_t *module);

} // namespace weft::coll::basic

#endif
