/*
 * weft/mca.h: the component ABI and the parameter registry, in C.
 *
 * Life of a component, as the repository drives it:
 *
 *   1. find:      the repository scans mca_base_component_path for files named
 *                 mca_<fw>_<name>.so (and walks the static table) and reads the
 *                 one symbol a component exports, mca_<fw>_<name>_component.
 *   2. check:     every version field of the descriptor below is compared with
 *                 this library's; a mismatch rejects the component with a
 *                 message naming both versions. Nothing of it is called.
 *   3. register:  register_params() for every component found, selected or not,
 *                 so that every parameter is known and shown by weft_info.
 *   4. open:      open() for every component the framework's selection list
 *                 allows. A component that fails here is dropped.
 *   5. query:     query() gives a priority, or refuses with a reason.
 *                 The framework then picks one (pml, boot, mtl, bml), all that
 *                 accept (btl), or per function (coll), and makes modules
 *                 through the framework's own part of the component struct.
 *   6. close:     close() for every opened component, at finalize or when
 *                 it is not selected.
 *
 * ABI rules: every struct here is standard-layout and trivially copyable, with
 * no configure-dependent fields. A struct that may grow starts with its size;
 * new fields are appended and readers check the size before using them.
 */
#ifndef WEFT_MCA_H
#define WEFT_MCA_H

#include <stddef.h>
#include <stdint.h>

#include <weft/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The MCA ABI this library implements. A component must be built for the same
 * major version and a minor version no newer than this one. 3.1 added the performance
 * variables (weft_mca_pvar_register). */
#define WEFT_MCA_ABI_MAJOR 3
#define WEFT_MCA_ABI_MINOR 1

/* Longest framework or component name, including the terminating NUL. */
#define WEFT_MCA_NAME_MAX 32

typedef struct weft_mca_version {
    uint16_t major;
    uint16_t minor;
    uint16_t patch;
    uint16_t reserved; /* zero */
} weft_mca_version_t;

/* Component flags. */
#define WEFT_MCA_FLAG_NONE 0u
/* The component may be chosen only when named in the selection list. */
#define WEFT_MCA_FLAG_EXPLICIT_ONLY 1u
/* Every flag this ABI version defines; the loader rejects others. */
#define WEFT_MCA_FLAG_KNOWN (WEFT_MCA_FLAG_EXPLICIT_ONLY)

/* Opaque handle to one registered parameter; owned by the registry, valid
 * until the registry is torn down at library finalize. */
typedef struct weft_mca_param weft_mca_param_t;

/*
 * The component descriptor. Every framework's component struct starts with
 * one of these (field `mca`), so struct_size is the size of that whole
 * framework struct. The fields up to and including `version` are frozen in
 * place for every MCA ABI version, past and future: they are what the loader
 * reads before it knows whether it can trust the rest.
 */
typedef struct weft_mca_component {
    uint32_t struct_size;
    uint16_t mca_abi_major;
    uint16_t mca_abi_minor;
    char framework[WEFT_MCA_NAME_MAX];
    uint16_t framework_abi_major;
    uint16_t framework_abi_minor;
    char name[WEFT_MCA_NAME_MAX];
    weft_mca_version_t version;
    uint32_t flags;
    uint32_t reserved; /* zero */

    /* Register the component's parameters (weft_mca_param_register_table).
     * Called once, before open, whether or not the component is selected.
     * May be NULL for a component without parameters. */
    weft_status_t (*register_params)(void);
    /* Acquire what query needs. Returns WEFT_SUCCESS or an error; on error the
     * component is dropped and close is not called. May be NULL. */
    weft_status_t (*open)(void);
    /* Say whether the component can run here and how much it wants to.
     * On WEFT_SUCCESS *priority is set (higher wins). On any error the
     * component refuses and writes a one-line reason into why (why_len bytes,
     * always NUL-terminated by the caller's buffer). WEFT_ERR_BAD_PARAM means
     * the user's parameter values cannot work (a combination no declared range
     * can express): it ends the framework's selection with an error, since
     * leaving the component out would silently change what the job runs on.
     * Any other error only leaves the component out. Required. */
    weft_status_t (*query)(int *priority, char *why, size_t why_len);
    /* Release what open acquired. May be NULL. */
    weft_status_t (*close)(void);
} weft_mca_component_t;

/* Convenience initializer for the frozen fields of a descriptor. */
#define WEFT_MCA_COMPONENT_HEADER(fw_struct, fw_name, fw_major, fw_minor, comp_name, c_major,      \
                                  c_minor, c_patch)                                                \
    WEFT_MCA_COMPONENT_HEADER_FLAGS(fw_struct, fw_name, fw_major, fw_minor, comp_name, c_major,    \
                                    c_minor, c_patch, WEFT_MCA_FLAG_NONE)
/* The same with WEFT_MCA_FLAG_* flags (e.g. WEFT_MCA_FLAG_EXPLICIT_ONLY). */
#define WEFT_MCA_COMPONENT_HEADER_FLAGS(fw_struct, fw_name, fw_major, fw_minor, comp_name,         \
                                        c_major, c_minor, c_patch, c_flags)                        \
    .struct_size = sizeof(fw_struct), .mca_abi_major = WEFT_MCA_ABI_MAJOR,                         \
    .mca_abi_minor = WEFT_MCA_ABI_MINOR, .framework = fw_name, .framework_abi_major = fw_major,    \
    .framework_abi_minor = fw_minor, .name = comp_name,                                            \
    .version = {.major = c_major, .minor = c_minor, .patch = c_patch, .reserved = 0},              \
    .flags = c_flags, .reserved = 0

/* ------------------------------------------------------------------------ */
/* Parameters                                                                */
/* ------------------------------------------------------------------------ */

typedef enum weft_mca_param_type {
    WEFT_MCA_PARAM_BOOL = 0,   /* true/false, yes/no, on/off, 1/0 */
    WEFT_MCA_PARAM_INT = 1,    /* signed 64-bit decimal or 0x hex */
    WEFT_MCA_PARAM_SIZE = 2,   /* bytes, with k, M, G (powers of 1024), optional B */
    WEFT_MCA_PARAM_DOUBLE = 3, /* floating point */
    WEFT_MCA_PARAM_STRING = 4, /* any text */
    WEFT_MCA_PARAM_ENUM = 5,   /* one of the named values */
    WEFT_MCA_PARAM_LIST = 6    /* comma-separated items, empty items dropped */
} weft_mca_param_type_t;

typedef enum weft_mca_param_scope {
    WEFT_MCA_SCOPE_LOCAL = 0,     /* each process may have its own value */
    WEFT_MCA_SCOPE_ALL_EQUAL = 1, /* every rank of a job must agree */
    /* Information, not a setting: what the component found out (its default_value, made at
     * register time, or weft_mca_param_set by the component later), shown by weft_info. A
     * value given for it from the command line, the environment or a file is refused with an
     * error. */
    WEFT_MCA_SCOPE_INFO = 2
} weft_mca_param_scope_t;

typedef enum weft_mca_param_source {
    WEFT_MCA_SOURCE_DEFAULT = 0,
    WEFT_MCA_SOURCE_FILE = 1,
    WEFT_MCA_SOURCE_ENV = 2,
    WEFT_MCA_SOURCE_CMDLINE = 3,
    WEFT_MCA_SOURCE_API = 4 /* set by the program through weft_mca_param_set */
} weft_mca_param_source_t;

typedef struct weft_mca_enum_value {
    const char *name;
    int value;
} weft_mca_enum_value_t;

/*
 * One row of a component's parameter table. The registry copies everything it
 * needs; the table may be temporary.
 */
typedef struct weft_mca_param_def {
    /* Short name; the full name is <framework>_<component>_<name>, or
     * <framework>_<name> for a framework's own parameters. [a-z0-9_]+ */
    const char *name;
    weft_mca_param_type_t type;
    /* The default, as text, parsed by the same parser as user input. */
    const char *default_value;
    /* What the parameter does, one or more sentences. Required. */
    const char *help;
    /* 1 (every user) to 9 (developers of this component). */
    int level;
    weft_mca_param_scope_t scope;
    /* WEFT_MCA_PARAM_ENUM only: the values, ended by {NULL, 0}. */
    const weft_mca_enum_value_t *enum_values;
    /* Deprecated full names that still set this parameter, with a warning;
     * comma-separated, or NULL. */
    const char *synonyms;
    /* INT, SIZE and DOUBLE only: the values allowed, "min..max" in the
     * parameter's own syntax ("64..1M", "1..8191"); either end may be left out
     * ("1..", "..512k"). NULL: any value the type takes. A value from any
     * source outside the range is refused with an error naming the parameter,
     * the value and the range, and the registration fails like a value that
     * does not parse. A table built before this field (see def_size) has none. */
    const char *range;
} weft_mca_param_def_t;

/*
 * Register a table of parameters for framework `framework` and component
 * `component` (NULL for the framework's own parameters). def_size is
 * sizeof(weft_mca_param_def_t) as the caller was built, so that older tables
 * keep working when the row grows. handles (may be NULL) receives one handle
 * per row. Each value is resolved from its sources at once.
 * Returns WEFT_ERR_BAD_PARAM (with a message printed) when a row is invalid or
 * a user-supplied value does not parse or is outside its range (the default is
 * kept); WEFT_ERR_EXISTS for a duplicate name.
 * Not thread-safe: call from register_params.
 */
weft_status_t weft_mca_param_register_table(const char *framework, const char *component,
                                            const weft_mca_param_def_t *defs, size_t count,
                                            size_t def_size, weft_mca_param_t **handles);

/* Find a registered parameter by its full name (or a synonym); NULL if none. */
weft_mca_param_t *weft_mca_param_find(const char *full_name);

/* Typed readers. Reading with the wrong type returns the type's zero. */
int weft_mca_param_bool(const weft_mca_param_t *p);
int64_t weft_mca_param_int(const weft_mca_param_t *p);
uint64_t weft_mca_param_size(const weft_mca_param_t *p);
double weft_mca_param_double(const weft_mca_param_t *p);
/* STRING, ENUM (the value's name) and LIST (the canonical comma-joined text). */
const char *weft_mca_param_string(const weft_mca_param_t *p);
int weft_mca_param_enum(const weft_mca_param_t *p);
size_t weft_mca_param_list_count(const weft_mca_param_t *p);
const char *weft_mca_param_list_item(const weft_mca_param_t *p, size_t i);
weft_mca_param_source_t weft_mca_param_source(const weft_mca_param_t *p);

/* Set a value from a program (source API). WEFT_ERR_BAD_PARAM if it does not
 * parse or is outside the parameter's range; the old value is kept. */
weft_status_t weft_mca_param_set(weft_mca_param_t *p, const char *value);

/*
 * Command-line values (`--mca name value`), for mpirun and the tools. Must be
 * called before the parameter is registered to take effect at registration;
 * a parameter already registered is updated at once. The value is checked
 * when the parameter is registered (or at once if it already is).
 */
weft_status_t weft_mca_cmdline_set(const char *name, const char *value);

/* Warn, once per name, about every name given on the command line, in the
 * environment (WEFT_MCA_*) or in a param file that no registered parameter
 * has, with the nearest known name. Returns how many were unknown. */
int weft_mca_param_warn_unknown(void);

/* ------------------------------------------------------------------------ */
/* Performance variables                                                     */
/* ------------------------------------------------------------------------ */

/*
 * What a component measures, for tools: MPI_T_pvar_* (MPI-3.1 14.3.7) lists and reads them.
 * The component gives a function that returns the current value; the library does the rest
 * (sessions, handles, start, stop, reset: a tool's counter counts from its start).
 */
typedef enum weft_mca_pvar_class {
    WEFT_MCA_PVAR_LEVEL = 0,  /* how much of something there is now (messages waiting) */
    WEFT_MCA_PVAR_COUNTER = 1 /* how often something happened: never goes down */
} weft_mca_pvar_class_t;

typedef struct weft_mca_pvar_def {
    /* Short name; the full name is made as a parameter's is. [a-z0-9_]+ */
    const char *name;
    weft_mca_pvar_class_t var_class;
    /* What it measures, one or more sentences. Required. */
    const char *help;
    /* 1 (every user) to 9 (developers of this component), as for parameters. */
    int level;
    /* The current value. Called with `arg` from any MPI call (under the library's lock when
     * MPI_THREAD_MULTIPLE), until weft_mca_pvar_unregister. Required. */
    uint64_t (*read)(void *arg);
    void *arg;
} weft_mca_pvar_def_t;

/*
 * Register one performance variable of framework `framework` and component `component`
 * (NULL for the framework's own). def_size is sizeof(weft_mca_pvar_def_t) as the caller was
 * built. A name registered before (a component started again) takes the new read function.
 * WEFT_ERR_BAD_PARAM (with a message printed) for an invalid row.
 */
weft_status_t weft_mca_pvar_register(const char *framework, const char *component,
                                     const weft_mca_pvar_def_t *def, size_t def_size);

/*
 * The component's variables stop being read through it: each keeps the value read now, which
 * tools see from then on (MPI_T outlives MPI_Finalize). Call before the state read() uses
 * goes away; closing a component does it too, without the last read.
 */
void weft_mca_pvar_unregister(const char *framework, const char *component);

#ifdef __cplusplus
} /* extern "C" */

#include <type_traits>

static_assert(std::is_standard_layout_v<weft_mca_component_t> &&
                  std::is_trivially_copyable_v<weft_mca_component_t>,
              "weft_mca_component_t must stay a plain C struct");
static_assert(std::is_standard_layout_v<weft_mca_param_def_t> &&
                  std::is_trivially_copyable_v<weft_mca_param_def_t>,
              "weft_mca_param_def_t must stay a plain C struct");
static_assert(std::is_standard_layout_v<weft_mca_enum_value_t> &&
                  std::is_trivially_copyable_v<weft_mca_enum_value_t>,
              "weft_mca_enum_value_t must stay a plain C struct");
static_assert(std::is_standard_layout_v<weft_mca_version_t> &&
                  std::is_trivially_copyable_v<weft_mca_version_t>,
              "weft_mca_version_t must stay a plain C struct");
/* The frozen head of the descriptor: these offsets may never change. */
static_assert(offsetof(weft_mca_component_t, struct_size) == 0 &&
                  offsetof(weft_mca_component_t, mca_abi_major) == 4 &&
                  offsetof(weft_mca_component_t, mca_abi_minor) == 6 &&
                  offsetof(weft_mca_component_t, framework) == 8 &&
                  offsetof(weft_mca_component_t, framework_abi_major) == 8 + WEFT_MCA_NAME_MAX &&
                  offsetof(weft_mca_component_t, name) == 12 + WEFT_MCA_NAME_MAX &&
                  offsetof(weft_mca_component_t, version) == 12 + 2 * WEFT_MCA_NAME_MAX,
              "the frozen head of weft_mca_component_t moved");
#endif

#endif /* WEFT_MCA_H */
