// A PMI-1 / PMI-2 wire client, written from the protocol (no PMI library):
// how Weft programs bootstrap under Slurm (srun --mpi=pmi2) and MPICH's hydra.
// Wire details: docs/protocols/pmi-wire.md.
#ifndef WEFT_PMI_CLIENT_H
#define WEFT_PMI_CLIENT_H

#include <weft/status.h>

#include <map>
#include <string>

namespace weft::pmi {

class Client {
  public:
    ~Client();

    // Whether the environment names a PMI server (PMI_FD or PMI_PORT).
    static bool available();

    // Connect and initialise. version: 1, 2, or 0 to choose (2 when
    // PMI_JOBID is set, as under Slurm; 1 otherwise, as under hydra).
    // On failure returns an error and sets `error` to a sentence.
    weft_status_t init(int version, std::string &error);

    int rank() const { return rank_; }
    int size() const { return size_; }
    int version() const { return version_; }
    const std::string &jobid() const { return jobid_; }

    // Keys: [A-Za-z0-9_-], at most 63 characters; values: at most 1023
    // bytes, without spaces or ';'. Never put a key twice.
    weft_status_t put(const std::string &key, const std::string &value, std::string &error);
    // A fence (PMI-2) or barrier (PMI-1): every rank's puts become visible.
    weft_status_t fence(std::string &error);
    // WEFT_ERR_NOT_FOUND if no rank put `key`.
    weft_status_t get(const std::string &key, std::string &value, std::string &error);
    // Ask the launcher to end the job. The caller exits right after.
    weft_status_t abort(int code, const std::string &message);
    weft_status_t finalize();

  private:
    using Fields = std::map<std::string, std::string>;
    bool write_all(const std::string &bytes);
    bool read_line(std::string &line);
    bool read_exact(size_t n, std::string &out);
    weft_status_t command1(const std::string &request, const std::string &reply_cmd, Fields &reply,
                           std::string &error);
    weft_status_t command2(const std::string &request, const std::string &reply_cmd, Fields &reply,
                           std::string &error);
    weft_status_t command(const std::string &cmd1, const std::string &cmd2,
                          const std::string &reply1, const std::string &reply2, Fields &reply,
                          std::string &error);

    int fd_ = -1;
    int version_ = 0;
    int rank_ = 0;
    int size_ = 1;
    std::string jobid_;
    std::string kvsname_;
    std::string in_;
};

// Collectives over the KVS, for bootstrap data of any size (binary, split
// into hex chunks that fit PMI's value limit). `epoch` must differ for every
// call in the job (keys are never put twice); every rank passes the same.
weft_status_t kvs_allgather(Client &pmi, int epoch, const void *in, void *out, size_t len_per_rank,
                            std::string &error);
weft_status_t kvs_bcast(Client &pmi, int epoch, void *buf, size_t len, int root,
                        std::string &error);

} // namespace weft::pmi

#endif
