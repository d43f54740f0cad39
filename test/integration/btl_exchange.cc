// Every rank sends messages of many sizes to every rank (itself included)
// through the BTLs the selection gives (--mca btl ...), choosing per peer the
// module of highest exclusivity as the BML does, and checks every byte and
// the order per peer. Rank 0 prints one summary line.
//
//   mpirun -np 4 --oversubscribe --mca btl self,sm btl_exchange
//   (the component path must name the built components: WEFT_MCA_mca_base_component_path)
#include "runtime.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr weft_btl_tag_t test_tag = 0x70;

struct Header {
    int32_t src;
    int32_t seq;
    uint32_t len;
};

int me, np;
std::vector<int> next_seq; // per source
size_t received = 0, completions = 0;
std::string failure;

unsigned char pattern(int src, int seq, size_t k)
{
    return static_cast<unsigned char>(src * 13 + seq * 7 + k);
}

void on_recv(weft_btl_module_t *, const weft_btl_recv_descriptor_t *d)
{
    std::string msg;
    for (size_t i = 0; i < d->segment_count; ++i)
        msg.append(static_cast<const char *>(d->segments[i].seg_addr), d->segments[i].seg_len);
    Header h;
    if (msg.size() < sizeof h) {
        failure = "a message shorter than its header";
        return;
    }
    std::memcpy(&h, msg.data(), sizeof h);
    if (h.src < 0 || h.src >= np || msg.size() != sizeof h + h.len) {
        failure = "a message with a bad header (src " + std::to_string(h.src) + ")";
        return;
    }
    if (h.seq != next_seq[size_t(h.src)])
        failure = "from rank " + std::to_string(h.src) + ": message " + std::to_string(h.seq) +
                  " arrived when " + std::to_string(next_seq[size_t(h.src)]) + " was due";
    ++next_seq[size_t(h.src)];
    for (size_t k = 0; k < h.len; ++k)
        if (static_cast<unsigned char>(msg[sizeof h + k]) != pattern(h.src, h.seq, k)) {
            failure = "from rank " + std::to_string(h.src) + ": message " + std::to_string(h.seq) +
                      " byte " + std::to_string(k) + " wrong";
            break;
        }
    ++received;
}

void on_complete(weft_btl_module_t *m, weft_btl_endpoint_t *, weft_btl_descriptor_t *des,
                 weft_status_t status)
{
    if (status != WEFT_SUCCESS)
        failure = std::string("a send completed with ") + weft_status_string(status);
    ++completions;
    if (!(des->des_flags & WEFT_BTL_DES_FLAG_BTL_OWNERSHIP))
        m->btl_free(m, des);
}

int fail(const std::string &what)
{
    std::fprintf(stderr, "btl_exchange rank %d: %s\n", me, what.c_str());
    return 1;
}

} // namespace

int main()
{
    if (weft::rt::init() != WEFT_SUCCESS)
        return fail("runtime init failed");
    me = weft_runtime_world_rank();
    np = weft_runtime_world_size();
    next_seq.assign(size_t(np), 0);
    size_t nmod = 0;
    weft_btl_module_t *const *pub = weft_btl_modules(&nmod);
    const std::vector<weft_btl_module_t *> mods(pub, pub + nmod);
    if (mods.empty())
        return fail("no BTL module");

    std::vector<weft_proc_t *> procs;
    for (int r = 0; r < np; ++r)
        procs.push_back(weft_runtime_proc(r));
    // Per peer: the reaching module of highest exclusivity.
    std::vector<weft_btl_module_t *> via(size_t(np), nullptr);
    std::vector<weft_btl_endpoint_t *> ep(size_t(np), nullptr);
    for (weft_btl_module_t *m : mods) {
        std::vector<weft_btl_endpoint_t *> eps(size_t(np), nullptr);
        std::vector<uint8_t> reach(size_t(np), 0);
        if (m->btl_add_procs(m, procs.data(), size_t(np), eps.data(), reach.data()) != WEFT_SUCCESS)
            return fail("add_procs failed");
        if (m->btl_register(m, test_tag, on_recv, nullptr) != WEFT_SUCCESS)
            return fail("register failed");
        for (int r = 0; r < np; ++r)
            if (reach[size_t(r)] &&
                (!via[size_t(r)] || m->btl_exclusivity > via[size_t(r)]->btl_exclusivity)) {
                via[size_t(r)] = m;
                ep[size_t(r)] = eps[size_t(r)];
            }
    }
    for (int r = 0; r < np; ++r)
        if (!via[size_t(r)])
            return fail("no BTL reaches rank " + std::to_string(r));
    weft::rt::boot()->boot_barrier(weft::rt::boot());

    size_t sent = 0, in_progress = 0;
    for (int dst = 0; dst < np; ++dst) {
        weft_btl_module_t *m = via[size_t(dst)];
        const size_t max = m->btl_max_send_size - sizeof(Header);
        const size_t sizes[] = {0, 1, 7, 100, 1000, 4000, m->btl_eager_limit - sizeof(Header), max};
        int seq = 0;
        for (int round = 0; round < 3; ++round) {
            for (size_t len : sizes) {
                if (len > max)
                    continue;
                weft_btl_descriptor_t *des = nullptr;
                weft_status_t rc;
                while ((rc = m->btl_alloc(m, ep[size_t(dst)], WEFT_BTL_NO_ORDER,
                                          sizeof(Header) + len, 0, &des)) ==
                       WEFT_ERR_OUT_OF_RESOURCE)
                    weft_progress();
                if (rc != WEFT_SUCCESS)
                    return fail(std::string("alloc: ") + weft_status_string(rc));
                Header h{me, seq, uint32_t(len)};
                auto *p = static_cast<unsigned char *>(des->des_segments[0].seg_addr);
                std::memcpy(p, &h, sizeof h);
                for (size_t k = 0; k < len; ++k)
                    p[sizeof h + k] = pattern(me, seq, k);
                des->des_cbfunc = on_complete;
                while ((rc = m->btl_send(m, ep[size_t(dst)], des, test_tag)) ==
                       WEFT_ERR_OUT_OF_RESOURCE)
                    weft_progress();
                if (rc == WEFT_IN_PROGRESS)
                    ++in_progress;
                else if (rc == WEFT_SUCCESS)
                    m->btl_free(m, des);
                else
                    return fail(std::string("send: ") + weft_status_string(rc));
                ++seq;
                ++sent;
            }
        }
    }
    // Every rank sent the same count to each peer.
    const size_t expect = sent; // symmetric: what I sent in all is what I receive in all
    weft::rt::wait_until(
        [&] { return (received >= expect && completions >= in_progress) || !failure.empty(); });
    if (!failure.empty())
        return fail(failure);
    weft::rt::boot()->boot_barrier(weft::rt::boot());
    std::string names;
    for (weft_btl_module_t *m : mods)
        names += (names.empty() ? "" : " ") + std::to_string(m->btl_exclusivity);
    const size_t nmods = mods.size();
    // Where the others run, as the runtime's locality (hwloc) sees it.
    std::string where;
    for (int r = 0; r < np; ++r)
        if (r != me)
            where += " " + std::to_string(r) + "=" +
                     weft_locality_string(weft_proc_locality(weft_runtime_proc(r)));
    weft::rt::finalize();
    if (me == 0)
        std::printf(
            "btl exchange: %d ranks, %zu modules (exclusivity %s), %zu messages each, every "
            "byte and the order right\nlocality from rank 0:%s\n",
            np, nmods, names.c_str(), sent, where.c_str());
    return 0;
}
