// btl/sm's choice of how large messages move (btl_sm_calibrate.h): the decision from rates,
// each way forced by made-up rates (so that every branch of the logic runs whatever this host
// is like), the calibration file's checks, and one real measurement between two processes.
// The standard headers before <check.h>, which defines a macro named fail.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "check_util.h"

#include "btl_sm_calibrate.h"
#include "btl_sm_copy.h"

namespace {

using namespace weft::btl::sm;

constexpr double G = 1e9;

// Rates for every calibration size from a function of the size: {alone[4], stream[4]}.
template <class F> std::vector<Rate> rates_of(F f)
{
    std::vector<Rate> out;
    for (uint64_t s : calibration_sizes()) {
        Rate r;
        r.size = s;
        f(s, r);
        out.push_back(r);
    }
    return out;
}

// The pipeline with streaming stores at half the cached one's rate unless given.
void set(double *w, double pipeline, double cma, double split, double streamed = 0)
{
    w[kWayPipeline] = pipeline;
    w[kWayCma] = cma;
    w[kWaySplit] = split;
    w[kWayStreamed] = streamed > 0 ? streamed : pipeline / 2;
}

constexpr uint64_t K = 1024, M = 1024 * 1024;

START_TEST(test_pipeline_everywhere)
{
    const Choice c = decide(rates_of([](uint64_t, Rate &r) {
                                set(r.alone, 20 * G, 10 * G, 12 * G);
                                set(r.stream, 20 * G, 10 * G, 12 * G);
                            }),
                            1.03);
    ck_assert_uint_eq(c.alone.rdma_min, SIZE_MAX);
    ck_assert_uint_eq(c.stream.rdma_min, SIZE_MAX);
    ck_assert_uint_eq(c.split_min, SIZE_MAX);
    ck_assert_msg(c.why.find("alone: the pipeline at every size") != std::string::npos, "%s",
                  c.why.c_str());
}
END_TEST

// The kind of host issue 14 describes: single copy wins alone from 64K to below 2M, the
// pipeline wins every stream; within the single-copy sizes, split wins from 512K.
START_TEST(test_alone_and_stream_differ)
{
    const Choice c =
        decide(rates_of([](uint64_t s, Rate &r) {
                   const bool mid = s >= 64 * K && s < 2 * M;
                   set(r.alone, 10 * G, mid ? 14 * G : 8 * G, mid && s >= 512 * K ? 16 * G : 6 * G);
                   set(r.stream, 20 * G, 13 * G, s >= 512 * K ? 16 * G : 6 * G);
               }),
               1.03);
    ck_assert_uint_eq(c.alone.rdma_min, 64 * K);
    ck_assert_uint_eq(c.alone.rdma_max, 2 * M);
    ck_assert_uint_eq(c.stream.rdma_min, SIZE_MAX);
    ck_assert_uint_eq(c.split_min, 512 * K);
}
END_TEST

// Single copy from some size to the largest: no upper bound; and in a stream too.
START_TEST(test_open_ended_and_every_size)
{
    const Choice c = decide(rates_of([](uint64_t s, Rate &r) {
                                set(r.alone, 10 * G, s >= 256 * K ? 20 * G : 5 * G, 1 * G);
                                set(r.stream, 10 * G, 20 * G, 1 * G);
                            }),
                            1.03);
    ck_assert_uint_eq(c.alone.rdma_min, 256 * K);
    ck_assert_uint_eq(c.alone.rdma_max, SIZE_MAX);
    ck_assert_uint_eq(c.stream.rdma_min, 0); // from the smallest size measured: every size
    ck_assert_uint_eq(c.stream.rdma_max, SIZE_MAX);
    ck_assert_uint_eq(c.split_min, SIZE_MAX);
}
END_TEST

// One noisy size inside a winning run does not cut it in two, and a gain below the margin is
// no gain.
START_TEST(test_noise_and_margin)
{
    Choice c = decide(rates_of([](uint64_t s, Rate &r) {
                          const bool mid = s >= 64 * K && s <= 4 * M;
                          set(r.alone, 10 * G, mid ? (s == 512 * K ? 9 * G : 15 * G) : 5 * G, 1);
                          set(r.stream, 10 * G, 5 * G, 1);
                      }),
                      1.03);
    ck_assert_uint_eq(c.alone.rdma_min, 64 * K);
    ck_assert_uint_eq(c.alone.rdma_max, 8 * M);
    c = decide(rates_of([](uint64_t, Rate &r) {
                   set(r.alone, 10 * G, 10.2 * G, 1);
                   set(r.stream, 10 * G, 10.2 * G, 1);
               }),
               1.03);
    ck_assert_uint_eq(c.alone.rdma_min, SIZE_MAX);
    ck_assert_uint_eq(c.stream.rdma_min, SIZE_MAX);
}
END_TEST

// Streaming stores win from 64K to below 1M, alone and in a stream: the pipeline writes with
// them there, and put/get is weighed against that pipeline: cma (12 GB/s) beats the cached
// pipeline (10) at 256K, but not the streamed one (16), so no put/get there; from 1M on the
// cached pipeline is back and cma is slower than it.
START_TEST(test_streamed_stores)
{
    const Choice c =
        decide(rates_of([](uint64_t s, Rate &r) {
                   const bool nt = s >= 64 * K && s < 1 * M;
                   set(r.alone, 10 * G, s >= 128 * K ? 12 * G : 4 * G, 3 * G, nt ? 16 * G : 6 * G);
                   set(r.stream, 20 * G, 12 * G, 3 * G, nt ? 25 * G : 8 * G);
                   if (s >= 1 * M)
                       r.alone[kWayPipeline] = 14 * G;
               }),
               1.03);
    ck_assert_uint_eq(c.streamed.rdma_min, 64 * K);
    ck_assert_uint_eq(c.streamed.rdma_max, 1 * M);
    ck_assert_uint_eq(c.alone.rdma_min, SIZE_MAX);
    ck_assert_uint_eq(c.stream.rdma_min, SIZE_MAX);
    ck_assert_msg(c.why.find("streaming stores from 64K below 1M") != std::string::npos, "%s",
                  c.why.c_str());
    const std::string none = stores_text(Range{}), all = stores_text(Range{0, SIZE_MAX});
    ck_assert_str_eq(none.c_str(), "cached stores at every size");
    ck_assert_str_eq(all.c_str(), "streaming stores at every size");
    // A streamed pipeline that failed to measure is never chosen.
    const Choice d = decide(rates_of([](uint64_t, Rate &r) {
                                set(r.alone, 10 * G, 4 * G, 3 * G);
                                set(r.stream, 20 * G, 4 * G, 3 * G);
                                r.alone[kWayStreamed] = r.stream[kWayStreamed] = 0;
                            }),
                            1.03);
    ck_assert_uint_eq(d.streamed.rdma_min, SIZE_MAX);
}
END_TEST

// stream_copy copies every byte at every alignment and length, and nothing around them.
START_TEST(test_stream_copy)
{
    std::vector<unsigned char> src(70000), dst(70000 + 128);
    for (size_t i = 0; i < src.size(); ++i)
        src[i] = static_cast<unsigned char>(i * 131 + 7);
    const size_t lengths[] = {0, 1, 15, 16, 17, 63, 64, 65, 127, 200, 4096, 4097, 65536, 69000};
    for (size_t sa = 0; sa < 3; ++sa)
        for (size_t da = 0; da < 64; da += 7)
            for (size_t n : lengths) {
                std::fill(dst.begin(), dst.end(), 0xEE);
                stream_copy(dst.data() + 64 + da, src.data() + sa, n);
                for (size_t i = 0; i < dst.size(); ++i) {
                    const bool in = i >= 64 + da && i < 64 + da + n;
                    const unsigned char want = in ? src[sa + (i - 64 - da)] : 0xEE;
                    if (dst[i] != want)
                        ck_abort_msg("src+%zu dst+%zu n %zu: byte %zu is %u, not %u", sa, da, n, i,
                                     dst[i], want);
                }
            }
}
END_TEST

START_TEST(test_piece_for)
{
    ck_assert_uint_eq(piece_for(4 * K, 256 * K), 4 * K);
    ck_assert_uint_eq(piece_for(1 * M, 256 * K), 128 * K);
    ck_assert_uint_eq(piece_for(16 * M, 256 * K), 256 * K);
    ck_assert_uint_eq(piece_for(100000, 256 * K) % 4096, 0);
}
END_TEST

std::vector<Rate> some_rates()
{
    return rates_of([](uint64_t s, Rate &r) {
        set(r.alone, 1e9 + double(s), 2e9, 3e9);
        set(r.stream, 4e9, 5e9, 6e9 + double(s));
    });
}

// rate_at (btl_way_rate): the largest measured size at most the message's, the smallest below
// it, alone or in a stream; 0 for an unknown way or no rates.
START_TEST(test_rate_at)
{
    const std::vector<Rate> rates = some_rates();
    ck_assert(rate_at(rates, 4 * K, false, kWayPipeline) == 1e9 + 4 * K);
    ck_assert(rate_at(rates, 100, false, kWayPipeline) == 1e9 + 4 * K);
    ck_assert(rate_at(rates, 96 * K, false, kWayPipeline) == 1e9 + 64 * K);
    ck_assert(rate_at(rates, 64 * K - 1, false, kWayPipeline) == 1e9 + 32 * K);
    ck_assert(rate_at(rates, 1 * M, true, kWaySplit) == 6e9 + 1 * M);
    ck_assert(rate_at(rates, 1 * M, false, kWayCma) == 2e9);
    ck_assert(rate_at(rates, 64 * M, true, kWaySplit) == 6e9 + 16 * M);
    ck_assert(rate_at(rates, 1 * M, false, kWays) == 0);
    ck_assert(rate_at({}, 1 * M, false, kWayPipeline) == 0);
}
END_TEST

START_TEST(test_file_text)
{
    const std::vector<Rate> in = some_rates();
    const std::string text = format_calibration("the key", in);
    std::vector<Rate> out;
    ck_assert(parse_calibration(text, "the key", out));
    ck_assert_uint_eq(out.size(), in.size());
    for (size_t i = 0; i < in.size(); ++i) {
        ck_assert_uint_eq(out[i].size, in[i].size);
        for (int w = 0; w < kWays; ++w) {
            ck_assert(std::fabs(out[i].alone[w] / in[i].alone[w] - 1) < 1e-5);
            ck_assert(std::fabs(out[i].stream[w] / in[i].stream[w] - 1) < 1e-5);
        }
    }
    // Another key (another boot, host or setting), another format, damage: refused.
    ck_assert(!parse_calibration(text, "other key", out));
    ck_assert(out.empty());
    std::string t = text;
    t.replace(0, t.find('\n'), "weft-sm-calibration 1");
    ck_assert(!parse_calibration(t, "the key", out));
    ck_assert(!parse_calibration(text.substr(0, text.size() / 2), "the key", out));
    ck_assert(!parse_calibration(text + "4096 1 1 1 1 1 1\n", "the key", out));
    for (const char *bad : {"nan", "-1", "0", "1e99", "inf"}) {
        t = text;
        const size_t at = t.find("\n4096 ") + 6;
        t.replace(at, t.find(' ', at) - at, bad);
        ck_assert_msg(!parse_calibration(t, "the key", out), "accepted %s", bad);
    }
    t = text;
    t.replace(t.find("\n8192 ") + 1, 4, "8193");
    ck_assert(!parse_calibration(t, "the key", out));
}
END_TEST

START_TEST(test_file_checks)
{
    const std::string dir = weft::test::scratch_dir("check_btl_sm_calibrate");
    const std::string path = std::string(dir) + "/cal";
    std::vector<Rate> out;
    ck_assert(!read_calibration(path, "k", out)); // missing
    ck_assert(write_calibration(path, "k", some_rates()));
    struct stat st {};
    ck_assert_int_eq(stat(path.c_str(), &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0600);
    ck_assert(read_calibration(path, "k", out));
    ck_assert_uint_eq(out.size(), calibration_sizes().size());
    ck_assert(!read_calibration(path, "k2", out));
    // Other keys (a job with other btl/sm settings) are added, not replacing the others; a key
    // written again replaces its own rates; the file keeps the last 4 keys written.
    std::vector<Rate> other = some_rates();
    other[0].alone[0] = 7e9;
    ck_assert(write_calibration(path, "k2", other));
    ck_assert(read_calibration(path, "k", out));
    ck_assert(std::fabs(out[0].alone[0] / some_rates()[0].alone[0] - 1) < 1e-5);
    ck_assert(read_calibration(path, "k2", out));
    ck_assert(out[0].alone[0] == 7e9);
    ck_assert(write_calibration(path, "k", other));
    ck_assert(read_calibration(path, "k", out));
    ck_assert(out[0].alone[0] == 7e9);
    for (const char *k : {"k3", "k4", "k5"})
        ck_assert(write_calibration(path, k, some_rates()));
    for (const char *k : {"k", "k3", "k4", "k5"})
        ck_assert_msg(read_calibration(path, k, out), "%s", k);
    ck_assert(!read_calibration(path, "k2", out)); // the oldest, dropped
    // A symbolic link is not followed; a directory or a file too large to be ours is refused.
    const std::string link = std::string(dir) + "/link";
    ck_assert_int_eq(symlink(path.c_str(), link.c_str()), 0);
    ck_assert(!read_calibration(link, "k", out));
    ck_assert(!read_calibration(dir, "k", out));
    const std::string big = std::string(dir) + "/big";
    {
        const std::string text = format_calibration("k", some_rates()) + std::string(20000, '\n');
        const int fd = open(big.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text.data(), text.size()), ssize_t(text.size()));
        close(fd);
    }
    ck_assert(!read_calibration(big, "k", out));
    unlink(big.c_str());
    unlink(link.c_str());
    unlink(path.c_str());
    ck_assert_int_eq(rmdir(dir.c_str()), 0);
}
END_TEST

// A real measurement on this host, and the file that remembers it: the second call reads what
// the first wrote, with the same figures.
START_TEST(test_measure_and_remember)
{
    const Setting s{64 * K, 64, 256 * K};
    std::vector<Rate> rates;
    std::string why;
    if (!measure({64 * K, 1 * M}, s, rates, why)) {
        // Cross-memory attach may be forbidden (a container's seccomp or Yama policy): then
        // auto is none, which mpi_rndv.sh checks. Anything else is a failure.
        ck_assert_msg(why.find("failed") != std::string::npos, "measure: %s", why.c_str());
        return;
    }
    ck_assert_uint_eq(rates.size(), 2);
    for (const Rate &r : rates)
        for (int w = 0; w < kWays; ++w)
            ck_assert_msg(r.alone[w] > 1e6 && r.stream[w] > 1e6, "size %llu way %d: %g %g",
                          (unsigned long long)r.size, w, r.alone[w], r.stream[w]);
    const std::string dir = weft::test::scratch_dir("check_btl_sm_calibrate");
    const std::string path = std::string(dir) + "/cal";
    std::string source;
    ck_assert_msg(calibrate(path, s, rates, source, why), "%s", why.c_str());
    ck_assert_msg(source.find("measured now, remembered") != std::string::npos, "%s",
                  source.c_str());
    // Asked again in this process: the same answer (and how this process got it).
    std::vector<Rate> again;
    ck_assert(calibrate(path, s, again, source, why));
    ck_assert_msg(source.find("measured now, remembered") != std::string::npos, "%s",
                  source.c_str());
    ck_assert_uint_eq(again.size(), rates.size());
    // Another process (a file this one has not read): what the first wrote, as it wrote it.
    const std::string copy = std::string(dir) + "/copy";
    {
        std::vector<Rate> read;
        ck_assert(read_calibration(path, calibration_key(s), read));
        ck_assert(write_calibration(copy, calibration_key(s), read));
    }
    ck_assert(calibrate(copy, s, again, source, why));
    ck_assert_msg(source.find("remembered in " + copy) == 0, "%s", source.c_str());
    ck_assert_uint_eq(again.size(), rates.size());
    for (size_t i = 0; i < rates.size(); ++i)
        ck_assert(std::fabs(again[i].alone[kWayCma] / rates[i].alone[kWayCma] - 1) < 1e-5);
    unlink(copy.c_str());
    // Another setting is another key: measured again.
    ck_assert(calibrate(path, Setting{32 * K, 64, 256 * K}, again, source, why));
    ck_assert_msg(source.find("measured now") == 0, "%s", source.c_str());
    unlink(path.c_str());
    unlink((path + ".lock").c_str());
    ck_assert_int_eq(rmdir(dir.c_str()), 0);
}
END_TEST

} // namespace

int main()
{
    Suite *s = suite_create("btl/sm copy choice");
    TCase *tc = tcase_create("calibrate");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_pipeline_everywhere);
    tcase_add_test(tc, test_alone_and_stream_differ);
    tcase_add_test(tc, test_open_ended_and_every_size);
    tcase_add_test(tc, test_noise_and_margin);
    tcase_add_test(tc, test_streamed_stores);
    tcase_add_test(tc, test_stream_copy);
    tcase_add_test(tc, test_piece_for);
    tcase_add_test(tc, test_rate_at);
    tcase_add_test(tc, test_file_text);
    tcase_add_test(tc, test_file_checks);
    tcase_add_test(tc, test_measure_and_remember);
    suite_add_tcase(s, tc);
    return weft::test::run_suite(s);
}
