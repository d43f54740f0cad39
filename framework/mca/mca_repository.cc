#include "mca_repository.h"

#include "mca_output.h"
#include "mca_param.h"
#include "weft_config.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <sys/stat.h>

extern "C" const weft_mca_component_t *const weft_mca_static_components[];

namespace weft::mca {

namespace {

std::string fixed_string(const char (&field)[WEFT_MCA_NAME_MAX], bool &terminated)
{
    const void *nul = std::memchr(field, '\0', WEFT_MCA_NAME_MAX);
    terminated = nul != nullptr;
    return terminated ? std::string(field) : std::string(field, WEFT_MCA_NAME_MAX);
}

std::string version_text(unsigned major, unsigned minor)
{
    return std::to_string(major) + "." + std::to_string(minor);
}

// Expand a leading ~ and $HOME / ${HOME} (the documented default uses it).
std::string expand_home(std::string dir)
{
    const char *home = std::getenv("HOME");
    std::string h = home ? home : "";
    if (!dir.empty() && dir[0] == '~')
        dir = h + dir.substr(1);
    for (const char *var : {"${HOME}", "$HOME"}) {
        for (size_t pos; (pos = dir.find(var)) != std::string::npos;)
            dir.replace(pos, std::strlen(var), h);
    }
    return dir;
}

// "mca_<fw>_<name>.so" -> fw, name. Framework names have no underscore.
bool parse_file_name(const std::string &file, std::string &fw, std::string &name)
{
    const std::string prefix = "mca_", suffix = ".so";
    if (file.size() <= prefix.size() + suffix.size() || file.compare(0, 4, prefix) != 0 ||
        file.compare(file.size() - 3, 3, suffix) != 0)
        return false;
    std::string core = file.substr(4, file.size() - 7);
    auto us = core.find('_');
    if (us == std::string::npos || us == 0 || us + 1 == core.size())
        return false;
    fw = core.substr(0, us);
    name = core.substr(us + 1);
    return true;
}

} // namespace

Repository &Repository::instance()
{
    static Repository repo;
    return repo;
}

int Repository::verbose() const
{
    return verbose_param_ ? int(weft_mca_param_int(verbose_param_)) : 0;
}

std::string Repository::loader_name() const { return loader_ ? loader_->name() : ""; }

void Repository::add_static(const weft_mca_component_t *desc) { extra_static_.push_back(desc); }

std::string Repository::check(const weft_mca_component_t *d, std::string_view fw,
                              std::string_view name)
{
    if (!d)
        return "no descriptor";
    if (d->mca_abi_major != WEFT_MCA_ABI_MAJOR || d->mca_abi_minor > WEFT_MCA_ABI_MINOR)
        return "built for MCA ABI " + version_text(d->mca_abi_major, d->mca_abi_minor) +
               ", this is " + version_text(WEFT_MCA_ABI_MAJOR, WEFT_MCA_ABI_MINOR);
    bool fw_ok = false, name_ok = false;
    std::string dfw = fixed_string(d->framework, fw_ok);
    std::string dname = fixed_string(d->name, name_ok);
    if (!fw_ok || !name_ok)
        return "framework or component name in the descriptor is not NUL-terminated";
    if (dfw != fw)
        return "the descriptor says framework '" + dfw + "' but the file is named for '" +
               std::string(fw) + "'";
    if (dname != name)
        return "the descriptor says component '" + dname + "' but the file is named for '" +
               std::string(name) + "'";
    const Framework *f = find_framework(dfw);
    if (!f)
        return "unknown framework '" + dfw + "'";
    if (d->framework_abi_major != f->abi_major || d->framework_abi_minor > f->abi_minor)
        return "built for " + dfw + " API " +
               version_text(d->framework_abi_major, d->framework_abi_minor) + ", this is " +
               version_text(f->abi_major, f->abi_minor);
    if (d->struct_size < f->min_component_size)
        return "descriptor is " + std::to_string(d->struct_size) + " bytes, " + dfw + " API " +
               version_text(f->abi_major, 0) + " needs at least " +
               std::to_string(f->min_component_size);
    if (d->reserved != 0 || d->version.reserved != 0)
        return "reserved descriptor fields are not zero";
    if (d->flags & ~uint32_t(WEFT_MCA_FLAG_KNOWN))
        return "unknown descriptor flags 0x" + [](uint32_t f) {
            char buf[16];
            std::snprintf(buf, sizeof buf, "%x", f);
            return std::string(buf);
        }(d->flags & ~uint32_t(WEFT_MCA_FLAG_KNOWN));
    if (!d->query)
        return "the descriptor has no query function";
    return {};
}

weft_status_t Repository::register_base_params()
{
    static const weft_mca_enum_value_t loaders[] = {{"dlopen", 0},
#ifdef WEFT_HAVE_LTDL
                                                    {"libltdl", 1},
#endif
                                                    {nullptr, 0}};
    static const std::string default_path = install_dir(WEFT_PKGLIBDIR) + ":$HOME/.weft/components";
    const weft_mca_param_def_t defs[] = {
        {.name = "component_path",
         .type = WEFT_MCA_PARAM_STRING,
         .default_value = default_path.c_str(),
         .help = "Colon-separated directories searched, in order, for components "
                 "(mca_<framework>_<name>.so); $HOME and ~ are expanded. A component "
                 "found twice is loaded from the first place only; static ones come first.",
         .level = 2,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "loader",
         .type = WEFT_MCA_PARAM_ENUM,
         .default_value = WEFT_DEFAULT_LOADER,
         .help = "How component files are opened: dlopen (RTLD_NOW, the system's exact "
                 "error messages) or libltdl (if built).",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = loaders,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "verbose",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "0",
         .help = "Verbosity of the component repository and selection: 0 is quiet, 10 shows "
                 "every component found, skipped, opened and queried.",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
    };
    weft_mca_param_t *h[3] = {};
    weft_status_t rc = weft_mca_param_register_table("mca", "base", defs, 3, sizeof defs[0], h);
    path_param_ = h[0];
    loader_param_ = h[1];
    verbose_param_ = h[2];
    return rc;
}

void Repository::reject(std::string_view fw, std::string_view name, const std::string &origin,
                        const std::string &reason, bool loud)
{
    rejected_.push_back({std::string(fw), std::string(name), origin, reason});
    std::string text =
        std::string(fw) + "/" + std::string(name) + ": " + reason + "; " + origin + " ignored";
    if (loud)
        output::warning(text);
    else if (verbose() > 0)
        output::emit(output::Kind::verbose, text);
}

void Repository::add(const weft_mca_component_t *desc, const std::string &origin, void *handle,
                     std::string_view fw, std::string_view name)
{
    auto c = std::make_unique<Component>();
    c->desc = desc;
    c->framework = find_framework(fw);
    c->name = std::string(name);
    c->origin = origin;
    c->handle = handle;
    if (verbose() >= 10)
        output::emit(output::Kind::verbose,
                     std::string(fw) + "/" + c->name + ": found (" + origin + ")");
    components_.push_back(std::move(c));
}

void Repository::scan_dir(const std::string &dir)
{
    DIR *d = opendir(dir.c_str());
    if (!d) {
        if (verbose() >= 10)
            output::emit(output::Kind::verbose,
                         "component directory " + dir + ": " + std::strerror(errno));
        return;
    }
    std::vector<std::string> files;
    while (dirent *e = readdir(d))
        files.emplace_back(e->d_name);
    closedir(d);
    std::sort(files.begin(), files.end());

    for (const auto &file : files) {
        std::string fw, name;
        if (!parse_file_name(file, fw, name))
            continue;
        const std::string path = dir + "/" + file;
        bool dup = std::any_of(components_.begin(), components_.end(), [&](const auto &c) {
            return c->framework && c->framework->name == fw && c->name == name;
        });
        if (dup) {
            reject(fw, name, path, "already loaded from an earlier place", false);
            continue;
        }
        if (!find_framework(fw)) {
            reject(fw, name, path, "unknown framework '" + fw + "'", true);
            continue;
        }
        std::string err;
        void *h = loader_->open(path, err);
        if (!h) {
            reject(fw, name, path, "cannot be loaded: " + err, true);
            continue;
        }
        const std::string sym = "mca_" + fw + "_" + name + "_component";
        auto *desc = static_cast<const weft_mca_component_t *>(loader_->symbol(h, sym, err));
        if (!desc) {
            loader_->close(h);
            reject(fw, name, path, "does not export " + sym + " (" + err + ")", true);
            continue;
        }
        if (std::string why = check(desc, fw, name); !why.empty()) {
            loader_->close(h);
            reject(fw, name, path, why, true);
            continue;
        }
        add(desc, path, h, fw, name);
    }
}

weft_status_t Repository::scan()
{
    if (scanned_)
        return scan_status_;
    scanned_ = true;
    weft_status_t result = register_base_params();

    std::string backend = weft_mca_param_string(loader_param_);
    loader_ = make_loader(backend);
    if (!loader_) {
        output::error("mca_base_loader: backend '" + backend + "' is not built into this library");
        loader_ = make_loader("dlopen");
    }

    std::vector<const weft_mca_component_t *> statics;
    for (auto *const *s = weft_mca_static_components; *s; ++s)
        statics.push_back(*s);
    statics.insert(statics.end(), extra_static_.begin(), extra_static_.end());
    for (const auto *desc : statics) {
        bool a = false, b = false;
        std::string fw = desc ? fixed_string(desc->framework, a) : "?";
        std::string name = desc ? fixed_string(desc->name, b) : "?";
        if (std::string why = check(desc, fw, name); !why.empty()) {
            reject(fw, name, "static", why, true);
            continue;
        }
        add(desc, "static", nullptr, fw, name);
    }

    for (const auto &dir : split(weft_mca_param_string(path_param_), ':'))
        scan_dir(expand_home(dir));

    for (auto &c : components_) {
        if (!c->desc->register_params)
            continue;
        if (c->desc->register_params() != WEFT_SUCCESS)
            result = WEFT_ERR_BAD_PARAM;
    }
    scan_status_ = result;
    return result;
}

std::vector<Component *> Repository::components(std::string_view fw)
{
    std::vector<Component *> out;
    for (auto &c : components_)
        if (fw.empty() || c->framework->name == fw)
            out.push_back(c.get());
    return out;
}

void Repository::reset()
{
    for (auto &c : components_) {
        if (c->opened && c->desc->close)
            c->desc->close();
        if (c->handle)
            loader_->close(c->handle);
    }
    components_.clear();
    rejected_.clear();
    extra_static_.clear();
    loader_.reset();
    scanned_ = false;
    scan_status_ = WEFT_SUCCESS;
    path_param_ = loader_param_ = verbose_param_ = nullptr;
}

} // namespace weft::mca
