// A test component, compiled once per case with -D options:
//   FIXTURE_NAME           component name (file mca_<fw>_<name>.so)
//   FIXTURE_FW_PML         a pml component instead of a btl one
//   FIXTURE_PRIORITY       priority from query (a parameter's default)
//   FIXTURE_REFUSE_DEFAULT default of <fw>_<name>_refuse ("false")
//   FIXTURE_MCA_MAJOR/MINOR, FIXTURE_API_MINOR: versions claimed
//   FIXTURE_DESCRIPTOR_NAME the name written in the descriptor
//   FIXTURE_UNRESOLVED     calls a function that exists nowhere
#include <weft/mca.h>

#include <btl/btl.h>
#include <pml/pml.h>

#include <cstdio>

#define FIXTURE_STR2(x)           #x
#define FIXTURE_STR(x)            FIXTURE_STR2(x)
#define FIXTURE_SYMBOL2(fw, name) mca_##fw##_##name##_component
#define FIXTURE_SYMBOL(fw, name)  FIXTURE_SYMBOL2(fw, name)

#ifdef FIXTURE_FW_PML
#define FIXTURE_FW        pml
#define FIXTURE_STRUCT    weft_pml_component_t
#define FIXTURE_API_MAJOR WEFT_PML_ABI_MAJOR
#define FIXTURE_FW_PART   .init = nullptr, .finalize = nullptr
#else
#define FIXTURE_FW        btl
#define FIXTURE_STRUCT    weft_btl_component_t
#define FIXTURE_API_MAJOR WEFT_BTL_ABI_MAJOR
#define FIXTURE_FW_PART   .init = nullptr, .progress = nullptr
#endif
#ifndef FIXTURE_PRIORITY
#define FIXTURE_PRIORITY 5
#endif
#ifndef FIXTURE_REFUSE_DEFAULT
#define FIXTURE_REFUSE_DEFAULT "false"
#endif
#ifndef FIXTURE_MCA_MAJOR
#define FIXTURE_MCA_MAJOR WEFT_MCA_ABI_MAJOR
#define FIXTURE_MCA_MINOR WEFT_MCA_ABI_MINOR
#endif
#ifndef FIXTURE_API_MINOR
#define FIXTURE_API_MINOR 0
#endif
#ifndef FIXTURE_DESCRIPTOR_NAME
#define FIXTURE_DESCRIPTOR_NAME FIXTURE_STR(FIXTURE_NAME)
#endif

#ifdef FIXTURE_UNRESOLVED
extern "C" int weft_fixture_function_that_exists_nowhere(void);
#endif

namespace {

weft_mca_param_t *priority_param;
weft_mca_param_t *refuse_param;
weft_mca_param_t *fail_open_param;

weft_status_t fixture_register(void)
{
    static const weft_mca_enum_value_t modes[] = {{"fast", 0}, {"safe", 1}, {nullptr, 0}};
    const weft_mca_param_def_t defs[] = {
        {.name = "priority",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = FIXTURE_STR(FIXTURE_PRIORITY),
         .help = "Priority this test component reports from query.",
         .level = 3,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "refuse",
         .type = WEFT_MCA_PARAM_BOOL,
         .default_value = FIXTURE_REFUSE_DEFAULT,
         .help = "Make query refuse, as a component that cannot run here does.",
         .level = 3,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "fail_open",
         .type = WEFT_MCA_PARAM_BOOL,
         .default_value = "false",
         .help = "Make open fail.",
         .level = 9,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "eager_limit",
         .type = WEFT_MCA_PARAM_SIZE,
         .default_value = "4k",
         .help = "A size parameter, to show units in tests.",
         .level = 4,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = nullptr,
         .synonyms = "fixture_" FIXTURE_STR(FIXTURE_NAME) "_old_eager_limit",
         .range = nullptr},
        {.name = "mode",
         .type = WEFT_MCA_PARAM_ENUM,
         .default_value = "fast",
         .help = "An enum parameter.",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = modes,
         .synonyms = nullptr,
         .range = nullptr},
    };
    weft_mca_param_t *h[5] = {};
    weft_status_t rc = weft_mca_param_register_table(
        FIXTURE_STR(FIXTURE_FW), FIXTURE_STR(FIXTURE_NAME), defs, 5, sizeof defs[0], h);
    priority_param = h[0];
    refuse_param = h[1];
    fail_open_param = h[2];
    return rc;
}

weft_status_t fixture_open(void)
{
#ifdef FIXTURE_UNRESOLVED
    if (weft_fixture_function_that_exists_nowhere())
        return WEFT_ERROR;
#endif
    return weft_mca_param_bool(fail_open_param) ? WEFT_ERR_OUT_OF_RESOURCE : WEFT_SUCCESS;
}

weft_status_t fixture_query(int *priority, char *why, size_t why_len)
{
    if (weft_mca_param_bool(refuse_param)) {
        std::snprintf(why, why_len, "refused because %s_%s_refuse is set", FIXTURE_STR(FIXTURE_FW),
                      FIXTURE_STR(FIXTURE_NAME));
        return WEFT_ERR_NOT_AVAILABLE;
    }
    *priority = int(weft_mca_param_int(priority_param));
    return WEFT_SUCCESS;
}

} // namespace

extern "C" {
extern const FIXTURE_STRUCT FIXTURE_SYMBOL(FIXTURE_FW, FIXTURE_NAME);

const FIXTURE_STRUCT FIXTURE_SYMBOL(FIXTURE_FW, FIXTURE_NAME) = {
    .mca = {.struct_size = sizeof(FIXTURE_STRUCT),
            .mca_abi_major = FIXTURE_MCA_MAJOR,
            .mca_abi_minor = FIXTURE_MCA_MINOR,
            .framework = FIXTURE_STR(FIXTURE_FW),
            .framework_abi_major = FIXTURE_API_MAJOR,
            .framework_abi_minor = FIXTURE_API_MINOR,
            .name = FIXTURE_DESCRIPTOR_NAME,
            .version = {.major = 1, .minor = 2, .patch = 3, .reserved = 0},
            .flags = WEFT_MCA_FLAG_NONE,
            .reserved = 0,
            .register_params = fixture_register,
            .open = fixture_open,
            .query = fixture_query,
            .close = nullptr},
    FIXTURE_FW_PART,
};
}
