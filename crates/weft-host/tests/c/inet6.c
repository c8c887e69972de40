/* IPv6 sockets across simulated nodes: node 0 listens dual-stack on [::]:7000 and reports its
 * peer; node 1 reaches it at ::ffff:127.1.0.1 and finds every other IPv6 address unreachable
 * (a node's only IPv6 address is ::1). usage: inet6 ID */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static struct sockaddr_in6 at(const char *ip, int port) {
    struct sockaddr_in6 a;
    memset(&a, 0, sizeof a);
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(port);
    inet_pton(AF_INET6, ip, &a.sin6_addr);
    return a;
}

static const char *name(struct sockaddr_in6 *a, char *buf) {
    return inet_ntop(AF_INET6, &a->sin6_addr, buf, INET6_ADDRSTRLEN);
}

static int server(void) {
    int l = socket(AF_INET6, SOCK_STREAM, 0);
    struct sockaddr_in6 any = at("::", 7000);
    if (bind(l, (struct sockaddr *)&any, sizeof any) || listen(l, 4)) return 1;
    struct sockaddr_in6 peer;
    socklen_t pl = sizeof peer;
    int s = accept(l, (struct sockaddr *)&peer, &pl);
    char buf[64], ip[INET6_ADDRSTRLEN];
    printf("server: peer [%s]\n", name(&peer, ip));
    ssize_t n = read(s, buf, sizeof buf);
    if (n > 0) write(s, buf, n);
    close(s);
    return 0;
}

static int client(void) {
    usleep(10000);
    int c = socket(AF_INET6, SOCK_STREAM, 0);
    struct sockaddr_in6 to = at("::ffff:127.1.0.1", 7000), me;
    printf("client: connect %d\n", connect(c, (struct sockaddr *)&to, sizeof to));
    socklen_t ml = sizeof me;
    getsockname(c, (struct sockaddr *)&me, &ml);
    char ip[INET6_ADDRSTRLEN], buf[16] = {0};
    printf("client: name [%s]\n", name(&me, ip));
    write(c, "hi", 2);
    printf("client: echo %zd %s\n", read(c, buf, sizeof buf - 1), buf);
    int far = socket(AF_INET6, SOCK_STREAM, 0);
    struct sockaddr_in6 other = at("2001:db8::1", 7000);
    int r = connect(far, (struct sockaddr *)&other, sizeof other);
    printf("client: connect 2001:db8::1 %d %s\n", r, strerror(errno));
    int u = socket(AF_INET6, SOCK_DGRAM, 0);
    r = bind(u, (struct sockaddr *)&other, sizeof other);
    printf("client: bind 2001:db8::1 %d %s\n", r, strerror(errno));
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    setvbuf(stdout, NULL, _IONBF, 0);
    return atoi(argv[1]) == 0 ? server() : client();
}
