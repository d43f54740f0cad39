// The job's secret (docs/security.md): made once per mpirun from getrandom(2), handed to every
// rank in its environment (WEFT_JOB_SECRET), never on a command line.
#ifndef WEFT_MPIRUN_SECRET_H
#define WEFT_MPIRUN_SECRET_H

#include <string>
#include <vector>

namespace weft::mpirun {

// Append "WEFT_JOB_SECRET=<64 hex digits>" to env, the same value for every rank of the job,
// and "WEFT_JOB_SECRET_EXPECTED=1" (so that a rank the secret did not reach says so).
// False, with error set, if no random bytes could be had (then no rank may start).
bool add_job_secret(std::vector<std::string> &env, std::string &error);

// The job's secret itself (32 bytes), made on first use; NULL, with error set, if no random
// bytes could be had. mpirun checks the proofs ranks give with it (the job-event channel).
const unsigned char *job_secret_key(std::string &error);

// n random bytes into p (getrandom); false with error set if none could be had.
bool random_bytes(unsigned char *p, size_t n, std::string &error);

// Whether an environment entry ("NAME=value") is the secret: it must travel in a launch
// agent's environment, not on the command line the agent is given.
bool is_job_secret(const std::string &entry);

} // namespace weft::mpirun

#endif
