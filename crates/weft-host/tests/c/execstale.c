/* An epoll instance, timerfd and signalfd left open (not close-on-exec) across exec, as
 * Erlang's VM leaves its epoll instances and timerfds for erl_child_setup.
 * usage: execstale MODE   (MODE: close | epoll_wait | read)
 * The first image opens them, arms the timer, registers a pipe, and execs itself with
 * "after MODE EPFD TFD SFD EPFD2 PIPE_READ"; the new image then:
 *   close:      dup2s the pipe onto the first epoll's number, closes the rest with close_range
 *               (erl_child_setup's first act), makes fresh ones in their place and uses them;
 *   epoll_wait: waits on the first epoll instance (its interest list stayed behind);
 *   read:       reads the timerfd (its timer stayed behind). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

static void first(const char *self, const char *mode) {
    int ep = epoll_create1(0);
    int tfd = timerfd_create(CLOCK_MONOTONIC, 0);
    struct itimerspec its = {.it_value = {1, 0}};
    timerfd_settime(tfd, 0, &its, NULL);
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR1);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    int sfd = signalfd(-1, &mask, 0);
    int ep2 = epoll_create1(0);
    int p[2];
    pipe(p);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = p[0]};
    epoll_ctl(ep2, EPOLL_CTL_ADD, p[0], &ev);
    epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
    char a[6][16];
    int v[6] = {ep, tfd, sfd, ep2, p[0], p[1]};
    for (int i = 0; i < 6; i++)
        snprintf(a[i], sizeof a[i], "%d", v[i]);
    printf("first image: opened them\n");
    fflush(stdout);
    execl(self, self, "after", mode, a[0], a[1], a[2], a[3], a[4], (char *)NULL);
    perror("execl");
    exit(1);
}

static void fresh(void) {
    int tfd = timerfd_create(CLOCK_MONOTONIC, 0);
    struct itimerspec its = {.it_value = {0, 5000000}};
    timerfd_settime(tfd, 0, &its, NULL);
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = tfd};
    epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
    struct epoll_event out;
    int n = epoll_wait(ep, &out, 1, 1000);
    unsigned long long count = 0;
    ssize_t r = read(tfd, &count, sizeof count);
    printf("fresh epoll and timerfd: %d ready, read %zd, %llu expiration\n", n, r, count);
}

int main(int argc, char **argv) {
    if (argc < 3 || strcmp(argv[1], "after")) {
        first(argv[0], argc > 1 ? argv[1] : "close");
        return 1;
    }
    const char *mode = argv[2];
    int ep = atoi(argv[3]), tfd = atoi(argv[4]), pr = atoi(argv[7]);
    if (!strcmp(mode, "close")) {
        printf("dup2 onto the old epoll: %d\n", dup2(pr, ep) == ep);
        printf("close_range: %d\n", close_range(ep, ~0U, 0));
        fresh();
        printf("OK\n");
    } else if (!strcmp(mode, "epoll_wait")) {
        struct epoll_event out;
        epoll_wait(ep, &out, 1, 10);
        printf("not reached\n");
    } else {
        unsigned long long count;
        read(tfd, &count, sizeof count);
        printf("not reached\n");
    }
    return 0;
}
