// Point-to-point: the send modes, receives, probes, sendrecv, persistent
// requests, and the buffer for buffered sends.
#include "mpi_internal.h"

#include <algorithm>
#include <climits>

#include "runtime.h"

#include <mpi-ext.h>

#include <cstring>
#include <list>

namespace weft::mpi {

namespace {

enum class Dir { send, recv };

// Report the first bad argument of a point-to-point call (the slow half of check).
[[gnu::cold]] [[gnu::noinline]] int report_bad(const char *fn, const void *buf, int count,
                                               MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                                               Dir dir)
{
    if (int rc = check_state(fn); rc != MPI_SUCCESS)
        return rc;
    if (!valid_comm(comm))
        return raise(nullptr, MPI_ERR_COMM, fn, "invalid communicator");
    if (weft_comm_is_revoked(comm))
        return raise_revoked(comm, fn);
    if (count < 0)
        return raise(comm, MPI_ERR_COUNT, fn, "count " + std::to_string(count) + " is negative");
    if (!valid_datatype(type))
        return raise(comm, MPI_ERR_TYPE, fn, datatype_problem(type));
    const bool rank_ok = (peer >= 0 && peer < comm->peer_size()) || peer == MPI_PROC_NULL ||
                         (dir == Dir::recv && peer == MPI_ANY_SOURCE);
    if (!rank_ok)
        return raise(comm, MPI_ERR_RANK, fn,
                     "rank " + std::to_string(peer) + " is not in 0.." +
                         std::to_string(comm->peer_size() - 1));
    const bool tag_ok = (tag >= 0 && tag <= INT32_MAX) || (dir == Dir::recv && tag == MPI_ANY_TAG);
    if (!tag_ok)
        return raise(comm, MPI_ERR_TAG, fn, "tag " + std::to_string(tag) + " is not valid");
    if (!buf && count > 0 && type->size > 0)
        return raise(comm, MPI_ERR_BUFFER, fn, "buffer is NULL");
    return MPI_SUCCESS;
}

// Argument checks every point-to-point call shares; returns MPI_SUCCESS or
// the error as raised on comm. The common case is a few compares inline.
inline int check(const char *fn, const void *buf, int count, MPI_Datatype type, int peer, int tag,
                 MPI_Comm comm, Dir dir)
{
    const bool ok =
        g_running && valid_comm(comm) && !weft_comm_is_revoked(comm) && count >= 0 &&
        valid_datatype(type) &&
        ((peer >= 0 && peer < comm->peer_size()) ||
         (peer < 0 && (peer == MPI_PROC_NULL || (dir == Dir::recv && peer == MPI_ANY_SOURCE)))) &&
        (tag >= 0 || (dir == Dir::recv && tag == MPI_ANY_TAG)) && (buf || count == 0);
    return ok ? MPI_SUCCESS : report_bad(fn, buf, count, type, peer, tag, comm, dir);
}

int result(weft_status_t rc, MPI_Comm comm, const char *fn)
{
    return rc == WEFT_SUCCESS ? MPI_SUCCESS : raise_status(comm, rc, fn);
}

// ---- fault tolerance (mpi_ft.cc): receives and probes that a failure stops
// Why waiting for a message from src on comm is pointless now: comm was revoked
// (MPIX_ERR_REVOKED), its source failed (MPIX_ERR_PROC_FAILED), or src is MPI_ANY_SOURCE and a
// member's failure is not acknowledged (MPIX_ERR_PROC_FAILED_PENDING). MPI_SUCCESS otherwise.
int ft_stop(MPI_Comm comm, int src)
{
    if (weft_comm_is_revoked(comm))
        return MPIX_ERR_REVOKED;
    if (src == MPI_ANY_SOURCE)
        return any_source_blocked(comm) ? MPIX_ERR_PROC_FAILED_PENDING : MPI_SUCCESS;
    return weft_runtime_proc_failed(weft_comm_peer_world_rank(comm, src)) ? MPIX_ERR_PROC_FAILED
                                                                          : MPI_SUCCESS;
}

int raise_stop(MPI_Comm comm, int why, bool blocking, const char *fn)
{
    if (why == MPIX_ERR_REVOKED)
        return raise_revoked(comm, fn);
    // A blocking call from MPI_ANY_SOURCE reports the failure itself (ULFM).
    if (blocking && why == MPIX_ERR_PROC_FAILED_PENDING)
        why = MPIX_ERR_PROC_FAILED;
    return raise(comm, why, fn,
                 why == MPIX_ERR_PROC_FAILED_PENDING || blocking
                     ? "a member of the communicator failed; MPI_ANY_SOURCE waits until the "
                       "failure is acknowledged (MPIX_Comm_failure_ack)"
                     : "the source process failed");
}

// MPI_Recv from MPI_ANY_SOURCE with fault tolerance: posted, and cancelled if a failure
// stops it before a message matched.
int recv_any_ft(void *buf, int count, MPI_Datatype type, int tag, MPI_Comm comm, MPI_Status *status)
{
    weft_progress(); // the failures learnt while the program computed
    if (any_source_blocked(comm))
        return raise_stop(comm, MPIX_ERR_PROC_FAILED_PENDING, true, "MPI_Recv");
    weft_request_t *r = nullptr;
    if (weft_status_t rc =
            pml()->pml_irecv(pml(), buf, size_t(count), type, MPI_ANY_SOURCE, tag, comm, &r);
        rc != WEFT_SUCCESS)
        return result(rc, comm, "MPI_Recv");
    weft::rt::wait_until([&] { return settled(r); });
    if (!r->complete) {
        if (r->pml_cancel)
            r->pml_cancel(r);
        weft::rt::wait_until([&] { return r->complete; });
    }
    const weft_msg_status_t st = r->status;
    r->pml_free(r);
    if (st.cancelled)
        return raise_stop(comm, MPIX_ERR_PROC_FAILED_PENDING, true, "MPI_Recv");
    to_status(st, status);
    return result(st.error, comm, "MPI_Recv");
}

// A probe (matched probe: message not NULL) that a revoke or a failure may stop: flag says
// whether a message matched; blocking waits for one, or for the revoke or failure.
int probe_ft(int src, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status,
             bool blocking, const char *fn)
{
    weft_msg_status_t st{};
    weft_status_t rc = WEFT_SUCCESS;
    int matched = 0, why = MPI_SUCCESS;
    auto once = [&] {
        rc = message ? pml()->pml_improbe(pml(), src, tag, comm, &matched, message, &st)
                     : pml()->pml_iprobe(pml(), src, tag, comm, &matched, &st);
        if (rc != WEFT_SUCCESS || matched)
            return true;
        why = ft_stop(comm, src);
        return why != MPI_SUCCESS || !blocking;
    };
    if (blocking)
        weft::rt::wait_until(once);
    else
        once();
    if (flag)
        *flag = matched;
    if (rc != WEFT_SUCCESS)
        return result(rc, comm, fn);
    if (matched) {
        to_status(st, status);
        return MPI_SUCCESS;
    }
    return why != MPI_SUCCESS ? raise_stop(comm, why, blocking, fn) : MPI_SUCCESS;
}

// ---- the attached buffer (MPI_Buffer_attach) for buffered sends
struct BsendRequest;
struct Block {
    size_t offset;
    size_t len;
    weft_request *req;           // the internal standard send from this block
    BsendRequest *user{nullptr}; // MPI_Ibsend's request while the user holds it
};
char *bsend_buf = nullptr;
size_t bsend_size = 0;
std::list<Block> blocks; // by offset

// The request MPI_Ibsend returns: complete at once (the message is in the attached buffer).
// MPI_Cancel asks the internal send to take its message back; the request is then incomplete
// until the receiver has answered. The internal send stays while the user holds this (so that
// it can still be cancelled); its block is given back once the send is complete (or the
// buffer is detached), and from then on this request frees the internal send itself.
struct BsendRequest : weft_request {
    weft_request *inner = nullptr;
    std::list<Block>::iterator block; // while !owns_inner
    bool owns_inner = false;
};
std::vector<BsendRequest *> bsend_cancelling; // asked, not answered yet

void reap_blocks()
{
    for (auto it = blocks.begin(); it != blocks.end();) {
        if (it->req && it->req->complete) {
            // The message left the buffer: its space is free again. An MPI_Ibsend request
            // the user still holds keeps the internal send (it may still be cancelled).
            if (it->user) {
                it->user->owns_inner = true;
                it->user->block = {};
            } else {
                it->req->pml_free(it->req);
            }
            it = blocks.erase(it);
        } else {
            ++it;
        }
    }
}

// First fit in the attached buffer.
char *bsend_alloc(size_t len, std::list<Block>::iterator &where)
{
    reap_blocks();
    size_t at = 0;
    for (auto it = blocks.begin(); it != blocks.end(); ++it) {
        if (it->offset - at >= len) {
            where = blocks.insert(it, Block{at, len, nullptr});
            return bsend_buf + at;
        }
        at = it->offset + it->len;
    }
    if (bsend_size - at >= len) {
        where = blocks.insert(blocks.end(), Block{at, len, nullptr});
        return bsend_buf + at;
    }
    return nullptr;
}

// A buffered send: copy into the attached buffer and send from there; the
// caller's request (if any) is complete at once. *block: the block used.
int bsend(const void *buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm,
          const char *fn, std::list<Block>::iterator *block = nullptr)
{
    const size_t bytes = size_t(count) * type->size;
    std::list<Block>::iterator where;
    char *copy = bsend_alloc(bytes + MPI_BSEND_OVERHEAD, where);
    if (!copy)
        return raise(comm, MPI_ERR_BUFFER, fn,
                     "the attached buffer has no room for " + std::to_string(bytes) +
                         " bytes (attach a larger one with MPI_Buffer_attach)");
    weft::dt::pack(layout_of(type), buf, size_t(count), 0, copy, bytes); // packed, any layout
    weft_request_t *req;
    weft_status_t rc =
        pml()->pml_isend(pml(), copy, bytes, MPI_BYTE, dst, tag, WEFT_SEND_BUFFERED, comm, &req);
    if (rc != WEFT_SUCCESS) {
        blocks.erase(where);
        return raise_status(comm, rc, fn);
    }
    where->req = req;
    if (block)
        *block = where;
    return MPI_SUCCESS;
}

// Whether the receiver has answered the cancel of a buffered send, and how.
int bsend_progress()
{
    int n = 0;
    for (size_t i = 0; i < bsend_cancelling.size();) {
        BsendRequest *w = bsend_cancelling[i];
        const weft_request *in = w->inner;
        if (in->cancelled && !in->status.cancelled) {
            ++i; // still asking
            continue;
        }
        w->status.cancelled = in->status.cancelled;
        w->complete = true;
        bsend_cancelling.erase(bsend_cancelling.begin() + std::ptrdiff_t(i));
        ++n;
    }
    return n;
}

weft_status_t bsend_request_cancel(weft_request *r)
{
    auto *w = static_cast<BsendRequest *>(r);
    weft_request *in = w->inner;
    if (!w->complete || w->status.cancelled || !in->pml_cancel)
        return WEFT_SUCCESS;
    in->pml_cancel(in);
    if (!in->cancelled)
        return WEFT_SUCCESS; // refused at once
    if (in->status.cancelled) {
        w->status.cancelled = 1; // answered already
        return WEFT_SUCCESS;
    }
    if (bsend_cancelling.empty())
        weft_progress_register(bsend_progress);
    w->complete = false;
    bsend_cancelling.push_back(w);
    return WEFT_SUCCESS;
}

void bsend_request_free(weft_request *r)
{
    auto *w = static_cast<BsendRequest *>(r);
    std::erase(bsend_cancelling, w);
    if (w->owns_inner)
        w->inner->pml_free(w->inner); // released now, or by its owner when it completes
    else
        w->block->user = nullptr; // reaped with its block
    delete w;
}

MPI_Request bsend_request(MPI_Comm comm, int dst, int tag, std::list<Block>::iterator block)
{
    auto *w = new BsendRequest;
    weft_request_init(w, WEFT_REQUEST_GENERALIZED, comm, dst, tag);
    w->complete = true;
    w->pml_free = bsend_request_free;
    w->pml_cancel = bsend_request_cancel;
    w->inner = block->req;
    w->block = block;
    block->user = w;
    return w;
}

// A request that is already complete (buffered sends).
struct DoneRequest : weft_request {};
void free_done(weft_request *r) { delete static_cast<DoneRequest *>(r); }

MPI_Request done_request(MPI_Comm comm)
{
    auto *r = new DoneRequest;
    weft_request_init(r, WEFT_REQUEST_GENERALIZED, comm, WEFT_PROC_NULL, 0);
    r->complete = true;
    r->pml_free = free_done;
    return r;
}

// The status of an operation on MPI_PROC_NULL: it completes at once.
void proc_null_status(MPI_Status *status)
{
    weft_msg_status_t st{};
    st.source = MPI_PROC_NULL;
    st.tag = MPI_ANY_TAG;
    to_status(st, status);
}

// The four send modes. Buffered sends copy into the attached buffer and
// then go as standard sends; the PML sees the other three.
enum class Mode { standard, buffered, synchronous, ready };

weft_send_mode_t mode_of(Mode m)
{
    return m == Mode::synchronous ? WEFT_SEND_SYNCHRONOUS
           : m == Mode::ready     ? WEFT_SEND_READY
                                  : WEFT_SEND_STANDARD;
}

int isend_mode(const void *buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm,
               MPI_Request *req, Mode mode, const char *fn)
{
    if (int rc = check(fn, buf, count, type, dst, tag, comm, Dir::send); rc != MPI_SUCCESS)
        return rc;
    if (mode == Mode::buffered && dst != MPI_PROC_NULL) {
        std::list<Block>::iterator block;
        if (int rc = bsend(buf, count, type, dst, tag, comm, fn, &block); rc != MPI_SUCCESS)
            return rc;
        *req = bsend_request(comm, dst, tag, block);
        return MPI_SUCCESS;
    }
    return result(
        pml()->pml_isend(pml(), buf, size_t(count), type, dst, tag, mode_of(mode), comm, req), comm,
        fn);
}

int send_mode(const void *buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm,
              Mode mode, const char *fn)
{
    if (int rc = check(fn, buf, count, type, dst, tag, comm, Dir::send); rc != MPI_SUCCESS)
        return rc;
    if (mode == Mode::buffered && dst != MPI_PROC_NULL)
        return bsend(buf, count, type, dst, tag, comm, fn);
    return result(pml()->pml_send(pml(), buf, size_t(count), type, dst, tag, mode_of(mode), comm),
                  comm, fn);
}

int send_init_mode(const void *buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm,
                   MPI_Request *req, Mode mode, const char *fn)
{
    if (int rc = check(fn, buf, count, type, dst, tag, comm, Dir::send); rc != MPI_SUCCESS)
        return rc;
    // Buffered persistent sends use the standard protocol from the user's
    // buffer: the buffer is the user's until the request completes anyway.
    return result(
        pml()->pml_isend_init(pml(), buf, size_t(count), type, dst, tag, mode_of(mode), comm, req),
        comm, fn);
}

} // namespace

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

WEFT_PROFILED(MPI_Send)
int PMPI_Send(const void *buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm)
{
    WEFT_API_RETURN(send_mode(buf, count, type, dst, tag, comm, Mode::standard, "MPI_Send"));
}
WEFT_PROFILED(MPI_Bsend)
int PMPI_Bsend(const void *buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm)
{
    WEFT_API_RETURN(send_mode(buf, count, type, dst, tag, comm, Mode::buffered, "MPI_Bsend"));
}
WEFT_PROFILED(MPI_Ssend)
int PMPI_Ssend(const void *buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm)
{
    WEFT_API_RETURN(send_mode(buf, count, type, dst, tag, comm, Mode::synchronous, "MPI_Ssend"));
}
WEFT_PROFILED(MPI_Rsend)
int PMPI_Rsend(const void *buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm)
{
    WEFT_API_RETURN(send_mode(buf, count, type, dst, tag, comm, Mode::ready, "MPI_Rsend"));
}
WEFT_PROFILED(MPI_Isend)
int PMPI_Isend(const void *buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    WEFT_API_RETURN(isend_mode(buf, count, type, dst, tag, comm, req, Mode::standard, "MPI_Isend"));
}
WEFT_PROFILED(MPI_Ibsend)
int PMPI_Ibsend(const void *buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm,
                MPI_Request *req)
{
    WEFT_API_RETURN(
        isend_mode(buf, count, type, dst, tag, comm, req, Mode::buffered, "MPI_Ibsend"));
}
WEFT_PROFILED(MPI_Issend)
int PMPI_Issend(const void *buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm,
                MPI_Request *req)
{
    WEFT_API_RETURN(
        isend_mode(buf, count, type, dst, tag, comm, req, Mode::synchronous, "MPI_Issend"));
}
WEFT_PROFILED(MPI_Irsend)
int PMPI_Irsend(const void *buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm,
                MPI_Request *req)
{
    WEFT_API_RETURN(isend_mode(buf, count, type, dst, tag, comm, req, Mode::ready, "MPI_Irsend"));
}
WEFT_PROFILED(MPI_Send_init)
int PMPI_Send_init(const void *buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm,
                   MPI_Request *req)
{
    WEFT_API_RETURN(
        send_init_mode(buf, count, type, dst, tag, comm, req, Mode::standard, "MPI_Send_init"));
}
WEFT_PROFILED(MPI_Bsend_init)
int PMPI_Bsend_init(const void *buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm,
                    MPI_Request *req)
{
    WEFT_API_RETURN(
        send_init_mode(buf, count, type, dst, tag, comm, req, Mode::buffered, "MPI_Bsend_init"));
}
WEFT_PROFILED(MPI_Ssend_init)
int PMPI_Ssend_init(const void *buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm,
                    MPI_Request *req)
{
    WEFT_API_RETURN(
        send_init_mode(buf, count, type, dst, tag, comm, req, Mode::synchronous, "MPI_Ssend_init"));
}
WEFT_PROFILED(MPI_Rsend_init)
int PMPI_Rsend_init(const void *buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm,
                    MPI_Request *req)
{
    WEFT_API_RETURN(
        send_init_mode(buf, count, type, dst, tag, comm, req, Mode::ready, "MPI_Rsend_init"));
}

// PMPI_Recv's body (WEFT_API_RETURN keeps its call a tail call).
static int weft_recv_body(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
                          MPI_Status *status)
{
    if (int rc = check("MPI_Recv", buf, count, type, src, tag, comm, Dir::recv); rc != MPI_SUCCESS)
        return rc;
    if (src == MPI_ANY_SOURCE && ft_enabled()) [[unlikely]]
        return recv_any_ft(buf, count, type, tag, comm, status);
    weft_msg_status_t st{};
    weft_status_t rc = pml()->pml_recv(pml(), buf, size_t(count), type, src, tag, comm, &st);
    to_status(st, status);
    return result(rc, comm, "MPI_Recv");
}

WEFT_PROFILED(MPI_Recv)
int PMPI_Recv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
              MPI_Status *status)
{
    WEFT_API_RETURN(weft_recv_body(buf, count, type, src, tag, comm, status));
}

// PMPI_Irecv's body (WEFT_API_RETURN keeps its call a tail call).
static int weft_irecv_body(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
                           MPI_Request *req)
{
    if (int rc = check("MPI_Irecv", buf, count, type, src, tag, comm, Dir::recv); rc != MPI_SUCCESS)
        return rc;
    return result(pml()->pml_irecv(pml(), buf, size_t(count), type, src, tag, comm, req), comm,
                  "MPI_Irecv");
}

WEFT_PROFILED(MPI_Irecv)
int PMPI_Irecv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    WEFT_API_RETURN(weft_irecv_body(buf, count, type, src, tag, comm, req));
}

WEFT_PROFILED(MPI_Recv_init)
int PMPI_Recv_init(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
                   MPI_Request *req)
{
    WEFT_API_GUARD;
    if (int rc = check("MPI_Recv_init", buf, count, type, src, tag, comm, Dir::recv);
        rc != MPI_SUCCESS)
        return rc;
    return result(pml()->pml_irecv_init(pml(), buf, size_t(count), type, src, tag, comm, req), comm,
                  "MPI_Recv_init");
}

// PMPI_Sendrecv's body (WEFT_API_RETURN keeps its call a tail call).
static int weft_sendrecv_body(const void *sbuf, int scount, MPI_Datatype stype, int dst, int stag,
                              void *rbuf, int rcount, MPI_Datatype rtype, int src, int rtag,
                              MPI_Comm comm, MPI_Status *status)
{
    MPI_Request reqs[2];
    if (int rc = PMPI_Irecv(rbuf, rcount, rtype, src, rtag, comm, &reqs[0]); rc != MPI_SUCCESS)
        return rc;
    if (int rc = PMPI_Isend(sbuf, scount, stype, dst, stag, comm, &reqs[1]); rc != MPI_SUCCESS)
        return rc;
    MPI_Status st[2];
    int rc = PMPI_Waitall(2, reqs, st);
    if (status)
        *status = st[0];
    return rc == MPI_ERR_IN_STATUS
               ? st[0].MPI_ERROR != MPI_SUCCESS ? st[0].MPI_ERROR : st[1].MPI_ERROR
               : rc;
}

WEFT_PROFILED(MPI_Sendrecv)
int PMPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dst, int stag, void *rbuf,
                  int rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm,
                  MPI_Status *status)
{
    WEFT_API_RETURN(weft_sendrecv_body(sbuf, scount, stype, dst, stag, rbuf, rcount, rtype, src,
                                       rtag, comm, status));
}

WEFT_PROFILED(MPI_Sendrecv_replace)
int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dst, int stag, int src,
                          int rtag, MPI_Comm comm, MPI_Status *status)
{
    WEFT_API_GUARD;
    if (int rc = check("MPI_Sendrecv_replace", buf, count, type, dst, stag, comm, Dir::send);
        rc != MPI_SUCCESS)
        return rc;
    // The outgoing data, packed (any layout), sent as bytes.
    const size_t bytes = size_t(count) * type->size;
    if (bytes > size_t(INT_MAX))
        return raise(comm, MPI_ERR_COUNT, "MPI_Sendrecv_replace", "message too large");
    std::vector<char> tmp(bytes);
    weft::dt::pack(layout_of(type), buf, size_t(count), 0, tmp.data(), bytes);
    return PMPI_Sendrecv(tmp.data(), int(bytes), MPI_BYTE, dst, stag, buf, count, type, src, rtag,
                         comm, status);
}

// PMPI_Iprobe's body (WEFT_API_RETURN keeps its call a tail call).
static int weft_iprobe_body(int src, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    if (int rc = check("MPI_Iprobe", nullptr, 0, MPI_BYTE, src, tag, comm, Dir::recv);
        rc != MPI_SUCCESS)
        return rc;
    if (src == MPI_PROC_NULL) {
        *flag = 1;
        proc_null_status(status);
        return MPI_SUCCESS;
    }
    if (ft_enabled())
        return probe_ft(src, tag, comm, flag, nullptr, status, false, "MPI_Iprobe");
    weft_msg_status_t st{};
    weft_status_t rc = pml()->pml_iprobe(pml(), src, tag, comm, flag, &st);
    if (*flag)
        to_status(st, status);
    return result(rc, comm, "MPI_Iprobe");
}

WEFT_PROFILED(MPI_Iprobe)
int PMPI_Iprobe(int src, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    WEFT_API_RETURN(weft_iprobe_body(src, tag, comm, flag, status));
}

WEFT_PROFILED(MPI_Probe)
int PMPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status *status)
{
    WEFT_API_GUARD;
    if (int rc = check("MPI_Probe", nullptr, 0, MPI_BYTE, src, tag, comm, Dir::recv);
        rc != MPI_SUCCESS)
        return rc;
    if (src == MPI_PROC_NULL) {
        proc_null_status(status);
        return MPI_SUCCESS;
    }
    // Stopped by a revoke too (fault tolerance or not), and by a failure.
    return probe_ft(src, tag, comm, nullptr, nullptr, status, true, "MPI_Probe");
}

WEFT_PROFILED(MPI_Improbe)
int PMPI_Improbe(int src, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                 MPI_Status *status)
{
    WEFT_API_GUARD;
    if (int rc = check("MPI_Improbe", nullptr, 0, MPI_BYTE, src, tag, comm, Dir::recv);
        rc != MPI_SUCCESS)
        return rc;
    if (src == MPI_PROC_NULL) {
        *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        proc_null_status(status);
        return MPI_SUCCESS;
    }
    if (ft_enabled())
        return probe_ft(src, tag, comm, flag, message, status, false, "MPI_Improbe");
    weft_msg_status_t st{};
    weft_status_t rc = pml()->pml_improbe(pml(), src, tag, comm, flag, message, &st);
    if (*flag)
        to_status(st, status);
    return result(rc, comm, "MPI_Improbe");
}

WEFT_PROFILED(MPI_Mprobe)
int PMPI_Mprobe(int src, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    WEFT_API_GUARD;
    if (int rc = check("MPI_Mprobe", nullptr, 0, MPI_BYTE, src, tag, comm, Dir::recv);
        rc != MPI_SUCCESS)
        return rc;
    if (src == MPI_PROC_NULL) {
        *message = MPI_MESSAGE_NO_PROC;
        proc_null_status(status);
        return MPI_SUCCESS;
    }
    // Stopped by a revoke too (fault tolerance or not), and by a failure.
    return probe_ft(src, tag, comm, nullptr, message, status, true, "MPI_Mprobe");
}

WEFT_PROFILED(MPI_Mrecv)
int PMPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status)
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Mrecv"); rc != MPI_SUCCESS)
        return rc;
    if (!message || *message == MPI_MESSAGE_NULL)
        return raise(nullptr, MPI_ERR_REQUEST, "MPI_Mrecv", "invalid message handle");
    if (*message == MPI_MESSAGE_NO_PROC) {
        proc_null_status(status);
        *message = MPI_MESSAGE_NULL;
        return MPI_SUCCESS;
    }
    weft_msg_status_t st{};
    MPI_Comm comm = (*message)->comm;
    handle_forget(HandleKind::message, *message);
    weft_status_t rc = pml()->pml_mrecv(pml(), buf, size_t(count), type, message, &st);
    to_status(st, status);
    *message = MPI_MESSAGE_NULL;
    return result(rc, comm, "MPI_Mrecv");
}

WEFT_PROFILED(MPI_Imrecv)
int PMPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *req)
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Imrecv"); rc != MPI_SUCCESS)
        return rc;
    if (!message || *message == MPI_MESSAGE_NULL)
        return raise(nullptr, MPI_ERR_REQUEST, "MPI_Imrecv", "invalid message handle");
    if (*message == MPI_MESSAGE_NO_PROC) {
        *req = done_request(MPI_COMM_SELF);
        (*req)->status.source = MPI_PROC_NULL;
        (*req)->status.tag = MPI_ANY_TAG;
        *message = MPI_MESSAGE_NULL;
        return MPI_SUCCESS;
    }
    MPI_Comm comm = (*message)->comm;
    handle_forget(HandleKind::message, *message);
    weft_status_t rc = pml()->pml_imrecv(pml(), buf, size_t(count), type, message, req);
    *message = MPI_MESSAGE_NULL;
    return result(rc, comm, "MPI_Imrecv");
}

WEFT_PROFILED(MPI_Buffer_attach)
int PMPI_Buffer_attach(void *buffer, int size)
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Buffer_attach"); rc != MPI_SUCCESS)
        return rc;
    if (bsend_buf)
        return raise(nullptr, MPI_ERR_BUFFER, "MPI_Buffer_attach", "a buffer is already attached");
    if (size < 0 || (!buffer && size > 0))
        return raise(nullptr, MPI_ERR_BUFFER, "MPI_Buffer_attach", "invalid buffer or size");
    bsend_buf = static_cast<char *>(buffer);
    bsend_size = size_t(size);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Buffer_detach)
int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Buffer_detach"); rc != MPI_SUCCESS)
        return rc;
    // Blocks until every buffered send has left the buffer.
    weft::rt::wait_until([] {
        reap_blocks();
        return blocks.empty();
    });
    *static_cast<void **>(buffer_addr) = bsend_buf;
    *size = int(bsend_size);
    bsend_buf = nullptr;
    bsend_size = 0;
    return MPI_SUCCESS;
}

} // extern "C"
