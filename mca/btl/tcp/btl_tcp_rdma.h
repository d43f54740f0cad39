// btl/tcp put and get over the connection (btl_tcp_rdma, off by default): a put is a frame
// that carries the data and where it goes; a get is a frame that asks for data, answered by a
// frame that carries it. Both sides check every address against the registrations made here,
// so a peer reaches only memory the PML registered for it (README.md, "Put and get").
//
// A put completes once the peer process acknowledged its frame, that is once the data is in
// the target memory (the peer's kernel acknowledging it is not enough here: the PML sends a
// FIN behind a put's completion, perhaps over another rail, and the FIN must not overtake the
// data). A get completes when its answer has been copied into local memory; when the link
// breaks first, with the link's error, after the error callback.
#ifndef WEFT_BTL_TCP_RDMA_H
#define WEFT_BTL_TCP_RDMA_H

#include <btl/btl.h>
#include <weft/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace weft::btl::tcp {

class Module;
struct Endpoint;

// The module's own tags for put and get frames (the BTL's range of btl.h).
constexpr uint8_t kTagPut = 0x30;      // PutWire, then the data
constexpr uint8_t kTagGet = 0x31;      // GetWire
constexpr uint8_t kTagGetReply = 0x32; // ReplyWire, then the data
inline bool rdma_tag(uint8_t tag) { return tag >= kTagPut && tag <= kTagGetReply; }

// A registration. Its key, first, is the handle the PML copies to the peer (8 bytes).
struct Reg {
    uint64_t key;
    unsigned char *base;
    size_t size;
    uint32_t flags;
};

// A put or get under way: what its completion needs.
struct RdmaOp {
    weft_btl_rdma_completion_fn_t fn;
    void *local;
    weft_btl_registration_handle_t *local_handle;
    void *context;
    void *cbdata;
    size_t size;
};

// With btl_tcp_rdma: give module m put, get and registration, and their flags and limits.
void rdma_enable(Module *m);

// A put, get or get-answer frame from ep's peer: carried out. Returns "" (with *callbacks
// counted), or what was wrong with it (the connection is then dropped: a peer that writes
// outside what was registered is not talked to again).
std::string rdma_frame(Endpoint *ep, uint8_t tag, const unsigned char *payload, size_t len,
                       int *callbacks);

// Complete the gets ep still waits for with status; returns the callbacks made.
int rdma_fail_gets(Endpoint *ep, weft_status_t status);

// Complete a put's operation (its frame completed with status).
void rdma_put_done(Module *m, Endpoint *ep, RdmaOp *op, weft_status_t status);

// Release every registration of m (finalize).
void rdma_release(Module *m);

} // namespace weft::btl::tcp

#endif
