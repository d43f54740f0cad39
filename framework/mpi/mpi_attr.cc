// Attribute caching on communicators and datatypes (MPI-3.1 section 6.7): keyvals, their copy
// and delete callbacks, the attributes cached on an object, the predefined callbacks, and the
// deprecated MPI-1 names of the communicator calls.
//
// A keyval lives while its handle does (until MPI_Comm_free_keyval) or while an attribute uses
// it: each attribute holds a reference, so a keyval freed while cached somewhere still copies
// and deletes those attributes. The predefined attributes of mpi_comm.cc (MPI_TAG_UB ...
// MPIX_FT) take keyvals below first_user_keyval, which no keyval made here ever has.
//
// Copying (MPI_Comm_dup, MPI_Type_dup) goes through the attributes in the order they were set;
// deleting them all (MPI_Comm_free, MPI_Type_free, MPI_Finalize for MPI_COMM_SELF) in the
// reverse order, which MPI-3.1 8.7.1 asks of MPI_COMM_SELF and the others allow.
#include "mpi_internal.h"

#include <mpi-ext.h>

#include <algorithm>
#include <map>

namespace weft::mpi {

namespace {

constexpr int first_user_keyval = 64;
static_assert(MPIX_FT < first_user_keyval && MPI_UNIVERSE_SIZE < first_user_keyval,
              "the predefined attributes' keyvals must stay below the programs' ones");

enum class Kind { comm, type };

struct Keyval {
    Kind kind;
    MPI_Comm_copy_attr_function *comm_copy = nullptr;
    MPI_Comm_delete_attr_function *comm_delete = nullptr;
    MPI_Type_copy_attr_function *type_copy = nullptr;
    MPI_Type_delete_attr_function *type_delete = nullptr;
    void *extra_state = nullptr;
    int refs = 1;       // the handle's (until freed) and one per attribute
    bool freed = false; // by MPI_Comm_free_keyval / MPI_Type_free_keyval
};

// Keyvals are never reused: a stale one names nothing rather than another key.
std::map<int, Keyval> keyvals;
int next_keyval = first_user_keyval;
// Stamps for the order in which attributes were set.
uint64_t set_clock = 0;

void keyval_release(int id)
{
    auto it = keyvals.find(id);
    if (it != keyvals.end() && --it->second.refs == 0)
        keyvals.erase(it);
}

// The two kinds of object share everything but the callbacks' types and where errors go.
struct CommSide {
    using Obj = weft_comm;
    static constexpr Kind kind = Kind::comm;
    static int raise_on(weft_comm *c, int errclass, const char *fn, const std::string &what)
    {
        return raise(c, errclass, fn, what);
    }
    static int copy(const Keyval &k, weft_comm *old, int id, void *in, void *out, int *flag)
    {
        return k.comm_copy ? k.comm_copy(old, id, k.extra_state, in, out, flag)
                           : weft_mpi_comm_null_copy_fn(old, id, k.extra_state, in, out, flag);
    }
    static int del(const Keyval &k, weft_comm *c, int id, void *value)
    {
        return k.comm_delete ? k.comm_delete(c, id, value, k.extra_state) : MPI_SUCCESS;
    }
};

// Datatypes have no error handler of their own here: their errors go to MPI_COMM_WORLD's, as
// the other datatype calls' do.
struct TypeSide {
    using Obj = weft_datatype;
    static constexpr Kind kind = Kind::type;
    static int raise_on(weft_datatype *, int errclass, const char *fn, const std::string &what)
    {
        return raise(nullptr, errclass, fn, what);
    }
    static int copy(const Keyval &k, weft_datatype *old, int id, void *in, void *out, int *flag)
    {
        return k.type_copy ? k.type_copy(old, id, k.extra_state, in, out, flag)
                           : weft_mpi_type_null_copy_fn(old, id, k.extra_state, in, out, flag);
    }
    static int del(const Keyval &k, weft_datatype *t, int id, void *value)
    {
        return k.type_delete ? k.type_delete(t, id, value, k.extra_state) : MPI_SUCCESS;
    }
};

const char *kind_name(Kind k) { return k == Kind::comm ? "communicator" : "datatype"; }

// The keyval `id` names for an object of kind `kind`, or null with *why saying what is wrong.
// A freed keyval still in use is found only when `allow_freed` (get and delete reach the
// attributes it still has; set makes no new ones).
Keyval *find_keyval(int id, Kind kind, bool allow_freed, std::string *why)
{
    if (id == MPI_KEYVAL_INVALID) {
        *why = "keyval is MPI_KEYVAL_INVALID";
        return nullptr;
    }
    if (id >= 0 && id < first_user_keyval) {
        *why = "keyval " + std::to_string(id) + " is a predefined attribute's";
        return nullptr;
    }
    auto it = keyvals.find(id);
    if (it == keyvals.end() || (it->second.freed && !allow_freed)) {
        *why = "keyval " + std::to_string(id) + " does not exist (or was freed)";
        return nullptr;
    }
    if (it->second.kind != kind) {
        *why = "keyval " + std::to_string(id) + " is a " + kind_name(it->second.kind) +
               " keyval, not a " + kind_name(kind) + " one";
        return nullptr;
    }
    return &it->second;
}

// The attributes of an object, in the order they were set.
std::vector<std::pair<int, Attribute>> in_set_order(const Attributes &attrs)
{
    std::vector<std::pair<int, Attribute>> v(attrs.begin(), attrs.end());
    std::sort(v.begin(), v.end(),
              [](const auto &a, const auto &b) { return a.second.set_order < b.second.set_order; });
    return v;
}

// Delete every attribute of obj, newest first. A delete callback's error stops it there: that
// attribute and the older ones stay, and the error is returned.
template <class Side> int delete_all(typename Side::Obj *obj)
{
    auto attrs = in_set_order(obj->attrs);
    for (auto a = attrs.rbegin(); a != attrs.rend(); ++a) {
        // A callback may have deleted another attribute of obj already.
        auto cur = obj->attrs.find(a->first);
        if (cur == obj->attrs.end())
            continue;
        auto k = keyvals.find(a->first);
        if (k != keyvals.end())
            if (int rc = Side::del(k->second, obj, a->first, cur->second.value); rc != MPI_SUCCESS)
                return rc;
        if (obj->attrs.erase(a->first))
            keyval_release(a->first);
    }
    return MPI_SUCCESS;
}

// Copy old's attributes to fresh through their copy callbacks; on a callback's error delete
// what was copied again and return the error.
template <class Side> int copy_all(typename Side::Obj *old, typename Side::Obj *fresh)
{
    for (const auto &[id, attr] : in_set_order(old->attrs)) {
        auto k = keyvals.find(id);
        if (k == keyvals.end())
            continue;
        void *out = nullptr;
        int flag = 0;
        if (int rc = Side::copy(k->second, old, id, attr.value, &out, &flag); rc != MPI_SUCCESS) {
            delete_all<Side>(fresh);
            return rc;
        }
        if (!flag)
            continue;
        fresh->attrs[id] = Attribute{out, ++set_clock};
        ++k->second.refs;
    }
    return MPI_SUCCESS;
}

template <class Side> int set_attr(typename Side::Obj *obj, int id, void *value, const char *fn)
{
    std::string why;
    Keyval *k = find_keyval(id, Side::kind, false, &why);
    if (!k)
        return Side::raise_on(obj, MPI_ERR_KEYVAL, fn, why);
    auto it = obj->attrs.find(id);
    if (it != obj->attrs.end()) {
        // The value replaced is deleted as by MPI_Comm_delete_attr (MPI-3.1 6.7.2).
        if (int rc = Side::del(*k, obj, id, it->second.value); rc != MPI_SUCCESS)
            return Side::raise_on(obj, rc, fn, "the delete callback of the value replaced failed");
        // The callback may have changed the attributes, and even freed the keyval.
        it = obj->attrs.find(id);
        if (!(k = find_keyval(id, Side::kind, false, &why)))
            return Side::raise_on(obj, MPI_ERR_KEYVAL, fn, why);
    }
    if (it == obj->attrs.end()) {
        obj->attrs[id] = Attribute{value, ++set_clock};
        ++k->refs;
    } else {
        it->second = Attribute{value, ++set_clock};
    }
    return MPI_SUCCESS;
}

template <class Side>
int get_attr(typename Side::Obj *obj, int id, void *value, int *flag, const char *fn)
{
    if (!value || !flag)
        return Side::raise_on(obj, MPI_ERR_ARG, fn,
                              value ? "flag is NULL" : "attribute_val is NULL");
    std::string why;
    if (!find_keyval(id, Side::kind, true, &why))
        return Side::raise_on(obj, MPI_ERR_KEYVAL, fn, why);
    auto it = obj->attrs.find(id);
    *flag = it != obj->attrs.end();
    if (*flag)
        *static_cast<void **>(value) = it->second.value;
    return MPI_SUCCESS;
}

// Deleting an attribute the object does not have is no error (nothing to delete).
template <class Side> int delete_attr(typename Side::Obj *obj, int id, const char *fn)
{
    std::string why;
    Keyval *k = find_keyval(id, Side::kind, true, &why);
    if (!k)
        return Side::raise_on(obj, MPI_ERR_KEYVAL, fn, why);
    auto it = obj->attrs.find(id);
    if (it == obj->attrs.end())
        return MPI_SUCCESS;
    if (int rc = Side::del(*k, obj, id, it->second.value); rc != MPI_SUCCESS)
        return Side::raise_on(obj, rc, fn, "the attribute's delete callback failed");
    if (obj->attrs.erase(id))
        keyval_release(id);
    return MPI_SUCCESS;
}

int create_keyval(Keyval k, int *keyval, const char *fn)
{
    if (int rc = check_state(fn); rc != MPI_SUCCESS)
        return rc;
    if (!keyval)
        return raise(nullptr, MPI_ERR_ARG, fn, "keyval is NULL");
    *keyval = next_keyval++;
    keyvals.emplace(*keyval, k);
    return MPI_SUCCESS;
}

int free_keyval(Kind kind, int *keyval, const char *fn)
{
    if (int rc = check_state(fn); rc != MPI_SUCCESS)
        return rc;
    if (!keyval)
        return raise(nullptr, MPI_ERR_ARG, fn, "keyval is NULL");
    std::string why;
    Keyval *k = find_keyval(*keyval, kind, false, &why);
    if (!k)
        return raise(nullptr, MPI_ERR_KEYVAL, fn, why);
    k->freed = true;
    keyval_release(*keyval);
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

int bad_comm(MPI_Comm comm, const char *fn)
{
    if (int rc = check_state(fn); rc != MPI_SUCCESS)
        return rc;
    return valid_comm(comm) ? MPI_SUCCESS
                            : raise(nullptr, MPI_ERR_COMM, fn, "invalid communicator");
}

int bad_type(MPI_Datatype type, const char *fn)
{
    if (int rc = check_state(fn); rc != MPI_SUCCESS)
        return rc;
    return live_datatype(type) ? MPI_SUCCESS : raise(nullptr, MPI_ERR_TYPE, fn, "invalid datatype");
}

} // namespace

int comm_dup_attrs(weft_comm *old, MPI_Comm *newcomm, const char *fn)
{
    weft_comm *c = *newcomm;
    const int rc = copy_all<CommSide>(old, c);
    if (rc == MPI_SUCCESS)
        return MPI_SUCCESS;
    c->freed = true;
    comm_release(c);
    *newcomm = MPI_COMM_NULL;
    return raise(old, rc, fn, "an attribute's copy callback failed");
}

int comm_delete_attrs(weft_comm *c) { return delete_all<CommSide>(c); }

int comm_get_user_attr(weft_comm *comm, int keyval, void *value, int *flag, const char *fn)
{
    return get_attr<CommSide>(comm, keyval, value, flag, fn);
}

int type_copy_attrs(weft_datatype *old, weft_datatype *t) { return copy_all<TypeSide>(old, t); }

int type_delete_attrs(weft_datatype *t) { return delete_all<TypeSide>(t); }

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

// ---- the predefined callbacks (mpi.h names them MPI_COMM_NULL_COPY_FN and so on)

int weft_mpi_comm_null_copy_fn(MPI_Comm, int, void *, void *, void *, int *flag)
{
    *flag = 0;
    return MPI_SUCCESS;
}

int weft_mpi_comm_dup_fn(MPI_Comm, int, void *, void *in, void *out, int *flag)
{
    *static_cast<void **>(out) = in;
    *flag = 1;
    return MPI_SUCCESS;
}

int weft_mpi_comm_null_delete_fn(MPI_Comm, int, void *, void *) { return MPI_SUCCESS; }

int weft_mpi_type_null_copy_fn(MPI_Datatype, int, void *, void *, void *, int *flag)
{
    *flag = 0;
    return MPI_SUCCESS;
}

int weft_mpi_type_dup_fn(MPI_Datatype, int, void *, void *in, void *out, int *flag)
{
    *static_cast<void **>(out) = in;
    *flag = 1;
    return MPI_SUCCESS;
}

int weft_mpi_type_null_delete_fn(MPI_Datatype, int, void *, void *) { return MPI_SUCCESS; }

// ---- communicators

WEFT_PROFILED(MPI_Comm_create_keyval)
int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy_fn,
                            MPI_Comm_delete_attr_function *delete_fn, int *keyval,
                            void *extra_state)
{
    WEFT_API_GUARD;
    const Keyval k{.kind = Kind::comm,
                   .comm_copy = copy_fn,
                   .comm_delete = delete_fn,
                   .extra_state = extra_state};
    return create_keyval(k, keyval, "MPI_Comm_create_keyval");
}

WEFT_PROFILED(MPI_Comm_free_keyval)
int PMPI_Comm_free_keyval(int *keyval)
{
    WEFT_API_RETURN(free_keyval(Kind::comm, keyval, "MPI_Comm_free_keyval"));
}

WEFT_PROFILED(MPI_Comm_set_attr)
int PMPI_Comm_set_attr(MPI_Comm comm, int keyval, void *attribute_val)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Comm_set_attr";
    if (int rc = bad_comm(comm, fn); rc != MPI_SUCCESS)
        return rc;
    return set_attr<CommSide>(comm, keyval, attribute_val, fn);
}

WEFT_PROFILED(MPI_Comm_delete_attr)
int PMPI_Comm_delete_attr(MPI_Comm comm, int keyval)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Comm_delete_attr";
    if (int rc = bad_comm(comm, fn); rc != MPI_SUCCESS)
        return rc;
    return delete_attr<CommSide>(comm, keyval, fn);
}

// ---- datatypes

WEFT_PROFILED(MPI_Type_create_keyval)
int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *copy_fn,
                            MPI_Type_delete_attr_function *delete_fn, int *keyval,
                            void *extra_state)
{
    WEFT_API_GUARD;
    const Keyval k{.kind = Kind::type,
                   .type_copy = copy_fn,
                   .type_delete = delete_fn,
                   .extra_state = extra_state};
    return create_keyval(k, keyval, "MPI_Type_create_keyval");
}

WEFT_PROFILED(MPI_Type_free_keyval)
int PMPI_Type_free_keyval(int *keyval)
{
    WEFT_API_RETURN(free_keyval(Kind::type, keyval, "MPI_Type_free_keyval"));
}

WEFT_PROFILED(MPI_Type_set_attr)
int PMPI_Type_set_attr(MPI_Datatype type, int keyval, void *attribute_val)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Type_set_attr";
    if (int rc = bad_type(type, fn); rc != MPI_SUCCESS)
        return rc;
    return set_attr<TypeSide>(type, keyval, attribute_val, fn);
}

WEFT_PROFILED(MPI_Type_get_attr)
int PMPI_Type_get_attr(MPI_Datatype type, int keyval, void *attribute_val, int *flag)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Type_get_attr";
    if (int rc = bad_type(type, fn); rc != MPI_SUCCESS)
        return rc;
    return get_attr<TypeSide>(type, keyval, attribute_val, flag, fn);
}

WEFT_PROFILED(MPI_Type_delete_attr)
int PMPI_Type_delete_attr(MPI_Datatype type, int keyval)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Type_delete_attr";
    if (int rc = bad_type(type, fn); rc != MPI_SUCCESS)
        return rc;
    return delete_attr<TypeSide>(type, keyval, fn);
}

// ---- the MPI-1 names (deprecated since MPI-2.0): communicator attributes under other names

WEFT_PROFILED(MPI_Keyval_create)
int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                       void *extra_state)
{
    WEFT_API_GUARD;
    const Keyval k{.kind = Kind::comm,
                   .comm_copy = copy_fn,
                   .comm_delete = delete_fn,
                   .extra_state = extra_state};
    return create_keyval(k, keyval, "MPI_Keyval_create");
}

WEFT_PROFILED(MPI_Keyval_free)
int PMPI_Keyval_free(int *keyval)
{
    WEFT_API_RETURN(free_keyval(Kind::comm, keyval, "MPI_Keyval_free"));
}

WEFT_PROFILED(MPI_Attr_put)
int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Attr_put";
    if (int rc = bad_comm(comm, fn); rc != MPI_SUCCESS)
        return rc;
    return set_attr<CommSide>(comm, keyval, attribute_val, fn);
}

// The predefined attributes are mpi_comm.cc's, which MPI_Comm_get_attr knows.
WEFT_PROFILED(MPI_Attr_get)
int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    WEFT_API_RETURN(PMPI_Comm_get_attr(comm, keyval, attribute_val, flag));
}

WEFT_PROFILED(MPI_Attr_delete)
int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Attr_delete";
    if (int rc = bad_comm(comm, fn); rc != MPI_SUCCESS)
        return rc;
    return delete_attr<CommSide>(comm, keyval, fn);
}

} // extern "C"
