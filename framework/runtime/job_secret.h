// The job's secret: what proves that a connection comes from a process of this job
// (docs/security.md). The launcher's is read before the bootstrap (the boot component proves
// it to mpirun); any other is obtained right after it, before any other component opens;
// components reach it through weft_runtime_job_secret() and weft_runtime_job_mac().
#ifndef WEFT_RUNTIME_JOB_SECRET_H
#define WEFT_RUNTIME_JOB_SECRET_H

#include <boot/boot.h>
#include <weft/status.h>

#include <string>

namespace weft::rt::secret {

// The environment variable mpirun hands the secret in: 64 hexadecimal digits.
inline constexpr const char *kEnvVar = "WEFT_JOB_SECRET";
// Set (to 1) by mpirun on the command line beside the other variables: the secret is due, and
// a rank it did not reach (a launch agent that drops the environment) stops at MPI_Init with
// a clear error rather than fail its connections later.
inline constexpr const char *kExpectedVar = "WEFT_JOB_SECRET_EXPECTED";

// Where the secret comes from, in this order:
//   WEFT_JOB_SECRET set: the launcher's (mpirun's, or one the user exported to srun);
//   a job of one process: a random one of its own (nothing to authenticate);
//   PMI (job id "pmi-..."): rank 0 draws one and broadcasts it through the PMI KVS;
//   otherwise (a classic PMGR launcher without Weft's secret): derived from the job id, which
//   tells jobs apart but proves nothing (the weak mode, docs/security.md).
// WEFT_JOB_SECRET_EXPECTED without WEFT_JOB_SECRET is an error. The variables are removed from
// the environment once read, so that programs the rank starts do
// not inherit it. Collective under PMI (every rank must call it). Errors are printed.
// n bytes from getrandom(2) into p; false (errno set) if none could be had. mpirun's secret
// and its challenges are drawn here too.
bool random_bytes(unsigned char *p, size_t n);

// The launcher's secret (WEFT_JOB_SECRET), read before the bootstrap so that the boot
// component can prove it to mpirun (the job-event channel). Errors (a malformed value) are
// printed. Without it, init() below finds the secret after the bootstrap.
weft_status_t load_from_launcher();
weft_status_t init(weft_boot_module_t *boot, int rank, int size, const std::string &jobid);

} // namespace weft::rt::secret

#endif
