/* A memcached client: sets N keys over TCP, reads each back over TCP, and reads one back over
 * UDP on the same port (memcached's UDP frame header), printing MISMATCH for any value that is
 * not what was set. Exits 0 after "ok N keys".
 * usage: mcclient SERVER_IP:PORT [N] */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
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

/* Reads until `want` bytes or the terminator `end` has been seen; returns bytes read. */
static int read_until(int fd, char *buf, int cap, const char *end) {
    int n = 0;
    while (n < cap - 1) {
        int r = (int)read(fd, buf + n, (size_t)(cap - 1 - n));
        if (r <= 0) break;
        n += r;
        buf[n] = 0;
        if (strstr(buf, end)) break;
    }
    buf[n] = 0;
    return n;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) return 2;
    struct sockaddr_in srv = parse(argv[1]);
    int keys = argc > 2 ? atoi(argv[2]) : 20;
    int fd = -1;
    for (int tries = 0; tries < 200; tries++) {
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(fd, (struct sockaddr *)&srv, sizeof srv) == 0) break;
        close(fd);
        fd = -1;
        usleep(10000);
    }
    if (fd < 0) {
        printf("cannot connect: %s\n", strerror(errno));
        return 1;
    }
    char values[64][32], buf[4096], cmd[256];
    for (int i = 0; i < keys && i < 64; i++) {
        unsigned r;
        getrandom(&r, sizeof r, 0);
        snprintf(values[i], sizeof values[i], "v%d-%u", i, r);
        int n = snprintf(cmd, sizeof cmd, "set key%d 0 0 %zu\r\n%s\r\n", i, strlen(values[i]), values[i]);
        write(fd, cmd, (size_t)n);
        read_until(fd, buf, sizeof buf, "\r\n");
        if (strcmp(buf, "STORED\r\n") != 0) printf("MISMATCH set key%d: %s\n", i, buf);
    }
    for (int i = 0; i < keys && i < 64; i++) {
        int n = snprintf(cmd, sizeof cmd, "get key%d\r\n", i);
        write(fd, cmd, (size_t)n);
        read_until(fd, buf, sizeof buf, "END\r\n");
        char want[4200];
        snprintf(want, sizeof want, "VALUE key%d 0 %zu\r\n%s\r\nEND\r\n", i, strlen(values[i]), values[i]);
        if (strcmp(buf, want) != 0) printf("MISMATCH get key%d: %s\n", i, buf);
    }
    /* UDP: 8-byte header (request id, sequence 0, 1 datagram, reserved), then the command. */
    int u = socket(AF_INET, SOCK_DGRAM, 0);
    unsigned char dg[512] = {0, 7, 0, 0, 0, 1, 0, 0};
    int n = snprintf((char *)dg + 8, sizeof dg - 8, "get key0\r\n");
    sendto(u, dg, (size_t)(8 + n), 0, (struct sockaddr *)&srv, sizeof srv);
    struct pollfd p = {u, POLLIN, 0};
    if (poll(&p, 1, 1000) == 1) {
        int r = (int)recv(u, dg, sizeof dg - 1, 0);
        dg[r > 0 ? r : 0] = 0;
        char want[4200];
        snprintf(want, sizeof want, "VALUE key0 0 %zu\r\n%s\r\nEND\r\n", strlen(values[0]), values[0]);
        if (r < 8 || strcmp((char *)dg + 8, want) != 0) printf("MISMATCH udp get key0\n");
        else printf("udp get ok\n");
    } else {
        printf("MISMATCH udp get key0: no answer\n");
    }
    printf("ok %d keys\n", keys);
    return 0;
}
