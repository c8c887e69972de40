/* The time-stamp counter under weft: rdtsc and rdtscp advance with virtual time (the same
 * values in every run), glibc's own vDSO clock reads still work, and a program's own SIGSEGV
 * handler still catches its faults (a null read, recovered with siglongjmp) and a raised
 * SIGSEGV. usage: tsc [die | exec | blocked | blocked-fault] ("die": a fault with the default
 * disposition, which must end the process by SIGSEGV; "exec": an exec'd image, whose loader
 * reads the counter before its shim is there, runs and reads it; "blocked": the counter with
 * every signal blocked; "blocked-fault": then a fault, which kills even with a handler). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

static sigjmp_buf back;
static volatile int caught, raised;

static void on_segv(int sig, siginfo_t *si, void *ctx) {
    (void)ctx;
    if (si->si_code <= 0) {
        raised++;
        return;
    }
    caught = sig;
    siglongjmp(back, 1);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 1 && !strcmp(argv[1], "exec")) {
        execl("/proc/self/exe", argv[0], "execd", (char *)NULL);
        return 1;
    }
    if (argc > 1 && !strcmp(argv[1], "execd")) {
        printf("exec'd image reads the counter: %d\n", __rdtsc() >= 1000000000000ULL);
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "die")) {
        volatile int *p = NULL;
        return *p;
    }
    if (argc > 1 && !strncmp(argv[1], "blocked", 7)) {
        /* Every signal blocked (dash does so around a fork): the counter and glibc's own
         * clock reads still work, and a fault still ends the process, handler or not. */
        sigset_t all;
        sigfillset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        unsigned long long a = __rdtsc();
        usleep(1000);
        struct timespec ts = {0, 0};
        void *vdso = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
        int (*vclock)(clockid_t, struct timespec *) =
            vdso ? dlsym(vdso, "__vdso_clock_gettime") : NULL;
        int vr = vclock ? vclock(CLOCK_REALTIME, &ts) : -1;
        printf("blocked: counter moves %d, vDSO clock %d\n", __rdtsc() > a, vr);
        if (!strcmp(argv[1], "blocked-fault")) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_sigaction = on_segv;
            sa.sa_flags = SA_SIGINFO;
            sigaction(SIGSEGV, &sa, NULL);
            volatile int *p = NULL;
            return *p;
        }
        return 0;
    }
    unsigned long long a = __rdtsc();
    usleep(1000);
    unsigned aux = 7;
    unsigned long long b = __rdtscp(&aux);
    printf("counter %llu then %llu after 1 ms, aux %u\n", a, b, aux);
    /* The vDSO's own clock, called directly as glibc calls it internally: it reads the
     * counter itself, and must still tell the real time. */
    void *vdso = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
    int (*vclock)(clockid_t, struct timespec *) = vdso ? dlsym(vdso, "__vdso_clock_gettime") : NULL;
    struct timespec ts = {0, 0};
    int vr = vclock ? vclock(CLOCK_REALTIME, &ts) : -1;
    printf("the vDSO's clock_gettime %d, after 2026 %d\n", vr, ts.tv_sec > 1767225600);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    struct sigaction now;
    sigaction(SIGSEGV, NULL, &now);
    printf("own handler reported back %d\n", now.sa_sigaction == on_segv);
    if (sigsetjmp(back, 1) == 0) {
        volatile int *p = NULL;
        printf("read %d\n", *p);
    }
    printf("null read caught by own handler: signal %d\n", caught);
    raise(SIGSEGV);
    printf("raised SIGSEGV reached own handler %d\n", raised);
    unsigned long long c = __rdtsc();
    printf("counter after the handlers moves on %d\n", c >= b);
    return 0;
}
