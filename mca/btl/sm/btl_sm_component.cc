// btl/sm: shared memory between the processes of one host. Each process owns a segment in
// btl_sm_segment_dir with one lock-free single-producer ring per local sender; see
// btl_sm_segment.h for the layout and btl_sm_module.cc for the ring protocol.
#include "btl_sm_calibrate.h"
#include "btl_sm_copy.h"
#include "btl_sm_module.h"

#include <weft/mca.h>
#include <weft/runtime.h>

#include <algorithm>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

// The one symbol the component exports (it is built with -fvisibility=hidden).
extern "C" {
__attribute__((visibility("default"))) extern const weft_btl_component_t WEFT_BTL_SM_COMPONENT;
}

namespace weft::btl::sm {

namespace {

enum Param {
    kEagerLimit,
    kMaxSendSize,
    kExclusivity,
    kLatency,
    kBandwidth,
    kRingSize,
    kFreeListMax,
    kSegmentDir,
    kRndvEagerLimit,
    kSingleCopy,
    kCalibrationFile,
    kSplitPiece,
    kPoolStores,
    kClaimAhead,
    kNumParams
};
weft_btl_rdma_params_t rdma_params;

constexpr weft_mca_enum_value_t kSingleCopyValues[] = {
    {"none", int(SingleCopy::none)},
    {"cma", int(SingleCopy::cma)},
    {"auto", int(SingleCopy::automatic)},
    {"split", int(SingleCopy::split)},
    {nullptr, 0},
};
constexpr weft_mca_enum_value_t kPoolStoresValues[] = {
    {"auto", int(PoolStores::automatic)},
    {"cached", int(PoolStores::cached)},
    {"streaming", int(PoolStores::streaming)},
    {nullptr, 0},
};
weft_mca_param_t *params[kNumParams];

std::string single_copy_choice();

// Bounds that keep a ring cell and a pool fragment sensible (and their sizes in 32 bits).
constexpr uint64_t kMinEager = 64, kMaxEager = 1u << 20;
constexpr uint64_t kMaxSendLimit = 64u << 20;

weft_status_t register_params()
{
    // One row per Param, in the same order.
    const weft_mca_param_def_t defs[kNumParams] = {
        {.name = "eager_limit",
         .type = WEFT_MCA_PARAM_SIZE,
         .default_value = "4k",
         .help = "Largest message, PML header included, that the PML sends "
                 "eagerly. It is also the payload of a ring cell: messages up to "
                 "this size (up to 64K; larger ones through the pool) are copied "
                 "straight into the receiver's ring, in 32-byte slots with an "
                 "8-byte header (64 to 1M).",
         .level = 4,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "64..1M"},
        {.name = "max_send_size",
         .type = WEFT_MCA_PARAM_SIZE,
         .default_value = "64k",
         .help = "Largest single send, PML header included; the PML cuts "
                 "larger messages into fragments of at most this size. Sends "
                 "larger than a ring cell travel in a fragment of the sender's "
                 "shared pool, which holds btl_sm_free_list_max fragments of "
                 "this size (at least btl_sm_eager_limit, at most 64M).",
         .level = 4,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "64..64M"},
        {.name = "exclusivity",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "32768",
         .help = "For each peer only the BTLs of highest exclusivity that reach "
                 "it are used. The default puts sm below self (65536) and above "
                 "the network BTLs (tcp: 100), so processes of one host talk "
                 "through shared memory only.",
         .level = 7,
         .scope = WEFT_MCA_SCOPE_ALL_EQUAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "0..4294967295"},
        {.name = "latency",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "1",
         .help = "Latency in microseconds that the BML assumes for this BTL when "
                 "it orders a peer's BTLs for eager sends.",
         .level = 7,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "0..4294967295"},
        {.name = "bandwidth",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "90000",
         .help = "Bandwidth in Mbit/s that the BML assumes for this BTL when it "
                 "weights the striping of large messages over several BTLs.",
         .level = 7,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "0..4294967295"},
        {.name = "ring_size",
         .type = WEFT_MCA_PARAM_SIZE,
         .default_value = "128k",
         .help = "Bytes of each ring, that is of the messages one sender can "
                 "have waiting at one receiver before further sends are queued "
                 "by the sender. A message takes its size plus 16 bytes, rounded "
                 "up to 64; a message larger than the eager limit takes 64. "
                 "Rounded up to a power of two, at least 4 times the eager limit "
                 "and at most 512k (so that, with btl_sm_free_list_max, fewer "
                 "than 2^15 fragments wait for one peer: the PML's sequence "
                 "window). Each process's segment holds one ring per process of "
                 "its host.",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "512..512k"},
        {.name = "free_list_max",
         .type = WEFT_MCA_PARAM_INT,
         .default_value = "64",
         .help = "Fragments of btl_sm_max_send_size in this process's shared "
                 "pool (messages larger than a ring cell are sent from it), and "
                 "the most small descriptors allocated at once. When both are "
                 "used up, btl_alloc reports out-of-resource until sends "
                 "complete (1 to 8191: with the ring, fewer than 2^15 fragments "
                 "wait for one peer, the PML's sequence window).",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "1..8191"},
        {.name = "segment_dir",
         .type = WEFT_MCA_PARAM_STRING,
         .default_value = "/dev/shm",
         .help = "Directory, on a memory file system shared by the processes of "
                 "a host, where each process creates its segment file "
                 "weft-<jobid>-<rank>. The file name is removed as soon as every "
                 "other process of the host has mapped it, else at finalize; a "
                 "file left by a process that died is removed by the next job "
                 "that wants the same name.",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "rndv_eager_limit",
         .type = WEFT_MCA_PARAM_SIZE,
         .default_value = "4k",
         .help = "Bytes, PML header included, of the first fragment of a rendezvous message "
                 "(the send/receive and RDMA pipelines); at most btl_sm_eager_limit.",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "64..1M"},
        {.name = "single_copy_mechanism",
         .type = WEFT_MCA_PARAM_ENUM,
         .default_value = "auto",
         .help = "How large messages move between processes: none (no put/get: the "
                 "send/receive pipeline through the shared pool, two copies made at once by "
                 "the two processes), cma (put/get by process_vm_readv/writev, one copy, made "
                 "by one process), split (cma, the sender writing pieces of each message while "
                 "the receiver reads the others: one copy, made by both), or auto: per size, "
                 "what a measurement of this host finds fastest (remembered in "
                 "btl_sm_calibration_file). See docs/performance.md.",
         .level = 4,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = kSingleCopyValues,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "calibration_file",
         .type = WEFT_MCA_PARAM_STRING,
         .default_value = "/dev/shm/weft-sm-calibration-%u",
         .help = "Where btl_sm_single_copy_mechanism auto remembers what it measured, for "
                 "later jobs of this boot of this host (%u: the user id); empty: measure in "
                 "every job, remember nothing. A file of another owner, or written for "
                 "another boot, host or setting, is measured again.",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "split_piece",
         .type = WEFT_MCA_PARAM_SIZE,
         .default_value = "256k",
         .help = "Largest piece of a shared get (split): a message is cut in about eight "
                 "pieces, of 4 KiB to this many bytes.",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = "4k..64m"},
        {.name = "pool_stores",
         .type = WEFT_MCA_PARAM_ENUM,
         .default_value = "auto",
         .help = "How the sender writes the send/receive pipeline's fragments into its pool: "
                 "cached (ordinary stores: the receiver reads the lines from the sender's "
                 "cache, fast where the two share caches), streaming (non-temporal stores: "
                 "the receiver reads them from memory, at the same speed wherever the two "
                 "processes run; x86-64 only, elsewhere cached), or auto: per size, what the "
                 "measurement of btl_sm_single_copy_mechanism auto finds faster.",
         .level = 5,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = kPoolStoresValues,
         .synonyms = nullptr,
         .range = nullptr},
        {.name = "claim_ahead",
         .type = WEFT_MCA_PARAM_BOOL,
         .default_value = "true",
         .help = "The sender asks for the lines of its ring at a receiver ahead of writing "
                 "them (a prefetch with the intent to write), so that taking each line back "
                 "from the receiver's cache overlaps the sender's other work; false: each "
                 "store waits for its line. Only on x86-64 with PREFETCHW (measured there); "
                 "elsewhere false whatever the setting.",
         .level = 6,
         .scope = WEFT_MCA_SCOPE_LOCAL,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
    };
    weft_status_t rc =
        weft_mca_param_register_table("btl", kName, defs, kNumParams, sizeof defs[0], params);
    if (rc != WEFT_SUCCESS)
        return rc;
    // What the mechanism is on this host, for weft_info: with auto, what this host's
    // measurement chose (measured now if this boot has none yet; the module then uses the
    // same answer).
    const std::string choice = single_copy_choice();
    const weft_mca_param_def_t info[] = {
        {.name = "single_copy_choice",
         .type = WEFT_MCA_PARAM_STRING,
         .default_value = choice.c_str(),
         .help = "How large messages move on this host, per size, and why: what "
                 "btl_sm_single_copy_mechanism auto measured (docs/performance.md), or the "
                 "mechanism forced.",
         .level = 4,
         .scope = WEFT_MCA_SCOPE_INFO,
         .enum_values = nullptr,
         .synonyms = nullptr,
         .range = nullptr},
    };
    rc = weft_mca_param_register_table("btl", kName, info, 1, sizeof info[0], nullptr);
    if (rc != WEFT_SUCCESS)
        return rc;
    // The RDMA pipeline's limits; sm's direct get is one system call, so it takes every size.
    return weft_btl_rdma_params_register(kName, "256k", "1m", "1t", &rdma_params);
}

// The parameters as a Config, or a one-line reason why they cannot work.
bool read_config(Config &cfg, char *why, size_t why_len)
{
    cfg.eager_limit = weft_mca_param_size(params[kEagerLimit]);
    cfg.max_send_size = weft_mca_param_size(params[kMaxSendSize]);
    const int64_t exclusivity = weft_mca_param_int(params[kExclusivity]);
    const int64_t latency = weft_mca_param_int(params[kLatency]);
    const int64_t bandwidth = weft_mca_param_int(params[kBandwidth]);
    const uint64_t ring = weft_mca_param_size(params[kRingSize]);
    const int64_t frags = weft_mca_param_int(params[kFreeListMax]);
    const char *dir = weft_mca_param_string(params[kSegmentDir]);

    if (cfg.eager_limit < kMinEager || cfg.eager_limit > kMaxEager) {
        std::snprintf(why, why_len, "btl_sm_eager_limit is %zu, outside 64..1M", cfg.eager_limit);
        return false;
    }
    if (cfg.max_send_size < cfg.eager_limit || cfg.max_send_size > kMaxSendLimit) {
        std::snprintf(why, why_len,
                      "btl_sm_max_send_size is %zu, outside btl_sm_eager_limit (%zu)..64M",
                      cfg.max_send_size, cfg.eager_limit);
        return false;
    }
    auto u32 = [&](int64_t v, const char *name, uint32_t &out) {
        if (v < 0 || v > int64_t(UINT32_MAX)) {
            std::snprintf(why, why_len, "btl_sm_%s is %" PRId64 ", outside 0..%" PRIu32, name, v,
                          UINT32_MAX);
            return false;
        }
        out = uint32_t(v);
        return true;
    };
    if (!u32(exclusivity, "exclusivity", cfg.exclusivity) ||
        !u32(latency, "latency", cfg.latency) || !u32(bandwidth, "bandwidth", cfg.bandwidth))
        return false;
    // A largest inline message must fit in half a ring (it may have to skip the rest of the
    // ring's end first).
    const uint64_t min_ring = 4 * (cfg.eager_limit + kCacheLine);
    // At most 512k: 16384 slots of 32 bytes, which with 2 * 8191 descriptors and pool
    // fragments keeps what waits for one peer below 2^15 fragments, the window of the PML's
    // sequence numbers (mca/pml/engine/README.md).
    if (ring < min_ring || ring > (uint64_t(512) << 10)) {
        std::snprintf(why, why_len,
                      "btl_sm_ring_size is %" PRIu64 ", outside 4 * (btl_sm_eager_limit + 64) "
                      "(%" PRIu64 ")..512k",
                      ring, min_ring);
        return false;
    }
    cfg.ring_slots = 2;
    while (uint64_t(cfg.ring_slots) * kSlotSize < ring)
        cfg.ring_slots *= 2;
    if (frags < 1 || frags > 8191) {
        std::snprintf(why, why_len, "btl_sm_free_list_max is %" PRId64 ", outside 1..8191", frags);
        return false;
    }
    cfg.free_list_max = size_t(frags);
    cfg.rndv_eager_limit = size_t(weft_mca_param_size(params[kRndvEagerLimit]));
    if (cfg.rndv_eager_limit > cfg.eager_limit || cfg.rndv_eager_limit < 64) {
        std::snprintf(why, why_len,
                      "btl_sm_rndv_eager_limit is %zu, outside 64..btl_sm_eager_limit (%zu)",
                      cfg.rndv_eager_limit, cfg.eager_limit);
        return false;
    }
    cfg.single_copy = SingleCopy(weft_mca_param_enum(params[kSingleCopy]));
    cfg.split_piece = size_t(weft_mca_param_size(params[kSplitPiece]));
    cfg.pool_stores = PoolStores(weft_mca_param_enum(params[kPoolStores]));
    cfg.claim_ahead = weft_mca_param_bool(params[kClaimAhead]) && can_prefetch_for_write();
    std::string file = weft_mca_param_string(params[kCalibrationFile])
                           ? weft_mca_param_string(params[kCalibrationFile])
                           : "";
    if (const size_t at = file.find("%u"); at != std::string::npos)
        file.replace(at, 2, std::to_string(geteuid()));
    cfg.calibration_file = file;
    cfg.segment_dir = dir ? dir : "";
    while (cfg.segment_dir.size() > 1 && cfg.segment_dir.back() == '/')
        cfg.segment_dir.pop_back();
    return true;
}

std::string single_copy_choice()
{
    Config cfg;
    char why[256] = "";
    if (!read_config(cfg, why, sizeof why))
        return std::string("unknown: ") + why;
    std::string forced;
    switch (cfg.single_copy) {
    case SingleCopy::none: forced = "none (forced by btl_sm_single_copy_mechanism)"; break;
    case SingleCopy::cma: forced = "cma (forced by btl_sm_single_copy_mechanism)"; break;
    case SingleCopy::split: forced = "split (forced by btl_sm_single_copy_mechanism)"; break;
    case SingleCopy::automatic: break;
    }
    if (cfg.pool_stores != PoolStores::automatic && !forced.empty())
        return forced + "; the pipeline writes with " +
               (cfg.pool_stores == PoolStores::cached ? "cached" : "streaming") +
               " stores (forced by btl_sm_pool_stores)";
    // A job whose selection leaves sm out (--mca btl self,tcp, ^sm) measures nothing.
    if (const weft_mca_param_t *sel = weft_mca_param_find("btl")) {
        const char *v = weft_mca_param_string(sel);
        const std::string list = v ? v : "";
        const bool exclude = !list.empty() && list[0] == '^';
        bool named = false;
        for (size_t at = exclude ? 1 : 0; at <= list.size();) {
            const size_t comma = std::min(list.find(',', at), list.size());
            named = named || list.compare(at, comma - at, kName) == 0;
            at = comma + 1;
        }
        if (!list.empty() && named == exclude)
            return "not measured: btl/" + std::string(kName) + " is not selected (btl = " + list +
                   ")";
    }
    Choice c;
    std::string note;
    const bool measured = auto_choice(cfg, c, note);
    if (forced.empty())
        return note;
    return forced + "; the pipeline writes with " +
           (measured ? stores_text(c.streamed) + " (btl_sm_pool_stores auto: " + note + ")"
                     : "cached stores (" + note + ")");
}

// Whether this process could run: the parameters make sense and the segment directory takes
// files. Whether there is anybody to talk to is decided per peer in add_procs.
weft_status_t query(int *priority, char *why, size_t why_len)
{
    Config cfg;
    if (!read_config(cfg, why, why_len))
        return WEFT_ERR_BAD_PARAM;
    if (weft_status_t rc = weft_btl_rdma_params_check(kName, &rdma_params, why, why_len);
        rc != WEFT_SUCCESS)
        return rc;
    if (cfg.segment_dir.empty() || ::access(cfg.segment_dir.c_str(), W_OK | X_OK) != 0) {
        std::snprintf(why, why_len, "btl_sm_segment_dir '%s' is not a writable directory",
                      cfg.segment_dir.c_str());
        // A directory the user named must work; only the default may be missing (a host
        // without /dev/shm), and then sm stays out.
        return weft_mca_param_source(params[kSegmentDir]) == WEFT_MCA_SOURCE_DEFAULT
                   ? WEFT_ERR_NOT_AVAILABLE
                   : WEFT_ERR_BAD_PARAM;
    }
    *priority = 0;
    return WEFT_SUCCESS;
}

weft_btl_module_t **init(int *num_modules, int enable_progress_threads, int enable_mpi_threads)
{
    *num_modules = 0;
    // Alone in the job: no peer could ever be reached, so make no segment. (Who shares the
    // host is known only after the modex; add_procs finds out.)
    if (weft_runtime_world_size() <= 1)
        return nullptr;
    Config cfg;
    char why[256] = "";
    if (!read_config(cfg, why, sizeof why)) {
        log_warning(std::string("btl/sm: ") + why + "; shared memory disabled");
        return nullptr;
    }
    std::string error;
    weft_status_t rc = WEFT_SUCCESS;
    Module *m = module_create(cfg, enable_progress_threads || enable_mpi_threads, error, rc);
    if (!m) {
        log_warning("btl/sm: " + error + "; shared memory disabled");
        return nullptr;
    }
    m->base.btl_component = const_cast<weft_btl_component_t *>(&WEFT_BTL_SM_COMPONENT);
    const std::string note = rdma_setup(m);
    if (weft_btl_rdma_params_apply(kName, &rdma_params, &m->base, why, sizeof why) !=
        WEFT_SUCCESS) {
        // Only the user's values fail here (btl_sm_flags asking for what this host cannot do;
        // query checked the rest): leaving sm out would quietly move the job to another BTL.
        m->base.btl_finalize(&m->base);
        weft_runtime_abort(1, (std::string("btl/sm: ") + why).c_str());
    }
    if (const weft_mca_param_t *v = weft_mca_param_find("btl_base_verbose");
        v && weft_mca_param_int(v) >= 10)
        log_info("btl/sm: " + note + "; flags " +
                 weft_btl_flags_string(m->base.btl_flags, why, sizeof why) +
                 (cfg.claim_ahead ? "; ring lines claimed ahead"
                  : weft_mca_param_bool(params[kClaimAhead])
                      ? "; ring lines not claimed ahead (not an x86-64 with PREFETCHW)"
                      : "; ring lines not claimed ahead (btl_sm_claim_ahead false)"));
    auto **modules = static_cast<weft_btl_module_t **>(std::malloc(sizeof(weft_btl_module_t *)));
    if (!modules) {
        m->base.btl_finalize(&m->base);
        return nullptr;
    }
    modules[0] = &m->base;
    *num_modules = 1;
    return modules;
}

int progress() { return module_progress(); }

} // namespace

} // namespace weft::btl::sm

extern "C" {
const weft_btl_component_t WEFT_BTL_SM_COMPONENT = {
    .mca = {WEFT_MCA_COMPONENT_HEADER(weft_btl_component_t, "btl", WEFT_BTL_ABI_MAJOR,
                                      WEFT_BTL_ABI_MINOR, WEFT_BTL_SM_STR(WEFT_BTL_SM_NAME), 0, 1,
                                      0),
            .register_params = weft::btl::sm::register_params, .open = nullptr,
            .query = weft::btl::sm::query, .close = nullptr},
    .init = weft::btl::sm::init,
    .progress = weft::btl::sm::progress,
};
}
