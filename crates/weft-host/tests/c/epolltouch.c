/* A thread blocked in epoll_wait sees a change another thread makes to the interest list: an
 * added descriptor that is ready, and an EPOLLONESHOT one re-armed with EPOLL_CTL_MOD (as
 * Erlang's VM does for every event), with a real descriptor (an inotify one) in the set as
 * well. Both waits have a 2 s timeout that must not be what ends them. */
#include <pthread.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

static int ep;

static long ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void *waiter(void *arg) {
    (void)arg;
    struct epoll_event ev;
    long start = ms();
    int n = epoll_wait(ep, &ev, 1, 2000);
    printf("waiter: %d event(s), %s\n", n, ms() - start < 1000 ? "before the timeout" : "timed out");
    return NULL;
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    ep = epoll_create1(0);
    /* A real descriptor in the set too (never ready): the wait then also asks the kernel. */
    int in = inotify_init1(0);
    struct epoll_event quiet = {.events = EPOLLIN, .data.fd = in};
    epoll_ctl(ep, EPOLL_CTL_ADD, in, &quiet);
    int p[2];
    pipe(p);
    pthread_t t;
    pthread_create(&t, NULL, waiter, NULL);
    usleep(10000);
    write(p[1], "x", 1);
    struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT, .data.fd = p[0]};
    epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev); /* added while the waiter waits */
    pthread_join(t, NULL);
    pthread_create(&t, NULL, waiter, NULL); /* the one-shot entry is disarmed now */
    usleep(10000);
    epoll_ctl(ep, EPOLL_CTL_MOD, p[0], &ev); /* re-armed while it waits: still readable */
    pthread_join(t, NULL);
    /* An eventfd read right after this thread's own wait (whose request carried the wait's
     * tag in the slot the read's answer comes back in). */
    int efd = eventfd(1, 0);
    epoll_wait(ep, &ev, 1, 0);
    uint64_t v = 0;
    ssize_t got = read(efd, &v, sizeof v);
    printf("main read %zd bytes (count %llu) after its own epoll_wait\n", got, (unsigned long long)v);
    return 0;
}
