// What Weft's runtime needs from the PMGR client beyond the classic C API.
#ifndef WEFT_PMGR_CLIENT_H
#define WEFT_PMGR_CLIENT_H

namespace weft::pmgr {

// With MPIRUN_USE_PMI=1 the client takes rank, size and the tree's socket
// table from PMI instead of mpirun. These are the PMI operations it uses;
// every function returns 0 on success.
struct PmiHooks {
    void *arg;
    int (*init)(void *arg, int *rank, int *size, int *id);
    // Put this task's 6-byte entry, fence, and read every rank's into table.
    int (*exchange_table)(void *arg, const unsigned char *mine, unsigned char *table);
    int (*abort)(void *arg, int code, const char *msg);
    int (*finalize)(void *arg);
};
void set_pmi_hooks(const PmiHooks &hooks);

// The connection to mpirun while the client is open, else -1.
int mpirun_socket();
bool uses_pmi();

} // namespace weft::pmgr

#endif
