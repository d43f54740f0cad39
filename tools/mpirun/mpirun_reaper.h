// mpirun's job-file reaper: the files a job's ranks make (btl/sm's and coll/sm's segments) are
// named after mpirun's pid (weft_runtime_job_file_prefix). A rank removes its own at finalize,
// mpirun removes what dead ranks left when the job ends; when mpirun itself is killed
// (SIGKILL), its ranks die with it (their parent-death signal, or the boot watchdog) and
// nobody would. So mpirun starts a small process of its own (itself, run again as
// "mpirun --job-files-reaper") that waits on a pipe: when mpirun ends without saying "done", the
// reaper removes the job's files, a few times over about 2.5 s (a rank under a launch agent
// outlives mpirun by up to 2 s, docs/hardening-client.md), and exits. It is in a session of its
// own, ignores the terminal's signals and holds no descriptor of the job's.
#ifndef WEFT_MPIRUN_REAPER_H
#define WEFT_MPIRUN_REAPER_H

#include <string>
#include <vector>

namespace weft::mpirun {

// Remove the files in dirs whose names begin with prefix.
void remove_files_with_prefix(const std::vector<std::string> &dirs, const std::string &prefix);

// Start the reaper for files named prefix* in dirs; the descriptor to hand to reaper_done (-1
// if it could not be started: the job runs without it).
int start_reaper(const std::vector<std::string> &dirs, const std::string &prefix);

// mpirun ends normally, having removed the job's files: the reaper exits at once.
void reaper_done(int fd);

// The reaper itself, when argv[1] is "--job-files-reaper"; returns its exit status.
int reaper_main(int argc, char **argv);
constexpr const char *kReaperFlag = "--job-files-reaper";

} // namespace weft::mpirun

#endif
