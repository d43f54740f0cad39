// Tests for framework/runtime/sha256.cc (FIPS 180-4 and RFC 4231 vectors) and
// framework/runtime/job_secret.cc (where the secret comes from, and what is refused).
#include "check_util.h"
#include "job_secret.h"
#include "sha256.h"

#include <weft/runtime.h>

using namespace weft;

namespace {

std::string hex(const unsigned char *p, size_t n)
{
    static const char d[] = "0123456789abcdef";
    std::string s;
    for (size_t i = 0; i < n; ++i) {
        s += d[p[i] >> 4];
        s += d[p[i] & 15];
    }
    return s;
}

std::string sha(const std::string &m)
{
    unsigned char out[crypto::kSha256Size];
    crypto::sha256(m.data(), m.size(), out);
    return hex(out, sizeof out);
}

std::string hmac(const std::string &k, const std::string &m)
{
    unsigned char out[crypto::kSha256Size];
    crypto::hmac_sha256(k.data(), k.size(), m.data(), m.size(), out);
    return hex(out, sizeof out);
}

std::string secret_hex()
{
    size_t len = 0;
    const unsigned char *k = weft_runtime_job_secret(&len);
    return hex(k, len);
}

const char *kHex = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

START_TEST(test_sha256)
{
    WEFT_ASSERT_STR_EQ(sha(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    WEFT_ASSERT_STR_EQ(sha("abc"),
                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    WEFT_ASSERT_STR_EQ(sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
                       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    // Fed in pieces that straddle the 64-byte blocks.
    const std::string a(1000, 'a');
    crypto::Sha256 s;
    for (size_t i = 0; i < a.size(); i += 7)
        s.update(a.data() + i, std::min<size_t>(7, a.size() - i));
    unsigned char out[crypto::kSha256Size];
    s.finish(out);
    WEFT_ASSERT_STR_EQ(hex(out, sizeof out), sha(a));
}
END_TEST

START_TEST(test_hmac_rfc4231)
{
    WEFT_ASSERT_STR_EQ(hmac(std::string(20, '\x0b'), "Hi There"),
                       "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    WEFT_ASSERT_STR_EQ(hmac("Jefe", "what do ya want for nothing?"),
                       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    // A key longer than a block is hashed first (test case 6).
    WEFT_ASSERT_STR_EQ(
        hmac(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First"),
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    ck_assert(crypto::equal_ct("abcd", "abcd", 4));
    ck_assert(!crypto::equal_ct("abcd", "abce", 4));
}
END_TEST

START_TEST(test_secret_from_launcher)
{
    test::isolate();
    setenv(rt::secret::kEnvVar, kHex, 1);
    setenv(rt::secret::kExpectedVar, "1", 1);
    // Read before the bootstrap (the boot component proves it to mpirun), kept after it.
    ck_assert_int_eq(rt::secret::load_from_launcher(), WEFT_SUCCESS);
    WEFT_ASSERT_STR_EQ(weft_runtime_job_secret_source(), "launcher");
    ck_assert_int_eq(rt::secret::init(nullptr, 1, 4, "pmgr-1234"), WEFT_SUCCESS);
    WEFT_ASSERT_STR_EQ(secret_hex(), kHex);
    WEFT_ASSERT_STR_EQ(weft_runtime_job_secret_source(), "launcher");
    ck_assert_msg(!std::getenv(rt::secret::kEnvVar), "the secret stayed in the environment");
    ck_assert(!std::getenv(rt::secret::kExpectedVar));
    unsigned char mac[WEFT_JOB_MAC_SIZE];
    weft_runtime_job_mac("Hi There", 8, mac);
    unsigned char key[32];
    for (size_t i = 0; i < 32; ++i)
        key[i] = static_cast<unsigned char>(std::stoi(std::string(kHex + 2 * i, 2), nullptr, 16));
    WEFT_ASSERT_STR_EQ(hex(mac, sizeof mac),
                       hmac(std::string(reinterpret_cast<char *>(key), 32), "Hi There"));
}
END_TEST

START_TEST(test_secret_refused)
{
    test::isolate();
    setenv(rt::secret::kEnvVar, "0011zz", 1);
    ck_assert_int_eq(rt::secret::load_from_launcher(), WEFT_ERR_BAD_PARAM);
    ck_assert_int_eq(test::count_messages(output::Kind::error, "is malformed"), 1);
    ck_assert_msg(test::all_messages().find("0011zz") == std::string::npos,
                  "the value was printed: %s", test::all_messages().c_str());
    // mpirun said a secret was due, and the launch agent lost it.
    setenv(rt::secret::kExpectedVar, "1", 1);
    ck_assert_int_eq(rt::secret::init(nullptr, 0, 2, "pmgr-1"), WEFT_ERR_BAD_PARAM);
    ck_assert_int_eq(test::count_messages(output::Kind::error, "did not reach this process"), 1);
}
END_TEST

unsigned char bcast_fill = 0;
weft_status_t fake_bcast(weft_boot_module_t *, void *buf, size_t len, int root)
{
    ck_assert_int_eq(root, 0);
    std::memset(buf, bcast_fill, len);
    return WEFT_SUCCESS;
}

START_TEST(test_secret_without_launcher)
{
    test::isolate();
    unsetenv(rt::secret::kEnvVar);
    // A singleton: random, its own.
    ck_assert_int_eq(rt::secret::init(nullptr, 0, 1, "singleton-9"), WEFT_SUCCESS);
    WEFT_ASSERT_STR_EQ(weft_runtime_job_secret_source(), "singleton");
    const std::string first = secret_hex();
    ck_assert_int_eq(rt::secret::init(nullptr, 0, 1, "singleton-9"), WEFT_SUCCESS);
    ck_assert_msg(secret_hex() != first, "two singletons drew the same secret");
    // PMI: rank 0's, through the KVS (boot_bcast).
    weft_boot_module_t boot{};
    boot.boot_bcast = fake_bcast;
    bcast_fill = 0x5a;
    ck_assert_int_eq(rt::secret::init(&boot, 3, 4, "pmi-77"), WEFT_SUCCESS);
    WEFT_ASSERT_STR_EQ(weft_runtime_job_secret_source(), "pmi");
    std::string expected;
    for (int i = 0; i < 32; ++i)
        expected += "5a";
    WEFT_ASSERT_STR_EQ(secret_hex(), expected);
    // A classic PMGR launcher: derived from the job id (weak), the same in every rank.
    ck_assert_int_eq(rt::secret::init(nullptr, 2, 4, "pmgr-1234"), WEFT_SUCCESS);
    WEFT_ASSERT_STR_EQ(weft_runtime_job_secret_source(), "derived");
    WEFT_ASSERT_STR_EQ(secret_hex(), sha("weft-derived-job-secret:pmgr-1234"));
}
END_TEST

} // namespace

int main()
{
    Suite *s = suite_create("job_secret");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_sha256);
    tcase_add_test(tc, test_hmac_rfc4231);
    tcase_add_test(tc, test_secret_from_launcher);
    tcase_add_test(tc, test_secret_refused);
    tcase_add_test(tc, test_secret_without_launcher);
    suite_add_tcase(s, tc);
    return weft::test::run_suite(s);
}
