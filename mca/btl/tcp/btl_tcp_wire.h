// btl/tcp wire format: the connection handshake and the frame header (README.md draws them).
// Every multi-byte field is big-endian and read byte by byte, so neither side's struct layout
// or alignment matters.
#ifndef WEFT_BTL_TCP_WIRE_H
#define WEFT_BTL_TCP_WIRE_H

#include <cstddef>
#include <cstdint>

namespace weft::btl::tcp::wire {

inline void put16(unsigned char *p, uint16_t v)
{
    p[0] = uint8_t(v >> 8);
    p[1] = uint8_t(v);
}
inline void put32(unsigned char *p, uint32_t v)
{
    put16(p, uint16_t(v >> 16));
    put16(p + 2, uint16_t(v));
}
inline void put64(unsigned char *p, uint64_t v)
{
    put32(p, uint32_t(v >> 32));
    put32(p + 4, uint32_t(v));
}
inline uint16_t get16(const unsigned char *p) { return uint16_t(p[0] << 8 | p[1]); }
inline uint32_t get32(const unsigned char *p) { return uint32_t(get16(p)) << 16 | get16(p + 2); }
inline uint64_t get64(const unsigned char *p) { return uint64_t(get32(p)) << 32 | get32(p + 4); }

// ---- handshake: greeting, hello, reply, when a connection opens ---------------------------
//
// The acceptor speaks first: a greeting with its nonce. The connector answers with its hello,
// which carries its own nonce and a MAC (HMAC-SHA-256 keyed with the job's secret) over the
// greeting and the hello; the acceptor answers with its reply, whose MAC covers the greeting,
// the whole hello and the reply. Each side so proves that it knows the secret, over nonces it
// has not chosen alone: a sniffed handshake replays nowhere (README.md, docs/security.md).

constexpr uint32_t kHelloMagic = 0x57544350u; // "WTCP"
constexpr uint16_t kVersion = 2;
constexpr size_t kNonceSize = 16;
constexpr size_t kMacSize = 32;
constexpr size_t kGreetingSize = 24;                       // magic, version, kind, nonce
constexpr size_t kHelloFieldsSize = 48;                    // what the MAC follows
constexpr size_t kHelloSize = kHelloFieldsSize + kMacSize; // hello and reply
constexpr size_t kPrefixSize = 8; // magic and version: enough to tell a stranger early

// What the MACs cover, in this order (the labels keep a hello's MAC from passing as a reply's).
constexpr char kHelloLabel[] = "weft btl/tcp hello"; // + greeting + hello fields
constexpr char kReplyLabel[] = "weft btl/tcp reply"; // + greeting + hello + reply fields
constexpr size_t kLabelSize = sizeof kHelloLabel - 1;
static_assert(sizeof kReplyLabel == sizeof kHelloLabel);
constexpr size_t kMacInputMax = kLabelSize + kGreetingSize + kHelloSize + kHelloFieldsSize;

enum HelloKind : uint16_t {
    kHello = 1,      // connector -> acceptor: who I am, whom I want
    kAccept = 2,     // acceptor -> connector: this connection carries the endpoint's frames
    kRejectRace = 3, // both connected at once; the one opened by the lower rank is kept
    kReject = 4,     // no such endpoint, endpoint failed, or the limits differ
    kGreeting = 5    // acceptor -> connector, first: its nonce
};

struct Greeting {
    uint32_t magic = kHelloMagic;
    uint16_t version = kVersion;
    uint16_t kind = kGreeting;
    unsigned char nonce[kNonceSize] = {};
};

inline void encode(const Greeting &g, unsigned char *p)
{
    put32(p, g.magic);
    put16(p + 4, g.version);
    put16(p + 6, g.kind);
    for (size_t i = 0; i < kNonceSize; ++i)
        p[8 + i] = g.nonce[i];
}

inline Greeting decode_greeting(const unsigned char *p)
{
    Greeting g;
    g.magic = get32(p);
    g.version = get16(p + 4);
    g.kind = get16(p + 6);
    for (size_t i = 0; i < kNonceSize; ++i)
        g.nonce[i] = p[8 + i];
    return g;
}

struct Hello {
    uint32_t magic = kHelloMagic;
    uint16_t version = kVersion;
    uint16_t kind = kHello;
    uint64_t job = 0; // hash of the job id: tells another job's process apart (proves nothing)
    uint32_t src_rank = 0;
    uint32_t dst_rank = 0;
    uint16_t src_module = 0; // index of the sender's module (its interface) in its modex list
    uint16_t dst_module = 0;
    uint32_t max_send_size = 0;           // both sides must agree (btl_tcp_max_send_size)
    unsigned char nonce[kNonceSize] = {}; // hello: the connector's; reply: zero
    unsigned char mac[kMacSize] = {};     // filled in by the sender, after encode
};

// The fields (kHelloFieldsSize bytes); the MAC goes at p + kHelloFieldsSize.
inline void encode(const Hello &h, unsigned char *p)
{
    put32(p, h.magic);
    put16(p + 4, h.version);
    put16(p + 6, h.kind);
    put64(p + 8, h.job);
    put32(p + 16, h.src_rank);
    put32(p + 20, h.dst_rank);
    put16(p + 24, h.src_module);
    put16(p + 26, h.dst_module);
    put32(p + 28, h.max_send_size);
    for (size_t i = 0; i < kNonceSize; ++i)
        p[32 + i] = h.nonce[i];
}

inline Hello decode_hello(const unsigned char *p)
{
    Hello h;
    h.magic = get32(p);
    h.version = get16(p + 4);
    h.kind = get16(p + 6);
    h.job = get64(p + 8);
    h.src_rank = get32(p + 16);
    h.dst_rank = get32(p + 20);
    h.src_module = get16(p + 24);
    h.dst_module = get16(p + 26);
    h.max_send_size = get32(p + 28);
    for (size_t i = 0; i < kNonceSize; ++i)
        h.nonce[i] = p[32 + i];
    for (size_t i = 0; i < kMacSize; ++i)
        h.mac[i] = p[kHelloFieldsSize + i];
    return h;
}

// ---- frames: everything after the handshake ----------------------------------------------

constexpr uint8_t kFrameMagic = 0xa5;
constexpr size_t kFrameHeaderSize = 16;
// Payloads are padded so that every header, and so every payload, starts 8-byte aligned in
// the receive buffer: the PML reads its headers in place.
constexpr size_t kFrameAlign = 8;

enum FrameType : uint8_t {
    kData = 1, // an active message for `tag`; numbered by seq
    kAck = 2,  // only the ack field
    kBye = 3   // the sender releases the endpoint; nothing follows
};

struct FrameHeader {
    uint8_t magic = kFrameMagic;
    uint8_t type = kData;
    uint8_t tag = 0;
    uint8_t flags = 0;   // zero in version 1
    uint32_t length = 0; // payload bytes, padding excluded
    uint32_t seq = 0;    // data frames: 0, 1, 2... per direction; others: 0
    uint32_t ack = 0;    // data frames the sender of this frame has received so far
};

inline void encode(const FrameHeader &h, unsigned char *p)
{
    p[0] = h.magic;
    p[1] = h.type;
    p[2] = h.tag;
    p[3] = h.flags;
    put32(p + 4, h.length);
    put32(p + 8, h.seq);
    put32(p + 12, h.ack);
}

inline FrameHeader decode_frame_header(const unsigned char *p)
{
    FrameHeader h;
    h.magic = p[0];
    h.type = p[1];
    h.tag = p[2];
    h.flags = p[3];
    h.length = get32(p + 4);
    h.seq = get32(p + 8);
    h.ack = get32(p + 12);
    return h;
}

constexpr size_t padded(size_t len) { return (len + kFrameAlign - 1) & ~(kFrameAlign - 1); }
constexpr size_t frame_size(size_t len) { return kFrameHeaderSize + padded(len); }

// ---- modex: the list of a process's modules, published as "btl.tcp" ------------------------

constexpr uint32_t kModexMagic = 0x5754434du; // "WTCM"
constexpr size_t kModexHeaderSize = 8;        // magic u32, version u16, count u16
constexpr size_t kModexEntrySize = 32;        // name[16], addr u32, mask u32, port u16,
                                              // flags u16, reserved u32
constexpr size_t kIfNameSize = 16;
constexpr uint16_t kAddrLoopback = 1;

} // namespace weft::btl::tcp::wire

#endif
