#include "job_secret.h"

#include "sha256.h"

#include "mca_output.h"

#include <weft/runtime.h>

#include <sys/random.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace weft::rt::secret {

namespace {

struct State {
    unsigned char key[WEFT_JOB_SECRET_SIZE] = {};
    const char *source = "none";
};
State S;

int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

bool parse_hex(const char *s, unsigned char *out, size_t n)
{
    if (std::strlen(s) != 2 * n)
        return false;
    for (size_t i = 0; i < n; ++i) {
        const int hi = hex_value(s[2 * i]), lo = hex_value(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        out[i] = static_cast<unsigned char>(hi << 4 | lo);
    }
    return true;
}

} // namespace

bool random_bytes(unsigned char *p, size_t n)
{
    while (n > 0) {
        const ssize_t r = getrandom(p, n, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        p += r;
        n -= size_t(r);
    }
    return true;
}

weft_status_t load_from_launcher()
{
    S = State{};
    const char *v = std::getenv(kEnvVar);
    if (!v)
        return WEFT_SUCCESS;
    const bool ok = parse_hex(v, S.key, sizeof S.key);
    // Not inherited by what the program starts (the launcher's copy in /proc/<pid>/environ
    // stays readable to this user and root, who can read the process's memory anyway).
    unsetenv(kEnvVar);
    unsetenv(kExpectedVar);
    if (!ok) {
        // The value is not printed: it may be a secret nonetheless.
        output::error(std::string(kEnvVar) + " is malformed: expected " +
                      std::to_string(2 * WEFT_JOB_SECRET_SIZE) + " hexadecimal digits");
        return WEFT_ERR_BAD_PARAM;
    }
    S.source = "launcher";
    return WEFT_SUCCESS;
}

weft_status_t init(weft_boot_module_t *boot, int rank, int size, const std::string &jobid)
{
    if (std::strcmp(S.source, "launcher") == 0)
        return WEFT_SUCCESS;
    S = State{};
    const bool expected = std::getenv(kExpectedVar) != nullptr;
    unsetenv(kExpectedVar);
    if (expected) {
        output::error(std::string(kEnvVar) +
                      " did not reach this process: the launch agent mpirun started it "
                      "through dropped its environment (for ssh: SendEnv and AcceptEnv " +
                      kEnvVar + "; docs/security.md)");
        return WEFT_ERR_BAD_PARAM;
    }
    if (size <= 1 || jobid.rfind("pmi-", 0) == 0) {
        if (rank == 0 && !random_bytes(S.key, sizeof S.key)) {
            output::error(std::string("cannot make the job's secret: getrandom: ") +
                          std::strerror(errno));
            return WEFT_ERR_NOT_AVAILABLE;
        }
        S.source = "singleton";
        if (size <= 1)
            return WEFT_SUCCESS;
        // The PMI KVS is the process manager's (Slurm's, hydra's): only the job's processes
        // read it, which is what this secret is meant to tell.
        if (weft_status_t rc = boot->boot_bcast(boot, S.key, sizeof S.key, 0); rc != WEFT_SUCCESS) {
            output::error(std::string("cannot share the job's secret: ") + weft_status_string(rc));
            return rc;
        }
        S.source = "pmi";
        return WEFT_SUCCESS;
    }
    const std::string seed = "weft-derived-job-secret:" + jobid;
    crypto::sha256(seed.data(), seed.size(), S.key);
    S.source = "derived";
    return WEFT_SUCCESS;
}

} // namespace weft::rt::secret

extern "C" {

const unsigned char *weft_runtime_job_secret(size_t *len)
{
    if (len)
        *len = sizeof weft::rt::secret::S.key;
    return weft::rt::secret::S.key;
}

const char *weft_runtime_job_secret_source(void) { return weft::rt::secret::S.source; }

void weft_runtime_job_mac(const void *data, size_t len, unsigned char mac[WEFT_JOB_MAC_SIZE])
{
    weft::crypto::hmac_sha256(weft::rt::secret::S.key, sizeof weft::rt::secret::S.key, data, len,
                              mac);
}

} // extern "C"
