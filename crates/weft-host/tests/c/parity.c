/* One scenario per intercepted call family, printing only what a correct implementation must
 * observe the same way natively and under the shim (no absolute times, no random values).
 * usage: parity SCENARIO */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sched.h>
#include <sys/random.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <semaphore.h>
#include <sys/syscall.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/times.h>
#include <time.h>
#include <unistd.h>

static long ns(clockid_t c) {
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static int wake_pipe[2], wake_efd;

static void *waker(void *arg) {
    (void)arg;
    usleep(10000);
    write(wake_pipe[1], "w", 1);
    usleep(10000);
    uint64_t one = 1;
    write(wake_efd, &one, sizeof one);
    usleep(10000);
    write(wake_pipe[1], "s", 1);
    return NULL;
}

static char big[200000], back[200000];
static int big_fd;
static ssize_t big_written;

static void *big_writer(void *arg) {
    (void)arg;
    big_written = write(big_fd, big, sizeof big);
    return NULL;
}

static int udp_bound(struct sockaddr_in *a) {
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in b;
    memset(&b, 0, sizeof b);
    b.sin_family = AF_INET;
    b.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    b.sin_port = 0;
    if (bind(fd, (struct sockaddr *)&b, sizeof b) != 0) printf("bind failed\n");
    socklen_t l = sizeof *a;
    getsockname(fd, (struct sockaddr *)a, &l);
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return fd;
}

/* A batch of n datagrams for sendmmsg (to `to`) or recvmmsg (`to` NULL), one iovec each. */
static void batch(struct mmsghdr *mm, struct iovec *iov, int n, struct sockaddr_in *to) {
    memset(mm, 0, n * sizeof *mm);
    for (int i = 0; i < n; i++) {
        mm[i].msg_hdr.msg_name = to;
        mm[i].msg_hdr.msg_namelen = to ? sizeof *to : 0;
        mm[i].msg_hdr.msg_iov = &iov[i];
        mm[i].msg_hdr.msg_iovlen = 1;
    }
}

/* Descriptor and socket calls made through syscall(2), as libuv makes them (named, dig,
 * Node.js): datagram batches, dup3 and close of a TCP connection (the peer must see
 * end-of-file); a datagram's IP_PKTINFO; poll's POLLRDNORM/POLLWRNORM. */
static void raw_calls(void) {
    struct sockaddr_in a, b;
    int fa = udp_bound(&a), fb = udp_bound(&b);
    int on = 1;
    printf("IP_PKTINFO %d\n", setsockopt(fb, IPPROTO_IP, IP_PKTINFO, &on, sizeof on));
    struct mmsghdr mm[2];
    struct iovec mi[2] = {{"one", 3}, {"four", 4}};
    batch(mm, mi, 2, &b);
    printf("syscall sendmmsg %ld\n", syscall(SYS_sendmmsg, fa, mm, 2, 0));
    struct pollfd p = {fb, POLLRDNORM | POLLWRNORM, 0};
    usleep(50000);
    int ready = poll(&p, 1, 1000);
    printf("poll %d RDNORM %d WRNORM %d IN %d\n", ready, !!(p.revents & POLLRDNORM),
           !!(p.revents & POLLWRNORM), !!(p.revents & POLLIN));
    char rb[2][8];
    char ctl[2][CMSG_SPACE(sizeof(struct in_pktinfo))];
    struct iovec ri[2] = {{rb[0], 8}, {rb[1], 8}};
    struct mmsghdr rmm[2];
    batch(rmm, ri, 2, NULL);
    for (int i = 0; i < 2; i++) {
        rmm[i].msg_hdr.msg_control = ctl[i];
        rmm[i].msg_hdr.msg_controllen = sizeof ctl[i];
    }
    long n = syscall(SYS_recvmmsg, fb, rmm, 2, 0, NULL);
    printf("syscall recvmmsg %ld total %u\n", n, rmm[0].msg_len + rmm[1].msg_len);
    for (int i = 0; i < n; i++) {
        struct cmsghdr *c = CMSG_FIRSTHDR(&rmm[i].msg_hdr);
        int ok = c && c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO;
        struct in_pktinfo *pi = ok ? (struct in_pktinfo *)CMSG_DATA(c) : NULL;
        printf("pktinfo %d ifindex %d to %s\n", ok, pi ? pi->ipi_ifindex : -1,
               pi ? inet_ntoa(pi->ipi_addr) : "-");
    }
    close(fa);
    close(fb);
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in t;
    memset(&t, 0, sizeof t);
    t.sin_family = AF_INET;
    t.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(l, (struct sockaddr *)&t, sizeof t);
    listen(l, 1);
    socklen_t tl = sizeof t;
    getsockname(l, (struct sockaddr *)&t, &tl);
    t.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    printf("connect %d\n", connect(c, (struct sockaddr *)&t, sizeof t));
    int s2 = accept(l, NULL, NULL);
    printf("syscall dup3 %d\n", syscall(SYS_dup3, c, 50, 0) == 50);
    printf("write on the copy %zd\n", write(50, "ab", 2));
    printf("syscall close %ld %ld\n", syscall(SYS_close, c), syscall(SYS_close, 50));
    char buf[8];
    ssize_t got = read(s2, buf, sizeof buf);
    printf("server read %zd, then %zd (end of file)\n", got, read(s2, buf, sizeof buf));
    close(s2);
    close(l);
}

/* The waits on a named clock, timed read-write locks and pthread_once, each both ways: woken
 * in time by another thread, and timing out. */
static pthread_mutex_t cw_m = PTHREAD_MUTEX_INITIALIZER, held = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cw_c = PTHREAD_COND_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static sem_t cw_sem;
static int cw_flag, once_runs;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static struct timespec in_ms(clockid_t clock, long ms) {
    struct timespec t;
    clock_gettime(clock, &t);
    t.tv_nsec += ms * 1000000L;
    t.tv_sec += t.tv_nsec / 1000000000L;
    t.tv_nsec %= 1000000000L;
    return t;
}

static void once_init(void) {
    usleep(10000); /* the other caller must wait for this */
    once_runs++;
}

static void *cw_helper(void *arg) {
    (void)arg;
    pthread_once(&once, once_init);
    usleep(10000);
    pthread_mutex_lock(&cw_m);
    cw_flag = 1;
    pthread_cond_signal(&cw_c);
    pthread_mutex_unlock(&cw_m);
    usleep(10000);
    sem_post(&cw_sem);
    usleep(10000);
    pthread_mutex_unlock(&held);
    pthread_rwlock_rdlock(&rw);
    usleep(100000);
    pthread_rwlock_unlock(&rw);
    return NULL;
}

static void clock_waits(void) {
    sem_init(&cw_sem, 0, 0);
    pthread_mutex_lock(&held);
    pthread_t t;
    pthread_create(&t, NULL, cw_helper, NULL);
    pthread_once(&once, once_init);
    printf("once: initialiser ran %d time(s) before either caller went on\n", once_runs);
    pthread_mutex_lock(&cw_m);
    struct timespec d = in_ms(CLOCK_MONOTONIC, 1000);
    int r = 0;
    while (!cw_flag && r == 0) r = pthread_cond_clockwait(&cw_c, &cw_m, CLOCK_MONOTONIC, &d);
    printf("cond_clockwait woken %d\n", r == 0 && cw_flag);
    d = in_ms(CLOCK_MONOTONIC, 5);
    printf("cond_clockwait times out %d\n",
           pthread_cond_clockwait(&cw_c, &cw_m, CLOCK_MONOTONIC, &d) == ETIMEDOUT);
    d = in_ms(CLOCK_MONOTONIC, 5);
    printf("cond_clockwait on a CPU clock %d\n",
           pthread_cond_clockwait(&cw_c, &cw_m, CLOCK_PROCESS_CPUTIME_ID, &d) == EINVAL);
    pthread_mutex_unlock(&cw_m);
    d = in_ms(CLOCK_REALTIME, 1000);
    printf("sem_clockwait posted %d\n", sem_clockwait(&cw_sem, CLOCK_REALTIME, &d) == 0);
    d = in_ms(CLOCK_MONOTONIC, 5);
    printf("sem_clockwait times out %d\n",
           sem_clockwait(&cw_sem, CLOCK_MONOTONIC, &d) == -1 && errno == ETIMEDOUT);
    d = in_ms(CLOCK_MONOTONIC, 1000);
    pthread_mutex_t *h = &held;
    printf("mutex_clocklock %d\n", pthread_mutex_clocklock(h, CLOCK_MONOTONIC, &d) == 0);
    usleep(20000); /* the helper now holds the read lock for 100 ms */
    d = in_ms(CLOCK_REALTIME, 10);
    printf("rwlock_timedwrlock times out %d\n", pthread_rwlock_timedwrlock(&rw, &d) == ETIMEDOUT);
    d = in_ms(CLOCK_MONOTONIC, 1000);
    printf("rwlock_clockwrlock %d\n", pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &d) == 0);
    pthread_rwlock_unlock(&rw);
    d = in_ms(CLOCK_REALTIME, 10);
    printf("rwlock_timedrdlock %d\n", pthread_rwlock_timedrdlock(&rw, &d) == 0);
    pthread_rwlock_unlock(&rw);
    pthread_join(t, NULL);
}

/* IPv6 on one host: a v6-only listener beside an IPv4 one on the same port, a dual-stack
 * socket that clashes with both, ::1 connections, IPv4 peers of a dual-stack socket shown
 * as ::ffff:a.b.c.d, UDP both ways, and getaddrinfo's passive answers. */
static int v6sock(int type, int only) {
    int s = socket(AF_INET6, type, 0);
    setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &only, sizeof only);
    return s;
}

static struct sockaddr_in6 v6addr(const struct in6_addr *ip, unsigned short port) {
    struct sockaddr_in6 a;
    memset(&a, 0, sizeof a);
    a.sin6_family = AF_INET6;
    a.sin6_addr = *ip;
    a.sin6_port = port;
    return a;
}

static unsigned short port_of(int s) {
    struct sockaddr_storage a;
    socklen_t l = sizeof a;
    getsockname(s, (struct sockaddr *)&a, &l);
    return a.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&a)->sin6_port
                                   : ((struct sockaddr_in *)&a)->sin_port;
}

static void ipv6_tcp(void) {
    int l6 = v6sock(SOCK_STREAM, 1);
    struct sockaddr_in6 any = v6addr(&in6addr_any, 0);
    printf("bind v6only %d\n", bind(l6, (struct sockaddr *)&any, sizeof any));
    printf("listen v6only %d\n", listen(l6, 8));
    unsigned short port = port_of(l6);
    int l4 = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = port};
    printf("v4 on the same port %d\n", bind(l4, (struct sockaddr *)&a4, sizeof a4));
    listen(l4, 8);
    int d = v6sock(SOCK_STREAM, 0);
    any.sin6_port = port;
    int r = bind(d, (struct sockaddr *)&any, sizeof any);
    printf("dual-stack on it %d %s\n", r, r ? strerror(errno) : "");
    close(d);
    int c = socket(AF_INET6, SOCK_STREAM, 0);
    struct sockaddr_in6 lo = v6addr(&in6addr_loopback, port);
    printf("connect ::1 %d\n", connect(c, (struct sockaddr *)&lo, sizeof lo));
    struct sockaddr_in6 from;
    socklen_t fl = sizeof from;
    int s = accept(l6, (struct sockaddr *)&from, &fl);
    printf("accepted on v6only %d from ::1 %d len %d\n", s >= 0,
           IN6_IS_ADDR_LOOPBACK(&from.sin6_addr), (int)fl);
    struct sockaddr_in6 me;
    socklen_t ml = sizeof me;
    getsockname(c, (struct sockaddr *)&me, &ml);
    printf("client name ::1 %d port matches %d\n", IN6_IS_ADDR_LOOPBACK(&me.sin6_addr),
           me.sin6_port == from.sin6_port);
    char buf[8] = {0};
    ssize_t sent = send(c, "ping", 4, 0);
    printf("send %zd recv %zd\n", sent, recv(s, buf, sizeof buf, 0));
    int m = v6sock(SOCK_STREAM, 1);
    struct sockaddr_in6 mapped = v6addr(&in6addr_any, port);
    inet_pton(AF_INET6, "::ffff:127.0.0.1", &mapped.sin6_addr);
    r = connect(m, (struct sockaddr *)&mapped, sizeof mapped);
    printf("v6only to a mapped address %d %s\n", r, r ? strerror(errno) : "");
    int dl = v6sock(SOCK_STREAM, 0);
    any.sin6_port = 0;
    bind(dl, (struct sockaddr *)&any, sizeof any);
    listen(dl, 8);
    int c4 = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in to4 = {.sin_family = AF_INET, .sin_port = port_of(dl)};
    to4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    printf("v4 client to dual-stack %d\n", connect(c4, (struct sockaddr *)&to4, sizeof to4));
    fl = sizeof from;
    s = accept(dl, (struct sockaddr *)&from, &fl);
    printf("its peer is v6 %d mapped %d\n", from.sin6_family == AF_INET6,
           IN6_IS_ADDR_V4MAPPED(&from.sin6_addr));
}

static void ipv6_udp(void) {
    int u6 = v6sock(SOCK_DGRAM, 0);
    struct sockaddr_in6 any = v6addr(&in6addr_any, 0);
    bind(u6, (struct sockaddr *)&any, sizeof any);
    int u4 = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = port_of(u6)};
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    printf("udp v4 to dual %zd\n", sendto(u4, "a", 1, 0, (struct sockaddr *)&to, sizeof to));
    struct sockaddr_in6 from;
    socklen_t fl = sizeof from;
    char b[8];
    ssize_t n = recvfrom(u6, b, sizeof b, 0, (struct sockaddr *)&from, &fl);
    printf("udp recv %zd mapped %d\n", n, IN6_IS_ADDR_V4MAPPED(&from.sin6_addr));
    printf("udp reply %zd\n", sendto(u6, "b", 1, 0, (struct sockaddr *)&from, fl));
    struct sockaddr_in f4;
    fl = sizeof f4;
    n = recvfrom(u4, b, sizeof b, 0, (struct sockaddr *)&f4, &fl);
    printf("udp v4 recv %zd family v4 %d\n", n, f4.sin_family == AF_INET);
    struct sockaddr_in6 lo = v6addr(&in6addr_loopback, port_of(u6));
    printf("udp to ::1 %zd\n", sendto(u6, "c", 1, 0, (struct sockaddr *)&lo, sizeof lo));
    fl = sizeof from;
    n = recvfrom(u6, b, sizeof b, 0, (struct sockaddr *)&from, &fl);
    printf("udp recv %zd from ::1 %d\n", n, IN6_IS_ADDR_LOOPBACK(&from.sin6_addr));
}

static void ipv6_scenario(void) {
    ipv6_tcp();
    ipv6_udp();
    struct addrinfo hints = {.ai_flags = AI_PASSIVE, .ai_socktype = SOCK_STREAM}, *res;
    int r = getaddrinfo(NULL, "7000", &hints, &res);
    printf("getaddrinfo passive %d\n", r);
    if (r == 0) freeaddrinfo(res);
}

static int sf_file;
static ssize_t sf_sent;

static void *sf_writer(void *arg) {
    (void)arg;
    off_t off = 0;
    sf_sent = 0;
    while (sf_sent < (ssize_t)sizeof big) {
        ssize_t k = sendfile(big_fd, sf_file, &off, sizeof big - (size_t)sf_sent);
        if (k <= 0) break;
        sf_sent += k;
    }
    printf("sendfile to a stream %zd offset %ld\n", sf_sent, (long)off);
    return NULL;
}

/* sendfile from a file to a TCP stream (blocking, from another thread: natively it may wait for
 * the reader), to a pipe, and without an offset (the file offset moves). */
static void sendfile_scenario(void) {
    char path[] = "/tmp/weft-parity-sendfile-XXXXXX";
    sf_file = mkstemp(path);
    unlink(path);
    for (size_t i = 0; i < sizeof big; i++) big[i] = (char)(i * 13 + 1);
    printf("file written %zd\n", write(sf_file, big, sizeof big));
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bind(l, (struct sockaddr *)&a, sizeof a);
    listen(l, 8);
    socklen_t al = sizeof a;
    getsockname(l, (struct sockaddr *)&a, &al);
    big_fd = socket(AF_INET, SOCK_STREAM, 0);
    printf("connect %d\n", connect(big_fd, (struct sockaddr *)&a, sizeof a));
    int s2 = accept(l, NULL, NULL);
    pthread_t t;
    pthread_create(&t, NULL, sf_writer, NULL);
    size_t got = 0;
    while (got < sizeof back) {
        ssize_t k = read(s2, back + got, sizeof back - got);
        if (k <= 0) break;
        got += (size_t)k;
    }
    pthread_join(t, NULL);
    printf("read %zu intact %d\n", got, !memcmp(big, back, sizeof big));
    int p[2];
    pipe(p);
    off_t off = 1000;
    ssize_t k = sendfile(p[1], sf_file, &off, 500);
    printf("sendfile to a pipe %zd offset %ld\n", k, (long)off);
    char buf[500];
    k = read(p[0], buf, sizeof buf);
    printf("pipe read %zd same %d\n", k, !memcmp(buf, big + 1000, 500));
    lseek(sf_file, 10, SEEK_SET);
    printf("sendfile without offset %zd\n", sendfile(p[1], sf_file, NULL, 20));
    printf("file offset %ld\n", (long)lseek(sf_file, 0, SEEK_CUR));
    k = read(p[0], buf, 20);
    printf("pipe read %zd same %d\n", k, !memcmp(buf, big + 10, 20));
    printf("client wrote %zd\n", write(big_fd, "abc", 3));
    k = sendfile(p[1], s2, NULL, 3);
    printf("sendfile from a stream %zd\n", k);
    k = read(p[0], buf, 3);
    printf("pipe read %zd same %d\n", k, !memcmp(buf, "abc", 3));
    close(p[0]);
    close(p[1]);
    close(s2);
    close(big_fd);
    close(l);
    close(sf_file);
}

int main(int argc, char **argv) {
    const char *s = argc > 1 ? argv[1] : "";
    if (!strcmp(s, "time")) {
        long m0 = ns(CLOCK_MONOTONIC), m1 = ns(CLOCK_MONOTONIC);
        printf("monotonic non-decreasing %d\n", m1 >= m0);
        struct timeval tv;
        gettimeofday(&tv, NULL);
        time_t t = time(NULL);
        printf("time() within 1s of gettimeofday %d\n", labs((long)t - (long)tv.tv_sec) <= 1);
        struct timespec ts;
        printf("timespec_get %d\n", timespec_get(&ts, TIME_UTC));
        printf("after 2020 %d\n", t > 1577836800);
        printf("bad clock %d errno EINVAL %d\n", clock_gettime((clockid_t)12345, &ts), errno == EINVAL);
        struct tms tb;
        clock_t t0 = times(&tb);
        long m2 = ns(CLOCK_MONOTONIC);
        usleep(200000);
        clock_t t1 = times(&tb);
        long waited = (ns(CLOCK_MONOTONIC) - m2) / 10000000; /* in ticks of 10 ms */
        printf("times() advances with the monotonic clock %d\n",
               t1 - t0 >= waited - 1 && t1 - t0 <= waited + 1 && waited >= 20);
    } else if (!strcmp(s, "sleep")) {
        long a = ns(CLOCK_MONOTONIC);
        struct timespec req = {0, 20000000}, rem;
        printf("nanosleep %d\n", nanosleep(&req, &rem));
        long b = ns(CLOCK_MONOTONIC);
        printf("slept >= 20ms %d\n", b - a >= 20000000);
        usleep(5000);
        printf("usleep adds >= 5ms %d\n", ns(CLOCK_MONOTONIC) - b >= 5000000);
        long c = ns(CLOCK_MONOTONIC);
        req.tv_nsec = 3000000;
        printf("clock_nanosleep %d\n", clock_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL));
        printf("slept >= 3ms %d\n", ns(CLOCK_MONOTONIC) - c >= 3000000);
        printf("sleep(0) %u\n", sleep(0));
    } else if (!strcmp(s, "random")) {
        unsigned char a[32], b[32];
        printf("getrandom %zd\n", getrandom(a, sizeof a, 0));
        printf("getentropy %d\n", getentropy(b, sizeof b));
        printf("differ %d\n", memcmp(a, b, sizeof a) != 0);
        int fd = open("/dev/urandom", O_RDONLY);
        printf("urandom read %zd\n", read(fd, a, sizeof a));
        close(fd);
        FILE *f = fopen("/dev/urandom", "rb");
        printf("fopen urandom fread %zu\n", fread(b, 1, sizeof b, f));
        /* A random device never ends: well past any buffer the shim fills at open. */
        static unsigned char big[300000];
        printf("urandom fread big %zu\n", fread(big, 1, sizeof big, f));
        printf("fileno of it %d\n", fileno(f) >= 0);
        fclose(f);
        fd = open("/dev/urandom", O_RDONLY);
        size_t total = 0;
        while (total < sizeof big) {
            ssize_t n = read(fd, big, sizeof big - total > 70000 ? 70000 : sizeof big - total);
            if (n <= 0) break;
            total += (size_t)n;
        }
        printf("urandom read big %zu\n", total);
        close(fd);
        /* The arc4random family, drawn as unbound draws its port table at start. */
        static unsigned short ports[65536];
        int in_range = 1;
        for (unsigned i = 0; i < 65536; i++) ports[i] = (unsigned short)i;
        for (unsigned i = 65535; i > 0; i--) {
            unsigned j = arc4random_uniform(i + 1);
            in_range &= j <= i;
            unsigned short t = ports[i];
            ports[i] = ports[j];
            ports[j] = t;
        }
        unsigned long sum = 0;
        for (unsigned i = 0; i < 65536; i++) sum += ports[i];
        printf("arc4random_uniform in range %d, a permutation %d, 0 and 1 give 0: %u %u\n",
               in_range, sum == 65535UL * 65536 / 2, arc4random_uniform(0), arc4random_uniform(1));
        memset(a, 0, sizeof a);
        arc4random_buf(a, 31);
        int nonzero = 0;
        for (int i = 0; i < 31; i++) nonzero += a[i] != 0;
        printf("arc4random_buf filled %d, left the last byte %d\n", nonzero > 20, a[31] == 0);
        unsigned x = arc4random(), y = arc4random();
        printf("arc4random twice differs %d\n", x != y);
    } else if (!strcmp(s, "ipv6")) {
        ipv6_scenario();
    } else if (!strcmp(s, "udp")) {
        struct sockaddr_in a, b, from;
        int fa = udp_bound(&a), fb = udp_bound(&b);
        printf("ports nonzero %d distinct %d\n", a.sin_port != 0, a.sin_port != b.sin_port);
        printf("sendto %zd\n", sendto(fa, "hello", 5, 0, (struct sockaddr *)&b, sizeof b));
        char buf[64];
        socklen_t fl = sizeof from;
        ssize_t n = recvfrom(fb, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl);
        printf("recvfrom %zd '%.*s' from sender %d\n", n, (int)n, buf, from.sin_port == a.sin_port);
        printf("connect %d\n", connect(fb, (struct sockaddr *)&a, sizeof a));
        printf("send %zd\n", send(fb, "back", 4, 0));
        n = recv(fa, buf, sizeof buf, 0);
        printf("recv %zd '%.*s'\n", n, (int)n, buf);
        struct iovec iov[2] = {{"ab", 2}, {"cd", 2}};
        struct msghdr m;
        memset(&m, 0, sizeof m);
        m.msg_name = &b;
        m.msg_namelen = sizeof b;
        m.msg_iov = iov;
        m.msg_iovlen = 2;
        printf("sendmsg %zd\n", sendmsg(fa, &m, 0));
        char r1[3], r2[8];
        struct iovec riov[2] = {{r1, 3}, {r2, 8}};
        struct msghdr rm;
        memset(&rm, 0, sizeof rm);
        rm.msg_iov = riov;
        rm.msg_iovlen = 2;
        n = recvmsg(fb, &rm, 0);
        printf("recvmsg %zd '%.3s%.1s'\n", n, r1, r2);
        struct mmsghdr mm[3];
        struct iovec mi[3] = {{"one", 3}, {"two", 3}, {"three", 5}};
        batch(mm, mi, 3, &b);
        printf("sendmmsg %d\n", sendmmsg(fa, mm, 3, 0));
        char rb[4][8];
        struct iovec ri[4] = {{rb[0], 8}, {rb[1], 8}, {rb[2], 8}, {rb[3], 8}};
        struct mmsghdr rmm[4];
        batch(rmm, ri, 4, NULL);
        usleep(50000); /* let all three arrive (the simulated network has latency) */
        n = recvmmsg(fb, rmm, 4, MSG_WAITFORONE, NULL);
        /* UDP may reorder (the simulated network does, by latency): print order-free facts. */
        int found_three = 0;
        for (int i = 0; i < 3; i++) found_three |= rmm[i].msg_len == 5 && !memcmp(rb[i], "three", 5);
        printf("recvmmsg %zd total %u three %d\n", n, rmm[0].msg_len + rmm[1].msg_len + rmm[2].msg_len, found_three);
        sendto(fa, "truncate-me", 11, 0, (struct sockaddr *)&b, sizeof b);
        n = recv(fb, buf, 4, 0);
        printf("short recv %zd\n", n);
        close(fa);
        close(fb);
    } else if (!strcmp(s, "rawcalls")) {
        raw_calls();
    } else if (!strcmp(s, "clockwaits")) {
        clock_waits();
    } else if (!strcmp(s, "nonblock")) {
        struct sockaddr_in a;
        int fd = udp_bound(&a);
        char buf[8];
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        printf("fcntl nonblock recv %zd EAGAIN %d\n", recv(fd, buf, 8, 0), errno == EAGAIN);
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        printf("dontwait recv %zd EAGAIN %d\n", recv(fd, buf, 8, MSG_DONTWAIT), errno == EAGAIN);
        int on = 1;
        ioctl(fd, FIONBIO, &on);
        printf("ioctl nonblock recv %zd EAGAIN %d\n", recv(fd, buf, 8, 0), errno == EAGAIN);
        on = 0;
        ioctl(fd, FIONBIO, &on);
        struct timeval tv = {0, 30000};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        long t0 = ns(CLOCK_MONOTONIC);
        printf("rcvtimeo recv %zd EAGAIN %d\n", recv(fd, buf, 8, 0), errno == EAGAIN);
        printf("waited >= 30ms %d\n", ns(CLOCK_MONOTONIC) - t0 >= 30000000);
        int s2 = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
        printf("SOCK_NONBLOCK recv %zd EAGAIN %d\n", recv(s2, buf, 8, 0), errno == EAGAIN);
    } else if (!strcmp(s, "poll")) {
        struct sockaddr_in a, b;
        int fa = udp_bound(&a), fb = udp_bound(&b);
        struct pollfd p[2] = {{fa, POLLIN, 0}, {fb, POLLIN | POLLOUT, 0}};
        long t0 = ns(CLOCK_MONOTONIC);
        printf("poll %d revents %d %d\n", poll(p, 2, 40), p[0].revents, p[1].revents);
        p[1].events = POLLIN;
        printf("poll timeout %d after >= 40ms %d\n", poll(p, 2, 40), ns(CLOCK_MONOTONIC) - t0 >= 40000000);
        sendto(fb, "x", 1, 0, (struct sockaddr *)&a, sizeof a);
        printf("poll ready %d revents %d\n", poll(p, 2, 1000), p[0].revents);
        fd_set r;
        FD_ZERO(&r);
        FD_SET(fa, &r);
        FD_SET(fb, &r);
        struct timeval tv = {1, 0};
        int n = select((fa > fb ? fa : fb) + 1, &r, NULL, NULL, &tv);
        printf("select %d fa %d fb %d\n", n, FD_ISSET(fa, &r) != 0, FD_ISSET(fb, &r) != 0);
        char c;
        recv(fa, &c, 1, 0);
        FD_ZERO(&r);
        FD_SET(fa, &r);
        tv.tv_sec = 0;
        tv.tv_usec = 20000;
        printf("select timeout %d\n", select(fa + 1, &r, NULL, NULL, &tv));
        int ep = epoll_create1(0);
        struct epoll_event ev = {EPOLLIN, {.u64 = 42}};
        printf("epoll_ctl %d\n", epoll_ctl(ep, EPOLL_CTL_ADD, fa, &ev));
        struct epoll_event out[4];
        printf("epoll_wait timeout %d\n", epoll_wait(ep, out, 4, 20));
        sendto(fb, "y", 1, 0, (struct sockaddr *)&a, sizeof a);
        n = epoll_wait(ep, out, 4, 1000);
        printf("epoll_wait %d data %llu in %d\n", n, (unsigned long long)out[0].data.u64, (out[0].events & EPOLLIN) != 0);
        close(ep);
    } else if (!strcmp(s, "wakeup")) {
        /* Another thread makes real descriptors (a pipe, an eventfd) ready while this one
         * waits in poll, epoll_wait and select. */
        pipe(wake_pipe);
        wake_efd = eventfd(0, 0);
        struct sockaddr_in a;
        int u = udp_bound(&a);
        /* t0 before the waker exists: natively, a main thread descheduled for 10 ms right
         * after pthread_create would otherwise see the pipe ready "too soon". */
        long t0 = ns(CLOCK_MONOTONIC);
        pthread_t t;
        pthread_create(&t, NULL, waker, NULL);
        struct pollfd p[2] = {{u, POLLIN, 0}, {wake_pipe[0], POLLIN, 0}};
        printf("poll %d pipe ready %d\n", poll(p, 2, 5000), p[1].revents == POLLIN);
        printf("waited 10ms..5s %d\n", ns(CLOCK_MONOTONIC) - t0 >= 10000000 && ns(CLOCK_MONOTONIC) - t0 < 5000000000L);
        char c;
        read(wake_pipe[0], &c, 1);
        int ep = epoll_create1(0);
        struct epoll_event ev = {EPOLLIN, {.u64 = 7}}, out[2];
        epoll_ctl(ep, EPOLL_CTL_ADD, wake_efd, &ev);
        struct epoll_event ev2 = {EPOLLIN, {.u64 = 8}};
        epoll_ctl(ep, EPOLL_CTL_ADD, u, &ev2);
        int n = epoll_wait(ep, out, 2, 5000);
        printf("epoll_wait %d data %llu\n", n, (unsigned long long)out[0].data.u64);
        uint64_t v;
        read(wake_efd, &v, sizeof v);
        fd_set r;
        FD_ZERO(&r);
        FD_SET(wake_pipe[0], &r);
        struct timeval tv = {5, 0};
        printf("select %d pipe %d\n", select(wake_pipe[0] + 1, &r, NULL, NULL, &tv), FD_ISSET(wake_pipe[0], &r) != 0);
        pthread_join(t, NULL);
        close(ep);
    } else if (!strcmp(s, "tcp")) {
        /* One process talking to itself over loopback TCP. */
        int l = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a;
        memset(&a, 0, sizeof a);
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int b = bind(l, (struct sockaddr *)&a, sizeof a);
        printf("bind %d\n", b);
        printf("listen %d\n", listen(l, 8));
        socklen_t al = sizeof a;
        getsockname(l, (struct sockaddr *)&a, &al);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        int r = connect(c, (struct sockaddr *)&a, sizeof a);
        int inprogress = r == 0 || errno == EINPROGRESS;
        printf("nonblocking connect in progress or done %d\n", inprogress);
        struct pollfd p = {c, POLLOUT, 0};
        printf("poll out %d\n", poll(&p, 1, 1000));
        int err = -1;
        socklen_t el = sizeof err;
        getsockopt(c, SOL_SOCKET, SO_ERROR, &err, &el);
        printf("SO_ERROR %d\n", err);
        struct sockaddr_in peer;
        socklen_t pl = sizeof peer;
        int s2 = accept(l, (struct sockaddr *)&peer, &pl);
        printf("accepted %d\n", s2 >= 0);
        struct sockaddr_in me;
        socklen_t ml = sizeof me;
        getsockname(c, (struct sockaddr *)&me, &ml);
        printf("peer is the client %d\n", peer.sin_port == me.sin_port);
        fcntl(c, F_SETFL, 0);
        printf("send %zd\n", send(c, "hello ", 6, 0));
        printf("write %zd\n", write(c, "world", 5));
        char buf[64];
        size_t got = 0;
        while (got < 11) {
            ssize_t n = read(s2, buf + got, sizeof buf - got);
            if (n <= 0) break;
            got += (size_t)n;
        }
        printf("server read %zu '%.*s'\n", got, (int)got, buf);
        for (size_t i = 0; i < sizeof big; i++) big[i] = (char)(i * 7);
        /* Written from another thread: natively a blocking write this large may wait for the
         * reader. */
        big_fd = c;
        pthread_t bw;
        pthread_create(&bw, NULL, big_writer, NULL);
        got = 0;
        while (got < sizeof big) {
            ssize_t k = read(s2, back + got, sizeof back - got);
            if (k <= 0) break;
            got += (size_t)k;
        }
        pthread_join(bw, NULL);
        printf("big write %zd\n", big_written);
        printf("big read %zu intact %d\n", got, !memcmp(big, back, sizeof big));
        printf("shutdown %d\n", shutdown(c, SHUT_WR));
        printf("eof %zd\n", recv(s2, buf, sizeof buf, 0));
        printf("reply %zd\n", send(s2, "bye", 3, 0));
        ssize_t n = recv(c, buf, sizeof buf, 0);
        printf("client got %zd '%.*s'\n", n, (int)n, buf);
        close(s2);
        printf("client eof %zd\n", recv(c, buf, sizeof buf, 0));
        close(c);
        /* A send right after a non-blocking connect: Linux waits for the handshake
         * (EAGAIN when non-blocking; on loopback it may be done already), never ENOTCONN. */
        int e = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        connect(e, (struct sockaddr *)&a, sizeof a);
        ssize_t early = send(e, "x", 1, MSG_NOSIGNAL);
        printf("send while connecting sent or EAGAIN %d\n", early == 1 || errno == EAGAIN);
        struct pollfd pe = {e, POLLOUT, 0};
        while (early != 1 && poll(&pe, 1, 1000) == 1 && !(pe.revents & (POLLERR | POLLHUP)))
            early = send(e, "x", 1, MSG_NOSIGNAL);
        int s3 = accept(l, NULL, NULL);
        printf("then sent %zd read %zd\n", early, read(s3, buf, 1));
        close(s3);
        close(e);
        close(l);
        int d = socket(AF_INET, SOCK_STREAM, 0);
        r = connect(d, (struct sockaddr *)&a, sizeof a);
        printf("refused %d ECONNREFUSED %d\n", r, errno == ECONNREFUSED);
        close(d);
    } else if (!strcmp(s, "pid")) {
        pid_t me = getpid();
        printf("pid positive %d, parent differs %d\n", me > 0, getppid() != me);
        printf("kill(self, 0) %d\n", kill(me, 0));
        printf("stable %d\n", getpid() == me);
        printf("main thread id is the pid %d\n", gettid() == me);
        /* Calls that name a process by pid, given its own (the virtual one under the shim). */
        errno = 0;
        int prio = getpriority(PRIO_PROCESS, me);
        printf("getpriority own pid errno %d\n", errno);
        printf("setpriority own pid %d\n", setpriority(PRIO_PROCESS, me, prio));
        printf("sched_getscheduler own pid %d\n", sched_getscheduler(me));
        struct rlimit rl;
        printf("prlimit own pid %d\n", prlimit(me, RLIMIT_NOFILE, NULL, &rl));
        cpu_set_t set;
        CPU_ZERO(&set);
        sched_getaffinity(me, sizeof set, &set);
        printf("sched_setaffinity own pid %d\n", sched_setaffinity(me, sizeof set, &set));
    } else if (!strcmp(s, "sendfile")) {
        sendfile_scenario();
    } else {
        printf("unknown scenario %s\n", s);
        return 2;
    }
    return 0;
}
