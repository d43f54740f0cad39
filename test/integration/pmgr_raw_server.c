/*
 * pmgr_raw_server.c - a minimal PMGR_COLLECTIVE protocol-8 "mpirun" for
 * wire-conformance tests of the client side.
 *
 * Written from docs/protocols/pmgr-collective-wire.md only (sections 1.1,
 * 1.4, 2.1, 2.2, 4.3, 5).  It does not use Weft's implementation.
 *
 * Usage: pmgr_raw_server -n N [-t] -- program [args...]
 *
 *   Listens on 127.0.0.1, port 0 (kernel-chosen), and forks N children
 *   running `program` with MPIRUN_NPROCS=N, MPIRUN_RANK=i, MPIRUN_ID=<non-zero>,
 *   MPIRUN_HOST=127.0.0.1, MPIRUN_PORT=<port>, and MPIRUN_USE_TREES=0 if -t
 *   is given (otherwise MPIRUN_USE_TREES is inherited as is).
 *
 *   N > 1: accepts N handshakes ("int 8, int rank", raw host order; no
 *   reply), rejecting a version other than 8, a rank outside [0, N) and a
 *   duplicate rank.  Then, like the reference pmgr_processops, it reads one
 *   packet per rank in rank order, checks that opcode/root/size agree (the
 *   first value seen is the expected one; unlike the reference, a mismatch
 *   is fatal), and sends the replies of spec table 2.2 in rank order, until
 *   a round of CLOSE (each fd is closed as soon as its CLOSE is read) or a
 *   round of ABORT opcodes.
 *
 *   N == 1: accepts no handshake (a 1-task client never connects).
 *
 *   Afterwards it waits for the children, and accepts abort connections
 *   ("int code, int rank, int len, len bytes") on the listening socket.
 *   An abort connection can also arrive before every task has connected;
 *   a "handshake" that fails the checks (version, rank range, duplicate) is
 *   therefore probed: if it continues with "int len, len bytes ending in
 *   NUL" and then EOF within 500 ms, it is reported as an abort.
 *
 * Stricter than the reference (spec 3.5 allows it): EOF or a short read is
 * an error, a root outside [0, N) or a negative size is an error, and any
 * protocol error kills the job.
 *
 * Output and exit status:
 *   success: stdout "pmgr_raw_server: N tasks, K collective rounds served",
 *            exit 0.  K counts completed rounds of BARRIER..ALLTOALL (not
 *            the CLOSE round, nor OPEN/ABORT rounds).
 *   abort:   stderr "pmgr_raw_server: abort from rank R code C: MSG", the
 *            children are killed, exit C (1 if C is outside 1..255).
 *   error:   stderr "pmgr_raw_server: error: <what>", the children are
 *            killed, exit 1.  When the error happens during the collective
 *            loop (protocol error, EOF, a child dying), the server first
 *            waits up to 2 s (never past the deadline) for an abort
 *            connection, since an aborting task without a tree never sends
 *            CLOSE; if one arrives the abort line is printed after the
 *            error line and the exit status is C.
 *   a child fails: "pmgr_raw_server: error: child rank R (pid P) exited with
 *            status S" (or "was killed by signal S"), for the lowest failing
 *            rank, exit 1.
 *
 * Timeouts: every wait is a poll() with a deadline of PMGR_TEST_TIMEOUT
 * seconds (default 60) from start; alarm() at that time + 5 s is a
 * backstop.  Children are checked with waitpid(WNOHANG) at least every
 * 100 ms while the server waits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#define PROTO_VERSION 8
#define OP_OPEN 0
#define OP_CLOSE 1
#define OP_ABORT 2
#define OP_BARRIER 3
#define OP_BCAST 4
#define OP_GATHER 5
#define OP_SCATTER 6
#define OP_ALLGATHER 7
#define OP_ALLTOALL 8

#define MAX_TASKS 4096
#define MAX_BUF (64u * 1024u * 1024u)
#define MAX_ABORT_MSG 4096
#define ABORT_GRACE_MS 2000
#define SLICE_MS 100

static const char *const opnames[] = {
	"OPEN", "CLOSE", "ABORT", "BARRIER", "BCAST", "GATHER", "SCATTER",
	"ALLGATHER", "ALLTOALL"
};

static int ntasks;
static pid_t *pids;		/* by rank given in the environment */
static int *cdone;		/* child reaped */
static int *cstatus;		/* its wait status */
static int nalive;
static int *fds;		/* by rank claimed in the handshake */
static int lfd = -1;
static int timeout_s = 60;
static long long deadline_ms;
static int round_no;		/* 1-based round being served */
static const char *round_op = "(none)";
static volatile sig_atomic_t spawned;

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int remaining_ms(void)
{
	long long r = deadline_ms - now_ms();
	if (r < 0)
		return 0;
	return r > 1000000 ? 1000000 : (int)r;
}

static const char *opname(int op)
{
	if (op >= 0 && op <= OP_ALLTOALL)
		return opnames[op];
	return "unknown";
}

static void kill_children(void)
{
	int i;
	for (i = 0; i < (int)spawned; i++)
		if (!cdone[i] && pids[i] > 0)
			kill(pids[i], SIGKILL);
}

static void kill_and_reap(void)
{
	int i, st;
	kill_children();
	for (i = 0; i < (int)spawned; i++)
		if (!cdone[i] && pids[i] > 0) {
			while (waitpid(pids[i], &st, 0) < 0 && errno == EINTR)
				;
			cdone[i] = 1;
			cstatus[i] = st;
		}
}

static void on_fatal_signal(int sig)
{
	static const char m1[] = "pmgr_raw_server: error: timed out (alarm backstop)\n";
	static const char m2[] = "pmgr_raw_server: error: interrupted by a signal\n";
	ssize_t r;
	if (sig == SIGALRM)
		r = write(2, m1, sizeof m1 - 1);
	else
		r = write(2, m2, sizeof m2 - 1);
	(void)r;
	kill_children();
	_exit(1);
}

static void errmsg(const char *fmt, va_list ap)
{
	char buf[1024];
	vsnprintf(buf, sizeof buf, fmt, ap);
	fprintf(stderr, "pmgr_raw_server: error: %s\n", buf);
	fflush(stderr);
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	errmsg(fmt, ap);
	va_end(ap);
	kill_and_reap();
	exit(1);
}

static void describe_status(int st, char *buf, size_t n)
{
	if (WIFEXITED(st))
		snprintf(buf, n, "exited with status %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, n, "was killed by signal %d (%s)", WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	else
		snprintf(buf, n, "ended with wait status 0x%x", st);
}

static int status_ok(int st)
{
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void reap_nohang(void)
{
	pid_t p;
	int st, i;
	while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
		for (i = 0; i < (int)spawned; i++)
			if (pids[i] == p && !cdone[i]) {
				cdone[i] = 1;
				cstatus[i] = st;
				nalive--;
			}
	}
}

/* lowest rank that ended badly, or -1 */
static int first_bad_child(void)
{
	int i;
	for (i = 0; i < (int)spawned; i++)
		if (cdone[i] && !status_ok(cstatus[i]))
			return i;
	return -1;
}

static const char *child_desc(int r, char *buf, size_t n)
{
	char st[96];
	if (r < 0 || r >= (int)spawned) {
		snprintf(buf, n, "no child has rank %d", r);
		return buf;
	}
	if (cdone[r]) {
		describe_status(cstatus[r], st, sizeof st);
		snprintf(buf, n, "child rank %d (pid %d) %s", r, (int)pids[r], st);
	} else {
		snprintf(buf, n, "child rank %d (pid %d) is still running", r, (int)pids[r]);
	}
	return buf;
}

/* after an EOF/reset from rank r, give its process a moment to finish */
static void settle_child(int r)
{
	int i;
	for (i = 0; i < 25 && r >= 0 && r < (int)spawned && !cdone[r]; i++) {
		struct timespec ts = { 0, 20 * 1000000L };
		nanosleep(&ts, NULL);
		reap_nohang();
	}
}

/* ---- abort connections ---- */

/* Read "int code, int rank, int len, len bytes" from fd (closes it).
 * Returns 0 and fills code/rank/msg on success, -1 (with a note) if malformed. */
static int read_abort(int fd, int *code, int *rank, char *m, size_t mcap)
{
	unsigned char buf[12 + MAX_ABORT_MSG];
	size_t got = 0, need = 12;
	long long end = now_ms() + 2000;
	int len = 0;
	while (got < need) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		int wait = (int)(end - now_ms());
		int rc;
		ssize_t r;
		if (wait <= 0)
			break;
		rc = poll(&pfd, 1, wait);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0)
			break;
		r = read(fd, buf + got, need - got);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
		if (got == 12 && need == 12) {
			memcpy(&len, buf + 8, sizeof len);
			if (len < 0 || len > MAX_ABORT_MSG) {
				fprintf(stderr, "pmgr_raw_server: malformed abort connection: "
					"message length %d\n", len);
				close(fd);
				return -1;
			}
			need = 12 + (size_t)len;
		}
	}
	close(fd);
	if (got < need) {
		fprintf(stderr, "pmgr_raw_server: malformed abort connection: got %zu of %zu "
			"bytes (expected int code, int rank, int len, len bytes)\n", got, need);
		return -1;
	}
	memcpy(code, buf, sizeof *code);
	memcpy(rank, buf + 4, sizeof *rank);
	if (len > 0 && buf[12 + len - 1] != '\0')
		fprintf(stderr, "pmgr_raw_server: warning: abort message from rank %d does "
			"not end with a NUL byte (len %d)\n", *rank, len);
	{
		size_t n = (size_t)len < mcap - 1 ? (size_t)len : mcap - 1;
		memcpy(m, buf + 12, n);
		m[n] = '\0';
	}
	return 0;
}

/* Wait up to wait_ms for an abort connection; if one arrives, report it,
 * kill everything and exit with its code.  Returns if none arrived. */
static void check_abort(int wait_ms)
{
	long long end = now_ms() + wait_ms;
	for (;;) {
		struct pollfd pfd = { lfd, POLLIN, 0 };
		int w = (int)(end - now_ms());
		int rc, fd, code, rank;
		char m[MAX_ABORT_MSG + 1];
		if (w < 0)
			w = 0;
		rc = poll(&pfd, 1, w);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0)
			return;
		fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			continue;
		if (read_abort(fd, &code, &rank, m, sizeof m) != 0)
			continue;
		fprintf(stderr, "pmgr_raw_server: abort from rank %d code %d: %s\n", rank, code, m);
		fflush(stderr);
		kill_and_reap();
		exit(code >= 1 && code <= 255 ? code : 1);
	}
}

/* fatal error during the collective loop: look for an abort first */
static void die_loop(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die_loop(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	errmsg(fmt, ap);
	va_end(ap);
	{
		int rem = remaining_ms();	/* never wait past the deadline */
		check_abort(rem < ABORT_GRACE_MS ? rem : ABORT_GRACE_MS);
	}
	kill_and_reap();
	exit(1);
}

/* ---- I/O with deadlines and child watching ---- */

enum io_rc { IO_OK, IO_EOF, IO_ERR, IO_TIMEOUT, IO_CHILD };

/* Read n bytes.  While waiting, reap children; a child that ended badly
 * gives IO_CHILD (if watch).  *got receives the bytes read. */
static enum io_rc read_full(int fd, void *p, size_t n, size_t *got, int watch)
{
	unsigned char *b = p;
	*got = 0;
	while (*got < n) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		int rem = remaining_ms();
		int rc;
		ssize_t r;
		if (rem == 0)
			return IO_TIMEOUT;
		rc = poll(&pfd, 1, rem < SLICE_MS ? rem : SLICE_MS);
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			return IO_ERR;
		}
		if (rc == 0) {
			reap_nohang();
			if (watch && first_bad_child() >= 0)
				return IO_CHILD;
			continue;
		}
		r = read(fd, b + *got, n - *got);
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return IO_ERR;
		}
		if (r == 0)
			return IO_EOF;
		*got += (size_t)r;
	}
	return IO_OK;
}

static enum io_rc write_full(int fd, const void *p, size_t n, size_t *done)
{
	const unsigned char *b = p;
	*done = 0;
	while (*done < n) {
		struct pollfd pfd = { fd, POLLOUT, 0 };
		int rem = remaining_ms();
		int rc;
		ssize_t w;
		if (rem == 0)
			return IO_TIMEOUT;
		rc = poll(&pfd, 1, rem < SLICE_MS ? rem : SLICE_MS);
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			return IO_ERR;
		}
		if (rc == 0)
			continue;
		w = send(fd, b + *done, n - *done, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return IO_ERR;
		}
		*done += (size_t)w;
	}
	return IO_OK;
}

/* read from rank r during the loop; every failure is fatal */
static void rank_read(int r, void *p, size_t n, const char *what)
{
	size_t got;
	char cd[160];
	int bad, e;
	enum io_rc rc = read_full(fds[r], p, n, &got, 1);
	e = errno;
	switch (rc) {
	case IO_OK:
		return;
	case IO_EOF:
		settle_child(r);
		die_loop("rank %d closed its connection (EOF after %zu of %zu bytes) while the "
			 "server read its %s in round %d (%s); %s", r, got, n, what, round_no,
			 round_op, child_desc(r, cd, sizeof cd));
	case IO_ERR:
		settle_child(r);
		die_loop("reading %s of rank %d in round %d (%s) failed after %zu of %zu bytes: "
			 "%s; %s", what, r, round_no, round_op, got, n, strerror(e),
			 child_desc(r, cd, sizeof cd));
	case IO_TIMEOUT:
		die_loop("timed out after %d s waiting for the %s of rank %d in round %d (%s) "
			 "(got %zu of %zu bytes)", timeout_s, what, r, round_no, round_op, got, n);
	case IO_CHILD:
		bad = first_bad_child();
		die_loop("%s while the server waited for the %s of rank %d in round %d (%s)",
			 child_desc(bad, cd, sizeof cd), what, r, round_no, round_op);
	}
	die_loop("internal error in rank_read");
}

static void rank_write(int r, const void *p, size_t n, const char *what)
{
	size_t done;
	char cd[160];
	int e;
	enum io_rc rc;
	if (n == 0)
		return;
	rc = write_full(fds[r], p, n, &done);
	e = errno;
	if (rc == IO_OK)
		return;
	if (rc == IO_TIMEOUT)
		die_loop("timed out after %d s writing the %s to rank %d in round %d (%s)",
			 timeout_s, what, r, round_no, round_op);
	settle_child(r);
	die_loop("writing the %s to rank %d in round %d (%s) failed after %zu of %zu bytes: "
		 "%s; %s", what, r, round_no, round_op, done, n, strerror(e),
		 child_desc(r, cd, sizeof cd));
}

static int rank_read_int(int r, const char *what)
{
	int v;
	rank_read(r, &v, sizeof v, what);
	return v;
}

/* ---- handshake ---- */

static int nconnected;
static int nconn_seen;

static void probe_abort(int fd, const int hs[2]);

static void accept_handshake(void)
{
	int fd, hs[2];
	size_t got;
	enum io_rc rc;
	fd = accept(lfd, NULL, NULL);
	if (fd < 0) {
		if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED)
			return;
		die("accept() failed: %s", strerror(errno));
	}
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	nconn_seen++;
	rc = read_full(fd, hs, sizeof hs, &got, 0);
	if (rc == IO_TIMEOUT)
		die("timed out after %d s reading the handshake of connection #%d "
		    "(got %zu of 8 bytes)", timeout_s, nconn_seen, got);
	if (rc != IO_OK)
		die("connection #%d closed or failed after %zu of 8 handshake bytes%s%s",
		    nconn_seen, got, rc == IO_ERR ? ": " : "",
		    rc == IO_ERR ? strerror(errno) : "");
	if (hs[0] != PROTO_VERSION || hs[1] < 0 || hs[1] >= ntasks || fds[hs[1]] >= 0)
		probe_abort(fd, hs);
	if (hs[0] != PROTO_VERSION)
		die("handshake of connection #%d (rank %d): version %d does not match our "
		    "version %d", nconn_seen, hs[1], hs[0], PROTO_VERSION);
	if (hs[1] < 0 || hs[1] >= ntasks)
		die("handshake of connection #%d: invalid rank %d (job has %d tasks)",
		    nconn_seen, hs[1], ntasks);
	if (fds[hs[1]] >= 0)
		die("handshake of connection #%d: duplicate rank %d (already connected)",
		    nconn_seen, hs[1]);
	fds[hs[1]] = fd;
	nconnected++;
}

/* Read up to n bytes from fd until end_ms; returns the count (stops at EOF). */
static size_t read_until(int fd, void *p, size_t n, long long end_ms, int *eof)
{
	unsigned char *b = p;
	size_t got = 0;
	*eof = 0;
	while (got < n) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		int w = (int)(end_ms - now_ms()), rc;
		ssize_t r;
		if (w <= 0)
			break;
		rc = poll(&pfd, 1, w);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0)
			break;
		r = read(fd, b + got, n - got);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0) {
			*eof = 1;
			break;
		}
		got += (size_t)r;
	}
	return got;
}

/* A handshake connection that failed the checks may really be an abort
 * message ("int code, int rank, int len, msg") from a task that aborted
 * before every task connected: the first 8 bytes are then code and rank.
 * If the rest of the connection is "int len, len bytes ending in NUL, EOF"
 * (within 500 ms), report it as an abort and exit with its code. */
static void probe_abort(int fd, const int hs[2])
{
	unsigned char m[MAX_ABORT_MSG + 1];
	long long end = now_ms() + 500;
	int len, eof;
	char extra;
	if (read_until(fd, &len, sizeof len, end, &eof) != sizeof len)
		return;
	if (len < 1 || len > MAX_ABORT_MSG)
		return;
	if (read_until(fd, m, (size_t)len, end, &eof) != (size_t)len || m[len - 1] != '\0')
		return;
	if (read_until(fd, &extra, 1, end, &eof) != 0 || !eof)
		return;
	fprintf(stderr, "pmgr_raw_server: abort from rank %d code %d: %s\n", hs[1], hs[0],
		(char *)m);
	fprintf(stderr, "pmgr_raw_server: (the abort connection arrived while %d of %d tasks "
		"had connected)\n", nconnected, ntasks);
	fflush(stderr);
	close(fd);
	kill_and_reap();
	exit(hs[0] >= 1 && hs[0] <= 255 ? hs[0] : 1);
}

static void drain_handshakes(void)
{
	for (;;) {
		struct pollfd pfd = { lfd, POLLIN, 0 };
		int rc = poll(&pfd, 1, 0);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0 || nconnected >= ntasks)
			return;
		accept_handshake();
	}
}

static void do_handshakes(void)
{
	char cd[160];
	int i;
	while (nconnected < ntasks) {
		struct pollfd pfd = { lfd, POLLIN, 0 };
		int rem = remaining_ms(), rc;
		if (rem == 0)
			die("timed out after %d s waiting for handshakes (%d of %d tasks connected)",
			    timeout_s, nconnected, ntasks);
		rc = poll(&pfd, 1, rem < SLICE_MS ? rem : SLICE_MS);
		if (rc < 0 && errno != EINTR)
			die("poll() failed: %s", strerror(errno));
		if (rc > 0) {
			accept_handshake();
			continue;
		}
		reap_nohang();
		for (i = 0; i < (int)spawned; i++) {
			if (!cdone[i] || (status_ok(cstatus[i]) && fds[i] >= 0))
				continue;
			drain_handshakes();
			if (nconnected >= ntasks)
				break;
			if (status_ok(cstatus[i]) && fds[i] >= 0)
				continue;
			die("%s before all tasks connected (%d of %d connected)%s",
			    child_desc(i, cd, sizeof cd), nconnected, ntasks,
			    status_ok(cstatus[i]) ? "; it never sent a handshake" : "");
		}
	}
}

/* ---- the collective loop ---- */

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (p == NULL)
		die("out of memory (%zu bytes)", n);
	return p;
}

static void set_current(int *cur, int val, int r, const char *field)
{
	if (*cur == -1) {
		*cur = val;
		return;
	}
	if (*cur != val && strcmp(field, "opcode") == 0)
		die_loop("opcode mismatch in round %d: rank %d sent %d (%s), expected %d (%s, "
			 "the value the lower ranks sent)", round_no, r, val, opname(val), *cur,
			 opname(*cur));
	if (*cur != val)
		die_loop("%s mismatch in round %d (%s): rank %d sent %d, expected %d (the value "
			 "the lower ranks sent)", field, round_no, round_op, r, val, *cur);
}

static void check_root_size(int root, int size, int r, size_t mult)
{
	if (root != -2 && (root < 0 || root >= ntasks))
		die_loop("rank %d sent invalid root %d in round %d (%s) (job has %d tasks)",
			 r, root, round_no, round_op, ntasks);
	if (size < 0 || (size_t)size > MAX_BUF / mult)
		die_loop("rank %d sent invalid size %d in round %d (%s)", r, size, round_no,
			 round_op);
}

/* returns the number of completed collective rounds */
static int process_ops(void)
{
	int served = 0;
	size_t N = (size_t)ntasks;
	for (;;) {
		int op = -1, root = -1, size = -1, i, v;
		unsigned char *buf = NULL;
		size_t sz = 0;
		round_no++;
		round_op = "opcode not read yet";
		for (i = 0; i < ntasks; i++) {
			v = rank_read_int(i, "opcode");
			set_current(&op, v, i, "opcode");
			round_op = opname(op);
			switch (op) {
			case OP_OPEN:
				rank_read_int(i, "OPEN rank");
				break;
			case OP_CLOSE:
				close(fds[i]);
				fds[i] = -1;
				break;
			case OP_ABORT:
				v = rank_read_int(i, "ABORT code");
				fprintf(stderr, "pmgr_raw_server: received ABORT opcode with code %d "
					"from rank %d\n", v, i);
				break;
			case OP_BARRIER:
				break;
			case OP_BCAST:
			case OP_GATHER:
			case OP_SCATTER:
				set_current(&root, rank_read_int(i, "root"), i, "root");
				set_current(&size, rank_read_int(i, "size"), i, "size");
				check_root_size(root, size, i, op == OP_BCAST ? 1 : N);
				sz = (size_t)size;
				if (buf == NULL)
					buf = xmalloc(op == OP_BCAST ? sz : N * sz);
				if (op == OP_BCAST && i == root)
					rank_read(i, buf, sz, "BCAST data");
				else if (op == OP_GATHER)
					rank_read(i, buf + (size_t)i * sz, sz, "GATHER data");
				else if (op == OP_SCATTER && i == root)
					rank_read(i, buf, N * sz, "SCATTER data");
				break;
			case OP_ALLGATHER:
			case OP_ALLTOALL:
				set_current(&size, rank_read_int(i, "size"), i, "size");
				check_root_size(-2, size, i, op == OP_ALLGATHER ? N : N * N);
				sz = (size_t)size;
				if (buf == NULL)
					buf = xmalloc(op == OP_ALLGATHER ? N * sz : N * N * sz);
				if (op == OP_ALLGATHER)
					rank_read(i, buf + (size_t)i * sz, sz, "ALLGATHER data");
				else
					rank_read(i, buf + (size_t)i * N * sz, N * sz, "ALLTOALL data");
				break;
			default:
				die_loop("rank %d sent unknown opcode %d in round %d", i, op, round_no);
			}
		}
		/* all N packets are in: complete the operation, in rank order */
		switch (op) {
		case OP_ABORT:
			die_loop("every rank sent the ABORT opcode in round %d (codes are printed "
				 "above); ending the job", round_no);
		case OP_CLOSE:
			free(buf);
			for (i = 0; i < ntasks; i++)
				if (fds[i] >= 0) {
					close(fds[i]);
					fds[i] = -1;
				}
			return served;
		case OP_OPEN:
			break;
		case OP_BARRIER:
			for (i = 0; i < ntasks; i++) {
				int r = OP_BARRIER;
				rank_write(i, &r, sizeof r, "BARRIER reply");
			}
			break;
		case OP_BCAST:
			for (i = 0; i < ntasks; i++)
				rank_write(i, buf, sz, "BCAST data");
			break;
		case OP_GATHER:
			rank_write(root, buf, N * sz, "GATHER result");
			break;
		case OP_SCATTER:
			for (i = 0; i < ntasks; i++)
				rank_write(i, buf + (size_t)i * sz, sz, "SCATTER block");
			break;
		case OP_ALLGATHER:
			for (i = 0; i < ntasks; i++)
				rank_write(i, buf, N * sz, "ALLGATHER result");
			break;
		case OP_ALLTOALL: {
			unsigned char *tmp = xmalloc(N * sz);
			size_t s;
			for (i = 0; i < ntasks; i++) {
				for (s = 0; s < N; s++)
					memcpy(tmp + s * sz, buf + (s * N + (size_t)i) * sz, sz);
				rank_write(i, tmp, N * sz, "ALLTOALL result");
			}
			free(tmp);
			break;
		}
		}
		if (op >= OP_BARRIER)
			served++;
		free(buf);
	}
}

/* ---- after the loop: children and abort connections ---- */

static void wait_children(void)
{
	for (;;) {
		struct pollfd pfd = { lfd, POLLIN, 0 };
		int rem, rc;
		reap_nohang();
		if (nalive <= 0) {
			check_abort(0);	/* an abort sent just before the last exit */
			return;
		}
		rem = remaining_ms();
		if (rem == 0) {
			char list[256] = "";
			int i;
			size_t len;
			for (i = 0; i < (int)spawned; i++)
				if (!cdone[i]) {
					len = strlen(list);
					if (len < sizeof list - 16)
						snprintf(list + len, sizeof list - len, " %d", i);
				}
			die("timed out after %d s waiting for the tasks to exit (still running:%s)",
			    timeout_s, list);
		}
		rc = poll(&pfd, 1, rem < SLICE_MS ? rem : SLICE_MS);
		if (rc > 0)
			check_abort(0);
	}
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s -n N [-t] -- program [args...]\n", argv0);
	exit(1);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa;
	socklen_t salen = sizeof sa;
	int opt, i, use_t = 0, served = 0, port, bad;
	unsigned jobid;
	const char *s;
	char *end;
	long v;

	ntasks = -1;
	while ((opt = getopt(argc, argv, "+n:t")) != -1) {
		switch (opt) {
		case 'n':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || v < 1 || v > MAX_TASKS) {
				fprintf(stderr, "pmgr_raw_server: -n must be 1..%d\n", MAX_TASKS);
				return 1;
			}
			ntasks = (int)v;
			break;
		case 't':
			use_t = 1;
			break;
		default:
			usage(argv[0]);
		}
	}
	if (ntasks < 1 || optind >= argc)
		usage(argv[0]);

	s = getenv("PMGR_TEST_TIMEOUT");
	if (s != NULL && *s) {
		v = strtol(s, &end, 10);
		if (*end == '\0' && v > 0 && v < 1000000)
			timeout_s = (int)v;
	}
	deadline_ms = now_ms() + (long long)timeout_s * 1000;

	pids = calloc((size_t)ntasks, sizeof *pids);
	cdone = calloc((size_t)ntasks, sizeof *cdone);
	cstatus = calloc((size_t)ntasks, sizeof *cstatus);
	fds = malloc((size_t)ntasks * sizeof *fds);
	if (!pids || !cdone || !cstatus || !fds) {
		fprintf(stderr, "pmgr_raw_server: out of memory\n");
		return 1;
	}
	for (i = 0; i < ntasks; i++)
		fds[i] = -1;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		die("socket() failed: %s", strerror(errno));
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = 0;
	if (bind(lfd, (struct sockaddr *)&sa, sizeof sa) != 0)
		die("bind(127.0.0.1:0) failed: %s", strerror(errno));
	if (listen(lfd, ntasks + 16) != 0)
		die("listen() failed: %s", strerror(errno));
	if (getsockname(lfd, (struct sockaddr *)&sa, &salen) != 0)
		die("getsockname() failed: %s", strerror(errno));
	port = ntohs(sa.sin_port);
	jobid = ((unsigned)getpid() & 0x7fffffu) | 0x100000u;	/* never 0 */

	fflush(stdout);
	fflush(stderr);
	for (i = 0; i < ntasks; i++) {
		pid_t p = fork();
		if (p < 0)
			die("fork() failed: %s", strerror(errno));
		if (p == 0) {
			char b[32];
			snprintf(b, sizeof b, "%d", ntasks);
			setenv("MPIRUN_NPROCS", b, 1);
			snprintf(b, sizeof b, "%d", i);
			setenv("MPIRUN_RANK", b, 1);
			snprintf(b, sizeof b, "%u", jobid);
			setenv("MPIRUN_ID", b, 1);
			setenv("MPIRUN_HOST", "127.0.0.1", 1);
			snprintf(b, sizeof b, "%d", port);
			setenv("MPIRUN_PORT", b, 1);
			if (use_t)
				setenv("MPIRUN_USE_TREES", "0", 1);
			execvp(argv[optind], argv + optind);
			fprintf(stderr, "pmgr_raw_server: cannot execute %s: %s\n", argv[optind],
				strerror(errno));
			_exit(127);
		}
		pids[i] = p;
		spawned = i + 1;
		nalive++;
	}
	signal(SIGALRM, on_fatal_signal);
	signal(SIGINT, on_fatal_signal);
	signal(SIGTERM, on_fatal_signal);
	signal(SIGHUP, on_fatal_signal);
	alarm((unsigned)timeout_s + 5);

	if (ntasks > 1) {
		do_handshakes();
		served = process_ops();
	}
	wait_children();

	bad = first_bad_child();
	if (bad >= 0) {
		char cd[160];
		fprintf(stderr, "pmgr_raw_server: error: %s\n", child_desc(bad, cd, sizeof cd));
		return 1;
	}
	alarm(0);
	printf("pmgr_raw_server: %d tasks, %d collective rounds served\n", ntasks, served);
	return 0;
}
