// The parameter registry. It owns every parameter's storage; components hold
// handles (weft_mca_param_t *) and read through the typed accessors.
//
// Sources, highest first: command line (weft_mca_cmdline_set), environment
// WEFT_MCA_<name> (reported as the command line when WEFT_MPIRUN_MCA, a comma list that
// mpirun sets, names it: mpirun --mca passes it that way), param files (WEFT_MCA_PARAM_FILES, or
// $HOME/.weft/mca-params.conf then $sysconfdir/weft-mca-params.conf; an
// earlier file wins), the default from the component's table.
#ifndef WEFT_MCA_PARAM_H
#define WEFT_MCA_PARAM_H

#include "mca_parse.h"

#include <weft/mca.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct weft_mca_param {
    std::string full_name;
    std::string framework;
    std::string component; // empty for framework-level parameters
    weft_mca_param_type_t type = WEFT_MCA_PARAM_STRING;
    std::string default_text;
    std::string help;
    int level = 1;
    weft_mca_param_scope_t scope = WEFT_MCA_SCOPE_LOCAL;
    std::vector<weft::mca::EnumEntry> enums;
    std::vector<std::string> synonyms;
    // The allowed values, as declared ("64..1M"); empty for any. lo/hi hold the
    // parsed ends (INT in .i, SIZE in .size, DOUBLE in .d), when given.
    std::string range;
    std::optional<weft::mca::Value> lo, hi;

    weft::mca::Value value;
    weft_mca_param_source_t source = WEFT_MCA_SOURCE_DEFAULT;
    std::string source_detail; // file:line, the environment variable name, or "mpirun --mca"
};

namespace weft::mca {

// An installation directory as configured (e.g. WEFT_PKGLIBDIR), moved under $WEFT_PREFIX when
// that is set and the directory lies under the configured prefix: an installation copied or
// unpacked elsewhere finds its components and its parameter file there.
std::string install_dir(const char *configured);

using Param = weft_mca_param;

// A framework, component or parameter name: [a-z0-9_]+.
bool valid_name(std::string_view n);

// A performance variable (weft/mca.h), as MPI_T sees it.
struct Pvar {
    std::string full_name, framework, component, help;
    weft_mca_pvar_class_t var_class = WEFT_MCA_PVAR_LEVEL;
    int level = 1;
    uint64_t (*read)(void *) = nullptr; // nullptr once unregistered: `last` is its value
    void *arg = nullptr;
    uint64_t last = 0;
    uint64_t value()
    {
        if (read)
            last = read(arg);
        return last;
    }
};

// Every performance variable, in registration order (never removed: MPI_T's indexes hold).
std::vector<std::unique_ptr<Pvar>> &pvars();

const char *source_name(weft_mca_param_source_t source);

// Whether `v` lies within p's declared range (always, when it has none).
bool in_range(const Param &p, const Value &v);
// The declared range for a message: "64..1M", "1.. (at least 1)".
std::string describe_range(const Param &p);

class Registry {
  public:
    static Registry &instance();

    weft_status_t register_table(const char *framework, const char *component,
                                 const weft_mca_param_def_t *defs, size_t count, size_t def_size,
                                 Param **handles);
    // Register one parameter under its full name (the framework selection
    // parameters are named like the framework, without a suffix).
    weft_status_t register_one(const std::string &full_name, const char *framework,
                               const char *component, const weft_mca_param_def_t &def,
                               Param **handle);
    Param *find(std::string_view name) const;
    weft_status_t set(Param &p, std::string_view value, weft_mca_param_source_t source,
                      const std::string &detail);
    weft_status_t cmdline_set(const std::string &name, const std::string &value);
    int warn_unknown();

    // Every parameter, in registration order.
    const std::vector<std::unique_ptr<Param>> &all() const { return params_; }

    // Forget everything: parameters, given values, warnings. For tests and
    // for re-initialisation after finalize.
    void reset();

  private:
    struct Given {
        std::string value;
        std::string detail;
        bool from_mpirun = false; // in the environment from mpirun --mca (WEFT_MPIRUN_MCA)
    };

    void load_sources();
    void load_file(const std::string &path, bool must_exist);
    weft_status_t resolve(Param &p);
    const Given *lookup(const std::map<std::string, Given> &from, const Param &p, std::string &as);
    std::string nearest(const std::string &name) const;

    std::vector<std::unique_ptr<Param>> params_;
    std::map<std::string, Param *, std::less<>> by_name_;
    std::map<std::string, Given> cmdline_, env_, files_;
    std::map<std::string, bool> warned_;
    bool sources_loaded_ = false;
};

} // namespace weft::mca

#endif
