/* glibc's older signal calls (BSD masks, System V dispositions, siginterrupt, sigqueue) and a
 * wait that the signalled child satisfies, printed so that a native run and a run under the
 * shim can be compared line by line. usage: sigcompat compat|childwait|interposed */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
/* A BSD mask's bit for a signal (glibc's own `sigmask` macro warns that it is deprecated). */
#define BIT(sig) (1 << ((sig) - 1))

static volatile sig_atomic_t got, code, val;

static void info(int s, siginfo_t *i, void *c) {
    (void)c;
    got = s;
    code = i->si_code;
    val = i->si_value.sival_int;
}

static void plain(int s) { got = s; }

/* The program's own sigaction on top of glibc's __sigaction, as the BEAM defines one (to add
 * SA_ONSTACK): the shim's __sigaction had called the exported sigaction, this one, which called
 * __sigaction again, until the stack ran out. */
extern int __sigaction(int, const struct sigaction *, struct sigaction *);
static int own_calls;
int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
    own_calls++;
    return __sigaction(sig, act, old);
}

static void bsd(void) {
    int old = sigblock(BIT(SIGUSR1));
    printf("sigblock answers the mask before: %x\n", old);
    raise(SIGUSR1);
    printf("blocked: got %d, siggetmask %x\n", got, siggetmask());
    sigsetmask(old);
    printf("after sigsetmask: got %d code %d\n", got, code);
}

static void queued(void) {
    union sigval v = {.sival_int = 42};
    got = 0;
    printf("sigqueue %d\n", sigqueue(getpid(), SIGUSR1, v));
    printf("got %d code %d value %d\n", got, code, val);
    got = 0;
    v.sival_int = 7;
    printf("pthread_sigqueue %d\n", pthread_sigqueue(pthread_self(), SIGUSR1, v));
    printf("got %d code %d value %d\n", got, code, val);
    int r = sigqueue(0, SIGUSR1, v);
    printf("sigqueue to pid 0: %d %s\n", r, strerrorname_np(errno));
}

/* syscall(2) with the signal-sending numbers names the same (virtual) pids as the functions. */
static void raw(void) {
    got = 0;
    printf("syscall(SYS_kill) %ld: got %d\n", syscall(SYS_kill, getpid(), SIGUSR1), got);
    got = 0;
    long r = syscall(SYS_tgkill, getpid(), gettid(), SIGUSR1);
    printf("syscall(SYS_tgkill) %ld: got %d\n", r, got);
    got = 0;
    printf("syscall(SYS_tkill) %ld: got %d\n", syscall(SYS_tkill, gettid(), SIGUSR1), got);
}

static void sysv(void) {
    sighold(SIGUSR2);
    signal(SIGUSR2, plain);
    got = 0;
    kill(getpid(), SIGUSR2);
    printf("held: got %d\n", got);
    sigrelse(SIGUSR2);
    printf("released: got %d\n", got);
    printf("sigset(SIG_HOLD) answers SIG_HOLD: %d\n", sigset(SIGUSR2, SIG_HOLD) == SIG_HOLD);
    printf("sigset(handler) answers SIG_HOLD: %d\n", sigset(SIGUSR2, plain) == SIG_HOLD);
    sigignore(SIGUSR2);
    got = 0;
    kill(getpid(), SIGUSR2);
    printf("ignored: got %d\n", got);
    siginterrupt(SIGUSR1, 1);
    struct sigaction now;
    sigaction(SIGUSR1, 0, &now);
    printf("after siginterrupt(1): SA_RESTART %d\n", !!(now.sa_flags & SA_RESTART));
    got = 0;
    gsignal(SIGUSR1);
    printf("gsignal: got %d\n", got);
}

static void pause_for_child(void) {
    pid_t c = fork();
    if (c == 0) {
        pause();
        _exit(0);
    }
    signal(SIGCHLD, plain);
    sigblock(BIT(SIGCHLD));
    kill(c, SIGTERM);
    got = 0;
    sigpause(SIGCHLD); /* _GNU_SOURCE: the XSI form, the mask less SIGCHLD */
    int st;
    pid_t w = waitpid(c, &st, 0);
    printf("sigpause woke by %d; child reaped %d, killed by %d\n", got, w == c, WTERMSIG(st));
}

static void compat(void) {
    struct sigaction sa = {0};
    sa.sa_sigaction = info;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR1, &sa, 0);
    bsd();
    queued();
    raw();
    sysv();
    pause_for_child();
}

/* A blocking wait whose child ends answers that child, its SIGCHLD handler run on the way
 * back, rather than EINTR; so a later wait for another child gets that one. */
static void childwait(void) {
    struct sigaction sa = {0};
    sa.sa_handler = plain;
    sigaction(SIGCHLD, &sa, 0);
    pid_t first = fork();
    if (first == 0) {
        usleep(100000);
        _exit(3);
    }
    int st;
    pid_t w = wait(&st);
    printf("wait: the child %d, status %d, handler ran %d\n", w == first, WEXITSTATUS(st), got);
    pid_t second = fork();
    if (second == 0) {
        pause();
        _exit(0);
    }
    usleep(100000);
    kill(second, SIGTERM);
    w = waitpid(-1, &st, 0);
    printf("waitpid(-1): the second %d, killed by %d\n", w == second, WTERMSIG(st));
}

static void interposed(void) {
    struct sigaction sa = {0};
    sa.sa_handler = plain;
    int before = own_calls;
    printf("sigaction through the program's own: %d\n", sigaction(SIGUSR2, &sa, 0));
    raise(SIGUSR2);
    printf("its calls %d, handler ran %d\n", own_calls - before, got == SIGUSR2);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *s = argc > 1 ? argv[1] : "";
    if (!strcmp(s, "compat")) compat();
    else if (!strcmp(s, "childwait")) childwait();
    else if (!strcmp(s, "interposed")) interposed();
    else {
        fprintf(stderr, "unknown scenario %s\n", s);
        return 2;
    }
    return 0;
}
