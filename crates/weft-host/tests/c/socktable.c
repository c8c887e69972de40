// The node's socket tables: a listener on 0.0.0.0:4444 with one connection to it through
// 127.0.0.1, an IPv6 listener on [::]:4445 and a datagram socket on 127.0.0.1:5353, as the
// kernel's /proc/net tables, a /proc/self/fd link, `ss` (iproute2) and `lsof` show them.
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int listener(int family, int port) {
    int s = socket(family, SOCK_STREAM, 0);
    int r;
    if (family == AF_INET) {
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
        r = bind(s, (struct sockaddr *)&a, sizeof a);
    } else {
        struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
        r = bind(s, (struct sockaddr *)&a, sizeof a);
    }
    if (r || listen(s, 8)) {
        perror("listen");
        exit(1);
    }
    return s;
}

static void show(const char *path) {
    char line[512];
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("%s: %s\n", path, strerror(errno));
        return;
    }
    while (fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\n' || line[n - 1] == ' ')) line[--n] = 0;
        printf("%s: %s\n", path, line);
    }
    fclose(f);
}

static void run(const char *cmd) {
    fflush(stdout);
    if (fork() == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)0);
        _exit(127);
    }
    wait(0);
}

int main(void) {
    int l4 = listener(AF_INET, 4444);
    listener(AF_INET6, 4445);
    int u = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(5353)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(u, (struct sockaddr *)&a, sizeof a);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    a.sin_port = htons(4444);
    if (connect(c, (struct sockaddr *)&a, sizeof a) || accept(l4, 0, 0) < 0) {
        perror("connect");
        return 1;
    }
    int diag = socket(AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG);
    printf("sock_diag: %d %s\n", diag, diag < 0 ? strerror(errno) : "open");
    char path[64], link[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", l4);
    ssize_t n = readlink(path, link, sizeof link - 1);
    printf("fd link: %.*s\n", (int)(n < 0 ? 0 : n), link);
    n = readlinkat(AT_FDCWD, path, link, sizeof link - 1);
    printf("fd linkat: %.*s\n", (int)(n < 0 ? 0 : n), link);
    show("/proc/net/tcp");
    show("/proc/net/tcp6");
    show("/proc/net/udp");
    run("ss -tanpH; ss -uanpH; ss -nlpH -t '( sport = :4444 )'");
    char lsof[64];
    snprintf(lsof, sizeof lsof, "lsof -nP -a -p %d -i", (int)getpid());
    run(lsof);
    return 0;
}
