// The tool information interface (MPI-3.1 14.3): control variables are the MCA parameters,
// categories the frameworks and components that own them, performance variables what
// components register (weft/mca.h). It works before MPI_Init and after MPI_Finalize: the first
// MPI_T_init_thread registers every parameter, as MPI_Init does.
//
// Control variables may be written until MPI_Init (they are the values the components then
// start with); after it they are read when the components started, so a write is refused with
// MPI_T_ERR_CVAR_SET_NOT_NOW. Information parameters (what a component found out) are never
// written (MPI_T_ERR_CVAR_SET_NEVER). Every call takes the library's lock, always: the calls
// are thread-safe at any level, beside MPI_Init and MPI_Finalize too.
#include "mpi_internal.h"

#include "mca_framework.h"
#include "mca_param.h"
#include "mca_select.h"
#include "runtime.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <set>

struct weft_t_enum {
    std::string name;
    std::vector<std::pair<int, std::string>> items;
};

struct weft_t_cvar_handle {
    weft::mca::Param *param;
    int count;
};

struct weft_t_pvar_session;

struct weft_t_pvar_handle {
    weft_t_pvar_session *session;
    weft::mca::Pvar *var;
    bool started = false;
    uint64_t base = 0;  // the variable's value when last started or reset
    uint64_t total = 0; // counted while started before that
    uint64_t now() const { return total + (started ? var->value() - base : 0); }
};

struct weft_t_pvar_session {
    std::vector<std::unique_ptr<weft_t_pvar_handle>> handles;
};

namespace weft::mpi {
namespace {

using mca::Param;
using mca::Pvar;

struct Category {
    std::string name, desc;
    std::vector<int> cvars, pvars, subs;
};

struct Tool {
    int inits = 0; // MPI_T_init_thread calls not yet finalized
    std::set<weft_t_cvar_handle *> cvar_handles;
    std::set<weft_t_pvar_session *> sessions;
    std::map<const Param *, std::unique_ptr<weft_t_enum>> enums;
    // Categories only grow, so an index stays valid: sync_categories() files the variables
    // registered since it last looked.
    std::vector<Category> cats;
    std::map<std::string, int> cat_index;
    size_t cvars_seen = 0, pvars_seen = 0;
    int stamp = 0;
};

Tool &tool()
{
    static Tool t;
    return t;
}

// The category of framework fw (component empty) or of one of its components, made on first
// use (a component's is a subcategory of its framework's).
int category(const std::string &fw, const std::string &component)
{
    Tool &t = tool();
    const std::string name = component.empty() ? fw : fw + "_" + component;
    if (auto it = t.cat_index.find(name); it != t.cat_index.end())
        return it->second;
    const int parent = component.empty() ? -1 : category(fw, "");
    Category c;
    c.name = name;
    if (component == "base")
        c.desc = "the settings of framework " + fw + "'s base (its own, not a component's)";
    else if (!component.empty())
        c.desc = "the settings and measures of component " + fw + "/" + component;
    else if (const mca::Framework *f = mca::find_framework(fw))
        c.desc = std::string("framework ") + fw + ": " + f->description;
    else
        c.desc = "the library's own settings and measures (" + fw + ")";
    t.cats.push_back(std::move(c));
    const int index = int(t.cats.size() - 1);
    t.cat_index.emplace(name, index);
    if (parent >= 0)
        t.cats[size_t(parent)].subs.push_back(index);
    ++t.stamp;
    return index;
}

void sync_categories()
{
    Tool &t = tool();
    const auto &params = mca::Registry::instance().all();
    for (; t.cvars_seen < params.size(); ++t.cvars_seen, ++t.stamp) {
        const Param &p = *params[t.cvars_seen];
        t.cats[size_t(category(p.framework, p.component))].cvars.push_back(int(t.cvars_seen));
    }
    auto &vars = mca::pvars();
    for (; t.pvars_seen < vars.size(); ++t.pvars_seen, ++t.stamp) {
        const Pvar &v = *vars[t.pvars_seen];
        t.cats[size_t(category(v.framework, v.component))].pvars.push_back(int(t.pvars_seen));
    }
}

// MPI-3.1 14.3.3: at most *len - 1 characters and a NUL, and *len set to what was stored; with
// no buffer (or *len 0) only the length needed, NUL included.
void out_string(const std::string &s, char *buf, int *len)
{
    if (!len)
        return;
    if (!buf || *len <= 0) {
        *len = int(s.size()) + 1;
        return;
    }
    const size_t n = std::min(s.size(), size_t(*len) - 1);
    std::memcpy(buf, s.data(), n);
    buf[n] = '\0';
    *len = int(n) + 1;
}

template <class T> void out(T *where, T value)
{
    if (where)
        *where = value;
}

int not_ready() { return tool().inits > 0 ? MPI_SUCCESS : MPI_T_ERR_NOT_INITIALIZED; }

// A tool call's body, under the library's lock once the interface is initialized.
template <class F> int tool_call(F body)
{
    ToolGuard guard;
    if (int rc = not_ready(); rc != MPI_SUCCESS)
        return rc;
    return body();
}

Param *cvar_at(int index)
{
    const auto &params = mca::Registry::instance().all();
    return index >= 0 && size_t(index) < params.size() ? params[size_t(index)].get() : nullptr;
}

Pvar *pvar_at(int index)
{
    const auto &vars = mca::pvars();
    return index >= 0 && size_t(index) < vars.size() ? vars[size_t(index)].get() : nullptr;
}

MPI_Datatype cvar_type(const Param &p)
{
    switch (p.type) {
    case WEFT_MCA_PARAM_BOOL:
    case WEFT_MCA_PARAM_ENUM: return MPI_INT;
    case WEFT_MCA_PARAM_INT: return MPI_COUNT;
    case WEFT_MCA_PARAM_SIZE: return MPI_UNSIGNED_LONG_LONG;
    case WEFT_MCA_PARAM_DOUBLE: return MPI_DOUBLE;
    default: return MPI_CHAR;
    }
}

weft_t_enum *enum_of(const Param &p)
{
    if (p.type != WEFT_MCA_PARAM_ENUM)
        return MPI_T_ENUM_NULL;
    auto &e = tool().enums[&p];
    if (!e) {
        e = std::make_unique<weft_t_enum>();
        e->name = p.full_name;
        for (const auto &item : p.enums)
            e->items.emplace_back(item.value, item.name);
    }
    return e.get();
}

int scope_of(const Param &p)
{
    switch (p.scope) {
    case WEFT_MCA_SCOPE_INFO: return MPI_T_SCOPE_READONLY;
    case WEFT_MCA_SCOPE_ALL_EQUAL: return MPI_T_SCOPE_ALL_EQ;
    default: return MPI_T_SCOPE_LOCAL;
    }
}

// A text value's elements: room for the value as it is, and at least 256.
int string_count(const Param &p) { return int(std::max<size_t>(p.value.text.size() + 1, 256)); }

bool live_session(weft_t_pvar_session *s) { return s && tool().sessions.count(s); }

bool in_session(weft_t_pvar_session *s, weft_t_pvar_handle *h)
{
    return std::any_of(s->handles.begin(), s->handles.end(),
                       [h](const auto &mine) { return mine.get() == h; });
}

bool continuous(const Pvar &v) { return v.var_class == WEFT_MCA_PVAR_LEVEL; }

// Every handle of the session (MPI_T_PVAR_ALL_HANDLES) or one, after the checks; f may refuse
// one (an error code), which MPI_T_PVAR_ALL_HANDLES passes over.
template <class F> int each_handle(MPI_T_pvar_session s, MPI_T_pvar_handle h, F f)
{
    if (int rc = not_ready(); rc != MPI_SUCCESS)
        return rc;
    if (!live_session(s))
        return MPI_T_ERR_INVALID_SESSION;
    if (h == MPI_T_PVAR_ALL_HANDLES) {
        for (auto &mine : s->handles)
            f(mine.get());
        return MPI_SUCCESS;
    }
    if (!h || !in_session(s, h))
        return MPI_T_ERR_INVALID_HANDLE;
    return f(h);
}

// The first len entries of one of a category's lists.
int category_list(int cat_index, int len, int indices[], std::vector<int> Category::*which)
{
    if (int rc = not_ready(); rc != MPI_SUCCESS)
        return rc;
    sync_categories();
    const auto &cats = tool().cats;
    if (cat_index < 0 || size_t(cat_index) >= cats.size())
        return MPI_T_ERR_INVALID_INDEX;
    if (len < 0 || (len > 0 && !indices))
        return MPI_T_ERR_INVALID;
    const std::vector<int> &list = cats[size_t(cat_index)].*which;
    std::copy_n(list.begin(), std::min(list.size(), size_t(len)), indices);
    return MPI_SUCCESS;
}

} // namespace
} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

WEFT_PROFILED(MPI_T_init_thread)
int PMPI_T_init_thread(int required, int *provided)
{
    ToolGuard guard;
    // Every parameter of every framework and component, as MPI_Init registers them (a value
    // that does not parse is reported now; MPI_Init refuses it again).
    if (tool().inits++ == 0)
        weft::mca::register_all();
    sync_categories();
    // Thread-safe at every level: every call takes the library's lock.
    out(provided, std::clamp(required, int(MPI_THREAD_SINGLE), int(MPI_THREAD_MULTIPLE)));
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_T_finalize)
int PMPI_T_finalize(void)
{
    ToolGuard guard;
    Tool &t = tool();
    if (t.inits == 0)
        return MPI_T_ERR_NOT_INITIALIZED;
    if (--t.inits > 0)
        return MPI_SUCCESS;
    // The last one: every handle and session goes.
    for (weft_t_cvar_handle *h : t.cvar_handles)
        delete h;
    t.cvar_handles.clear();
    for (weft_t_pvar_session *s : t.sessions)
        delete s;
    t.sessions.clear();
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_T_enum_get_info)
int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    return tool_call([&] {
        const auto &enums = tool().enums;
        if (!enumtype || std::none_of(enums.begin(), enums.end(),
                                      [&](const auto &e) { return e.second.get() == enumtype; }))
            return MPI_T_ERR_INVALID_HANDLE;
        out(num, int(enumtype->items.size()));
        out_string(enumtype->name, name, name_len);
        return MPI_SUCCESS;
    });
}

WEFT_PROFILED(MPI_T_enum_get_item)
int PMPI_T_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len)
{
    return tool_call([&] {
        const auto &enums = tool().enums;
        if (!enumtype || std::none_of(enums.begin(), enums.end(),
                                      [&](const auto &e) { return e.second.get() == enumtype; }))
            return MPI_T_ERR_INVALID_HANDLE;
        if (index < 0 || size_t(index) >= enumtype->items.size())
            return MPI_T_ERR_INVALID_ITEM;
        out(value, enumtype->items[size_t(index)].first);
        out_string(enumtype->items[size_t(index)].second, name, name_len);
        return MPI_SUCCESS;
    });
}

WEFT_PROFILED(MPI_T_cvar_get_num)
int PMPI_T_cvar_get_num(int *num_cvar)
{
    return tool_call([&] {
        sync_categories();
        out(num_cvar, int(weft::mca::Registry::instance().all().size()));
        return MPI_SUCCESS;
    });
}

WEFT_PROFILED(MPI_T_cvar_get_info)
int PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                         int *bind, int *scope)
{
    return tool_call([&] {
        const Param *p = cvar_at(cvar_index);
        if (!p)
            return MPI_T_ERR_INVALID_INDEX;
        out_string(p->full_name, name, name_len);
        out(verbosity, std::clamp(p->level, 1, 9)); // levels 1..9 are MPI's nine verbosities
        out(datatype, cvar_type(*p));
        out(enumtype, enum_of(*p));
        out_string(p->help, desc, desc_len);
        out(bind, int(MPI_T_BIND_NO_OBJECT));
        out(scope, scope_of(*p));
        return MPI_SUCCESS;
    });
}

WEFT_PROFILED(MPI_T_cvar_get_index)
int PMPI_T_cvar_get_index(const char *name, int *cvar_index)
{
    return tool_call([&] {
        if (!name || !cvar_index)
            return MPI_T_ERR_INVALID;
        const auto &params = weft::mca::Registry::instance().all();
        for (size_t i = 0; i < params.size(); ++i)
            if (params[i]->full_name == name) {
                *cvar_index = int(i);
                return MPI_SUCCESS;
            }
        return MPI_T_ERR_INVALID_NAME;
    });
}

WEFT_PROFILED(MPI_T_cvar_handle_alloc)
int PMPI_T_cvar_handle_alloc(int cvar_index, void *, MPI_T_cvar_handle *handle, int *count)
{
    return tool_call([&] {
        Param *p = cvar_at(cvar_index);
        if (!p)
            return MPI_T_ERR_INVALID_INDEX;
        if (!handle || !count)
            return MPI_T_ERR_INVALID;
        const bool text = cvar_type(*p) == MPI_CHAR;
        auto *h = new weft_t_cvar_handle{p, text ? string_count(*p) : 1};
        tool().cvar_handles.insert(h);
        *handle = h;
        *count = h->count;
        return MPI_SUCCESS;
    });
}

WEFT_PROFILED(MPI_T_cvar_handle_free)
int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    return tool_call([&] {
        if (!handle || !tool().cvar_handles.erase(*handle))
            return MPI_T_ERR_INVALID_HANDLE;
        delete *handle;
        *handle = MPI_T_CVAR_HANDLE_NULL;
        return MPI_SUCCESS;
    });
}

WEFT_PROFILED(MPI_T_cvar_read)
int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    return tool_call([&] {
        if (!handle || !tool().cvar_handles.count(handle))
            return MPI_T_ERR_INVALID_HANDLE;
        if (!buf)
            return MPI_T_ERR_INVALID;
        const Param &p = *handle->param;
        switch (p.type) {
        case WEFT_MCA_PARAM_BOOL: *static_cast<int *>(buf) = p.value.b; break;
        case WEFT_MCA_PARAM_ENUM: *static_cast<int *>(buf) = int(p.value.i); break;
        case WEFT_MCA_PARAM_INT: *static_cast<MPI_Count *>(buf) = p.value.i; break;
        case WEFT_MCA_PARAM_SIZE: *static_cast<unsigned long long *>(buf) = p.value.size; break;
        case WEFT_MCA_PARAM_DOUBLE: *static_cast<double *>(buf) = p.value.d; break;
        default: {
            int len = handle->count;
            out_string(p.value.text, static_cast<char *>(buf), &len);
        }
        }
        return MPI_SUCCESS;
    });
}

WEFT_PROFILED(MPI_T_cvar_write)
int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    return tool_call([&] {
        if (!handle || !tool().cvar_handles.count(handle))
            return MPI_T_ERR_INVALID_HANDLE;
        if (!buf)
            return MPI_T_ERR_INVALID;
        Param &p = *handle->param;
        if (p.scope == WEFT_MCA_SCOPE_INFO)
            return MPI_T_ERR_CVAR_SET_NEVER;
        if (initialized())
            return MPI_T_ERR_CVAR_SET_NOT_NOW; // the components read it when they started
        std::string text;
        char num[64];
        switch (p.type) {
        case WEFT_MCA_PARAM_BOOL: text = *static_cast<const int *>(buf) ? "true" : "false"; break;
        case WEFT_MCA_PARAM_ENUM: {
            const int v = *static_cast<const int *>(buf);
            auto it = std::find_if(p.enums.begin(), p.enums.end(),
                                   [v](const auto &e) { return e.value == v; });
            if (it == p.enums.end())
                return MPI_T_ERR_INVALID;
            text = it->name;
            break;
        }
        case WEFT_MCA_PARAM_INT:
            std::snprintf(num, sizeof num, "%lld",
                          static_cast<long long>(*static_cast<const MPI_Count *>(buf)));
            text = num;
            break;
        case WEFT_MCA_PARAM_SIZE:
            std::snprintf(num, sizeof num, "%llu", *static_cast<const unsigned long long *>(buf));
            text = num;
            break;
        case WEFT_MCA_PARAM_DOUBLE:
            std::snprintf(num, sizeof num, "%.17g", *static_cast<const double *>(buf));
            text = num;
            break;
        default:
            // At most the handle's count of characters (a string without its NUL is cut there).
            text.assign(static_cast<const char *>(buf),
                        strnlen(static_cast<const char *>(buf), size_t(handle->count)));
        }
        // Out of range or not a value of the type: refused (the registry says why), value kept.
        return weft_mca_param_set(&p, text.c_str()) == WEFT_SUCCESS ? MPI_SUCCESS
                                                                    : MPI_T_ERR_INVALID;
    });
}

WEFT_PROFILED(MPI_T_pvar_get_num)
int PMPI_T_pvar_get_num(int *num_pvar)
{
    return tool_call([&] {
        sync_categories();
        out(num_pvar, int(weft::mca::pvars().size()));
        return MPI_SUCCESS;
    });
}

WEFT_PROFILED(MPI_T_pvar_get_info)
int PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                         int *bind, int *readonly, int *continuous_, int *atomic)
{
    return tool_call([&] {
        const Pvar *v = pvar_at(pvar_index);
        if (!v)
            return MPI_T_ERR_INVALID_INDEX;
        const bool level = continuous(*v);
        out_string(v->full_name, name, name_len);
        out(verbosity, std::clamp(v->level, 1, 9));
        out(var_class, int(level ? MPI_T_PVAR_CLASS_LEVEL : MPI_T_PVAR_CLASS_COUNTER));
        out(datatype, MPI_UNSIGNED_LONG_LONG);
        out(enumtype, MPI_T_ENUM_NULL);
        out_string(v->help, desc, desc_len);
        out(bind, int(MPI_T_BIND_NO_OBJECT));
        // A level is always on and shows what is; a counter counts per handle from its start, and
        // may be written or reset (that handle's count), read and reset at once.
        out(readonly, int(level));
        out(continuous_, int(level));
        out(atomic, int(!level));
        return MPI_SUCCESS;
    });
}

WEFT_PROFILED(MPI_T_pvar_get_index)
int PMPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    return tool_call([&] {
        if (!name || !pvar_index)
            return MPI_T_ERR_INVALID;
        const auto &vars = weft::mca::pvars();
        for (size_t i = 0; i < vars.size(); ++i)
            if (vars[i]->full_name == name &&
                var_class ==
                    (continuous(*vars[i]) ? MPI_T_PVAR_CLASS_LEVEL : MPI_T_PVAR_CLASS_COUNTER)) {
                *pvar_index = int(i);
                return MPI_SUCCESS;
            }
        return MPI_T_ERR_INVALID_NAME;
    });
}

WEFT_PROFILED(MPI_T_pvar_session_create)
int PMPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
    return tool_call([&] {
        if (!session)
            return MPI_T_ERR_INVALID;
        *session = new weft_t_pvar_session;
        tool().sessions.insert(*session);
        return MPI_SUCCESS;
    });
}

WEFT_PROFILED(MPI_T_pvar_session_free)
int PMPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
    return tool_call([&] {
        if (!session || !tool().sessions.erase(*session))
            return MPI_T_ERR_INVALID_SESSION;
        delete *session; // and its handles
        *session = MPI_T_PVAR_SESSION_NULL;
        return MPI_SUCCESS;
    });
}

WEFT_PROFILED(MPI_T_pvar_handle_alloc)
int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *,
                             MPI_T_pvar_handle *handle, int *count)
{
    return tool_call([&] {
        if (!live_session(session))
            return MPI_T_ERR_INVALID_SESSION;
        Pvar *v = pvar_at(pvar_index);
        if (!v)
            return MPI_T_ERR_INVALID_INDEX;
        if (!handle || !count)
            return MPI_T_ERR_INVALID;
        auto h = std::make_unique<weft_t_pvar_handle>();
        h->session = session;
        h->var = v;
        // A level is on from the start; a counter counts from MPI_T_pvar_start.
        h->started = continuous(*v);
        h->base = h->started ? 0 : v->value();
        *handle = h.get();
        *count = 1;
        session->handles.push_back(std::move(h));
        return MPI_SUCCESS;
    });
}

WEFT_PROFILED(MPI_T_pvar_handle_free)
int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    return tool_call([&] {
        if (!live_session(session))
            return MPI_T_ERR_INVALID_SESSION;
        if (!handle || !*handle || *handle == MPI_T_PVAR_ALL_HANDLES ||
            !in_session(session, *handle))
            return MPI_T_ERR_INVALID_HANDLE;
        std::erase_if(session->handles,
                      [h = *handle](const auto &mine) { return mine.get() == h; });
        *handle = MPI_T_PVAR_HANDLE_NULL;
        return MPI_SUCCESS;
    });
}

WEFT_PROFILED(MPI_T_pvar_start)
int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    ToolGuard guard;
    return each_handle(session, handle, [](weft_t_pvar_handle *h) {
        if (continuous(*h->var))
            return MPI_T_ERR_PVAR_NO_STARTSTOP;
        if (!h->started) {
            h->base = h->var->value();
            h->started = true;
        }
        return MPI_SUCCESS;
    });
}

WEFT_PROFILED(MPI_T_pvar_stop)
int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    ToolGuard guard;
    return each_handle(session, handle, [](weft_t_pvar_handle *h) {
        if (continuous(*h->var))
            return MPI_T_ERR_PVAR_NO_STARTSTOP;
        h->total = h->now();
        h->started = false;
        return MPI_SUCCESS;
    });
}

WEFT_PROFILED(MPI_T_pvar_read)
int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    ToolGuard guard;
    if (handle == MPI_T_PVAR_ALL_HANDLES)
        return MPI_T_ERR_INVALID_HANDLE;
    return each_handle(session, handle, [buf](weft_t_pvar_handle *h) {
        if (!buf)
            return MPI_T_ERR_INVALID;
        *static_cast<unsigned long long *>(buf) = h->now();
        return MPI_SUCCESS;
    });
}

WEFT_PROFILED(MPI_T_pvar_write)
int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
    ToolGuard guard;
    if (handle == MPI_T_PVAR_ALL_HANDLES)
        return MPI_T_ERR_INVALID_HANDLE;
    return each_handle(session, handle, [buf](weft_t_pvar_handle *h) {
        if (continuous(*h->var))
            return MPI_T_ERR_PVAR_NO_WRITE;
        if (!buf)
            return MPI_T_ERR_INVALID;
        // The handle's count goes on from the value written.
        h->total = *static_cast<const unsigned long long *>(buf);
        h->base = h->var->value();
        return MPI_SUCCESS;
    });
}

WEFT_PROFILED(MPI_T_pvar_reset)
int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    ToolGuard guard;
    return each_handle(session, handle, [](weft_t_pvar_handle *h) {
        if (continuous(*h->var))
            return MPI_T_ERR_PVAR_NO_WRITE;
        h->total = 0;
        h->base = h->var->value();
        return MPI_SUCCESS;
    });
}

WEFT_PROFILED(MPI_T_pvar_readreset)
int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    ToolGuard guard;
    if (handle == MPI_T_PVAR_ALL_HANDLES)
        return MPI_T_ERR_INVALID_HANDLE;
    return each_handle(session, handle, [buf](weft_t_pvar_handle *h) {
        if (continuous(*h->var))
            return MPI_T_ERR_PVAR_NO_WRITE;
        if (!buf)
            return MPI_T_ERR_INVALID;
        // One read of the variable for both, under the lock: nothing counts in between.
        const uint64_t cur = h->var->value();
        *static_cast<unsigned long long *>(buf) = h->total + (h->started ? cur - h->base : 0);
        h->total = 0;
        h->base = cur;
        return MPI_SUCCESS;
    });
}

WEFT_PROFILED(MPI_T_category_get_num)
int PMPI_T_category_get_num(int *num_cat)
{
    return tool_call([&] {
        sync_categories();
        out(num_cat, int(tool().cats.size()));
        return MPI_SUCCESS;
    });
}

WEFT_PROFILED(MPI_T_category_get_info)
int PMPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                             int *num_cvars, int *num_pvars, int *num_categories)
{
    return tool_call([&] {
        sync_categories();
        const auto &cats = tool().cats;
        if (cat_index < 0 || size_t(cat_index) >= cats.size())
            return MPI_T_ERR_INVALID_INDEX;
        const Category &c = cats[size_t(cat_index)];
        out_string(c.name, name, name_len);
        out_string(c.desc, desc, desc_len);
        out(num_cvars, int(c.cvars.size()));
        out(num_pvars, int(c.pvars.size()));
        out(num_categories, int(c.subs.size()));
        return MPI_SUCCESS;
    });
}

WEFT_PROFILED(MPI_T_category_get_index)
int PMPI_T_category_get_index(const char *name, int *cat_index)
{
    return tool_call([&] {
        if (!name || !cat_index)
            return MPI_T_ERR_INVALID;
        sync_categories();
        auto it = tool().cat_index.find(name);
        if (it == tool().cat_index.end())
            return MPI_T_ERR_INVALID_NAME;
        *cat_index = it->second;
        return MPI_SUCCESS;
    });
}

WEFT_PROFILED(MPI_T_category_get_cvars)
int PMPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
    ToolGuard guard;
    return category_list(cat_index, len, indices, &Category::cvars);
}

WEFT_PROFILED(MPI_T_category_get_pvars)
int PMPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
    ToolGuard guard;
    return category_list(cat_index, len, indices, &Category::pvars);
}

WEFT_PROFILED(MPI_T_category_get_categories)
int PMPI_T_category_get_categories(int cat_index, int len, int indices[])
{
    ToolGuard guard;
    return category_list(cat_index, len, indices, &Category::subs);
}

WEFT_PROFILED(MPI_T_category_changed)
int PMPI_T_category_changed(int *stamp)
{
    return tool_call([&] {
        sync_categories();
        out(stamp, tool().stamp);
        return MPI_SUCCESS;
    });
}

} // extern "C"
