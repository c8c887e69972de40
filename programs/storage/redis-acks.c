/* redis-acks: a crash-consistency workload for Debian's redis-server with an append-only file.
 *
 * It starts the server given after `--` (fork + exec, in the same node, so a crash of the node
 * kills both and the restarted node starts a fresh server on the surviving data directory),
 * waits until the server answers (it replies -LOADING while it replays its AOF), reads the set
 * --key with SMEMBERS, then adds --adds distinct integers with SADD, --interval-ms apart, and
 * reads the set again. Every operation is a weft history line (`WEFT-HISTORY {json}`, Jepsen's
 * set model): an `add` is acknowledged (`ok`) only after the server's integer reply, which with
 * `appendfsync always` Redis sends after the command is written to the AOF and fdatasync'ed (the
 * commit point Redis documents); `weft run --history set` checks that every acknowledged add is
 * in every later read. Values are unique across incarnations: the process number (virtual
 * monotonic milliseconds at start) times 1000 plus the add's number. A server that does not
 * answer within --wait-ms, or an error reply to a read, prints a line with CORRUPT (use
 * --forbid CORRUPT): Redis refusing to start on its own AOF after a crash is a finding.
 *
 *   redis-acks --addr IP:PORT [--key K] [--adds N] [--interval-ms MS] [--wait-ms MS]
 *              -- /usr/bin/redis-server ARGS...
 *
 * At the end it sends SHUTDOWN NOSAVE, waits for the server and exits 0.
 *
 * Build: cc -O1 -o programs/storage/redis-acks programs/storage/redis-acks.c
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long process;
static const char *key = "acks";

static void history(const char *type, const char *f, const char *value) {
    printf("WEFT-HISTORY {\"type\":\"%s\",\"process\":%ld,\"f\":\"%s\",\"value\":%s}\n", type,
           process, f, value);
    fflush(stdout);
}

static void corrupt(const char *what) {
    printf("CORRUPT or failed: %s\n", what);
    fflush(stdout);
    exit(3);
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static long now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* A connected socket to ip:port, or -1. */
static int dial(const char *addr) {
    char ip[64];
    const char *colon = strrchr(addr, ':');
    if (!colon || colon - addr >= (long)sizeof ip) return -1;
    memcpy(ip, addr, colon - addr);
    ip[colon - addr] = 0;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(atoi(colon + 1))};
    if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1) return -1;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void send_all(int fd, const char *buf, size_t len) {
    for (size_t off = 0; off < len;) {
        ssize_t w = send(fd, buf + off, len - off, 0);
        if (w <= 0) corrupt("send to the server");
        off += w;
    }
}

/* Sends one command of n arguments in RESP. */
static void command(int fd, int n, const char **argv) {
    char buf[512];
    int len = snprintf(buf, sizeof buf, "*%d\r\n", n);
    for (int i = 0; i < n; i++)
        len += snprintf(buf + len, sizeof buf - len, "$%zu\r\n%s\r\n", strlen(argv[i]), argv[i]);
    send_all(fd, buf, len);
}

/* Buffered reply bytes of the one connection. */
static char in[1 << 20];
static size_t in_len, in_pos;

/* The next CRLF-terminated line (NUL-terminated in place), or NULL when the connection ended. */
static char *line(int fd) {
    for (;;) {
        for (size_t i = in_pos; i + 1 < in_len; i++) {
            if (in[i] == '\r' && in[i + 1] == '\n') {
                char *l = in + in_pos;
                in[i] = 0;
                in_pos = i + 2;
                return l;
            }
        }
        if (in_pos > 0) {
            memmove(in, in + in_pos, in_len - in_pos);
            in_len -= in_pos;
            in_pos = 0;
        }
        if (in_len == sizeof in) corrupt("reply too long");
        ssize_t n = recv(fd, in + in_len, sizeof in - in_len, 0);
        if (n <= 0) return NULL;
        in_len += n;
    }
}

/* SMEMBERS as a JSON array into out (cap bytes); 0, or -1 with the error reply in out. */
static int members(int fd, char *out, size_t cap) {
    const char *argv[] = {"SMEMBERS", key};
    command(fd, 2, argv);
    char *l = line(fd);
    if (!l) corrupt("connection ended during SMEMBERS");
    if (l[0] != '*') {
        snprintf(out, cap, "%s", l);
        return -1;
    }
    long n = atol(l + 1);
    size_t len = 0;
    out[len++] = '[';
    for (long i = 0; i < n; i++) {
        char *hdr = line(fd), *v = hdr ? line(fd) : NULL;
        if (!v || hdr[0] != '$') corrupt("malformed SMEMBERS reply");
        if (len + strlen(v) + 2 >= cap) corrupt("set too large");
        len += snprintf(out + len, cap - len, "%s%s", i ? "," : "", v);
    }
    out[len++] = ']';
    out[len] = 0;
    return 0;
}

static char set_json[1 << 20];

/* The read operation, retried while the server is still loading its AOF. */
static void read_all(int fd, long wait_ms) {
    long until = now_ms() + wait_ms;
    history("invoke", "read", "null");
    while (members(fd, set_json, sizeof set_json) < 0) {
        if (strncmp(set_json, "-LOADING", 8) != 0 || now_ms() > until) {
            printf("CORRUPT or failed: SMEMBERS answered %s\n", set_json);
            history("fail", "read", "null");
            exit(3);
        }
        sleep_ms(10);
    }
    history("ok", "read", set_json);
}

int main(int argc, char **argv) {
    const char *addr = NULL;
    long adds = 20, interval = 10, wait_ms = 2000;
    int i = 1;
    for (; i + 1 < argc && strcmp(argv[i], "--"); i += 2) {
        if (!strcmp(argv[i], "--addr")) addr = argv[i + 1];
        else if (!strcmp(argv[i], "--key")) key = argv[i + 1];
        else if (!strcmp(argv[i], "--adds")) adds = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--interval-ms")) interval = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--wait-ms")) wait_ms = atol(argv[i + 1]);
        else break;
    }
    if (!addr || i >= argc || strcmp(argv[i], "--") || i + 1 >= argc) {
        fprintf(stderr, "usage: redis-acks --addr IP:PORT [--key K] [--adds N] "
                        "[--interval-ms MS] [--wait-ms MS] -- SERVER ARGS...\n");
        return 2;
    }
    process = now_ms() % 100000000;

    pid_t server = fork();
    if (server < 0) corrupt("fork");
    if (server == 0) {
        execv(argv[i + 1], argv + i + 1);
        _exit(127);
    }
    int fd = -1;
    for (long until = now_ms() + wait_ms; (fd = dial(addr)) < 0;) {
        if (now_ms() > until) corrupt("the server never accepted a connection");
        sleep_ms(5);
    }
    read_all(fd, wait_ms);
    for (long k = 1; k <= adds; k++) {
        char id[32];
        snprintf(id, sizeof id, "%ld", process * 1000 + k);
        history("invoke", "add", id);
        const char *sadd[] = {"SADD", key, id};
        command(fd, 3, sadd);
        char *l = line(fd);
        if (!l || l[0] != ':') {
            history("info", "add", id);
            printf("CORRUPT or failed: SADD answered %s\n", l ? l : "(connection ended)");
            return 3;
        }
        history("ok", "add", id);
        sleep_ms(interval);
    }
    read_all(fd, wait_ms);
    const char *shutdown[] = {"SHUTDOWN", "NOSAVE"};
    command(fd, 2, shutdown);
    line(fd);
    int status = 0;
    waitpid(server, &status, 0);
    return 0;
}
