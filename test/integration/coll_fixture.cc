// A test coll component that provides allreduce only, at priority coll_fixture_priority
// (default 50, above coll/basic's 10): the communicator's allreduce comes from it, every other
// collective still from coll/basic. Its allreduce is simple and correct (everything to rank 0,
// reduced in rank order, the result back to everyone), and counts its calls in the
// environment-visible variable WEFT_COLL_FIXTURE_CALLS of the process (read by the test
// program through getenv after the calls).
#include <coll/coll.h>
#include <pml/pml.h>
#include <weft/comm.h>
#include <weft/mca.h>
#include <weft/op.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

weft_mca_param_t *p_priority = nullptr;
unsigned long calls = 0;

weft_status_t allreduce(const void *sendbuf, void *recvbuf, size_t count, weft_datatype_t *type,
                        weft_op_t *op, weft_comm_t *comm, weft_coll_module_t *)
{
    weft_pml_module_t *pml = weft_pml_selected();
    const int tag = weft_comm_coll_tag(comm);
    const size_t bytes = count * weft_datatype_size(type);
    if (sendbuf != WEFT_IN_PLACE)
        std::memcpy(recvbuf, sendbuf, bytes);
    weft_status_t rc = WEFT_SUCCESS;
    if (weft_comm_rank(comm) == 0) {
        std::vector<char> part(bytes ? bytes : 1);
        for (int r = 1; r < weft_comm_size(comm) && rc == WEFT_SUCCESS; ++r) {
            weft_msg_status_t st{};
            rc = pml->pml_recv(pml, part.data(), count, type, r, tag, comm, &st);
            // recvbuf holds ranks 0..r-1: it goes first.
            if (rc == WEFT_SUCCESS)
                rc = weft_op_reduce(op, recvbuf, part.data(), count, type);
            if (rc == WEFT_SUCCESS)
                std::memcpy(recvbuf, part.data(), bytes);
        }
        for (int r = 1; r < weft_comm_size(comm) && rc == WEFT_SUCCESS; ++r)
            rc = pml->pml_send(pml, recvbuf, count, type, r, tag, WEFT_SEND_STANDARD, comm);
    } else {
        rc = pml->pml_send(pml, recvbuf, count, type, 0, tag, WEFT_SEND_STANDARD, comm);
        weft_msg_status_t st{};
        if (rc == WEFT_SUCCESS)
            rc = pml->pml_recv(pml, recvbuf, count, type, 0, tag, comm, &st);
    }
    setenv("WEFT_COLL_FIXTURE_CALLS", std::to_string(++calls).c_str(), 1);
    return rc;
}

// Allreduce only: every other operation is NULL, left to the modules below.
weft_coll_module_t the_module = [] {
    weft_coll_module_t m{};
    // As a component built for coll ABI 1.1 lays out its module (the operations of 1.2 beyond).
    m.struct_size = offsetof(weft_coll_module_t, coll_neighbor_allgather);
    m.coll_allreduce = allreduce;
    return m;
}();

weft_status_t register_params()
{
    const weft_mca_param_def_t defs[1] = {
        {.name = "priority",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "50",
         .help = "Priority of the test fixture's allreduce.",
         .level = 9,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
    };
    return weft_mca_param_register_table("coll", "fixture", defs, 1, sizeof defs[0], &p_priority);
}

weft_status_t query(int *priority, char *, size_t)
{
    *priority = int(weft_mca_param_int(p_priority));
    return WEFT_SUCCESS;
}

// Intracommunicators only (its allreduce knows nothing of two groups).
weft_coll_module_t *comm_query(weft_comm_t *comm, int *priority)
{
    *priority = int(weft_mca_param_int(p_priority));
    return weft_comm_is_inter(comm) ? nullptr : &the_module;
}

} // namespace

extern "C" {
extern const weft_coll_component_t mca_coll_fixture_component;
const weft_coll_component_t mca_coll_fixture_component = {
    // Built for coll ABI 1.1, as a component from before 1.2 would be: its allreduce copies
    // bytes, so it must never be given a datatype whose data is not contiguous (coll/base passes
    // it over for those calls, and coll/basic takes them).
    .mca = {WEFT_MCA_COMPONENT_HEADER(weft_coll_component_t, "coll", WEFT_COLL_ABI_MAJOR, 1,
                                      "fixture", 0, 1, 0),
            .register_params = register_params, .open = nullptr, .query = query, .close = nullptr},
    .init_query = nullptr,
    .comm_query = comm_query,
};
}
