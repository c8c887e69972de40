/* Built with -O2 -D_FORTIFY_SOURCE=2, as Debian builds everything: each call below has a
 * buffer whose size the compiler knows and a length it does not (`slack` is volatile), so
 * glibc's headers turn it into its fortified twin (__poll_chk, __recv_chk, …), which checks
 * the length and then makes the system call itself. Under the shim each twin must reach the
 * hook. Prints only what holds natively and under the shim. `overflow`: a recv longer than its
 * buffer, which glibc's check turns into an abort. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>
#include <fcntl.h>

static volatile size_t slack = 0;

static int say(int fd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vdprintf(fd, fmt, ap);
    va_end(ap);
    return n;
}

static void pipes(void) {
    int p[2];
    char buf[64];
    if (pipe(p) != 0) {
        perror("pipe");
        return;
    }
    dprintf(p[1], "dprintf %d", 42);
    struct pollfd fds[1] = {{.fd = p[0], .events = POLLIN}};
    int r = poll(fds, 1 + slack, 1000);
    printf("poll %d revents %d\n", r, fds[0].revents);
    ssize_t n = read(p[0], buf, sizeof buf - 1 - slack);
    buf[n > 0 ? n : 0] = 0;
    printf("read %zd: %s\n", n, buf);

    say(p[1], "vdprintf %s", "ok");
    struct timespec ts = {1, 0};
    r = ppoll(fds, 1 + slack, &ts, NULL);
    printf("ppoll %d revents %d\n", r, fds[0].revents);
    fd_set set;
    FD_ZERO(&set);
    FD_SET(p[0] + (int)slack, &set);
    struct timeval tv = {1, 0};
    r = select(p[0] + 1, &set, NULL, NULL, &tv);
    printf("select %d isset %d\n", r, FD_ISSET(p[0] + (int)slack, &set) != 0);
    n = read(p[0], buf, sizeof buf - 1 - slack);
    buf[n > 0 ? n : 0] = 0;
    printf("read %zd: %s\n", n, buf);
    close(p[0]);
    close(p[1]);
}

static void datagrams(int overflow) {
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    bind(s, (struct sockaddr *)&a, sizeof a);
    getsockname(s, (struct sockaddr *)&a, &len);
    char buf[32];
    sendto(s, "one", 3, 0, (struct sockaddr *)&a, sizeof a);
    ssize_t n = recv(s, buf, sizeof buf - slack + (overflow ? 1 : 0), 0);
    printf("recv %zd: %.*s\n", n, (int)(n > 0 ? n : 0), buf);
    struct sockaddr_in from;
    len = sizeof from;
    sendto(s, "two", 3, 0, (struct sockaddr *)&a, sizeof a);
    n = recvfrom(s, buf, sizeof buf - slack, 0, (struct sockaddr *)&from, &len);
    printf("recvfrom %zd: %.*s from the socket itself: %d\n", n, (int)(n > 0 ? n : 0), buf,
           from.sin_port == a.sin_port);
    close(s);
}

static void files(const char *self) {
    char buf[64];
    int fd = open(self, O_RDONLY);
    ssize_t n = pread(fd, buf, 4 - slack, 1);
    printf("pread %zd: %.3s\n", n, buf);
    close(fd);
    n = readlink(self, buf, sizeof buf - slack);
    printf("readlink of a file %zd\n", n);
    char host[256];
    printf("gethostname %d\n", gethostname(host, sizeof host - slack));
    gid_t groups[256];
    printf("getgroups counts %d\n", getgroups(256 - slack, groups) >= 0);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 1 && !strcmp(argv[1], "overflow")) {
        datagrams(1);
        return 0;
    }
    pipes();
    datagrams(0);
    files(argv[0]);
    dprintf(1, "dprintf to stdout %d\n", 7);
    return 0;
}
