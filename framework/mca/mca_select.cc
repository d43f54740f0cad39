#include "mca_select.h"

#include "mca_output.h"
#include "mca_param.h"

#include <weft/runtime.h>

#include <algorithm>
#include <map>
#include <memory>

namespace weft::mca {

bool Filter::names_it(const std::string &name) const
{
    return std::find(names.begin(), names.end(), name) != names.end();
}

bool Filter::allows(const std::string &name) const
{
    if (!given)
        return true;
    return exclude != names_it(name);
}

weft_status_t parse_filter(const Framework &fw, const std::vector<std::string> &items,
                           const std::vector<Component *> &known,
                           const std::vector<Rejected> &rejected, Filter &out, std::string &error)
{
    out = Filter{};
    const std::string fwname = fw.name;
    std::string joined;
    for (size_t i = 0; i < items.size(); ++i)
        joined += (i ? "," : "") + items[i];
    for (size_t i = 0; i < items.size(); ++i) {
        std::string name = items[i];
        if (name[0] == '^') {
            if (i != 0) {
                error = fwname + " = '" + joined + "': '^' may only start the list, where it " +
                        "excludes every component listed (e.g. ^a,b); an include list names " +
                        "components without it";
                return WEFT_ERR_BAD_PARAM;
            }
            out.exclude = true;
            name.erase(0, 1);
        }
        if (name.empty() || name.find('^') != std::string::npos) {
            error = fwname + " = '" + joined + "': '" + items[i] + "' is not a component name";
            return WEFT_ERR_BAD_PARAM;
        }
        bool exists = std::any_of(known.begin(), known.end(),
                                  [&](const Component *c) { return c->name == name; });
        if (!exists) {
            auto rej = std::find_if(rejected.begin(), rejected.end(), [&](const Rejected &r) {
                return r.framework == fwname && r.name == name;
            });
            if (rej != rejected.end() && out.exclude) {
                // Excluding a component that cannot load anyway is what the
                // user wants; say nothing.
            } else if (rej != rejected.end()) {
                error = fwname + " = '" + joined + "': component " + fwname + "/" + name +
                        " was found but cannot be used: " + rej->reason + " (" + rej->origin + ")";
            } else {
                std::string avail;
                for (const auto *c : known)
                    avail += (avail.empty() ? "" : ", ") + c->name;
                error = fwname + " = '" + joined + "': there is no " + fwname + " component '" +
                        name + "' (available: " + (avail.empty() ? "none" : avail) + ")";
            }
            if (!(rej != rejected.end() && out.exclude))
                return WEFT_ERR_BAD_PARAM;
        }
        out.names.push_back(name);
    }
    out.given = !out.names.empty();
    return WEFT_SUCCESS;
}

FrameworkBase::FrameworkBase(const Framework &fw) : fw_(fw) {}

int FrameworkBase::verbose() const
{
    int own = verbose_param_ ? int(weft_mca_param_int(verbose_param_)) : 0;
    return std::max(own, Repository::instance().verbose());
}

void FrameworkBase::note(int level, const std::string &text) const
{
    if (verbose() >= level)
        output::emit(output::Kind::verbose, std::string(fw_.name) + ": " + text);
}

weft_status_t FrameworkBase::register_params()
{
    if (select_param_)
        return WEFT_SUCCESS;
    const std::string help = std::string("Which ") + fw_.name + " components may be used (" +
                             fw_.description +
                             "): a comma-separated include list, or an exclude list starting "
                             "with ^ (e.g. ^name1,name2). Empty: all of them.";
    const weft_mca_param_def_t select_def = {.name = "",
                                             .type = WEFT_MCA_PARAM_LIST,
                                             .default_value = "",
                                             .help = help.c_str(),
                                             .level = 2,
                                             .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
                                             .enum_values = nullptr,
                                             .synonyms = nullptr,
                                             .range = nullptr};
    const weft_mca_param_def_t verbose_def = {
        .name = "verbose",
        .type = WEFT_MCA_PARAM_INT,
        .default_value = "0",
        .help = "Verbosity of this framework's base: 0 is quiet, 10 shows every component "
                "opened and queried with its priority or refusal.",
        .level = 5,
        .scope = WEFT_MCA_SCOPE_LOCAL,
        .enum_values = nullptr,
        .synonyms = nullptr,
        .range = nullptr};
    auto &reg = Registry::instance();
    weft_status_t a = reg.register_one(fw_.name, fw_.name, nullptr, select_def, &select_param_);
    weft_status_t b = weft_mca_param_register_table(fw_.name, "base", &verbose_def, 1,
                                                    sizeof verbose_def, &verbose_param_);
    weft_status_t c = fw_.register_base_params ? fw_.register_base_params() : WEFT_SUCCESS;
    return a != WEFT_SUCCESS ? a : b != WEFT_SUCCESS ? b : c;
}

weft_status_t FrameworkBase::check_selection()
{
    std::vector<std::string> items;
    for (size_t i = 0; i < weft_mca_param_list_count(select_param_); ++i)
        items.emplace_back(weft_mca_param_list_item(select_param_, i));
    auto &repo = Repository::instance();
    Filter filter;
    std::string error;
    if (parse_filter(fw_, items, repo.components(fw_.name), repo.rejected(), filter, error) !=
        WEFT_SUCCESS) {
        output::error(error);
        return WEFT_ERR_BAD_PARAM;
    }
    return WEFT_SUCCESS;
}

weft_status_t FrameworkBase::open()
{
    auto &repo = Repository::instance();
    weft_status_t rc = register_params(); // before the components' (register_all says why)
    weft_status_t src = repo.scan();
    if (rc == WEFT_SUCCESS)
        rc = src;
    auto comps = repo.components(fw_.name);

    std::vector<std::string> items;
    for (size_t i = 0; i < weft_mca_param_list_count(select_param_); ++i)
        items.emplace_back(weft_mca_param_list_item(select_param_, i));
    std::string error;
    if (parse_filter(fw_, items, comps, repo.rejected(), filter_, error) != WEFT_SUCCESS) {
        output::error(error);
        return WEFT_ERR_BAD_PARAM;
    }
    if (rc != WEFT_SUCCESS)
        return rc;

    for (Component *c : comps) {
        if (!filter_.allows(c->name)) {
            note(10, c->name + ": excluded by the selection list");
            continue;
        }
        if ((c->desc->flags & WEFT_MCA_FLAG_EXPLICIT_ONLY) &&
            !(filter_.given && !filter_.exclude)) {
            note(10, c->name + ": only used when named in the selection list");
            continue;
        }
        if (c->opened) {
            opened_.push_back(c);
            continue;
        }
        weft_status_t orc = c->desc->open ? c->desc->open() : WEFT_SUCCESS;
        if (orc != WEFT_SUCCESS) {
            std::string msg = c->name + ": open failed: " + weft_status_string(orc);
            if (filter_.given && !filter_.exclude) {
                output::error(std::string(fw_.name) + "/" + msg);
                return orc;
            }
            note(1, msg);
            continue;
        }
        c->opened = true;
        opened_.push_back(c);
        note(10, c->name + ": opened (" + c->origin + ")");
    }
    return WEFT_SUCCESS;
}

weft_status_t FrameworkBase::query(std::vector<Candidate> &accepted)
{
    accepted.clear();
    std::vector<std::pair<std::string, std::string>> refusals;
    std::string bad_params;
    for (Component *c : opened_) {
        int priority = 0;
        char why[256] = "";
        weft_status_t rc = c->desc->query(&priority, why, sizeof why);
        why[sizeof why - 1] = '\0';
        if (rc == WEFT_SUCCESS) {
            accepted.push_back({c, priority});
            note(10, c->name + ": priority " + std::to_string(priority));
        } else {
            std::string reason = why[0] ? why : weft_status_string(rc);
            refusals.emplace_back(c->name, reason);
            note(10, c->name + ": cannot run: " + reason);
            // WEFT_ERR_BAD_PARAM: the user's values do not work. Leaving the component out
            // would quietly change what the job runs on (sm to tcp), so it ends the job.
            if (rc == WEFT_ERR_BAD_PARAM)
                bad_params += "\n  " + std::string(fw_.name) + "/" + c->name + ": " + reason;
        }
    }
    if (!bad_params.empty()) {
        output::show_help(output::Kind::error, "help-mca.txt", "bad-params",
                          {fw_.name, bad_params, fw_.name});
        return WEFT_ERR_BAD_PARAM;
    }
    std::stable_sort(accepted.begin(), accepted.end(), [](const Candidate &a, const Candidate &b) {
        return a.priority != b.priority ? a.priority > b.priority
                                        : a.component->name < b.component->name;
    });

    const bool include = filter_.given && !filter_.exclude;
    std::string named_refusals;
    size_t named_refused = 0;
    for (const auto &[name, reason] : refusals) {
        if (include && filter_.names_it(name)) {
            ++named_refused;
            named_refusals += "\n  " + std::string(fw_.name) + "/" + name + ": " + reason;
        }
    }
    bool fail = fw_.pick == Pick::all ? named_refused > 0
                                      : include && named_refused == filter_.names.size();
    if (fail) {
        std::string list = std::string(fw_.name) + " = '" + weft_mca_param_string(select_param_) +
                           "', from " + source_name(weft_mca_param_source(select_param_));
        output::show_help(output::Kind::error, "help-mca.txt", "named-cannot-run",
                          {fw_.name, list, named_refusals, fw_.name});
        return WEFT_ERR_NOT_AVAILABLE;
    }
    if (accepted.empty() && fw_.pick == Pick::one) {
        std::string all;
        for (const auto &[name, reason] : refusals)
            all += "\n  " + std::string(fw_.name) + "/" + name + ": " + reason;
        output::show_help(
            output::Kind::error, "help-mca.txt", "none-can-run",
            {fw_.name, all.empty() ? std::string(" none is available") : all, fw_.name});
        return WEFT_ERR_NOT_FOUND;
    }
    return WEFT_SUCCESS;
}

weft_status_t FrameworkBase::select_one(Component *&selected)
{
    selected = nullptr;
    std::vector<Candidate> accepted;
    weft_status_t rc = query(accepted);
    if (rc != WEFT_SUCCESS)
        return rc;
    selected = accepted.front().component;
    note(1, "selected " + selected->name + " (priority " +
                std::to_string(accepted.front().priority) + ")");
    for (Component *c : std::vector<Component *>(opened_))
        if (c != selected)
            close_one(c);
    return WEFT_SUCCESS;
}

weft_status_t FrameworkBase::select_all(std::vector<Candidate> &selected)
{
    weft_status_t rc = query(selected);
    if (rc != WEFT_SUCCESS)
        return rc;
    for (Component *c : std::vector<Component *>(opened_)) {
        bool keep = std::any_of(selected.begin(), selected.end(),
                                [&](const Candidate &s) { return s.component == c; });
        if (!keep)
            close_one(c);
    }
    return WEFT_SUCCESS;
}

void FrameworkBase::close_one(Component *c)
{
    if (c->opened && c->desc->close)
        c->desc->close();
    c->opened = false;
    // Its performance variables may read state that is gone now: they keep their last value.
    for (auto &v : pvars())
        if (v->framework == fw_.name && v->component == c->name)
            v->read = nullptr;
    opened_.erase(std::remove(opened_.begin(), opened_.end(), c), opened_.end());
}

void FrameworkBase::close()
{
    while (!opened_.empty())
        close_one(opened_.back());
}

namespace {

std::map<std::string, std::unique_ptr<FrameworkBase>, std::less<>> &bases()
{
    static std::map<std::string, std::unique_ptr<FrameworkBase>, std::less<>> b;
    return b;
}

} // namespace

FrameworkBase *framework_base(std::string_view name)
{
    auto &b = bases();
    if (auto it = b.find(name); it != b.end())
        return it->second.get();
    const Framework *fw = find_framework(name);
    if (!fw)
        return nullptr;
    auto [it, ok] = b.emplace(std::string(name), std::make_unique<FrameworkBase>(*fw));
    (void)ok;
    return it->second.get();
}

// The MPI layer's own parameters (mpi_*), which components read (weft_mca_param_find).
static weft_status_t register_mpi_params()
{
    if (weft_mca_param_find("mpi_leave_pinned"))
        return WEFT_SUCCESS;
    const weft_mca_param_def_t defs[] = {
        {.name = "leave_pinned",
         .type = WEFT_MCA_PARAM_BOOL,
         .default_value = "0",
         .help = "Keep memory registered for RDMA after a message (the PML's registration "
                 "cache), so that later messages from the same buffer skip registering, and "
                 "prefer RDMA direct put/get over the RDMA pipeline. Buffers must not be freed "
                 "while registered by BTLs that pin pages (openib).",
         .level = 4,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "ft_enable",
         .type = WEFT_MCA_PARAM_BOOL,
         .default_value = "0",
         .help = "Fault tolerance (ULFM, mpi-ext.h): a process that dies does not end the job; "
                 "the others learn of it, their calls that involve it return "
                 "MPIX_ERR_PROC_FAILED, and they may revoke, shrink and agree to go on. "
                 "mpirun --with-ft ulfm sets it for every rank (and mpirun then keeps the job "
                 "running). The same value at every rank of a job.",
         .level = 1,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "ft_verbose",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "0",
         .help = "What fault tolerance says on the error output: 1 each process failure a "
                 "rank learns, and how; 10 each revoke, shrink and agreement step.",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "0..100"},
        {.name = "ft_detector_period",
         .type = WEFT_MCA_PARAM_DOUBLE,
         .default_value = "0",
         .help = "Fault tolerance's failure detector for processes that stop (mpirun "
                 "only): every process tells mpirun it is alive every this many seconds, from "
                 "a thread of its own (so a process that computes for long without MPI calls "
                 "is never declared failed); 0 (the default) turns it off, else at least 0.01. "
                 "It finds stopped processes and unreachable hosts; processes that end are "
                 "detected without it.",
         .level = 4,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "0..3600"},
        {.name = "ft_detector_timeout",
         .type = WEFT_MCA_PARAM_DOUBLE,
         .default_value = "0",
         .help = "With the failure detector on (mpi_ft_detector_period), mpirun declares "
                 "failed, and kills, a process it has not heard from for this many seconds; 0 "
                 "means four periods. At least twice the period.",
         .level = 4,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "0..3600"},
    };
    return weft_mca_param_register_table("mpi", nullptr, defs, 5, sizeof defs[0], nullptr);
}

namespace {
// register_all's outcome once it ran (MPI_T_init_thread may run it before MPI_Init).
bool registered = false;
weft_status_t registered_rc = WEFT_SUCCESS;
} // namespace

weft_status_t register_all()
{
    if (registered)
        return registered_rc;
    registered = true;
    // The frameworks' own parameters first: a component's register_params may read them (btl/sm
    // measures nothing when the btl selection leaves it out).
    weft_status_t rc = register_mpi_params();
    // The library's own performance variable: the process failures learnt (0 without them).
    const weft_mca_pvar_def_t failures{
        .name = "ft_failures",
        .var_class = WEFT_MCA_PVAR_COUNTER,
        .help = "Process failures this process has learnt of (fault tolerance, mpi_ft_enable).",
        .level = 1,
        .read = [](void *) { return weft_runtime_failure_epoch(); },
        .arg = nullptr};
    weft_mca_pvar_register("mpi", nullptr, &failures, sizeof failures);
    for (const Framework *fw : frameworks()) {
        weft_status_t frc = framework_base(fw->name)->register_params();
        if (rc == WEFT_SUCCESS)
            rc = frc;
    }
    if (weft_status_t src = Repository::instance().scan(); rc == WEFT_SUCCESS)
        rc = src;
    for (const Framework *fw : frameworks()) {
        weft_status_t src = framework_base(fw->name)->check_selection();
        if (rc == WEFT_SUCCESS)
            rc = src;
    }
    registered_rc = rc;
    return rc;
}

void reset_all()
{
    registered = false;
    for (auto &[name, base] : bases())
        base->close();
    bases().clear();
    Repository::instance().reset();
    Registry::instance().reset();
}

} // namespace weft::mca
