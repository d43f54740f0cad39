// A job: its ranks, where they run, how they are started, their output and
// their fate.
#ifndef WEFT_MPIRUN_JOB_H
#define WEFT_MPIRUN_JOB_H

#include "mpirun_options.h"

#include <chrono>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace weft::mpirun {

struct Host {
    std::string name;
    int slots = 0;
    bool local = false;
    int placed = 0;          // ranks placed here
    int ppr_ranks = 0;       // --map-by ppr (-N): how many ranks go here
    std::string ppr_why;     // and why, for a message: "2 per core, 4 cores"
    std::string mpirun_addr; // what its ranks use as MPIRUN_HOST
};

struct Stream {
    int fd = -1;
    int file = -1;         // --output-filename: where a copy goes
    std::string pending;   // bytes after the last newline, at most max_pending_line
    bool mid_line = false; // part of the current line was already written
};

struct Rank {
    int rank = 0;
    Host *host = nullptr;
    int core = -1; // bound core, or -1
    int app = 0;   // which program it runs (Options::app_command)
    pid_t pid = -1;
    Stream out, err;
    bool exited = false;
    bool ft_killed = false; // fault tolerance: killed by mpirun as gone
    int status = 0;         // waitpid status
    // Set when it exited cleanly, until mpirun has judged whether that was
    // too early (see Job::check_bootstrap).
    std::optional<std::chrono::steady_clock::time_point> exit_time;
};

// Put `np` ranks (0: one per slot) on `hosts`: by slot (each host's slots in turn; core is the
// same across hosts), by node (one rank per host in turn, while hosts have free slots), or ppr
// (each host's ppr_ranks, host after host; `spelling` names the option in messages). Returns
// false with `error` when more ranks than slots are asked for without oversubscription, or an
// np that disagrees with ppr.
bool map_ranks(std::vector<Host> &hosts, int np, bool oversubscribe, std::vector<Rank> &ranks,
               std::string &error, MapBy by = MapBy::slot, const std::string &spelling = "");

// Whether `name` means this machine.
bool is_local_host(const std::string &name);

// Number of cores here (hwloc if built with it).
int local_cores();

// Find `program` as execvp would (a name with a slash as is, else in PATH).
// Empty if not found or not executable.
std::string find_executable(const std::string &program);

// Quote a word for a POSIX shell.
std::string shell_quote(const std::string &word);

} // namespace weft::mpirun

#endif
