/*
 * weft/output.h: messages for the user, from any component.
 *
 * Every message goes where the library's own go (standard error as "weft: error: <text>" unless
 * a test or tool has redirected them), so a component's warning looks like the library's and a
 * test that fails on unexpected errors sees it. A component prefixes its text with
 * "<fw>/<name>: " so the user knows who speaks. Defined in libweft.
 *
 * Thread: any (a message is written whole).
 */
#ifndef WEFT_OUTPUT_H
#define WEFT_OUTPUT_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum weft_output_kind {
    WEFT_OUTPUT_ERROR = 0,   /* something failed: "weft: error: ..." */
    WEFT_OUTPUT_WARNING = 1, /* it goes on, but not as the user asked: "weft: warning: ..." */
    WEFT_OUTPUT_INFO = 2,    /* asked for (a verbose level, a trace): "weft: ..." */
    WEFT_OUTPUT_VERBOSE = 3  /* like INFO, for debugging output */
} weft_output_kind_t;

/* Print one message (printf format; a trailing newline is not needed). */
void weft_output(weft_output_kind_t kind, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The verbosity the user asked of a framework: <framework>_base_verbose (0 when unset, or for
 * an unknown framework). Components print their diagnostics at the levels their README names. */
int weft_output_verbosity(const char *framework);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* WEFT_OUTPUT_H */
