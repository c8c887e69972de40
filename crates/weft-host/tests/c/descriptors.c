/* Descriptors as on Linux: copies made by dup, dup2, dup3 and fcntl(F_DUPFD*) of sockets and
 * epoll instances, separate TCP and UDP port spaces, SO_REUSEADDR and SO_REUSEPORT, one port
 * on several addresses. Prints
 * only what must be the same natively and under the shim (no fd numbers, ports or times).
 * usage: descriptors SCENARIO */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static struct sockaddr_in loopback(unsigned short port) {
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    return a;
}

static unsigned short port_of(int fd) {
    struct sockaddr_in a;
    socklen_t l = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &l);
    return ntohs(a.sin_port);
}

/* A socket of `type`, with SO_REUSEADDR and SO_REUSEPORT as asked, bound to ip:port (port 0:
 * any); answers the fd, or -1 with errno from bind. */
static int bound_ip(int type, const char *ip, int port, int reuseaddr, int reuseport) {
    int fd = socket(AF_INET, type, 0), one = 1;
    if (reuseaddr) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (reuseport) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    struct sockaddr_in a = loopback((unsigned short)port);
    inet_pton(AF_INET, ip, &a.sin_addr);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* The same, bound to loopback:port. */
static int bound(int type, int port, int reuseaddr, int reuseport) {
    return bound_ip(type, "127.0.0.1", port, reuseaddr, reuseport);
}

static void say(const char *what, int ok) { printf("%s %d\n", what, ok); }

static ssize_t send_to(int from, int port, const char *msg) {
    struct sockaddr_in a = loopback((unsigned short)port);
    return sendto(from, msg, strlen(msg), 0, (struct sockaddr *)&a, sizeof a);
}

static void expect(int fd, const char *msg) {
    char buf[64];
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    printf("got '%.*s' (want %s)\n", n > 0 ? (int)n : 0, buf, msg);
}

static int readable(int fd) {
    struct pollfd p = {fd, POLLIN, 0};
    return poll(&p, 1, 0);
}

static void udp_copies(void) {
    int a = bound(SOCK_DGRAM, 0, 0, 0), b = bound(SOCK_DGRAM, 0, 0, 0);
    int pb = port_of(b);
    int c = dup(b);
    say("dup", c >= 0 && c != b);
    say("copy has the same port", port_of(c) == pb);
    send_to(a, pb, "one");
    expect(c, "one");
    close(b);
    send_to(a, pb, "two");
    expect(c, "two");
    say("port still taken while a copy is open", bound(SOCK_DGRAM, pb, 0, 0) < 0 && errno == EADDRINUSE);
    int d = fcntl(c, F_DUPFD, 100);
    say("F_DUPFD at or above 100", d >= 100);
    say("F_DUPFD clears close-on-exec", (fcntl(d, F_GETFD) & FD_CLOEXEC) == 0);
    int e = fcntl(c, F_DUPFD_CLOEXEC, 0);
    say("F_DUPFD_CLOEXEC sets close-on-exec", e >= 0 && (fcntl(e, F_GETFD) & FD_CLOEXEC) != 0);
    fcntl(d, F_SETFL, O_NONBLOCK);
    char buf[8];
    say("O_NONBLOCK set on one copy holds for all", recv(e, buf, sizeof buf, 0) < 0 && errno == EAGAIN);
    fcntl(e, F_SETFL, 0);
    close(c);
    close(d);
    send_to(a, pb, "three");
    expect(e, "three");
    close(e);
    int again = bound(SOCK_DGRAM, pb, 0, 0);
    say("port free once the last copy is closed", again >= 0);
    close(again);
    close(a);
}

static void udp_dup2(void) {
    int a = bound(SOCK_DGRAM, 0, 0, 0), b = bound(SOCK_DGRAM, 0, 0, 0), x = bound(SOCK_DGRAM, 0, 0, 0);
    int pb = port_of(b), px = port_of(x);
    say("dup2 onto itself", dup2(b, b) == b);
    say("dup3 onto itself EINVAL", dup3(b, b, 0) < 0 && errno == EINVAL);
    say("dup2 onto an open socket", dup2(b, x) == x);
    say("the target is now a copy", port_of(x) == pb);
    int y = bound(SOCK_DGRAM, px, 0, 0);
    say("rebinding the replaced socket's port", y >= 0);
    send_to(a, pb, "via dup2");
    expect(x, "via dup2");
    int z = dup3(b, 60, O_CLOEXEC);
    say("dup3 O_CLOEXEC", z == 60 && (fcntl(z, F_GETFD) & FD_CLOEXEC) != 0);
    close(b);
    close(x);
    send_to(a, pb, "last copy");
    expect(z, "last copy");
    say("dup of a closed fd EBADF", dup(b) < 0 && errno == EBADF);
    close(z);
    close(y);
    close(a);
}

static void epoll_copies(void) {
    int a = bound(SOCK_DGRAM, 0, 0, 0), b = bound(SOCK_DGRAM, 0, 0, 0);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    int ep2 = fcntl(ep, F_DUPFD_CLOEXEC, 0); /* what mio does */
    say("epoll copy", ep2 >= 0 && ep2 != ep);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 7};
    say("register on the copy", epoll_ctl(ep2, EPOLL_CTL_ADD, b, &ev) == 0);
    say("the original sees it: EEXIST", epoll_ctl(ep, EPOLL_CTL_ADD, b, &ev) < 0 && errno == EEXIST);
    send_to(a, port_of(b), "x");
    struct epoll_event out[4];
    int n = epoll_wait(ep, out, 4, 1000);
    say("wait on the original", n == 1 && out[0].data.u64 == 7);
    n = epoll_wait(ep2, out, 4, 1000);
    say("wait on the copy", n == 1 && out[0].data.u64 == 7);
    close(ep);
    n = epoll_wait(ep2, out, 4, 1000);
    say("the copy outlives the original", n == 1 && out[0].data.u64 == 7);
    int s = dup(b);
    expect(s, "x");
    n = epoll_wait(ep2, out, 4, 0);
    say("drained through a socket copy", n == 0);
    close(ep2);
    close(s);
    close(b);
    close(a);
}

static void stream_copies(void) {
    int l = bound(SOCK_STREAM, 0, 0, 0);
    listen(l, 8);
    int l2 = dup(l);
    close(l);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = loopback(port_of(l2));
    say("connect to a listener's copy", connect(c, (struct sockaddr *)&a, sizeof a) == 0);
    int s = accept(l2, NULL, NULL);
    say("accept on the copy", s >= 0);
    int s2 = dup(s);
    close(s);
    send(c, "ping", 4, 0);
    expect(s2, "ping");
    send(s2, "pong", 4, 0);
    expect(c, "pong");
    usleep(20000);
    say("closing one copy sends no FIN", readable(c) == 0);
    close(s2);
    char buf[8];
    say("closing the last copy does", recv(c, buf, sizeof buf, 0) == 0);
    close(c);
    close(l2);
}

static void ports(void) {
    int t = bound(SOCK_STREAM, 0, 0, 0);
    int p = port_of(t);
    int u = bound(SOCK_DGRAM, p, 0, 0);
    say("TCP and UDP share a port number", u >= 0);
    say("a second TCP bind EADDRINUSE", bound(SOCK_STREAM, p, 0, 0) < 0 && errno == EADDRINUSE);
    say("a second UDP bind EADDRINUSE", bound(SOCK_DGRAM, p, 0, 0) < 0 && errno == EADDRINUSE);
    close(t);
    close(u);

    int u1 = bound(SOCK_DGRAM, 0, 1, 0);
    int up = port_of(u1);
    say("UDP SO_REUSEADDR on one only EADDRINUSE", bound(SOCK_DGRAM, up, 0, 0) < 0 && errno == EADDRINUSE);
    int u2 = bound(SOCK_DGRAM, up, 1, 0);
    say("UDP SO_REUSEADDR on both", u2 >= 0);
    int sender = bound(SOCK_DGRAM, 0, 0, 0);
    send_to(sender, up, "shared");
    usleep(20000);
    say("a datagram reaches exactly one", readable(u1) + readable(u2) == 1);
    close(u1);
    close(u2);

    int r1 = bound(SOCK_DGRAM, 0, 0, 1);
    int rp = port_of(r1);
    int r2 = bound(SOCK_DGRAM, rp, 0, 1);
    say("UDP SO_REUSEPORT on both", r2 >= 0);
    send_to(sender, rp, "balanced");
    usleep(20000);
    say("a datagram reaches exactly one", readable(r1) + readable(r2) == 1);
    close(r1);
    close(r2);
    close(sender);

    int t1 = bound(SOCK_STREAM, 0, 1, 0);
    int tp = port_of(t1);
    int t2 = bound(SOCK_STREAM, tp, 1, 0);
    say("TCP SO_REUSEADDR on both, none listening", t2 >= 0);
    say("listen on the first", listen(t1, 8) == 0);
    say("listen on the second EADDRINUSE", listen(t2, 8) < 0 && errno == EADDRINUSE);
    say("bind beside a listener EADDRINUSE", bound(SOCK_STREAM, tp, 1, 0) < 0 && errno == EADDRINUSE);
    close(t1);
    close(t2);

    int q1 = bound(SOCK_STREAM, 0, 0, 1);
    int qp = port_of(q1);
    int q2 = bound(SOCK_STREAM, qp, 0, 1);
    say("TCP SO_REUSEPORT on both", q2 >= 0);
    say("both listen", listen(q1, 8) == 0 && listen(q2, 8) == 0);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = loopback((unsigned short)qp);
    say("connect", connect(c, (struct sockaddr *)&a, sizeof a) == 0);
    usleep(20000);
    say("exactly one listener has it", readable(q1) + readable(q2) == 1);
    close(c);
    close(q1);
    close(q2);
}

static int bound_at(int type, const char *ip, int port, int reuseaddr) {
    return bound_ip(type, ip, port, reuseaddr, 0);
}

static void send_at(int from, const char *ip, int port, const char *msg) {
    struct sockaddr_in a = loopback((unsigned short)port);
    inet_pton(AF_INET, ip, &a.sin_addr);
    sendto(from, msg, strlen(msg), 0, (struct sockaddr *)&a, sizeof a);
}

static int name_is(int fd, const char *ip, int peer) {
    struct sockaddr_in a;
    socklen_t l = sizeof a;
    char s[INET_ADDRSTRLEN] = "";
    if ((peer ? getpeername : getsockname)(fd, (struct sockaddr *)&a, &l) != 0) return 0;
    inet_ntop(AF_INET, &a.sin_addr, s, sizeof s);
    return !strcmp(s, ip);
}

/* One port on two addresses of the node (127.0.0.1 and 127.1.0.1, node 0's under weft): what
 * Kea and ntpd do, one socket per address; traffic goes to the socket bound to the address
 * its sender named, else to the one bound to any. */
static void addresses(void) {
    const char *lo = "127.0.0.1", *own = "127.1.0.1";
    int a = bound_at(SOCK_DGRAM, lo, 0, 0), p = port_of(a);
    int b = bound_at(SOCK_DGRAM, own, p, 0);
    say("UDP: one port on two addresses", b >= 0);
    say("UDP: the wildcard beside them EADDRINUSE",
        bound_at(SOCK_DGRAM, "0.0.0.0", p, 0) < 0 && errno == EADDRINUSE);
    say("UDP: the same address again EADDRINUSE", bound_at(SOCK_DGRAM, lo, p, 0) < 0 && errno == EADDRINUSE);
    say("names report the bound address", name_is(a, lo, 0) && name_is(b, own, 0));
    int sender = bound(SOCK_DGRAM, 0, 0, 0);
    send_at(sender, own, p, "to own");
    expect(b, "to own");
    send_at(sender, lo, p, "to lo");
    expect(a, "to lo");
    usleep(20000);
    say("each reached one socket", !readable(a) && !readable(b));
    close(a);
    close(b);

    int w = bound_at(SOCK_DGRAM, "0.0.0.0", 0, 1), q = port_of(w);
    int s = bound_at(SOCK_DGRAM, lo, q, 1);
    say("UDP SO_REUSEADDR: wildcard and a specific address", s >= 0);
    send_at(sender, lo, q, "specific");
    expect(s, "specific");
    send_at(sender, own, q, "wildcard");
    expect(w, "wildcard");
    close(w);
    close(s);

    /* Two sockets share a port (SO_REUSEADDR); one is connected to `sender`: what `sender`
     * sends reaches that one, what another sends reaches the other. */
    int open1 = bound_at(SOCK_DGRAM, lo, 0, 1), k = port_of(open1);
    int conn = bound_at(SOCK_DGRAM, lo, k, 1);
    struct sockaddr_in peer = loopback(port_of(sender));
    say("connect the second to the sender", connect(conn, (struct sockaddr *)&peer, sizeof peer) == 0);
    int other = bound(SOCK_DGRAM, 0, 0, 0);
    send_at(sender, lo, k, "from its peer");
    send_at(other, lo, k, "from another");
    expect(conn, "from its peer");
    expect(open1, "from another");
    close(open1);
    close(conn);
    close(other);
    close(sender);

    int t1 = bound_at(SOCK_STREAM, lo, 0, 0), r = port_of(t1);
    int t2 = bound_at(SOCK_STREAM, own, r, 0);
    say("TCP: one port on two addresses, both listen", t2 >= 0 && listen(t1, 8) == 0 && listen(t2, 8) == 0);
    say("TCP: the wildcard beside them EADDRINUSE",
        bound_at(SOCK_STREAM, "0.0.0.0", r, 0) < 0 && errno == EADDRINUSE);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in to = loopback((unsigned short)r);
    say("connect to 127.0.0.1", connect(c, (struct sockaddr *)&to, sizeof to) == 0);
    usleep(20000);
    say("only its listener has it", readable(t1) && !readable(t2));
    int got = accept(t1, NULL, NULL);
    say("both ends are 127.0.0.1", name_is(got, lo, 1) && name_is(got, lo, 0) && name_is(c, lo, 0));
    close(got);
    close(c);
    close(t1);
    close(t2);
}

int main(int argc, char **argv) {
    const char *s = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(s, "udp")) udp_copies();
    else if (!strcmp(s, "dup2")) udp_dup2();
    else if (!strcmp(s, "epoll")) epoll_copies();
    else if (!strcmp(s, "stream")) stream_copies();
    else if (!strcmp(s, "ports")) ports();
    else if (!strcmp(s, "addresses")) addresses();
    else {
        fprintf(stderr, "unknown scenario %s\n", s);
        return 2;
    }
    return 0;
}
