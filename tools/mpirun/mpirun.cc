// mpirun (and mpiexec): start the ranks of a job, serve their bootstrap
// (PMGR_COLLECTIVE protocol 8), forward their output line by line, and end
// the job when it is done or when a rank fails.
#include "mpirun_job.h"
#include "mpirun_options.h"
#include "mpirun_reaper.h"
#include "mpirun_secret.h"
#include "mpirun_server.h"

#include "weft_config.h"

#ifdef WEFT_HAVE_HWLOC
#include <hwloc.h>
#endif

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <map>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <set>
#include <string>
#include <string_view>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char **environ;

namespace weft::mpirun {

namespace {

using Clock = std::chrono::steady_clock;

// Exit statuses of mpirun itself, when no rank's status applies.
constexpr int exit_usage = 1;
constexpr int exit_not_found = 127;
constexpr int exit_timeout = 124;
// A rank's line longer than this is written out in pieces rather than held whole.
constexpr size_t max_pending_line = size_t(64) << 10;
// How long mpirun waits before it tries accept() again when it is out of descriptors.
constexpr auto accept_backoff = std::chrono::milliseconds(100);
// Descriptors accept() leaves free: mpirun is out of descriptors when fewer would be left. What
// it does meanwhile still needs some (the uid check of a connection reads /proc/net/tcp; the
// sanitizers' run-times open a pipe to probe memory, and /proc files, at any checked call).
constexpr int spare_fds = 8;
// A Weft warning or error that another rank printed word for word this recently is not
// repeated.
constexpr auto warning_window = std::chrono::seconds(5);
constexpr std::string_view warning_prefixes[] = {"weft: warning: ", "weft: error: "};

void say(const std::string &text)
{
    std::fprintf(stderr, "mpirun: %s\n", text.c_str());
    std::fflush(stderr);
}

// Whether a connection may be accepted and spare_fds descriptors still be free: each is taken
// (a duplicate of `fd`) and given back. When not, errno says why (EMFILE, ENFILE).
bool descriptors_free(int fd)
{
    int taken[spare_fds + 1];
    int n = 0;
    while (n < spare_fds + 1 && (taken[n] = fcntl(fd, F_DUPFD_CLOEXEC, 0)) >= 0)
        ++n;
    const int err = errno;
    for (int k = 0; k < n; ++k)
        close(taken[k]);
    errno = err;
    return n == spare_fds + 1;
}

std::string describe_status(int status)
{
    if (WIFEXITED(status))
        return "exited with status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status))
        return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
               strsignal(WTERMSIG(status)) + ")";
    return "ended (status " + std::to_string(status) + ")";
}

int exit_code_of(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 1;
}

// The address of this machine that a packet to `host` leaves from: what a
// rank there can use to reach mpirun.
std::string route_source_addr(const std::string &host)
{
    addrinfo hints{}, *res = nullptr;
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_DGRAM;
    if (getaddrinfo(host.c_str(), "9", &hints, &res) != 0 || !res)
        return {};
    std::string out;
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s >= 0 && connect(s, res->ai_addr, res->ai_addrlen) == 0) {
        sockaddr_in me{};
        socklen_t len = sizeof me;
        char buf[INET_ADDRSTRLEN];
        if (getsockname(s, reinterpret_cast<sockaddr *>(&me), &len) == 0 &&
            inet_ntop(AF_INET, &me.sin_addr, buf, sizeof buf))
            out = buf;
    }
    if (s >= 0)
        close(s);
    freeaddrinfo(res);
    return out;
}

struct CoreSet {
    std::vector<int> pus; // OS indices of a core's hardware threads
    int socket = 0;       // its package's logical index
};

std::vector<CoreSet> core_sets()
{
    std::vector<CoreSet> out;
#ifdef WEFT_HAVE_HWLOC
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0)
        return out;
    if (hwloc_topology_load(topo) == 0) {
        int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
        for (int i = 0; i < n; ++i) {
            hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, i);
            CoreSet cs;
            unsigned pu;
            hwloc_bitmap_foreach_begin(pu, core->cpuset) cs.pus.push_back(int(pu));
            hwloc_bitmap_foreach_end();
            if (hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, core))
                cs.socket = int(pkg->logical_index);
            out.push_back(cs);
        }
    }
    hwloc_topology_destroy(topo);
#endif
    return out;
}

class Job {
  public:
    Job(Options o) : opt_(std::move(o)) {}
    int run();

  private:
    bool setup_hosts();
    bool listen_socket();
    std::vector<std::string> rank_env(const Rank &r) const;
    bool spawn(Rank &r);
    void forward(Rank &r, Stream &s, bool is_err);
    bool open_output_files();
    bool repeated_warning(const Rank &r, std::string_view line, Clock::time_point now);
    void report_repeats(Clock::time_point now, bool all);
    void line_prefix(const Rank &r, bool is_err, FILE *to) const;
    void flush_partial(Rank &r, Stream &s, bool is_err);
    void reap();
    void fail(int rank, const std::string &msg, int code);
    void terminate(int sig);
    void handle_signal(int sig);
    void defer_error(const std::string &err, Clock::time_point now);
    void check_bootstrap(Clock::time_point now);
    void judge_ft(Clock::time_point now);
    void judge_heartbeats(Clock::time_point now);
    bool done() const;
    std::vector<std::string> job_file_dirs() const;
    static std::string job_file_prefix();
    void remove_job_files();
    int reaper_fd_ = -1; // mpirun_reaper.h

    Options opt_;
    std::vector<Host> hosts_;
    std::vector<Rank> ranks_;
    std::vector<CoreSet> cores_;
    int listen_fd_ = -1;
    int port_ = 0;
    int sig_fd_ = -1;
    std::unique_ptr<Server> server_;
    bool failing_ = false;
    int exit_code_ = 0;
    int ft_exit_code_ = 0; // fault tolerance: the first surviving rank's nonzero exit
    int signals_seen_ = 0;
    Clock::time_point start_ = Clock::now();
    std::optional<Clock::time_point> kill_at_;
    std::string server_error_;
    std::optional<Clock::time_point> server_error_at_;
    // Out of file descriptors: accept() waits until then, and the job ends when it lasts
    // longer than --bootstrap-timeout.
    Clock::time_point accept_after_{};
    // When poll() last returned: the failure detector judges silence up to then, never
    // counting time mpirun itself spent elsewhere (a stdout pipe that blocked) against a rank.
    Clock::time_point polled_at_{};
    std::optional<Clock::time_point> fds_exhausted_since_;
    bool warned_fds_ = false;
    void accept_connections(Clock::time_point now);

    // Warnings (and errors) every rank prints alike are shown once (docs/mpirun.md, "Output"). A
    // warning is its "weft: warning: " line and the lines that came with it (in the same read) from
    // the rank that showed it; another rank's copy is left out line by line, only as far as it is
    // the same, and only within warning_window of the first.
    struct Warning {
        std::vector<std::string> lines;
        Clock::time_point first;
        int shown_by = 0;
        uint64_t order = 0;    // which was shown first
        std::set<int> seen;    // ranks that printed it
        std::vector<int> also; // ranks whose copy was left out
    };
    std::map<std::string, Warning> warnings_;
    uint64_t warnings_shown_ = 0;
    struct WarningState {
        std::string key;        // the warning this rank's stderr is in
        size_t at = 0;          // its copy: the next line expected
        bool following = false; // leaving out a copy
        bool recording = false; // the lines that came with a warning it showed
    };
    std::vector<WarningState> warning_state_; // by rank
};

bool Job::setup_hosts()
{
    if (opt_.hosts.empty())
        opt_.hosts.push_back({"localhost", 0});
    const int cores = local_cores();
    for (const auto &spec : opt_.hosts) {
        // The same host named twice adds its slots.
        auto it = std::find_if(hosts_.begin(), hosts_.end(),
                               [&](const Host &h) { return h.name == spec.name; });
        if (it != hosts_.end()) {
            it->slots += spec.slots ? spec.slots : 1;
            continue;
        }
        Host h;
        h.name = spec.name;
        h.local = is_local_host(spec.name);
        h.slots = spec.slots ? spec.slots : (h.local ? cores : 1);
        hosts_.push_back(h);
    }
    std::string error;
    int np = opt_.np;
    for (const auto &app : opt_.more_apps)
        np += app.np;
    // This machine's cores and sockets, as hwloc sees them: for binding and for ppr.
    cores_ = core_sets();
    std::vector<std::vector<int>> socket_cores; // each socket's cores, in order
    for (int c = 0; c < int(cores_.size()); ++c) {
        if (cores_[size_t(c)].socket >= int(socket_cores.size()))
            socket_cores.resize(size_t(cores_[size_t(c)].socket) + 1);
        socket_cores[size_t(cores_[size_t(c)].socket)].push_back(c);
    }
    std::erase_if(socket_cores, [](const std::vector<int> &v) { return v.empty(); });
    if (opt_.map_by == MapBy::ppr) {
        const bool per_node = opt_.ppr_unit == PprUnit::node;
        const char *unit = opt_.ppr_unit == PprUnit::socket ? "socket" : "core";
        const int units =
            opt_.ppr_unit == PprUnit::socket ? int(socket_cores.size()) : int(cores_.size());
        for (auto &h : hosts_) {
            if (per_node) {
                h.ppr_ranks = opt_.ppr;
                continue;
            }
            if (!h.local) {
                say(opt_.map_spelling + ": mpirun cannot tell how many " + unit + "s host " +
                    h.name + " has (it sees only this machine's); use ppr:N:node (-N N) there");
                return false;
            }
            if (units == 0) {
                say(opt_.map_spelling + ": mpirun cannot tell how many " + unit +
                    "s this machine has (Weft was built without hwloc); use ppr:N:node or -N");
                return false;
            }
            h.ppr_ranks = opt_.ppr * units;
            h.ppr_why = std::to_string(opt_.ppr) + " per " + unit + ", " + std::to_string(units) +
                        " " + unit + (units == 1 ? "" : "s");
        }
    }
    if (!map_ranks(hosts_, np, opt_.oversubscribe, ranks_, error, opt_.map_by, opt_.map_spelling)) {
        say(error);
        return false;
    }
    // MPMD: the first np ranks run the first program, the next ones the next.
    for (int k = 0, first = opt_.np; k < int(opt_.more_apps.size()); ++k) {
        for (int r = first; r < first + opt_.more_apps[size_t(k)].np; ++r)
            ranks_[size_t(r)].app = k + 1;
        first += opt_.more_apps[size_t(k)].np;
    }
    for (auto &h : hosts_) {
        if (h.local) {
            h.mpirun_addr = "127.0.0.1";
            continue;
        }
        h.mpirun_addr =
            opt_.bootstrap_addr.empty() ? route_source_addr(h.name) : opt_.bootstrap_addr;
        if (h.mpirun_addr.empty() && h.placed) {
            say("cannot find an address of this machine that host '" + h.name +
                "' can reach; give one with --bootstrap-addr ADDR");
            return false;
        }
    }
    // Binding: a core per rank on this machine, unless it is oversubscribed. The host's ranks
    // take its cores in turn; under ppr:N:socket the cores of their socket, under ppr:N:core N
    // ranks share each core.
    for (auto &h : hosts_) {
        if (!h.local)
            continue;
        bool bind = opt_.bind == Bind::core ||
                    (opt_.bind == Bind::automatic && h.placed <= int(cores_.size()));
        if (!bind || cores_.empty())
            continue;
        const int n = opt_.ppr;
        int k = 0;
        for (auto &r : ranks_) {
            if (r.host != &h)
                continue;
            const int j = k++;
            if (opt_.map_by == MapBy::ppr && opt_.ppr_unit == PprUnit::socket) {
                const auto &mine = socket_cores[size_t(j / n) % socket_cores.size()];
                r.core = mine[size_t(j % n) % mine.size()];
            } else if (opt_.map_by == MapBy::ppr && opt_.ppr_unit == PprUnit::core) {
                r.core = (j / n) % int(cores_.size());
            } else {
                r.core = j % int(cores_.size());
            }
        }
    }
    return true;
}

bool Job::listen_socket()
{
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (listen_fd_ < 0) {
        say(std::string("socket: ") + std::strerror(errno));
        return false;
    }
    int one = 1;
    setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    // Every rank here: loopback only. Ranks elsewhere that all reach mpirun at one address
    // of this machine: that address only (the ranks here use it too). Otherwise every
    // address.
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool bound = false;
    std::set<std::string> remote_addrs;
    for (const auto &h : hosts_)
        if (!h.local && h.placed)
            remote_addrs.insert(h.mpirun_addr);
    if (!remote_addrs.empty()) {
        addr.sin_addr.s_addr = htonl(INADDR_ANY);
        in_addr single{};
        if (remote_addrs.size() == 1 &&
            inet_pton(AF_INET, remote_addrs.begin()->c_str(), &single) == 1) {
            sockaddr_in only = addr;
            only.sin_addr = single;
            if (bind(listen_fd_, reinterpret_cast<sockaddr *>(&only), sizeof only) == 0) {
                addr = only;
                bound = true;
                for (auto &h : hosts_)
                    h.mpirun_addr = *remote_addrs.begin();
            }
            // Else (an address this machine does not have, behind NAT say): every address.
        }
    }
    socklen_t len = sizeof addr;
    if ((!bound && bind(listen_fd_, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0) ||
        listen(listen_fd_, SOMAXCONN) != 0 ||
        getsockname(listen_fd_, reinterpret_cast<sockaddr *>(&addr), &len) != 0) {
        say(std::string("cannot listen for the ranks: ") + std::strerror(errno));
        return false;
    }
    port_ = ntohs(addr.sin_port);
    return true;
}

std::vector<std::string> Job::rank_env(const Rank &r) const
{
    std::vector<std::string> env;
    env.push_back("MPIRUN_NPROCS=" + std::to_string(ranks_.size()));
    env.push_back("MPIRUN_RANK=" + std::to_string(r.rank));
    // Its place among the ranks on its host, under Weft's names and Open MPI's (scripts and
    // programs written for Open MPI read these, for example to pick a device per rank).
    int local_rank = 0, local_size = 0;
    for (const Rank &o : ranks_)
        if (o.host == r.host) {
            local_rank += o.rank < r.rank;
            ++local_size;
        }
    for (const char *prefix : {"WEFT_", "OMPI_COMM_WORLD_"}) {
        env.push_back(std::string(prefix) + "LOCAL_RANK=" + std::to_string(local_rank));
        env.push_back(std::string(prefix) + "LOCAL_SIZE=" + std::to_string(local_size));
    }
    env.push_back("OMPI_COMM_WORLD_RANK=" + std::to_string(r.rank));
    env.push_back("OMPI_COMM_WORLD_SIZE=" + std::to_string(ranks_.size()));
    env.push_back("OMPI_COMM_WORLD_NODE_RANK=" + std::to_string(local_rank));
    env.push_back("OMPI_APPNUM=" + std::to_string(r.app)); // which program (MPMD, ':')
    env.push_back("WEFT_APPNUM=" + std::to_string(r.app));
    env.push_back("MPIRUN_ID=" + std::to_string(getpid()));
    env.push_back("MPIRUN_HOST=" + r.host->mpirun_addr);
    env.push_back("MPIRUN_PORT=" + std::to_string(port_));
    env.push_back("WEFT_HOSTNAME=" + r.host->name);
    env.push_back("WEFT_MPIRUN_EVENTS=1"); // this mpirun serves the event channel
    // Fault tolerance: every rank talks to mpirun itself. The bootstrap's tree (ranks relaying
    // for each other) would break with the first rank that dies, and take its subtree along;
    // mpirun completes a barrier without the dead.
    if (opt_.ft)
        env.push_back("MPIRUN_USE_TREES=0");
    if (opt_.detector_period > 0) // the failure detector: how often to beat
        env.push_back("WEFT_PMGR_HEARTBEAT_MS=" +
                      std::to_string(std::max(1L, std::lround(opt_.detector_period * 1000))));
    for (const auto &[name, value] : opt_.exports) {
        if (value)
            env.push_back(name + "=" + *value);
        else if (const char *v = std::getenv(name.c_str()))
            env.push_back(name + "=" + v);
    }
    // Which WEFT_MCA_ variables are this mpirun's --mca, so that the ranks report their source
    // as the command line (framework/mca/mca_param.cc); set when empty too, so that one left in
    // the environment by an outer mpirun does not speak for this one.
    std::string from_mca;
    for (const auto &[name, value] : opt_.mca) {
        env.push_back("WEFT_MCA_" + name + "=" + value);
        from_mca += (from_mca.empty() ? "" : ",") + name;
    }
    env.push_back("WEFT_MPIRUN_MCA=" + from_mca);
    if (!r.host->local) {
        // A remote shell starts afresh: carry the settings that steer the
        // bootstrap and Weft's parameters, under what is set above (-x, --mca).
        std::set<std::string> set_here;
        for (const auto &kv : env)
            set_here.insert(kv.substr(0, kv.find('=')));
        for (char **e = environ; *e; ++e) {
            std::string kv = *e;
            if (set_here.count(kv.substr(0, kv.find('='))))
                continue;
            bool steer = (kv.rfind("MPIRUN_", 0) == 0 && kv.rfind("MPIRUN_RANK=", 0) != 0 &&
                          kv.rfind("MPIRUN_NPROCS=", 0) != 0 && kv.rfind("MPIRUN_ID=", 0) != 0 &&
                          kv.rfind("MPIRUN_HOST=", 0) != 0 && kv.rfind("MPIRUN_PORT=", 0) != 0) ||
                         kv.rfind("WEFT_", 0) == 0;
            if (steer)
                env.push_back(kv);
        }
    }
    return env;
}

bool Job::spawn(Rank &r)
{
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
        say(std::string("pipe: ") + std::strerror(errno));
        return false;
    }
    std::vector<std::string> env = rank_env(r);
    if (std::string error; !add_job_secret(env, error)) {
        say(error);
        return false;
    }
    std::vector<std::string> args;
    if (r.host->local) {
        args = opt_.app_command(r.app);
    } else {
        // Through the launch agent, by a local shell: "{host}" is replaced,
        // or the host is appended (ssh host ...).
        std::string agent = opt_.launch_agent;
        if (auto pos = agent.find("{host}"); pos != std::string::npos)
            agent.replace(pos, 6, r.host->name);
        else
            agent += " " + shell_quote(r.host->name);
        std::string cmd = "env";
        std::vector<std::string> agent_env; // what the agent carries in its environment
        for (const auto &kv : env)
            if (is_job_secret(kv))
                agent_env.push_back(kv); // a command line is visible to everyone (ps)
            else
                cmd += " " + shell_quote(kv);
        for (const auto &a : opt_.app_command(r.app))
            cmd += " " + shell_quote(a);
        std::string prog = agent.substr(0, agent.find(' '));
        prog = prog.substr(prog.rfind('/') + 1);
        std::string feed; // what the local shell pipes into the agent first
        if (prog == "ssh" || prog == "rsh") {
            char cwd[4096] = ".";
            if (!getcwd(cwd, sizeof cwd))
                std::strcpy(cwd, ".");
            // ssh passes no environment by default: the secret goes as the first line of the
            // remote command's standard input (printf is the shell's own: no command line
            // holds it), read there by a POSIX shell whatever the user's login shell is; the
            // rest of the input (rank 0: mpirun's) follows for the program.
            const std::string remote = "IFS= read -r WEFT_JOB_SECRET && export WEFT_JOB_SECRET && "
                                       "cd " +
                                       shell_quote(cwd) + " && exec " + cmd;
            cmd = shell_quote("exec /bin/sh -c " + shell_quote(remote));
            feed = std::string("{ printf '%s\\n' \"$WEFT_JOB_SECRET\"; ") +
                   (r.rank == 0 ? "exec cat; " : "") + "} | ";
        }
        args = {"/bin/sh", "-c", feed + agent + " " + cmd};
        env = std::move(agent_env);
    }
    std::vector<char *> argv, envp;
    for (auto &a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> full_env;
    for (char **e = environ; *e; ++e)
        full_env.emplace_back(*e);
    for (const auto &kv : env) {
        std::string name = kv.substr(0, kv.find('='));
        std::erase_if(full_env, [&](const std::string &x) { return x.rfind(name + "=", 0) == 0; });
        full_env.push_back(kv);
    }
    for (auto &kv : full_env)
        envp.push_back(kv.data());
    envp.push_back(nullptr);
    std::vector<int> pus = r.core >= 0 ? cores_[r.core].pus : std::vector<int>{};
    if (opt_.report_bindings) {
        std::string where = "not bound";
        if (!r.host->local)
            where = "not bound by mpirun (another host)";
        else if (!pus.empty()) {
            where = "bound to core " + std::to_string(r.core) + " (processing unit" +
                    (pus.size() == 1 ? " " : "s ");
            for (size_t k = 0; k < pus.size(); ++k)
                where += (k ? "," : "") + std::to_string(pus[k]);
            where += ")";
        }
        say("rank " + std::to_string(r.rank) + " on host " + r.host->name + ": " + where);
    }

    pid_t pid = fork();
    if (pid < 0) {
        say(std::string("fork: ") + std::strerror(errno));
        return false;
    }
    if (pid == 0) {
        setpgid(0, 0);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        signal(SIGPIPE, SIG_DFL);
        dup2(out[1], STDOUT_FILENO);
        dup2(err[1], STDERR_FILENO);
        if (r.rank != 0) {
            int devnull = open("/dev/null", O_RDONLY);
            if (devnull >= 0)
                dup2(devnull, STDIN_FILENO);
        }
        if (!pus.empty()) {
            cpu_set_t set;
            CPU_ZERO(&set);
            for (int pu : pus)
                CPU_SET(pu, &set);
            sched_setaffinity(0, sizeof set, &set);
        }
        execvpe(argv[0], argv.data(), envp.data());
        std::fprintf(stderr, "mpirun: cannot run %s on %s: %s\n", argv[0], r.host->name.c_str(),
                     std::strerror(errno));
        _exit(exit_not_found);
    }
    setpgid(pid, pid);
    close(out[1]);
    close(err[1]);
    r.pid = pid;
    r.out.fd = out[0];
    r.err.fd = err[0];
    return true;
}

// What goes before a line of a rank's output: the time it was passed on (--timestamp-output),
// then the rank and stream (--tag-output).
void Job::line_prefix(const Rank &r, bool is_err, FILE *to) const
{
    if (opt_.timestamp_output) {
        timespec ts{};
        clock_gettime(CLOCK_REALTIME, &ts);
        tm t{};
        localtime_r(&ts.tv_sec, &t);
        char when[64];
        std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &t);
        std::fprintf(to, "[%s.%06ld]", when, long(ts.tv_nsec / 1000));
    }
    if (opt_.tag_output)
        std::fprintf(to, "[1,%d]<%s>:", r.rank, is_err ? "stderr" : "stdout");
    else if (opt_.timestamp_output)
        std::fputc(' ', to);
}

void Job::forward(Rank &r, Stream &s, bool is_err)
{
    char buf[65536];
    ssize_t n = read(s.fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        flush_partial(r, s, is_err);
        close(s.fd);
        s.fd = -1;
        if (s.file >= 0)
            close(s.file);
        s.file = -1;
        return;
    }
    if (s.file >= 0) {
        // The rank's bytes as they are, whole lines or not.
        for (ssize_t done = 0, w; done < n; done += w)
            if ((w = write(s.file, buf + done, size_t(n - done))) < 0) {
                if (errno == EINTR) {
                    w = 0;
                    continue;
                }
                say("--output-filename: cannot write rank " + std::to_string(r.rank) + "'s " +
                    (is_err ? "stderr" : "stdout") + ": " + std::strerror(errno) +
                    "; the rest goes only to the terminal");
                close(s.file);
                s.file = -1;
                break;
            }
    }
    if (!opt_.output_copy && s.file >= 0)
        return;
    s.pending.append(buf, size_t(n));
    FILE *to = is_err ? stderr : stdout;
    const bool dedup = is_err && ranks_.size() > 1;
    const Clock::time_point now = Clock::now();
    size_t start = 0, nl;
    while ((nl = s.pending.find('\n', start)) != std::string::npos) {
        if (dedup && !s.mid_line &&
            repeated_warning(r, std::string_view(s.pending).substr(start, nl - start), now)) {
            start = nl + 1;
            continue;
        }
        if (!s.mid_line)
            line_prefix(r, is_err, to);
        std::fwrite(s.pending.data() + start, 1, nl + 1 - start, to);
        s.mid_line = false;
        start = nl + 1;
    }
    s.pending.erase(0, start);
    if (dedup) // what came with a warning is what came in the same read
        warning_state_[size_t(r.rank)].recording = false;
    if (s.pending.size() > max_pending_line) {
        // A line without end: pass it on in pieces rather than hold it.
        if (!s.mid_line)
            line_prefix(r, is_err, to);
        std::fwrite(s.pending.data(), 1, s.pending.size(), to);
        s.pending.clear();
        s.mid_line = true;
    }
    std::fflush(to);
}

// Whether `line` of rank r's stderr is another rank's warning again (and is left out). Called
// for every whole line of stderr, in order.
bool Job::repeated_warning(const Rank &r, std::string_view line, Clock::time_point now)
{
    WarningState &st = warning_state_[size_t(r.rank)];
    auto it = warnings_.find(st.key);
    if (st.following) {
        if (it != warnings_.end() && st.at < it->second.lines.size() &&
            it->second.lines[st.at] == line) {
            ++st.at;
            return true;
        }
        st.following = false;
    }
    if (st.recording && it != warnings_.end() && line.substr(0, 6) != "weft: ") {
        it->second.lines.emplace_back(line);
        return false;
    }
    st.recording = false;
    if (std::none_of(std::begin(warning_prefixes), std::end(warning_prefixes),
                     [&](std::string_view p) { return line.substr(0, p.size()) == p; }))
        return false;
    it = warnings_.find(std::string(line));
    if (it != warnings_.end() && now - it->second.first < warning_window &&
        !it->second.seen.count(r.rank)) {
        it->second.seen.insert(r.rank);
        it->second.also.push_back(r.rank);
        st = {it->first, 1, true, false};
        return true;
    }
    // New, or printed again by a rank that printed it already: shown, and remembered afresh
    // (what was left out of the earlier one is said first).
    if (it != warnings_.end())
        it->second.first = Clock::time_point{};
    report_repeats(now, false);
    Warning w;
    w.lines.emplace_back(line);
    w.first = now;
    w.shown_by = r.rank;
    w.order = ++warnings_shown_;
    w.seen.insert(r.rank);
    warnings_[std::string(line)] = std::move(w);
    st = {std::string(line), 0, false, true};
    return false;
}

// Say which ranks' copies of a warning were left out, once its window has passed (all: now, as
// the job ends), and forget it.
void Job::report_repeats(Clock::time_point now, bool all)
{
    std::vector<std::map<std::string, Warning>::iterator> due; // in the order they were shown
    for (auto it = warnings_.begin(); it != warnings_.end(); ++it)
        if (all || now - it->second.first >= warning_window)
            due.push_back(it);
    std::sort(due.begin(), due.end(),
              [](const auto &a, const auto &b) { return a->second.order < b->second.order; });
    for (auto it : due) {
        Warning &w = it->second;
        if (!w.also.empty()) {
            std::sort(w.also.begin(), w.also.end());
            std::string list;
            for (size_t k = 0; k < w.also.size();) {
                size_t e = k;
                while (e + 1 < w.also.size() && w.also[e + 1] == w.also[e] + 1)
                    ++e;
                list += (list.empty() ? "" : ",") + std::to_string(w.also[k]) +
                        (e > k ? "-" + std::to_string(w.also[e]) : "");
                k = e + 1;
            }
            const bool error = w.lines[0].rfind(warning_prefixes[1], 0) == 0;
            std::string what = w.lines[0].substr(warning_prefixes[error].size());
            if (what.size() > 60)
                what = what.substr(0, 57) + "...";
            say(std::string(w.also.size() == 1 ? "rank " : "ranks ") + list + " printed the same " +
                (error ? "error" : "warning") + " as rank " + std::to_string(w.shown_by) +
                ", shown once: " + what);
        }
        for (auto &st : warning_state_)
            if (st.key == it->first)
                st = {};
        warnings_.erase(it);
    }
}

// --output-filename: DIR/1/rank.N/stdout and stderr for every rank, made before any rank
// starts; the rank number has as many digits as the job's size (rank.07 of 12), as Open MPI 4
// writes it.
bool Job::open_output_files()
{
    if (opt_.output_dir.empty())
        return true;
    const std::string top = opt_.output_dir + (opt_.output_jobid ? "/1" : "");
    const int digits = int(std::to_string(ranks_.size()).size());
    auto make_dirs = [](const std::string &path, std::string &error) {
        for (size_t pos = 1; pos != std::string::npos;) {
            pos = path.find('/', pos + 1);
            const std::string dir = path.substr(0, pos);
            struct stat st;
            if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
                error = "cannot make " + dir + ": " + std::strerror(errno);
                return false;
            }
            if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
                error = dir + " is there but is not a directory";
                return false;
            }
        }
        return true;
    };
    for (auto &r : ranks_) {
        char name[32];
        std::snprintf(name, sizeof name, "rank.%0*d", digits, r.rank);
        const std::string dir = top + "/" + name;
        std::string error;
        if (!make_dirs(dir, error)) {
            say("--output-filename '" + opt_.output_dir + "': " + error);
            return false;
        }
        for (auto [stream, file] : {std::pair{&r.out, "/stdout"}, std::pair{&r.err, "/stderr"}}) {
            stream->file = open((dir + file).c_str(),
                                O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644);
            if (stream->file < 0) {
                say("--output-filename '" + opt_.output_dir + "': cannot open " + dir + file +
                    ": " + std::strerror(errno));
                return false;
            }
        }
    }
    return true;
}

void Job::flush_partial(Rank &r, Stream &s, bool is_err)
{
    if (s.pending.empty() && !s.mid_line)
        return;
    FILE *to = is_err ? stderr : stdout;
    if (!s.mid_line)
        line_prefix(r, is_err, to);
    std::fwrite(s.pending.data(), 1, s.pending.size(), to);
    std::fputc('\n', to);
    std::fflush(to);
    s.pending.clear();
    s.mid_line = false;
}

void Job::terminate(int sig)
{
    for (auto &r : ranks_)
        if (r.pid > 0 && !r.exited)
            kill(-r.pid, sig);
}

void Job::fail(int rank, const std::string &msg, int code)
{
    if (failing_)
        return;
    failing_ = true;
    exit_code_ = code;
    say(msg);
    if (rank >= 0 && server_ && server_->has_event_channel(rank))
        server_->notify_failed(rank, -1, 0);
    terminate(SIGTERM);
    kill_at_ = Clock::now() + std::chrono::seconds(3);
}

void Job::reap()
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        auto it =
            std::find_if(ranks_.begin(), ranks_.end(), [&](const Rank &r) { return r.pid == pid; });
        if (it == ranks_.end())
            continue;
        Rank &r = *it;
        r.exited = true;
        r.status = status;
        if (failing_)
            continue;
        // Judged by check_bootstrap a moment later, once what the rank sent
        // before it exited (its CLOSE, its abort request) has been read.
        r.exit_time = Clock::now();
    }
}

void Job::handle_signal(int sig)
{
    if (sig == SIGCHLD) {
        reap();
        return;
    }
    ++signals_seen_;
    if (signals_seen_ == 1) {
        say(std::string("received ") + strsignal(sig) + "; passing it to every rank");
        failing_ = true;
        exit_code_ = 128 + sig;
        terminate(sig);
        kill_at_ = Clock::now() + std::chrono::seconds(5);
    } else {
        say("received another signal; killing every rank");
        terminate(SIGKILL);
    }
}

// A bootstrap error waits a moment before it ends the job: when a rank
// aborts, its abort request (the cause) arrives just after the protocol
// trouble it leaves behind, and should be what the user reads.
void Job::defer_error(const std::string &err, Clock::time_point now)
{
    if (err.empty() || server_error_at_)
        return;
    server_error_ = err;
    server_error_at_ = now + std::chrono::milliseconds(300);
}

// Fault tolerance (--with-ft ulfm): a rank that ends without finalizing, once it was part of
// MPI (its event channel open), is a failed process. The others are told and go on; mpirun
// says so once. A rank that finalized and then exits nonzero gives the job its exit status.
// A rank still alive whose bootstrap connection closed without PMGR_CLOSE is gone for the
// server: it is killed (fail-stop), and judged as failed when reaped.
void Job::judge_ft(Clock::time_point now)
{
    const auto grace = std::chrono::milliseconds(300);
    for (auto &r : ranks_) {
        if (!r.exited && r.pid > 0 && server_->gone(r.rank) && !r.ft_killed) {
            r.ft_killed = true;
            kill(-r.pid, SIGKILL);
        }
        if (!r.exit_time || !server_->has_event_channel(r.rank))
            continue;
        // Judged once what it sent before it ended has been read (its connections closed),
        // or after the grace period.
        if (server_->has_open_connection(r.rank) && now < *r.exit_time + grace)
            continue;
        r.exit_time.reset();
        const std::string who = "rank " + std::to_string(r.rank) + " (pid " +
                                std::to_string(r.pid) + ") on host " + r.host->name;
        if (server_->finalized(r.rank)) {
            if (WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0)
                continue;
            say(who + " " + describe_status(r.status) + " after MPI_Finalize");
            if (ft_exit_code_ == 0)
                ft_exit_code_ = exit_code_of(r.status);
            continue;
        }
        say(who + " " + describe_status(r.status) +
            (WIFEXITED(r.status) ? " without calling MPI_Finalize" : "") +
            "; the job goes on without it (fault tolerance is on)");
        server_->notify_failed(r.rank, WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1,
                               WIFSIGNALED(r.status) ? WTERMSIG(r.status) : 0);
        defer_error(server_->rank_failed(r.rank), now);
    }
}

// The failure detector (mpi_ft_detector_period): a rank whose event channel is open and that
// has not beaten for mpi_ft_detector_timeout seconds (stopped, its host frozen or unreachable) is
// declared failed: it is killed, which makes it fail-stop (it cannot come back and speak for a
// process the others gave up on), and judge_ft tells the others once it is reaped.
void Job::judge_heartbeats(Clock::time_point now)
{
    const auto timeout = std::chrono::duration<double>(opt_.detector_timeout);
    for (auto &r : ranks_) {
        if (r.exited || r.pid <= 0 || r.ft_killed)
            continue;
        const auto beat = server_->last_beat(r.rank);
        if (!beat || now - *beat < timeout)
            continue;
        char secs[32];
        std::snprintf(secs, sizeof secs, "%.3g",
                      std::chrono::duration<double>(now - *beat).count());
        say("rank " + std::to_string(r.rank) + " (pid " + std::to_string(r.pid) + ") on host " +
            r.host->name + " sent no heartbeat for " + secs +
            " s (mpi_ft_detector_timeout); declaring it failed and killing it");
        r.ft_killed = true;
        kill(-r.pid, SIGKILL);
    }
}

void Job::check_bootstrap(Clock::time_point now)
{
    defer_error(server_->tick(), now);
    if (opt_.ft && opt_.detector_period > 0)
        judge_heartbeats(polled_at_);
    if (opt_.ft)
        judge_ft(now);
    // When a bootstrap error is due, a rank that died explains it better:
    // judge exited ranks first, at once.
    const bool error_due = server_error_at_ && now >= *server_error_at_;
    // A rank that exited is judged once whatever it sent before exiting has
    // been read (a grace period after its exit): an abort request explains a
    // failure better than the exit status does. When a failed rank is due,
    // every failed rank competes: one killed by a signal first, then the
    // earliest (the others usually failed because of it).
    const auto grace = std::chrono::milliseconds(300);
    std::vector<Rank *> failed;
    bool failure_due = false;
    for (auto &r : ranks_) {
        if (!r.exit_time || (WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0))
            continue;
        failed.push_back(&r);
        failure_due |= error_due || now >= *r.exit_time + grace;
    }
    if (failure_due) {
        std::stable_sort(failed.begin(), failed.end(), [](const Rank *a, const Rank *b) {
            if (WIFSIGNALED(a->status) != WIFSIGNALED(b->status))
                return WIFSIGNALED(a->status);
            return *a->exit_time < *b->exit_time;
        });
        const Rank &r = *failed.front();
        // An exit status after MPI_Init and before MPI_Finalize says so (a signal needs no
        // more words).
        const bool unfinalized = WIFEXITED(r.status) && server_->has_event_channel(r.rank) &&
                                 !server_->finalized(r.rank);
        fail(r.rank,
             "rank " + std::to_string(r.rank) + " (pid " + std::to_string(r.pid) + ") on host " +
                 r.host->name + " " + describe_status(r.status) +
                 (unfinalized ? " without calling MPI_Finalize" : "") + "; ending the job",
             exit_code_of(r.status));
        return;
    }
    for (auto &r : ranks_) {
        if (!r.exit_time || !(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0))
            continue;
        // Nothing more can come from a rank with no connection open and no
        // connection yet unread: judge it at once. A clean exit never
        // explains more than a pending bootstrap error.
        const bool settled = !server_->has_open_connection(r.rank) && !server_->has_undecided();
        // Except an exit after MPI_Init without MPI_Finalize: that explains the bootstrap error
        // it causes (its connection closed without PMGR_CLOSE).
        const bool unfinalized = server_->has_event_channel(r.rank) && !server_->finalized(r.rank);
        if ((server_error_at_ && !unfinalized) || (!settled && now < *r.exit_time + grace))
            continue;
        r.exit_time.reset();
        const std::string who = "rank " + std::to_string(r.rank) + " (pid " +
                                std::to_string(r.pid) + ") on host " + r.host->name;
        // An MPI rank (its event channel opened in MPI_Init) keeps its bootstrap open until
        // MPI_Finalize: its exit without it is said in those words, before the bootstrap's.
        if (unfinalized) {
            fail(r.rank,
                 who + " exited with status 0 without calling MPI_Finalize (it called MPI_Init, "
                       "then returned from main or called exit); ending the job",
                 1);
        } else if (server_->in_collectives(r.rank)) {
            fail(r.rank,
                 who + " exited in the middle of the bootstrap (after pmgr_open, before "
                       "pmgr_close); ending the job",
                 1);
        } else if (server_->started() && !server_->joined(r.rank) && !server_->all_closed()) {
            // Once the bootstrap has begun, every rank must join it: one that
            // ended without joining leaves the others waiting for ever.
            fail(r.rank,
                 who + " exited without joining the bootstrap that the other ranks are in; "
                       "ending the job",
                 1);
        }
        if (failing_)
            return;
    }
    if (error_due)
        fail(-1, server_error_ + "; ending the job", 1);
}

bool Job::done() const
{
    for (const auto &r : ranks_)
        if (!r.exited || r.out.fd >= 0 || r.err.fd >= 0 || (r.exit_time && !failing_))
            return false;
    return true;
}

int Job::run()
{
    if (!setup_hosts())
        return exit_usage;
    // The ranks' working directory is mpirun's from here (the host file is read already): local
    // ranks inherit it, ranks through ssh change to it, and a relative program path is found
    // from it, as the ranks will find it.
    if (!opt_.wdir.empty() && chdir(opt_.wdir.c_str()) != 0) {
        say("--wdir '" + opt_.wdir + "': " + std::strerror(errno));
        return exit_usage;
    }
    bool any_local =
        std::any_of(ranks_.begin(), ranks_.end(), [](const Rank &r) { return r.host->local; });
    for (int k = 0; any_local && k <= int(opt_.more_apps.size()); ++k)
        if (const std::string &prog = opt_.app_command(k)[0]; find_executable(prog).empty()) {
            say("cannot run '" + prog + "': no such executable file (searched " +
                (prog.find('/') != std::string::npos ? std::string("that path")
                                                     : std::string("PATH")) +
                ")");
            return exit_not_found;
        }
    warning_state_.resize(ranks_.size());
    if (!open_output_files())
        return exit_usage;
    if (!listen_socket())
        return 1;
    const char *dbg = std::getenv("MPIRUN_DEBUG");
    ServerLimits limits;
    limits.max_size = opt_.bootstrap_max_size;
    limits.max_round = std::max(limits.max_round, opt_.bootstrap_max_size);
    limits.io_s = opt_.bootstrap_timeout;
    server_ = std::make_unique<Server>(int(ranks_.size()), dbg ? std::atoi(dbg) : 0, limits);
    server_->set_fault_tolerant(opt_.ft);
    // Before the signal mask below, which the reaper must not inherit.
    reaper_fd_ = start_reaper(job_file_dirs(), job_file_prefix());

    sigset_t mask;
    sigemptyset(&mask);
    for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT})
        sigaddset(&mask, s);
    sigprocmask(SIG_BLOCK, &mask, nullptr);
    sig_fd_ = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    signal(SIGPIPE, SIG_IGN);

    for (auto &r : ranks_) {
        if (!spawn(r)) {
            fail(-1, "could not start rank " + std::to_string(r.rank), 1);
            break;
        }
    }
    const bool has_deadline = opt_.timeout > 0;
    const Clock::time_point deadline =
        has_deadline ? start_ + std::chrono::milliseconds(int64_t(opt_.timeout * 1000))
                     : Clock::time_point::max();
    while (!done()) {
        std::vector<pollfd> pfds;
        pfds.push_back({sig_fd_, POLLIN, 0});
        auto now = Clock::now();
        // Not accepting (too many undecided connections, or out of descriptors): new
        // connections wait in the listen backlog.
        const bool accepting = server_->accepting() && now >= accept_after_;
        pfds.push_back({accepting ? listen_fd_ : -1, POLLIN, 0});
        const std::vector<pollfd> server_fds = server_->poll_fds();
        pfds.insert(pfds.end(), server_fds.begin(), server_fds.end());
        std::vector<std::pair<Rank *, bool>> streams;
        for (auto &r : ranks_) {
            if (r.out.fd >= 0) {
                pfds.push_back({r.out.fd, POLLIN, 0});
                streams.emplace_back(&r, false);
            }
            if (r.err.fd >= 0) {
                pfds.push_back({r.err.fd, POLLIN, 0});
                streams.emplace_back(&r, true);
            }
        }
        int wait_ms = 1000;
        if (has_deadline && !failing_)
            wait_ms = int(std::clamp<int64_t>(
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count(), 0,
                1000));
        if (server_error_at_ || std::any_of(ranks_.begin(), ranks_.end(),
                                            [](const Rank &r) { return r.exit_time.has_value(); }))
            wait_ms = std::min(wait_ms, 50);
        if (server_->has_timers() || !accepting)
            wait_ms = std::min(wait_ms, 100);
        if (opt_.detector_period > 0) // the failure detector looks at least every period
            wait_ms = std::min(wait_ms, std::max(1, int(opt_.detector_period * 1000)));
        if (kill_at_)
            wait_ms = int(std::clamp<int64_t>(
                std::chrono::duration_cast<std::chrono::milliseconds>(*kill_at_ - now).count(), 0,
                wait_ms));
        int n = poll(pfds.data(), pfds.size(), wait_ms);
        if (n < 0 && errno != EINTR) {
            say(std::string("poll: ") + std::strerror(errno));
            terminate(SIGKILL);
            return 1;
        }
        now = Clock::now();
        polled_at_ = now;
        if (has_deadline && !failing_ && now >= deadline) {
            char secs[32];
            std::snprintf(secs, sizeof secs, "%g", opt_.timeout);
            fail(-1, "the job ran past " + opt_.timeout_from + " " + secs + " seconds; ending it",
                 exit_timeout);
        }
        if (kill_at_ && now >= *kill_at_) {
            terminate(SIGKILL);
            kill_at_.reset();
        }
        if (n <= 0) {
            if (!failing_)
                check_bootstrap(now);
            continue;
        }
        if (pfds[0].revents) {
            signalfd_siginfo si;
            while (read(sig_fd_, &si, sizeof si) == sizeof si)
                handle_signal(int(si.ssi_signo));
        }
        if (pfds[1].revents & POLLIN)
            accept_connections(now);
        for (size_t k = 2; k < 2 + server_fds.size(); ++k) {
            if (pfds[k].revents) {
                defer_error(server_->handle(pfds[k].fd, pfds[k].revents), now);
                if (auto ab = server_->take_abort()) {
                    const Rank &r = ranks_[size_t(ab->rank)];
                    fail(
                        ab->rank,
                        "rank " + std::to_string(ab->rank) + " on host " + r.host->name +
                            " called abort with code " + std::to_string(ab->code) +
                            (ab->message.empty() ? std::string() : ": " + escape_text(ab->message)),
                        ab->code ? ab->code : 1);
                }
            }
        }
        // Streams follow the server's descriptors in pfds.
        size_t first_stream = pfds.size() - streams.size();
        for (size_t s = 0; s < streams.size(); ++s) {
            if (!pfds[first_stream + s].revents)
                continue;
            auto [r, is_err] = streams[s];
            forward(*r, is_err ? r->err : r->out, is_err);
        }
        if (!failing_)
            check_bootstrap(Clock::now());
        report_repeats(Clock::now(), false);
    }
    report_repeats(Clock::now(), true);
    remove_job_files();
    if (!failing_)
        return ft_exit_code_;
    return exit_code_;
}

// Accept what the listen backlog holds, up to the server's limit. Out of descriptors
// (EMFILE, ENFILE; fewer than spare_fds would be left) the backlog is left alone for a moment
// instead of polled in a busy loop; mpirun says so once, and ends the job when it lasts longer
// than --bootstrap-timeout.
void Job::accept_connections(Clock::time_point now)
{
    while (server_->accepting()) {
        // Only while spare_fds stay free after it; else as out of descriptors (errno).
        int fd = descriptors_free(listen_fd_)
                     ? accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK)
                     : -1;
        if (fd >= 0) {
            server_->accept(fd);
            fds_exhausted_since_.reset();
            continue;
        }
        if (errno == EINTR || errno == ECONNABORTED)
            continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
            accept_after_ = now + accept_backoff;
            if (!fds_exhausted_since_)
                fds_exhausted_since_ = now;
            if (!warned_fds_) {
                warned_fds_ = true;
                say(std::string("out of file descriptors (accept: ") + std::strerror(errno) +
                    "); new connections wait until some close");
            }
            const auto limit = std::chrono::duration<double>(opt_.bootstrap_timeout);
            if (!failing_ && now - *fds_exhausted_since_ > limit)
                fail(-1,
                     std::string("mpirun has been out of file descriptors for longer than "
                                 "--bootstrap-timeout (accept: ") +
                         std::strerror(errno) + "); raise the limit (ulimit -n); ending the job",
                     1);
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            fds_exhausted_since_.reset();
        return; // the backlog is empty, or an error that another try will report
    }
}

// Directories where the job's ranks make files: /dev/shm, and every segment directory the
// job was given (a parameter named *_segment_dir, such as btl_sm_segment_dir) through --mca,
// -x or this process's environment. A directory a rank sets for itself alone (its own
// environment, a param file) is not seen here; btl/sm removes its file at finalize and when
// every peer has mapped it.
std::vector<std::string> Job::job_file_dirs() const
{
    std::vector<std::string> dirs{"/dev/shm"};
    auto add = [&](const std::string &name, const std::string &value) {
        constexpr std::string_view suffix = "_segment_dir";
        if (name.size() > suffix.size() &&
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
            !value.empty() && std::find(dirs.begin(), dirs.end(), value) == dirs.end())
            dirs.push_back(value);
    };
    const std::string env_prefix = "WEFT_MCA_";
    for (char **e = environ; *e; ++e) {
        const std::string kv = *e;
        const size_t eq = kv.find('=');
        if (kv.rfind(env_prefix, 0) == 0 && eq != std::string::npos)
            add(kv.substr(env_prefix.size(), eq - env_prefix.size()), kv.substr(eq + 1));
    }
    for (const auto &[name, value] : opt_.exports)
        if (value && name.rfind(env_prefix, 0) == 0)
            add(name.substr(env_prefix.size()), *value);
    for (const auto &[name, value] : opt_.mca)
        add(name, value);
    return dirs;
}

// Files the job's ranks left behind (a rank killed before it could unlink its segment):
// every one is named after the job id, which is "pmgr-" and this process's pid
// (weft_runtime_job_file_prefix), whichever directory it is in.
std::string Job::job_file_prefix() { return "weft-pmgr-" + std::to_string(getpid()) + "-"; }

void Job::remove_job_files()
{
    remove_files_with_prefix(job_file_dirs(), job_file_prefix());
    reaper_done(reaper_fd_);
    reaper_fd_ = -1;
}

} // namespace

} // namespace weft::mpirun

int main(int argc, char **argv)
{
    if (argc > 1 && std::strcmp(argv[1], weft::mpirun::kReaperFlag) == 0)
        return weft::mpirun::reaper_main(argc, argv);
    int code = 0;
    auto opt = weft::mpirun::parse_options(argc, argv, code);
    if (!opt)
        return code;
    weft::mpirun::Job job(std::move(*opt));
    return job.run();
}
