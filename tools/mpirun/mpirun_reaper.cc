// mpirun's job-file reaper (mpirun_reaper.h).
#include "mpirun_reaper.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace weft::mpirun {

void remove_files_with_prefix(const std::vector<std::string> &dirs, const std::string &prefix)
{
    for (const std::string &dir : dirs) {
        DIR *d = opendir(dir.c_str());
        if (!d)
            continue;
        while (dirent *e = readdir(d))
            if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0)
                unlinkat(dirfd(d), e->d_name, 0);
        closedir(d);
    }
}

int start_reaper(const std::vector<std::string> &dirs, const std::string &prefix)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    // Everything the child needs, made before fork (no allocation between fork and exec).
    const std::string fd_text = std::to_string(p[0]);
    std::vector<std::string> args{"mpirun", kReaperFlag, fd_text, prefix};
    args.insert(args.end(), dirs.begin(), dirs.end());
    std::vector<char *> argv;
    for (std::string &a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        // A grandchild, so that mpirun has no child of its own to reap for it and the reaper
        // is nobody's zombie: it is adopted by init (or the nearest subreaper).
        if (fork() != 0)
            _exit(0);
        setsid();
        fcntl(p[0], F_SETFD, 0); // kept across exec
        const int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
            dup2(null, 2);
        }
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        execv("/proc/self/exe", argv.data());
        _exit(127);
    }
    close(p[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return p[1];
}

void reaper_done(int fd)
{
    if (fd < 0)
        return;
    const char done = 'x';
    while (write(fd, &done, 1) < 0 && errno == EINTR) {
    }
    close(fd);
}

int reaper_main(int argc, char **argv)
{
    if (argc < 5)
        return 2;
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE})
        signal(s, SIG_IGN);
    const int fd = std::atoi(argv[2]);
    const std::string prefix = argv[3];
    // Only the job's own names: "weft-pmgr-<pid>-".
    if (prefix.rfind("weft-pmgr-", 0) != 0 || prefix.size() < 12 || prefix.back() != '-')
        return 2;
    const std::vector<std::string> dirs(argv + 4, argv + argc);
    char c = 0;
    ssize_t n;
    while ((n = read(fd, &c, 1)) < 0 && errno == EINTR) {
    }
    if (n == 1 && c == 'x')
        return 0; // mpirun removed them itself
    // mpirun is gone: its ranks are dying; some may still be finishing for up to 2 s.
    for (int wait_ms : {0, 200, 800, 1500}) {
        poll(nullptr, 0, wait_ms);
        remove_files_with_prefix(dirs, prefix);
    }
    return 0;
}

} // namespace weft::mpirun
