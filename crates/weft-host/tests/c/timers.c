/* Timers: alarm, setitimer, POSIX timers and timerfds. Every scenario but `exact` prints only
 * what must be observed the same natively and under the shim; `exact` prints the virtual
 * times of expiries, which the shim must make exactly what was asked. usage: timers SCENARIO */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t handled, ticks, last_code;
static volatile int last_value;
static long tick_at[8];

static long mono_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static void on_alarm(int sig) {
    (void)sig;
    if (ticks < 8)
        tick_at[ticks] = mono_ns();
    ticks++;
    handled++;
}

static void on_timer(int sig, siginfo_t *si, void *uc) {
    (void)sig;
    (void)uc;
    handled++;
    last_code = si->si_code;
    last_value = si->si_value.sival_int;
}

static void install(int sig, int flags) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

static void alarm_pause(void) {
    install(SIGALRM, 0);
    printf("alarm(1)=%u\n", alarm(1));
    printf("alarm(5)=%u\n", alarm(5));
    printf("alarm(0)=%u\n", alarm(0));
    alarm(1);
    int r = pause();
    printf("pause=%d %s handled=%d\n", r, strerror(errno), handled);
}

static void itimer(void) {
    install(SIGALRM, SA_RESTART);
    struct itimerval v = {{0, 50000}, {0, 50000}}, old;
    setitimer(ITIMER_REAL, &v, NULL);
    while (ticks < 3)
        pause();
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, &old);
    printf("itimer: ticks=%d old interval=%ldus armed=%d\n", ticks, (long)old.it_interval.tv_usec,
           old.it_value.tv_sec != 0 || old.it_value.tv_usec != 0);
    getitimer(ITIMER_REAL, &old);
    printf("itimer: now armed=%d\n", old.it_value.tv_sec != 0 || old.it_value.tv_usec != 0);
}

/* A SA_SIGINFO handler for sig. */
static void install_info(int sig, void (*fn)(int, siginfo_t *, void *)) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fn;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

static void posix_timer(void) {
    install_info(SIGUSR1, on_timer);
    sigset_t usr1, none;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigemptyset(&none);
    sigprocmask(SIG_BLOCK, &usr1, NULL);
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGUSR1;
    ev.sigev_value.sival_int = 42;
    timer_t t;
    printf("create=%d\n", timer_create(CLOCK_MONOTONIC, &ev, &t));
    struct itimerspec its = {{0, 0}, {0, 30000000}}, cur;
    printf("settime=%d\n", timer_settime(t, 0, &its, NULL));
    timer_gettime(t, &cur);
    printf("armed=%d\n", cur.it_value.tv_nsec > 0 && cur.it_value.tv_nsec <= 30000000);
    sigsuspend(&none);
    printf("posix: handled=%d code=%s value=%d\n", handled,
           last_code == SI_TIMER ? "SI_TIMER" : "other", last_value);
    timer_gettime(t, &cur);
    int overrun = timer_getoverrun(t);
    printf("posix: after expiry armed=%d overrun=%d\n", cur.it_value.tv_nsec != 0, overrun);
    printf("delete=%d\n", timer_delete(t));
}

static void timerfd(void) {
    int fd = timerfd_create(CLOCK_MONOTONIC, 0);
    struct itimerspec its = {{0, 20000000}, {0, 20000000}}, cur;
    printf("settime=%d\n", timerfd_settime(fd, 0, &its, NULL));
    uint64_t n = 0;
    ssize_t r = read(fd, &n, sizeof n);
    printf("read=%zd count>=1:%d\n", r, n >= 1);
    struct pollfd p = {fd, POLLIN, 0};
    int pr = poll(&p, 1, 1000);
    printf("poll=%d revents=%d\n", pr, p.revents);
    r = read(fd, &n, sizeof n);
    printf("read after poll=%zd\n", r);
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 7}, out;
    printf("epoll_ctl=%d\n", epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
    int k = epoll_wait(ep, &out, 1, 1000);
    printf("epoll_wait=%d data=%lu in=%d\n", k, (unsigned long)out.data.u64,
           !!(out.events & EPOLLIN));
    r = read(fd, &n, sizeof n);
    printf("read after epoll=%zd\n", r);
    timerfd_gettime(fd, &cur);
    printf("interval=%ldns\n", cur.it_interval.tv_nsec);
    struct itimerspec off = {{0, 0}, {0, 0}};
    timerfd_settime(fd, 0, &off, NULL);
    pr = poll(&p, 1, 50);
    printf("disarmed poll=%d\n", pr);
    close(ep);
    close(fd);
    int nb = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK);
    errno = 0;
    r = read(nb, &n, sizeof n);
    printf("nonblocking read=%zd %s\n", r, strerror(errno));
    close(nb);
}

/* Expiry times, relative to the start: exactly what was asked under the shim. */
static void exact(void) {
    install(SIGALRM, SA_RESTART);
    long start = mono_ns();
    struct itimerval v = {{0, 100000}, {0, 250000}};
    setitimer(ITIMER_REAL, &v, NULL);
    while (ticks < 3)
        pause();
    for (int i = 0; i < 3; i++)
        printf("tick %d at +%ldns\n", i, tick_at[i] - start);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    int fd = timerfd_create(CLOCK_MONOTONIC, 0);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long base = mono_ns();
    struct itimerspec abs = {{0, 0}, {now.tv_sec + 1, now.tv_nsec}};
    timerfd_settime(fd, TFD_TIMER_ABSTIME, &abs, NULL);
    uint64_t n;
    read(fd, &n, sizeof n);
    printf("timerfd abstime +1s fired at +%ldns count=%lu\n", mono_ns() - base,
           (unsigned long)n);
}

/* A watchdog as haproxy's: each thread arms a timer on its own CPU-time clock
 * (pthread_getcpuclockid) whose signal goes to that thread (SIGEV_THREAD_ID). Under the shim a
 * CPU-time clock reads virtual time, so the timer fires when the clock reaches its setting;
 * the handler records which thread it ran on. */
static volatile pid_t ran_on[2];
static pid_t tids[2];

static void on_watchdog(int sig, siginfo_t *si, void *uc) {
    (void)sig;
    (void)uc;
    int k = si->si_value.sival_int;
    if (k >= 0 && k < 2) ran_on[k] = (pid_t)syscall(SYS_gettid);
}

static void *watched(void *arg) {
    int k = (int)(long)arg;
    tids[k] = (pid_t)syscall(SYS_gettid);
    clockid_t clk;
    pthread_getcpuclockid(pthread_self(), &clk);
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGRTMIN;
    ev.sigev_value.sival_int = k;
    ev._sigev_un._tid = tids[k];
    timer_t t;
    printf("thread %d timer_create %d\n", k, timer_create(clk, &ev, &t));
    struct timespec now;
    printf("thread %d cpu clock reads %d\n", k, clock_gettime(clk, &now));
    struct itimerspec its = {.it_value = {.tv_nsec = (k + 1) * 50000000L}};
    timer_settime(t, 0, &its, NULL);
    while (!ran_on[k]) usleep(10000);
    timer_delete(t);
    return NULL;
}

static void watchdog(void) {
    install_info(SIGRTMIN, on_watchdog);
    pthread_t th[2];
    for (long k = 0; k < 2; k++) pthread_create(&th[k], NULL, watched, (void *)k);
    for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);
    for (int k = 0; k < 2; k++) printf("thread %d's timer ran on it %d\n", k, ran_on[k] == tids[k]);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *s = argc > 1 ? argv[1] : "";
    if (!strcmp(s, "alarm")) alarm_pause();
    else if (!strcmp(s, "itimer")) itimer();
    else if (!strcmp(s, "posix")) posix_timer();
    else if (!strcmp(s, "timerfd")) timerfd();
    else if (!strcmp(s, "exact")) exact();
    else if (!strcmp(s, "watchdog")) watchdog();
    else {
        fprintf(stderr, "unknown scenario %s\n", s);
        return 2;
    }
    return 0;
}
