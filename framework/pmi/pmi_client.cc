#include "pmi_client.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace weft::pmi {

namespace {

bool env_int(const char *name, int &out)
{
    const char *v = std::getenv(name);
    if (!v || !*v)
        return false;
    char *end = nullptr;
    long l = std::strtol(v, &end, 10);
    if (*end || l < 0 || l > 1 << 30)
        return false;
    out = int(l);
    return true;
}

int connect_port(const std::string &hostport, std::string &error)
{
    auto colon = hostport.rfind(':');
    if (colon == std::string::npos) {
        error = "PMI_PORT '" + hostport + "' is not host:port";
        return -1;
    }
    std::string host = hostport.substr(0, colon), port = hostport.substr(colon + 1);
    addrinfo hints{}, *res = nullptr;
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0 || !res) {
        error = "PMI_PORT '" + hostport + "': cannot resolve " + host;
        return -1;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
        error = "PMI_PORT '" + hostport + "': " + std::strerror(errno);
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

// "cmd=x a=1 b=2" (PMI-1) or "cmd=x;a=1;b=2;" (PMI-2) into fields.
std::map<std::string, std::string> parse_fields(const std::string &text, char sep)
{
    std::map<std::string, std::string> f;
    size_t i = 0;
    while (i < text.size()) {
        size_t end = text.find(sep, i);
        if (end == std::string::npos)
            end = text.size();
        std::string tok = text.substr(i, end - i);
        if (!tok.empty() && tok.back() == '\n')
            tok.pop_back();
        auto eq = tok.find('=');
        if (eq != std::string::npos)
            f[tok.substr(0, eq)] = tok.substr(eq + 1);
        i = end + 1;
    }
    return f;
}

bool rc_ok(const std::map<std::string, std::string> &f)
{
    auto it = f.find("rc");
    return it == f.end() || std::atoi(it->second.c_str()) == 0;
}

std::string rc_text(const std::map<std::string, std::string> &f)
{
    std::string t = "rc=" + (f.count("rc") ? f.at("rc") : std::string("?"));
    for (const char *k : {"msg", "errmsg"})
        if (f.count(k))
            t += " " + std::string(k) + "=" + f.at(k);
    return t;
}

} // namespace

Client::~Client()
{
    if (fd_ >= 0)
        close(fd_);
}

bool Client::available() { return std::getenv("PMI_FD") || std::getenv("PMI_PORT"); }

bool Client::write_all(const std::string &bytes)
{
    size_t off = 0;
    while (off < bytes.size()) {
        ssize_t w = send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        off += size_t(w);
    }
    return true;
}

bool Client::read_exact(size_t n, std::string &out)
{
    while (in_.size() < n) {
        char buf[4096];
        ssize_t r = read(fd_, buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        in_.append(buf, size_t(r));
    }
    out = in_.substr(0, n);
    in_.erase(0, n);
    return true;
}

bool Client::read_line(std::string &line)
{
    size_t nl;
    while ((nl = in_.find('\n')) == std::string::npos) {
        char buf[4096];
        ssize_t r = read(fd_, buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        in_.append(buf, size_t(r));
    }
    line = in_.substr(0, nl);
    in_.erase(0, nl + 1);
    return true;
}

weft_status_t Client::command1(const std::string &request, const std::string &reply_cmd,
                               Fields &reply, std::string &error)
{
    std::string line;
    if (!write_all(request + "\n") || !read_line(line)) {
        error = "the PMI server closed the connection (request: " + request + ")";
        return WEFT_ERR_UNREACH;
    }
    reply = parse_fields(line, ' ');
    if (reply["cmd"] != reply_cmd) {
        error = "PMI server answered '" + line + "' to '" + request + "'";
        return WEFT_ERR_BAD_HEADER;
    }
    return WEFT_SUCCESS;
}

weft_status_t Client::command2(const std::string &request, const std::string &reply_cmd,
                               Fields &reply, std::string &error)
{
    char len[8];
    std::snprintf(len, sizeof len, "%6d", int(request.size()));
    std::string prefix, body;
    if (!write_all(len + request) || !read_exact(6, prefix)) {
        error = "the PMI server closed the connection (request: " + request + ")";
        return WEFT_ERR_UNREACH;
    }
    char *end = nullptr;
    long n = std::strtol(prefix.c_str(), &end, 10);
    if (n < 0 || n > 999999 || !read_exact(size_t(n), body)) {
        error = "PMI server sent a bad length prefix '" + prefix + "'";
        return WEFT_ERR_BAD_HEADER;
    }
    reply = parse_fields(body, ';');
    if (reply["cmd"] != reply_cmd) {
        error = "PMI server answered '" + body + "' to '" + request + "'";
        return WEFT_ERR_BAD_HEADER;
    }
    return WEFT_SUCCESS;
}

weft_status_t Client::command(const std::string &cmd1, const std::string &cmd2,
                              const std::string &reply1, const std::string &reply2, Fields &reply,
                              std::string &error)
{
    weft_status_t rc =
        version_ == 2 ? command2(cmd2, reply2, reply, error) : command1(cmd1, reply1, reply, error);
    if (rc == WEFT_SUCCESS && !rc_ok(reply)) {
        error = "PMI " + (version_ == 2 ? cmd2 : cmd1) + " failed: " + rc_text(reply);
        return WEFT_ERROR;
    }
    return rc;
}

weft_status_t Client::init(int version, std::string &error)
{
    int id = -1;
    if (env_int("PMI_FD", fd_)) {
        env_int("PMI_RANK", rank_);
        env_int("PMI_SIZE", size_);
    } else if (const char *port = std::getenv("PMI_PORT")) {
        fd_ = connect_port(port, error);
        if (fd_ < 0)
            return WEFT_ERR_UNREACH;
        if (env_int("PMI_ID", id)) {
            std::string line;
            if (!write_all("cmd=initack pmiid=" + std::to_string(id) + "\n")) {
                error = "PMI initack could not be sent";
                return WEFT_ERR_UNREACH;
            }
            for (int i = 0; i < 4; ++i) {
                if (!read_line(line)) {
                    error = "the PMI server closed the connection during initack";
                    return WEFT_ERR_UNREACH;
                }
                Fields f = parse_fields(line, ' ');
                if (f.count("size"))
                    size_ = std::atoi(f["size"].c_str());
                if (f.count("rank"))
                    rank_ = std::atoi(f["rank"].c_str());
            }
        }
    } else {
        error = "neither PMI_FD nor PMI_PORT is set";
        return WEFT_ERR_NOT_AVAILABLE;
    }
    version_ = version ? version : (std::getenv("PMI_JOBID") ? 2 : 1);
    if (version_ != 1 && version_ != 2) {
        error = "PMI version " + std::to_string(version) + " is not 1 or 2";
        return WEFT_ERR_BAD_PARAM;
    }
    Fields f;
    const std::string hello = version_ == 2 ? "cmd=init pmi_version=2 pmi_subversion=0"
                                            : "cmd=init pmi_version=1 pmi_subversion=1";
    if (weft_status_t rc = command1(hello, "response_to_init", f, error); rc != WEFT_SUCCESS)
        return rc;
    if (!rc_ok(f)) {
        error = "the PMI server refused PMI-" + std::to_string(version_) + ": " + rc_text(f);
        return WEFT_ERR_NOT_SUPPORTED;
    }
    if (version_ == 2) {
        const char *jobid = std::getenv("PMI_JOBID");
        std::string req = "cmd=fullinit;pmijobid=" + std::string(jobid ? jobid : "") +
                          ";pmirank=" + std::to_string(id >= 0 ? id : rank_) + ";threaded=FALSE;";
        if (weft_status_t rc = command2(req, "fullinit-response", f, error); rc != WEFT_SUCCESS)
            return rc;
        if (!rc_ok(f)) {
            error = "PMI-2 fullinit failed: " + rc_text(f);
            return WEFT_ERROR;
        }
        rank_ = std::atoi(f["rank"].c_str());
        size_ = std::atoi(f["size"].c_str());
        if (weft_status_t rc = command2("cmd=job-getid;", "job-getid-response", f, error);
            rc != WEFT_SUCCESS)
            return rc;
        jobid_ = f["jobid"];
    } else {
        if (weft_status_t rc = command1("cmd=get_my_kvsname", "my_kvsname", f, error);
            rc != WEFT_SUCCESS)
            return rc;
        kvsname_ = jobid_ = f["kvsname"];
    }
    if (size_ <= 0 || rank_ < 0 || rank_ >= size_) {
        error = "PMI gave rank " + std::to_string(rank_) + " of size " + std::to_string(size_);
        return WEFT_ERR_BAD_PARAM;
    }
    return WEFT_SUCCESS;
}

weft_status_t Client::put(const std::string &key, const std::string &value, std::string &error)
{
    Fields f;
    return command("cmd=put kvsname=" + kvsname_ + " key=" + key + " value=" + value,
                   "cmd=kvs-put;key=" + key + ";value=" + value + ";", "put_result",
                   "kvs-put-response", f, error);
}

weft_status_t Client::fence(std::string &error)
{
    Fields f;
    return command("cmd=barrier_in", "cmd=kvs-fence;", "barrier_out", "kvs-fence-response", f,
                   error);
}

weft_status_t Client::get(const std::string &key, std::string &value, std::string &error)
{
    Fields f;
    weft_status_t rc;
    if (version_ == 2) {
        rc = command2("cmd=kvs-get;jobid=" + jobid_ + ";srcid=-1;key=" + key + ";",
                      "kvs-get-response", f, error);
        if (rc == WEFT_SUCCESS && f["found"] != "TRUE")
            rc = WEFT_ERR_NOT_FOUND;
    } else {
        rc = command1("cmd=get kvsname=" + kvsname_ + " key=" + key, "get_result", f, error);
        if (rc == WEFT_SUCCESS && !rc_ok(f))
            rc = WEFT_ERR_NOT_FOUND;
    }
    if (rc == WEFT_ERR_NOT_FOUND)
        error = "PMI has no key " + key;
    if (rc == WEFT_SUCCESS)
        value = f["value"];
    return rc;
}

weft_status_t Client::abort(int code, const std::string &message)
{
    if (fd_ < 0)
        return WEFT_ERR_UNREACH;
    std::string msg = message;
    for (char &c : msg)
        if (c == ';' || c == ' ' || c == '\n')
            c = '_';
    bool ok;
    if (version_ == 2) {
        std::string body = "cmd=abort;isworld=TRUE;msg=" + msg + ";";
        char len[8];
        std::snprintf(len, sizeof len, "%6d", int(body.size()));
        ok = write_all(len + body);
    } else {
        ok = write_all("cmd=abort exitcode=" + std::to_string(code) + "\n");
    }
    return ok ? WEFT_SUCCESS : WEFT_ERR_UNREACH;
}

weft_status_t Client::finalize()
{
    if (fd_ < 0)
        return WEFT_SUCCESS;
    Fields f;
    std::string error;
    weft_status_t rc =
        command("cmd=finalize", "cmd=finalize;", "finalize_ack", "finalize-response", f, error);
    close(fd_);
    fd_ = -1;
    return rc;
}

namespace {

// 500 bytes per chunk: 1000 hex digits, under every server's value limit.
constexpr size_t chunk_bytes = 500;

std::string hex(const unsigned char *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    std::string out(n * 2, '0');
    for (size_t i = 0; i < n; ++i) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    return out;
}

bool unhex(const std::string &s, unsigned char *out, size_t n)
{
    if (s.size() != 2 * n)
        return false;
    auto val = [](char c) {
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    };
    for (size_t i = 0; i < n; ++i) {
        int hi = val(s[2 * i]), lo = val(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        out[i] = static_cast<unsigned char>(hi << 4 | lo);
    }
    return true;
}

std::string key_of(int epoch, int rank, size_t chunk)
{
    return "weft" + std::to_string(epoch) + "-" + std::to_string(rank) + "-" +
           std::to_string(chunk);
}

weft_status_t put_chunks(Client &pmi, int epoch, const unsigned char *data, size_t len,
                         std::string &error)
{
    for (size_t c = 0, off = 0; off < len || c == 0; ++c, off += chunk_bytes) {
        size_t n = std::min(chunk_bytes, len - off);
        if (weft_status_t rc = pmi.put(key_of(epoch, pmi.rank(), c), hex(data + off, n), error);
            rc != WEFT_SUCCESS)
            return rc;
        if (len == 0)
            break;
    }
    return WEFT_SUCCESS;
}

weft_status_t get_chunks(Client &pmi, int epoch, int rank, unsigned char *data, size_t len,
                         std::string &error)
{
    for (size_t c = 0, off = 0; off < len || c == 0; ++c, off += chunk_bytes) {
        size_t n = std::min(chunk_bytes, len - off);
        std::string v;
        if (weft_status_t rc = pmi.get(key_of(epoch, rank, c), v, error); rc != WEFT_SUCCESS)
            return rc;
        if (!unhex(v, data + off, n)) {
            error = "PMI value of rank " + std::to_string(rank) + " is not the expected " +
                    std::to_string(n) + " bytes of hex";
            return WEFT_ERR_BAD_HEADER;
        }
        if (len == 0)
            break;
    }
    return WEFT_SUCCESS;
}

} // namespace

weft_status_t kvs_allgather(Client &pmi, int epoch, const void *in, void *out, size_t len_per_rank,
                            std::string &error)
{
    auto *dst = static_cast<unsigned char *>(out);
    if (weft_status_t rc =
            put_chunks(pmi, epoch, static_cast<const unsigned char *>(in), len_per_rank, error);
        rc != WEFT_SUCCESS)
        return rc;
    if (weft_status_t rc = pmi.fence(error); rc != WEFT_SUCCESS)
        return rc;
    for (int r = 0; r < pmi.size(); ++r)
        if (weft_status_t rc =
                get_chunks(pmi, epoch, r, dst + size_t(r) * len_per_rank, len_per_rank, error);
            rc != WEFT_SUCCESS)
            return rc;
    return WEFT_SUCCESS;
}

weft_status_t kvs_bcast(Client &pmi, int epoch, void *buf, size_t len, int root, std::string &error)
{
    auto *p = static_cast<unsigned char *>(buf);
    if (pmi.rank() == root)
        if (weft_status_t rc = put_chunks(pmi, epoch, p, len, error); rc != WEFT_SUCCESS)
            return rc;
    if (weft_status_t rc = pmi.fence(error); rc != WEFT_SUCCESS)
        return rc;
    return pmi.rank() == root ? WEFT_SUCCESS : get_chunks(pmi, epoch, root, p, len, error);
}

} // namespace weft::pmi
