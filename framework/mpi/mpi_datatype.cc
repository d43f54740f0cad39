// Derived datatypes: the MPI type constructors over the datatype engine (layout.h), their
// envelopes and contents, commit and free, extents, MPI_Pack / MPI_Unpack / MPI_Pack_size.
//
// Point-to-point takes any committed type: ob1 sends and receives a type whose data is not
// count * size contiguous bytes (not `dense`) through a packed copy, for now (issue 6 brings
// packing fragment by fragment, without the copy). Collectives still refuse such types with
// MPI_ERR_TYPE and a clear message (valid_datatype(), datatype_problem()).
#include "mpi_internal.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <stdexcept>

namespace weft::mpi {

namespace {

// The layouts of the predefined types, made on first use.
const dt::Layout &predefined_layout(const weft_datatype *t)
{
    static std::mutex lock;
    static std::map<const weft_datatype *, dt::Layout> made;
    std::lock_guard g(lock);
    auto it = made.find(t);
    if (it == made.end())
        it = made.emplace(t, dt::basic(t->size, t->align, dt::Ext32(t->ext32))).first;
    return it->second;
}

int type_error(const char *fn, const std::string &what)
{
    return raise(nullptr, MPI_ERR_TYPE, fn, what);
}

// A constructor whose type does not fit in memory (the layout lists every run of the type map:
// a vector of 10^9 strided elements takes tens of GB) fails with MPI_ERR_NO_MEM rather than an
// exception out of a C function.
int no_memory(const char *fn)
{
    return raise(nullptr, MPI_ERR_NO_MEM, fn, "the type's layout does not fit in memory");
}

// A new derived type from a layout and the constructor's arguments (the types retained).
weft_datatype *make_type(dt::Layout layout, int combiner, std::vector<int> ints,
                         std::vector<ptrdiff_t> aints, std::vector<weft_datatype *> types)
{
    auto *t = new weft_datatype;
    t->predefined = false;
    t->committed = false;
    t->combiner = combiner;
    t->size = layout.size;
    t->name = "";
    // A type of one kind of basic element keeps what reductions need to know of it.
    if (types.size() == 1 ||
        (types.size() > 1 && std::all_of(types.begin(), types.end(),
                                         [&](auto *x) { return x->elem == types[0]->elem; }))) {
        t->elem = types[0]->elem;
        t->type_class = types[0]->type_class;
        t->base = types[0]->predefined ? types[0] : types[0]->base;
    }
    t->dense = layout.size == 0 ||
               (layout.contiguous && layout.runs[0].disp == 0 && layout.lb == 0 &&
                std::all_of(types.begin(), types.end(), [](auto *x) { return x->dense; }));
    t->layout = std::make_shared<const dt::Layout>(std::move(layout));
    t->ints = std::move(ints);
    t->aints = std::move(aints);
    t->types = std::move(types);
    for (weft_datatype *c : t->types)
        if (!c->predefined)
            ++c->refs;
    return t;
}

// One release for the handle and for every reference a component took (weft/op.h).
void release_type(weft_datatype *t) { weft_datatype_release(t); }

// Common checks of the constructors; MPI_SUCCESS or the error raised.
int check_new(const char *fn, int count, MPI_Datatype old, MPI_Datatype *newtype)
{
    if (int rc = check_state(fn); rc != MPI_SUCCESS)
        return rc;
    if (count < 0)
        return raise(nullptr, MPI_ERR_COUNT, fn, "negative count " + std::to_string(count));
    if (old != MPI_DATATYPE_NULL && !live_datatype(old))
        return type_error(fn, "invalid oldtype");
    if (!newtype)
        return raise(nullptr, MPI_ERR_ARG, fn, "newtype is NULL");
    return MPI_SUCCESS;
}

int finish(MPI_Datatype *newtype, weft_datatype *t)
{
    *newtype = t;
    return MPI_SUCCESS;
}

// count blocks of blocklens[i] oldtypes at displacements disps[i] (bytes).
int blocks_type(const char *fn, int count, const int *blocklens, const ptrdiff_t *disps,
                MPI_Datatype old, int combiner, std::vector<int> ints, std::vector<ptrdiff_t> aints,
                MPI_Datatype *newtype)
{
    if (int rc = check_new(fn, count, old, newtype); rc != MPI_SUCCESS)
        return rc;
    if (!old)
        return type_error(fn, "oldtype is MPI_DATATYPE_NULL");
    if (count > 0 && (!blocklens || !disps))
        return raise(nullptr, MPI_ERR_ARG, fn, "a block array is NULL");
    const dt::Layout &child = layout_of(old);
    std::vector<dt::Block> blocks;
    for (int i = 0; i < count; ++i) {
        if (blocklens[i] < 0)
            return raise(nullptr, MPI_ERR_COUNT, fn,
                         "block length " + std::to_string(blocklens[i]) + " is negative");
        blocks.push_back({disps[i], size_t(blocklens[i]), &child});
    }
    return finish(newtype, make_type(dt::combine(blocks, 0), combiner, std::move(ints),
                                     std::move(aints), {old}));
}

std::vector<int> cat(std::initializer_list<int> head, const int *tail, int n)
{
    std::vector<int> v(head);
    if (tail)
        v.insert(v.end(), tail, tail + n);
    return v;
}

} // namespace

const dt::Layout &layout_of(const weft_datatype *t)
{
    return t->layout ? *t->layout : predefined_layout(t);
}

std::string datatype_problem(MPI_Datatype t)
{
    if (!t)
        return "the datatype is MPI_DATATYPE_NULL";
    if (!live_datatype(t))
        return "invalid datatype (freed?)";
    if (!t->committed)
        return "the datatype is not committed (MPI_Type_commit)";
    return "invalid datatype";
}

} // namespace weft::mpi

using namespace weft::mpi;
namespace dt = weft::dt;

extern "C" {

WEFT_PROFILED(MPI_Type_contiguous)
int PMPI_Type_contiguous(int count, MPI_Datatype old, MPI_Datatype *newtype)
try {
    WEFT_API_GUARD;
    const char *fn = "MPI_Type_contiguous";
    if (int rc = check_new(fn, count, old, newtype); rc != MPI_SUCCESS)
        return rc;
    if (!old)
        return type_error(fn, "oldtype is MPI_DATATYPE_NULL");
    const dt::Layout &child = layout_of(old);
    return finish(newtype, make_type(dt::combine({{0, size_t(count), &child}}, 0),
                                     MPI_COMBINER_CONTIGUOUS, {count}, {}, {old}));
} catch (const std::exception &) {
    return no_memory("MPI_Type_contiguous");
}

WEFT_PROFILED(MPI_Type_vector)
int PMPI_Type_vector(int count, int blocklen, int stride, MPI_Datatype old, MPI_Datatype *newtype)
try {
    WEFT_API_GUARD;
    const char *fn = "MPI_Type_vector";
    if (int rc = check_new(fn, count, old, newtype); rc != MPI_SUCCESS)
        return rc;
    if (!old)
        return type_error(fn, "oldtype is MPI_DATATYPE_NULL");
    const ptrdiff_t ext = layout_of(old).extent();
    std::vector<int> lens(static_cast<size_t>(count), blocklen);
    std::vector<ptrdiff_t> disps(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i)
        disps[size_t(i)] = ptrdiff_t(i) * stride * ext;
    return blocks_type(fn, count, lens.data(), disps.data(), old, MPI_COMBINER_VECTOR,
                       {count, blocklen, stride}, {}, newtype);
} catch (const std::exception &) {
    return no_memory("MPI_Type_vector");
}

WEFT_PROFILED(MPI_Type_create_hvector)
int PMPI_Type_create_hvector(int count, int blocklen, MPI_Aint stride, MPI_Datatype old,
                             MPI_Datatype *newtype)
try {
    WEFT_API_GUARD;
    std::vector<int> lens(size_t(std::max(count, 0)), blocklen);
    std::vector<ptrdiff_t> disps(size_t(std::max(count, 0)));
    for (int i = 0; i < count; ++i)
        disps[size_t(i)] = ptrdiff_t(i) * stride;
    return blocks_type("MPI_Type_create_hvector", count, lens.data(), disps.data(), old,
                       MPI_COMBINER_HVECTOR, {count, blocklen}, {stride}, newtype);
} catch (const std::exception &) {
    return no_memory("MPI_Type_create_hvector");
}

WEFT_PROFILED(MPI_Type_indexed)
int PMPI_Type_indexed(int count, const int blocklens[], const int displs[], MPI_Datatype old,
                      MPI_Datatype *newtype)
try {
    WEFT_API_GUARD;
    const char *fn = "MPI_Type_indexed";
    if (int rc = check_new(fn, count, old, newtype); rc != MPI_SUCCESS)
        return rc;
    if (!old)
        return type_error(fn, "oldtype is MPI_DATATYPE_NULL");
    if (count > 0 && (!blocklens || !displs))
        return raise(nullptr, MPI_ERR_ARG, fn, "a block array is NULL");
    const ptrdiff_t ext = layout_of(old).extent();
    std::vector<ptrdiff_t> disps(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i)
        disps[size_t(i)] = ptrdiff_t(displs[i]) * ext;
    std::vector<int> ints = cat({count}, blocklens, count);
    ints.insert(ints.end(), displs, displs + count);
    return blocks_type(fn, count, blocklens, disps.data(), old, MPI_COMBINER_INDEXED,
                       std::move(ints), {}, newtype);
} catch (const std::exception &) {
    return no_memory("MPI_Type_indexed");
}

WEFT_PROFILED(MPI_Type_create_hindexed)
int PMPI_Type_create_hindexed(int count, const int blocklens[], const MPI_Aint displs[],
                              MPI_Datatype old, MPI_Datatype *newtype)
try {
    WEFT_API_GUARD;
    std::vector<ptrdiff_t> disps(displs, displs + (displs ? std::max(count, 0) : 0));
    return blocks_type("MPI_Type_create_hindexed", count, blocklens, disps.data(), old,
                       MPI_COMBINER_HINDEXED, cat({count}, blocklens, std::max(count, 0)), disps,
                       newtype);
} catch (const std::exception &) {
    return no_memory("MPI_Type_create_hindexed");
}

WEFT_PROFILED(MPI_Type_create_indexed_block)
int PMPI_Type_create_indexed_block(int count, int blocklen, const int displs[], MPI_Datatype old,
                                   MPI_Datatype *newtype)
try {
    WEFT_API_GUARD;
    const char *fn = "MPI_Type_create_indexed_block";
    if (int rc = check_new(fn, count, old, newtype); rc != MPI_SUCCESS)
        return rc;
    if (!old)
        return type_error(fn, "oldtype is MPI_DATATYPE_NULL");
    if (count > 0 && !displs)
        return raise(nullptr, MPI_ERR_ARG, fn, "displacements is NULL");
    const ptrdiff_t ext = layout_of(old).extent();
    std::vector<int> lens(static_cast<size_t>(count), blocklen);
    std::vector<ptrdiff_t> disps(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i)
        disps[size_t(i)] = ptrdiff_t(displs[i]) * ext;
    return blocks_type(fn, count, lens.data(), disps.data(), old, MPI_COMBINER_INDEXED_BLOCK,
                       cat({count, blocklen}, displs, count), {}, newtype);
} catch (const std::exception &) {
    return no_memory("MPI_Type_create_indexed_block");
}

WEFT_PROFILED(MPI_Type_create_hindexed_block)
int PMPI_Type_create_hindexed_block(int count, int blocklen, const MPI_Aint displs[],
                                    MPI_Datatype old, MPI_Datatype *newtype)
try {
    WEFT_API_GUARD;
    std::vector<int> lens(size_t(std::max(count, 0)), blocklen);
    std::vector<ptrdiff_t> disps(displs, displs + (displs ? std::max(count, 0) : 0));
    return blocks_type("MPI_Type_create_hindexed_block", count, lens.data(), disps.data(), old,
                       MPI_COMBINER_HINDEXED_BLOCK, {count, blocklen}, disps, newtype);
} catch (const std::exception &) {
    return no_memory("MPI_Type_create_hindexed_block");
}

WEFT_PROFILED(MPI_Type_create_struct)
int PMPI_Type_create_struct(int count, const int blocklens[], const MPI_Aint displs[],
                            const MPI_Datatype types[], MPI_Datatype *newtype)
try {
    WEFT_API_GUARD;
    const char *fn = "MPI_Type_create_struct";
    if (int rc = check_new(fn, count, MPI_DATATYPE_NULL, newtype); rc != MPI_SUCCESS)
        return rc;
    if (count > 0 && (!blocklens || !displs || !types))
        return raise(nullptr, MPI_ERR_ARG, fn, "an array is NULL");
    std::vector<dt::Block> blocks;
    std::vector<weft_datatype *> kids;
    for (int i = 0; i < count; ++i) {
        if (!live_datatype(types[i]))
            return type_error(fn, "types[" + std::to_string(i) + "] is invalid");
        if (blocklens[i] < 0)
            return raise(nullptr, MPI_ERR_COUNT, fn, "a block length is negative");
        blocks.push_back({displs[i], size_t(blocklens[i]), &layout_of(types[i])});
        kids.push_back(types[i]);
    }
    // C pads a struct to the alignment of its largest member: so does MPI's extent.
    return finish(newtype,
                  make_type(dt::combine(blocks, 1), MPI_COMBINER_STRUCT,
                            cat({count}, blocklens, count),
                            std::vector<ptrdiff_t>(displs, displs + count), std::move(kids)));
} catch (const std::exception &) {
    return no_memory("MPI_Type_create_struct");
}

WEFT_PROFILED(MPI_Type_create_subarray)
int PMPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[],
                              const int starts[], int order, MPI_Datatype old,
                              MPI_Datatype *newtype)
try {
    WEFT_API_GUARD;
    const char *fn = "MPI_Type_create_subarray";
    if (int rc = check_new(fn, 0, old, newtype); rc != MPI_SUCCESS)
        return rc;
    if (!old)
        return type_error(fn, "oldtype is MPI_DATATYPE_NULL");
    if (ndims < 1 || !sizes || !subsizes || !starts)
        return raise(nullptr, MPI_ERR_ARG, fn, "ndims < 1 or an array is NULL");
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return raise(nullptr, MPI_ERR_ARG, fn,
                     "order is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN");
    std::vector<size_t> sz, sub, st;
    for (int d = 0; d < ndims; ++d) {
        if (sizes[d] < 1 || subsizes[d] < 1 || starts[d] < 0 || subsizes[d] > sizes[d] ||
            starts[d] > sizes[d] - subsizes[d])
            return raise(nullptr, MPI_ERR_ARG, fn,
                         "dimension " + std::to_string(d) + ": need 1 <= subsize <= size and " +
                             "0 <= start <= size - subsize");
        sz.push_back(size_t(sizes[d]));
        sub.push_back(size_t(subsizes[d]));
        st.push_back(size_t(starts[d]));
    }
    std::vector<int> ints = {ndims};
    ints.insert(ints.end(), sizes, sizes + ndims);
    ints.insert(ints.end(), subsizes, subsizes + ndims);
    ints.insert(ints.end(), starts, starts + ndims);
    ints.push_back(order);
    return finish(newtype,
                  make_type(dt::subarray(sz, sub, st, order == MPI_ORDER_FORTRAN, layout_of(old)),
                            MPI_COMBINER_SUBARRAY, std::move(ints), {}, {old}));
} catch (const std::exception &) {
    return no_memory("MPI_Type_create_subarray");
}

// A distributed array (MPI-3.1 4.1.4): this process's part of an array of gsizes[] elements
// spread over a process grid of psizes[] (ranks in C order), each dimension by block, cyclic
// blocks or not at all.
WEFT_PROFILED(MPI_Type_create_darray)
int PMPI_Type_create_darray(int size, int rank, int ndims, const int gsizes[], const int distribs[],
                            const int dargs[], const int psizes[], int order, MPI_Datatype old,
                            MPI_Datatype *newtype)
try {
    WEFT_API_GUARD;
    const char *fn = "MPI_Type_create_darray";
    if (int rc = check_new(fn, 0, old, newtype); rc != MPI_SUCCESS)
        return rc;
    if (!old)
        return type_error(fn, "oldtype is MPI_DATATYPE_NULL");
    if (ndims < 1 || !gsizes || !distribs || !dargs || !psizes)
        return raise(nullptr, MPI_ERR_ARG, fn, "ndims < 1 or an array is NULL");
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return raise(nullptr, MPI_ERR_ARG, fn,
                     "order is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN");
    long long procs = 1;
    for (int d = 0; d < ndims; ++d)
        procs *= psizes[d] > 0 ? psizes[d] : 0;
    if (procs != size || rank < 0 || rank >= size)
        return raise(nullptr, MPI_ERR_ARG, fn,
                     "the process grid's size is not size, or rank is outside it");
    std::vector<size_t> sizes(static_cast<size_t>(ndims));
    std::vector<std::vector<dt::Range>> ranges(static_cast<size_t>(ndims));
    int rest = rank; // this process's grid coordinates, last dimension fastest
    for (int d = ndims - 1; d >= 0; --d) {
        const int p = psizes[d], coord = rest % p, g = gsizes[d];
        rest /= p;
        const std::string dim = "dimension " + std::to_string(d) + ": ";
        if (g < 1)
            return raise(nullptr, MPI_ERR_ARG, fn, dim + "gsize < 1");
        sizes[size_t(d)] = size_t(g);
        auto &idx = ranges[size_t(d)];
        switch (distribs[d]) {
        case MPI_DISTRIBUTE_NONE:
            if (p != 1)
                return raise(nullptr, MPI_ERR_ARG, fn, dim + "MPI_DISTRIBUTE_NONE over psize > 1");
            idx.push_back({0, size_t(g)});
            break;
        case MPI_DISTRIBUTE_BLOCK: {
            const int b = dargs[d] == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : dargs[d];
            if (b < 1 || (long long)b * p < g)
                return raise(nullptr, MPI_ERR_ARG, fn,
                             dim + "block size " + std::to_string(b) + " times psize " +
                                 std::to_string(p) + " does not cover gsize " + std::to_string(g));
            const long long lo = std::min<long long>((long long)coord * b, g),
                            hi = std::min<long long>((coord + 1LL) * b, g);
            if (hi > lo)
                idx.push_back({size_t(lo), size_t(hi - lo)});
            break;
        }
        case MPI_DISTRIBUTE_CYCLIC: {
            const int b = dargs[d] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : dargs[d];
            if (b < 1)
                return raise(nullptr, MPI_ERR_ARG, fn, dim + "cyclic block size < 1");
            for (long long start = (long long)coord * b; start < g; start += (long long)b * p)
                idx.push_back({size_t(start), size_t(std::min<long long>(start + b, g) - start)});
            break;
        }
        default:
            return raise(nullptr, MPI_ERR_ARG, fn,
                         dim + "unknown distribution " + std::to_string(distribs[d]));
        }
    }
    std::vector<int> ints = {size, rank, ndims};
    ints.insert(ints.end(), gsizes, gsizes + ndims);
    ints.insert(ints.end(), distribs, distribs + ndims);
    ints.insert(ints.end(), dargs, dargs + ndims);
    ints.insert(ints.end(), psizes, psizes + ndims);
    ints.push_back(order);
    return finish(newtype,
                  make_type(dt::grid(sizes, ranges, order == MPI_ORDER_FORTRAN, layout_of(old)),
                            MPI_COMBINER_DARRAY, std::move(ints), {}, {old}));
} catch (const std::exception &) {
    return no_memory("MPI_Type_create_darray");
}

WEFT_PROFILED(MPI_Type_create_resized)
int PMPI_Type_create_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype)
try {
    WEFT_API_GUARD;
    const char *fn = "MPI_Type_create_resized";
    if (int rc = check_new(fn, 0, old, newtype); rc != MPI_SUCCESS)
        return rc;
    if (!old)
        return type_error(fn, "oldtype is MPI_DATATYPE_NULL");
    return finish(newtype, make_type(dt::resized(layout_of(old), lb, extent), MPI_COMBINER_RESIZED,
                                     {}, {lb, extent}, {old}));
} catch (const std::exception &) {
    return no_memory("MPI_Type_create_resized");
}

WEFT_PROFILED(MPI_Type_dup)
int PMPI_Type_dup(MPI_Datatype old, MPI_Datatype *newtype)
try {
    WEFT_API_GUARD;
    const char *fn = "MPI_Type_dup";
    if (int rc = check_new(fn, 0, old, newtype); rc != MPI_SUCCESS)
        return rc;
    if (!old)
        return type_error(fn, "oldtype is MPI_DATATYPE_NULL");
    weft_datatype *t = make_type(layout_of(old), MPI_COMBINER_DUP, {}, {}, {old});
    t->elem = old->elem;
    t->type_class = old->type_class;
    t->committed = old->committed;
    if (int rc = type_copy_attrs(old, t); rc != MPI_SUCCESS) {
        release_type(t);
        return raise(nullptr, rc, fn, "an attribute's copy callback failed");
    }
    return finish(newtype, t);
} catch (const std::exception &) {
    return no_memory("MPI_Type_dup");
}

WEFT_PROFILED(MPI_Type_commit)
int PMPI_Type_commit(MPI_Datatype *datatype)
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Type_commit"); rc != MPI_SUCCESS)
        return rc;
    if (!datatype || !live_datatype(*datatype))
        return type_error("MPI_Type_commit", "invalid datatype");
    (*datatype)->committed = true;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Type_free)
int PMPI_Type_free(MPI_Datatype *datatype)
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Type_free"); rc != MPI_SUCCESS)
        return rc;
    if (!datatype || !live_datatype(*datatype))
        return type_error("MPI_Type_free", "invalid datatype");
    if ((*datatype)->predefined)
        return type_error("MPI_Type_free", "a predefined type cannot be freed");
    if (int rc = type_delete_attrs(*datatype); rc != MPI_SUCCESS)
        return raise(nullptr, rc, "MPI_Type_free", "an attribute's delete callback failed");
    release_type(*datatype); // types built on it keep it until they go
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Type_get_extent)
int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Type_get_extent"); rc != MPI_SUCCESS)
        return rc;
    if (!live_datatype(datatype))
        return type_error("MPI_Type_get_extent", "invalid datatype");
    if (!lb || !extent)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Type_get_extent", "lb or extent is NULL");
    const dt::Layout &l = layout_of(datatype);
    *lb = l.lb;
    *extent = l.extent();
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Type_get_true_extent)
int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Type_get_true_extent"); rc != MPI_SUCCESS)
        return rc;
    if (!live_datatype(datatype))
        return type_error("MPI_Type_get_true_extent", "invalid datatype");
    if (!true_lb || !true_extent)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Type_get_true_extent", "an argument is NULL");
    const dt::Layout &l = layout_of(datatype);
    *true_lb = l.true_lb;
    *true_extent = l.true_extent();
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Type_get_envelope)
int PMPI_Type_get_envelope(MPI_Datatype datatype, int *nints, int *naddrs, int *ntypes,
                           int *combiner)
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Type_get_envelope"); rc != MPI_SUCCESS)
        return rc;
    if (!live_datatype(datatype))
        return type_error("MPI_Type_get_envelope", "invalid datatype");
    if (!nints || !naddrs || !ntypes || !combiner)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Type_get_envelope", "an argument is NULL");
    *nints = int(datatype->ints.size());
    *naddrs = int(datatype->aints.size());
    *ntypes = int(datatype->types.size());
    // Predefined types are MPI_COMBINER_NAMED, but for the MPI_Type_create_f90_* ones.
    *combiner = datatype->combiner;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Type_get_contents)
int PMPI_Type_get_contents(MPI_Datatype datatype, int max_ints, int max_addrs, int max_types,
                           int ints[], MPI_Aint addrs[], MPI_Datatype types[])
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Type_get_contents";
    if (int rc = check_state(fn); rc != MPI_SUCCESS)
        return rc;
    if (!live_datatype(datatype))
        return type_error(fn, "invalid datatype");
    if (datatype->combiner == MPI_COMBINER_NAMED)
        return type_error(fn, "a predefined type has no contents (MPI_COMBINER_NAMED)");
    if (max_ints < int(datatype->ints.size()) || max_addrs < int(datatype->aints.size()) ||
        max_types < int(datatype->types.size()))
        return raise(nullptr, MPI_ERR_ARG, fn, "an array is shorter than the envelope says");
    std::copy(datatype->ints.begin(), datatype->ints.end(), ints);
    std::copy(datatype->aints.begin(), datatype->aints.end(), addrs);
    for (size_t i = 0; i < datatype->types.size(); ++i) {
        weft_datatype *c = datatype->types[i];
        if (!c->predefined)
            ++c->refs; // the caller's handle: it frees it (MPI-3.1 4.1.13)
        types[i] = c;
    }
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Type_set_name)
int PMPI_Type_set_name(MPI_Datatype datatype, const char *name)
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Type_set_name"); rc != MPI_SUCCESS)
        return rc;
    if (!live_datatype(datatype) || datatype->predefined)
        return type_error("MPI_Type_set_name", "invalid or predefined datatype");
    if (!name)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Type_set_name", "name is NULL");
    datatype->user_name.assign(name, strnlen(name, MPI_MAX_OBJECT_NAME - 1));
    datatype->name = datatype->user_name.c_str();
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Pack_size)
int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    WEFT_API_GUARD;
    if (int rc = check_state("MPI_Pack_size"); rc != MPI_SUCCESS)
        return rc;
    if (!valid_comm(comm))
        return raise(nullptr, MPI_ERR_COMM, "MPI_Pack_size", "invalid communicator");
    if (incount < 0)
        return raise(comm, MPI_ERR_COUNT, "MPI_Pack_size", "negative count");
    if (!live_datatype(datatype))
        return raise(comm, MPI_ERR_TYPE, "MPI_Pack_size", "invalid datatype");
    if (!size)
        return raise(comm, MPI_ERR_ARG, "MPI_Pack_size", "size is NULL");
    const size_t bytes = size_t(incount) * layout_of(datatype).size;
    if (bytes > size_t(INT_MAX))
        return raise(comm, MPI_ERR_COUNT, "MPI_Pack_size", "the packed size exceeds INT_MAX");
    *size = int(bytes);
    return MPI_SUCCESS;
}

} // extern "C"

namespace {

// MPI_Pack and MPI_Unpack: count elements of datatype between the typed buffer and the packed
// buffer of `room` bytes at *position. Checks, then moves the bytes and advances *position.
int pack_or_unpack(const char *fn, bool packing, const void *packed_in, void *packed_out, int room,
                   int *position, const void *typed_in, void *typed_out, int count,
                   MPI_Datatype datatype, MPI_Comm comm)
{
    if (int rc = check_state(fn); rc != MPI_SUCCESS)
        return rc;
    if (!valid_comm(comm))
        return raise(nullptr, MPI_ERR_COMM, fn, "invalid communicator");
    if (count < 0 || room < 0)
        return raise(comm, MPI_ERR_COUNT, fn, "negative count or size");
    if (!live_datatype(datatype) || !datatype->committed)
        return raise(comm, MPI_ERR_TYPE, fn, "invalid or uncommitted datatype");
    if (!position || *position < 0)
        return raise(comm, MPI_ERR_ARG, fn, "position is NULL or negative");
    const dt::Layout &l = layout_of(datatype);
    const size_t bytes = size_t(count) * l.size;
    if (size_t(*position) + bytes > size_t(room))
        return raise(comm, MPI_ERR_TRUNCATE, fn,
                     std::string(packing ? "outbuf" : "inbuf") + " has " +
                         std::to_string(room - *position) + " bytes left, " +
                         std::to_string(bytes) + " needed");
    if (packing)
        dt::pack(l, typed_in, size_t(count), 0, static_cast<char *>(packed_out) + *position, bytes);
    else
        dt::unpack(l, typed_out, size_t(count), 0, static_cast<const char *>(packed_in) + *position,
                   bytes);
    *position += int(bytes);
    return MPI_SUCCESS;
}

} // namespace

extern "C" {

WEFT_PROFILED(MPI_Pack)
int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
              int *position, MPI_Comm comm)
{
    WEFT_API_RETURN(pack_or_unpack("MPI_Pack", true, nullptr, outbuf, outsize, position, inbuf,
                                   nullptr, incount, datatype, comm));
}

WEFT_PROFILED(MPI_Unpack)
int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                MPI_Datatype datatype, MPI_Comm comm)
{
    WEFT_API_RETURN(pack_or_unpack("MPI_Unpack", false, inbuf, nullptr, insize, position, nullptr,
                                   outbuf, outcount, datatype, comm));
}

} // extern "C"
