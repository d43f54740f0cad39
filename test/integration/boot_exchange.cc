// Bootstraps through whatever boot component the environment selects (pmgr
// under mpirun, pmi under srun or hydra, singleton alone) and checks the data
// of an allgather, a bcast from the last rank and a barrier. Rank 0 prints
// one line naming the component; a wrong byte prints what and exits 1.
#include "mca_select.h"
#include <boot/boot.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

unsigned char pattern(int rank, size_t k)
{
    return static_cast<unsigned char>(rank * 37 + k * 11 + 5);
}

int fail(int rank, const std::string &what)
{
    std::fprintf(stderr, "boot_exchange rank %d: %s\n", rank, what.c_str());
    return 1;
}

} // namespace

int main(int argc, char **argv)
{
    // Optional: bytes per rank in the allgather (default 64; large values
    // exercise PMI's chunking).
    const size_t len = argc > 1 ? size_t(std::atol(argv[1])) : 64;
    weft_boot_module_t *boot = nullptr;
    if (weft::mca::register_all() != WEFT_SUCCESS || weft_boot_select(&boot) != WEFT_SUCCESS)
        return fail(-1, "no boot component");
    int rank = -1, size = 0;
    char jobid[128];
    if (weft_status_t rc = boot->boot_init(boot, &rank, &size, jobid, sizeof jobid);
        rc != WEFT_SUCCESS)
        return fail(-1, std::string("boot_init: ") + weft_status_string(rc));

    std::vector<unsigned char> mine(len), all(len * size_t(size));
    for (size_t k = 0; k < len; ++k)
        mine[k] = pattern(rank, k);
    if (boot->boot_allgather(boot, mine.data(), all.data(), len) != WEFT_SUCCESS)
        return fail(rank, "allgather failed");
    for (int r = 0; r < size; ++r)
        for (size_t k = 0; k < len; ++k)
            if (all[size_t(r) * len + k] != pattern(r, k))
                return fail(rank,
                            "allgather: rank " + std::to_string(r) + " byte " + std::to_string(k));

    const int root = size - 1;
    std::vector<unsigned char> b(len);
    for (size_t k = 0; k < len; ++k)
        b[k] = rank == root ? pattern(1000 + root, k) : 0;
    if (boot->boot_bcast(boot, b.data(), len, root) != WEFT_SUCCESS)
        return fail(rank, "bcast failed");
    for (size_t k = 0; k < len; ++k)
        if (b[k] != pattern(1000 + root, k))
            return fail(rank, "bcast: byte " + std::to_string(k));
    if (boot->boot_barrier(boot) != WEFT_SUCCESS)
        return fail(rank, "barrier failed");

    weft_boot_event_t ev{};
    ev.struct_size = sizeof ev;
    weft_status_t prc = boot->boot_poll_event(boot, &ev);
    if (prc != WEFT_ERR_NOT_FOUND && prc != WEFT_ERR_NOT_SUPPORTED)
        return fail(rank, std::string("poll_event: ") + weft_status_string(prc));
    const bool events = boot->boot_flags & WEFT_BOOT_FLAG_FAILURE_EVENTS;
    std::string name = "?";
    for (auto *c : weft::mca::Repository::instance().components("boot"))
        if (c->opened)
            name = c->name;
    if (boot->boot_finalize(boot) != WEFT_SUCCESS)
        return fail(rank, "finalize failed");
    weft_boot_close();
    if (rank == 0)
        std::printf("boot exchange: boot/%s, %d ranks, job %s, %zu bytes each: allgather, bcast, "
                    "barrier right%s\n",
                    name.c_str(), size, jobid, len, events ? "; event channel open" : "");
    return 0;
}
