// Tests for the public C face of framework/mpi's objects that lives in libweft
// (framework/mpi/mpi_abi.cc, framework/datatype/convertor.cc, the datatype functions of
// framework/datatype/op_reduce.cc) and for the communicator's view: a component that sees only
// weft/comm.h, weft/request.h, weft/op.h and weft/convertor.h reads what framework/mpi wrote.
#include "check_util.h"

#include "layout.h"
#include "mpi_objects.h"

#include <weft/comm.h>
#include <weft/convertor.h>
#include <weft/op.h>
#include <weft/output.h>
#include <weft/request.h>

#include <cstring>
#include <memory>
#include <vector>

namespace {

// A derived type as mpi_datatype.cc makes one: layout, size, not dense, one reference.
weft_datatype *derived(weft::dt::Layout layout, std::vector<weft_datatype *> types = {})
{
    auto *t = new weft_datatype;
    t->predefined = false;
    t->size = layout.size;
    t->dense = false;
    t->layout = std::make_shared<const weft::dt::Layout>(std::move(layout));
    t->types = std::move(types);
    return t;
}

// MPI_Type_vector(2, 1, 2, 4-byte element): two 4-byte runs 8 bytes apart, extent 12.
weft::dt::Layout vector_layout()
{
    static const weft::dt::Layout el = weft::dt::basic(4);
    return weft::dt::combine({{0, 1, &el}, {8, 1, &el}}, 0);
}

START_TEST(test_view_is_the_communicator)
{
    weft_group local{.ranks = {3, 1, 2}, .my_rank = 1};
    weft_group remote{.ranks = {8, 9}, .my_rank = -32766};
    weft_comm c;
    c.cid = 7;
    c.rank = 1;
    c.size = 3;
    c.group = &local;
    c.remote_group = &remote;
    // What comm_update_view (libmpi) fills.
    c.weft_comm_view_t::peer_size = 2;
    c.peer_world = remote.ranks.data();
    c.local_world = local.ranks.data();
    c.flags = WEFT_COMM_FLAG_INTER;
    // A component casts the opaque pointer: the view must be at the communicator's address.
    const weft_comm_view_t *base = &c;
    ck_assert_ptr_eq(static_cast<const void *>(base), static_cast<const void *>(&c));
    weft_comm_t *opaque = &c;
    ck_assert_uint_eq(weft_comm_cid(opaque), 7);
    ck_assert_int_eq(weft_comm_rank(opaque), 1);
    ck_assert_int_eq(weft_comm_size(opaque), 3);
    ck_assert_int_eq(weft_comm_peer_size(opaque), c.peer_size());
    ck_assert(weft_comm_is_inter(opaque) == c.is_inter());
    ck_assert_int_eq(weft_comm_peer_world_rank(opaque, 1), 9);
    ck_assert_int_eq(weft_comm_local_world_rank(opaque, 0), 3);
    ck_assert_ptr_eq(weft_comm_group(opaque), &local);
    ck_assert_ptr_eq(weft_comm_remote_group(opaque), &remote);
    // The C++ defaults are the ones a new communicator needs.
    weft_comm fresh;
    ck_assert_int_eq(fresh.refs, 1);
    ck_assert_ptr_null(fresh.pml_state);
    ck_assert(fresh.destroy == nullptr);
}
END_TEST

START_TEST(test_groups)
{
    weft_group g{.ranks = {5, 0, 4}, .my_rank = 2};
    weft_group other{.ranks = {1}, .my_rank = -32766}; // MPI_UNDEFINED: not a member
    ck_assert_int_eq(weft_group_size(&g), 3);
    ck_assert_int_eq(weft_group_rank(&g), 2);
    ck_assert_int_eq(weft_group_rank(&other), -1);
    ck_assert_int_eq(weft_group_world_rank(&g, 0), 5);
    ck_assert_int_eq(weft_group_world_rank(&g, 2), 4);
    ck_assert_int_eq(weft_group_world_rank(&g, 3), -1);
    ck_assert_int_eq(weft_group_world_rank(&g, -1), -1);
    ck_assert_int_eq(weft_group_size(nullptr), 0);
}
END_TEST

START_TEST(test_request_defaults_match_init)
{
    // A C++ request starts where weft_request_init puts a C one.
    weft_request cxx;
    weft_request c;
    std::memset(static_cast<void *>(&c), 0x5a, sizeof c);
    weft_request_init(&c, WEFT_REQUEST_NULL, nullptr, -1, 0);
    ck_assert_int_eq(
        std::memcmp(static_cast<const void *>(&c), static_cast<const void *>(&cxx), sizeof c), 0);
}
END_TEST

START_TEST(test_datatype_contiguity_and_bytes)
{
    weft_datatype *bytes = weft_datatype_bytes();
    ck_assert_ptr_eq(bytes, weft_datatype_bytes());
    ck_assert_uint_eq(weft_datatype_size(bytes), 1);
    ck_assert(weft_datatype_is_contiguous(bytes, 100));
    weft_datatype *v = derived(vector_layout());
    ck_assert_uint_eq(weft_datatype_size(v), 8);
    ck_assert_int_eq(weft_datatype_extent(v), 12);
    ck_assert(!weft_datatype_is_contiguous(v, 2));
    ck_assert(weft_datatype_is_contiguous(v, 0));
    ck_assert(!weft_datatype_is_contiguous(nullptr, 1));
    weft_datatype_release(v);
}
END_TEST

START_TEST(test_datatype_references)
{
    weft_datatype *child = derived(vector_layout());
    ++child->refs; // the parent's, as make_type takes it
    weft_datatype *parent = derived(vector_layout(), {child});
    weft_datatype_retain(parent);  // a pending message
    weft_datatype_release(parent); // MPI_Type_free: the message still holds it
    ck_assert_int_eq(parent->refs, 1);
    ck_assert_int_eq(child->refs, 2);
    weft_datatype_release(parent); // the message completes: parent goes, and its hold on child
    ck_assert_int_eq(child->refs, 1);
    weft_datatype_release(child);
    // Predefined types are never counted.
    weft_datatype_retain(weft_datatype_bytes());
    weft_datatype_release(weft_datatype_bytes());
    weft_datatype_release(weft_datatype_bytes());
    ck_assert_int_eq(weft_datatype_bytes()->refs, 1);
}
END_TEST

START_TEST(test_convertor_over_datatypes)
{
    // Contiguous: the bytes at buf, no walker.
    std::vector<unsigned char> buf(64);
    for (size_t i = 0; i < buf.size(); ++i)
        buf[i] = (unsigned char)(i * 3 + 1);
    weft_convertor_t cv;
    weft_convertor_state_t st;
    ck_assert_int_eq(weft_convertor_init_datatype(&cv, &st, buf.data(), 10, weft_datatype_bytes()),
                     WEFT_SUCCESS);
    ck_assert_ptr_eq(weft_convertor_contiguous_data(&cv), buf.data());
    ck_assert_uint_eq(cv.size, 10);
    // Non-contiguous: 3 vectors, 24 packed bytes, packed at any offset as the engine packs them.
    weft_datatype *v = derived(vector_layout());
    ck_assert_int_eq(weft_convertor_init_datatype(&cv, &st, buf.data(), 3, v), WEFT_SUCCESS);
    ck_assert_ptr_null(weft_convertor_contiguous_data(&cv));
    ck_assert_uint_eq(cv.size, 24);
    std::vector<unsigned char> ref(24), got(24);
    weft::dt::pack(*v->layout, buf.data(), 3, 0, ref.data(), ref.size());
    weft_convertor_seek(&cv, 5);
    ck_assert_uint_eq(weft_convertor_pack(&cv, got.data() + 5, 11), 11);
    weft_convertor_seek(&cv, 0);
    ck_assert_uint_eq(weft_convertor_pack(&cv, got.data(), 5), 5);
    weft_convertor_seek(&cv, 16);
    ck_assert_uint_eq(weft_convertor_pack(&cv, got.data() + 16, 8), 8);
    ck_assert_uint_eq(weft_convertor_remaining(&cv), 0);
    ck_assert(got == ref);
    // A pack is clamped to what remains.
    std::vector<unsigned char> spare(100);
    weft_convertor_seek(&cv, 20);
    ck_assert_uint_eq(weft_convertor_pack(&cv, spare.data(), spare.size()), 4);
    ck_assert_int_eq(std::memcmp(spare.data(), ref.data() + 20, 4), 0);
    // Unpacking puts them back where they came from, and nowhere else.
    std::vector<unsigned char> back(64, 0);
    ck_assert_int_eq(weft_convertor_init_datatype(&cv, &st, back.data(), 3, v), WEFT_SUCCESS);
    ck_assert_uint_eq(weft_convertor_unpack(&cv, ref.data(), ref.size()), 24);
    for (size_t i = 0; i < 36; ++i)
        ck_assert_uint_eq(back[i], (i % 12 < 4 || i % 12 >= 8) ? buf[i] : 0);
    ck_assert_int_eq(weft_convertor_init_datatype(&cv, &st, buf.data(), 1, nullptr),
                     WEFT_ERR_BAD_PARAM);
    weft_datatype_release(v);
}
END_TEST

START_TEST(test_output)
{
    weft::test::isolate();
    weft_output(WEFT_OUTPUT_WARNING, "coll/%s: %d of %s", "mine", 3, "them");
    ck_assert_int_eq(
        weft::test::count_messages(weft::output::Kind::warning, "coll/mine: 3 of them"), 1);
    ck_assert_int_eq(weft_output_verbosity("no such framework"), 0);
    ck_assert_int_eq(weft_output_verbosity(nullptr), 0);
    weft::output::reset_sink();
}
END_TEST

} // namespace

int main()
{
    Suite *s = suite_create("mpi objects' C face");
    TCase *tc = tcase_create("abi");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_view_is_the_communicator);
    tcase_add_test(tc, test_groups);
    tcase_add_test(tc, test_request_defaults_match_init);
    tcase_add_test(tc, test_datatype_contiguity_and_bytes);
    tcase_add_test(tc, test_datatype_references);
    tcase_add_test(tc, test_convertor_over_datatypes);
    tcase_add_test(tc, test_output);
    suite_add_tcase(s, tc);
    return weft::test::run_suite(s);
}
