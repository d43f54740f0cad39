// Tests for framework/datatype/layout.cc: the layouts of constructed types (bounds, sizes,
// runs) against hand-computed ones, pack/unpack round trips of nested types, fragments that
// start and end at every byte offset, and element counts of partial messages.
#include "check_util.h"

#include "layout.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

using namespace weft::dt;

namespace {

// A buffer whose byte i holds i * 7 + 1 (mod 256): every byte tells where it came from.
std::vector<unsigned char> pattern(size_t n)
{
    std::vector<unsigned char> b(n);
    for (size_t i = 0; i < n; ++i)
        b[i] = (unsigned char)(i * 7 + 1);
    return b;
}

// struct { char c; /* 3 bytes padding */ int i; double d; }: the C layout, as
// MPI_Type_create_struct({1,1,1}, {0,4,8}, {CHAR, INT, DOUBLE}) describes it.
Layout c_struct(const Layout &ch, const Layout &in, const Layout &db)
{
    return combine({{0, 1, &ch}, {4, 1, &in}, {8, 1, &db}}, 1);
}

START_TEST(test_struct_bounds)
{
    const Layout ch = basic(1), in = basic(4), db = basic(8);
    const Layout s = c_struct(ch, in, db);
    ck_assert_uint_eq(s.size, 13);
    ck_assert_int_eq(s.lb, 0);
    ck_assert_int_eq(s.extent(), 16); // padded to the double's alignment
    ck_assert_int_eq(s.true_lb, 0);
    ck_assert_int_eq(s.true_extent(), 16);
    ck_assert_uint_eq(s.elements, 3);
    ck_assert_uint_eq(s.runs.size(), 3); // the char, then int and double (different elements)
    ck_assert(!s.contiguous);
    // { double; char; }: 9 bytes of data, extent 16.
    const Layout t = combine({{0, 1, &db}, {8, 1, &ch}}, 1);
    ck_assert_int_eq(t.extent(), 16);
    ck_assert_uint_eq(t.size, 9);
}
END_TEST

START_TEST(test_vector_merges_and_bounds)
{
    const Layout in = basic(4);
    // MPI_Type_vector(3, 2, 2, MPI_INT): blocks touch -> one run of 24 bytes, contiguous.
    std::vector<Block> blocks;
    for (int i = 0; i < 3; ++i)
        blocks.push_back({ptrdiff_t(i) * 8, 2, &in});
    const Layout v = combine(blocks, 0);
    ck_assert_uint_eq(v.runs.size(), 1);
    ck_assert(v.contiguous);
    ck_assert_uint_eq(v.size, 24);
    // MPI_Type_vector(3, 1, 3, MPI_INT): ints at 0, 12, 24; extent 28 (lb 0, ub 28).
    blocks.clear();
    for (int i = 0; i < 3; ++i)
        blocks.push_back({ptrdiff_t(i) * 12, 1, &in});
    const Layout w = combine(blocks, 0);
    ck_assert_uint_eq(w.runs.size(), 3);
    ck_assert_int_eq(w.extent(), 28);
    ck_assert_uint_eq(w.size, 12);
    // A negative stride: MPI_Type_create_hvector(2, 1, -8, MPI_INT) has lb -8, ub 4.
    const Layout n = combine({{0, 1, &in}, {-8, 1, &in}}, 0);
    ck_assert_int_eq(n.lb, -8);
    ck_assert_int_eq(n.ub, 4);
    ck_assert_int_eq(n.true_lb, -8);
}
END_TEST

START_TEST(test_resized)
{
    const Layout in = basic(4);
    const Layout r = resized(in, -4, 16);
    ck_assert_int_eq(r.lb, -4);
    ck_assert_int_eq(r.extent(), 16);
    ck_assert_int_eq(r.true_lb, 0);
    ck_assert_int_eq(r.true_extent(), 4);
    // count 3 of it: ints at 0, 16, 32 -> packed as three ints.
    auto buf = pattern(48);
    unsigned char out[12];
    ck_assert_uint_eq(pack(r, buf.data(), 3, 0, out, sizeof out), 12);
    for (int i = 0; i < 3; ++i)
        ck_assert_int_eq(std::memcmp(out + 4 * i, buf.data() + 16 * i, 4), 0);
}
END_TEST

// A nested type: a vector of 2 blocks of 2 structs, stride 3 structs, of the C struct above.
// Pack, compare with a hand walk of the type map, unpack into a clean buffer, compare.
START_TEST(test_nested_round_trip)
{
    const Layout ch = basic(1), in = basic(4), db = basic(8);
    const Layout s = c_struct(ch, in, db);
    const Layout v = combine({{0, 2, &s}, {3 * 16, 2, &s}}, 0);
    ck_assert_uint_eq(v.size, 4 * 13);
    ck_assert_int_eq(v.extent(), 5 * 16);
    const size_t count = 3;
    const size_t span = size_t(v.extent()) * count;
    auto src = pattern(span);
    std::vector<unsigned char> packed(v.size * count);
    ck_assert_uint_eq(pack(v, src.data(), count, 0, packed.data(), packed.size()), packed.size());
    // Expected: for each instance, structs 0, 1, 3, 4; each char@0, int@4..7, double@8..15.
    std::vector<unsigned char> expect;
    for (size_t k = 0; k < count; ++k)
        for (size_t st : {0, 1, 3, 4}) {
            const size_t base = k * 80 + st * 16;
            expect.push_back(src[base]);
            for (size_t b = 4; b < 16; ++b)
                expect.push_back(src[base + b]);
        }
    ck_assert(expect == packed);
    // Unpack into a buffer of 0xEE: data lands where it came from, holes stay 0xEE.
    std::vector<unsigned char> dst(span, 0xEE);
    ck_assert_uint_eq(unpack(v, dst.data(), count, 0, packed.data(), packed.size()), packed.size());
    for (size_t i = 0; i < span; ++i) {
        const size_t st = (i % 80) / 16, b = i % 16;
        const bool data = (st != 2) && (b == 0 || b >= 4);
        ck_assert_msg(dst[i] == (data ? src[i] : 0xEE), "byte %zu", i);
    }
}
END_TEST

// Every split point of a small struct type's packed stream, including inside an element: two
// packs at any boundary give the whole; two unpacks put it back.
START_TEST(test_fragments_at_every_offset)
{
    const Layout sh = basic(2), in = basic(4);
    // struct { short; int; short; }: shorts at 0 and 8, int at 4; extent 12.
    const Layout s = combine({{0, 1, &sh}, {4, 1, &in}, {8, 1, &sh}}, 1);
    ck_assert_int_eq(s.extent(), 12);
    const size_t count = 5, total = s.size * count;
    auto src = pattern(size_t(s.extent()) * count);
    std::vector<unsigned char> whole(total);
    pack(s, src.data(), count, 0, whole.data(), total);
    for (size_t cut = 0; cut <= total; ++cut) {
        std::vector<unsigned char> two(total, 0);
        ck_assert_uint_eq(pack(s, src.data(), count, 0, two.data(), cut), cut);
        ck_assert_uint_eq(pack(s, src.data(), count, cut, two.data() + cut, total), total - cut);
        ck_assert_msg(two == whole, "pack split at %zu", cut);
        std::vector<unsigned char> back(src.size(), 0xEE), ref(src.size(), 0xEE);
        unpack(s, ref.data(), count, 0, whole.data(), total);
        ck_assert_uint_eq(unpack(s, back.data(), count, 0, whole.data(), cut), cut);
        ck_assert_uint_eq(unpack(s, back.data(), count, cut, whole.data() + cut, total - cut),
                          total - cut);
        ck_assert_msg(back == ref, "unpack split at %zu", cut);
    }
    // Three-way splits too, at every pair of points.
    for (size_t a = 0; a <= total; a += 3)
        for (size_t b = a; b <= total; b += 5) {
            std::vector<unsigned char> three(total, 0);
            pack(s, src.data(), count, 0, three.data(), a);
            pack(s, src.data(), count, a, three.data() + a, b - a);
            pack(s, src.data(), count, b, three.data() + b, total - b);
            ck_assert_msg(three == whole, "pack split at %zu and %zu", a, b);
        }
}
END_TEST

START_TEST(test_elements_partial)
{
    const Layout sh = basic(2), in = basic(4), db = basic(8);
    const Layout s = combine({{0, 1, &sh}, {4, 2, &in}, {16, 1, &db}}, 1); // 2+8+8 = 18 bytes
    ck_assert_uint_eq(s.elements, 4);
    ck_assert_int_eq(elements_in(s, 0), 0);
    ck_assert_int_eq(elements_in(s, 2), 1);
    ck_assert_int_eq(elements_in(s, 6), 2);
    ck_assert_int_eq(elements_in(s, 10), 3);
    ck_assert_int_eq(elements_in(s, 7), -1); // inside the first int
    ck_assert_int_eq(elements_in(s, 18), 4);
    ck_assert_int_eq(elements_in(s, 18 * 3 + 6), 14); // three whole, then short and int
    ck_assert_int_eq(elements_in(s, 18 * 3 + 17), -1);
}
END_TEST

// MPI_Type_create_subarray({4, 5}, {2, 3}, {1, 1}, C order, MPI_INT): rows 1-2, columns 1-3
// of a 4x5 int array: ints at (r * 5 + c) * 4 for r in 1..2, c in 1..3; extent 80.
START_TEST(test_subarray_by_hand)
{
    const Layout in = basic(4);
    const Layout a = subarray({4, 5}, {2, 3}, {1, 1}, false, in);
    ck_assert_int_eq(a.lb, 0);
    ck_assert_int_eq(a.extent(), 80);
    ck_assert_uint_eq(a.size, 24);
    ck_assert_uint_eq(a.runs.size(), 2);
    ck_assert_int_eq(a.runs[0].disp, 24);
    ck_assert_uint_eq(a.runs[0].len, 12);
    ck_assert_int_eq(a.runs[1].disp, 44);
    ck_assert_uint_eq(a.runs[1].len, 12);
    ck_assert_int_eq(a.true_lb, 24);
    ck_assert_int_eq(a.true_extent(), 32);
    // Fortran order, the same sizes: the first dimension varies fastest: elements at
    // (c * 4 + r) * 4 for c in 1..3, r in 1..2.
    const Layout f = subarray({4, 5}, {2, 3}, {1, 1}, true, in);
    ck_assert_uint_eq(f.runs.size(), 3);
    for (size_t c = 0; c < 3; ++c) {
        ck_assert_int_eq(f.runs[c].disp, ptrdiff_t(((c + 1) * 4 + 1) * 4));
        ck_assert_uint_eq(f.runs[c].len, 8);
    }
    // 3-D, C order: sizes {3,4,5}, subsizes {2,1,2}, starts {1,2,3}.
    const Layout t = subarray({3, 4, 5}, {2, 1, 2}, {1, 2, 3}, false, in);
    ck_assert_int_eq(t.extent(), 3 * 4 * 5 * 4);
    std::vector<ptrdiff_t> want;
    for (size_t i = 1; i < 3; ++i)
        want.push_back(ptrdiff_t(((i * 4 + 2) * 5 + 3) * 4));
    ck_assert_uint_eq(t.runs.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k) {
        ck_assert_int_eq(t.runs[k].disp, want[k]);
        ck_assert_uint_eq(t.runs[k].len, 8);
    }
}
END_TEST

START_TEST(test_basic_parts_pair)
{
    // MPI_SHORT_INT: short at 0, int at 4; size 6, extent 8; padding never touched.
    const Layout p = basic_parts({{0, 2, 2}, {4, 4, 4}}, 8);
    ck_assert_uint_eq(p.size, 6);
    ck_assert_int_eq(p.extent(), 8);
    ck_assert_uint_eq(p.elements, 2);
    auto src = pattern(16);
    std::vector<unsigned char> packed(12), back(16, 0xEE);
    pack(p, src.data(), 2, 0, packed.data(), 12);
    unpack(p, back.data(), 2, 0, packed.data(), 12);
    for (size_t i = 0; i < 16; ++i) {
        const bool data = (i % 8) < 2 || (i % 8) >= 4;
        ck_assert_msg(back[i] == (data ? src[i] : 0xEE), "byte %zu", i);
    }
}
END_TEST

// The convertor walker (what transports call): fragments of every size through
// weft_convertor_pack/unpack/seek, as a BTL would cut them, give the packed stream and put it
// back where it belongs, holes untouched.
START_TEST(test_convertor_walker)
{
    const Layout sh = basic(2), in = basic(4);
    const Layout s = combine({{0, 1, &sh}, {4, 1, &in}, {8, 1, &sh}}, 1);
    const size_t count = 7, total = s.size * count;
    auto src = pattern(size_t(s.extent()) * count);
    std::vector<unsigned char> whole(total);
    pack(s, src.data(), count, 0, whole.data(), total);
    for (size_t frag = 1; frag <= total; ++frag) {
        ConvState st{&s, reinterpret_cast<char *>(src.data()), count};
        weft_convertor_t cv;
        convertor_init(&cv, &st);
        ck_assert_uint_eq(cv.size, total);
        ck_assert_ptr_null(weft_convertor_contiguous_data(&cv));
        std::vector<unsigned char> out(total, 0);
        size_t at = 0;
        while (weft_convertor_remaining(&cv) > 0)
            at += weft_convertor_pack(&cv, out.data() + at, frag);
        ck_assert_msg(out == whole, "walker pack in fragments of %zu", frag);
        // Back, in the same fragments, and once more after seeking into the middle.
        std::vector<unsigned char> back(src.size(), 0xEE), ref(src.size(), 0xEE);
        unpack(s, ref.data(), count, 0, whole.data(), total);
        ConvState bs{&s, reinterpret_cast<char *>(back.data()), count};
        convertor_init(&cv, &bs);
        for (size_t off = 0; off < total; off += frag)
            ck_assert_uint_eq(
                weft_convertor_unpack(&cv, whole.data() + off, std::min(frag, total - off)),
                std::min(frag, total - off));
        ck_assert_msg(back == ref, "walker unpack in fragments of %zu", frag);
        weft_convertor_seek(&cv, total / 2);
        std::vector<unsigned char> tail(total - total / 2);
        ConvState ts{&s, reinterpret_cast<char *>(src.data()), count};
        convertor_init(&cv, &ts);
        weft_convertor_seek(&cv, total / 2);
        ck_assert_uint_eq(weft_convertor_pack(&cv, tail.data(), total), tail.size());
        ck_assert(std::equal(tail.begin(), tail.end(), whole.begin() + long(total / 2)));
    }
}
END_TEST

} // namespace

int main()
{
    Suite *s = suite_create("datatype layout");
    TCase *tc = tcase_create("layout");
    tcase_add_test(tc, test_struct_bounds);
    tcase_add_test(tc, test_vector_merges_and_bounds);
    tcase_add_test(tc, test_resized);
    tcase_add_test(tc, test_nested_round_trip);
    tcase_add_test(tc, test_fragments_at_every_offset);
    tcase_add_test(tc, test_elements_partial);
    tcase_add_test(tc, test_subarray_by_hand);
    tcase_add_test(tc, test_basic_parts_pair);
    tcase_add_test(tc, test_convertor_walker);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
