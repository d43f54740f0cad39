// mpirun's command line.
#ifndef WEFT_MPIRUN_OPTIONS_H
#define WEFT_MPIRUN_OPTIONS_H

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace weft::mpirun {

enum class Bind { automatic, core, none };

// --map-by: how ranks are put on hosts. slot: each host's slots in turn (the default); core:
// the same across hosts, each rank of this machine on its next core; node: one rank per host in
// turn; ppr: a number of ranks per node, socket or core (-N is ppr:N:node).
enum class MapBy { slot, core, node, ppr };
enum class PprUnit { node, socket, core };

struct HostSpec {
    std::string name;
    int slots = 0; // 0: not given
};

struct Options {
    int np = 0; // 0: one rank per slot
    MapBy map_by = MapBy::slot;
    int ppr = 0; // ppr:N:unit (and -N N): N ranks per unit
    PprUnit ppr_unit = PprUnit::node;
    std::string map_spelling; // how the mapping was asked for ("-N 2"), for messages
    std::vector<HostSpec> hosts;
    std::string hostfile;
    std::vector<std::pair<std::string, std::optional<std::string>>> exports; // -x
    std::vector<std::pair<std::string, std::string>> mca;                    // --mca
    bool oversubscribe = false;
    Bind bind = Bind::automatic;
    bool tag_output = false;
    bool report_bindings = false;  // --report-bindings: say where each rank is bound
    bool timestamp_output = false; // --timestamp-output: each line of output after its time
    std::string launch_agent = "ssh";
    double timeout = 0;                     // seconds; 0: none
    std::string timeout_from = "--timeout"; // or MPIEXEC_TIMEOUT, for the message
    // The bootstrap server's bounds (docs/mpirun.md, "Bounds and timeouts").
    size_t bootstrap_max_size = size_t(1) << 20; // largest per-rank size of a packet
    double bootstrap_timeout = 10;               // seconds a peer may stall the server
    std::string bootstrap_addr;
    std::vector<std::string> command; // program and its arguments
    // More programs, after ':' (MPMD: mpirun -np 2 a : -np 3 b): each with its own -np. The
    // ranks are numbered in order: command's np first, then each of these.
    struct App {
        int np = 0;
        std::vector<std::string> command;
    };
    std::vector<App> more_apps;
    // The program of the app with index k (0: command).
    const std::vector<std::string> &app_command(int k) const
    {
        return k == 0 ? command : more_apps[size_t(k - 1)].command;
    }
    std::string wdir; // --wdir: the ranks' working directory (empty: mpirun's)
    // --output-filename DIR: each rank's stdout and stderr also go to DIR/1/rank.N/stdout and
    // stderr (Open MPI 4's layout); :nocopy, not to the terminal; :nojobid, DIR/rank.N.
    std::string output_dir;
    bool output_copy = true;
    bool output_jobid = true;
    // Fault tolerance (ULFM): --with-ft ulfm, or mpi_ft_enable true for the ranks (by --mca, -x
    // or mpirun's environment). Then a rank that dies does not end the job: the others are
    // told, and the job succeeds when every surviving rank exits 0.
    bool ft = false;
    // The failure detector (fault tolerance only): every rank beats on its event channel every
    // detector_period seconds, and mpirun declares failed (and kills) a rank silent for
    // detector_timeout seconds (mpi_ft_detector_period and _timeout). 0: off.
    double detector_period = 0;
    double detector_timeout = 0;
};

// Parse argv. On a usage error prints a message naming the problem and
// returns nullopt with exit_code 1; for --help / --version prints and returns
// nullopt with exit_code 0.
std::optional<Options> parse_options(int argc, char **argv, int &exit_code);

// Parse "h1,h2:4" into host specs; false with `error` set on bad input.
bool parse_host_list(const std::string &text, std::vector<HostSpec> &out, std::string &error);
// Whether `value` of the boot framework's selection parameter lets the ranks bootstrap
// through mpirun (component pmgr); `error` says why not.
bool boot_selects_mpirun(const std::string &value, std::string &error);
// Parse a hostfile ("host [slots=N]" per line, # comments): a regular file of at most
// max_hostfile_bytes.
constexpr size_t max_hostfile_bytes = size_t(1) << 20;
bool parse_hostfile(const std::string &path, std::vector<HostSpec> &out, std::string &error);

} // namespace weft::mpirun

#endif
