// MPIRUN_USE_PMI=1: the PMGR client takes rank, size and its tree's socket
// table from PMI (as the spec allows) instead of from mpirun.
#include "pmgr_client.h"

#include "pmi_client.h"

#include <cstdio>
#include <cstdlib>

namespace weft::pmgr {

namespace {

pmi::Client &client()
{
    static pmi::Client c;
    return c;
}

} // namespace

int pmi_init(int *rank, int *size, int *id)
{
    std::string error;
    if (client().init(0, error) != WEFT_SUCCESS) {
        std::fprintf(stderr, "PMGR_COLLECTIVE ERROR: PMI: %s\n", error.c_str());
        return 1;
    }
    *rank = client().rank();
    *size = client().size();
    // A non-zero id from the job id's digits, as PMI_Get_appnum would not do.
    unsigned h = 5381;
    for (char c : client().jobid())
        h = h * 33 + static_cast<unsigned char>(c);
    *id = int(h & 0x7FFFFFFF) | 1;
    return 0;
}

int pmi_exchange_table(const unsigned char *mine, unsigned char *table)
{
    std::string error;
    if (pmi::kvs_allgather(client(), 0, mine, table, 6, error) != WEFT_SUCCESS) {
        std::fprintf(stderr, "PMGR_COLLECTIVE ERROR: PMI: %s\n", error.c_str());
        return 1;
    }
    return 0;
}

namespace {
int next_epoch = 1; // epoch 0 is the socket table
bool report(weft_status_t rc, const std::string &error)
{
    if (rc != WEFT_SUCCESS)
        std::fprintf(stderr, "PMGR_COLLECTIVE ERROR: PMI: %s\n", error.c_str());
    return rc == WEFT_SUCCESS;
}
} // namespace

bool pmi_barrier()
{
    std::string error;
    return report(client().fence(error), error);
}

bool pmi_bcast(void *buf, size_t size, int root)
{
    std::string error;
    return report(pmi::kvs_bcast(client(), next_epoch++, buf, size, root, error), error);
}

bool pmi_allgather(const void *send, size_t size, void *recv)
{
    std::string error;
    return report(pmi::kvs_allgather(client(), next_epoch++, send, recv, size, error), error);
}

int pmi_abort(int code, const char *msg) { return client().abort(code, msg) ? 1 : 0; }
int pmi_finalize() { return client().finalize() ? 1 : 0; }

} // namespace weft::pmgr
