// btl/sm: which way large messages move on this host (btl_sm_single_copy_mechanism auto).
//
// Three ways compete, and which wins depends on the host (its caches, memory bandwidth, and
// what the kernel's page pinning costs under its hypervisor), on the size, and on whether the
// message is alone on the link or one of a stream:
//   pipeline  no put/get: the sender copies fragments into its shared pool while the
//             receiver copies them out (two copies, made by the two processes at once);
//   cma       the receiver reads the whole message by process_vm_readv (one copy, one core);
//   split     a shared get: the receiver reads pieces while the sender writes others into
//             the receiver's buffer by process_vm_writev (one copy, both cores);
//   streamed  the pipeline, the sender writing its fragments with streaming stores
//             (btl_sm_copy.h): slower where the two processes share caches, and unaffected
//             where they do not.
// A message alone pays for every hand-off of the pipeline, which single copy avoids; in a
// stream the pipeline's two copies overlap across messages, and its second core is what a
// single copy lacks. So each way is timed both ways: one message ("alone"), and messages back
// to back ("stream"), and the PML picks by whether the peer already has a large send under
// way (btl_stream_min_rdma_size in btl.h).
//
// measure() times them between two processes (this one and a forked child, through the same
// system calls, with the module's fragment size and pool depth), every size in turn and every
// way in turn within each round, keeping each one's best round: a neighbour that steals the
// CPU makes a round slower, never faster. decide() turns the rates into size ranges. The
// result is remembered per host and boot in a small file, so that only the first job after a
// boot pays for the measurement (docs/performance.md).
#ifndef WEFT_BTL_SM_CALIBRATE_H
#define WEFT_BTL_SM_CALIBRATE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace weft::btl::sm {

enum Way : int { kWayPipeline = 0, kWayCma = 1, kWaySplit = 2, kWayStreamed = 3, kWays = 4 };

// Bytes per second of each way for messages of `size` bytes (0: not measured or failed).
struct Rate {
    uint64_t size = 0;
    double alone[kWays] = {};  // one message
    double stream[kWays] = {}; // messages back to back
};

// What the measurement runs with: the pipeline's fragment size and how many fragments may be
// in flight (the module's pool), and the largest piece of a shared get.
struct Setting {
    size_t frag = 0;
    size_t slots = 0;
    size_t piece = 0;
};

// Sizes from rdma_min (inclusive) to rdma_max (exclusive) take put/get; SIZE_MAX: no bound
// (rdma_min SIZE_MAX: never).
struct Range {
    size_t rdma_min = SIZE_MAX;
    size_t rdma_max = SIZE_MAX;
};

// The ways per size: alone for a message alone, stream for one sent while another large
// message to the same peer is under way; put/get from split_min on are shared gets; the
// pipeline's fragments of messages in the range `streamed` are written with streaming stores.
struct Choice {
    Range alone;
    Range stream;
    Range streamed;
    size_t split_min = SIZE_MAX;
    std::string why; // one line: what the rates decided
};

// Bytes per piece of a shared get of `size` bytes: about an eighth of it, a multiple of 4 KiB,
// at most cap (btl_sm_split_piece).
inline size_t piece_for(size_t size, size_t cap)
{
    size_t p = ((size / 8) + 4095) & ~size_t(4095);
    return p < 4096 ? 4096 : p > cap ? cap : p;
}

// The sizes measured: every power of two from 4 KiB to 16 MiB.
std::vector<uint64_t> calibration_sizes();

// The rate of `way` for messages of `bytes` (alone, or in a stream), from rates sorted by size:
// the largest measured size at most `bytes`, the smallest below it; 0 if none or not measured.
double rate_at(const std::vector<Rate> &rates, uint64_t bytes, bool stream, unsigned way);

// Pick the ways from the rates (sorted by size). Streaming stores replace cached ones in the
// pipeline where they are faster by `margin` (e.g. 1.03), alone and in a stream together; then
// a single copy replaces that pipeline only where it is faster by `margin`; split replaces cma
// the same way. Between two measured sizes the smaller one's choice holds.
Choice decide(const std::vector<Rate> &rates, double margin);

// Time the four ways, alone and in a stream, between this process and a forked child. false
// (with why) if it could not.
bool measure(const std::vector<uint64_t> &sizes, const Setting &s, std::vector<Rate> &rates,
             std::string &why);

// The calibration file: rates keyed by what makes them valid (this boot of this host, the
// setting). read: false if the file is missing, foreign (another owner, not a regular file),
// malformed or for another key. write: replaces it atomically.
std::string calibration_key(const Setting &s);
bool read_calibration(const std::string &path, const std::string &key, std::vector<Rate> &rates);
bool write_calibration(const std::string &path, const std::string &key,
                       const std::vector<Rate> &rates);
// Parse the file's text (read_calibration's checks, for tests).
bool parse_calibration(const std::string &text, const std::string &key, std::vector<Rate> &rates);
std::string format_calibration(const std::string &key, const std::vector<Rate> &rates);

// The whole of auto: the remembered rates if valid, else measured (under a lock on the file,
// so that the ranks of a job starting together measure once, undisturbed by each other) and
// remembered. path empty: measure, remember nothing. source says where they came from.
bool calibrate(const std::string &path, const Setting &s, std::vector<Rate> &rates,
               std::string &source, std::string &why);

// Which stores the pipeline uses, as text ("streaming stores from 16K below 1M, ...").
std::string stores_text(const Range &streamed);

// The rates as one line of text for the verbose log.
std::string rates_text(const std::vector<Rate> &rates);

} // namespace weft::btl::sm

#endif
