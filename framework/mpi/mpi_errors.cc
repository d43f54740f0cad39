// Error classes, error handlers, and the one place where an MPI function's
// error reaches its handler (raise).
#include "mpi_internal.h"
#include "runtime.h"

#include <mpi-ext.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace {

struct ErrorClass {
    int code;
    const char *name;
    const char *text;
};

constexpr ErrorClass error_classes[] = {
    {MPI_SUCCESS, "MPI_SUCCESS", "no error"},
    {MPI_ERR_BUFFER, "MPI_ERR_BUFFER", "invalid buffer pointer"},
    {MPI_ERR_COUNT, "MPI_ERR_COUNT", "invalid count argument"},
    {MPI_ERR_TYPE, "MPI_ERR_TYPE", "invalid datatype"},
    {MPI_ERR_TAG, "MPI_ERR_TAG", "invalid tag"},
    {MPI_ERR_COMM, "MPI_ERR_COMM", "invalid communicator"},
    {MPI_ERR_RANK, "MPI_ERR_RANK", "invalid rank"},
    {MPI_ERR_REQUEST, "MPI_ERR_REQUEST", "invalid request"},
    {MPI_ERR_ROOT, "MPI_ERR_ROOT", "invalid root"},
    {MPI_ERR_GROUP, "MPI_ERR_GROUP", "invalid group"},
    {MPI_ERR_OP, "MPI_ERR_OP", "invalid reduction operation"},
    {MPI_ERR_TOPOLOGY, "MPI_ERR_TOPOLOGY", "invalid topology"},
    {MPI_ERR_DIMS, "MPI_ERR_DIMS", "invalid dimension argument"},
    {MPI_ERR_ARG, "MPI_ERR_ARG", "invalid argument"},
    {MPI_ERR_UNKNOWN, "MPI_ERR_UNKNOWN", "unknown error"},
    {MPI_ERR_TRUNCATE, "MPI_ERR_TRUNCATE", "message truncated"},
    {MPI_ERR_OTHER, "MPI_ERR_OTHER", "known error not in this list"},
    {MPI_ERR_INTERN, "MPI_ERR_INTERN", "internal error"},
    {MPI_ERR_IN_STATUS, "MPI_ERR_IN_STATUS", "error code is in status"},
    {MPI_ERR_PENDING, "MPI_ERR_PENDING", "pending request"},
    {MPI_ERR_ACCESS, "MPI_ERR_ACCESS", "permission denied"},
    {MPI_ERR_AMODE, "MPI_ERR_AMODE", "invalid file access mode"},
    {MPI_ERR_ASSERT, "MPI_ERR_ASSERT", "invalid assert argument"},
    {MPI_ERR_BAD_FILE, "MPI_ERR_BAD_FILE", "invalid file name"},
    {MPI_ERR_BASE, "MPI_ERR_BASE", "invalid base address"},
    {MPI_ERR_CONVERSION, "MPI_ERR_CONVERSION", "data conversion failed"},
    {MPI_ERR_DISP, "MPI_ERR_DISP", "invalid displacement"},
    {MPI_ERR_DUP_DATAREP, "MPI_ERR_DUP_DATAREP", "data representation already defined"},
    {MPI_ERR_FILE_EXISTS, "MPI_ERR_FILE_EXISTS", "file exists"},
    {MPI_ERR_FILE_IN_USE, "MPI_ERR_FILE_IN_USE", "file in use"},
    {MPI_ERR_FILE, "MPI_ERR_FILE", "invalid file handle"},
    {MPI_ERR_INFO_KEY, "MPI_ERR_INFO_KEY", "info key too long"},
    {MPI_ERR_INFO_NOKEY, "MPI_ERR_INFO_NOKEY", "info key not defined"},
    {MPI_ERR_INFO_VALUE, "MPI_ERR_INFO_VALUE", "info value too long"},
    {MPI_ERR_INFO, "MPI_ERR_INFO", "invalid info object"},
    {MPI_ERR_IO, "MPI_ERR_IO", "I/O error"},
    {MPI_ERR_KEYVAL, "MPI_ERR_KEYVAL", "invalid attribute key"},
    {MPI_ERR_LOCKTYPE, "MPI_ERR_LOCKTYPE", "invalid lock type"},
    {MPI_ERR_NAME, "MPI_ERR_NAME", "service name not published"},
    {MPI_ERR_NO_MEM, "MPI_ERR_NO_MEM", "out of memory"},
    {MPI_ERR_NOT_SAME, "MPI_ERR_NOT_SAME", "arguments differ between processes"},
    {MPI_ERR_NO_SPACE, "MPI_ERR_NO_SPACE", "no space left on device"},
    {MPI_ERR_NO_SUCH_FILE, "MPI_ERR_NO_SUCH_FILE", "no such file"},
    {MPI_ERR_PORT, "MPI_ERR_PORT", "invalid port name"},
    {MPI_ERR_QUOTA, "MPI_ERR_QUOTA", "quota exceeded"},
    {MPI_ERR_READ_ONLY, "MPI_ERR_READ_ONLY", "file is read-only"},
    {MPI_ERR_RMA_CONFLICT, "MPI_ERR_RMA_CONFLICT", "conflicting accesses to a window"},
    {MPI_ERR_RMA_SYNC, "MPI_ERR_RMA_SYNC", "wrong synchronization of RMA calls"},
    {MPI_ERR_SERVICE, "MPI_ERR_SERVICE", "invalid service name"},
    {MPI_ERR_SIZE, "MPI_ERR_SIZE", "invalid size argument"},
    {MPI_ERR_SPAWN, "MPI_ERR_SPAWN", "cannot spawn processes"},
    {MPI_ERR_UNSUPPORTED_DATAREP, "MPI_ERR_UNSUPPORTED_DATAREP", "unsupported data representation"},
    {MPI_ERR_UNSUPPORTED_OPERATION, "MPI_ERR_UNSUPPORTED_OPERATION", "unsupported operation"},
    {MPI_ERR_WIN, "MPI_ERR_WIN", "invalid window"},
    {MPI_ERR_RMA_RANGE, "MPI_ERR_RMA_RANGE", "target memory outside the window"},
    {MPI_ERR_RMA_ATTACH, "MPI_ERR_RMA_ATTACH", "memory cannot be attached to the window"},
    {MPI_ERR_RMA_SHARED, "MPI_ERR_RMA_SHARED", "memory cannot be shared"},
    {MPI_ERR_RMA_FLAVOR, "MPI_ERR_RMA_FLAVOR", "wrong window flavor"},
    {MPI_T_ERR_MEMORY, "MPI_T_ERR_MEMORY", "out of memory (tool interface)"},
    {MPI_T_ERR_NOT_INITIALIZED, "MPI_T_ERR_NOT_INITIALIZED",
     "the tool interface is not initialized (MPI_T_init_thread)"},
    {MPI_T_ERR_CANNOT_INIT, "MPI_T_ERR_CANNOT_INIT", "the tool interface cannot be initialized"},
    {MPI_T_ERR_INVALID_INDEX, "MPI_T_ERR_INVALID_INDEX", "no variable or category has this index"},
    {MPI_T_ERR_INVALID_ITEM, "MPI_T_ERR_INVALID_ITEM", "the enumeration has no such item"},
    {MPI_T_ERR_INVALID_HANDLE, "MPI_T_ERR_INVALID_HANDLE", "invalid tool interface handle"},
    {MPI_T_ERR_OUT_OF_HANDLES, "MPI_T_ERR_OUT_OF_HANDLES", "no more handles can be allocated"},
    {MPI_T_ERR_OUT_OF_SESSIONS, "MPI_T_ERR_OUT_OF_SESSIONS", "no more sessions can be created"},
    {MPI_T_ERR_INVALID_SESSION, "MPI_T_ERR_INVALID_SESSION", "invalid performance session"},
    {MPI_T_ERR_CVAR_SET_NOT_NOW, "MPI_T_ERR_CVAR_SET_NOT_NOW",
     "the control variable cannot be set now"},
    {MPI_T_ERR_CVAR_SET_NEVER, "MPI_T_ERR_CVAR_SET_NEVER",
     "the control variable can never be set (it is information)"},
    {MPI_T_ERR_PVAR_NO_STARTSTOP, "MPI_T_ERR_PVAR_NO_STARTSTOP",
     "the performance variable cannot be started or stopped"},
    {MPI_T_ERR_PVAR_NO_WRITE, "MPI_T_ERR_PVAR_NO_WRITE",
     "the performance variable cannot be written or reset"},
    {MPI_T_ERR_PVAR_NO_ATOMIC, "MPI_T_ERR_PVAR_NO_ATOMIC",
     "the performance variable cannot be read and reset atomically"},
    {MPI_T_ERR_INVALID_NAME, "MPI_T_ERR_INVALID_NAME", "no variable or category has this name"},
    {MPI_T_ERR_INVALID, "MPI_T_ERR_INVALID", "invalid use of the tool interface"},
    {MPIX_ERR_PROC_FAILED, "MPIX_ERR_PROC_FAILED", "a process failed"},
    {MPIX_ERR_PROC_FAILED_PENDING, "MPIX_ERR_PROC_FAILED_PENDING",
     "a process failed; the request is still pending"},
    {MPIX_ERR_REVOKED, "MPIX_ERR_REVOKED", "the communicator was revoked"},
};

const ErrorClass *find_class(int code)
{
    for (const ErrorClass &c : error_classes)
        if (c.code == code)
            return &c;
    return nullptr;
}

// The program's error classes and codes (MPI_Add_error_class, _code, _string), numbered from
// first_user_code in the order they were made: one numbering, as a class is a code too.
constexpr int first_user_code = MPI_ERR_LASTCODE + 1;
static_assert(MPI_ERR_RMA_FLAVOR < first_user_code && MPIX_ERR_PROC_FAILED < first_user_code &&
                  MPIX_ERR_PROC_FAILED_PENDING < first_user_code &&
                  MPIX_ERR_REVOKED < first_user_code,
              "user error codes must not meet the predefined ones");

struct UserCode {
    int errclass; // itself for a class
    std::string text;
};

std::mutex user_mutex;
std::vector<UserCode> user_codes;       // code first_user_code + i
int last_code_value = MPI_ERR_LASTCODE; // the attribute's value (MPI_LASTUSEDCODE)

// A copy of the user code's entry, if code is one.
bool find_user(int code, UserCode *out)
{
    std::lock_guard lock(user_mutex);
    if (code < first_user_code || size_t(code - first_user_code) >= user_codes.size())
        return false;
    *out = user_codes[size_t(code - first_user_code)];
    return true;
}

// A new user code in errclass (a class when errclass is -1).
int add_user_code(int errclass)
{
    std::lock_guard lock(user_mutex);
    const int code = first_user_code + int(user_codes.size());
    user_codes.push_back({errclass < 0 ? code : errclass, ""});
    last_code_value = code;
    return code;
}

// "invalid rank (MPI_ERR_RANK)", the program's string of its own code, or the bare number of an
// unknown code.
std::string describe(int errclass)
{
    if (const ErrorClass *c = find_class(errclass))
        return std::string(c->text) + " (" + c->name + ")";
    if (UserCode u; find_user(errclass, &u))
        return (u.text.empty() ? "user error code" : u.text) + " (" + std::to_string(errclass) +
               (u.errclass == errclass
                    ? ", a user error class)"
                    : ", of user error class " + std::to_string(u.errclass) + ")");
    return "unknown error code " + std::to_string(errclass);
}

std::string comm_label(weft_comm *comm)
{
    if (!comm->name.empty())
        return "communicator " + comm->name;
    return "an unnamed communicator (context id " + std::to_string(comm->cid) + ")";
}

} // namespace

namespace weft::mpi {

void errhandler_retain(weft_errhandler *eh)
{
    if (eh && !eh->predefined)
        ++eh->refs;
}

void errhandler_release(weft_errhandler *eh)
{
    if (eh && !eh->predefined && --eh->refs == 0) {
        handle_forget(HandleKind::errhandler, eh);
        delete eh;
    }
}

int error_class_of(weft_status_t status)
{
    switch (status) {
    case WEFT_SUCCESS:
    case WEFT_IN_PROGRESS: return MPI_SUCCESS;
    case WEFT_ERR_TRUNCATE: return MPI_ERR_TRUNCATE;
    case WEFT_ERR_BAD_PARAM: return MPI_ERR_ARG;
    case WEFT_ERR_OUT_OF_RESOURCE: return MPI_ERR_NO_MEM;
    case WEFT_ERR_PROC_FAILED: return MPIX_ERR_PROC_FAILED;
    case WEFT_ERR_PROC_FAILED_PENDING: return MPIX_ERR_PROC_FAILED_PENDING;
    case WEFT_ERR_REVOKED: return MPIX_ERR_REVOKED;
    case WEFT_ERR_BAD_HEADER: return MPI_ERR_INTERN;
    default: break;
    }
    // Codes appended to a group later keep the meaning of their group.
    if (is_proc_failure(status))
        return MPIX_ERR_PROC_FAILED;
    if (is_revoked(status))
        return MPIX_ERR_REVOKED;
    return is_error(status) ? MPI_ERR_OTHER : MPI_SUCCESS;
}

int raise(weft_comm *comm, int errclass, const char *fn, const std::string &detail)
{
    if (errclass == MPI_SUCCESS)
        return MPI_SUCCESS;
    // Errors not tied to a valid communicator belong to MPI_COMM_WORLD (MPI-3.1 8.3).
    if (!valid_comm(comm))
        comm = MPI_COMM_WORLD;
    weft_errhandler *eh = comm->errhandler ? comm->errhandler : MPI_ERRORS_ARE_FATAL;
    switch (eh->kind) {
    case weft_errhandler::Kind::ret: return errclass;
    case weft_errhandler::Kind::user:
        if (eh->fn) {
            MPI_Comm handle = comm;
            int code = errclass;
            if (!g_api_threads.load(std::memory_order_relaxed)) {
                eh->fn(&handle, &code);
                return errclass;
            }
            // Without the library's lock (MPI_THREAD_MULTIPLE): other threads go on while the
            // handler runs (holding the handler and the communicator, which they may free), and
            // it may jump out of the call.
            auto *fn = eh->fn;
            ++eh->refs;
            comm_retain(comm);
            const unsigned held = weft::rt::api_release();
            fn(&handle, &code);
            weft::rt::api_reacquire(held);
            comm_release(comm);
            errhandler_release(eh);
            return errclass;
        }
        break;
    case weft_errhandler::Kind::fatal: break;
    }
    std::string text = std::string(fn) + ": " + describe(errclass) + " on " + comm_label(comm);
    if (!detail.empty())
        text += ": " + detail;
    std::fprintf(stderr, "weft: MPI error in %s\n", text.c_str());
    std::fflush(stderr);
    if (rt::initialized())
        rt::abort(errclass, text);
    std::exit(errclass);
}

int raise_status(weft_comm *comm, weft_status_t status, const char *fn)
{
    const int errclass = error_class_of(status);
    return raise(comm, errclass, fn, errclass == MPI_ERR_OTHER ? weft_status_string(status) : "");
}

int *last_used_code() { return &last_code_value; }

} // namespace weft::mpi

using weft::mpi::errhandler_release;
using weft::mpi::errhandler_retain;
using weft::mpi::raise;
using weft::mpi::valid_comm;

extern "C" {

// Usable before MPI_Init and after MPI_Finalize (as MPI-4 allows), so no
// state check; an invalid code is reported only while there is a handler.
WEFT_PROFILED(MPI_Error_class)
int PMPI_Error_class(int errorcode, int *errorclass)
{
    WEFT_API_GUARD;
    if (UserCode u; errorclass && find_user(errorcode, &u)) {
        *errorclass = u.errclass;
        return MPI_SUCCESS;
    }
    if (!find_class(errorcode) || !errorclass) {
        if (!weft::mpi::initialized() || weft::mpi::finalized())
            return MPI_ERR_ARG;
        return raise(nullptr, MPI_ERR_ARG, "MPI_Error_class",
                     errorclass ? "no error code " + std::to_string(errorcode)
                                : std::string("errorclass is NULL"));
    }
    *errorclass = errorcode;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Error_string)
int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    WEFT_API_GUARD;
    const ErrorClass *c = find_class(errorcode);
    UserCode u;
    const bool user = !c && find_user(errorcode, &u);
    if ((!c && !user) || !string || !resultlen) {
        if (!weft::mpi::initialized() || weft::mpi::finalized())
            return MPI_ERR_ARG;
        return raise(nullptr, MPI_ERR_ARG, "MPI_Error_string",
                     !c && !user ? "no error code " + std::to_string(errorcode)
                                 : std::string(!string ? "string is NULL" : "resultlen is NULL"));
    }
    // A user code says what MPI_Add_error_string gave it: nothing until then (MPI-3.1 8.5).
    std::string text = user ? u.text : std::string(c->name) + ": " + c->text;
    size_t len = std::min(text.size(), size_t(MPI_MAX_ERROR_STRING - 1));
    std::memcpy(string, text.data(), len);
    string[len] = '\0';
    *resultlen = int(len);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Comm_create_errhandler)
int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *comm_errhandler_fn,
                                MPI_Errhandler *errhandler)
{
    WEFT_API_GUARD;
    if (int rc = weft::mpi::check_state("MPI_Comm_create_errhandler"); rc != MPI_SUCCESS)
        return rc;
    if (!comm_errhandler_fn || !errhandler)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Comm_create_errhandler",
                     !errhandler ? "errhandler is NULL" : "the function is NULL");
    *errhandler =
        new weft_errhandler{.kind = weft_errhandler::Kind::user, .fn = comm_errhandler_fn};
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Comm_set_errhandler)
int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    WEFT_API_GUARD;
    if (int rc = weft::mpi::check_state("MPI_Comm_set_errhandler"); rc != MPI_SUCCESS)
        return rc;
    if (!valid_comm(comm))
        return raise(nullptr, MPI_ERR_COMM, "MPI_Comm_set_errhandler", "invalid communicator");
    if (!errhandler)
        return raise(comm, MPI_ERR_ARG, "MPI_Comm_set_errhandler",
                     "errhandler is MPI_ERRHANDLER_NULL");
    errhandler_retain(errhandler);
    errhandler_release(comm->errhandler);
    comm->errhandler = errhandler;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Comm_get_errhandler)
int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    WEFT_API_GUARD;
    if (int rc = weft::mpi::check_state("MPI_Comm_get_errhandler"); rc != MPI_SUCCESS)
        return rc;
    if (!valid_comm(comm))
        return raise(nullptr, MPI_ERR_COMM, "MPI_Comm_get_errhandler", "invalid communicator");
    if (!errhandler)
        return raise(comm, MPI_ERR_ARG, "MPI_Comm_get_errhandler", "errhandler is NULL");
    weft_errhandler *eh = comm->errhandler ? comm->errhandler : MPI_ERRORS_ARE_FATAL;
    // The caller owns a reference, which it gives back with MPI_Errhandler_free.
    errhandler_retain(eh);
    *errhandler = eh;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Errhandler_free)
int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    WEFT_API_GUARD;
    if (int rc = weft::mpi::check_state("MPI_Errhandler_free"); rc != MPI_SUCCESS)
        return rc;
    if (!errhandler || !*errhandler)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Errhandler_free",
                     !errhandler ? "errhandler is NULL" : "errhandler is MPI_ERRHANDLER_NULL");
    // Communicators using it hold their own references, so it lives on until
    // the last of them lets it go.
    errhandler_release(*errhandler);
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Comm_call_errhandler)
int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    WEFT_API_GUARD;
    if (int rc = weft::mpi::check_state("MPI_Comm_call_errhandler"); rc != MPI_SUCCESS)
        return rc;
    if (!valid_comm(comm))
        return raise(nullptr, MPI_ERR_COMM, "MPI_Comm_call_errhandler", "invalid communicator");
    // MPI_SUCCESS once the handler has run and returned (MPI-3.1 8.3.4).
    raise(comm, errorcode, "MPI_Comm_call_errhandler");
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Add_error_class)
int PMPI_Add_error_class(int *errorclass)
{
    WEFT_API_GUARD;
    if (int rc = weft::mpi::check_state("MPI_Add_error_class"); rc != MPI_SUCCESS)
        return rc;
    if (!errorclass)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Add_error_class", "errorclass is NULL");
    *errorclass = add_user_code(-1);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Add_error_code)
int PMPI_Add_error_code(int errorclass, int *errorcode)
{
    WEFT_API_GUARD;
    if (int rc = weft::mpi::check_state("MPI_Add_error_code"); rc != MPI_SUCCESS)
        return rc;
    if (!errorcode)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Add_error_code", "errorcode is NULL");
    // A class: a predefined one (not MPI_SUCCESS, which is no error), or one the program added.
    UserCode u;
    const bool is_class = (errorclass != MPI_SUCCESS && find_class(errorclass)) ||
                          (find_user(errorclass, &u) && u.errclass == errorclass);
    if (!is_class)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Add_error_code",
                     std::to_string(errorclass) + " is not an error class");
    *errorcode = add_user_code(errorclass);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Add_error_string)
int PMPI_Add_error_string(int errorcode, const char *string)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Add_error_string";
    if (int rc = weft::mpi::check_state(fn); rc != MPI_SUCCESS)
        return rc;
    if (!string)
        return raise(nullptr, MPI_ERR_ARG, fn, "string is NULL");
    // The predefined codes keep their strings (MPI-3.1 8.5).
    if (errorcode <= MPI_ERR_LASTCODE)
        return raise(nullptr, MPI_ERR_ARG, fn,
                     std::to_string(errorcode) + " is a predefined error code");
    const size_t len = std::strlen(string);
    if (len >= MPI_MAX_ERROR_STRING)
        return raise(nullptr, MPI_ERR_ARG, fn,
                     "the string is " + std::to_string(len) +
                         " characters long; MPI_MAX_ERROR_STRING allows " +
                         std::to_string(MPI_MAX_ERROR_STRING - 1));
    {
        std::lock_guard lock(user_mutex);
        if (size_t(errorcode - first_user_code) < user_codes.size()) {
            user_codes[size_t(errorcode - first_user_code)].text = string;
            return MPI_SUCCESS;
        }
    }
    return raise(nullptr, MPI_ERR_ARG, fn, "no error code " + std::to_string(errorcode));
}

} // extern "C"
