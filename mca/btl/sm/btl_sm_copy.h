// btl/sm: how the sender writes the pipeline's fragments into its shared pool.
//
// With ordinary (cached) stores the fragment's lines sit modified in the sender's cache, and
// the receiver's copy fetches each one from there: fast when the two processes share a core's
// caches, and several times slower when they run on cores that only meet through a far
// interconnect, which on a virtual machine can change from run to run and within one (measured
// in docs/performance.md: 7.3 GB/s, then 1.9 GB/s in the same process pair). Streaming
// (non-temporal) stores send the lines to memory and leave no modified copy behind, so the
// receiver reads from memory at the same rate wherever the processes sit, at the price of the
// shared-cache case. Which is faster depends on the host and the size: the calibration times
// both (btl_sm_calibrate.h) and btl_sm_pool_stores can force either.
#ifndef WEFT_BTL_SM_COPY_H
#define WEFT_BTL_SM_COPY_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <emmintrin.h>
#endif

namespace weft::btl::sm {

// memcpy of n bytes to dst with streaming stores where the CPU has them (x86-64: SSE2's
// movntdq, part of the base instruction set), ordered before any later store: a ring entry
// that hands the fragment over is published after all of its bytes. Elsewhere: memcpy.
inline void stream_copy(void *dst, const void *src, size_t n)
{
#if defined(__x86_64__)
    auto *d = static_cast<char *>(dst);
    const auto *s = static_cast<const char *>(src);
    const size_t head = std::min(n, size_t((16 - (reinterpret_cast<uintptr_t>(d) & 15)) & 15));
    std::memcpy(d, s, head);
    d += head;
    s += head;
    n -= head;
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i + 16));
        const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i + 32));
        const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i + 48));
        _mm_stream_si128(reinterpret_cast<__m128i *>(d + i), a);
        _mm_stream_si128(reinterpret_cast<__m128i *>(d + i + 16), b);
        _mm_stream_si128(reinterpret_cast<__m128i *>(d + i + 32), c);
        _mm_stream_si128(reinterpret_cast<__m128i *>(d + i + 48), e);
    }
    std::memcpy(d + i, s + i, n - i);
    _mm_sfence();
#else
    std::memcpy(dst, src, n);
#endif
}

// Ask for the cache line at p with the intent to write it (x86-64: PREFETCHW; elsewhere the
// compiler's write prefetch), without waiting for it. Only where can_prefetch_for_write():
// on an x86-64 without PREFETCHW the compiler's fallback is a read prefetch, which fetches a
// shared copy that a store must then upgrade, and measured slower than nothing.
inline void prefetch_for_write(const void *p)
{
#if defined(__x86_64__)
    asm volatile("prefetchw %0" : : "m"(*static_cast<const char *>(p)));
#else
    __builtin_prefetch(p, 1);
#endif
}

// Whether prefetch_for_write asks for ownership on this CPU (x86-64: CPUID's 3DNowPrefetch
// bit, which every AMD64 CPU and Intel's since Broadwell have). Elsewhere false: the claims
// were measured on x86-64 only (btl_sm_claim_ahead).
inline bool can_prefetch_for_write()
{
#if defined(__x86_64__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid(0x80000001u, &a, &b, &c, &d) && (c & (1u << 8));
#else
    return false;
#endif
}

// Whether stream_copy uses streaming stores on this build.
constexpr bool kHasStreamingStores =
#if defined(__x86_64__)
    true;
#else
    false;
#endif

} // namespace weft::btl::sm

#endif
