// The tables behind the handle conversions (MPI-3.1 17.2.4): a Fortran handle is an index into
// one table per kind of handle, which maps it back to the object.
//
// Fixed indices hold the predefined handles and the null handle (framework/mpi/mpi_handles.cc
// sets them, the same in every process, so that Fortran can name them as constants); any other
// object gets an index the first time it is converted, and loses it when the object goes
// (handle_forget from the free paths), so that an index never leads to a deleted object: a
// stale index maps to the null handle. Freed indices are reused only once many are free, so
// that a stale one stays null for a while. Thread: any (one mutex; conversions are not on a
// hot path, and forgetting an object of a kind that was never converted costs one load).
//
// The tables are in libweft (framework/mpi/mpi_handle_table.cc), not libmpi: datatypes and ops
// are deleted there, with their last reference (framework/datatype/op_reduce.cc).
#ifndef WEFT_MPI_HANDLES_H
#define WEFT_MPI_HANDLES_H

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace weft::mpi {

enum class HandleKind : uint8_t { comm, datatype, group, request, op, info, errhandler, message };
constexpr size_t handle_kinds = 8;

// Objects of each kind that hold an index beyond the fixed ones.
extern std::atomic<int> handle_entries[handle_kinds];

// Set a fixed index: `object` (NULL for the null handle) is `index` for good.
void handle_fix(HandleKind kind, int index, const void *object);
// The index of a non-null object, given one now if it has none. -1 when the table is full.
int handle_index(HandleKind kind, const void *object);
// The object at `index`, or NULL (out of range, free, or the null handle's).
void *handle_object(HandleKind kind, int index);

void handle_forget_slow(HandleKind kind, const void *object);
// The object goes (or its handle does): its index, if it has one that is not fixed, is free.
inline void handle_forget(HandleKind kind, const void *object)
{
    if (object && handle_entries[size_t(kind)].load(std::memory_order_relaxed) > 0)
        handle_forget_slow(kind, object);
}

} // namespace weft::mpi

#endif
