// SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104), for the job secret's challenge and response.
// Self-contained on purpose: no crypto library is among Weft's dependencies, and these two
// functions are all the authentication needs. Not for bulk data (it is a plain portable
// implementation); a handshake hashes a few hundred bytes.
#ifndef WEFT_RUNTIME_SHA256_H
#define WEFT_RUNTIME_SHA256_H

#include <cstddef>
#include <cstdint>

namespace weft::crypto {

constexpr size_t kSha256Size = 32;

class Sha256 {
  public:
    Sha256();
    void update(const void *data, size_t len);
    void finish(unsigned char out[kSha256Size]);

  private:
    void block(const unsigned char *p);
    uint32_t h_[8];
    unsigned char buf_[64];
    size_t buf_len_ = 0;
    uint64_t total_ = 0;
};

void sha256(const void *data, size_t len, unsigned char out[kSha256Size]);
void hmac_sha256(const void *key, size_t key_len, const void *data, size_t len,
                 unsigned char out[kSha256Size]);
// Equal without a data-dependent early exit, so that timing does not tell how much of a
// forged MAC was right.
bool equal_ct(const void *a, const void *b, size_t len);

} // namespace weft::crypto

#endif
