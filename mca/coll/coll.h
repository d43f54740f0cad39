/*
 * coll/coll.h: the collective operations (coll) framework ABI, version 1.3.
 *
 * Collectives are chosen per communicator and per operation: every component is asked about
 * each new communicator, and for each operation the module of highest priority that provides it
 * (non-NULL) wins. Components: basic (everything, simply, over the PML), ftagree (the fault-
 * tolerant agreement, chosen when FT is enabled), tuned (later). coll/base provides a non-FT
 * agreement built on allreduce for when FT is off.
 *
 * Lifecycle, and who calls what:
 *
 *   1. register, open, query   coll/base through the MCA repository (weft/mca.h); every
 *                              component that accepts in query stays open.
 *   2. init_query              coll/base, once per component at MPI init, with the thread
 *                              levels; an error drops the component.
 *   3. comm_query              coll/base, for each new communicator (MPI_COMM_WORLD and
 *                              MPI_COMM_SELF included), on every remaining component. It returns
 *                              a module for this communicator with a priority, or NULL.
 *   4. module_enable           coll/base, on each module that won at least one operation, once
 *                              the choice for the whole communicator is made; the module may
 *                              then communicate on comm (e.g. to set up shared state).
 *   5. use                     framework/mpi calls the winning module's operation for each
 *                              collective on comm, passing that module back.
 *   6. module_disable          coll/base, once for every module comm_query returned (enabled or
 *                              not), when comm is freed or the module was not chosen; it is the
 *                              last call the module gets for comm and the module frees itself.
 *   7. close                   coll/base at MPI finalize.
 *
 * Threading: see weft/module.h. Operations are class "mpi"; MPI forbids concurrent collectives
 * on one communicator, so a module needs no lock for its per-communicator state. Progress of
 * non-blocking collectives runs from the progress engine, class "any".
 *
 * Failures (ulfm-components.md): when a process of comm fails, framework/mpi revokes the
 * collectives on comm (pml_revoke_comm with coll_only), so a collective completes at every rank,
 * in error at some: WEFT_ERR_PROC_FAILED or WEFT_ERR_REVOKED. A module must not wait forever on
 * a dead process, and a non-blocking collective whose sub-request fails ends its schedule and
 * completes its top-level request with that error. coll_agree and coll_iagree work on revoked
 * communicators and with failed processes.
 *
 * A component exports one symbol, mca_coll_<name>_component, of type weft_coll_component_t,
 * with mca.framework "coll" and framework_abi_major/minor WEFT_COLL_ABI_MAJOR/MINOR. New
 * operations are appended to weft_coll_module_t (bumping WEFT_COLL_ABI_MINOR); callers check
 * WEFT_MODULE_HAS_OP before calling any operation added after 1.0.
 */
#ifndef WEFT_COLL_H
#define WEFT_COLL_H

#include <stddef.h>
#include <stdint.h>

#include <weft/mca.h>
#include <weft/module.h>
#include <weft/status.h>
#include <weft/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_COLL_ABI_MAJOR 1
#define WEFT_COLL_ABI_MINOR 3

typedef struct weft_coll_module weft_coll_module_t;
typedef struct weft_coll_component weft_coll_component_t;

/*
 * Contract shared by the collective operations below, unless an operation says otherwise:
 *   arguments  as in the MPI standard: counts in elements of the datatype, displacements in
 *              elements (in bytes for alltoallw), root as a rank in comm; sendbuf may be
 *              WEFT_IN_PLACE where MPI allows MPI_IN_PLACE. Arrays have one entry per rank of
 *              comm (of the remote group for an inter-communicator). module is the one that
 *              comm_query returned for comm.
 *   blocking   yes for the plain forms: they return when this rank's part is done. no for the
 *              i-forms: *request is created by the module, belongs to the caller (released
 *              through framework/mpi's request functions) and completes as the operation does.
 *   datatypes  any committed datatype, also one whose data is not contiguous in memory
 *              (weft_datatype_is_contiguous false: a strided type, MPI_DOUBLE_INT with its
 *              padding): move it through the PML, which packs it, and weft_datatype_copy; size
 *              scratch buffers with weft_datatype_span (weft/op.h). Never copy such a type's
 *              padding. A module that moves raw bytes declines such a call (see declining).
 *   memory     buffers are the caller's and must stay unchanged until the operation
 *              completes. Count, displacement and datatype arrays are valid during the call
 *              only (a non-blocking module copies what it needs). comm and op may be freed by
 *              the user before a non-blocking operation completes, and so may datatypes: a
 *              module that keeps them retains them (weft_op_retain, weft_datatype_retain; the
 *              communicator's reference count).
 *   returns    WEFT_SUCCESS; WEFT_ERR_BAD_PARAM; WEFT_ERR_OUT_OF_RESOURCE; WEFT_ERR_TRUNCATE;
 *              WEFT_ERR_PROC_FAILED (a process of comm failed); WEFT_ERR_REVOKED (comm, or its
 *              collectives, were revoked). An i-form that returns WEFT_SUCCESS reports later
 *              errors in the request.
 *   thread     mpi.
 *   declining  an operation may decline one call by returning WEFT_ERR_NOT_SUPPORTED before it
 *              communicates (a module that serves small messages only, say); the framework
 *              then calls the same operation of the next module by priority. The decision
 *              must depend only on arguments every rank passes alike (count, datatype, op).
 */
struct weft_coll_module {
    uint32_t struct_size; /* sizeof(weft_coll_module_t) as the component was built */
    uint32_t reserved;    /* zero */

    /* Begin serving comm: the module may now communicate on it. Blocking: yes (it may set up
     * state with its peers), but a module should rather set up at its first call (coll/sm
     * does): communicators that MPIX_Comm_ishrink makes are enabled from progress, where an
     * exchange with the other members can wait on a member that is enabling another
     * communicator first. Returns WEFT_SUCCESS or an error, after which coll/base falls back
     * to the next module for each operation. Thread: mpi. */
    weft_status_t (*coll_module_enable)(weft_coll_module_t *module, weft_comm_t *comm);

    /* Stop serving comm and free the module. Never waits for a dead process. Blocking: local.
     * Returns WEFT_SUCCESS or an error (the module is gone either way). Thread: mpi. */
    weft_status_t (*coll_module_disable)(weft_coll_module_t *module, weft_comm_t *comm);

    /* Blocking collectives: see the shared contract above. */

    weft_status_t (*coll_barrier)(weft_comm_t *comm, weft_coll_module_t *module);

    weft_status_t (*coll_bcast)(void *buf, size_t count, weft_datatype_t *dtype, int root,
                                weft_comm_t *comm, weft_coll_module_t *module);

    /* recvbuf is significant at root only. */
    weft_status_t (*coll_reduce)(const void *sendbuf, void *recvbuf, size_t count,
                                 weft_datatype_t *dtype, weft_op_t *op, int root, weft_comm_t *comm,
                                 weft_coll_module_t *module);

    weft_status_t (*coll_allreduce)(const void *sendbuf, void *recvbuf, size_t count,
                                    weft_datatype_t *dtype, weft_op_t *op, weft_comm_t *comm,
                                    weft_coll_module_t *module);

    /* recvbuf, recvcount and recvtype are significant at root only. */
    weft_status_t (*coll_gather)(const void *sendbuf, size_t sendcount, weft_datatype_t *sendtype,
                                 void *recvbuf, size_t recvcount, weft_datatype_t *recvtype,
                                 int root, weft_comm_t *comm, weft_coll_module_t *module);

    /* The receive arguments are significant at root only. */
    weft_status_t (*coll_gatherv)(const void *sendbuf, size_t sendcount, weft_datatype_t *sendtype,
                                  void *recvbuf, const size_t *recvcounts, const ptrdiff_t *displs,
                                  weft_datatype_t *recvtype, int root, weft_comm_t *comm,
                                  weft_coll_module_t *module);

    /* The send arguments are significant at root only. */
    weft_status_t (*coll_scatter)(const void *sendbuf, size_t sendcount, weft_datatype_t *sendtype,
                                  void *recvbuf, size_t recvcount, weft_datatype_t *recvtype,
                                  int root, weft_comm_t *comm, weft_coll_module_t *module);

    /* The send arguments are significant at root only. */
    weft_status_t (*coll_scatterv)(const void *sendbuf, const size_t *sendcounts,
                                   const ptrdiff_t *displs, weft_datatype_t *sendtype,
                                   void *recvbuf, size_t recvcount, weft_datatype_t *recvtype,
                                   int root, weft_comm_t *comm, weft_coll_module_t *module);

    weft_status_t (*coll_allgather)(const void *sendbuf, size_t sendcount,
                                    weft_datatype_t *sendtype, void *recvbuf, size_t recvcount,
                                    weft_datatype_t *recvtype, weft_comm_t *comm,
                                    weft_coll_module_t *module);

    weft_status_t (*coll_allgatherv)(const void *sendbuf, size_t sendcount,
                                     weft_datatype_t *sendtype, void *recvbuf,
                                     const size_t *recvcounts, const ptrdiff_t *displs,
                                     weft_datatype_t *recvtype, weft_comm_t *comm,
                                     weft_coll_module_t *module);

    weft_status_t (*coll_alltoall)(const void *sendbuf, size_t sendcount, weft_datatype_t *sendtype,
                                   void *recvbuf, size_t recvcount, weft_datatype_t *recvtype,
                                   weft_comm_t *comm, weft_coll_module_t *module);

    weft_status_t (*coll_alltoallv)(const void *sendbuf, const size_t *sendcounts,
                                    const ptrdiff_t *sdispls, weft_datatype_t *sendtype,
                                    void *recvbuf, const size_t *recvcounts,
                                    const ptrdiff_t *rdispls, weft_datatype_t *recvtype,
                                    weft_comm_t *comm, weft_coll_module_t *module);

    /* Displacements in bytes; one datatype per rank. */
    weft_status_t (*coll_alltoallw)(const void *sendbuf, const size_t *sendcounts,
                                    const ptrdiff_t *sdispls, weft_datatype_t *const *sendtypes,
                                    void *recvbuf, const size_t *recvcounts,
                                    const ptrdiff_t *rdispls, weft_datatype_t *const *recvtypes,
                                    weft_comm_t *comm, weft_coll_module_t *module);

    weft_status_t (*coll_reduce_scatter)(const void *sendbuf, void *recvbuf,
                                         const size_t *recvcounts, weft_datatype_t *dtype,
                                         weft_op_t *op, weft_comm_t *comm,
                                         weft_coll_module_t *module);

    weft_status_t (*coll_reduce_scatter_block)(const void *sendbuf, void *recvbuf, size_t recvcount,
                                               weft_datatype_t *dtype, weft_op_t *op,
                                               weft_comm_t *comm, weft_coll_module_t *module);

    weft_status_t (*coll_scan)(const void *sendbuf, void *recvbuf, size_t count,
                               weft_datatype_t *dtype, weft_op_t *op, weft_comm_t *comm,
                               weft_coll_module_t *module);

    /* recvbuf is undefined at rank 0. */
    weft_status_t (*coll_exscan)(const void *sendbuf, void *recvbuf, size_t count,
                                 weft_datatype_t *dtype, weft_op_t *op, weft_comm_t *comm,
                                 weft_coll_module_t *module);

    /* Non-blocking collectives: the same as the blocking ones, plus *request; see the shared
     * contract above. */

    weft_status_t (*coll_ibarrier)(weft_comm_t *comm, weft_request_t **request,
                                   weft_coll_module_t *module);

    weft_status_t (*coll_ibcast)(void *buf, size_t count, weft_datatype_t *dtype, int root,
                                 weft_comm_t *comm, weft_request_t **request,
                                 weft_coll_module_t *module);

    weft_status_t (*coll_ireduce)(const void *sendbuf, void *recvbuf, size_t count,
                                  weft_datatype_t *dtype, weft_op_t *op, int root,
                                  weft_comm_t *comm, weft_request_t **request,
                                  weft_coll_module_t *module);

    weft_status_t (*coll_iallreduce)(const void *sendbuf, void *recvbuf, size_t count,
                                     weft_datatype_t *dtype, weft_op_t *op, weft_comm_t *comm,
                                     weft_request_t **request, weft_coll_module_t *module);

    weft_status_t (*coll_igather)(const void *sendbuf, size_t sendcount, weft_datatype_t *sendtype,
                                  void *recvbuf, size_t recvcount, weft_datatype_t *recvtype,
                                  int root, weft_comm_t *comm, weft_request_t **request,
                                  weft_coll_module_t *module);

    weft_status_t (*coll_igatherv)(const void *sendbuf, size_t sendcount, weft_datatype_t *sendtype,
                                   void *recvbuf, const size_t *recvcounts, const ptrdiff_t *displs,
                                   weft_datatype_t *recvtype, int root, weft_comm_t *comm,
                                   weft_request_t **request, weft_coll_module_t *module);

    weft_status_t (*coll_iscatter)(const void *sendbuf, size_t sendcount, weft_datatype_t *sendtype,
                                   void *recvbuf, size_t recvcount, weft_datatype_t *recvtype,
                                   int root, weft_comm_t *comm, weft_request_t **request,
                                   weft_coll_module_t *module);

    weft_status_t (*coll_iscatterv)(const void *sendbuf, const size_t *sendcounts,
                                    const ptrdiff_t *displs, weft_datatype_t *sendtype,
                                    void *recvbuf, size_t recvcount, weft_datatype_t *recvtype,
                                    int root, weft_comm_t *comm, weft_request_t **request,
                                    weft_coll_module_t *module);

    weft_status_t (*coll_iallgather)(const void *sendbuf, size_t sendcount,
                                     weft_datatype_t *sendtype, void *recvbuf, size_t recvcount,
                                     weft_datatype_t *recvtype, weft_comm_t *comm,
                                     weft_request_t **request, weft_coll_module_t *module);

    weft_status_t (*coll_iallgatherv)(const void *sendbuf, size_t sendcount,
                                      weft_datatype_t *sendtype, void *recvbuf,
                                      const size_t *recvcounts, const ptrdiff_t *displs,
                                      weft_datatype_t *recvtype, weft_comm_t *comm,
                                      weft_request_t **request, weft_coll_module_t *module);

    weft_status_t (*coll_ialltoall)(const void *sendbuf, size_t sendcount,
                                    weft_datatype_t *sendtype, void *recvbuf, size_t recvcount,
                                    weft_datatype_t *recvtype, weft_comm_t *comm,
                                    weft_request_t **request, weft_coll_module_t *module);

    weft_status_t (*coll_ialltoallv)(const void *sendbuf, const size_t *sendcounts,
                                     const ptrdiff_t *sdispls, weft_datatype_t *sendtype,
                                     void *recvbuf, const size_t *recvcounts,
                                     const ptrdiff_t *rdispls, weft_datatype_t *recvtype,
                                     weft_comm_t *comm, weft_request_t **request,
                                     weft_coll_module_t *module);

    weft_status_t (*coll_ialltoallw)(const void *sendbuf, const size_t *sendcounts,
                                     const ptrdiff_t *sdispls, weft_datatype_t *const *sendtypes,
                                     void *recvbuf, const size_t *recvcounts,
                                     const ptrdiff_t *rdispls, weft_datatype_t *const *recvtypes,
                                     weft_comm_t *comm, weft_request_t **request,
                                     weft_coll_module_t *module);

    weft_status_t (*coll_ireduce_scatter)(const void *sendbuf, void *recvbuf,
                                          const size_t *recvcounts, weft_datatype_t *dtype,
                                          weft_op_t *op, weft_comm_t *comm,
                                          weft_request_t **request, weft_coll_module_t *module);

    weft_status_t (*coll_ireduce_scatter_block)(const void *sendbuf, void *recvbuf,
                                                size_t recvcount, weft_datatype_t *dtype,
                                                weft_op_t *op, weft_comm_t *comm,
                                                weft_request_t **request,
                                                weft_coll_module_t *module);

    weft_status_t (*coll_iscan)(const void *sendbuf, void *recvbuf, size_t count,
                                weft_datatype_t *dtype, weft_op_t *op, weft_comm_t *comm,
                                weft_request_t **request, weft_coll_module_t *module);

    weft_status_t (*coll_iexscan)(const void *sendbuf, void *recvbuf, size_t count,
                                  weft_datatype_t *dtype, weft_op_t *op, weft_comm_t *comm,
                                  weft_request_t **request, weft_coll_module_t *module);

    /*
     * Agreement (MPIX_Comm_agree), fault tolerant. *flag: in, this rank's contribution; out,
     * the bitwise AND of the contributions of every process of comm that did not fail, the
     * same at every rank that returns. *group: in, the failures this rank has acknowledged
     * (borrowed; NULL for none); out, a new group (the caller's, to release) of the processes
     * all survivors agree have failed. Works on a revoked comm. Blocking: yes, but completes
     * despite failures during the call. Returns WEFT_SUCCESS; WEFT_ERR_PROC_FAILED (some process
     * of comm failed that was not in the acknowledged group; *flag and *group are still
     * agreed); WEFT_ERR_OUT_OF_RESOURCE. Thread: mpi.
     */
    weft_status_t (*coll_agree)(int *flag, weft_group_t **group, weft_comm_t *comm,
                                weft_coll_module_t *module);

    /* Non-blocking coll_agree: flag is read at the call and written when *request completes,
     * and must stay valid until then; *group (may be NULL) is read at the call only: the
     * group agreed is not reported (MPIX_Comm_iagree has no place for it), and a component may
     * set *group to a group it does not own at the call. The error is reported in the request.
     * Blocking: no. Returns WEFT_SUCCESS, WEFT_ERR_BAD_PARAM, WEFT_ERR_OUT_OF_RESOURCE.
     * Thread: mpi. */
    weft_status_t (*coll_iagree)(int *flag, weft_group_t **group, weft_comm_t *comm,
                                 weft_request_t **request, weft_coll_module_t *module);

    /* Operations added in 1.1 and later go here, at the end. */

    /* (1.1) Non-blocking coll_agree that reports the agreed failures too (MPIX_Comm_ishrink):
     * *flag as coll_iagree's; acked (borrowed, may be NULL) is read at the call; when *request
     * completes, *failed (which must stay valid until then) is a new group, the caller's to
     * release, of the processes all survivors agree have failed (NULL, or MPI_GROUP_EMPTY,
     * which releasing leaves alone, when none has; a component may write it at the call). Its
     * agreements are ordered among themselves, apart from coll_agree and coll_iagree's: the
     * library runs them (MPIX_Comm_ishrink) while the program may be agreeing. The error (as
     * coll_agree's) is reported in the request. Blocking: no. Returns WEFT_SUCCESS,
     * WEFT_ERR_BAD_PARAM, WEFT_ERR_OUT_OF_RESOURCE. Thread: mpi. */
    weft_status_t (*coll_iagree_group)(int *flag, weft_group_t *acked, weft_group_t **failed,
                                       weft_comm_t *comm, weft_request_t **request,
                                       weft_coll_module_t *module);

    /*
     * (1.2) Neighbourhood collectives (MPI-3.1 7.6), blocking and non-blocking, on a
     * communicator with a process topology. The framework passes the neighbours, so a module
     * needs no access to the topology: sources[0..indegree) are the ranks this rank receives
     * from and destinations[0..outdegree) those it sends to, in the standard's order (Cartesian:
     * for each dimension the negative then the positive neighbour; graph: MPI_Graph_neighbors';
     * distributed graph: as MPI_Dist_graph_neighbors gives them). An entry may be WEFT_PROC_NULL
     * (a non-periodic edge of a grid): nothing is sent there, and that block of recvbuf is left
     * untouched. A rank may appear more than once: the k-th message from one peer goes to the
     * k-th block that names it (messages match in order, as point-to-point ones do). Receive
     * block j is from sources[j], send block j for destinations[j]; the count, displacement and
     * type arrays have one entry per in-neighbour (receive side) or out-neighbour (send side),
     * displacements in elements (bytes for the w-forms). No WEFT_IN_PLACE. sources and
     * destinations are valid during the call only. Otherwise the shared contract above:
     * blocking or not, memory, returns, thread.
     */
    weft_status_t (*coll_neighbor_allgather)(const void *sendbuf, size_t sendcount,
                                             weft_datatype_t *sendtype, void *recvbuf,
                                             size_t recvcount, weft_datatype_t *recvtype,
                                             int indegree, const int *sources, int outdegree,
                                             const int *destinations, weft_comm_t *comm,
                                             weft_coll_module_t *module);

    weft_status_t (*coll_neighbor_allgatherv)(const void *sendbuf, size_t sendcount,
                                              weft_datatype_t *sendtype, void *recvbuf,
                                              const size_t *recvcounts, const ptrdiff_t *displs,
                                              weft_datatype_t *recvtype, int indegree,
                                              const int *sources, int outdegree,
                                              const int *destinations, weft_comm_t *comm,
                                              weft_coll_module_t *module);

    weft_status_t (*coll_neighbor_alltoall)(const void *sendbuf, size_t sendcount,
                                            weft_datatype_t *sendtype, void *recvbuf,
                                            size_t recvcount, weft_datatype_t *recvtype,
                                            int indegree, const int *sources, int outdegree,
                                            const int *destinations, weft_comm_t *comm,
                                            weft_coll_module_t *module);

    weft_status_t (*coll_neighbor_alltoallv)(const void *sendbuf, const size_t *sendcounts,
                                             const ptrdiff_t *sdispls, weft_datatype_t *sendtype,
                                             void *recvbuf, const size_t *recvcounts,
                                             const ptrdiff_t *rdispls, weft_datatype_t *recvtype,
                                             int indegree, const int *sources, int outdegree,
                                             const int *destinations, weft_comm_t *comm,
                                             weft_coll_module_t *module);

    /* Displacements in bytes; one datatype per neighbour. */
    weft_status_t (*coll_neighbor_alltoallw)(const void *sendbuf, const size_t *sendcounts,
                                             const ptrdiff_t *sdispls,
                                             weft_datatype_t *const *sendtypes, void *recvbuf,
                                             const size_t *recvcounts, const ptrdiff_t *rdispls,
                                             weft_datatype_t *const *recvtypes, int indegree,
                                             const int *sources, int outdegree,
                                             const int *destinations, weft_comm_t *comm,
                                             weft_coll_module_t *module);

    weft_status_t (*coll_ineighbor_allgather)(const void *sendbuf, size_t sendcount,
                                              weft_datatype_t *sendtype, void *recvbuf,
                                              size_t recvcount, weft_datatype_t *recvtype,
                                              int indegree, const int *sources, int outdegree,
                                              const int *destinations, weft_comm_t *comm,
                                              weft_request_t **request, weft_coll_module_t *module);

    weft_status_t (*coll_ineighbor_allgatherv)(
        const void *sendbuf, size_t sendcount, weft_datatype_t *sendtype, void *recvbuf,
        const size_t *recvcounts, const ptrdiff_t *displs, weft_datatype_t *recvtype, int indegree,
        const int *sources, int outdegree, const int *destinations, weft_comm_t *comm,
        weft_request_t **request, weft_coll_module_t *module);

    weft_status_t (*coll_ineighbor_alltoall)(const void *sendbuf, size_t sendcount,
                                             weft_datatype_t *sendtype, void *recvbuf,
                                             size_t recvcount, weft_datatype_t *recvtype,
                                             int indegree, const int *sources, int outdegree,
                                             const int *destinations, weft_comm_t *comm,
                                             weft_request_t **request, weft_coll_module_t *module);

    weft_status_t (*coll_ineighbor_alltoallv)(const void *sendbuf, const size_t *sendcounts,
                                              const ptrdiff_t *sdispls, weft_datatype_t *sendtype,
                                              void *recvbuf, const size_t *recvcounts,
                                              const ptrdiff_t *rdispls, weft_datatype_t *recvtype,
                                              int indegree, const int *sources, int outdegree,
                                              const int *destinations, weft_comm_t *comm,
                                              weft_request_t **request, weft_coll_module_t *module);

    weft_status_t (*coll_ineighbor_alltoallw)(const void *sendbuf, const size_t *sendcounts,
                                              const ptrdiff_t *sdispls,
                                              weft_datatype_t *const *sendtypes, void *recvbuf,
                                              const size_t *recvcounts, const ptrdiff_t *rdispls,
                                              weft_datatype_t *const *recvtypes, int indegree,
                                              const int *sources, int outdegree,
                                              const int *destinations, weft_comm_t *comm,
                                              weft_request_t **request, weft_coll_module_t *module);
};

struct weft_coll_component {
    weft_mca_component_t mca; /* mca.struct_size = sizeof(weft_coll_component_t) */

    /* Say whether the component can work with these thread levels. Called once at MPI init.
     * Returns WEFT_SUCCESS, or an error to be dropped. Blocking: local. Thread: init. */
    weft_status_t (*init_query)(int enable_progress_threads, int enable_mpi_threads);

    /* Offer a module for comm with *priority (higher wins, per operation), or return NULL to
     * decline. comm may be an intercommunicator: a module that offers operations for one
     * implements their intercommunicator semantics (or declines it). The module is the component's
     * until coll_module_disable frees it. The answer must depend only on what every rank of comm
     * knows alike, so that all ranks choose the same module for each operation. Blocking: local.
     * Thread: mpi. */
    weft_coll_module_t *(*comm_query)(weft_comm_t *comm, int *priority);
};

/* ------------------------------------------------------------------------------------------ */
/* For framework/mpi, the core (defined in coll/base, libweft); components have no use for them */
/* ------------------------------------------------------------------------------------------ */

/* One communicator's choice of functions; opaque, kept with the communicator. */
typedef struct weft_coll_choice weft_coll_choice_t;

/* Open the framework and the components the selection allows; init_query each (one that
 * refuses is left out with a warning). Errors (a bad --mca coll list) are printed. The three
 * objects are what coll/base's own agreement (an allreduce of the flags with bitwise AND, not
 * fault tolerant, below every component) uses: framework/mpi's int type, bitwise-and op and
 * empty group, which outlive the framework. Thread: init. */
weft_status_t weft_coll_base_init(weft_datatype_t *int_type, weft_op_t *band,
                                  weft_group_t *empty_group);
/* Close every component, after every communicator's choice is gone. Thread: init. */
void weft_coll_base_finalize(void);

/* Choose comm's functions: comm_query on every component, then coll_module_enable on each
 * module that won an operation (one that fails is dropped and the choice made again). label
 * names comm in the listing printed at coll_base_verbose >= 10. Blocking: yes (module_enable
 * may communicate); every rank of comm calls it, in the same order of communicators. */
weft_status_t weft_coll_comm_enable(weft_comm_t *comm, const char *label,
                                    weft_coll_choice_t **choice);
/* coll_module_disable every module comm_query returned, and free the choice. Blocking: local. */
void weft_coll_comm_disable(weft_comm_t *comm, weft_coll_choice_t *choice);

/* Call an operation of weft_coll_module_t, named by its place (offsetof and sizeof of the
 * member): invoke(context, module) for the module chosen for it, then, as long as the module
 * called declines (WEFT_ERR_NOT_SUPPORTED), for the next enabled module by priority whose
 * struct reaches the operation. invoke calls the module's function (WEFT_ERR_NOT_SUPPORTED if
 * it is NULL). *found is 0 when no module provides the operation on comm (nothing was called).
 * Returns what the last call returned. Thread: mpi. */
weft_status_t weft_coll_call(const weft_coll_choice_t *choice, size_t op_offset, size_t op_size,
                             weft_status_t (*invoke)(void *context, weft_coll_module_t *module),
                             void *context, int *found);
/* The same for a call that only modules of components built for coll ABI 1.<min_minor> or later
 * may take (those of older ones are passed over, as if they declined): the core asks for 1.2
 * when a datatype of the call is not contiguous, which no module built before 1.2 was given. */
weft_status_t weft_coll_call_min(const weft_coll_choice_t *choice, size_t op_offset, size_t op_size,
                                 unsigned min_minor,
                                 weft_status_t (*invoke)(void *context, weft_coll_module_t *module),
                                 void *context, int *found);
/* (1.3) The same walk from the module after `module` by priority, as though `module` had
 * declined: for a module that takes some calls itself and hands others to the modules below it
 * by its own measure, and times what that costs (coll/sm chooses so between its large slots and
 * the point-to-point algorithms below it). `module` is one that comm_query returned for one
 * communicator only (a module per communicator: it names the communicator) and that serves the
 * operation there. The ranks must hand down the same calls (decide on what every rank passes
 * alike, or agree). Returns what the last call returned; WEFT_ERR_NOT_SUPPORTED when no module
 * below took it (none provides the operation, or each declined). A component that calls it is
 * built for coll ABI 1.3 or later. Thread: mpi. */
weft_status_t weft_coll_call_below(
    const weft_coll_module_t *module, size_t op_offset, size_t op_size, unsigned min_minor,
    weft_status_t (*invoke)(void *context, weft_coll_module_t *module), void *context);

#ifdef __cplusplus
} /* extern "C" */

#include <type_traits>

static_assert(std::is_standard_layout_v<weft_coll_module_t> &&
                  std::is_trivially_copyable_v<weft_coll_module_t>,
              "weft_coll_module_t must stay a plain C struct");
static_assert(std::is_standard_layout_v<weft_coll_component_t> &&
                  std::is_trivially_copyable_v<weft_coll_component_t>,
              "weft_coll_component_t must stay a plain C struct");
static_assert(offsetof(weft_coll_component_t, mca) == 0,
              "the MCA descriptor must be the first member of weft_coll_component_t");
static_assert(offsetof(weft_coll_module_t, struct_size) == 0,
              "struct_size must be the first member of weft_coll_module_t");
#endif

#endif /* WEFT_COLL_H */
