// What Weft's runtime needs from the PMGR client beyond the classic C API.
#ifndef WEFT_PMGR_CLIENT_H
#define WEFT_PMGR_CLIENT_H

#include <cstddef>

namespace weft::pmgr {

// With MPIRUN_USE_PMI=1 the client takes rank, size and the tree's socket
// table from PMI instead of mpirun (pmgr_pmi.cc). Each returns 0 on success.
int pmi_init(int *rank, int *size, int *id);
// Put this task's 6-byte entry, fence, and read every rank's into table.
int pmi_exchange_table(const unsigned char *mine, unsigned char *table);
// The collectives without the tree, over the PMI KVS (there is no mpirun to
// serve them): the reference client fails them; Weft makes them work.
bool pmi_barrier();
bool pmi_bcast(void *buf, size_t size, int root);
bool pmi_allgather(const void *send, size_t size, void *recv);
int pmi_abort(int code, const char *msg);
int pmi_finalize();

// The connection to mpirun while the client is open, else -1.
int mpirun_socket();
bool uses_pmi();

} // namespace weft::pmgr

#endif
