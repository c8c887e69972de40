/* Child processes, run natively and under the shim: each mode prints only what holds in both
 * worlds (no pids, no times), and orders its lines by waiting, so the output is the same. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <semaphore.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static void report(const char *what, int status) {
    if (WIFEXITED(status))
        printf("%s: exited %d\n", what, WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        printf("%s: killed by signal %d\n", what, WTERMSIG(status));
    else
        printf("%s: status %#x\n", what, status);
}

static int mode_wait(void) {
    pid_t me = getpid();
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); return 1; }
    if (pid == 0) {
        printf("child: getppid is the parent: %d\n", getppid() == me);
        printf("child: own pid differs: %d\n", getpid() != me);
        exit(3);
    }
    int status = 0;
    pid_t got = waitpid(pid, &status, 0);
    printf("parent: waitpid returned the child: %d\n", got == pid);
    report("parent: child", status);
    int r = waitpid(pid, &status, 0);
    printf("parent: second waitpid: %d %s\n", r, strerror(errno));
    r = wait(&status);
    printf("parent: wait with no children: %d %s\n", r, strerror(errno));
    /* Two children, waited for by wait(): both statuses come back. */
    pid_t a = fork();
    if (a == 0) _exit(10);
    int sa = 0;
    waitpid(a, &sa, 0);
    pid_t b = fork();
    if (b == 0) { raise(SIGTERM); _exit(0); }
    int sb = 0;
    pid_t w = wait(&sb);
    printf("parent: wait returned the second: %d\n", w == b);
    report("parent: first", sa);
    report("parent: second", sb);
    /* SIGKILL from the parent to a child blocked in a long sleep. */
    pid_t c = fork();
    if (c == 0) { sleep(1000); _exit(0); }
    printf("parent: kill: %d\n", kill(c, SIGKILL));
    int sc = 0;
    waitpid(c, &sc, 0);
    report("parent: sleeper", sc);
    siginfo_t info;
    memset(&info, 0, sizeof info);
    pid_t d = fork();
    if (d == 0) _exit(4);
    printf("parent: waitid: %d\n", waitid(P_PID, d, &info, WEXITED));
    printf("parent: waitid pid, code, status: %d %d %d\n", info.si_pid == d,
           info.si_code == CLD_EXITED, info.si_status);
    return 0;
}

static volatile sig_atomic_t handled;

static void on_child(int sig) {
    (void)sig;
    handled++;
}

static int mode_sigchld(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_child;
    sigaction(SIGCHLD, &sa, NULL);
    pid_t pid = fork();
    if (pid == 0) _exit(0);
    /* Natively the signal may come before the first sleep starts; either way the handler
     * runs while the parent sleeps in short steps. */
    while (!handled) usleep(1000);
    printf("handler ran: %d\n", (int)handled);
    int status = 0;
    printf("waitpid returned the child: %d\n", waitpid(pid, &status, 0) == pid);
    report("child", status);
    struct sigaction old;
    sigaction(SIGCHLD, NULL, &old);
    printf("handler still installed: %d\n", old.sa_handler == on_child);
    return 0;
}

static volatile sig_atomic_t chld_code, chld_status, chld_pid;

static void on_child_info(int sig, siginfo_t *si, void *uc) {
    (void)sig; (void)uc;
    chld_code = si->si_code;
    chld_status = si->si_status;
    chld_pid = si->si_pid;
}

/* SIGCHLD's siginfo says how each child ended: by _exit, by exit, killed by its parent's
 * SIGTERM, ended by a signal it raised itself (the default action). */
static int mode_sigchldinfo(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_child_info;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGCHLD, &sa, NULL);
    for (int k = 0; k < 4; k++) {
        chld_code = 0;
        pid_t pid = fork();
        if (pid == 0) {
            if (k == 0) _exit(3);
            if (k == 1) exit(5);
            if (k == 3) raise(SIGUSR1);
            for (;;) pause();
        }
        if (k == 2) kill(pid, SIGTERM);
        while (!chld_code) usleep(1000);
        const char *code = chld_code == CLD_EXITED ? "CLD_EXITED"
                         : chld_code == CLD_KILLED ? "CLD_KILLED" : "other";
        printf("child %d: %s status %d, its pid: %d\n", k, code, (int)chld_status,
               chld_pid == pid);
        int status = 0;
        waitpid(pid, &status, 0);
        report("child", status);
    }
    return 0;
}

static int mode_pipe(void) {
    int fds[2];
    if (pipe(fds) != 0) { perror("pipe"); return 1; }
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
        const char *msg = "through the pipe";
        write(fds[1], msg, strlen(msg));
        nanosleep(&ts, NULL);
        write(fds[1], "!", 1);
        _exit(0);
    }
    close(fds[1]);
    char buf[64];
    ssize_t n = read(fds[0], buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    printf("parent read: %s\n", buf);
    struct pollfd p = {fds[0], POLLIN, 0};
    int r = poll(&p, 1, -1);
    n = read(fds[0], buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    printf("poll %d, then read: %s\n", r, buf);
    n = read(fds[0], buf, sizeof buf);
    printf("after the child's exit: read %zd\n", n);
    int status = 0;
    waitpid(pid, &status, 0);
    report("child", status);
    return 0;
}

static int mode_exec(const char *self) {
    char me[32];
    snprintf(me, sizeof me, "%d", getpid());
    pid_t pid = fork();
    if (pid == 0) {
        char *argv[] = {"fork", "exec-child", me, NULL};
        execv(self, argv);
        perror("execv");
        _exit(99);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    report("exec'd child", status);
    char *argv[] = {"nothing", NULL};
    int r = execv("/nonexistent/program", argv);
    printf("exec of a missing file: %d %s\n", r, strerror(errno));
    return 0;
}

static int mode_exec_child(const char *parent) {
    printf("exec'd: getppid is the parent: %d\n", getppid() == atoi(parent));
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    fprintf(stderr, "exec'd: realtime %ld\n", (long)ts.tv_sec);
    return 6;
}

/* The variadic exec calls: execl with many arguments, execlp searching PATH, execle with its
 * own environment; each in a child whose status says it ran. */
static int mode_execl(const char *self) {
    int status = 0;
    pid_t pid = fork();
    if (pid == 0) {
        execl(self, "fork", "exec-args", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", (char *)NULL);
        _exit(99);
    }
    waitpid(pid, &status, 0);
    report("execl child", status);
    pid = fork();
    if (pid == 0) {
        execlp("sh", "sh", "-c", "echo execlp found sh on PATH; exit 4", (char *)NULL);
        _exit(99);
    }
    waitpid(pid, &status, 0);
    report("execlp child", status);
    pid = fork();
    if (pid == 0) {
        char *env[] = {"WEFT_TEST_VAR=from execle", NULL};
        execle(self, "fork", "exec-env", (char *)NULL, env);
        _exit(99);
    }
    waitpid(pid, &status, 0);
    report("execle child", status);
    int r = execlp("no-such-program-here", "x", (char *)NULL);
    printf("execlp of a missing program: %d %s\n", r, strerror(errno));
    r = execl("/nonexistent/program", "x", (char *)NULL);
    printf("execl of a missing file: %d %s\n", r, strerror(errno));
    return 0;
}

static int mode_exec_args(int argc, char **argv) {
    printf("exec'd with %d arguments:", argc);
    for (int i = 2; i < argc; i++) printf(" %s", argv[i]);
    printf("\n");
    return argc;
}

static int mode_exec_env(void) {
    const char *v = getenv("WEFT_TEST_VAR");
    printf("exec'd with WEFT_TEST_VAR=%s, HOME %s\n", v ? v : "(unset)",
           getenv("HOME") ? "set" : "unset");
    return 8;
}

static int mode_system(void) {
    printf("system(NULL): %d\n", system(NULL) != 0);
    fflush(stdout);
    report("system(exit 3)", system("exit 3"));
    report("system(echo)", system("echo from the shell"));
    report("system(kill)", system("kill -9 $$"));
    return 0;
}

static int mode_spawn(void) {
    pid_t pid;
    char *argv[] = {"sh", "-c", "echo spawned; exit 5", NULL};
    int r = posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ);
    int status = 0;
    int w = waitpid(pid, &status, 0) == pid;
    printf("posix_spawn: %d\n", r);
    printf("waitpid: %d\n", w);
    report("spawned", status);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 5, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, 1, 7);
    posix_spawn_file_actions_addclose(&fa, 5);
    char *argv2[] = {"sh", "-c", "echo to seven >&7; exec 5</dev/null && echo five was closed", NULL};
    r = posix_spawnp(&pid, "sh", &fa, NULL, argv2, environ);
    waitpid(pid, &status, 0);
    printf("posix_spawnp: %d\n", r);
    report("spawnp", status);
    posix_spawn_file_actions_destroy(&fa);
    char *argv3[] = {"x", NULL};
    printf("missing: %d\n", posix_spawn(&pid, "/nonexistent/program", NULL, NULL, argv3, environ) == ENOENT);
    printf("missing on PATH: %d\n", posix_spawnp(&pid, "no-such-program-here", NULL, NULL, argv3, environ) == ENOENT);
    return 0;
}

/* A connection shared by parent and child stays one socket: the parent closes its copy, the
 * child writes on its own and exits, and the peer reads the data, then EOF. */
static int mode_socket(int port) {
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(ls, (struct sockaddr *)&a, sizeof a) != 0 || listen(ls, 4) != 0) {
        perror("bind/listen");
        return 1;
    }
    int cl = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(cl, (struct sockaddr *)&a, sizeof a) != 0) { perror("connect"); return 1; }
    int conn = accept(ls, NULL, NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(cl);
        close(ls);
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
        const char *msg = "from the child";
        _exit(write(conn, msg, strlen(msg)) == (ssize_t)strlen(msg) ? 0 : 1);
    }
    printf("parent: close its copy: %d\n", close(conn));
    char buf[64];
    ssize_t n = read(cl, buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    printf("peer read: %s\n", buf);
    n = read(cl, buf, sizeof buf);
    printf("peer read after the child's exit: %zd\n", n);
    int status = 0;
    waitpid(pid, &status, 0);
    report("child", status);
    return 0;
}

/* popen both ways: the shell's output read line by line, then lines written to a filter whose
 * output is ours; pclose answers each child's status. */
static int mode_popen(void) {
    FILE *f = popen("echo one; echo two; exit 3", "r");
    if (!f) { perror("popen"); return 1; }
    char line[64];
    while (fgets(line, sizeof line, f)) printf("popen read: %s", line);
    report("pclose(r)", pclose(f));
    fflush(stdout);
    f = popen("tr a-z A-Z", "we");
    if (!f) { perror("popen"); return 1; }
    fputs("shouted through tr\n", f);
    report("pclose(w)", pclose(f));
    printf("popen with a bad mode: %s\n", popen("true", "x") == NULL ? "NULL" : "a stream");
    return 0;
}

/* A shell pipeline: three programs joined by pipes the shell makes, each exec'd onto them. */
static int mode_pipeline(void) {
    fflush(stdout);
    report("pipeline", system("printf 'b\\nc\\na\\n' | sort | tr a-z A-Z"));
    report("pipeline status", system("true | false"));
    return 0;
}

/* Learning whether an exec worked from a close-on-exec pipe (as posix_spawn and Python's
 * subprocess do): end-of-file as soon as it did (the exec'd child sleeps a second before it
 * exits), the child's errno when it did not. */
static int exec_reported(const char *path) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) { perror("pipe2"); return 1; }
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        char *argv[] = {"fork", "exec-quiet", NULL};
        execv(path, argv);
        int e = errno;
        write(p[1], &e, sizeof e);
        _exit(99);
    }
    close(p[1]);
    int e = 0;
    ssize_t n = read(p[0], &e, sizeof e);
    close(p[0]);
    int status = 0;
    int running = waitpid(pid, &status, WNOHANG) == 0;
    waitpid(pid, &status, 0);
    if (n == 0) printf("the child was still running when the pipe ended: %d\n", running);
    printf("exec of %s: the pipe read %zd bytes%s%s\n", strcmp(path, "/nonexistent/program") ? "the program" : "a missing file",
           n, n > 0 ? ", errno " : "", n > 0 ? strerror(e) : "");
    report("reported child", status);
    return 0;
}

static int mode_cloexec(const char *self) {
    exec_reported(self);
    exec_reported("/nonexistent/program");
    return 0;
}

/* A pipe on the child's stdout and a socketpair end at its own number, both across exec: the
 * new image writes them with stdio and write(2), the parent reads them with stdio. */
static int mode_inherit(const char *self) {
    int p[2], sv[2];
    if (pipe(p) != 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) { perror("pipe"); return 1; }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        close(sv[0]);
        char num[16];
        snprintf(num, sizeof num, "%d", sv[1]);
        char *argv[] = {"fork", "exec-print", num, NULL};
        execv(self, argv);
        _exit(99);
    }
    close(p[1]);
    close(sv[1]);
    FILE *in = fdopen(p[0], "r");
    FILE *sock = fdopen(sv[0], "r");
    char line[64];
    while (fgets(line, sizeof line, in)) printf("child's stdout: %s", line);
    while (fgets(line, sizeof line, sock)) printf("child's socket: %s", line);
    fclose(in);
    fclose(sock);
    int status = 0;
    waitpid(pid, &status, 0);
    report("inheriting child", status);
    return 0;
}

static int mode_exec_print(const char *fd) {
    printf("printf, fd 1 is %s\n", isatty(1) ? "a tty" : "not a tty");
    fputs("fputs, line buffered\n", stdout);
    fflush(stdout);
    write(1, "write(2)\n", 9);
    int s = atoi(fd);
    write(s, "hello over the socketpair\n", 26);
    dprintf(s, "dprintf: %d %s %.1f %ld %ld %ld %.3f\n", 7, "seven", 7.5, 1L, 2L, 3L, 0.125);
    dprintf(1, "dprintf on stdout: %c\n", 'x');
    FILE *f = fdopen(s, "w");
    fprintf(f, "fprintf on fdopen of it\n");
    fclose(f);
    return 4;
}

/* A child that closes every descriptor from 3 up (as subprocess does before it execs) closes
 * its copy of the parent's pipe: the parent's read ends then, a second before the child
 * execs, and the exec works. Once through close_range(), once through the raw system call. */
static int closed_by_range(const char *self, int raw) {
    int p[2];
    if (pipe(p) != 0) { perror("pipe"); return 1; }
    pid_t pid = fork();
    if (pid == 0) {
        int r = raw ? (int)syscall(SYS_close_range, 3, ~0U, 0) : close_range(3, ~0U, 0);
        if (r != 0) _exit(98);
        sleep(1);
        char *argv[] = {"fork", "exec-quiet", NULL};
        execv(self, argv);
        _exit(99);
    }
    close(p[1]);
    char c;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ssize_t n = read(p[0], &c, 1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    int before_exec = t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9 < 0.5;
    int status = 0;
    waitpid(pid, &status, 0);
    printf("%s: read %zd, before the child's exec: %d\n", raw ? "raw close_range" : "close_range", n, before_exec);
    report("closing child", status);
    close(p[0]);
    return 0;
}

static int mode_closerange(const char *self) {
    closed_by_range(self, 0);
    closed_by_range(self, 1);
    return 0;
}

/* A child puts /dev/null at every descriptor number from `from` to its limit (raw `dup2` when
 * `raw`), as a runner giving its exec'd image fixed descriptors does, and execs an image that
 * prints its host name: under the shim still the node's, though the shim's own descriptor
 * (fd 1021) was among the numbers. */
static int dup2_over(const char *self, int from, int raw) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("/dev/null", O_RDONLY);
        struct rlimit r;
        getrlimit(RLIMIT_NOFILE, &r);
        for (int i = from; i < (int)r.rlim_cur; i++)
            if (i != fd && (raw ? syscall(SYS_dup2, fd, i) : dup2(fd, i)) != i) _exit(98);
        char *argv[] = {"fork", "exec-host", NULL};
        execv(self, argv);
        _exit(99);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    report(raw ? "raw dup2ing child" : "dup2ing child", status);
    return 0;
}

static int mode_exec_host(void) {
    char host[64] = "";
    gethostname(host, sizeof host);
    printf("exec'd image's host: %s\n", host);
    return 0;
}

/* A forked child (no exec) puts a pipe on its stdout and stdin and uses stdio on them. */
static int mode_redirect(void) {
    int out[2], in[2];
    if (pipe(out) != 0 || pipe(in) != 0) { perror("pipe"); return 1; }
    fflush(stdout);
    setvbuf(stdout, NULL, _IOFBF, 4096);
    pid_t pid = fork();
    if (pid == 0) {
        printf("buffered before the dup2\n");
        dup2(out[1], 1);
        dup2(in[0], 0);
        close(out[0]); close(out[1]); close(in[0]); close(in[1]);
        char line[64];
        while (fgets(line, sizeof line, stdin)) printf("child got: %s", line);
        puts("child puts at the end");
        exit(0);
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    close(out[1]);
    close(in[0]);
    FILE *to = fdopen(in[1], "w");
    fputs("first\nsecond\n", to);
    fclose(to);
    FILE *from = fdopen(out[0], "r");
    char line[64];
    while (fgets(line, sizeof line, from)) printf("parent read: %s", line);
    fclose(from);
    int status = 0;
    waitpid(pid, &status, 0);
    report("redirected child", status);
    return 0;
}

/* A pipe holds 64 KiB: a non-blocking write takes what fits, then EAGAIN, and the pipe is not
 * writable until a reader makes a page of room; a blocking writer waits for its reader. */
static int mode_pipefull(void) {
    static char big[200000];
    int p[2];
    if (pipe2(p, O_NONBLOCK) != 0) { perror("pipe2"); return 1; }
    printf("non-blocking write of 100000: %zd\n", write(p[1], big, 100000));
    ssize_t r = write(p[1], big, 100);
    printf("then 100 more: %zd %s\n", r, r < 0 && errno == EAGAIN ? "EAGAIN" : "?");
    struct pollfd w = {p[1], POLLOUT, 0};
    printf("writable when full: %d\n", poll(&w, 1, 0));
    printf("read: %zd\n", read(p[0], big, 4096));
    printf("writable after a page was read: %d\n", poll(&w, 1, 0));
    printf("write of a page: %zd\n", write(p[1], big, 4096));
    close(p[0]);
    close(p[1]);
    if (pipe(p) != 0) { perror("pipe"); return 1; }
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        ssize_t n = write(p[1], big, sizeof big);
        _exit(n == (ssize_t)sizeof big ? 0 : 1);
    }
    close(p[1]);
    sleep(1);
    int status = 0;
    printf("the writer waits for its reader: %d\n", waitpid(pid, &status, WNOHANG) == 0);
    long total = 0;
    ssize_t k;
    while ((k = read(p[0], big, sizeof big)) > 0) total += k;
    waitpid(pid, &status, 0);
    printf("read %ld bytes in all\n", total);
    report("blocking writer", status);
    return 0;
}

/* The classic pipe deadlock (never run natively: it hangs there): the parent waits for its
 * child before reading the child's output, and the child blocks on the full pipe. */
static int mode_waitfirst(void) {
    static char big[200000];
    int p[2];
    if (pipe(p) != 0) { perror("pipe"); return 1; }
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        write(p[1], big, sizeof big);
        _exit(0);
    }
    close(p[1]);
    int status = 0;
    waitpid(pid, &status, 0);
    printf("read %zd\n", read(p[0], big, sizeof big));
    return 0;
}

/* A write with no reader left: SIGPIPE kills the writer by default; ignored, or with
 * MSG_NOSIGNAL on a socket, the write answers EPIPE. */
static int mode_sigpipe(void) {
    int p[2];
    if (pipe(p) != 0) { perror("pipe"); return 1; }
    close(p[0]);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        write(p[1], "x", 1);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    report("writer to a closed pipe", status);
    signal(SIGPIPE, SIG_IGN);
    ssize_t r = write(p[1], "x", 1);
    printf("ignored: %zd %s\n", r, r < 0 && errno == EPIPE ? "EPIPE" : "?");
    signal(SIGPIPE, SIG_DFL);
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    close(sv[1]);
    r = send(sv[0], "x", 1, MSG_NOSIGNAL);
    printf("MSG_NOSIGNAL: %zd %s\n", r, r < 0 && errno == EPIPE ? "EPIPE" : "?");
    return 0;
}

/* Process-shared waits, as PostgreSQL's: in memory mapped shared before a fork, the parent
 * waits on a semaphore a child posts, then on a shared futex (no FUTEX_PRIVATE_FLAG) the child
 * wakes. */
static int mode_pshared(void) {
    struct shared { sem_t sem; atomic_int word; } *sh =
        mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    sem_init(&sh->sem, 1, 0);
    atomic_store(&sh->word, 0);
    pid_t c = fork();
    if (c == 0) {
        usleep(10000);
        printf("child posts\n");
        sem_post(&sh->sem);
        usleep(10000);
        atomic_store(&sh->word, 1);
        printf("child wakes the futex\n");
        syscall(SYS_futex, &sh->word, FUTEX_WAKE, 1, NULL, NULL, 0);
        _exit(0);
    }
    sem_wait(&sh->sem);
    printf("parent: semaphore taken\n");
    while (atomic_load(&sh->word) == 0)
        syscall(SYS_futex, &sh->word, FUTEX_WAIT, 0, NULL, NULL, 0);
    printf("parent: futex woken, word %d\n", atomic_load(&sh->word));
    int status;
    waitpid(c, &status, 0);
    printf("child exited %d\n", WEXITSTATUS(status));
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *m = argc > 1 ? argv[1] : "wait";
    if (!strcmp(m, "wait")) return mode_wait();
    if (!strcmp(m, "sigchld")) return mode_sigchld();
    if (!strcmp(m, "sigchldinfo")) return mode_sigchldinfo();
    if (!strcmp(m, "pipe")) return mode_pipe();
    if (!strcmp(m, "exec")) return mode_exec(argv[0]);
    if (!strcmp(m, "exec-child")) return mode_exec_child(argc > 2 ? argv[2] : "0");
    if (!strcmp(m, "execl")) return mode_execl(argv[0]);
    if (!strcmp(m, "exec-args")) return mode_exec_args(argc, argv);
    if (!strcmp(m, "exec-env")) return mode_exec_env();
    if (!strcmp(m, "system")) return mode_system();
    if (!strcmp(m, "spawn")) return mode_spawn();
    if (!strcmp(m, "closerange")) return mode_closerange(argv[0]);
    if (!strcmp(m, "redirect")) return mode_redirect();
    if (!strcmp(m, "pipefull")) return mode_pipefull();
    if (!strcmp(m, "waitfirst")) return mode_waitfirst();
    if (!strcmp(m, "sigpipe")) return mode_sigpipe();
    if (!strcmp(m, "popen")) return mode_popen();
    if (!strcmp(m, "pipeline")) return mode_pipeline();
    if (!strcmp(m, "cloexec")) return mode_cloexec(argv[0]);
    if (!strcmp(m, "exec-quiet")) return sleep(1);
    if (!strcmp(m, "exec-host")) return mode_exec_host();
    if (!strcmp(m, "dup2over")) return dup2_over(argv[0], 1000, 0) | dup2_over(argv[0], 1000, 1);
    if (!strcmp(m, "dup2all")) return dup2_over(argv[0], 3, 0);
    if (!strcmp(m, "inherit")) return mode_inherit(argv[0]);
    if (!strcmp(m, "exec-print")) return mode_exec_print(argc > 2 ? argv[2] : "1");
    if (!strcmp(m, "pshared")) return mode_pshared();
    if (!strcmp(m, "socket")) return mode_socket(argc > 2 ? atoi(argv[2]) : 7000);
    fprintf(stderr, "unknown mode %s\n", m);
    return 2;
}
