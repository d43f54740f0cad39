// Generalized requests (MPI-3.1 12.2): requests the program completes itself, with its callbacks
// for the status (query_fn), the release (free_fn) and cancellation (cancel_fn). They are
// weft_request_t like every other request, so every completion call waits on them as it waits
// on the PML's: on `complete`, which MPI_Grequest_complete sets with one atomic store (from any
// thread) and the progress loop of a waiter observes.
//
// Two events end one: MPI_Grequest_complete, and the program's handle going (a completion call,
// or MPI_Request_free). free_fn runs once: in the completion call, or, for a request freed
// before it completes, in MPI_Grequest_complete. The memory goes with the later of the two.
#include "mpi_internal.h"

#include <atomic>

namespace {

struct GRequest : weft_request_t {
    MPI_Grequest_query_function *query_fn = nullptr;
    MPI_Grequest_free_function *free_fn = nullptr;
    MPI_Grequest_cancel_function *cancel_fn = nullptr;
    void *extra_state = nullptr;
    // MPI_Grequest_complete was called / MPI_Request_free was: the second of them runs free_fn.
    std::atomic<unsigned> events{0};
    // The handle's and the completion's: the last to let go deletes.
    std::atomic<int> refs{2};
};

constexpr unsigned completed = 1, freed = 2;

GRequest *as_grequest(weft_request_t *r) { return static_cast<GRequest *>(r); }

void unref(GRequest *g)
{
    if (g->refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
        delete g;
}

int call_free(GRequest *g) { return g->free_fn ? g->free_fn(g->extra_state) : MPI_SUCCESS; }

// What query_fn starts from (an empty status: it may set only some fields).
void empty_status(MPI_Status *s)
{
    s->MPI_SOURCE = MPI_ANY_SOURCE;
    s->MPI_TAG = MPI_ANY_TAG;
    s->MPI_ERROR = MPI_SUCCESS;
    s->_cancelled = 0;
    s->_ucount = 0;
}

} // namespace

namespace weft::mpi {

void grequest_pml_free(weft_request_t *r) { grequest_free(r); }

int grequest_query(weft_request_t *r, MPI_Status *status)
{
    GRequest *g = as_grequest(r);
    empty_status(status);
    return g->query_fn ? g->query_fn(g->extra_state, status) : MPI_SUCCESS;
}

int grequest_finish(weft_request_t *r, MPI_Status *status)
{
    GRequest *g = as_grequest(r);
    const int rc = grequest_query(r, status);
    const int free_rc = call_free(g);
    unref(g);
    return rc != MPI_SUCCESS ? rc : free_rc;
}

int grequest_free(weft_request_t *r)
{
    GRequest *g = as_grequest(r);
    g->freed = true;
    int rc = MPI_SUCCESS;
    if (g->events.fetch_or(freed, std::memory_order_acq_rel) & completed)
        rc = call_free(g);
    unref(g);
    return rc;
}

int grequest_cancel(weft_request_t *r)
{
    GRequest *g = as_grequest(r);
    const bool done = g->events.load(std::memory_order_acquire) & completed;
    return g->cancel_fn ? g->cancel_fn(g->extra_state, done) : MPI_SUCCESS;
}

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

WEFT_PROFILED(MPI_Grequest_start)
int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                        MPI_Request *request)
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Grequest_start"); rc != MPI_SUCCESS)
        return rc;
    if (!request)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Grequest_start", "request is NULL");
    auto *g = new GRequest;
    weft_request_init(g, WEFT_REQUEST_GENERALIZED, nullptr, MPI_PROC_NULL, 0);
    g->query_fn = query_fn;
    g->free_fn = free_fn;
    g->cancel_fn = cancel_fn;
    g->extra_state = extra_state;
    g->pml_free = grequest_pml_free;
    *request = g;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Grequest_complete)
int PMPI_Grequest_complete(MPI_Request request)
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Grequest_complete"); rc != MPI_SUCCESS)
        return rc;
    if (!request || !is_grequest(request))
        return raise(nullptr, MPI_ERR_REQUEST, "MPI_Grequest_complete",
                     request ? "not a generalized request" : "request is MPI_REQUEST_NULL");
    GRequest *g = as_grequest(request);
    const unsigned before = g->events.fetch_or(completed, std::memory_order_acq_rel);
    if (before & completed)
        return raise(nullptr, MPI_ERR_REQUEST, "MPI_Grequest_complete",
                     "the request was already completed");
    // The one store a waiter (any thread) observes; the completion's reference keeps the
    // request alive until it is made, though the waiter may finish it at once.
    __atomic_store_n(&g->complete, true, __ATOMIC_RELEASE);
    int rc = MPI_SUCCESS;
    if (before & freed) // MPI_Request_free came first: nobody will wait on it
        rc = call_free(g);
    unref(g);
    return rc == MPI_SUCCESS ? MPI_SUCCESS
                             : raise(nullptr, rc, "MPI_Grequest_complete", "free_fn failed");
}

} // extern "C"
