// What the files of framework/mpi share. Each MPI function checks the
// library state and its arguments, then either does its work or reports an
// error class through the handle's error handler.
#ifndef WEFT_MPI_INTERNAL_H
#define WEFT_MPI_INTERNAL_H

#include "mpi_objects.h"

#include <mpi.h>

#include <pml/pml.h>

#include <string>
#include <vector>

namespace weft::mpi {

// ---- library state (mpi_init.cc)
bool initialized();
bool finalized();
// MPI_SUCCESS when MPI may be called now; otherwise prints a clear message
// ("MPI_Send called after MPI_Finalize") and returns MPI_ERR_OTHER, or aborts
// if that is all one can do (before MPI_Init there is no error handler).
int check_state(const char *fn);

// The selected PML module (valid between MPI_Init and MPI_Finalize).
struct weft_pml_module *pml();
// MPI_Status from a PML status (status may be MPI_STATUS_IGNORE).
void to_status(const weft_msg_status_t &in, MPI_Status *out);

// ---- communicators (mpi_comm.cc)
// Register a new communicator with the PML (after its cid, group, rank and
// size are set).
int comm_activate(weft_comm *comm);
// Tags below this are the library's own (MPI_ANY_TAG is -1; user tags >= 0).
constexpr int internal_tag_base = -16;
// Blocking point-to-point on the library's own tags, for communicator
// construction and the barrier until the coll framework serves them.
weft_status_t internal_send(weft_comm *comm, const void *buf, size_t bytes, int dst, int tag);
weft_status_t internal_recv(weft_comm *comm, void *buf, size_t bytes, int src, int tag);

// ---- errors (mpi_errors.cc)
// The MPI error class for a Weft status.
int error_class_of(weft_status_t status);
// Report `errclass` raised by `fn` on `comm` (MPI_COMM_WORLD's handler if comm
// is null or invalid): MPI_ERRORS_ARE_FATAL prints
//   "MPI_Send: invalid rank (MPI_ERR_RANK) on communicator MPI_COMM_WORLD: <detail>"
// and aborts the job through the runtime; MPI_ERRORS_RETURN returns errclass;
// a user handler is called with (&comm, &errclass) and errclass is returned.
int raise(weft_comm *comm, int errclass, const char *fn, const std::string &detail = "");

// ---- groups (mpi_group.cc)
weft_group *group_new(std::vector<int> world_ranks);
void group_retain(weft_group *g);
void group_release(weft_group *g);

// ---- predefined objects (mpi_predefined.cc)
// Fill MPI_COMM_WORLD and MPI_COMM_SELF (and their groups) once the runtime
// knows rank and size.
void setup_predefined(int world_rank, int world_size);
bool valid_comm(MPI_Comm comm);
bool valid_datatype(MPI_Datatype type);

} // namespace weft::mpi

#endif
