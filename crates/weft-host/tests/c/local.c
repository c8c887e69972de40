/* Pipes, eventfds and socketpairs between a process's own threads, as on Linux. Prints only
 * what must be the same natively and under the shim (no fd numbers or times).
 * usage: local SCENARIO [ROUNDS [CALLS]] */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static void say(const char *what, long v) { printf("%s %ld\n", what, v); }

static int readable(int fd) {
    struct pollfd p = {fd, POLLIN, 0};
    return poll(&p, 1, 0) == 1 ? p.revents : 0;
}

static void pipes(void) {
    int p[2];
    say("pipe", pipe(p));
    say("write", write(p[1], "abc", 3));
    say("poll read end", readable(p[0]));
    char buf[8];
    say("read 2", read(p[0], buf, 2));
    say("read rest", read(p[0], buf, sizeof buf));
    say("poll empty", readable(p[0]));
    struct iovec w[2] = {{"de", 2}, {"fg", 2}};
    say("writev", writev(p[1], w, 2));
    char x[3], y[3];
    struct iovec r[2] = {{x, 3}, {y, 3}};
    say("readv", readv(p[0], r, 2));
    printf("readv got %.3s%.1s\n", x, y);
    int q = dup(p[1]);
    close(p[1]);
    say("a write end copy is open: no EOF", readable(p[0]));
    write(q, "h", 1);
    say("read through the copy", read(p[0], buf, sizeof buf));
    close(q);
    say("last writer gone: POLLHUP", readable(p[0]) & POLLHUP ? 1 : 0);
    say("EOF", read(p[0], buf, sizeof buf));
    close(p[0]);

    int n[2];
    say("pipe2 O_NONBLOCK", pipe2(n, O_NONBLOCK | O_CLOEXEC));
    say("empty read EAGAIN", read(n[0], buf, 1) < 0 && errno == EAGAIN);
    say("close-on-exec", (fcntl(n[0], F_GETFD) & FD_CLOEXEC) != 0);
    fcntl(n[0], F_SETFL, 0);
    close(n[0]);
    signal(SIGPIPE, SIG_IGN);
    say("write with no reader EPIPE", write(n[1], "z", 1) < 0 && errno == EPIPE);
    struct pollfd pw = {n[1], POLLOUT, 0};
    poll(&pw, 1, 0);
    say("write end POLLERR", (pw.revents & POLLERR) != 0);
    close(n[1]);
}

static void eventfds(void) {
    int e = eventfd(0, EFD_NONBLOCK);
    uint64_t v = 0;
    say("empty read EAGAIN", read(e, &v, 8) < 0 && errno == EAGAIN);
    say("poll empty", readable(e));
    v = 3;
    say("write", write(e, &v, 8));
    say("eventfd_write", eventfd_write(e, 4));
    say("poll", readable(e));
    say("short read EINVAL", read(e, &v, 4) < 0 && errno == EINVAL);
    eventfd_t got = 0;
    say("eventfd_read", eventfd_read(e, &got));
    say("the sum", (long)got);
    v = UINT64_MAX;
    say("write of 2^64-1 EINVAL", write(e, &v, 8) < 0 && errno == EINVAL);
    close(e);
    int s = eventfd(2, EFD_SEMAPHORE | EFD_NONBLOCK);
    say("semaphore read", read(s, &v, 8) == 8 ? (long)v : -1);
    say("semaphore read", read(s, &v, 8) == 8 ? (long)v : -1);
    say("semaphore empty EAGAIN", read(s, &v, 8) < 0 && errno == EAGAIN);
    close(s);
}

static void socketpairs(void) {
    int sv[2];
    say("socketpair", socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
    say("send", send(sv[0], "ping", 4, 0));
    char buf[16];
    ssize_t n = recv(sv[1], buf, sizeof buf, MSG_PEEK);
    printf("peek %.*s\n", (int)n, buf);
    n = read(sv[1], buf, sizeof buf);
    printf("read %.*s\n", (int)n, buf);
    say("write back", write(sv[1], "pong", 4));
    n = recv(sv[0], buf, sizeof buf, 0);
    printf("recv %.*s\n", (int)n, buf);
    say("nonblocking empty EAGAIN", recv(sv[0], buf, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN);
    struct sockaddr_storage from;
    socklen_t fl = sizeof from;
    write(sv[1], "q", 1);
    n = recvfrom(sv[0], buf, sizeof buf, 0, (struct sockaddr *)&from, &fl);
    say("recvfrom reports no address", n == 1 && fl == 0);
    say("shutdown write", shutdown(sv[0], SHUT_WR));
    say("peer reads EOF", read(sv[1], buf, sizeof buf));
    say("the other way still works", write(sv[1], "r", 1));
    say("read it", read(sv[0], buf, sizeof buf));
    close(sv[1]);
    say("peer closed: EOF", read(sv[0], buf, sizeof buf));
    say("POLLHUP", (readable(sv[0]) & POLLHUP) != 0);
    close(sv[0]);
}

static int wake_pipe[2], wake_efd, wake_sv[2];

static void *waker(void *arg) {
    (void)arg;
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
    write(wake_pipe[1], "p", 1);
    nanosleep(&ms, NULL);
    eventfd_write(wake_efd, 1);
    nanosleep(&ms, NULL);
    write(wake_sv[1], "s", 1);
    nanosleep(&ms, NULL);
    write(wake_pipe[1], "P", 1);
    return NULL;
}

/* Blocking waits, each ended by the other thread: read, poll, epoll_wait, select. */
static void blocking(void) {
    pipe(wake_pipe);
    wake_efd = eventfd(0, 0);
    socketpair(AF_UNIX, SOCK_STREAM, 0, wake_sv);
    pthread_t t;
    pthread_create(&t, NULL, waker, NULL);
    char c;
    say("blocking read", read(wake_pipe[0], &c, 1));
    printf("got %c\n", c);
    int ep = epoll_create1(0);
    struct epoll_event ev = {EPOLLIN, {.u64 = 7}}, out[2];
    epoll_ctl(ep, EPOLL_CTL_ADD, wake_efd, &ev);
    int n = epoll_wait(ep, out, 2, 5000);
    say("epoll_wait on the eventfd", n == 1 && out[0].data.u64 == 7);
    eventfd_t v;
    eventfd_read(wake_efd, &v);
    struct pollfd p = {wake_sv[0], POLLIN, 0};
    say("poll on the socketpair", poll(&p, 1, 5000));
    read(wake_sv[0], &c, 1);
    fd_set r;
    FD_ZERO(&r);
    FD_SET(wake_pipe[0], &r);
    struct timeval tv = {5, 0};
    say("select on the pipe", select(wake_pipe[0] + 1, &r, NULL, NULL, &tv));
    read(wake_pipe[0], &c, 1);
    printf("got %c\n", c);
    pthread_join(t, NULL);
}

static int ping[2], pong[2];
static long rounds;

static void *ponger(void *arg) {
    (void)arg;
    char c;
    for (long i = 0; i < rounds; i++) {
        struct pollfd p = {ping[0], POLLIN, 0};
        poll(&p, 1, -1);
        if (read(ping[0], &c, 1) != 1) return NULL;
        write(pong[1], &c, 1);
    }
    return NULL;
}

/* Ping-pong over two pipes, each side waiting in poll, while this thread also makes calls that
 * never block: a waiter that blocks costs nothing meanwhile, one that polls again and again
 * costs a hand-off per call of the other thread. */
static void pingpong(long n, long calls) {
    rounds = n;
    pipe(ping);
    pipe(pong);
    pthread_t t;
    pthread_create(&t, NULL, ponger, NULL);
    long ok = 0;
    for (long i = 0; i < n; i++) {
        struct timespec zero = {0, 0};
        for (long k = 0; k < calls; k++) nanosleep(&zero, NULL);
        char c = (char)('a' + i % 26), back = 0;
        write(ping[1], &c, 1);
        struct pollfd p = {pong[0], POLLIN, 0};
        poll(&p, 1, -1);
        read(pong[0], &back, 1);
        ok += back == c;
    }
    pthread_join(t, NULL);
    say("rounds echoed", ok);
}

static long ms_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

/* What nginx's master and workers do with their channels: F_SETOWN to a pid, thread ids read
 * through syscall(2), and an epoll set whose member is closed (Linux drops it from the set). */
static void owners(void) {
    say("syscall gettid matches", syscall(SYS_gettid) == gettid());
    say("syscall getpid matches", syscall(SYS_getpid) == getpid());
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    say("setown", fcntl(sv[0], F_SETOWN, getpid()));
    say("getown is us", fcntl(sv[0], F_GETOWN) == getpid());
    int ep = epoll_create1(0), p[2];
    pipe(p);
    struct epoll_event e = {.events = EPOLLIN | EPOLLET, .data.u64 = 1}, out[4];
    epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &e);
    e.events = EPOLLIN;
    e.data.u64 = 2;
    epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &e);
    close(sv[1]);
    int n = epoll_wait(ep, out, 4, 1000);
    say("hang-up seen", n == 1 && out[0].data.u64 == 1 && (out[0].events & EPOLLIN));
    close(sv[0]);
    long t = ms_now();
    n = epoll_wait(ep, out, 4, 100);
    say("closed member gone", n);
    say("waited its timeout", ms_now() - t >= 100);
    write(p[1], "x", 1);
    n = epoll_wait(ep, out, 4, 1000);
    say("then the pipe", n == 1 && out[0].data.u64 == 2);
}

/* Passing a descriptor over a socketpair: under the shim, exit 4 naming the call. */
static void scm_rights(void) {
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    char byte = 'x';
    struct iovec iov = {&byte, 1};
    union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } u;
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                       .msg_controllen = sizeof u.buf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &sv[0], sizeof(int));
    say("sendmsg", sendmsg(sv[1], &m, 0));
    /* sv[0] receives a new descriptor for itself: a write through it reaches sv[1]. */
    char got = 0;
    struct iovec in = {&got, 1};
    union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } v;
    struct msghdr r = {.msg_iov = &in, .msg_iovlen = 1, .msg_control = v.buf,
                       .msg_controllen = sizeof v.buf};
    say("recvmsg", recvmsg(sv[0], &r, 0));
    struct cmsghdr *rc = CMSG_FIRSTHDR(&r);
    int fd = -1;
    if (rc && rc->cmsg_type == SCM_RIGHTS) memcpy(&fd, CMSG_DATA(rc), sizeof(int));
    printf("received '%c' and a descriptor %d\n", got, fd > sv[1]);
    say("write through it", write(fd, "y", 1));
    char back = 0;
    say("read at the peer", read(sv[1], &back, 1));
    printf("the peer read '%c'\n", back);
}

static void scm_credentials(void) {
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    char byte = 'x';
    struct iovec iov = {&byte, 1};
    union { char buf[CMSG_SPACE(sizeof(struct ucred))]; struct cmsghdr align; } u;
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                       .msg_controllen = sizeof u.buf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_CREDENTIALS;
    c->cmsg_len = CMSG_LEN(sizeof(struct ucred));
    struct ucred cred = {getpid(), getuid(), getgid()};
    memcpy(CMSG_DATA(c), &cred, sizeof cred);
    say("sendmsg", sendmsg(sv[1], &m, 0));
}

static int edge_efd, edge_pipe[2], edge_sv[2];

static void *edge_writer(void *arg) {
    (void)arg;
    struct timespec gap = {0, 10000000};
    for (int i = 0; i < 3; i++) {
        nanosleep(&gap, NULL);
        eventfd_write(edge_efd, 1);
        nanosleep(&gap, NULL);
        write(edge_pipe[1], "e", 1);
        nanosleep(&gap, NULL);
        write(edge_sv[1], "e", 1);
    }
    return NULL;
}

/* Edge-triggered epoll on an eventfd, a pipe and a socketpair that are written again and again
 * and never read (mio's waker, in every tokio runtime, is such an eventfd): Linux reports a new
 * edge for every write, also when the object was readable already; once the writes stop, the
 * level that was reported stays quiet. */
static void edges(void) {
    edge_efd = eventfd(0, EFD_NONBLOCK);
    pipe2(edge_pipe, O_NONBLOCK);
    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, edge_sv);
    int ep = epoll_create1(0);
    int fds[3] = {edge_efd, edge_pipe[0], edge_sv[0]}, seen[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++) {
        struct epoll_event ev = {EPOLLIN | EPOLLET, {.u64 = (uint64_t)i}};
        epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev);
    }
    pthread_t t;
    pthread_create(&t, NULL, edge_writer, NULL);
    for (int round = 0; round < 9 && seen[0] + seen[1] + seen[2] < 9; round++) {
        struct epoll_event out[3];
        int n = epoll_wait(ep, out, 3, 1000);
        if (n == 0) say("edge wait timed out in round", round);
        for (int i = 0; i < n; i++) seen[out[i].data.u64]++;
    }
    pthread_join(t, NULL);
    say("eventfd edges", seen[0]);
    say("pipe edges", seen[1]);
    say("socketpair edges", seen[2]);
    struct epoll_event out[3];
    say("events once the writes stopped", epoll_wait(ep, out, 3, 50));
}

int main(int argc, char **argv) {
    const char *s = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(s, "pipe")) pipes();
    else if (!strcmp(s, "eventfd")) eventfds();
    else if (!strcmp(s, "socketpair")) socketpairs();
    else if (!strcmp(s, "blocking")) blocking();
    else if (!strcmp(s, "edges")) edges();
    else if (!strcmp(s, "owners")) owners();
    else if (!strcmp(s, "scm_rights")) scm_rights();
    else if (!strcmp(s, "scm_credentials")) scm_credentials();
    else if (!strcmp(s, "pingpong")) pingpong(argc > 2 ? atol(argv[2]) : 100, argc > 3 ? atol(argv[3]) : 5);
    else {
        fprintf(stderr, "unknown scenario %s\n", s);
        return 2;
    }
    return 0;
}
