#include "mca_loader.h"

#include <dlfcn.h>
#include <ltdl.h>
#include <unistd.h>

namespace weft::mca {

namespace {

class LtdlLoader final : public Loader {
  public:
    LtdlLoader() { ok_ = lt_dlinit() == 0; }
    ~LtdlLoader() override
    {
        if (ok_)
            lt_dlexit();
    }

    const char *name() const override { return "libltdl"; }

    void *open(const std::string &path, std::string &error) override
    {
        if (!ok_) {
            error = "lt_dlinit failed";
            return nullptr;
        }
        lt_dladvise advise;
        if (lt_dladvise_init(&advise) != 0) {
            error = last_error();
            return nullptr;
        }
        // Keep the component's symbols to itself, as dlopen's RTLD_LOCAL
        // does. Components are linked with -z now, so binding is immediate
        // even though libltdl opens lazily.
        lt_dladvise_local(&advise);
        lt_dlhandle h = lt_dlopenadvise(path.c_str(), advise);
        lt_dladvise_destroy(&advise);
        if (!h)
            error = explain(path, last_error());
        return h;
    }

    void *symbol(void *handle, const std::string &symbol, std::string &error) override
    {
        void *s = lt_dlsym(static_cast<lt_dlhandle>(handle), symbol.c_str());
        if (!s)
            error = last_error();
        return s;
    }

    void close(void *handle) override { lt_dlclose(static_cast<lt_dlhandle>(handle)); }

  private:
    // libltdl reports most failures to open an existing file as "file not
    // found". Ask the system loader what really went wrong (an unresolved
    // symbol, a missing library) so that the user sees the cause.
    static std::string explain(const std::string &path, std::string ltdl_error)
    {
        if (access(path.c_str(), R_OK) != 0)
            return ltdl_error;
        dlerror();
        if (void *h = dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL)) {
            dlclose(h);
            return ltdl_error;
        }
        const char *why = dlerror();
        return why ? ltdl_error + " (" + why + ")" : ltdl_error;
    }

    static std::string last_error()
    {
        const char *e = lt_dlerror();
        return e ? e : "unknown libltdl error";
    }
    bool ok_ = false;
};

} // namespace

std::unique_ptr<Loader> make_ltdl_loader() { return std::make_unique<LtdlLoader>(); }

} // namespace weft::mca
