// Process topologies (MPI-3.1 chapter 7): what a communicator made by MPI_Cart_create,
// MPI_Cart_sub, MPI_Graph_create or MPI_Dist_graph_create(_adjacent) knows of its topology.
// A topology never changes once made, so the communicators that have it (the one made, and
// its MPI_Comm_dup copies) share one (weft_comm::topo).
#ifndef WEFT_MPI_TOPO_H
#define WEFT_MPI_TOPO_H

#include "mpi_objects.h"

#include <vector>

namespace weft::mpi {

struct Topology {
    enum class Kind { cart, graph, dist_graph } kind = Kind::cart;

    // Cartesian: each dimension's extent and whether it wraps around. Ranks are numbered in
    // row-major order (the last dimension varies fastest). No dimension: a single process.
    std::vector<int> dims;
    std::vector<int> periods; // 0 or 1

    // Graph: MPI_Graph_create's index and edges (the whole graph, the same at every rank).
    std::vector<int> index, edges;

    // Distributed graph: this rank's own neighbours, in MPI_Dist_graph_neighbors' order, and
    // their weights (empty when the graph is unweighted).
    std::vector<int> sources, source_weights, destinations, dest_weights;
    bool weighted = false;
};

// The ranks that a neighbourhood collective on a communicator of this topology receives from
// (in) and sends to (out), in the order of MPI-3.1 7.6: Cartesian, for each dimension the
// neighbour in the negative direction then the one in the positive direction (MPI_PROC_NULL
// past the edge of a non-periodic dimension); graph, MPI_Graph_neighbors'; distributed graph,
// sources and destinations.
struct Neighbors {
    std::vector<int> in, out;
};
Neighbors topo_neighbors(const Topology &topo, int rank);

} // namespace weft::mpi

#endif
