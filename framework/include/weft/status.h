/*
 * weft/status.h: the one status type every Weft layer returns.
 *
 * Codes are grouped by scope so that a caller can ask what kind of trouble it
 * has without listing codes: 0 and positive values are not errors, -1..-99 are
 * generic errors, -100..-199 are the loss of a link (a rail, one peer on one
 * BTL), -200..-299 are the loss of a process, -300..-399 mean the communicator
 * was revoked. New codes are appended inside their group; values never change.
 */
#ifndef WEFT_STATUS_H
#define WEFT_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum weft_status {
    /* not errors */
    WEFT_SUCCESS = 0,
    WEFT_IN_PROGRESS = 1,

    /* generic errors */
    WEFT_ERROR = -1,
    WEFT_ERR_OUT_OF_RESOURCE = -2,
    WEFT_ERR_BAD_PARAM = -3,
    WEFT_ERR_NOT_FOUND = -4,
    WEFT_ERR_NOT_SUPPORTED = -5,
    WEFT_ERR_NOT_AVAILABLE = -6,
    WEFT_ERR_VERSION = -7,
    WEFT_ERR_EXISTS = -8,
    WEFT_ERR_TIMEOUT = -9,
    WEFT_ERR_TRUNCATE = -10,
    WEFT_ERR_BAD_HEADER = -11,

    /* link failures: the path to a peer broke, the peer may be alive */
    WEFT_ERR_LINK_DOWN = -100,
    WEFT_ERR_UNREACH = -101,

    /* process failures */
    WEFT_ERR_PROC_FAILED = -200,
    WEFT_ERR_PROC_FAILED_PENDING = -201,

    /* revocation */
    WEFT_ERR_REVOKED = -300
} weft_status_t;

/* A short fixed English name for a status ("WEFT_ERR_NOT_FOUND"). */
const char *weft_status_name(weft_status_t status);
/* A sentence describing the status, for messages ("not found"). */
const char *weft_status_string(weft_status_t status);

#ifdef __cplusplus
} /* extern "C" */

namespace weft {

constexpr bool is_ok(weft_status_t s) { return s >= 0; }
constexpr bool is_error(weft_status_t s) { return s < 0; }
constexpr bool is_link_failure(weft_status_t s) { return s <= -100 && s > -200; }
constexpr bool is_proc_failure(weft_status_t s) { return s <= -200 && s > -300; }
constexpr bool is_revoked(weft_status_t s) { return s <= -300 && s > -400; }

} // namespace weft
#endif

#endif /* WEFT_STATUS_H */
