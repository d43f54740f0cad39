// boot/singleton: a process started without a launcher is rank 0 of 1.
#include <boot/boot.h>
#include <weft/mca.h>

#include <cstring>
#include <string>
#include <unistd.h>

namespace weft::boot::singleton {

namespace {

weft_status_t boot_init(weft_boot_module_t *, int *rank, int *size, char *jobid, size_t jobid_len)
{
    std::string id = "singleton-" + std::to_string(getpid());
    if (id.size() + 1 > jobid_len)
        return WEFT_ERR_TRUNCATE;
    std::memcpy(jobid, id.c_str(), id.size() + 1);
    *rank = 0;
    *size = 1;
    return WEFT_SUCCESS;
}

weft_status_t boot_barrier(weft_boot_module_t *) { return WEFT_SUCCESS; }

weft_status_t boot_allgather(weft_boot_module_t *, const void *in, void *out, size_t len)
{
    std::memmove(out, in, len);
    return WEFT_SUCCESS;
}

weft_status_t boot_bcast(weft_boot_module_t *, void *, size_t, int root)
{
    return root == 0 ? WEFT_SUCCESS : WEFT_ERR_BAD_PARAM;
}

weft_status_t boot_finalize(weft_boot_module_t *) { return WEFT_SUCCESS; }

weft_boot_module_t module = {
    .struct_size = sizeof(weft_boot_module_t),
    .boot_flags = 0,
    .boot_event_fd = -1,
    .reserved = 0,
    .boot_init = boot_init,
    .boot_barrier = boot_barrier,
    .boot_allgather = boot_allgather,
    .boot_bcast = boot_bcast,
    .boot_abort = weft_boot_default_abort, // no launcher
    .boot_finalize = boot_finalize,
    .boot_poll_event = weft_boot_default_poll_event, // nobody else to fail
};

weft_status_t query(int *priority, char *, size_t)
{
    *priority = 1; // the fallback
    return WEFT_SUCCESS;
}

weft_boot_module_t *init() { return &module; }

} // namespace

} // namespace weft::boot::singleton

extern "C" {
extern const weft_boot_component_t mca_boot_singleton_component;
const weft_boot_component_t mca_boot_singleton_component = {
    .mca = {WEFT_MCA_COMPONENT_HEADER(weft_boot_component_t, "boot", WEFT_BOOT_ABI_MAJOR,
                                      WEFT_BOOT_ABI_MINOR, "singleton", 0, 1, 0),
            .register_params = nullptr, .open = nullptr, .query = weft::boot::singleton::query,
            .close = nullptr},
    .init = weft::boot::singleton::init,
};
}
