/* TCP echo: node 0 serves (poll over the listener and its clients, echoing upper-cased), the
 * other nodes connect to it, send three lines, read the echoes, shut down and wait for EOF.
 * usage: tcpecho ID ADDR PEERS */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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

static int serve(struct sockaddr_in me, int clients) {
    int l = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(l, (struct sockaddr *)&me, sizeof me) || listen(l, 16)) {
        perror("bind/listen");
        return 1;
    }
    struct pollfd p[17];
    int n = 1, done = 0;
    p[0] = (struct pollfd){l, POLLIN, 0};
    while (done < clients) {
        if (poll(p, (nfds_t)n, 10000) <= 0) {
            printf("server idle\n");
            return 2;
        }
        if (p[0].revents & POLLIN) {
            int c = accept(l, NULL, NULL);
            p[n++] = (struct pollfd){c, POLLIN, 0};
            printf("accepted a client\n");
        }
        for (int i = 1; i < n; i++) {
            if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            char buf[256];
            ssize_t k = read(p[i].fd, buf, sizeof buf);
            if (k <= 0) {
                printf("client done (%s)\n", k == 0 ? "eof" : strerror(errno));
                close(p[i].fd);
                p[i] = p[--n];
                i--;
                done++;
                continue;
            }
            for (ssize_t j = 0; j < k; j++) buf[j] = (char)toupper((unsigned char)buf[j]);
            write(p[i].fd, buf, (size_t)k);
        }
    }
    printf("served %d\n", done);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    int id = atoi(argv[1]);
    struct sockaddr_in me = parse(argv[2]);
    char list[1024];
    snprintf(list, sizeof list, "%s", argv[3]);
    int peers = 0;
    struct sockaddr_in server;
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ","))
        if (peers++ == 0) server = parse(tok);
    if (id == 0) return serve(me, peers);
    usleep(1000 * (unsigned)id);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(s, (struct sockaddr *)&server, sizeof server)) {
        printf("connect: %s\n", strerror(errno));
        return 1;
    }
    for (int m = 0; m < 3; m++) {
        char line[64], back[64];
        int len = snprintf(line, sizeof line, "line %d from %d\n", m, id);
        write(s, line, (size_t)len);
        int got = 0;
        while (got < len) {
            ssize_t k = read(s, back + got, (size_t)(len - got));
            if (k <= 0) {
                printf("read: %s\n", k == 0 ? "eof" : strerror(errno));
                return 1;
            }
            got += (int)k;
        }
        printf("echo: %.*s", got, back);
        usleep(3000);
    }
    shutdown(s, SHUT_WR);
    char c;
    printf("final read %zd\n", read(s, &c, 1));
    close(s);
    return 0;
}
