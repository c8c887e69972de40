/* Flow control on a stream: node 0 sleeps a second before it accepts and reads 1 MiB (what
 * arrives before the accept waits for it); node 1
 * first fills the window with a non-blocking send (a partial write, then EAGAIN, and no
 * POLLOUT), then sends the rest blocking, which returns only once node 0 has read enough.
 * Node 0 checks every byte. usage: window ID */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TOTAL (1 << 20)

/* Node 0's address: weft gives node n the IPv4 address 127.1.0.(n+1). */
static struct sockaddr_in node0(void) {
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(7000);
    inet_pton(AF_INET, "127.1.0.1", &a.sin_addr);
    return a;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static unsigned char byte_at(long i) { return (unsigned char)(i * 7 + i / 251); }

static int receive(struct sockaddr_in me) {
    int l = socket(AF_INET, SOCK_STREAM, 0);
    if (bind(l, (struct sockaddr *)&me, sizeof me) || listen(l, 4)) { perror("bind"); return 1; }
    sleep(1);
    int c = accept(l, NULL, NULL);
    printf("accepted and reading after a second\n");
    static unsigned char buf[65536];
    long got = 0, bad = 0;
    for (;;) {
        ssize_t k = read(c, buf, sizeof buf);
        if (k <= 0) break;
        for (ssize_t i = 0; i < k; i++) bad += buf[i] != byte_at(got + i);
        got += k;
    }
    printf("received %ld bytes, %ld wrong\n", got, bad);
    return 0;
}

static int send_all(struct sockaddr_in peer) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    while (connect(s, (struct sockaddr *)&peer, sizeof peer) != 0) usleep(10000);
    static unsigned char data[TOTAL];
    for (long i = 0; i < TOTAL; i++) data[i] = byte_at(i);
    double t0 = now();
    ssize_t first = send(s, data, TOTAL, MSG_DONTWAIT);
    ssize_t again = send(s, data + first, TOTAL - first, MSG_DONTWAIT);
    printf("non-blocking: took %zd of %d, then %zd (%s)\n", first, TOTAL, again,
           again < 0 && errno == EAGAIN ? "EAGAIN" : "?");
    struct pollfd p = {s, POLLOUT, 0};
    printf("writable while full: %d\n", poll(&p, 1, 0));
    ssize_t rest = send(s, data + first, TOTAL - first, 0);
    printf("blocking: sent the other %zd, after the reader began: %d\n", rest, now() - t0 >= 1.0);
    close(s);
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) return 2;
    return atoi(argv[1]) == 0 ? receive(node0()) : send_all(node0());
}
