/*
 * weft/module.h: the rules every framework's module struct follows, the words the framework
 * headers use to state an operation's contract, and the one check a caller makes before it
 * calls an operation that was appended after a framework's first ABI version.
 *
 * Module structs. A module is a plain C struct that a component fills with designated
 * initializers. Its first field is `uint32_t struct_size`, which the component sets to
 * sizeof(its struct) as it was compiled. New fields and operations are only ever appended (and
 * the framework's ABI minor version bumped), so the module of a component built against an
 * older minor version is a prefix of the current struct. Before calling anything appended after
 * version <fw> 1.0, a caller checks WEFT_MODULE_HAS_OP; the operations of 1.0 are checked once,
 * when the module is accepted. An optional operation a component does not provide is NULL, or
 * points at a function of the exact type that returns WEFT_ERR_NOT_SUPPORTED; never a cast.
 *
 * Contract words used in the framework headers:
 *
 *   Blocking  no:    returns without waiting for any peer.
 *             local: may wait for local resources (a lock, memory, a local device), never for
 *                    a peer.
 *             yes:   may wait for peers, driving progress while it waits; must return (in
 *                    error) when a peer it waits for fails or the communicator is revoked.
 *   Thread    init:  called only while the library initializes or finalizes (or connects new
 *                    processes), never concurrently with any other call into the module.
 *             mpi:   called from threads that make MPI calls; concurrently with other mpi-class
 *                    calls only if the module was created with enable_mpi_threads.
 *             any:   may also run on the runtime's progress thread, concurrently with mpi-class
 *                    calls if the module was created with enable_progress_threads.
 *   Callbacks that a module makes (completion, receive, error) run on whichever thread drives
 *   progress, so they are always thread class "any": they do not block, and they call back only
 *   into operations of class "any".
 */
#ifndef WEFT_MODULE_H
#define WEFT_MODULE_H

#include <stddef.h>
#include <stdint.h>

/* True if the module `mod` (a pointer to a struct of type `type`) is long enough to hold field
 * `field`: use it for appended data fields. */
#define WEFT_MODULE_HAS_FIELD(mod, type, field)                                                    \
    (offsetof(type, field) + sizeof((mod)->field) <= (mod)->struct_size)

/* True if the module `mod` is long enough to hold operation `field` and provides it.
 * Evaluates `mod` more than once. */
#define WEFT_MODULE_HAS_OP(mod, type, field)                                                       \
    (WEFT_MODULE_HAS_FIELD(mod, type, field) && (mod)->field != NULL)

/* The same check for a framework's component struct, whose size is in its `mca` header. */
#define WEFT_COMPONENT_HAS_OP(comp, type, field)                                                   \
    (offsetof(type, field) + sizeof((comp)->field) <= (comp)->mca.struct_size &&                   \
     (comp)->field != NULL)

#endif /* WEFT_MODULE_H */
