/*
 * pmgr_raw_client.c - a PMGR_COLLECTIVE protocol-8 task that talks only to
 * mpirun (it never builds the tree), for wire-conformance tests of mpirun.
 *
 * Written from docs/protocols/pmgr-collective-wire.md only (sections 1.1,
 * 1.4, 2.2, 4.2, 5).  It does not use Weft's implementation.
 *
 * Wire facts used: every integer is a raw host-order 4-byte int; handshake
 * is "int 8, int rank" with no reply; opcodes CLOSE 1, BARRIER 3, BCAST 4,
 * GATHER 5, SCATTER 6, ALLGATHER 7, ALLTOALL 8; a 1-task job never connects;
 * an abort message is a new connection carrying "int code, int rank,
 * int len, len bytes (message including its NUL)".
 *
 * Environment: MPIRUN_RANK, MPIRUN_NPROCS (required), MPIRUN_HOST (dotted
 * quad or host name) and MPIRUN_PORT (required when a connection is made),
 * PMGR_TEST_TIMEOUT (seconds, default 60), PMGR_FAULT_RANK (default 1;
 * 0 when MPIRUN_NPROCS is 1),
 * PMGR_FAULT_LINGER (seconds the misbehaving rank waits for mpirun to drop
 * it before exiting 3, default 5).
 *
 * Sequence (N > 1, every rank):
 *   handshake; BARRIER (reply must be int 3); BCAST root 0 (13 bytes);
 *   BCAST root N-1 (13); GATHER root 0 (7); GATHER root N-1 (7);
 *   SCATTER root 0 (5); SCATTER root N-1 (5); ALLGATHER (9); ALLTOALL (3);
 *   ALLGATHER (0 bytes); CLOSE; then a short check (<= 1 s) that mpirun
 *   sends no stray bytes after CLOSE (EOF or silence are both fine).
 *   That is 10 collective rounds plus the CLOSE round.
 *
 * Data pattern: byte k of a block sent by rank src for rank dst in the
 * collective with salt S is
 *       P(S, src, dst, k) = (unsigned char)(S + 31*src + 7*dst + k)
 *   BCAST root r       salt 0x10 (root 0) / 0x20 (root N-1): P(S, r, 0, k)
 *   GATHER root r      salt 0x30 / 0x40: rank i sends P(S, i, r, k); the
 *                      root checks block s == P(S, s, r, k)
 *   SCATTER root r     salt 0x50 / 0x60: root block j = P(S, r, j, k); rank i
 *                      checks P(S, r, i, k)
 *   ALLGATHER          salt 0x70: rank i sends P(S, i, 0, k); everybody
 *                      checks block s == P(S, s, 0, k)
 *   ALLTOALL           salt 0x80: block j of rank i = P(S, i, j, k); rank
 *                      "me" checks block s == P(S, s, me, k)
 *
 * Output: rank 0 prints "raw client rank 0 of N: every opcode passed" on
 * stdout; other ranks print nothing on success.  Failures go to stderr as
 * "raw client rank R: <what failed>".
 *
 * Exit status:
 *   0  success
 *   1  data mismatch, bad environment/usage, or (normal mode) an I/O error,
 *      EOF from mpirun or a timeout
 *   2  fault mode, well-behaved rank (or the fault rank before its fault):
 *      mpirun closed the socket, an I/O error, or a timeout;
 *      --no-mpirun: the connection failed (the expected outcome)
 *   3  the misbehaving rank, after misbehaving (it first waits up to
 *      PMGR_FAULT_LINGER s for mpirun to close its socket)
 *   0  --truncate, misbehaving rank (exits without CLOSE, on purpose)
 *   42 --abort, misbehaving rank
 *   killed by SIGKILL: --die-mid, misbehaving rank
 *
 * Fault modes (argv[1]; only rank PMGR_FAULT_RANK misbehaves):
 *   --bad-version    handshake "7, rank"
 *   --bad-rank       handshake "8, N"
 *   --dup-rank       handshake "8, 0" ("8, 1" if the fault rank is 0)
 *   --mismatch-op    first round (BARRIER): sends "7, 4, 4 bytes"
 *   --mismatch-root  first BCAST: root 1 instead of 0 (data only if it is
 *                    rank 1 itself, since then it is the claimed root)
 *   --mismatch-size  first ALLGATHER: size 10 and 10 bytes instead of 9
 *   --truncate       first ALLGATHER: "7, 9" and 3 of the 9 bytes, exit(0)
 *   --die-mid        after BARRIER: sends the header "4, 0, 13" of the first
 *                    BCAST, then SIGKILLs itself
 *   --abort          after the handshake: CLOSE and close, then a new
 *                    connection carrying "42, rank, 15, "raw abort test\0"",
 *                    exit(42).  With N == 1 only the abort connection.
 *   --no-mpirun      every rank only tries to connect (the test points
 *                    MPIRUN_PORT at a port where nothing listens) and reports.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#define PROTO_VERSION 8
#define OP_CLOSE 1
#define OP_BARRIER 3
#define OP_BCAST 4
#define OP_GATHER 5
#define OP_SCATTER 6
#define OP_ALLGATHER 7
#define OP_ALLTOALL 8

#define BCAST_SIZE 13
#define GATHER_SIZE 7
#define SCATTER_SIZE 5
#define ALLGATHER_SIZE 9
#define ALLTOALL_SIZE 3

#define CONNECT_TRIES 6
#define ABORT_CODE 42
#define ABORT_MSG "raw abort test"

enum mode {
	M_NONE, M_BAD_VERSION, M_BAD_RANK, M_DUP_RANK, M_MISMATCH_OP,
	M_MISMATCH_ROOT, M_MISMATCH_SIZE, M_TRUNCATE, M_DIE_MID, M_ABORT,
	M_NO_MPIRUN
};

static const struct {
	const char *name;
	enum mode mode;
} mode_names[] = {
	{ "--bad-version", M_BAD_VERSION },
	{ "--bad-rank", M_BAD_RANK },
	{ "--dup-rank", M_DUP_RANK },
	{ "--mismatch-op", M_MISMATCH_OP },
	{ "--mismatch-root", M_MISMATCH_ROOT },
	{ "--mismatch-size", M_MISMATCH_SIZE },
	{ "--truncate", M_TRUNCATE },
	{ "--die-mid", M_DIE_MID },
	{ "--abort", M_ABORT },
	{ "--no-mpirun", M_NO_MPIRUN },
};

static int me = -1;
static int np = 0;
static int sock = -1;
static enum mode mode = M_NONE;
static const char *mode_name = "";
static int fault_rank = 1;
static int timeout_s = 60;
static const char *host;
static int port;

/* set to the step being run; read by the SIGALRM handler */
static const char *volatile phase = "startup";
static char alarm_prefix[128];

static int faulty(void)
{
	return mode != M_NONE && me == fault_rank;
}

/* exit code for "mpirun went away / I/O failed / timed out" */
static int io_exit_code(void)
{
	return mode == M_NONE ? 1 : 2;
}

static void vmsg(const char *fmt, va_list ap)
{
	char buf[512];
	vsnprintf(buf, sizeof buf, fmt, ap);
	if (me >= 0)
		fprintf(stderr, "raw client rank %d: %s\n", me, buf);
	else
		fprintf(stderr, "raw client rank ?: %s\n", buf);
	fflush(stderr);
}

static void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

static void die(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
static void die(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	exit(code);
}

static void on_alarm(int sig)
{
	(void)sig;
	const char *p = phase;
	ssize_t r;
	r = write(2, alarm_prefix, strlen(alarm_prefix));
	r = write(2, p, strlen(p));
	r = write(2, ")\n", 2);
	(void)r;
	_exit(mode == M_NONE ? 1 : 2);
}

static int parse_int(const char *name, const char *s, int *out)
{
	char *end;
	long v;
	if (s == NULL || *s == '\0')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < -2147483647L || v > 2147483647L) {
		die(1, "environment variable %s=\"%s\" is not an integer", name, s);
	}
	*out = (int)v;
	return 0;
}

static int need_env_int(const char *name)
{
	int v;
	if (parse_int(name, getenv(name), &v) != 0)
		die(1, "missing required environment variable %s", name);
	return v;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void resolve(struct sockaddr_in *sa)
{
	struct addrinfo hints, *res = NULL;
	int rc;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc != 0 || res == NULL)
		die(io_exit_code(), "hostname lookup of mpirun host \"%s\" failed: %s",
		    host, gai_strerror(rc));
	memcpy(sa, res->ai_addr, sizeof *sa);
	sa->sin_port = htons((unsigned short)port);
	freeaddrinfo(res);
}

/* Returns a connected fd, or -1 with errno set after `tries` attempts. */
static int connect_mpirun(int tries)
{
	struct sockaddr_in sa;
	int i, fd, err = 0;
	resolve(&sa);
	for (i = 0; i < tries; i++) {
		if (i > 0)
			sleep_ms(250);
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			return -1;
		if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
			return fd;
		err = errno;
		close(fd);
		if (err == EINTR)
			continue;
	}
	errno = err;
	return -1;
}

/* ---- I/O on the mpirun socket; every failure is fatal ---- */

static void write_all(int fd, const void *p, size_t n, const char *what)
{
	const unsigned char *b = p;
	size_t done = 0;
	while (done < n) {
		ssize_t w = write(fd, b + done, n - done);
		if (w < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			die(io_exit_code(), "writing %s to mpirun failed after %zu of %zu bytes: %s",
			    what, done, n, strerror(errno));
		}
		if (w == 0)
			die(io_exit_code(), "writing %s to mpirun wrote 0 bytes (after %zu of %zu)",
			    what, done, n);
		done += (size_t)w;
	}
}

static void read_all(int fd, void *p, size_t n, const char *what)
{
	unsigned char *b = p;
	size_t done = 0;
	while (done < n) {
		ssize_t r = read(fd, b + done, n - done);
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			die(io_exit_code(), "reading %s from mpirun failed after %zu of %zu bytes: %s",
			    what, done, n, strerror(errno));
		}
		if (r == 0)
			die(io_exit_code(), "mpirun closed the connection while reading %s "
			    "(got %zu of %zu bytes)", what, done, n);
		done += (size_t)r;
	}
}

/* Packet builder: ints in host order, then raw bytes. */
struct pkt {
	unsigned char *buf;
	size_t len, cap;
};

static void pkt_add(struct pkt *p, const void *data, size_t n)
{
	if (p->len + n > p->cap) {
		size_t cap = p->cap ? p->cap : 64;
		while (cap < p->len + n)
			cap *= 2;
		p->buf = realloc(p->buf, cap);
		if (p->buf == NULL)
			die(1, "out of memory");
		p->cap = cap;
	}
	if (n)
		memcpy(p->buf + p->len, data, n);
	p->len += n;
}

static void pkt_int(struct pkt *p, int v)
{
	pkt_add(p, &v, sizeof v);
}

static void pkt_send(struct pkt *p, const char *what)
{
	write_all(sock, p->buf, p->len, what);
	free(p->buf);
	memset(p, 0, sizeof *p);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (p == NULL)
		die(1, "out of memory");
	return p;
}

/* ---- patterns ---- */

static unsigned char pat(int salt, int src, int dst, int k)
{
	return (unsigned char)(salt + 31 * src + 7 * dst + k);
}

static void fill(unsigned char *b, int size, int salt, int src, int dst)
{
	int k;
	for (k = 0; k < size; k++)
		b[k] = pat(salt, src, dst, k);
}

static void check(const unsigned char *b, int size, int salt, int src, int dst,
		  const char *what, int block)
{
	int k;
	for (k = 0; k < size; k++) {
		unsigned char e = pat(salt, src, dst, k);
		if (b[k] != e)
			die(1, "%s: data mismatch in block %d byte %d: got 0x%02x, expected 0x%02x",
			    what, block, k, b[k], e);
	}
}

/* ---- the misbehaving rank's exit ---- */

static void linger_exit(const char *what) __attribute__((noreturn));
static void linger_exit(const char *what)
{
	int linger = 5, waited = 0, closed = 0;
	const char *s = getenv("PMGR_FAULT_LINGER");
	if (s != NULL)
		parse_int("PMGR_FAULT_LINGER", s, &linger);
	if (linger < 0)
		linger = 0;
	alarm(0);
	while (sock >= 0 && waited < linger * 1000) {
		struct pollfd pfd = { sock, POLLIN, 0 };
		int rc = poll(&pfd, 1, 100);
		if (rc < 0 && errno != EINTR)
			break;
		if (rc > 0) {
			char junk[256];
			ssize_t r = read(sock, junk, sizeof junk);
			if (r <= 0 && !(r < 0 && errno == EINTR)) {
				closed = 1;
				break;
			}
			continue;
		}
		waited += 100;
	}
	if (closed)
		msg("injected fault %s (%s); mpirun closed the connection; exiting 3",
		    mode_name, what);
	else
		msg("injected fault %s (%s); mpirun did not close the connection within %d s; "
		    "exiting 3", mode_name, what, linger);
	exit(3);
}

/* ---- collectives ---- */

static void op_barrier(void)
{
	struct pkt p = { 0 };
	int r;
	phase = "BARRIER";
	if (faulty() && mode == M_MISMATCH_OP) {
		unsigned char d[4] = { 1, 2, 3, 4 };
		pkt_int(&p, OP_ALLGATHER);
		pkt_int(&p, 4);
		pkt_add(&p, d, 4);
		pkt_send(&p, "BARRIER packet (fault: ALLGATHER opcode)");
		linger_exit("sent opcode ALLGATHER(7), size 4, 4 bytes in the BARRIER round");
	}
	pkt_int(&p, OP_BARRIER);
	pkt_send(&p, "BARRIER packet");
	read_all(sock, &r, sizeof r, "BARRIER reply");
	if (r != OP_BARRIER)
		die(1, "BARRIER: reply is int %d, expected %d", r, OP_BARRIER);
}

static void op_bcast(int root, int salt, int first)
{
	struct pkt p = { 0 };
	unsigned char buf[BCAST_SIZE];
	char what[64];
	int wire_root = root;
	snprintf(what, sizeof what, "BCAST(root %d, %d bytes)", root, BCAST_SIZE);
	phase = root == 0 ? "BCAST root 0" : "BCAST root N-1";
	if (first && faulty() && mode == M_MISMATCH_ROOT)
		wire_root = 1;
	pkt_int(&p, OP_BCAST);
	pkt_int(&p, wire_root);
	pkt_int(&p, BCAST_SIZE);
	if (first && faulty() && mode == M_DIE_MID) {
		pkt_send(&p, "BCAST header");
		msg("injected fault %s: sent the BCAST header, now killing myself with SIGKILL",
		    mode_name);
		kill(getpid(), SIGKILL);
		pause();
	}
	if (me == wire_root) {
		fill(buf, BCAST_SIZE, salt, root, 0);
		pkt_add(&p, buf, BCAST_SIZE);
	}
	pkt_send(&p, what);
	if (wire_root != root)
		linger_exit("sent root 1 instead of 0 in the first BCAST");
	memset(buf, 0, sizeof buf);
	read_all(sock, buf, BCAST_SIZE, what);
	check(buf, BCAST_SIZE, salt, root, 0, what, 0);
}

static void op_gather(int root, int salt)
{
	struct pkt p = { 0 };
	unsigned char mine[GATHER_SIZE];
	char what[64];
	snprintf(what, sizeof what, "GATHER(root %d, %d bytes)", root, GATHER_SIZE);
	phase = root == 0 ? "GATHER root 0" : "GATHER root N-1";
	fill(mine, GATHER_SIZE, salt, me, root);
	pkt_int(&p, OP_GATHER);
	pkt_int(&p, root);
	pkt_int(&p, GATHER_SIZE);
	pkt_add(&p, mine, GATHER_SIZE);
	pkt_send(&p, what);
	if (me == root) {
		size_t n = (size_t)np * GATHER_SIZE;
		unsigned char *all = xmalloc(n);
		int s;
		read_all(sock, all, n, what);
		for (s = 0; s < np; s++)
			check(all + (size_t)s * GATHER_SIZE, GATHER_SIZE, salt, s, root, what, s);
		free(all);
	}
}

static void op_scatter(int root, int salt)
{
	struct pkt p = { 0 };
	unsigned char got[SCATTER_SIZE];
	char what[64];
	snprintf(what, sizeof what, "SCATTER(root %d, %d bytes)", root, SCATTER_SIZE);
	phase = root == 0 ? "SCATTER root 0" : "SCATTER root N-1";
	pkt_int(&p, OP_SCATTER);
	pkt_int(&p, root);
	pkt_int(&p, SCATTER_SIZE);
	if (me == root) {
		size_t n = (size_t)np * SCATTER_SIZE;
		unsigned char *all = xmalloc(n);
		int j;
		for (j = 0; j < np; j++)
			fill(all + (size_t)j * SCATTER_SIZE, SCATTER_SIZE, salt, root, j);
		pkt_add(&p, all, n);
		free(all);
	}
	pkt_send(&p, what);
	read_all(sock, got, SCATTER_SIZE, what);
	check(got, SCATTER_SIZE, salt, root, me, what, me);
}

static void op_allgather(int size, int salt, int first)
{
	struct pkt p = { 0 };
	unsigned char mine[16];
	unsigned char *all;
	char what[64];
	int s, wire_size = size;
	snprintf(what, sizeof what, "ALLGATHER(%d bytes)", size);
	phase = size ? "ALLGATHER" : "zero-size ALLGATHER";
	if (first && faulty() && mode == M_MISMATCH_SIZE)
		wire_size = size + 1;
	fill(mine, wire_size, salt, me, 0);
	pkt_int(&p, OP_ALLGATHER);
	pkt_int(&p, wire_size);
	if (first && faulty() && mode == M_TRUNCATE) {
		pkt_add(&p, mine, 3);
		pkt_send(&p, "truncated ALLGATHER packet");
		msg("injected fault %s: sent ALLGATHER opcode, size %d and 3 of %d bytes; "
		    "exiting 0 without CLOSE", mode_name, size, size);
		exit(0);
	}
	if (wire_size != size) {
		pkt_add(&p, mine, wire_size);
		pkt_send(&p, "ALLGATHER packet (fault: size 10)");
		linger_exit("sent size 10 and 10 bytes in the first ALLGATHER");
	}
	pkt_add(&p, mine, size);
	pkt_send(&p, what);
	if (size == 0)
		return;
	all = xmalloc((size_t)np * size);
	read_all(sock, all, (size_t)np * size, what);
	for (s = 0; s < np; s++)
		check(all + (size_t)s * size, size, salt, s, 0, what, s);
	free(all);
}

static void op_alltoall(int salt)
{
	struct pkt p = { 0 };
	size_t n = (size_t)np * ALLTOALL_SIZE;
	unsigned char *b = xmalloc(n);
	char what[64];
	int j, s;
	snprintf(what, sizeof what, "ALLTOALL(%d bytes per block)", ALLTOALL_SIZE);
	phase = "ALLTOALL";
	for (j = 0; j < np; j++)
		fill(b + (size_t)j * ALLTOALL_SIZE, ALLTOALL_SIZE, salt, me, j);
	pkt_int(&p, OP_ALLTOALL);
	pkt_int(&p, ALLTOALL_SIZE);
	pkt_add(&p, b, n);
	pkt_send(&p, what);
	memset(b, 0, n);
	read_all(sock, b, n, what);
	for (s = 0; s < np; s++)
		check(b + (size_t)s * ALLTOALL_SIZE, ALLTOALL_SIZE, salt, s, me, what, s);
	free(b);
}

static void op_close(void)
{
	struct pkt p = { 0 };
	int waited = 0;
	phase = "CLOSE";
	pkt_int(&p, OP_CLOSE);
	pkt_send(&p, "CLOSE");
	/* mpirun sends nothing for CLOSE (and nothing for a zero-size
	 * ALLGATHER or a non-root GATHER): any byte here is stray. */
	while (waited < 1000) {
		struct pollfd pfd = { sock, POLLIN, 0 };
		int rc = poll(&pfd, 1, 100);
		if (rc < 0 && errno != EINTR)
			break;
		if (rc > 0) {
			unsigned char c[64];
			ssize_t r = read(sock, c, sizeof c);
			if (r > 0)
				die(1, "mpirun sent %zd stray byte(s) after CLOSE (first 0x%02x)",
				    r, c[0]);
			if (r < 0 && errno == EINTR)
				continue;
			break;	/* EOF (or reset): mpirun closed our fd, fine */
		}
		waited += 100;
	}
	close(sock);
	sock = -1;
}

static void send_abort(void) __attribute__((noreturn));
static void send_abort(void)
{
	struct pkt p = { 0 };
	const char *m = ABORT_MSG;
	int len = (int)strlen(m) + 1;
	int fd;
	phase = "abort connection";
	/* print first: mpirun may kill us as soon as it reads the message */
	msg("injected fault %s: %ssending an abort message (code %d), then exiting %d",
	    mode_name, np > 1 ? "sent CLOSE; " : "", ABORT_CODE, ABORT_CODE);
	fd = connect_mpirun(1);
	if (fd < 0)
		die(io_exit_code(), "abort: connecting to mpirun at %s:%d failed: %s",
		    host, port, strerror(errno));
	pkt_int(&p, ABORT_CODE);
	pkt_int(&p, me);
	pkt_int(&p, len);
	pkt_add(&p, m, (size_t)len);
	write_all(fd, p.buf, p.len, "abort message");
	free(p.buf);
	close(fd);
	exit(ABORT_CODE);
}

int main(int argc, char **argv)
{
	const char *s;
	int hs[2];
	size_t i;

	setvbuf(stdout, NULL, _IONBF, 0);
	signal(SIGPIPE, SIG_IGN);

	if (argc > 2) {
		fprintf(stderr, "usage: %s [fault-mode]\n", argv[0]);
		return 1;
	}
	if (argc == 2) {
		for (i = 0; i < sizeof mode_names / sizeof mode_names[0]; i++)
			if (strcmp(argv[1], mode_names[i].name) == 0) {
				mode = mode_names[i].mode;
				mode_name = mode_names[i].name;
			}
		if (mode == M_NONE) {
			fprintf(stderr, "raw client: unknown fault mode \"%s\"\n", argv[1]);
			return 1;
		}
	}

	s = getenv("PMGR_TEST_TIMEOUT");
	if (s != NULL && *s)
		parse_int("PMGR_TEST_TIMEOUT", s, &timeout_s);
	if (timeout_s <= 0)
		timeout_s = 60;
	signal(SIGALRM, on_alarm);
	alarm((unsigned)timeout_s);

	me = need_env_int("MPIRUN_RANK");
	np = need_env_int("MPIRUN_NPROCS");
	snprintf(alarm_prefix, sizeof alarm_prefix,
		 "raw client rank %d: timed out after %d s (in ", me, timeout_s);
	if (np <= 0)
		die(1, "invalid MPIRUN_NPROCS %d", np);
	if (me < 0 || me >= np)
		die(1, "invalid MPIRUN_RANK %d (MPIRUN_NPROCS %d)", me, np);
	s = getenv("PMGR_FAULT_RANK");
	if (s != NULL && *s)
		parse_int("PMGR_FAULT_RANK", s, &fault_rank);
	else if (np == 1)
		fault_rank = 0;	/* default 1, but 0 in a 1-task job */
	if (mode != M_NONE && mode != M_NO_MPIRUN && (fault_rank < 0 || fault_rank >= np))
		die(1, "PMGR_FAULT_RANK %d is out of range for %d tasks", fault_rank, np);

	if (np == 1 && mode != M_NONE && mode != M_ABORT && mode != M_NO_MPIRUN)
		die(1, "fault mode %s needs MPIRUN_NPROCS >= 2", mode_name);

	if (np == 1 && mode == M_NONE) {
		/* Spec 1.1: a 1-task job never connects to mpirun. */
		printf("raw client rank %d of %d: every opcode passed\n", me, np);
		return 0;
	}

	host = getenv("MPIRUN_HOST");
	if (host == NULL || *host == '\0')
		die(1, "missing required environment variable MPIRUN_HOST");
	port = need_env_int("MPIRUN_PORT");
	if (port <= 0 || port > 65535)
		die(1, "invalid MPIRUN_PORT %d", port);

	if (mode == M_NO_MPIRUN) {
		phase = "connect (--no-mpirun)";
		sock = connect_mpirun(CONNECT_TRIES);
		if (sock < 0)
			die(2, "--no-mpirun: connecting to %s:%d failed after %d attempts: %s",
			    host, port, CONNECT_TRIES, strerror(errno));
		die(1, "--no-mpirun: unexpectedly connected to %s:%d", host, port);
	}

	if (np == 1) {	/* M_ABORT: no main connection, only the abort one */
		if (faulty())
			send_abort();
		die(1, "internal error: N=1 fault mode");
	}

	phase = "connect";
	sock = connect_mpirun(CONNECT_TRIES);
	if (sock < 0)
		die(io_exit_code(), "connecting to mpirun at %s:%d failed after %d attempts: %s",
		    host, port, CONNECT_TRIES, strerror(errno));

	phase = "handshake";
	hs[0] = PROTO_VERSION;
	hs[1] = me;
	if (faulty()) {
		switch (mode) {
		case M_BAD_VERSION: hs[0] = 7; break;
		case M_BAD_RANK: hs[1] = np; break;
		case M_DUP_RANK: hs[1] = me == 0 ? 1 : 0; break;
		default: break;
		}
	}
	write_all(sock, hs, sizeof hs, "handshake");
	if (faulty()) {
		char what[64];
		switch (mode) {
		case M_BAD_VERSION:
		case M_BAD_RANK:
		case M_DUP_RANK:
			snprintf(what, sizeof what, "handshake sent: version %d, rank %d",
				 hs[0], hs[1]);
			linger_exit(what);
		case M_ABORT: {
			struct pkt p = { 0 };
			pkt_int(&p, OP_CLOSE);
			pkt_send(&p, "CLOSE");
			close(sock);
			sock = -1;
			send_abort();
		}
		default:
			break;
		}
	}

	op_barrier();
	op_bcast(0, 0x10, 1);
	op_bcast(np - 1, 0x20, 0);
	op_gather(0, 0x30);
	op_gather(np - 1, 0x40);
	op_scatter(0, 0x50);
	op_scatter(np - 1, 0x60);
	op_allgather(ALLGATHER_SIZE, 0x70, 1);
	op_alltoall(0x80);
	op_allgather(0, 0x90, 0);
	op_close();

	alarm(0);
	if (me == 0)
		printf("raw client rank %d of %d: every opcode passed\n", me, np);
	return 0;
}
