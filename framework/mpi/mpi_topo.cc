// Process topologies (MPI-3.1 chapter 7): Cartesian grids, graphs and distributed graphs, the
// queries on them, and MPI_Dims_create. A topology communicator is made as MPI_Comm_split makes
// one (the ranks keep their order: reorder is a hint this library does not take), and then
// given its topology (mpi_topo.h). The neighbourhood collectives are in mpi_coll.cc.
#include "mpi_topo.h"

#include "mpi_internal.h"

#include <algorithm>
#include <climits>
#include <memory>
#include <string>

namespace weft::mpi {

namespace {

using Kind = Topology::Kind;

// The process count of a grid: the product of dims (1 for no dimension).
long long grid_size(const std::vector<int> &dims)
{
    long long n = 1;
    for (int d : dims)
        n *= d;
    return n;
}

// Rank <-> coordinates in a row-major grid.
std::vector<int> cart_coords(const Topology &t, int rank)
{
    std::vector<int> c(t.dims.size());
    for (size_t i = t.dims.size(); i-- > 0;) {
        c[i] = rank % t.dims[i];
        rank /= t.dims[i];
    }
    return c;
}

// The rank at coordinates c, a periodic dimension wrapping around; -1 when a coordinate is
// outside a non-periodic dimension.
int cart_rank(const Topology &t, const std::vector<int> &c)
{
    int rank = 0;
    for (size_t i = 0; i < t.dims.size(); ++i) {
        int x = c[i];
        if (t.periods[i])
            x = ((x % t.dims[i]) + t.dims[i]) % t.dims[i];
        else if (x < 0 || x >= t.dims[i])
            return -1;
        rank = rank * t.dims[i] + x;
    }
    return rank;
}

// MPI_Cart_shift's answer for `rank`: the ranks disp steps back and forward along dimension
// dim, MPI_PROC_NULL past a non-periodic edge.
void cart_shift(const Topology &t, int rank, size_t dim, int disp, int &source, int &dest)
{
    std::vector<int> c = cart_coords(t, rank);
    const int here = c[dim];
    // In 64 bits (here +- INT_MAX overflows an int), reduced to the dimension when periodic;
    // anything else off the grid stays off it.
    const long long n = t.dims[dim];
    auto place = [&](long long at) {
        if (t.periods[dim])
            at = ((at % n) + n) % n;
        return at < 0 || at >= n ? -1 : int(at);
    };
    const int back = place((long long)here - disp), fwd = place((long long)here + disp);
    c[dim] = back;
    source = back < 0 ? -1 : cart_rank(t, c);
    c[dim] = fwd;
    dest = fwd < 0 ? -1 : cart_rank(t, c);
    if (source < 0)
        source = MPI_PROC_NULL;
    if (dest < 0)
        dest = MPI_PROC_NULL;
}

// A graph's neighbours of `rank`: edges[index[rank - 1] .. index[rank]).
std::pair<int, int> graph_range(const Topology &t, int rank)
{
    return {rank == 0 ? 0 : t.index[size_t(rank) - 1], t.index[size_t(rank)]};
}

int check_comm(MPI_Comm comm, const char *fn)
{
    if (int rc = check_state(fn); rc != MPI_SUCCESS)
        return rc;
    if (!valid_comm(comm))
        return raise(nullptr, MPI_ERR_COMM, fn, "invalid communicator");
    return MPI_SUCCESS;
}

const char *kind_name(Kind k)
{
    switch (k) {
    case Kind::cart: return "a Cartesian";
    case Kind::graph: return "a graph";
    case Kind::dist_graph: return "a distributed graph";
    }
    return "a";
}

// A query on comm's topology of kind `kind`: check_comm, then MPI_ERR_TOPOLOGY when comm has
// another one or none.
int need_topo(MPI_Comm comm, Kind kind, const char *fn, const Topology *&t)
{
    if (int rc = check_comm(comm, fn); rc != MPI_SUCCESS)
        return rc;
    if (!comm->topo || comm->topo->kind != kind)
        return raise(comm, MPI_ERR_TOPOLOGY, fn,
                     std::string("the communicator has no ") + (kind_name(kind) + 2) + " topology");
    t = comm->topo.get();
    return MPI_SUCCESS;
}

// What a constructor checks of the communicator it starts from.
int check_old_comm(MPI_Comm comm, MPI_Comm *newcomm, const char *fn)
{
    if (int rc = check_comm(comm, fn); rc != MPI_SUCCESS)
        return rc;
    if (weft_comm_is_revoked(comm))
        return raise_revoked(comm, fn);
    if (comm->is_inter())
        return raise(comm, MPI_ERR_COMM, fn, "topologies are for intracommunicators");
    if (!newcomm)
        return raise(comm, MPI_ERR_ARG, fn, "the new communicator's handle is NULL");
    return MPI_SUCCESS;
}

// The new communicator of the ranks of comm for which `member` holds, in comm's order, with
// topology t (MPI_COMM_NULL at the others). Collective over comm.
int make_topo_comm(MPI_Comm comm, bool member, std::shared_ptr<const Topology> t, int key,
                   MPI_Comm *newcomm)
{
    MPI_Comm c = MPI_COMM_NULL;
    if (int rc = PMPI_Comm_split(comm, member ? 0 : MPI_UNDEFINED, key, &c); rc != MPI_SUCCESS)
        return rc;
    if (c != MPI_COMM_NULL)
        c->topo = std::move(t);
    *newcomm = c;
    return MPI_SUCCESS;
}

// A grid's dimensions and periods, checked: MPI_ERR_DIMS for a negative ndims, a dimension
// that is not positive, or more processes than comm has.
int check_grid(MPI_Comm comm, int ndims, const int *dims, const int *periods, const char *fn,
               Topology &t)
{
    if (ndims < 0)
        return raise(comm, MPI_ERR_DIMS, fn, "ndims " + std::to_string(ndims) + " is negative");
    if (ndims > 0 && (!dims || !periods))
        return raise(comm, MPI_ERR_ARG, fn, std::string(dims ? "periods" : "dims") + " is NULL");
    t.kind = Kind::cart;
    long long n = 1;
    for (int i = 0; i < ndims; ++i) {
        if (dims[i] <= 0)
            return raise(comm, MPI_ERR_DIMS, fn,
                         "dims[" + std::to_string(i) + "] = " + std::to_string(dims[i]) +
                             " is not positive");
        n *= dims[i];
        if (n > comm->size)
            return raise(comm, MPI_ERR_DIMS, fn,
                         "the grid has more processes than the communicator's " +
                             std::to_string(comm->size));
        t.dims.push_back(dims[i]);
        t.periods.push_back(periods[i] ? 1 : 0);
    }
    return MPI_SUCCESS;
}

// A graph's index and edges, checked (nnodes of comm's ranks take part).
int check_graph(MPI_Comm comm, int nnodes, const int *index, const int *edges, const char *fn,
                Topology &t)
{
    if (nnodes < 0 || nnodes > comm->size)
        return raise(comm, MPI_ERR_ARG, fn,
                     "nnodes " + std::to_string(nnodes) + " is not in 0.." +
                         std::to_string(comm->size));
    if (nnodes > 0 && !index)
        return raise(comm, MPI_ERR_ARG, fn, "index is NULL");
    t.kind = Kind::graph;
    for (int i = 0; i < nnodes; ++i)
        if (index[i] < (i ? index[i - 1] : 0))
            return raise(comm, MPI_ERR_ARG, fn,
                         "index[" + std::to_string(i) + "] = " + std::to_string(index[i]) +
                             " is below the one before it");
    t.index.assign(index, index + nnodes);
    const int nedges = nnodes ? index[nnodes - 1] : 0;
    if (nedges > 0 && !edges)
        return raise(comm, MPI_ERR_ARG, fn, "edges is NULL");
    for (int e = 0; e < nedges; ++e)
        if (edges[e] < 0 || edges[e] >= nnodes)
            return raise(comm, MPI_ERR_RANK, fn,
                         "edges[" + std::to_string(e) + "] = " + std::to_string(edges[e]) +
                             " is not a node of the graph");
    t.edges.assign(edges, edges + nedges);
    return MPI_SUCCESS;
}

// A list of ranks of comm (a distributed graph's neighbours), checked.
int check_ranks(MPI_Comm comm, const int *ranks, int n, const char *what, const char *fn)
{
    if (n > 0 && !ranks)
        return raise(comm, MPI_ERR_ARG, fn, std::string(what) + " is NULL");
    for (int i = 0; i < n; ++i)
        if (ranks[i] < 0 || ranks[i] >= comm->size)
            return raise(comm, MPI_ERR_RANK, fn,
                         std::string(what) + "[" + std::to_string(i) +
                             "] = " + std::to_string(ranks[i]) + " is not a rank of comm_old");
    return MPI_SUCCESS;
}

// A weight array for n edges: MPI_UNWEIGHTED, or (n > 0) a real array.
int check_weights(MPI_Comm comm, const int *weights, int n, const char *what, const char *fn)
{
    if (weights == MPI_UNWEIGHTED || n == 0)
        return MPI_SUCCESS;
    if (!weights || weights == MPI_WEIGHTS_EMPTY)
        return raise(comm, MPI_ERR_ARG, fn,
                     std::string(what) + " is " + (weights ? "MPI_WEIGHTS_EMPTY" : "NULL") +
                         " for " + std::to_string(n) + " edges");
    return MPI_SUCCESS;
}

// MPI_Dims_create's search: the k factors of m, in non-increasing order and none above
// `most`, whose largest and smallest differ least (the first such, by larger leading factors,
// on a tie). divisors: those of the original m, ascending.
void balanced(long long m, size_t k, long long most, const std::vector<long long> &divisors,
              std::vector<int> &cur, std::vector<int> &best, long long &best_spread)
{
    if (k == 0) {
        if (m != 1)
            return;
        const long long spread = cur.empty() ? 0 : cur.front() - cur.back();
        if (best.empty() || spread < best_spread) {
            best = cur;
            best_spread = spread;
        }
        return;
    }
    for (size_t i = divisors.size(); i-- > 0;) {
        const long long f = divisors[i];
        if (f > most || m % f != 0)
            continue;
        // k factors of at most f must reach m.
        long long reach = 1;
        for (size_t j = 0; j < k && reach < m; ++j)
            reach *= f;
        if (reach < m)
            break; // smaller f reach less
        if (!cur.empty() && best.size() && cur.front() - f >= best_spread)
            break; // the spread only grows from here
        cur.push_back(int(f));
        balanced(m / f, k - 1, f, divisors, cur, best, best_spread);
        cur.pop_back();
    }
}

} // namespace

Neighbors topo_neighbors(const Topology &t, int rank)
{
    Neighbors nb;
    switch (t.kind) {
    case Kind::cart:
        for (size_t d = 0; d < t.dims.size(); ++d) {
            int source, dest;
            cart_shift(t, rank, d, 1, source, dest);
            // The neighbour in the negative direction (the source of a shift by +1) first.
            nb.in.push_back(source);
            nb.in.push_back(dest);
        }
        nb.out = nb.in;
        break;
    case Kind::graph: {
        const auto [first, last] = graph_range(t, rank);
        nb.in.assign(t.edges.begin() + first, t.edges.begin() + last);
        nb.out = nb.in;
        break;
    }
    case Kind::dist_graph:
        nb.in = t.sources;
        nb.out = t.destinations;
        break;
    }
    return nb;
}

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

// MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY: only their addresses count.
int weft_mpi_unweighted[1];
int weft_mpi_weights_empty[1];

WEFT_PROFILED(MPI_Dims_create)
int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Dims_create";
    if (int rc = check_state(fn); rc != MPI_SUCCESS)
        return rc;
    if (nnodes <= 0)
        return raise(nullptr, MPI_ERR_ARG, fn,
                     "nnodes " + std::to_string(nnodes) + " is not positive");
    if (ndims < 0)
        return raise(nullptr, MPI_ERR_DIMS, fn, "ndims " + std::to_string(ndims) + " is negative");
    if (ndims > 0 && !dims)
        return raise(nullptr, MPI_ERR_ARG, fn, "dims is NULL");
    long long fixed = 1;
    size_t free = 0;
    for (int i = 0; i < ndims; ++i) {
        if (dims[i] < 0)
            return raise(nullptr, MPI_ERR_DIMS, fn,
                         "dims[" + std::to_string(i) + "] = " + std::to_string(dims[i]) +
                             " is negative");
        if (dims[i] == 0)
            ++free;
        else
            fixed *= dims[i];
        if (fixed > nnodes)
            break;
    }
    if (nnodes % fixed != 0)
        return raise(nullptr, MPI_ERR_DIMS, fn,
                     "the dimensions given (product " + std::to_string(fixed) +
                         ") do not divide nnodes " + std::to_string(nnodes));
    const long long m = nnodes / fixed;
    if (free == 0) {
        if (m != 1)
            return raise(nullptr, MPI_ERR_DIMS, fn,
                         "the dimensions given (product " + std::to_string(fixed) +
                             ") are not nnodes " + std::to_string(nnodes));
        return MPI_SUCCESS;
    }
    std::vector<long long> divisors;
    for (long long d = 1; d * d <= m; ++d)
        if (m % d == 0) {
            divisors.push_back(d);
            if (d != m / d)
                divisors.push_back(m / d);
        }
    std::sort(divisors.begin(), divisors.end());
    std::vector<int> cur, best;
    long long spread = LLONG_MAX;
    balanced(m, free, m, divisors, cur, best, spread);
    size_t k = 0;
    for (int i = 0; i < ndims; ++i)
        if (dims[i] == 0)
            dims[i] = best[k++];
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Cart_create)
int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int,
                     MPI_Comm *comm_cart)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Cart_create";
    if (int rc = check_old_comm(comm_old, comm_cart, fn); rc != MPI_SUCCESS)
        return rc;
    auto t = std::make_shared<Topology>();
    if (int rc = check_grid(comm_old, ndims, dims, periods, fn, *t); rc != MPI_SUCCESS)
        return rc;
    const bool member = comm_old->rank < grid_size(t->dims);
    return make_topo_comm(comm_old, member, std::move(t), comm_old->rank, comm_cart);
}

WEFT_PROFILED(MPI_Cart_map)
int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Cart_map";
    if (int rc = check_comm(comm, fn); rc != MPI_SUCCESS)
        return rc;
    if (comm->is_inter())
        return raise(comm, MPI_ERR_COMM, fn, "topologies are for intracommunicators");
    if (!newrank)
        return raise(comm, MPI_ERR_ARG, fn, "newrank is NULL");
    Topology t;
    if (int rc = check_grid(comm, ndims, dims, periods, fn, t); rc != MPI_SUCCESS)
        return rc;
    *newrank = comm->rank < grid_size(t.dims) ? comm->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Cartdim_get)
int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    WEFT_API_GUARD;
    const Topology *t = nullptr;
    if (int rc = need_topo(comm, Kind::cart, "MPI_Cartdim_get", t); rc != MPI_SUCCESS)
        return rc;
    if (!ndims)
        return raise(comm, MPI_ERR_ARG, "MPI_Cartdim_get", "ndims is NULL");
    *ndims = int(t->dims.size());
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Cart_get)
int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Cart_get";
    const Topology *t = nullptr;
    if (int rc = need_topo(comm, Kind::cart, fn, t); rc != MPI_SUCCESS)
        return rc;
    const int n = int(t->dims.size());
    if (maxdims < n)
        return raise(comm, MPI_ERR_ARG, fn,
                     "maxdims " + std::to_string(maxdims) + " is below the " + std::to_string(n) +
                         " dimensions");
    if (n > 0 && (!dims || !periods || !coords))
        return raise(comm, MPI_ERR_ARG, fn, "an output array is NULL");
    const std::vector<int> c = cart_coords(*t, comm->rank);
    for (int i = 0; i < n; ++i) {
        dims[i] = t->dims[size_t(i)];
        periods[i] = t->periods[size_t(i)];
        coords[i] = c[size_t(i)];
    }
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Cart_rank)
int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Cart_rank";
    const Topology *t = nullptr;
    if (int rc = need_topo(comm, Kind::cart, fn, t); rc != MPI_SUCCESS)
        return rc;
    if (!rank || (!t->dims.empty() && !coords))
        return raise(comm, MPI_ERR_ARG, fn, std::string(rank ? "coords" : "rank") + " is NULL");
    const std::vector<int> c(coords, coords + t->dims.size());
    const int r = cart_rank(*t, c);
    if (r < 0)
        return raise(comm, MPI_ERR_ARG, fn, "a coordinate is outside its non-periodic dimension");
    *rank = r;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Cart_coords)
int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Cart_coords";
    const Topology *t = nullptr;
    if (int rc = need_topo(comm, Kind::cart, fn, t); rc != MPI_SUCCESS)
        return rc;
    if (rank < 0 || rank >= comm->size)
        return raise(comm, MPI_ERR_RANK, fn,
                     "rank " + std::to_string(rank) + " is not in 0.." +
                         std::to_string(comm->size - 1));
    const int n = int(t->dims.size());
    if (maxdims < n)
        return raise(comm, MPI_ERR_ARG, fn,
                     "maxdims " + std::to_string(maxdims) + " is below the " + std::to_string(n) +
                         " dimensions");
    if (n > 0 && !coords)
        return raise(comm, MPI_ERR_ARG, fn, "coords is NULL");
    const std::vector<int> c = cart_coords(*t, rank);
    std::copy(c.begin(), c.end(), coords);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Cart_shift)
int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Cart_shift";
    const Topology *t = nullptr;
    if (int rc = need_topo(comm, Kind::cart, fn, t); rc != MPI_SUCCESS)
        return rc;
    if (direction < 0 || size_t(direction) >= t->dims.size())
        return raise(comm, MPI_ERR_ARG, fn,
                     "direction " + std::to_string(direction) + " is not a dimension of the " +
                         std::to_string(t->dims.size()));
    if (!rank_source || !rank_dest)
        return raise(comm, MPI_ERR_ARG, fn,
                     std::string(rank_source ? "rank_dest" : "rank_source") + " is NULL");
    cart_shift(*t, comm->rank, size_t(direction), disp, *rank_source, *rank_dest);
    return MPI_SUCCESS;
}

// The subgrids of the dimensions kept: ranks that agree on the coordinates dropped form one,
// numbered row-major in the coordinates kept (which is their order in comm too).
WEFT_PROFILED(MPI_Cart_sub)
int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Cart_sub";
    const Topology *t = nullptr;
    if (int rc = need_topo(comm, Kind::cart, fn, t); rc != MPI_SUCCESS)
        return rc;
    if (weft_comm_is_revoked(comm))
        return raise_revoked(comm, fn);
    if (!newcomm || (!t->dims.empty() && !remain_dims))
        return raise(comm, MPI_ERR_ARG, fn,
                     std::string(newcomm ? "remain_dims" : "newcomm") + " is NULL");
    const std::vector<int> c = cart_coords(*t, comm->rank);
    auto sub = std::make_shared<Topology>();
    int color = 0, key = 0;
    for (size_t i = 0; i < t->dims.size(); ++i) {
        if (remain_dims[i]) {
            sub->dims.push_back(t->dims[i]);
            sub->periods.push_back(t->periods[i]);
            key = key * t->dims[i] + c[i];
        } else {
            color = color * t->dims[i] + c[i];
        }
    }
    MPI_Comm out = MPI_COMM_NULL;
    if (int rc = PMPI_Comm_split(comm, color, key, &out); rc != MPI_SUCCESS)
        return rc;
    out->topo = std::move(sub);
    *newcomm = out;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Graph_create)
int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int,
                      MPI_Comm *comm_graph)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Graph_create";
    if (int rc = check_old_comm(comm_old, comm_graph, fn); rc != MPI_SUCCESS)
        return rc;
    auto t = std::make_shared<Topology>();
    if (int rc = check_graph(comm_old, nnodes, index, edges, fn, *t); rc != MPI_SUCCESS)
        return rc;
    return make_topo_comm(comm_old, comm_old->rank < nnodes, std::move(t), comm_old->rank,
                          comm_graph);
}

WEFT_PROFILED(MPI_Graph_map)
int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Graph_map";
    if (int rc = check_comm(comm, fn); rc != MPI_SUCCESS)
        return rc;
    if (comm->is_inter())
        return raise(comm, MPI_ERR_COMM, fn, "topologies are for intracommunicators");
    if (!newrank)
        return raise(comm, MPI_ERR_ARG, fn, "newrank is NULL");
    Topology t;
    if (int rc = check_graph(comm, nnodes, index, edges, fn, t); rc != MPI_SUCCESS)
        return rc;
    *newrank = comm->rank < nnodes ? comm->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Graphdims_get)
int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Graphdims_get";
    const Topology *t = nullptr;
    if (int rc = need_topo(comm, Kind::graph, fn, t); rc != MPI_SUCCESS)
        return rc;
    if (!nnodes || !nedges)
        return raise(comm, MPI_ERR_ARG, fn, std::string(nnodes ? "nedges" : "nnodes") + " is NULL");
    *nnodes = int(t->index.size());
    *nedges = int(t->edges.size());
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Graph_get)
int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Graph_get";
    const Topology *t = nullptr;
    if (int rc = need_topo(comm, Kind::graph, fn, t); rc != MPI_SUCCESS)
        return rc;
    if (maxindex < 0 || maxedges < 0)
        return raise(comm, MPI_ERR_ARG, fn, "maxindex or maxedges is negative");
    const size_t ni = std::min(size_t(maxindex), t->index.size());
    const size_t ne = std::min(size_t(maxedges), t->edges.size());
    if ((ni && !index) || (ne && !edges))
        return raise(comm, MPI_ERR_ARG, fn, std::string(index ? "edges" : "index") + " is NULL");
    std::copy_n(t->index.begin(), ni, index);
    std::copy_n(t->edges.begin(), ne, edges);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Graph_neighbors_count)
int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Graph_neighbors_count";
    const Topology *t = nullptr;
    if (int rc = need_topo(comm, Kind::graph, fn, t); rc != MPI_SUCCESS)
        return rc;
    if (rank < 0 || size_t(rank) >= t->index.size())
        return raise(comm, MPI_ERR_RANK, fn,
                     "rank " + std::to_string(rank) + " is not a node of the graph");
    if (!nneighbors)
        return raise(comm, MPI_ERR_ARG, fn, "nneighbors is NULL");
    const auto [first, last] = graph_range(*t, rank);
    *nneighbors = last - first;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Graph_neighbors)
int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Graph_neighbors";
    const Topology *t = nullptr;
    if (int rc = need_topo(comm, Kind::graph, fn, t); rc != MPI_SUCCESS)
        return rc;
    if (rank < 0 || size_t(rank) >= t->index.size())
        return raise(comm, MPI_ERR_RANK, fn,
                     "rank " + std::to_string(rank) + " is not a node of the graph");
    if (maxneighbors < 0)
        return raise(comm, MPI_ERR_ARG, fn, "maxneighbors is negative");
    const auto [first, last] = graph_range(*t, rank);
    const int n = std::min(maxneighbors, last - first);
    if (n > 0 && !neighbors)
        return raise(comm, MPI_ERR_ARG, fn, "neighbors is NULL");
    std::copy_n(t->edges.begin() + first, n, neighbors);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Dist_graph_create_adjacent)
int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[], const int destweights[], MPI_Info,
                                    int, MPI_Comm *comm_dist_graph)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Dist_graph_create_adjacent";
    if (int rc = check_old_comm(comm_old, comm_dist_graph, fn); rc != MPI_SUCCESS)
        return rc;
    if (indegree < 0 || outdegree < 0)
        return raise(comm_old, MPI_ERR_ARG, fn,
                     std::string(indegree < 0 ? "indegree" : "outdegree") + " is negative");
    if (int rc = check_ranks(comm_old, sources, indegree, "sources", fn); rc != MPI_SUCCESS)
        return rc;
    if (int rc = check_ranks(comm_old, destinations, outdegree, "destinations", fn);
        rc != MPI_SUCCESS)
        return rc;
    if (int rc = check_weights(comm_old, sourceweights, indegree, "sourceweights", fn);
        rc != MPI_SUCCESS)
        return rc;
    if (int rc = check_weights(comm_old, destweights, outdegree, "destweights", fn);
        rc != MPI_SUCCESS)
        return rc;
    auto t = std::make_shared<Topology>();
    t->kind = Kind::dist_graph;
    t->weighted = sourceweights != MPI_UNWEIGHTED && destweights != MPI_UNWEIGHTED;
    t->sources.assign(sources, sources + indegree);
    t->destinations.assign(destinations, destinations + outdegree);
    if (t->weighted) {
        t->source_weights.assign(sourceweights, sourceweights + indegree);
        t->dest_weights.assign(destweights, destweights + outdegree);
    }
    return make_topo_comm(comm_old, true, std::move(t), comm_old->rank, comm_dist_graph);
}

// Any rank may name any edge: each edge goes, as a record (which end, the other end, the
// weight), to both its ends; records arrive in the order of the ranks that named them, and in
// each in the order named, which is the order of the neighbours.
WEFT_PROFILED(MPI_Dist_graph_create)
int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info, int,
                           MPI_Comm *comm_dist_graph)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Dist_graph_create";
    if (int rc = check_old_comm(comm_old, comm_dist_graph, fn); rc != MPI_SUCCESS)
        return rc;
    if (n < 0)
        return raise(comm_old, MPI_ERR_ARG, fn, "n " + std::to_string(n) + " is negative");
    if (n > 0 && !degrees)
        return raise(comm_old, MPI_ERR_ARG, fn, "degrees is NULL");
    if (int rc = check_ranks(comm_old, sources, n, "sources", fn); rc != MPI_SUCCESS)
        return rc;
    long long edges = 0;
    for (int i = 0; i < n; ++i) {
        if (degrees[i] < 0)
            return raise(comm_old, MPI_ERR_ARG, fn,
                         "degrees[" + std::to_string(i) + "] is negative");
        edges += degrees[i];
    }
    if (edges > INT_MAX / 3)
        return raise(comm_old, MPI_ERR_ARG, fn, "too many edges");
    if (int rc = check_ranks(comm_old, destinations, int(edges), "destinations", fn);
        rc != MPI_SUCCESS)
        return rc;
    if (int rc = check_weights(comm_old, weights, int(edges), "weights", fn); rc != MPI_SUCCESS)
        return rc;
    enum : int { at_source = 0, at_dest = 1 };
    const size_t size = size_t(comm_old->size);
    std::vector<std::vector<int>> to(size);
    const bool weighted_here = weights != MPI_UNWEIGHTED;
    for (int i = 0, e = 0; i < n; ++i)
        for (int j = 0; j < degrees[i]; ++j, ++e) {
            const int s = sources[i], d = destinations[e], w = weighted_here ? weights[e] : 0;
            to[size_t(s)].insert(to[size_t(s)].end(), {at_source, d, w});
            to[size_t(d)].insert(to[size_t(d)].end(), {at_dest, s, w});
        }
    std::vector<int> sendcounts(size), sdispls(size), recvcounts(size), rdispls(size);
    std::vector<int> sendbuf;
    for (size_t r = 0; r < size; ++r) {
        sendcounts[r] = int(to[r].size());
        sdispls[r] = int(sendbuf.size());
        sendbuf.insert(sendbuf.end(), to[r].begin(), to[r].end());
    }
    if (int rc =
            PMPI_Alltoall(sendcounts.data(), 1, MPI_INT, recvcounts.data(), 1, MPI_INT, comm_old);
        rc != MPI_SUCCESS)
        return rc;
    long long total = 0;
    for (size_t r = 0; r < size; ++r) {
        rdispls[r] = int(total);
        total += recvcounts[r];
    }
    if (total > INT_MAX)
        return raise(comm_old, MPI_ERR_ARG, fn, "too many edges at one rank");
    std::vector<int> recvbuf(size_t(total) + 1);
    if (int rc =
            PMPI_Alltoallv(sendbuf.data(), sendcounts.data(), sdispls.data(), MPI_INT,
                           recvbuf.data(), recvcounts.data(), rdispls.data(), MPI_INT, comm_old);
        rc != MPI_SUCCESS)
        return rc;
    // MPI_UNWEIGHTED anywhere makes the graph unweighted (MPI requires it everywhere then).
    int weighted = weighted_here ? 1 : 0;
    if (int rc = PMPI_Allreduce(MPI_IN_PLACE, &weighted, 1, MPI_INT, MPI_MIN, comm_old);
        rc != MPI_SUCCESS)
        return rc;
    auto t = std::make_shared<Topology>();
    t->kind = Kind::dist_graph;
    t->weighted = weighted != 0;
    for (size_t k = 0; k + 3 <= size_t(total); k += 3) {
        const bool out = recvbuf[k] == at_source;
        (out ? t->destinations : t->sources).push_back(recvbuf[k + 1]);
        if (t->weighted)
            (out ? t->dest_weights : t->source_weights).push_back(recvbuf[k + 2]);
    }
    return make_topo_comm(comm_old, true, std::move(t), comm_old->rank, comm_dist_graph);
}

WEFT_PROFILED(MPI_Dist_graph_neighbors_count)
int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Dist_graph_neighbors_count";
    const Topology *t = nullptr;
    if (int rc = need_topo(comm, Kind::dist_graph, fn, t); rc != MPI_SUCCESS)
        return rc;
    if (!indegree || !outdegree || !weighted)
        return raise(comm, MPI_ERR_ARG, fn, "an output argument is NULL");
    *indegree = int(t->sources.size());
    *outdegree = int(t->destinations.size());
    *weighted = t->weighted;
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Dist_graph_neighbors)
int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                              int maxoutdegree, int destinations[], int destweights[])
{
    WEFT_API_GUARD;
    const char *fn = "MPI_Dist_graph_neighbors";
    const Topology *t = nullptr;
    if (int rc = need_topo(comm, Kind::dist_graph, fn, t); rc != MPI_SUCCESS)
        return rc;
    if (maxindegree < 0 || maxoutdegree < 0)
        return raise(comm, MPI_ERR_ARG, fn, "maxindegree or maxoutdegree is negative");
    const size_t ni = std::min(size_t(maxindegree), t->sources.size());
    const size_t no = std::min(size_t(maxoutdegree), t->destinations.size());
    if ((ni && !sources) || (no && !destinations))
        return raise(comm, MPI_ERR_ARG, fn,
                     std::string(sources ? "destinations" : "sources") + " is NULL");
    std::copy_n(t->sources.begin(), ni, sources);
    std::copy_n(t->destinations.begin(), no, destinations);
    // Weights only where the graph has them and the caller asked for them.
    auto wanted = [](const int *w) { return w && w != MPI_UNWEIGHTED && w != MPI_WEIGHTS_EMPTY; };
    if (t->weighted && wanted(sourceweights))
        std::copy_n(t->source_weights.begin(), ni, sourceweights);
    if (t->weighted && wanted(destweights))
        std::copy_n(t->dest_weights.begin(), no, destweights);
    return MPI_SUCCESS;
}

WEFT_PROFILED(MPI_Topo_test)
int PMPI_Topo_test(MPI_Comm comm, int *status)
{
    WEFT_API_GUARD;
    if (int rc = check_comm(comm, "MPI_Topo_test"); rc != MPI_SUCCESS)
        return rc;
    if (!status)
        return raise(comm, MPI_ERR_ARG, "MPI_Topo_test", "status is NULL");
    if (!comm->topo) {
        *status = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    switch (comm->topo->kind) {
    case Kind::cart: *status = MPI_CART; break;
    case Kind::graph: *status = MPI_GRAPH; break;
    case Kind::dist_graph: *status = MPI_DIST_GRAPH; break;
    }
    return MPI_SUCCESS;
}

} // extern "C"
