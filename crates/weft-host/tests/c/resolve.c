/* Resolves its peer's numeric address with getaddrinfo (AI_ADDRCONFIG makes glibc ask the
 * kernel over netlink which address families are configured) and sends it a datagram.
 * usage: resolve ID IP PORT PEER_IP [addrconfig] */
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 5) return 2;
    struct addrinfo hints, *me, *peer;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_DGRAM;
    hints.ai_flags = argc > 5 ? AI_ADDRCONFIG : 0;
    int e = getaddrinfo(argv[2], argv[3], &hints, &me);
    if (e) {
        printf("getaddrinfo: %s\n", gai_strerror(e));
        return 1;
    }
    e = getaddrinfo(argv[4], argv[3], &hints, &peer);
    if (e) {
        printf("getaddrinfo peer: %s\n", gai_strerror(e));
        return 1;
    }
    int fd = socket(me->ai_family, me->ai_socktype, 0);
    bind(fd, me->ai_addr, me->ai_addrlen);
    char buf[32];
    if (atoi(argv[1]) == 0) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        printf("got %zd bytes\n", n);
    } else {
        printf("sent %zd\n", sendto(fd, "hi", 2, 0, peer->ai_addr, peer->ai_addrlen));
    }
    return 0;
}
