#include <weft/status.h>

namespace {

struct Entry {
    weft_status_t status;
    const char *name;
    const char *text;
};

constexpr Entry entries[] = {
    {WEFT_SUCCESS, "WEFT_SUCCESS", "success"},
    {WEFT_IN_PROGRESS, "WEFT_IN_PROGRESS", "in progress"},
    {WEFT_ERROR, "WEFT_ERROR", "error"},
    {WEFT_ERR_OUT_OF_RESOURCE, "WEFT_ERR_OUT_OF_RESOURCE", "out of resources"},
    {WEFT_ERR_BAD_PARAM, "WEFT_ERR_BAD_PARAM", "bad parameter"},
    {WEFT_ERR_NOT_FOUND, "WEFT_ERR_NOT_FOUND", "not found"},
    {WEFT_ERR_NOT_SUPPORTED, "WEFT_ERR_NOT_SUPPORTED", "not supported"},
    {WEFT_ERR_NOT_AVAILABLE, "WEFT_ERR_NOT_AVAILABLE", "not available"},
    {WEFT_ERR_VERSION, "WEFT_ERR_VERSION", "version mismatch"},
    {WEFT_ERR_EXISTS, "WEFT_ERR_EXISTS", "already exists"},
    {WEFT_ERR_TIMEOUT, "WEFT_ERR_TIMEOUT", "timed out"},
    {WEFT_ERR_TRUNCATE, "WEFT_ERR_TRUNCATE", "message truncated"},
    {WEFT_ERR_BAD_HEADER, "WEFT_ERR_BAD_HEADER", "malformed header from a peer"},
    {WEFT_ERR_LINK_DOWN, "WEFT_ERR_LINK_DOWN", "network link down"},
    {WEFT_ERR_UNREACH, "WEFT_ERR_UNREACH", "peer unreachable"},
    {WEFT_ERR_PROC_FAILED, "WEFT_ERR_PROC_FAILED", "process failed"},
    {WEFT_ERR_PROC_FAILED_PENDING, "WEFT_ERR_PROC_FAILED_PENDING",
     "a possible sender of a pending wildcard receive failed"},
    {WEFT_ERR_REVOKED, "WEFT_ERR_REVOKED", "communicator revoked"},
};

const Entry *lookup(weft_status_t s)
{
    for (const auto &e : entries)
        if (e.status == s)
            return &e;
    return nullptr;
}

} // namespace

extern "C" const char *weft_status_name(weft_status_t status)
{
    const Entry *e = lookup(status);
    return e ? e->name : "WEFT_ERR_UNKNOWN";
}

extern "C" const char *weft_status_string(weft_status_t status)
{
    const Entry *e = lookup(status);
    return e ? e->text : "unknown status";
}
