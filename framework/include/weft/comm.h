/*
 * weft/comm.h: what a PML or a coll component needs of a communicator.
 *
 * A communicator (weft_comm_t) belongs to framework/mpi and begins with a weft_comm_view_t: plain
 * fields that framework/mpi fills before the PML (pml_add_comm) or coll (comm_query) first sees
 * the communicator, and that stay fixed until it is destroyed, except the ones a comment calls
 * writable. The point-to-point path reads the context id, this process's rank, a peer's world
 * rank and the PML's state for every message, so the accessors below are inline reads of these
 * fields, never calls into a library.
 *
 * The view's layout is frozen: a later need gets a new struct, never a new field here
 * (weft/types.h). Groups are read through functions (libweft): no hot path needs them.
 *
 * Thread: the fixed fields may be read from any thread; the writable ones (pml_state, coll_seq,
 * refs) only by the thread that drives MPI (Weft provides MPI_THREAD_FUNNELED).
 */
#ifndef WEFT_COMM_H
#define WEFT_COMM_H

#include <stddef.h>
#include <stdint.h>

#include <weft/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* flags */
#define WEFT_COMM_FLAG_INTER 0x0001u /* an intercommunicator: peer ranks name the remote group */
/* Revoked (ULFM: MPIX_Comm_revoke here or at another member): the one flag that changes while
 * the communicator lives. Set by the PML (pml_revoke_comm, or a peer's revoke notice), never
 * cleared; framework/mpi refuses later operations on the communicator with MPIX_ERR_REVOKED. */
#define WEFT_COMM_FLAG_REVOKED 0x0002u

typedef struct weft_comm_view {
    uint32_t cid WEFT_CXX_DEFAULT(0);      /* context id, the same at every member */
    int32_t rank WEFT_CXX_DEFAULT(-1);     /* this process's rank in the local group */
    int32_t size WEFT_CXX_DEFAULT(0);      /* ranks in the local group */
    int32_t peer_size WEFT_CXX_DEFAULT(0); /* ranks that point-to-point names (the remote
                                              group's, for an intercommunicator) */
    /* peer_world[r]: the world rank of peer rank r (peer_size entries); local_world[r]: of
     * local rank r (size entries). Owned by the communicator's groups. */
    const int32_t *peer_world WEFT_CXX_DEFAULT(NULL);
    const int32_t *local_world WEFT_CXX_DEFAULT(NULL);
    uint32_t flags WEFT_CXX_DEFAULT(0);         /* WEFT_COMM_FLAG_* */
    uint32_t coll_seq WEFT_CXX_DEFAULT(0);      /* writable: collectives started on it
                                                   (weft_comm_coll_tag) */
    void *pml_state WEFT_CXX_DEFAULT(NULL);     /* writable: the PML's own, set in pml_add_comm */
    weft_group_t *group WEFT_CXX_DEFAULT(NULL); /* the local group */
    weft_group_t *remote_group WEFT_CXX_DEFAULT(NULL); /* an intercommunicator's; else NULL */
    /* An intercommunicator's hidden intracommunicator over the local group, for the local
     * steps of its collectives; NULL otherwise. */
    weft_comm_t *local_comm WEFT_CXX_DEFAULT(NULL);
    /* writable: references, the handle's and one per pending operation that holds the
     * communicator (weft_comm_retain). The last release calls destroy (framework/mpi's; NULL
     * for the predefined communicators, which are never destroyed). */
    int32_t refs WEFT_CXX_DEFAULT(1);
    uint32_t reserved WEFT_CXX_DEFAULT(0); /* zero */
    void (*destroy)(weft_comm_t *comm) WEFT_CXX_DEFAULT(NULL);
} weft_comm_view_t;

/* The view at the start of comm. */
static inline const weft_comm_view_t *weft_comm_view(const weft_comm_t *comm)
{
    return (const weft_comm_view_t *)comm;
}

static inline uint32_t weft_comm_cid(const weft_comm_t *comm) { return weft_comm_view(comm)->cid; }
static inline int weft_comm_rank(const weft_comm_t *comm) { return weft_comm_view(comm)->rank; }
/* Ranks in the local group. */
static inline int weft_comm_size(const weft_comm_t *comm) { return weft_comm_view(comm)->size; }
/* Ranks that point-to-point names: the remote group's size for an intercommunicator. */
static inline int weft_comm_peer_size(const weft_comm_t *comm)
{
    return weft_comm_view(comm)->peer_size;
}
static inline int weft_comm_is_inter(const weft_comm_t *comm)
{
    return (weft_comm_view(comm)->flags & WEFT_COMM_FLAG_INTER) != 0;
}
static inline int weft_comm_is_revoked(const weft_comm_t *comm)
{
    return (weft_comm_view(comm)->flags & WEFT_COMM_FLAG_REVOKED) != 0;
}

/* The world rank of peer rank `rank` (what point-to-point names), or -1 if out of range. */
static inline int weft_comm_peer_world_rank(const weft_comm_t *comm, int rank)
{
    const weft_comm_view_t *v = weft_comm_view(comm);
    return rank >= 0 && rank < v->peer_size ? v->peer_world[rank] : -1;
}
/* The world rank of local rank `rank`, or -1 if out of range. */
static inline int weft_comm_local_world_rank(const weft_comm_t *comm, int rank)
{
    const weft_comm_view_t *v = weft_comm_view(comm);
    return rank >= 0 && rank < v->size ? v->local_world[rank] : -1;
}

/* The PML's state for comm: set in pml_add_comm, cleared in pml_del_comm. */
static inline void *weft_comm_pml_state(const weft_comm_t *comm)
{
    return weft_comm_view(comm)->pml_state;
}
static inline void weft_comm_set_pml_state(weft_comm_t *comm, void *state)
{
    ((weft_comm_view_t *)comm)->pml_state = state;
}

/* The local group; the remote group of an intercommunicator (NULL for an intracommunicator);
 * the hidden intracommunicator over an intercommunicator's local group (NULL otherwise).
 * Borrowed: valid as long as comm. */
static inline weft_group_t *weft_comm_group(const weft_comm_t *comm)
{
    return weft_comm_view(comm)->group;
}
static inline weft_group_t *weft_comm_remote_group(const weft_comm_t *comm)
{
    return weft_comm_view(comm)->remote_group;
}
static inline weft_comm_t *weft_comm_local_comm(const weft_comm_t *comm)
{
    return weft_comm_view(comm)->local_comm;
}

/* Keep comm alive while an operation on it is pending: MPI_Comm_free with a message or a
 * non-blocking collective in flight must not take the communicator (and the PML's queues)
 * away (MPI-3.1 6.4.3). Every retain is paired with one release; the last release destroys a
 * freed communicator. Blocking: no. */
static inline void weft_comm_retain(weft_comm_t *comm) { ++((weft_comm_view_t *)comm)->refs; }
static inline void weft_comm_release(weft_comm_t *comm)
{
    weft_comm_view_t *v = (weft_comm_view_t *)comm;
    if (--v->refs == 0 && v->destroy)
        v->destroy(comm);
}

/*
 * Collective traffic travels on tags of its own: negative (WEFT_ANY_TAG never matches them),
 * below the library's other internal tags, one per collective started on the communicator (so
 * the messages of two collectives in flight are never confused), repeating after
 * WEFT_COLL_TAG_COUNT. Every rank takes one tag per collective, in the same order.
 */
/* Tags of the library's fault-tolerant protocols (MPI_Finalize's barrier with fault tolerance
 * on, ...): neither a process failure nor MPIX_Comm_revoke revokes them, so that they work on a
 * communicator whose collectives a failure revoked, or that the program revoked. */
#define WEFT_FT_TAG_FIRST (-(1 << 27))
#define WEFT_FT_TAG_COUNT 1024
static inline int weft_tag_is_ft(int tag)
{
    return tag <= WEFT_FT_TAG_FIRST && tag > WEFT_FT_TAG_FIRST - WEFT_FT_TAG_COUNT;
}

#define WEFT_COLL_TAG_FIRST (-(1 << 28))
#define WEFT_COLL_TAG_COUNT (1 << 24)

/* The tag of the next collective started on comm. */
static inline int weft_comm_coll_tag(weft_comm_t *comm)
{
    weft_comm_view_t *v = (weft_comm_view_t *)comm;
    return WEFT_COLL_TAG_FIRST - (int)(v->coll_seq++ & (uint32_t)(WEFT_COLL_TAG_COUNT - 1));
}
/* Whether tag belongs to a collective (what a revoke with coll_only purges). */
static inline int weft_tag_is_coll(int tag)
{
    return tag <= WEFT_COLL_TAG_FIRST && tag > WEFT_COLL_TAG_FIRST - WEFT_COLL_TAG_COUNT;
}

/* Groups (libweft). A rank out of range gives -1. */
int weft_group_size(const weft_group_t *group);
/* This process's rank in group, or -1 if it is not a member. */
int weft_group_rank(const weft_group_t *group);
/* The world rank of the group's rank `rank`. */
int weft_group_world_rank(const weft_group_t *group, int rank);
/* A new group of these world ranks, in this order (framework/mpi releases it like any group it
 * is handed: coll_agree's result). NULL if n < 0. */
weft_group_t *weft_group_new(const int *world_ranks, int n);

#ifdef __cplusplus
} /* extern "C" */

#include <type_traits>

static_assert(std::is_standard_layout_v<weft_comm_view_t> &&
                  std::is_trivially_copyable_v<weft_comm_view_t>,
              "weft_comm_view_t must stay a plain C struct");
#endif

#endif /* WEFT_COMM_H */
