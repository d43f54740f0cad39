/*
 * pmgr_fuzz_client.c - a rank of an mpirun job that attacks mpirun's side of
 * the PMGR_COLLECTIVE bootstrap (docs/protocols/pmgr-collective-wire.md),
 * for pmgr_fuzz.sh. Shares no code with Weft.
 *
 * Every rank but PMGR_FAULT_RANK (default 1) is well behaved: handshake,
 * BARRIER, ALLGATHER of PMGR_FUZZ_SIZE bytes (default 9), CLOSE, and exit 0
 * (rank 0 prints "fuzz: job completed"). PMGR_FUZZ_DELAY_MS delays their
 * BARRIER. The fault rank does, after its handshake (argv[1]):
 *   --oversized   an ALLGATHER header of 256 MiB per rank, then that data
 *   --flood       a whole BARRIER, then up to 256 MiB of 0xff bytes, never reading
 *   --stall       after the BARRIER, an ALLGATHER header and 3 of its bytes,
 *                 then nothing (30 s)
 *   --never-read  the well-behaved ALLGATHER, then never reads its reply (30 s)
 *   --larger      after the BARRIER, once the others' ALLGATHER is in, an
 *                 ALLGATHER header of 1 MiB per rank (larger than theirs), no data
 *   --bad-opcode  opcode 99
 *   --truncate    after the BARRIER, an ALLGATHER header and 3 of its bytes,
 *                 then exit 0
 *   --abort-text  CLOSE, then an abort request (code 5) whose message holds
 *                 control characters (a terminal escape, a newline), exit 5
 * or, before its own handshake, as a stranger on a second connection:
 *   --idle N      sends N bytes of a handshake (0..7) and waits up to 6 s for
 *                 mpirun to close it; exits 1 if it does not, else carries on
 *   --event-stranger  claims rank 0's job-event channel (Weft's extension:
 *                 0x57454654, rank): must get a 16-byte challenge, and be
 *                 closed after a wrong 32-byte proof, after a claim of rank 99,
 *                 and after a challenge left unanswered; exits 1 otherwise
 *   --other-user  (as root) a child of another user (nobody, 65534) connects
 *                 with this rank's handshake before the rank does: mpirun must
 *                 close it at once and take the real rank after; exits 1
 *                 otherwise (prints "skipped" when not root)
 *   --fd-flood    raises its own descriptor limit, opens 64 connections that
 *                 say nothing, measures mpirun's CPU time over 1 s (exits 1
 *                 above 0.3 s: a busy loop), says how many descriptors mpirun
 *                 holds of its limit, closes them and carries on
 * Exit status: 0 done; 1 a check failed; 2 mpirun closed the connection or
 * an I/O error (expected for the fault rank of a fault mode).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int me, np;
static struct sockaddr_in mpirun_addr;

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

static void die(int code, const char *what)
{
    fprintf(stderr, "fuzz rank %d: %s\n", me, what);
    exit(code);
}

static int connect_mpirun(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        die(1, "socket failed");
    for (int i = 0; i < 50; ++i) {
        if (connect(fd, (struct sockaddr *)&mpirun_addr, sizeof mpirun_addr) == 0)
            return fd;
        usleep(100000);
    }
    die(1, "cannot connect to mpirun");
    return -1;
}

static void put(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            die(2, "mpirun closed the connection (write)");
        p += w;
        n -= (size_t)w;
    }
}

static void put_ints(int fd, int a, int b, int c, int count)
{
    int v[3] = {a, b, c};
    put(fd, v, sizeof(int) * (size_t)count);
}

static void get(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        ssize_t r = recv(fd, p, n, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            die(2, "mpirun closed the connection (read)");
        p += r;
        n -= (size_t)r;
    }
}

static double cpu_seconds_of(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    unsigned long ut = 0, st = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        return 0;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* Descriptors pid holds (entries of /proc/PID/fd), and its soft limit of them; -1 if unknown. */
static int fds_of(pid_t pid, int *limit)
{
    char path[64], line[256];
    *limit = -1;
    snprintf(path, sizeof path, "/proc/%d/limits", (int)pid);
    FILE *f = fopen(path, "r");
    if (f) {
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "Max open files %d", limit) == 1)
                break;
        fclose(f);
    }
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A stranger's connection sends `n` bytes of a handshake; mpirun must close
 * it within a bound. */
static void idle_stranger(int n)
{
    int fd = connect_mpirun();
    int hs[2] = {8, me};
    if (n > 0)
        put(fd, hs, (size_t)n);
    double t0 = now_s();
    struct pollfd pf = {fd, POLLIN, 0};
    char c;
    if (poll(&pf, 1, 6000) <= 0 || recv(fd, &c, 1, 0) > 0)
        die(1, "mpirun kept an idle connection open for 6 s");
    fprintf(stderr, "fuzz rank %d: mpirun closed an idle connection of %d bytes after %.1f s\n", me,
            n, now_s() - t0);
    close(fd);
}

/* Wait up to ms for mpirun to close fd (after reading and dropping what it
 * sends); exit 1 if it does not. */
static void expect_closed(int fd, int ms, const char *what)
{
    double t0 = now_s();
    char buf[64];
    for (;;) {
        int left = ms - (int)((now_s() - t0) * 1000);
        struct pollfd pf = {fd, POLLIN, 0};
        if (left <= 0 || poll(&pf, 1, left) <= 0) {
            fprintf(stderr, "fuzz rank %d: mpirun kept open %s\n", me, what);
            exit(1);
        }
        ssize_t r = recv(fd, buf, sizeof buf, 0);
        if (r <= 0)
            break;
    }
    fprintf(stderr, "fuzz rank %d: mpirun closed %s after %.1f s\n", me, what, now_s() - t0);
    close(fd);
}

static void event_stranger(void)
{
    const int magic = 0x57454654;
    unsigned char nonce[16], proof[32];
    memset(proof, 0, sizeof proof);
    /* A wrong proof. */
    int fd = connect_mpirun();
    put_ints(fd, magic, 0, 0, 2);
    struct pollfd pf = {fd, POLLIN, 0};
    if (poll(&pf, 1, 3000) <= 0)
        die(1, "mpirun took a claim of rank 0's job-event channel without a challenge");
    get(fd, nonce, sizeof nonce);
    put(fd, proof, sizeof proof);
    expect_closed(fd, 3000, "a job-event channel with a wrong proof");
    /* A rank outside the job. */
    fd = connect_mpirun();
    put_ints(fd, magic, 99, 0, 2);
    expect_closed(fd, 3000, "a job-event channel claimed for rank 99");
    /* A challenge left unanswered. */
    fd = connect_mpirun();
    put_ints(fd, magic, 0, 0, 2);
    get(fd, nonce, sizeof nonce);
    expect_closed(fd, 6000, "a job-event channel whose challenge went unanswered");
}

static void other_user(void)
{
    if (geteuid() != 0) {
        fprintf(stderr, "fuzz rank %d: other-user skipped (not root)\n", me);
        return;
    }
    pid_t pid = fork();
    if (pid < 0)
        die(1, "fork failed");
    if (pid == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0)
            die(1, "cannot become nobody");
        int fd = connect_mpirun();
        put_ints(fd, 8, me, 0, 2);
        expect_closed(fd, 3000, "a handshake from another user");
        exit(0);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        die(1, "the other user's connection was not refused");
}

static void fd_flood(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    int fds[64];
    for (int i = 0; i < 64; ++i)
        fds[i] = connect_mpirun();
    usleep(300000);
    const pid_t mp = getppid();
    double c0 = cpu_seconds_of(mp), t0 = now_s();
    usleep(1000000);
    double used = cpu_seconds_of(mp) - c0, span = now_s() - t0;
    int limit;
    const int held = fds_of(mp, &limit);
    fprintf(stderr, "fuzz rank %d: mpirun used %.2f s of CPU in %.2f s out of descriptors\n", me,
            used, span);
    fprintf(stderr, "fuzz rank %d: mpirun held %d of its %d descriptors\n", me, held, limit);
    for (int i = 0; i < 64; ++i)
        close(fds[i]);
    if (used > 0.3)
        die(1, "mpirun busy-loops when it runs out of file descriptors");
}

int main(int argc, char **argv)
{
    me = env_int("MPIRUN_RANK", -1);
    np = env_int("MPIRUN_NPROCS", 0);
    const char *host = getenv("MPIRUN_HOST");
    if (me < 0 || np < 2 || !host || !getenv("MPIRUN_PORT"))
        die(1, "run me under mpirun with at least 2 ranks");
    signal(SIGPIPE, SIG_IGN);
    mpirun_addr.sin_family = AF_INET;
    mpirun_addr.sin_port = htons((unsigned short)env_int("MPIRUN_PORT", 0));
    if (inet_pton(AF_INET, host, &mpirun_addr.sin_addr) != 1)
        die(1, "MPIRUN_HOST is not an IPv4 address");
    const char *mode = argc > 1 ? argv[1] : "";
    const int faulty = me == env_int("PMGR_FAULT_RANK", 1);
    const int size = env_int("PMGR_FUZZ_SIZE", 9);

    if (faulty && strcmp(mode, "--idle") == 0)
        idle_stranger(argc > 2 ? atoi(argv[2]) : 0);
    if (faulty && strcmp(mode, "--fd-flood") == 0)
        fd_flood();
    if (faulty && strcmp(mode, "--event-stranger") == 0)
        event_stranger();
    if (faulty && strcmp(mode, "--other-user") == 0)
        other_user();

    int fd = connect_mpirun();
    put_ints(fd, 8, me, 0, 2);
    if (faulty) {
        static char junk[1 << 16];
        if (strcmp(mode, "--oversized") == 0) {
            put_ints(fd, 7, 256 << 20, 0, 2);
            memset(junk, 'o', sizeof junk);
            for (int i = 0; i < 4096; ++i)
                put(fd, junk, sizeof junk);
            die(1, "mpirun took 256 MiB of one rank's data");
        } else if (strcmp(mode, "--flood") == 0) {
            put_ints(fd, 3, 0, 0, 1);
            memset(junk, 0xff, sizeof junk);
            for (int i = 0; i < 4096; ++i)
                put(fd, junk, sizeof junk);
            die(1, "mpirun took 256 MiB of flood");
        } else if (strcmp(mode, "--abort-text") == 0) {
            static const char text[] = "evil\033[2J\nforged line\r";
            put_ints(fd, 1, 0, 0, 1);
            close(fd);
            fd = connect_mpirun();
            put_ints(fd, 5, me, (int)sizeof text, 3);
            put(fd, text, sizeof text);
            close(fd);
            return 5;
        } else if (strcmp(mode, "--bad-opcode") == 0) {
            put_ints(fd, 99, 0, 0, 1);
            sleep(30);
            die(1, "mpirun did not refuse opcode 99 in 30 s");
        }
    }
    if (!faulty)
        usleep((useconds_t)env_int("PMGR_FUZZ_DELAY_MS", 0) * 1000);
    int reply;
    put_ints(fd, 3, 0, 0, 1);
    get(fd, &reply, sizeof reply);
    if (reply != 3)
        die(1, "bad BARRIER reply");
    if (faulty && (strcmp(mode, "--stall") == 0 || strcmp(mode, "--truncate") == 0)) {
        put_ints(fd, 7, size, 0, 2);
        put(fd, "abc", 3);
        if (strcmp(mode, "--truncate") == 0)
            return 0;
        sleep(30);
        die(1, "mpirun did not notice a stalled packet in 30 s");
    }
    if (faulty && strcmp(mode, "--larger") == 0) {
        usleep(300000);
        put_ints(fd, 7, 1 << 20, 0, 2);
        sleep(30);
        die(1, "mpirun waited 30 s for data larger than the round's");
    }
    char *mine = malloc((size_t)size + 1), *all = malloc((size_t)size * (size_t)np + 1);
    if (!mine || !all)
        die(1, "out of memory");
    memset(mine, 'a' + me % 26, (size_t)size);
    put_ints(fd, 7, size, 0, 2);
    put(fd, mine, (size_t)size);
    if (faulty && strcmp(mode, "--never-read") == 0) {
        sleep(30);
        die(1, "mpirun did not notice a rank that never reads in 30 s");
    }
    get(fd, all, (size_t)size * (size_t)np);
    for (int r = 0; r < np; ++r)
        for (int k = 0; k < size; ++k)
            if (all[(size_t)r * (size_t)size + (size_t)k] != 'a' + r % 26)
                die(1, "bad ALLGATHER reply");
    put_ints(fd, 1, 0, 0, 1);
    close(fd);
    free(mine);
    free(all);
    if (me == 0)
        printf("fuzz: job completed\n");
    return 0;
}
