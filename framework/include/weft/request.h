/*
 * weft/request.h: the request (MPI_Request) every layer shares, and the message of mprobe.
 *
 * A PML, or a coll component with non-blocking collectives, makes its requests by embedding a
 * weft_request_t at the start of its own struct (C: as the first member; C++: as the base
 * class) and hands framework/mpi a pointer to it. framework/mpi waits on `complete`, reports
 * `status`, and calls the pml_* hooks; the fault-tolerance layer (ulfm-components.md, "Request
 * fields used for Fault Tolerance") reads kind, comm, peer, tag and status.error. So every
 * request carries correct values in these fields from its creation: make it with
 * weft_request_init, then set what differs.
 *
 * Who writes what: the request's maker writes everything at creation; afterwards the module
 * that owns it (the PML, the coll component) sets complete, active, cancelled and status, and
 * framework/mpi sets persistent/active at start, freed at MPI_Request_free, reported, and
 * bsend_block.
 *
 * Thread: as the module that owns the request (weft/module.h): completion may be written from
 * progress ("any"), so `complete` is volatile and written last, after status.
 */
#ifndef WEFT_REQUEST_H
#define WEFT_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <weft/status.h>
#include <weft/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a request does: the FT layer decides from it which requests a failure concerns. */
typedef enum weft_request_kind {
    WEFT_REQUEST_NULL = 0,        /* not a request yet (zeroed memory) */
    WEFT_REQUEST_PML_SEND = 1,    /* point-to-point send: peer is the destination */
    WEFT_REQUEST_PML_RECV = 2,    /* point-to-point receive: peer is the source (may be ANY) */
    WEFT_REQUEST_GENERALIZED = 3, /* complete at creation or completed by its maker */
    WEFT_REQUEST_COLL = 4,        /* non-blocking collective */
    WEFT_REQUEST_COMM = 5         /* communicator creation (MPI_Comm_idup, ...) */
} weft_request_kind_t;

/* Where a request is in its life; see weft_request_state. */
typedef enum weft_request_state {
    WEFT_REQUEST_INACTIVE = 0, /* persistent and not started */
    WEFT_REQUEST_ACTIVE = 1,   /* started, not complete */
    WEFT_REQUEST_COMPLETE = 2, /* complete, status says how (a persistent request stays so
                                  until pml_start restarts it) */
    /* A WEFT_ANY_SOURCE receive interrupted by a process failure: reported to the user as
     * WEFT_ERR_PROC_FAILED_PENDING (status.error) yet not complete, still matchable. */
    WEFT_REQUEST_PENDING_FAILED = 3
} weft_request_state_t;

struct weft_request {
    weft_request_kind_t kind WEFT_CXX_DEFAULT(WEFT_REQUEST_NULL);
    volatile bool complete WEFT_CXX_DEFAULT(false); /* the operation is done; status is final */
    bool persistent WEFT_CXX_DEFAULT(false);        /* made by *_init, restarted by pml_start */
    bool active WEFT_CXX_DEFAULT(false);            /* persistent: started, not yet completed */
    bool freed WEFT_CXX_DEFAULT(false);             /* MPI_Request_free before completion: the owner
                                                       frees it when it completes */
    /* MPI_Cancel asked and not refused: its answer pending, or status.cancelled set (an owner
     * that asks a peer clears it when the answer is no). */
    bool cancelled WEFT_CXX_DEFAULT(false);
    /* framework/mpi: MPI_Request_get_status reported it complete, so MPI_Cancel does nothing
     * (it would contradict the status the user has); cleared when a persistent one starts. An
     * owner that reuses its requests clears it for each new one (weft_request_init does). */
    bool reported WEFT_CXX_DEFAULT(false);
    uint8_t reserved[2] WEFT_CXX_DEFAULT({0, 0}); /* zero */
    int32_t peer WEFT_CXX_DEFAULT(-1);      /* rank in comm, or WEFT_ANY_SOURCE / WEFT_PROC_NULL */
    int32_t tag WEFT_CXX_DEFAULT(0);        /* as posted (WEFT_ANY_TAG for a receive) */
    uint32_t reserved2 WEFT_CXX_DEFAULT(0); /* zero */
    /* The outcome. status.error is WEFT_SUCCESS from creation until something fails: the FT
     * layer reads it on pending requests too. */
    weft_msg_status_t status WEFT_CXX_DEFAULT({});
    weft_comm_t *comm WEFT_CXX_DEFAULT(NULL); /* the communicator it operates on (errors are
                                                 raised on it) */
    /* Buffered sends: framework/mpi's copy in the attached buffer, released at completion. */
    void *bsend_block WEFT_CXX_DEFAULT(NULL);
    /* The owner's hooks. pml_free releases the request (called by framework/mpi when the user
     * is done with it; a request still pending is marked freed instead and released by its
     * owner at completion). pml_start restarts a persistent request. pml_cancel tries to
     * cancel (it may complete the request with status.cancelled set; a send's cancel may make
     * a locally complete request incomplete again until its receiver answers). pml_data is
     * the owner's own. Unused hooks are NULL. */
    void *pml_data WEFT_CXX_DEFAULT(NULL);
    void (*pml_free)(weft_request_t *request) WEFT_CXX_DEFAULT(NULL);
    weft_status_t (*pml_start)(weft_request_t *request) WEFT_CXX_DEFAULT(NULL);
    weft_status_t (*pml_cancel)(weft_request_t *request) WEFT_CXX_DEFAULT(NULL);
};

/* A message mprobe/improbe took out of matching (MPI_Message). The PML makes it (and frees it
 * in mrecv/imrecv); framework/mpi reads comm, source, tag and count. */
struct weft_message {
    weft_comm_t *comm WEFT_CXX_DEFAULT(NULL);
    int32_t source WEFT_CXX_DEFAULT(-1); /* rank in comm that sent it */
    int32_t tag WEFT_CXX_DEFAULT(-1);
    size_t count WEFT_CXX_DEFAULT(0);      /* bytes it carries */
    void *pml_data WEFT_CXX_DEFAULT(NULL); /* the PML's own */
};

/* Every field at its creation value: not complete, not persistent, status.error WEFT_SUCCESS,
 * no hooks. Takes no reference to comm (the maker retains it if the request may outlive the
 * call that made it: weft_comm_retain). The struct has no tail padding, so clearing
 * sizeof(weft_request_t) never touches the fields of a C++ request derived from it. */
static inline void weft_request_init(weft_request_t *req, weft_request_kind_t kind,
                                     weft_comm_t *comm, int peer, int tag)
{
    memset((void *)req, 0, sizeof *req);
    req->kind = kind;
    req->peer = peer;
    req->tag = tag;
    req->status.error = WEFT_SUCCESS;
    req->comm = comm;
}

/* The request's state, from the fields the owner writes (so that it can never disagree with
 * them): pending-failed is an incomplete request whose status.error says so. */
static inline weft_request_state_t weft_request_state(const weft_request_t *req)
{
    if (req->complete)
        return WEFT_REQUEST_COMPLETE;
    if (req->status.error == WEFT_ERR_PROC_FAILED_PENDING)
        return WEFT_REQUEST_PENDING_FAILED;
    if (req->persistent && !req->active)
        return WEFT_REQUEST_INACTIVE;
    return WEFT_REQUEST_ACTIVE;
}

#ifdef __cplusplus
} /* extern "C" */

#include <type_traits>

static_assert(std::is_standard_layout_v<weft_request_t> &&
                  std::is_trivially_copyable_v<weft_request_t>,
              "weft_request_t must stay a plain C struct");
static_assert(std::is_standard_layout_v<weft_message_t> &&
                  std::is_trivially_copyable_v<weft_message_t>,
              "weft_message_t must stay a plain C struct");
static_assert(sizeof(weft_request_kind_t) == 4, "weft_request_kind_t must stay 4 bytes");
#endif

#endif /* WEFT_REQUEST_H */
