// The boot framework's base: choose the bootstrap component for this process
// (pmgr under Weft's mpirun, pmi under Slurm or hydra, singleton otherwise,
// or what --mca boot names) and hand out its module.
#ifndef WEFT_BOOT_BASE_H
#define WEFT_BOOT_BASE_H

#include <boot/boot.h>

namespace weft::boot::base {

// Open the framework, select one component and return its module, not yet
// connected (call boot_init). Errors are printed.
weft_status_t select(weft_boot_module_t **module);
// Close the framework (after boot_finalize).
void close();

} // namespace weft::boot::base

#endif
