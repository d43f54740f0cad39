// btl/self: loopback within one process. A send is delivered to the tag's
// callback inside the call. sendi and prepare_src hand the receiver the
// sender's contiguous data in place (a second segment), so a message to self
// is copied once, by the receiver.
#include <btl/btl.h>
#include <weft/convertor.h>
#include <weft/mca.h>
#include <weft/runtime.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace weft::btl::self {

namespace {

weft_mca_param_t *p_eager, *p_max_send, *p_exclusivity;

struct Frag {
    weft_btl_descriptor_t des;
    weft_btl_segment_t seg[2]; // [1]: the sender's data in place (prepare_src)
    // payload follows
};

struct Module {
    weft_btl_module_t base;
    struct {
        weft_btl_recv_fn_t fn;
        void *data;
    } tags[WEFT_BTL_TAG_MAX + 1];
    weft_btl_error_fn_t error_fn;
    void *error_data;
};

Module *the_module;

weft_status_t add_procs(weft_btl_module_t *, weft_proc_t *const *procs, size_t n,
                        weft_btl_endpoint_t **endpoints, uint8_t *reachable)
{
    for (size_t i = 0; i < n; ++i)
        if (weft_proc_is_self(procs[i])) {
            // The endpoint is only a token: there is one peer, ourselves.
            endpoints[i] = reinterpret_cast<weft_btl_endpoint_t *>(procs[i]);
            reachable[i] = 1;
        }
    return WEFT_SUCCESS;
}

weft_status_t del_procs(weft_btl_module_t *, weft_proc_t *const *, size_t,
                        weft_btl_endpoint_t *const *)
{
    return WEFT_SUCCESS;
}

weft_status_t reg(weft_btl_module_t *m, weft_btl_tag_t tag, weft_btl_recv_fn_t fn, void *data)
{
    auto *mod = reinterpret_cast<Module *>(m);
    mod->tags[tag].fn = fn;
    mod->tags[tag].data = data;
    return WEFT_SUCCESS;
}

weft_status_t reg_error(weft_btl_module_t *m, weft_btl_error_fn_t fn, void *data)
{
    auto *mod = reinterpret_cast<Module *>(m);
    mod->error_fn = fn;
    mod->error_data = data;
    return WEFT_SUCCESS;
}

weft_status_t finalize(weft_btl_module_t *m)
{
    delete reinterpret_cast<Module *>(m);
    the_module = nullptr;
    return WEFT_SUCCESS;
}

weft_status_t alloc(weft_btl_module_t *m, weft_btl_endpoint_t *, uint8_t order, size_t size,
                    uint32_t flags, weft_btl_descriptor_t **des)
{
    if (size > m->btl_max_send_size)
        return WEFT_ERR_BAD_PARAM;
    void *mem = std::malloc(sizeof(Frag) + size);
    if (!mem)
        return WEFT_ERR_OUT_OF_RESOURCE;
    auto *f = new (mem) Frag{};
    f->seg[0].seg_addr = reinterpret_cast<char *>(f) + sizeof(Frag);
    f->seg[0].seg_len = size;
    f->des.des_segments = f->seg;
    f->des.des_segment_count = 1;
    f->des.des_flags = flags;
    f->des.order = order;
    *des = &f->des;
    return WEFT_SUCCESS;
}

weft_status_t free_des(weft_btl_module_t *, weft_btl_descriptor_t *des)
{
    std::free(reinterpret_cast<Frag *>(des));
    return WEFT_SUCCESS;
}

weft_status_t deliver(Module *mod, weft_btl_endpoint_t *ep, const weft_btl_segment_t *segs,
                      size_t nsegs, weft_btl_tag_t tag)
{
    if (!mod->tags[tag].fn) {
        if (mod->error_fn)
            mod->error_fn(&mod->base, WEFT_BTL_ERROR_FLAG_LINK,
                          weft_runtime_proc(weft_runtime_world_rank()),
                          "btl/self: message for a tag nobody registered", mod->error_data);
        return WEFT_ERR_BAD_HEADER;
    }
    weft_btl_recv_descriptor_t rd{};
    rd.endpoint = ep;
    rd.segments = segs;
    rd.segment_count = nsegs;
    rd.cbdata = mod->tags[tag].data;
    rd.tag = tag;
    mod->tags[tag].fn(&mod->base, &rd);
    return WEFT_SUCCESS;
}

weft_status_t send(weft_btl_module_t *m, weft_btl_endpoint_t *ep, weft_btl_descriptor_t *des,
                   weft_btl_tag_t tag)
{
    auto *mod = reinterpret_cast<Module *>(m);
    weft_status_t rc = deliver(mod, ep, des->des_segments, des->des_segment_count, tag);
    if (rc != WEFT_SUCCESS)
        return rc;
    if ((des->des_flags & WEFT_BTL_DES_FLAG_ALWAYS_CALLBACK) && des->des_cbfunc)
        des->des_cbfunc(m, ep, des, WEFT_SUCCESS);
    if (des->des_flags & WEFT_BTL_DES_FLAG_BTL_OWNERSHIP)
        free_des(m, des);
    return WEFT_SUCCESS;
}

// The header in the descriptor, the data where the convertor has it: in place when it is
// contiguous, else packed behind the header.
weft_status_t prepare_src(weft_btl_module_t *m, weft_btl_endpoint_t *ep, weft_convertor_t *cv,
                          uint8_t order, size_t reserve, size_t *size, uint32_t flags,
                          weft_btl_descriptor_t **des)
{
    if (!cv || !size || !des || reserve > m->btl_max_send_size)
        return WEFT_ERR_BAD_PARAM;
    size_t n = std::min({*size, weft_convertor_remaining(cv), m->btl_max_send_size - reserve});
    const void *inplace = weft_convertor_contiguous_data(cv);
    weft_status_t rc = alloc(m, ep, order, inplace ? reserve : reserve + n, flags, des);
    if (rc != WEFT_SUCCESS)
        return rc;
    auto *f = reinterpret_cast<Frag *>(*des);
    if (inplace && n) {
        f->seg[1].seg_addr = const_cast<void *>(inplace);
        f->seg[1].seg_len = n;
        f->des.des_segment_count = 2;
        weft_convertor_seek(cv, cv->position + n);
    } else if (n) {
        n = weft_convertor_pack(cv, static_cast<char *>(f->seg[0].seg_addr) + reserve, n);
    }
    *size = n;
    return WEFT_SUCCESS;
}

// Delivered inside the call: the header and the sender's data, in place when contiguous.
weft_status_t sendi(weft_btl_module_t *m, weft_btl_endpoint_t *ep, weft_convertor_t *cv,
                    const void *header, size_t header_size, size_t payload_size, uint8_t order,
                    uint32_t flags, weft_btl_tag_t tag, weft_btl_descriptor_t **des)
{
    if (des)
        *des = nullptr;
    if ((header_size && !header) ||
        (payload_size && (!cv || weft_convertor_remaining(cv) < payload_size)) ||
        header_size + payload_size > m->btl_max_send_size)
        return WEFT_ERR_BAD_PARAM;
    const void *inplace = payload_size ? weft_convertor_contiguous_data(cv) : nullptr;
    if (payload_size && !inplace) {
        // Not contiguous: packed behind the header in a descriptor of our own.
        weft_btl_descriptor_t *d;
        if (alloc(m, ep, order, header_size + payload_size, flags, &d) != WEFT_SUCCESS)
            return WEFT_ERR_OUT_OF_RESOURCE;
        auto *base = static_cast<char *>(d->des_segments[0].seg_addr);
        std::memcpy(base, header, header_size);
        weft_convertor_pack(cv, base + header_size, payload_size);
        weft_status_t rc = deliver(reinterpret_cast<Module *>(m), ep, d->des_segments, 1, tag);
        free_des(m, d);
        return rc;
    }
    const weft_btl_segment_t segs[2] = {{const_cast<void *>(header), header_size},
                                        {const_cast<void *>(inplace), payload_size}};
    weft_status_t rc = deliver(reinterpret_cast<Module *>(m), ep, segs, payload_size ? 2 : 1, tag);
    if (rc == WEFT_SUCCESS && payload_size)
        weft_convertor_seek(cv, cv->position + payload_size);
    return rc;
}

weft_status_t query(int *priority, char *, size_t)
{
    *priority = 100;
    return WEFT_SUCCESS;
}

weft_status_t register_params()
{
    const weft_mca_param_def_t defs[] = {
        {.name = "eager_limit",
         .type = WEFT_MCA_PARAM_SIZE,
         .default_value = "128k",
         .help = "Largest message (PML header included) sent to self in one fragment.",
         .level = 4,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "64.."},
        {.name = "max_send_size",
         .type = WEFT_MCA_PARAM_SIZE,
         .default_value = "256k",
         .help = "Largest fragment of a long message sent to self.",
         .level = 4,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "64.."},
        {.name = "exclusivity",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "65536",
         .help = "Exclusivity: for a peer, only the BTLs of highest exclusivity that reach it "
                 "are used. self is the highest, so it always carries messages to self.",
         .level = 7,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "0..4294967295"},
    };
    weft_mca_param_t *h[3] = {};
    weft_status_t rc = weft_mca_param_register_table("btl", "self", defs, 3, sizeof defs[0], h);
    p_eager = h[0];
    p_max_send = h[1];
    p_exclusivity = h[2];
    return rc;
}

} // namespace
} // namespace weft::btl::self
extern "C" const weft_btl_component_t mca_btl_self_component;
namespace weft::btl::self {
namespace {

weft_btl_module_t **init(int *num_modules, int, int)
{
    auto *mod = new Module{};
    mod->base = weft_btl_module_t{
        .struct_size = sizeof(weft_btl_module_t),
        .btl_flags = WEFT_BTL_FLAG_SEND | WEFT_BTL_FLAG_SEND_INPLACE,
        .btl_component = const_cast<weft_btl_component_t *>(&mca_btl_self_component),
        .btl_eager_limit = size_t(weft_mca_param_size(p_eager)),
        .btl_rndv_eager_limit = size_t(weft_mca_param_size(p_eager)),
        .btl_max_send_size = size_t(weft_mca_param_size(p_max_send)),
        .btl_rdma_pipeline_send_length = 0,
        .btl_rdma_pipeline_frag_size = 0,
        .btl_min_rdma_pipeline_size = 0,
        .btl_put_limit = 0,
        .btl_get_limit = 0,
        .btl_put_alignment = 0,
        .btl_get_alignment = 0,
        .btl_registration_handle_size = 0,
        .btl_exclusivity = uint32_t(weft_mca_param_int(p_exclusivity)),
        .btl_latency = 0,
        .btl_bandwidth = 100000,
        .reserved = 0,
        .btl_add_procs = add_procs,
        .btl_del_procs = del_procs,
        .btl_register = reg,
        .btl_register_error = reg_error,
        .btl_finalize = finalize,
        .btl_alloc = alloc,
        .btl_free = free_des,
        .btl_prepare_src = prepare_src,
        .btl_send = send,
        .btl_sendi = sendi,
        .btl_put = nullptr,
        .btl_get = nullptr,
        .btl_register_mem = nullptr,
        .btl_deregister_mem = nullptr,
        .btl_flush = nullptr,
        .btl_dump = nullptr,
        .btl_min_rdma_size = 0,
        .btl_max_rdma_size = 0,
        .btl_stream_min_rdma_size = 0,
        .btl_stream_max_rdma_size = 0,
        .btl_register_place = nullptr,
        .btl_way_rate = nullptr,
    };
    the_module = mod;
    auto **mods = static_cast<weft_btl_module_t **>(std::malloc(sizeof(weft_btl_module_t *)));
    mods[0] = &mod->base;
    *num_modules = 1;
    return mods;
}

} // namespace

} // namespace weft::btl::self

extern "C" {
extern const weft_btl_component_t mca_btl_self_component;
const weft_btl_component_t mca_btl_self_component = {
    .mca = {WEFT_MCA_COMPONENT_HEADER(weft_btl_component_t, "btl", WEFT_BTL_ABI_MAJOR,
                                      WEFT_BTL_ABI_MINOR, "self", 0, 1, 0),
            .register_params = weft::btl::self::register_params, .open = nullptr,
            .query = weft::btl::self::query, .close = nullptr},
    .init = weft::btl::self::init,
    .progress = nullptr,
};
}
