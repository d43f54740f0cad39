// Selection: which components of a framework may run, and which do.
//
// The framework's selection parameter (named like the framework: `btl`,
// `pml`, ...) is either an include list ("self,tcp") or an exclude list
// ("^openib", the caret applying to the whole list). A caret anywhere but
// first, or a name that is not a component of the framework, is an error.
#ifndef WEFT_MCA_SELECT_H
#define WEFT_MCA_SELECT_H

#include "mca_framework.h"
#include "mca_repository.h"

#include <string>
#include <vector>

namespace weft::mca {

struct Filter {
    bool given = false;   // the list is not empty
    bool exclude = false; // ^ list
    std::vector<std::string> names;

    bool allows(const std::string &name) const;
    bool names_it(const std::string &name) const;
};

// Parse a selection list; on error returns WEFT_ERR_BAD_PARAM and sets `error`
// to the whole message. `known` are the usable components, `rejected` those
// found but refused by the repository (named in the message if listed).
weft_status_t parse_filter(const Framework &fw, const std::vector<std::string> &items,
                           const std::vector<Component *> &known,
                           const std::vector<Rejected> &rejected, Filter &out, std::string &error);

struct Candidate {
    Component *component;
    int priority;
};

// The runtime state of one framework: its parameters, the components it has
// opened, and its selection.
class FrameworkBase {
  public:
    explicit FrameworkBase(const Framework &fw);
    const Framework &framework() const { return fw_; }

    // Register `<fw>` and `<fw>_base_verbose` (once).
    weft_status_t register_params();
    // Check the selection list against the repository (every name a component of this
    // framework), with the error printed: also for frameworks nothing opens in this job.
    weft_status_t check_selection();
    // Scan the repository, apply the selection list, open what it allows.
    weft_status_t open();
    // Query every opened component; accepted ones by priority, highest first.
    // A component named in an include list that refuses is an error (for a
    // pick-one framework, only when every named one refuses).
    weft_status_t query(std::vector<Candidate> &accepted);
    // query() and keep the best; the others are closed.
    weft_status_t select_one(Component *&selected);
    // query() and keep all that accept; the others are closed.
    weft_status_t select_all(std::vector<Candidate> &selected);
    // Close every component this framework opened.
    void close();

    int verbose() const;
    const Filter &filter() const { return filter_; }

  private:
    void close_one(Component *c);
    void note(int level, const std::string &text) const;

    const Framework &fw_;
    weft_mca_param_t *select_param_ = nullptr;
    weft_mca_param_t *verbose_param_ = nullptr;
    Filter filter_;
    std::vector<Component *> opened_;
};

// The state of a framework by name (nullptr if no such framework).
FrameworkBase *framework_base(std::string_view name);

// Scan the repository and register the parameters of every framework and
// component, and check every framework's selection list (an unknown component
// name is an error even for a framework this job never opens). What weft_info
// and init call first.
weft_status_t register_all();

// Close every framework and component and forget all parameters (tests).
void reset_all();

} // namespace weft::mca

#endif
