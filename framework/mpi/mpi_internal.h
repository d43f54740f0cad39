// What the files of framework/mpi share. Each MPI function checks the
// library state and its arguments, then either does its work or reports an
// error class through the handle's error handler.
#ifndef WEFT_MPI_INTERNAL_H
#define WEFT_MPI_INTERNAL_H

#include "mpi_handles.h"
#include "mpi_objects.h"
#include "runtime.h"

#include <mpi.h>

#include <pml/pml.h>

#include <atomic>
#include <string>
#include <vector>

// The profiling interface (MPI-3.1 section 14.2). Each MPI function is defined as PMPI_name and
// preceded by WEFT_PROFILED(MPI_name), which makes MPI_name a weak alias of it: a tool that
// defines MPI_Send and calls PMPI_Send links, and its MPI_Send is the one programs call. The
// library itself calls only PMPI_ names (or its internal functions), so a tool counts only the
// program's calls.
#define WEFT_PROFILED(name)                                                                        \
    extern "C" decltype(P##name) name __attribute__((weak, alias("P" #name)));

// The first statement of every MPI function but MPI_Wtime, MPI_Wtick and MPI_Pcontrol: under
// MPI_THREAD_MULTIPLE, the library's lock for the call (runtime.h); otherwise a load and a
// branch.
#define WEFT_API_GUARD weft::mpi::ApiGuard weft_api_guard_
// The whole body of an MPI function that only returns expr: the same, with the lock taken in a
// function of its own when threads are on, so that the usual path keeps no frame for a guard
// (WEFT_API_GUARD's destructor would).
#define WEFT_API_RETURN(expr)                                                                      \
    do {                                                                                           \
        if (weft::mpi::g_api_threads.load(std::memory_order_relaxed)) [[unlikely]]                 \
            return weft::mpi::api_locked([=] { return expr; });                                    \
        return expr;                                                                               \
    } while (0)

namespace weft::mpi {

// ---- library state (mpi_init.cc)
// Set (with weft::rt::g_threads) once MPI_Init_thread has granted MPI_THREAD_MULTIPLE. This
// library's own copy, hidden: every MPI function reads it, with one load.
extern std::atomic<bool> g_api_threads __attribute__((visibility("hidden")));
// The library's lock for the scope of an MPI function, when threads are on.
class ApiGuard {
  public:
    ApiGuard() : held_(g_api_threads.load(std::memory_order_relaxed))
    {
        if (held_) [[unlikely]]
            weft::rt::api_lock();
    }
    ~ApiGuard()
    {
        if (held_) [[unlikely]]
            weft::rt::api_unlock();
    }
    ApiGuard(const ApiGuard &) = delete;
    ApiGuard &operator=(const ApiGuard &) = delete;

  private:
    bool held_;
};
// The library's lock at any thread level: the calls that may run beside the tool interface's
// from another thread whatever the level (MPI_Init, MPI_Finalize, MPI_T_*), none of them hot.
class ToolGuard {
  public:
    ToolGuard() { weft::rt::api_lock(); }
    ~ToolGuard() { weft::rt::api_unlock(); }
    ToolGuard(const ToolGuard &) = delete;
    ToolGuard &operator=(const ToolGuard &) = delete;
};
// f() under the library's lock (WEFT_API_RETURN's locked path).
template <class F> [[gnu::noinline, gnu::cold]] auto api_locked(F &&f) -> decltype(f())
{
    ApiGuard guard;
    return f();
}
bool initialized();
bool finalized();
// Set between MPI_Init and MPI_Finalize: MPI may be called, and the PML the
// job selected.
extern bool g_running;
extern struct weft_pml_module *g_pml;
// Prints a clear message ("MPI_Send called after MPI_Finalize") and returns
// MPI_ERR_OTHER.
[[gnu::cold]] int state_error(const char *fn);
// MPI_SUCCESS when MPI may be called now; otherwise state_error(fn).
inline int check_state(const char *fn) { return g_running ? MPI_SUCCESS : state_error(fn); }

// The selected PML module (valid between MPI_Init and MPI_Finalize).
inline struct weft_pml_module *pml() { return g_pml; }
// ---- errors (mpi_errors.cc)
// The MPI error class for a Weft status.
int error_class_of(weft_status_t status);

// MPI_Status from a PML status (status may be MPI_STATUS_IGNORE).
inline void to_status(const weft_msg_status_t &in, MPI_Status *out)
{
    if (!out)
        return;
    out->MPI_SOURCE = in.source;
    out->MPI_TAG = in.tag;
    out->MPI_ERROR = in.error == WEFT_SUCCESS ? MPI_SUCCESS : error_class_of(in.error);
    out->_cancelled = in.cancelled;
    out->_ucount = size_t(in.count);
}

// ---- communicators (mpi_comm.cc)
// Fill the C view's fields that follow from the groups (weft/comm.h: peer_size, the world rank
// arrays, flags), once cid, group, remote_group, rank and size are set.
void comm_update_view(weft_comm *comm);
// Register a new communicator with the PML and the collectives (after its cid, group, rank and
// size are set; updates the view first).
int comm_activate(weft_comm *comm);
// Tags below this are the library's own (MPI_ANY_TAG is -1; user tags >= 0).
constexpr int internal_tag_base = -16;
// Blocking point-to-point on the library's own tags, for communicator
// construction and the barrier until the coll framework serves them.
weft_status_t internal_send(weft_comm *comm, const void *buf, size_t bytes, int dst, int tag);
weft_status_t internal_recv(weft_comm *comm, void *buf, size_t bytes, int src, int tag);

// ---- collectives (mpi_coll.cc)
// Open the coll framework (MPI_Init, after the PML) and close it (MPI_Finalize).
weft_status_t coll_init();
void coll_finalize();
// Choose comm's collective functions (after the PML knows comm), and release them.
weft_status_t coll_comm_enable(weft_comm *comm);
void coll_comm_disable(weft_comm *comm);
// The non-blocking agreement that reports the failures agreed (coll_iagree_group): *failed
// (a new group, or NULL for none) when *request completes.
weft_status_t iagree_group_status(weft_comm *comm, int *flag, weft_group_t **failed,
                                  weft_request_t **request);
// A barrier over the library's own tags that needs no coll component (MPI_Finalize).
weft_status_t internal_barrier(weft_comm *comm);
// A barrier that does not wait for failed processes (MPI_Finalize with fault tolerance on).
weft_status_t ft_barrier(weft_comm *comm);

// ---- errors (mpi_errors.cc)
// Report `errclass` raised by `fn` on `comm` (MPI_COMM_WORLD's handler if comm
// is null or invalid): MPI_ERRORS_ARE_FATAL prints
//   "MPI_Send: invalid rank (MPI_ERR_RANK) on communicator MPI_COMM_WORLD: <detail>"
// and aborts the job through the runtime; MPI_ERRORS_RETURN returns errclass;
// a user handler is called with (&comm, &errclass) and errclass is returned.
int raise(weft_comm *comm, int errclass, const char *fn, const std::string &detail = "");
// raise() for an internal status: its class, and for MPI_ERR_OTHER what the status says (for
// example "peer unreachable"), which the class alone would hide.
int raise_status(weft_comm *comm, weft_status_t status, const char *fn);
// A reference to an error handler (a communicator's, a handle's); the last release deletes a
// user's handler. The predefined ones are not counted.
void errhandler_retain(weft_errhandler *eh);
void errhandler_release(weft_errhandler *eh);
// The value of the attribute MPI_LASTUSEDCODE, kept current: the largest error code in use,
// MPI_ERR_LASTCODE or the last one MPI_Add_error_class or MPI_Add_error_code made.
int *last_used_code();

// ---- generalized requests (mpi_grequest.cc)
// Every generalized request's pml_free, which is how one is recognised.
void grequest_pml_free(weft_request_t *r);
inline bool is_grequest(const weft_request_t *r) { return r->pml_free == grequest_pml_free; }
// A complete generalized request is done with (a completion call): query_fn fills *status (not
// NULL), then free_fn runs and the request is gone. The first error a callback returned (not
// raised), or MPI_SUCCESS.
int grequest_finish(weft_request_t *r, MPI_Status *status);
// MPI_Request_get_status of a complete one: query_fn only.
int grequest_query(weft_request_t *r, MPI_Status *status);
// MPI_Request_free: free_fn now if it is complete, else when MPI_Grequest_complete comes.
int grequest_free(weft_request_t *r);
// MPI_Cancel: cancel_fn, told whether it is complete.
int grequest_cancel(weft_request_t *r);

// ---- fault tolerance (mpi_ft.cc)
// Whether fault tolerance is on (mpi_ft_enable), cached after MPI_Init.
bool ft_enabled();
// The peer-group ranks of comm's members known to have failed, in the order learnt.
const std::vector<int> &failed_members(weft_comm *comm);
// Whether receives from MPI_ANY_SOURCE on comm are stopped: a failure of a member is not
// acknowledged yet.
bool any_source_blocked(weft_comm *comm);
// A pending receive from MPI_ANY_SOURCE that a failure stopped: waits return
// MPIX_ERR_PROC_FAILED_PENDING for it and leave it pending.
inline bool pending_failed(const weft_request_t *r)
{
    return ft_enabled() && !r->complete && r->kind == WEFT_REQUEST_PML_RECV &&
           r->peer == MPI_ANY_SOURCE && r->comm && any_source_blocked(r->comm);
}
// A new group of the failures of comm's members this process acknowledged (NULL when none).
weft_group *acked_group(weft_comm *comm);
// Report MPIX_ERR_REVOKED for an operation on a revoked communicator.
int raise_revoked(weft_comm *comm, const char *fn);
// A wait may end: the request completed, or it is stopped by a failure.
inline bool settled(const weft_request_t *r) { return r->complete || pending_failed(r); }

// ---- groups (mpi_group.cc)
weft_group *group_new(std::vector<int> world_ranks);
void group_retain(weft_group *g);
void group_release(weft_group *g);

// ---- predefined objects (mpi_predefined.cc)
// Fill MPI_COMM_WORLD and MPI_COMM_SELF (and their groups) once the runtime
// knows rank and size.
void setup_predefined(int world_rank, int world_size);
inline bool valid_comm(MPI_Comm comm) { return comm && (comm->predefined || !comm->freed); }
// A datatype handle that names a live type (committed or not).
inline bool live_datatype(MPI_Datatype type)
{
    return type && (type->predefined || type->refs > 0);
}
// A datatype that communication calls take: live and committed (the PML and the collectives
// move a type that is not contiguous through the datatype engine).
inline bool valid_datatype(MPI_Datatype type)
{
    return type && (type->predefined || (type->refs > 0 && type->committed));
}
// Why a datatype is not valid_datatype(), for the error message.
std::string datatype_problem(MPI_Datatype type);

// A live reduction op handle (predefined, or made by MPI_Op_create and not freed).
inline bool valid_op(MPI_Op op) { return op && (op->predefined || op->user); }

// ---- derived datatypes (mpi_datatype.cc)
// The datatype engine's layout of a type (predefined ones included).
const dt::Layout &layout_of(const weft_datatype *type);

// ---- attributes (mpi_attr.cc)
// MPI_Comm_dup's last step, once *newcomm is active: copy old's attributes to it through their
// copy callbacks. A callback's error deletes what was copied, frees *newcomm (MPI_COMM_NULL
// then) and is raised on old as fn's.
int comm_dup_attrs(weft_comm *old, MPI_Comm *newcomm, const char *fn);
// MPI_Type_dup's: copy old's attributes to t; on a callback's error what was copied is deleted
// again and the error returned (not raised).
int type_copy_attrs(weft_datatype *old, weft_datatype *t);
// Delete all of an object's attributes through their delete callbacks, newest first
// (MPI_Comm_free, MPI_Type_free, MPI_Finalize for MPI_COMM_SELF). The first error a callback
// returns stops it (that attribute and the older ones stay) and is returned, not raised.
int comm_delete_attrs(weft_comm *c);
int type_delete_attrs(weft_datatype *t);
// MPI_Comm_get_attr of a keyval that is not a predefined attribute's.
int comm_get_user_attr(weft_comm *comm, int keyval, void *value, int *flag, const char *fn);

// ---- info (mpi_info.cc)
// Fill MPI_INFO_ENV (MPI_Init, once the runtime and the thread level are known).
void info_env_init(int thread_level);

} // namespace weft::mpi

#endif
