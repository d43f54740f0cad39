// btl/tcp modules (one per interface, each a rail) and the component state they share.
#ifndef WEFT_BTL_TCP_MODULE_H
#define WEFT_BTL_TCP_MODULE_H

#include "btl_tcp_endpoint.h"
#include "btl_tcp_frag.h"
#include "btl_tcp_if.h"

#include <btl/btl.h>

#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace weft::btl::tcp {

class Module;

struct Listener : Pollable {
    explicit Listener(Module *m) : Pollable(Kind::listener), module(m) {}
    Module *module;
};

class Module {
  public:
    // What the BTL framework sees: the ABI struct, followed by the way back to this object.
    struct Shell {
        weft_btl_module_t base;
        Module *self;
    };
    static_assert(std::is_standard_layout_v<Shell> && offsetof(Shell, base) == 0);

    Module(int index, const Address &self);
    ~Module();
    Module(const Module &) = delete;
    Module &operator=(const Module &) = delete;

    weft_btl_module_t *base() { return &shell.base; }
    // "eth0 (10.0.0.1:41234)"
    std::string name() const;

    Shell shell;
    Listener listener{this};
    const int index;    // position in this process's modex list
    const Address self; // interface, address and listening port
    int listen_fd = -1;
    std::map<int, Endpoint *> endpoints; // by world rank
    struct Tag {
        weft_btl_recv_fn_t fn = nullptr;
        void *cbdata = nullptr;
        // btl_register_place: large frames for the tag are read into where place says.
        weft_btl_place_fn_t place = nullptr;
        void *place_cbdata = nullptr;
        size_t place_header = 0; // payload bytes handed to place (its header)
    } tags[256];
    weft_btl_error_fn_t error_fn = nullptr;
    void *error_cbdata = nullptr;
    FragPool eager_pool;                      // buffers of btl_tcp_eager_limit bytes
    FragPool max_pool;                        // buffers of btl_tcp_max_send_size bytes
    FragPool ctrl_pool;                       // no buffer: ACK and BYE
    std::unordered_map<uint64_t, Reg *> regs; // btl_tcp_rdma: registrations by key
    uint64_t next_key = 0;                    // of the next registration

    // A fragment able to hold `size` bytes, or NULL.
    Frag *get_frag(size_t size);
};

inline Module *module_of(weft_btl_module_t *m)
{
    return reinterpret_cast<Module::Shell *>(m)->self;
}

// Listen on the interface `a` (port 0 picks one); fills the port in. NULL with a reason.
Module *module_create(int index, Address a, std::string &error);

// State of the component, from init to the finalize of its last module.
struct Component {
    std::vector<Module *> modules;
    std::vector<Address> addresses; // what this process published, by module index
    int epfd = -1;
    int my_rank = -1;
    int world_size = 0;
    uint64_t job = 0;
    std::vector<Conn *> conns;       // every connection not closed yet
    std::vector<Conn *> handshaking; // connecting or hello_wait: they have a deadline
    std::vector<Conn *> parked;
    std::vector<Conn *> zombies; // closed, freed at the end of a progress call
    std::vector<Endpoint *> failing;
    std::vector<Endpoint *> waiting;   // waiting_peer: they have a deadline
    std::vector<Endpoint *> acking;    // may have written fragments waiting for an ack
    std::vector<Endpoint *> ack_due;   // received frames not acknowledged yet
    std::vector<Endpoint *> write_due; // bulk frames queued, written by the next progress call
    // Set whenever one of the lists above gets an entry (note_work), cleared by a progress call
    // that found them all empty: an idle progress call (a job whose peers are all reached by
    // another BTL) tests this one flag, not every list.
    bool has_work = false;
    void note_work() { has_work = true; }
    bool in_progress = false;
    bool progress_registered = false;
    uint64_t next_timer_check = 0;
    uint32_t idle_calls = 0;     // progress calls since the last poll while only listening
    uint64_t idle_polled_ns = 0; // when the listeners were last polled (steady clock)
};
extern Component *component;

// The component's progress function (weft_btl_component_t::progress).
int progress();
// Free the connections closed since the last call.
void reap_zombies();

} // namespace weft::btl::tcp

#endif
