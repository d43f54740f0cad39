// Loader backends: how a component file becomes a descriptor pointer.
// dlopen (RTLD_NOW | RTLD_LOCAL, the system's exact error text) is the
// default; libltdl is the alternative for platforms where it does better.
// Both are built when libltdl is found, and chosen by mca_base_loader.
#ifndef WEFT_MCA_LOADER_H
#define WEFT_MCA_LOADER_H

#include <memory>
#include <string>
#include <vector>

namespace weft::mca {

class Loader {
  public:
    virtual ~Loader() = default;
    virtual const char *name() const = 0;
    // Open `path`. Returns an opaque handle, or nullptr with `error` set to
    // the backend's own message (which names the unresolved symbol).
    virtual void *open(const std::string &path, std::string &error) = 0;
    // Look up `symbol` in an open handle; nullptr with `error` set if absent.
    virtual void *symbol(void *handle, const std::string &symbol, std::string &error) = 0;
    virtual void close(void *handle) = 0;
};

// The names of the backends built into this library.
std::vector<std::string> loader_names();
// A backend by name, or nullptr if it is not built.
std::unique_ptr<Loader> make_loader(const std::string &name);

} // namespace weft::mca

#endif
