// The MPI objects behind the handles of mpi.h. An MPI handle is a pointer to
// one of these structs (MPI_Comm is weft_comm *, and so on); the predefined
// handles point at objects defined in mpi_predefined.cc.
#ifndef WEFT_MPI_OBJECTS_H
#define WEFT_MPI_OBJECTS_H

#include <weft/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

struct weft_errhandler;

// A group: world ranks in group order.
struct weft_group {
    std::vector<int> ranks;
    int my_rank = -1; // this process's rank in the group, or MPI_UNDEFINED (-32766)
    int refs = 1;
    bool predefined = false;
};

// A predefined (contiguous) datatype. Derived datatypes come with the
// datatype engine (issue 6); until then every type is `size` contiguous bytes.
struct weft_datatype {
    size_t size = 0;
    const char *name = "";
    int combiner = 0; // MPI_COMBINER_NAMED
    bool predefined = true;
};

struct weft_comm {
    uint32_t cid = 0; // context id, the same at every member
    weft_group *group = nullptr;
    int rank = -1;
    int size = 0;
    weft_errhandler *errhandler = nullptr;
    std::string name;
    std::map<int, void *> attrs; // keyval -> value
    bool predefined = false;
    bool freed = false;
    // PML state: the sequence number of the next message to each peer and
    // the next expected from each peer (matching order); owned by the PML.
    void *pml_state = nullptr;
};

using weft_errhandler_fn = void (*)(weft_comm **comm, int *error_code, ...);
struct weft_errhandler {
    enum class Kind { fatal, ret, user } kind = Kind::fatal;
    weft_errhandler_fn fn = nullptr;
    int refs = 1;
    bool predefined = false;
};

// A request. Completion is `complete`; the status fields are what MPI_Status
// reports. The PML fills the pml_* fields it needs.
struct weft_request {
    enum class Kind { pml_send, pml_recv, generalized, null } kind = Kind::null;
    volatile bool complete = false;
    bool persistent = false;
    bool active = false; // persistent: started and not yet completed
    bool freed = false;  // MPI_Request_free called before completion
    bool cancelled = false;
    weft_msg_status_t status{};
    weft_comm *comm = nullptr;
    int peer = -1; // the peer rank in comm (FT uses it)
    int tag = 0;
    // Buffered sends: the attached-buffer copy to release at completion.
    void *bsend_block = nullptr;
    // Owned by the PML: its own request state.
    void *pml_data = nullptr;
    void (*pml_free)(weft_request *req) = nullptr;
    weft_status_t (*pml_start)(weft_request *req) = nullptr;
    weft_status_t (*pml_cancel)(weft_request *req) = nullptr;
};

struct weft_message {
    weft_comm *comm = nullptr;
    int source = -1;
    int tag = -1;
    size_t count = 0;
    void *pml_data = nullptr;
};

#endif
