#include "mpirun_secret.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

namespace weft::mpirun {

namespace {

constexpr const char *kVar = "WEFT_JOB_SECRET";
constexpr size_t kBytes = 32; // WEFT_JOB_SECRET_SIZE (weft/runtime.h)

} // namespace

bool add_job_secret(std::vector<std::string> &env, std::string &error)
{
    static std::string value; // one job per mpirun
    if (value.empty()) {
        unsigned char key[kBytes];
        for (size_t got = 0; got < kBytes;) {
            const ssize_t r = getrandom(key + got, kBytes - got, 0);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0) {
                error =
                    std::string("cannot make the job's secret: getrandom: ") + std::strerror(errno);
                return false;
            }
            got += size_t(r);
        }
        static const char hex[] = "0123456789abcdef";
        for (unsigned char b : key) {
            value += hex[b >> 4];
            value += hex[b & 15];
        }
        std::memset(key, 0, sizeof key);
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
