/* Signals and timers: one scenario per behaviour, printing only what must be observed the same
 * natively and under the shim (no absolute times). usage: signals SCENARIO */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t handled, last_sig, last_code, pid_ok, ticks;
static volatile long tick_ns[8];

static long mono_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static void on_info(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    handled++;
    last_sig = sig;
    last_code = si->si_code;
    pid_ok = si->si_pid == getpid();
}

static void on_plain(int sig) {
    handled++;
    last_sig = sig;
}

static void on_tick(int sig) {
    (void)sig;
    if (ticks < 8)
        tick_ns[ticks] = mono_ns();
    ticks++;
}

static void install(int sig, void (*h)(int), int flags) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

static void install_info(int sig) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_info;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

static const char *code_name(int c) {
    switch (c) {
    case SI_USER: return "SI_USER";
    case SI_TKILL: return "SI_TKILL";
    case SI_TIMER: return "SI_TIMER";
    case SI_KERNEL: return "SI_KERNEL";
    default: return "other";
    }
}

static void block(int sig, int how) {
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    sigprocmask(how, &s, NULL);
}

static int blocked(int sig) {
    sigset_t s;
    sigprocmask(SIG_BLOCK, NULL, &s);
    return sigismember(&s, sig);
}

static void raise_info(void) {
    install_info(SIGUSR1);
    raise(SIGUSR1);
    printf("raise: handled=%d sig=%d code=%s\n", handled, last_sig, code_name(last_code));
    struct sigaction old;
    sigaction(SIGUSR1, NULL, &old);
    printf("raise: handler kept=%d siginfo=%d\n", old.sa_sigaction == on_info,
           !!(old.sa_flags & SA_SIGINFO));
}

static void kill_self(void) {
    install_info(SIGUSR2);
    int r = kill(getpid(), SIGUSR2);
    printf("kill: ret=%d handled=%d sig=%d code=%s pid_ok=%d\n", r, handled, last_sig,
           code_name(last_code), pid_ok);
    printf("kill 0: %d\n", kill(getpid(), 0));
    errno = 0;
    r = kill(getpid(), 999);
    printf("kill bad signal: %d %s\n", r, strerror(errno));
}

static void mask(void) {
    install(SIGUSR1, on_plain, 0);
    block(SIGUSR1, SIG_BLOCK);
    raise(SIGUSR1);
    sigset_t p;
    sigpending(&p);
    printf("mask: blocked=%d handled=%d pending=%d\n", blocked(SIGUSR1), handled,
           sigismember(&p, SIGUSR1));
    raise(SIGUSR1); /* a standard signal is pending once */
    block(SIGUSR1, SIG_UNBLOCK);
    printf("mask: after unblock handled=%d\n", handled);
    sigpending(&p);
    printf("mask: pending now=%d\n", sigismember(&p, SIGUSR1));
}

static void ignore(void) {
    signal(SIGUSR1, SIG_IGN);
    raise(SIGUSR1);
    signal(SIGCHLD, SIG_DFL);
    raise(SIGCHLD); /* ignored by default */
    printf("ignore: survived\n");
    void (*old)(int) = signal(SIGUSR1, on_plain);
    printf("ignore: old was SIG_IGN=%d\n", old == SIG_IGN);
    raise(SIGUSR1);
    printf("ignore: handled=%d\n", handled);
}

static void term(void) {
    printf("term: sending\n");
    fflush(stdout);
    kill(getpid(), SIGTERM);
    printf("term: survived (wrong)\n");
}

static pthread_t main_thread;

static void *poke_later(void *arg) {
    usleep((long)arg);
    pthread_kill(main_thread, SIGUSR1);
    return NULL;
}

static void eintr_sleep(void) {
    install(SIGUSR1, on_plain, 0);
    main_thread = pthread_self();
    pthread_t t;
    pthread_create(&t, NULL, poke_later, (void *)100000L);
    struct timespec req = {2, 0}, rem = {0, 0};
    int r = nanosleep(&req, &rem);
    int e = errno;
    printf("eintr: nanosleep=%d %s handled=%d rem_in_range=%d\n", r, strerror(e), handled,
           rem.tv_sec >= 1 && rem.tv_sec < 2);
    pthread_join(t, NULL);
}

static int udp_pair(int *recv_fd, struct sockaddr_in *addr) {
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    if (bind(s, (struct sockaddr *)&a, sizeof a) != 0)
        perror("bind");
    socklen_t len = sizeof a;
    getsockname(s, (struct sockaddr *)&a, &len);
    *recv_fd = s;
    *addr = a;
    return socket(AF_INET, SOCK_DGRAM, 0);
}

static struct sockaddr_in dest;
static int sender;

static void *poke_then_send(void *arg) {
    (void)arg;
    usleep(100000);
    pthread_kill(main_thread, SIGUSR1);
    usleep(100000);
    sendto(sender, "hello", 5, 0, (struct sockaddr *)&dest, sizeof dest);
    return NULL;
}

/* A blocking recv interrupted by a handler: EINTR without SA_RESTART, restarted with it. */
static void eintr_recv(int restart) {
    install(SIGUSR1, on_plain, restart ? SA_RESTART : 0);
    main_thread = pthread_self();
    int r;
    sender = udp_pair(&r, &dest);
    pthread_t t;
    pthread_create(&t, NULL, poke_then_send, NULL);
    char buf[16];
    ssize_t n = recv(r, buf, sizeof buf, 0);
    int e = errno;
    printf("recv%s: n=%zd %s handled=%d\n", restart ? " SA_RESTART" : "", n,
           n < 0 ? strerror(e) : "ok", handled);
    if (n < 0) {
        n = recv(r, buf, sizeof buf, 0);
        printf("recv again: n=%zd\n", n);
    }
    pthread_join(t, NULL);
}

static void *kill_later(void *arg) {
    usleep((long)arg);
    kill(getpid(), SIGUSR1);
    return NULL;
}

static void suspend(void) {
    install(SIGUSR1, on_plain, 0);
    block(SIGUSR1, SIG_BLOCK);
    pthread_t t;
    pthread_create(&t, NULL, kill_later, (void *)50000L);
    sigset_t none;
    sigemptyset(&none);
    int r = sigsuspend(&none);
    printf("suspend: ret=%d %s handled=%d still blocked=%d\n", r, strerror(errno), handled,
           blocked(SIGUSR1));
    pthread_join(t, NULL);
}

static void waitsig(void) {
    block(SIGUSR1, SIG_BLOCK);
    pthread_t t;
    pthread_create(&t, NULL, kill_later, (void *)50000L);
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    siginfo_t si;
    int r = sigwaitinfo(&s, &si);
    printf("sigwaitinfo: %d code=%s pid_ok=%d\n", r, code_name(si.si_code),
           si.si_pid == getpid());
    struct timespec zero = {0, 10000000};
    errno = 0;
    r = sigtimedwait(&s, &si, &zero);
    printf("sigtimedwait: %d %s\n", r, strerror(errno));
    pthread_join(t, NULL);
}

/* A real signal from the kernel (here sent with raw system calls, at a moment the simulation
 * does not choose) must not reach the program: prints 0 under the shim (1 natively). */
/* A system call made by the `syscall` instruction itself, which no hook and no routing of
 * syscall(2) sees: the kernel's own ids and the kernel's own tgkill. */
static long kernel_call(long nr, long a, long b, long c) {
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}

static void real_signal(void) {
    install(SIGUSR1, on_plain, 0);
    long pid = kernel_call(SYS_getpid, 0, 0, 0), tid = kernel_call(SYS_gettid, 0, 0, 0);
    kernel_call(SYS_tgkill, pid, tid, SIGUSR1);
    printf("real: handled=%d\n", handled);
}

static void sigfd(void) {
    block(SIGUSR1, SIG_BLOCK);
    sigset_t m;
    sigemptyset(&m);
    sigaddset(&m, SIGUSR1);
    int fd = signalfd(-1, &m, 0);
    raise(SIGUSR1);
    struct pollfd p = {fd, POLLIN, 0};
    int pr = poll(&p, 1, 1000);
    printf("signalfd: poll=%d revents=%d\n", pr, p.revents);
    struct signalfd_siginfo si;
    ssize_t n = read(fd, &si, sizeof si);
    printf("signalfd: read=%zd signo=%u code=%s pid_ok=%d\n", n, si.ssi_signo,
           code_name(si.ssi_code), si.ssi_pid == (uint32_t)getpid());
    int nb = signalfd(-1, &m, SFD_NONBLOCK);
    errno = 0;
    n = read(nb, &si, sizeof si);
    printf("signalfd: empty nonblocking read=%zd %s\n", n, strerror(errno));
    pthread_t t;
    pthread_create(&t, NULL, kill_later, (void *)50000L);
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 3}, out;
    epoll_ctl(ep, EPOLL_CTL_ADD, nb, &ev);
    int k = epoll_wait(ep, &out, 1, 2000);
    printf("signalfd: epoll_wait=%d data=%lu\n", k, (unsigned long)out.data.u64);
    n = read(nb, &si, sizeof si);
    printf("signalfd: read=%zd code=%s pid_ok=%d handled=%d\n", n, code_name(si.ssi_code),
           si.ssi_pid == (uint32_t)getpid(), handled);
    pthread_join(t, NULL);
    close(ep);
    close(nb);
    close(fd);
}

static int self_pipe[2];

static void on_child(int sig) {
    (void)sig;
    write(self_pipe[1], "c", 1);
}

/* The self-pipe trick (Python's signal.set_wakeup_fd, multiprocessing's forkserver): an epoll
 * set that also holds a descriptor the shim leaves real (a datagram socketpair end), a SIGCHLD
 * handler that writes to a pipe in the set, and a child that makes calls before it exits (each
 * makes the waiter look at its real descriptor again). The wait without a timeout must end
 * with EINTR, and then the pipe's event. */
static void selfpipe(int rounds) {
    pipe(self_pipe);
    int real[2];
    socketpair(AF_UNIX, SOCK_DGRAM, 0, real);
    install(SIGCHLD, on_child, 0);
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 1};
    epoll_ctl(ep, EPOLL_CTL_ADD, self_pipe[0], &ev);
    struct epoll_event rev = {.events = EPOLLIN, .data.u64 = 2};
    epoll_ctl(ep, EPOLL_CTL_ADD, real[0], &rev);
    pid_t pid = fork();
    if (pid == 0) {
        /* Long enough for the parent to be in epoll_wait natively, even on a loaded machine
         * (else the handler runs first and the wait sees the pipe without EINTR). */
        struct timespec tick = {0, 50000000};
        nanosleep(&tick, NULL);
        for (int i = 0; i < rounds; i++) sched_yield();
        _exit(3);
    }
    struct epoll_event out;
    int n;
    while ((n = epoll_wait(ep, &out, 1, -1)) < 0 && errno == EINTR) puts("epoll_wait: EINTR");
    puts(n == 1 && out.data.u64 == 1 ? "the pipe woke epoll_wait" : "something else woke it");
    int st;
    waitpid(pid, &st, 0);
    printf("child exit %d\n", WEXITSTATUS(st));
}

static volatile sig_atomic_t rt_seen[8], rt_count;

static void on_rt(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    if (rt_count < 8) rt_seen[rt_count] = (sig - SIGRTMIN) * 100 + si->si_value.sival_int;
    rt_count++;
}

/* Real-time signals queue: three sigqueue'd instances of SIGRTMIN and two of SIGRTMIN+1,
 * sent while blocked, are each delivered once unblocked, lowest signal first, each signal's
 * in the order sent with its own value; a sigwaitinfo takes one instance at a time. */
static void rtqueue(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGRTMIN);
    sigaddset(&set, SIGRTMIN + 1);
    /* Each handler blocks both, so the kernel runs them one after another (not nested). */
    sa.sa_sigaction = on_rt;
    sa.sa_flags = SA_SIGINFO;
    sa.sa_mask = set;
    sigaction(SIGRTMIN, &sa, NULL);
    sigaction(SIGRTMIN + 1, &sa, NULL);
    sigprocmask(SIG_BLOCK, &set, NULL);
    for (int v = 1; v <= 3; v++) {
        sigqueue(getpid(), SIGRTMIN + 1, (union sigval){.sival_int = v});
        sigqueue(getpid(), SIGRTMIN, (union sigval){.sival_int = v});
    }
    siginfo_t si;
    int got = sigwaitinfo(&set, &si);
    printf("rtqueue: sigwaitinfo took RTMIN+%d value %d\n", got - SIGRTMIN, si.si_value.sival_int);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    printf("rtqueue: delivered %d:", (int)rt_count);
    for (int k = 0; k < rt_count && k < 8; k++) printf(" %d", (int)rt_seen[k]);
    printf("\n");
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *s = argc > 1 ? argv[1] : "";
    if (!strcmp(s, "raise")) raise_info();
    else if (!strcmp(s, "kill")) kill_self();
    else if (!strcmp(s, "mask")) mask();
    else if (!strcmp(s, "rtqueue")) rtqueue();
    else if (!strcmp(s, "ignore")) ignore();
    else if (!strcmp(s, "term")) term();
    else if (!strcmp(s, "eintr")) eintr_sleep();
    else if (!strcmp(s, "recv")) eintr_recv(0);
    else if (!strcmp(s, "recv-restart")) eintr_recv(1);
    else if (!strcmp(s, "suspend")) suspend();
    else if (!strcmp(s, "sigwait")) waitsig();
    else if (!strcmp(s, "real")) real_signal();
    else if (!strcmp(s, "signalfd")) sigfd();
    else if (!strcmp(s, "selfpipe")) selfpipe(argc > 2 ? atoi(argv[2]) : 5);
    else {
        fprintf(stderr, "unknown scenario %s\n", s);
        return 2;
    }
    (void)ticks;
    (void)tick_ns;
    (void)on_tick;
    return 0;
}
