#include "mpirun_secret.h"

#include "job_secret.h"

#include <cerrno>
#include <cstring>

namespace weft::mpirun {

namespace {

constexpr const char *kVar = "WEFT_JOB_SECRET";
constexpr size_t kBytes = 32; // WEFT_JOB_SECRET_SIZE (weft/runtime.h)

} // namespace

bool random_bytes(unsigned char *p, size_t n, std::string &error)
{
    if (rt::secret::random_bytes(p, n))
        return true;
    error = std::string("getrandom: ") + std::strerror(errno);
    return false;
}

const unsigned char *job_secret_key(std::string &error)
{
    static unsigned char key[kBytes]; // one job per mpirun
    static bool made = false;
    if (!made) {
        if (!random_bytes(key, kBytes, error)) {
            error = "cannot make the job's secret: " + error;
            return nullptr;
        }
        made = true;
    }
    return key;
}

bool add_job_secret(std::vector<std::string> &env, std::string &error)
{
    const unsigned char *key = job_secret_key(error);
    if (!key)
        return false;
    static const char hex[] = "0123456789abcdef";
    std::string value;
    for (size_t i = 0; i < kBytes; ++i) {
        value += hex[key[i] >> 4];
        value += hex[key[i] & 15];
    }
    env.push_back(std::string(kVar) + "=" + value);
    // Not secret: it may go on a command line, and tells a rank the secret was due.
    env.push_back(std::string(kVar) + "_EXPECTED=1");
    return true;
}

bool is_job_secret(const std::string &entry)
{
    const size_t n = std::strlen(kVar);
    return entry.size() > n && entry.compare(0, n, kVar) == 0 && entry[n] == '=';
}

} // namespace weft::mpirun
