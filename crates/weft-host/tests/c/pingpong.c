/* UDP ping-pong: node 0 pings every peer ROUNDS times and waits (SO_RCVTIMEO) for each pong;
 * the others echo until they get "bye". Prints what it observes, including virtual times and
 * a random number, so two runs can be compared byte for byte.
 * usage: pingpong ID ADDR PEERS [ROUNDS [PAUSE_US]] */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static struct sockaddr_in parse(const char *s) {
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    char ip[64];
    const char *colon = strrchr(s, ':');
    size_t n = (size_t)(colon - s);
    memcpy(ip, s, n);
    ip[n] = 0;
    inet_pton(AF_INET, ip, &a.sin_addr);
    a.sin_port = htons((unsigned short)atoi(colon + 1));
    return a;
}

static long ms_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    int id = atoi(argv[1]);
    int rounds = argc > 4 ? atoi(argv[4]) : 3;
    int pause_us = argc > 5 ? atoi(argv[5]) : 10000;
    struct sockaddr_in me = parse(argv[2]);
    struct sockaddr_in peers[16];
    int npeers = 0;
    char list[1024];
    snprintf(list, sizeof list, "%s", argv[3]);
    for (char *tok = strtok(list, ","); tok && npeers < 16; tok = strtok(NULL, ","))
        peers[npeers++] = parse(tok);

    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&me, sizeof me) != 0) {
        perror("socket/bind");
        return 1;
    }
    unsigned int r;
    getrandom(&r, sizeof r, 0);
    long t0 = ms_now();
    printf("node %d up as pid %d, random %u\n", id, (int)getpid(), r % 1000);
    char buf[256];
    if (id == 0) {
        struct timeval tv = {0, 200000};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        for (int round = 0; round < rounds; round++) {
            for (int p = 0; p < npeers; p++) {
                int n = snprintf(buf, sizeof buf, "ping %d", round);
                sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&peers[p], sizeof peers[p]);
            }
            for (int got = 0; got < npeers;) {
                struct sockaddr_in from;
                socklen_t fl = sizeof from;
                ssize_t n = recvfrom(fd, buf, sizeof buf - 1, 0, (struct sockaddr *)&from, &fl);
                if (n < 0) {
                    printf("round %d: timeout (%s)\n", round, errno == EAGAIN ? "EAGAIN" : "?");
                    break;
                }
                buf[n] = 0;
                printf("round %d: '%s' from port %d after %ld ms\n", round, buf,
                       ntohs(from.sin_port), ms_now() - t0);
                got++;
            }
            if (pause_us > 0) usleep((useconds_t)pause_us);
        }
        for (int p = 0; p < npeers; p++)
            sendto(fd, "bye", 3, 0, (struct sockaddr *)&peers[p], sizeof peers[p]);
        printf("done after %ld ms\n", ms_now() - t0);
        return 0;
    }
    for (;;) {
        struct pollfd pfd = {fd, POLLIN, 0};
        if (poll(&pfd, 1, 5000) == 0) {
            printf("idle for 5 s, giving up\n");
            return 3;
        }
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        ssize_t n = recvfrom(fd, buf, sizeof buf - 1, 0, (struct sockaddr *)&from, &fl);
        if (n < 0) continue;
        buf[n] = 0;
        if (strcmp(buf, "bye") == 0) {
            printf("bye at %ld ms\n", ms_now() - t0);
            return 0;
        }
        buf[0] = 'p', buf[1] = 'o';
        sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, fl);
    }
}
