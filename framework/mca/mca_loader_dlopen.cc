#include "mca_loader.h"

#include "weft_config.h"

#include <dlfcn.h>

namespace weft::mca {

namespace {

class DlopenLoader final : public Loader {
  public:
    const char *name() const override { return "dlopen"; }

    void *open(const std::string &path, std::string &error) override
    {
        // RTLD_NOW: an unresolved symbol rejects the component here, with the
        // symbol's name, rather than killing the process at its first call.
        void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h)
            error = last_error();
        return h;
    }

    void *symbol(void *handle, const std::string &symbol, std::string &error) override
    {
        dlerror();
        void *s = dlsym(handle, symbol.c_str());
        if (!s)
            error = last_error();
        return s;
    }

    void close(void *handle) override { dlclose(handle); }

  private:
    static std::string last_error()
    {
        const char *e = dlerror();
        return e ? e : "unknown dlopen error";
    }
};

} // namespace

std::unique_ptr<Loader> make_dlopen_loader() { return std::make_unique<DlopenLoader>(); }
#ifdef WEFT_HAVE_LTDL
std::unique_ptr<Loader> make_ltdl_loader();
#endif

std::vector<std::string> loader_names()
{
#ifdef WEFT_HAVE_LTDL
    return {"dlopen", "libltdl"};
#else
    return {"dlopen"};
#endif
}

std::unique_ptr<Loader> make_loader(const std::string &name)
{
    if (name == "dlopen")
        return make_dlopen_loader();
#ifdef WEFT_HAVE_LTDL
    if (name == "libltdl")
        return make_ltdl_loader();
#endif
    return nullptr;
}

} // namespace weft::mca
