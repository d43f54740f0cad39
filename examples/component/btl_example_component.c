/*
 * btl/example: the smallest complete Weft component, kept as a template.
 *
 * It shows the shape every component has: one exported descriptor, a
 * parameter table, open/query/close, and the framework's own part (here the
 * BTL's init). It moves no data: init makes no modules, so a job that selects
 * it still communicates over the other BTLs. Copy it, rename every "example",
 * and fill in init and a module (see docs/component-guide.md).
 */
#include <btl/btl.h>
#include <weft/mca.h>

#include <stdio.h>

static weft_mca_param_t *priority_param;
static weft_mca_param_t *greeting_param;

static weft_status_t example_register_params(void)
{
    static const weft_mca_param_def_t defs[] = {
        {.name = "priority",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "1",
         .help = "Priority of the example BTL in selection (higher wins).",
         .level = 3,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = NULL,
         .synonyms = NULL,
         .range = NULL},
        {.name = "greeting",
         .type = WEFT_MCA_PARAM_STRING,
         .default_value = "hello from btl/example",
         .help = "Text the example prints when it is opened with btl_base_verbose > 0.",
         .level = 9,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = NULL,
         .synonyms = NULL,
         .range = NULL},
    };
    weft_mca_param_t *handles[2];
    weft_status_t rc =
        weft_mca_param_register_table("btl", "example", defs, 2, sizeof defs[0], handles);
    priority_param = handles[0];
    greeting_param = handles[1];
    return rc;
}

static weft_status_t example_open(void)
{
    const weft_mca_param_t *verbose = weft_mca_param_find("btl_base_verbose");
    if (verbose && weft_mca_param_int(verbose) > 0)
        fprintf(stderr, "%s\n", weft_mca_param_string(greeting_param));
    return WEFT_SUCCESS;
}

static weft_status_t example_query(int *priority, char *why, size_t why_len)
{
    int64_t p = weft_mca_param_int(priority_param);
    if (p < 0) {
        snprintf(why, why_len, "btl_example_priority is negative (%lld)", (long long)p);
        return WEFT_ERR_NOT_AVAILABLE;
    }
    *priority = (int)p;
    return WEFT_SUCCESS;
}

static weft_btl_module_t **example_init(int *num_modules, int enable_progress_threads,
                                        int enable_mpi_threads)
{
    (void)enable_progress_threads;
    (void)enable_mpi_threads;
    *num_modules = 0;
    return NULL;
}

/* The one exported symbol: mca_<framework>_<name>_component. */
const weft_btl_component_t mca_btl_example_component = {
    .mca = {WEFT_MCA_COMPONENT_HEADER(weft_btl_component_t, "btl", WEFT_BTL_ABI_MAJOR,
                                      WEFT_BTL_ABI_MINOR, "example", 0, 1, 0),
            .register_params = example_register_params, .open = example_open,
            .query = example_query, .close = NULL},
    .init = example_init,
    .progress = NULL,
};
