// The repository: finds every component (static table, then each directory of
// mca_base_component_path), checks its descriptor, registers its parameters,
// and keeps it for the frameworks to open, query and close.
#ifndef WEFT_MCA_REPOSITORY_H
#define WEFT_MCA_REPOSITORY_H

#include "mca_framework.h"
#include "mca_loader.h"

#include <weft/mca.h>

#include <memory>
#include <string>
#include <vector>

namespace weft::mca {

struct Component {
    const weft_mca_component_t *desc = nullptr;
    const Framework *framework = nullptr;
    std::string name;
    std::string origin; // "static" or the file it came from
    void *handle = nullptr;
    bool opened = false;
};

// A component file that was found but not used, and why.
struct Rejected {
    std::string framework;
    std::string name;
    std::string origin;
    std::string reason;
};

class Repository {
  public:
    static Repository &instance();

    // Find and check every component, and register the parameters of each.
    // Idempotent, and every call returns the first one's result:
    // WEFT_ERR_BAD_PARAM if a parameter value given by the user did not parse
    // (the message is printed once), otherwise WEFT_SUCCESS.
    weft_status_t scan();

    // Components of one framework (all frameworks if fw is empty), in the
    // order found.
    std::vector<Component *> components(std::string_view fw = {});
    const std::vector<Rejected> &rejected() const { return rejected_; }
    std::string loader_name() const;

    // Add a descriptor as if linked in statically. Must precede scan().
    void add_static(const weft_mca_component_t *desc);

    // Check every version field of `desc` against this library, for a
    // component expected to be <fw>/<name>. Empty string if it is usable.
    static std::string check(const weft_mca_component_t *desc, std::string_view fw,
                             std::string_view name);

    // Close every component and forget all; the next scan starts afresh.
    void reset();

    int verbose() const;

  private:
    weft_status_t register_base_params();
    void scan_dir(const std::string &dir);
    void add(const weft_mca_component_t *desc, const std::string &origin, void *handle,
             std::string_view fw, std::string_view name);
    void reject(std::string_view fw, std::string_view name, const std::string &origin,
                const std::string &reason, bool loud);

    bool scanned_ = false;
    weft_status_t scan_status_ = WEFT_SUCCESS;
    std::vector<const weft_mca_component_t *> extra_static_;
    std::vector<std::unique_ptr<Component>> components_;
    std::vector<Rejected> rejected_;
    std::unique_ptr<Loader> loader_;
    weft_mca_param_t *path_param_ = nullptr;
    weft_mca_param_t *loader_param_ = nullptr;
    weft_mca_param_t *verbose_param_ = nullptr;
};

} // namespace weft::mca

#endif
