// A process outside the job that knocks on a rank's btl/tcp listener, for btl_tcp_hostile.sh.
//
//   btl_tcp_intruder PORT MODE [JOBID SRC DST MAX_SEND_SIZE [SECRET_HEX]]
//
// connects to 127.0.0.1:PORT and sends, by MODE:
//   garbage            text that is no Weft handshake
//   frame-data, frame-ack, frame-bye, frame-unknown, frame-huge
//                      a btl/tcp frame header of that type (a huge DATA length for frame-huge)
//                      where the handshake belongs
//   short              the first 5 bytes of a hello, then it closes
//   v1                 a wire-version-1 hello as rank SRC to rank DST, with the job field
//                      computed from JOBID as version 1 did (FNV-1a): all a stranger needed
//   spoof              a version-2 hello as rank SRC, after the acceptor's greeting, with a MAC
//                      keyed with SECRET_HEX if given (an insider that read the secret), else
//                      with a key of its own; then frames of every type
//   replay             (needs SECRET_HEX) a correct hello for one connection's greeting,
//                      replayed on a second connection: what a sniffer could do
// and prints one line: what came back ("closed", "reply kind K", ...). Exits 0 unless it could
// not connect. Every read waits at most 20 s (the rank may be asleep in the test).
#include "btl/tcp/btl_tcp_wire.h"
#include "sha256.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace wire = weft::btl::tcp::wire;

namespace {

int connect_to(int port)
{
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(uint16_t(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
        std::perror("btl_tcp_intruder: connect");
        std::exit(2);
    }
    return fd;
}

void send_all(int fd, const void *p, size_t n)
{
    const auto *b = static_cast<const unsigned char *>(p);
    while (n > 0) {
        const ssize_t r = send(fd, b, n, MSG_NOSIGNAL);
        if (r <= 0)
            return; // the rank closed: what the caller reports anyway
        b += r;
        n -= size_t(r);
    }
}

// Read exactly n bytes; false if the peer closed or 20 s passed first.
bool read_n(int fd, unsigned char *p, size_t n)
{
    while (n > 0) {
        pollfd pfd{fd, POLLIN, 0};
        if (poll(&pfd, 1, 20000) <= 0)
            return false;
        const ssize_t r = recv(fd, p, n, 0);
        if (r <= 0)
            return false;
        p += r;
        n -= size_t(r);
    }
    return true;
}

// What the rank did after our bytes: closed (what a drop looks like) or kept the connection.
const char *outcome(int fd)
{
    unsigned char b[256];
    for (;;) { // a greeting may come first
        pollfd pfd{fd, POLLIN, 0};
        if (poll(&pfd, 1, 20000) <= 0)
            return "still open after 20 s";
        if (recv(fd, b, sizeof b, 0) <= 0)
            return "closed";
    }
}

uint64_t fnv1a(const std::string &s)
{
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s)
        h = (h ^ c) * 1099511628211ull;
    return h;
}

void frame(int fd, uint8_t magic, uint8_t type, uint32_t len)
{
    unsigned char h[wire::kFrameHeaderSize];
    wire::FrameHeader f;
    f.magic = magic;
    f.type = type;
    f.length = len;
    wire::encode(f, h);
    send_all(fd, h, sizeof h);
}

void frames_of_every_type(int fd)
{
    frame(fd, wire::kFrameMagic, wire::kData, 8);
    send_all(fd, "12345678", 8);
    frame(fd, wire::kFrameMagic, wire::kAck, 0);
    frame(fd, wire::kFrameMagic, wire::kBye, 0);
    frame(fd, wire::kFrameMagic, 77, 0);
    frame(fd, 0x5a, wire::kData, 0xffffffffu);
}

bool parse_hex(const char *s, unsigned char *out, size_t n)
{
    if (std::strlen(s) != 2 * n)
        return false;
    for (size_t i = 0; i < n; ++i) {
        unsigned v = 0;
        if (std::sscanf(s + 2 * i, "%2x", &v) != 1)
            return false;
        out[i] = static_cast<unsigned char>(v);
    }
    return true;
}

struct Claim {
    std::string jobid;
    uint32_t src = 0, dst = 0, max_send = 0;
    unsigned char key[32] = {};
};

// Our version-2 hello for the greeting g, its MAC keyed with claim.key.
void make_hello(const Claim &cl, const unsigned char *g, unsigned char *out)
{
    wire::Hello h;
    h.job = fnv1a(cl.jobid);
    h.src_rank = cl.src;
    h.dst_rank = cl.dst;
    h.max_send_size = cl.max_send;
    for (size_t i = 0; i < wire::kNonceSize; ++i)
        h.nonce[i] = static_cast<unsigned char>(std::rand());
    wire::encode(h, out);
    unsigned char in[wire::kMacInputMax];
    size_t n = 0;
    std::memcpy(in, wire::kHelloLabel, wire::kLabelSize);
    n += wire::kLabelSize;
    std::memcpy(in + n, g, wire::kGreetingSize);
    n += wire::kGreetingSize;
    std::memcpy(in + n, out, wire::kHelloFieldsSize);
    n += wire::kHelloFieldsSize;
    weft::crypto::hmac_sha256(cl.key, sizeof cl.key, in, n, out + wire::kHelloFieldsSize);
}

void print_reply(int fd)
{
    unsigned char r[wire::kHelloSize];
    if (read_n(fd, r, sizeof r))
        std::printf("reply kind %u\n", wire::get16(r + 6));
    else
        std::printf("closed\n");
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 3) {
        std::fprintf(stderr, "usage: btl_tcp_intruder PORT MODE [JOBID SRC DST MAX_SEND "
                             "[SECRET_HEX]]\n");
        return 1;
    }
    const int port = std::atoi(argv[1]);
    const std::string mode = argv[2];
    Claim cl;
    bool have_secret = false;
    if (argc >= 7) {
        cl.jobid = argv[3];
        cl.src = uint32_t(std::strtoul(argv[4], nullptr, 10));
        cl.dst = uint32_t(std::strtoul(argv[5], nullptr, 10));
        cl.max_send = uint32_t(std::strtoul(argv[6], nullptr, 10));
    }
    std::srand(unsigned(getpid()));
    if (argc >= 8)
        have_secret = parse_hex(argv[7], cl.key, sizeof cl.key);
    else
        for (unsigned char &b : cl.key)
            b = static_cast<unsigned char>(std::rand());

    const int fd = connect_to(port);
    if (mode == "garbage") {
        const char text[] = "GET / HTTP/1.0\r\nHost: rank\r\n\r\n";
        send_all(fd, text, sizeof text - 1);
    } else if (mode == "frame-data") {
        frame(fd, wire::kFrameMagic, wire::kData, 8);
    } else if (mode == "frame-ack") {
        frame(fd, wire::kFrameMagic, wire::kAck, 0);
    } else if (mode == "frame-bye") {
        frame(fd, wire::kFrameMagic, wire::kBye, 0);
    } else if (mode == "frame-unknown") {
        frame(fd, wire::kFrameMagic, 77, 0);
    } else if (mode == "frame-huge") {
        frame(fd, wire::kFrameMagic, wire::kData, 0xffffffffu);
    } else if (mode == "short") {
        const unsigned char b[5] = {0x57, 0x54, 0x43, 0x50, 0};
        send_all(fd, b, sizeof b);
        close(fd);
        std::printf("sent 5 bytes and closed\n");
        return 0;
    } else if (mode == "v1") {
        unsigned char h[32] = {};
        wire::put32(h, wire::kHelloMagic);
        wire::put16(h + 4, 1);
        wire::put16(h + 6, wire::kHello);
        wire::put64(h + 8, fnv1a(cl.jobid));
        wire::put32(h + 16, cl.src);
        wire::put32(h + 20, cl.dst);
        wire::put32(h + 28, cl.max_send);
        send_all(fd, h, sizeof h);
    } else if (mode == "spoof" || mode == "replay") {
        unsigned char g[wire::kGreetingSize];
        if (!read_n(fd, g, sizeof g)) {
            std::printf("no greeting\n");
            return 0;
        }
        if (mode == "replay") {
            if (!have_secret) {
                std::fprintf(stderr, "btl_tcp_intruder: replay needs the secret\n");
                return 1;
            }
            // A correct hello for this connection, never sent on it: sent on a second one.
            unsigned char h[wire::kHelloSize];
            make_hello(cl, g, h);
            const int fd2 = connect_to(port);
            unsigned char g2[wire::kGreetingSize];
            if (!read_n(fd2, g2, sizeof g2)) {
                std::printf("no greeting on the second connection\n");
                return 0;
            }
            send_all(fd2, h, sizeof h);
            print_reply(fd2);
            close(fd2);
            close(fd);
            return 0;
        }
        unsigned char h[wire::kHelloSize];
        make_hello(cl, g, h);
        send_all(fd, h, sizeof h);
        frames_of_every_type(fd);
        print_reply(fd);
        close(fd);
        return 0;
    } else {
        std::fprintf(stderr, "btl_tcp_intruder: unknown mode %s\n", mode.c_str());
        return 1;
    }
    std::printf("%s\n", outcome(fd));
    close(fd);
    return 0;
}
