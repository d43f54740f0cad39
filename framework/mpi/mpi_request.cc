// Completion: MPI_Wait / MPI_Test and their any / all / some forms, cancel,
// free, persistent start, counts.
#include "mpi_internal.h"

#include "runtime.h"

#include <mpi-ext.h>

#include <climits>

namespace weft::mpi {

namespace {

void empty_status(MPI_Status *s)
{
    if (!s)
        return;
    s->MPI_SOURCE = MPI_ANY_SOURCE;
    s->MPI_TAG = MPI_ANY_TAG;
    s->MPI_ERROR = MPI_SUCCESS;
    s->_cancelled = 0;
    s->_ucount = 0;
}

// A null handle or an inactive persistent request counts as done, with an
// empty status.
bool inactive(MPI_Request r) { return !r || (r->persistent && !r->active); }

// The status of a receive from MPI_ANY_SOURCE that a failure stopped (pending_failed).
weft_msg_status_t stopped_status()
{
    weft_msg_status_t st{};
    st.source = MPI_ANY_SOURCE;
    st.tag = MPI_ANY_TAG;
    st.error = WEFT_ERR_PROC_FAILED_PENDING;
    return st;
}

// The request is settled: report its status, release it unless it is
// persistent, and return its MPI error code (raised on its communicator). A receive a failure
// stopped (not complete) stays as it is: it may be waited on again, or cancelled.
int finish(MPI_Request *req, MPI_Status *status, const char *fn)
{
    MPI_Request r = *req;
    if (is_grequest(r)) {
        MPI_Status ignored;
        handle_forget(HandleKind::request, r);
        *req = MPI_REQUEST_NULL;
        const int rc = grequest_finish(r, status ? status : &ignored);
        return rc == MPI_SUCCESS ? MPI_SUCCESS : raise(nullptr, rc, fn, "a callback failed");
    }
    if (!r->complete) {
        to_status(stopped_status(), status);
        return raise(r->comm, MPIX_ERR_PROC_FAILED_PENDING, fn,
                     "a member of the communicator failed: a receive from MPI_ANY_SOURCE waits "
                     "until the failure is acknowledged (MPIX_Comm_failure_ack)");
    }
    weft_msg_status_t st = r->status;
    to_status(st, status);
    weft_comm *comm = r->comm;
    // Freeing the request may drop the last reference to a freed communicator: keep it for
    // the error report.
    if (comm)
        comm_retain(comm);
    if (r->persistent) {
        r->active = false;
    } else {
        handle_forget(HandleKind::request, r);
        if (r->pml_free)
            r->pml_free(r);
        *req = MPI_REQUEST_NULL;
    }
    int rc = MPI_SUCCESS;
    if (st.error != WEFT_SUCCESS && !st.cancelled)
        rc = raise_status(comm, st.error, fn);
    if (comm)
        comm_release(comm);
    return rc;
}

} // namespace

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

// PMPI_Wait's body (WEFT_API_RETURN keeps its call a tail call).
static int weft_wait_body(MPI_Request *req, MPI_Status *status)
{
    if (int rc = check_state("MPI_Wait"); rc != MPI_SUCCESS)
        return rc;
    if (!req)
        return raise(nullptr, MPI_ERR_REQUEST, "MPI_Wait", "request pointer is NULL");
    if (inactive(*req)) {
        empty_status(status);
        return MPI_SUCCESS;
    }
    MPI_Request r = *req;
    weft::rt::wait_until([&] { return settled(r); });
    return finish(req, status, "MPI_Wait");
}

WEFT_PROFILED(MPI_Wait)
int PMPI_Wait(MPI_Request *req, MPI_Status *status)
{
    WEFT_API_RETURN(weft_wait_body(req, status));
}

// PMPI_Test's body (WEFT_API_RETURN keeps its call a tail call).
static int weft_test_body(MPI_Request *req, int *flag, MPI_Status *status)
{
    if (int rc = check_state("MPI_Test"); rc != MPI_SUCCESS)
        return rc;
    if (!req)
        return raise(nullptr, MPI_ERR_REQUEST, "MPI_Test", "request pointer is NULL");
    if (inactive(*req)) {
        *flag = 1;
        empty_status(status);
        return MPI_SUCCESS;
    }
    if (!settled(*req))
        weft_progress();
    *flag = settled(*req);
    if (!*flag)
        return MPI_SUCCESS;
    return finish(req, status, "MPI_Test");
}

WEFT_PROFILED(MPI_Test)
int PMPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
    WEFT_API_RETURN(weft_test_body(req, flag, status));
}

WEFT_PROFILED(MPI_Request_get_status)
int PMPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *status)
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Request_get_status"); rc != MPI_SUCCESS)
        return rc;
    if (inactive(req)) {
        *flag = 1;
        empty_status(status);
        return MPI_SUCCESS;
    }
    if (!req->complete)
        weft_progress();
    *flag = req->complete;
    if (*flag && is_grequest(req)) { // query_fn says, and the request stays
        MPI_Status ignored;
        const int rc = grequest_query(req, status ? status : &ignored);
        return rc == MPI_SUCCESS ? MPI_SUCCESS
                                 : raise(nullptr, rc, "MPI_Request_get_status", "query_fn failed");
    }
    if (*flag) {
        req->reported = true;
        to_status(req->status, status);
    }
    return MPI_SUCCESS;
}

// PMPI_Waitall's body (WEFT_API_RETURN keeps its call a tail call).
static int weft_waitall_body(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    if (int rc = check_state("MPI_Waitall"); rc != MPI_SUCCESS)
        return rc;
    if (count < 0)
        return raise(nullptr, MPI_ERR_COUNT, "MPI_Waitall", "negative count");
    // Requests stay complete once they are: scan forward only, so a wait on
    // many requests costs one pass, not one pass per progress round.
    int first = 0;
    weft::rt::wait_until([&] {
        while (first < count && (inactive(reqs[first]) || settled(reqs[first])))
            ++first;
        return first == count;
    });
    bool error = false;
    for (int i = 0; i < count; ++i) {
        MPI_Request r = reqs[i];
        if (inactive(r)) {
            if (statuses)
                empty_status(&statuses[i]);
            continue;
        }
        if (is_grequest(r)) {
            MPI_Status ignored, *s = statuses ? &statuses[i] : &ignored;
            handle_forget(HandleKind::request, r);
            reqs[i] = MPI_REQUEST_NULL;
            s->MPI_ERROR = grequest_finish(r, s);
            error |= s->MPI_ERROR != MPI_SUCCESS;
            continue;
        }
        if (!r->complete) { // stopped by a failure: reported, left pending
            if (statuses)
                to_status(stopped_status(), &statuses[i]);
            error = true;
            continue;
        }
        if (statuses)
            to_status(r->status, &statuses[i]);
        error |= r->status.error != WEFT_SUCCESS && !r->status.cancelled;
        if (r->persistent) {
            r->active = false;
        } else {
            handle_forget(HandleKind::request, r);
            r->pml_free(r);
            reqs[i] = MPI_REQUEST_NULL;
        }
    }
    return error ? raise(nullptr, MPI_ERR_IN_STATUS, "MPI_Waitall") : MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Waitall)
int PMPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    WEFT_API_RETURN(weft_waitall_body(count, reqs, statuses));
}

// PMPI_Testall's body (WEFT_API_RETURN keeps its call a tail call).
static int weft_testall_body(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    if (int rc = check_state("MPI_Testall"); rc != MPI_SUCCESS)
        return rc;
    weft_progress();
    for (int i = 0; i < count; ++i)
        if (!inactive(reqs[i]) && !settled(reqs[i])) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    *flag = 1;
    return PMPI_Waitall(count, reqs, statuses);
}

WEFT_PROFILED(MPI_Testall)
int PMPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    WEFT_API_RETURN(weft_testall_body(count, reqs, flag, statuses));
}

// PMPI_Waitany's body (WEFT_API_RETURN keeps its call a tail call).
static int weft_waitany_body(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    if (int rc = check_state("MPI_Waitany"); rc != MPI_SUCCESS)
        return rc;
    bool any_active = false;
    for (int i = 0; i < count; ++i)
        any_active |= !inactive(reqs[i]);
    if (!any_active) {
        *index = MPI_UNDEFINED;
        empty_status(status);
        return MPI_SUCCESS;
    }
    int found = -1;
    weft::rt::wait_until([&] {
        for (int i = 0; i < count; ++i)
            if (!inactive(reqs[i]) && settled(reqs[i])) {
                found = i;
                return true;
            }
        return false;
    });
    *index = found;
    return finish(&reqs[found], status, "MPI_Waitany");
}

WEFT_PROFILED(MPI_Waitany)
int PMPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    WEFT_API_RETURN(weft_waitany_body(count, reqs, index, status));
}

// PMPI_Testany's body (WEFT_API_RETURN keeps its call a tail call).
static int weft_testany_body(int count, MPI_Request reqs[], int *index, int *flag,
                             MPI_Status *status)
{
    if (int rc = check_state("MPI_Testany"); rc != MPI_SUCCESS)
        return rc;
    weft_progress();
    bool any_active = false;
    for (int i = 0; i < count; ++i) {
        if (inactive(reqs[i]))
            continue;
        any_active = true;
        if (settled(reqs[i])) {
            *index = i;
            *flag = 1;
            return finish(&reqs[i], status, "MPI_Testany");
        }
    }
    *index = MPI_UNDEFINED;
    *flag = !any_active;
    if (!any_active)
        empty_status(status);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Testany)
int PMPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    WEFT_API_RETURN(weft_testany_body(count, reqs, index, flag, status));
}

WEFT_PROFILED(MPI_Testsome)
int PMPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
                  MPI_Status statuses[])
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Testsome"); rc != MPI_SUCCESS)
        return rc;
    weft_progress();
    bool any_active = false, error = false;
    *outcount = 0;
    for (int i = 0; i < incount; ++i) {
        if (inactive(reqs[i]))
            continue;
        any_active = true;
        if (!settled(reqs[i]))
            continue;
        MPI_Status tmp, *s = statuses ? &statuses[*outcount] : &tmp;
        indices[*outcount] = i;
        ++*outcount;
        MPI_Request r = reqs[i];
        if (is_grequest(r)) {
            handle_forget(HandleKind::request, r);
            reqs[i] = MPI_REQUEST_NULL;
            s->MPI_ERROR = grequest_finish(r, s);
            error |= s->MPI_ERROR != MPI_SUCCESS;
            continue;
        }
        if (!r->complete) { // stopped by a failure: reported, left pending
            to_status(stopped_status(), s);
            error = true;
            continue;
        }
        weft_msg_status_t st = r->status;
        to_status(st, s);
        if (r->persistent)
            r->active = false;
        else {
            handle_forget(HandleKind::request, r);
            r->pml_free(r);
            reqs[i] = MPI_REQUEST_NULL;
        }
        error |= st.error != WEFT_SUCCESS && !st.cancelled;
    }
    if (!any_active)
        *outcount = MPI_UNDEFINED;
    return error ? raise(nullptr, MPI_ERR_IN_STATUS, "MPI_Testsome") : MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Waitsome)
int PMPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
                  MPI_Status statuses[])
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Waitsome"); rc != MPI_SUCCESS)
        return rc;
    bool any_active = false;
    for (int i = 0; i < incount; ++i)
        any_active |= !inactive(reqs[i]);
    if (!any_active) {
        *outcount = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    weft::rt::wait_until([&] {
        for (int i = 0; i < incount; ++i)
            if (!inactive(reqs[i]) && settled(reqs[i]))
                return true;
        return false;
    });
    return PMPI_Testsome(incount, reqs, outcount, indices, statuses);
}

WEFT_PROFILED(MPI_Cancel)
int PMPI_Cancel(MPI_Request *req)
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Cancel"); rc != MPI_SUCCESS)
        return rc;
    if (!req || !*req)
        return raise(nullptr, MPI_ERR_REQUEST, "MPI_Cancel", "null request");
    if (is_grequest(*req)) {
        const int rc = grequest_cancel(*req);
        return rc == MPI_SUCCESS ? MPI_SUCCESS
                                 : raise(nullptr, rc, "MPI_Cancel", "cancel_fn failed");
    }
    // Reported complete by MPI_Request_get_status: too late (the user has its status).
    if ((*req)->pml_cancel && !((*req)->complete && (*req)->reported))
        (*req)->pml_cancel(*req);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Test_cancelled)
int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    WEFT_API_GUARD;
    *flag = status ? status->_cancelled : 0;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Request_free)
int PMPI_Request_free(MPI_Request *req)
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Request_free"); rc != MPI_SUCCESS)
        return rc;
    if (!req || !*req)
        return raise(nullptr, MPI_ERR_REQUEST, "MPI_Request_free", "null request");
    MPI_Request r = *req;
    handle_forget(HandleKind::request, r);
    *req = MPI_REQUEST_NULL;
    if (is_grequest(r)) {
        const int rc = grequest_free(r);
        return rc == MPI_SUCCESS ? MPI_SUCCESS
                                 : raise(nullptr, rc, "MPI_Request_free", "free_fn failed");
    }
    r->pml_free(r);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Start)
int PMPI_Start(MPI_Request *req)
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Start"); rc != MPI_SUCCESS)
        return rc;
    if (!req || !*req || !(*req)->persistent)
        return raise(nullptr, MPI_ERR_REQUEST, "MPI_Start", "not a persistent request");
    if ((*req)->active)
        return raise((*req)->comm, MPI_ERR_REQUEST, "MPI_Start", "the request is already active");
    (*req)->reported = false;
    weft_status_t rc = (*req)->pml_start(*req);
    return rc == WEFT_SUCCESS ? MPI_SUCCESS : raise_status((*req)->comm, rc, "MPI_Start");
}

WEFT_PROFILED(MPI_Startall)
int PMPI_Startall(int count, MPI_Request reqs[])
{
    WEFT_API_GUARD;
    for (int i = 0; i < count; ++i)
        if (int rc = PMPI_Start(&reqs[i]); rc != MPI_SUCCESS)
            return rc;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Get_count)
int PMPI_Get_count(const MPI_Status *status, MPI_Datatype type, int *count)
{
    WEFT_API_GUARD;
    if (!live_datatype(type))
        return raise(nullptr, MPI_ERR_TYPE, "MPI_Get_count", "invalid datatype");
    if (type->size == 0) {
        *count = 0;
        return MPI_SUCCESS;
    }
    *count = status->_ucount % type->size ? MPI_UNDEFINED : int(status->_ucount / type->size);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Get_elements)
int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype type, int *count)
{
    WEFT_API_GUARD;
    if (!live_datatype(type))
        return raise(nullptr, MPI_ERR_TYPE, "MPI_Get_elements", "invalid datatype");
    if (!status || !count)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Get_elements", "status or count is NULL");
    // Basic elements received, whole or not: MPI_UNDEFINED when the data ends inside one.
    const long long n = weft::dt::elements_in(layout_of(type), status->_ucount);
    *count = n < 0 || n > INT_MAX ? MPI_UNDEFINED : int(n);
    return MPI_SUCCESS;
}

} // extern "C"
