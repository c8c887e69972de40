/* redis-set: a Jepsen-style set workload for Redis, speaking RESP itself (no client library).
 *
 * It adds distinct integers (1, 2, 3, ...) to one Redis set with SADD on whichever node is the
 * primary -- a fixed address (--primary) or what a sentinel answers to
 * `SENTINEL get-master-addr-by-name NAME` (--sentinels, tried in order) -- for --add-for
 * seconds after it starts, then waits until --read-at seconds after its start and reads the
 * whole set with SMEMBERS (retrying until a read succeeds or --give-up seconds have passed).
 * Every operation is written to stdout as weft history lines (`WEFT-HISTORY {json}`, Jepsen's
 * model), which `weft run --history set` / `-o history=set` check.
 *
 * Outcomes: `ok` for an integer reply; `fail` for an error reply (READONLY, a refused or failed
 * connection before the command was sent: it certainly did not happen); `info` when the reply
 * did not come within --timeout-ms or the connection broke after sending (it may have
 * happened). After an `info` the process id moves on by 1000, as Jepsen's do, since that
 * process's operation is still open for ever. On any error or timeout the client closes the
 * connection and asks the sentinels again (following a failover).
 *
 * Times are the process's monotonic clock (virtual under weft), relative to its start.
 *
 *   redis-set (--primary IP:PORT | --sentinels IP:PORT[,IP:PORT...] [--master NAME])
 *             [--key K] [--process N] [--add-for S] [--read-at S] [--give-up S]
 *             [--interval-ms MS] [--timeout-ms MS]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { MAX_SENTINELS = 8 };

static struct {
    const char *primary;
    char *sentinels[MAX_SENTINELS];
    int n_sentinels;
    const char *master;
    const char *key;
    long process;
    double add_for, read_at, give_up;
    long interval_ms, timeout_ms;
} opt = {NULL, {0}, 0, "mymaster", "weft-set", 0, 5.0, 8.0, 30.0, 10, 500};

static double start_s;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double since_start(void) { return now_s() - start_s; }

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void usage(const char *why) {
    fprintf(stderr, "redis-set: %s\n", why);
    exit(2);
}

/* ---------- history ---------- */

static void history(const char *type, const char *f, const char *value) {
    printf("WEFT-HISTORY {\"type\":\"%s\",\"process\":%ld,\"f\":\"%s\",\"value\":%s}\n", type,
           opt.process, f, value);
    fflush(stdout);
}

/* ---------- connections ---------- */

/* A connected stream socket to "ip:port", or -1 (refused, unreachable or timed out). */
static int dial(const char *addr) {
    char ip[64];
    const char *colon = strrchr(addr, ':');
    if (!colon || colon - addr >= (long)sizeof ip) return -1;
    memcpy(ip, addr, colon - addr);
    ip[colon - addr] = 0;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(atoi(colon + 1))};
    if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1) return -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    struct pollfd p = {fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    if (poll(&p, 1, (int)opt.timeout_ms) != 1 ||
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Sends a command (argv of n strings) in RESP; 0 on success. */
static int send_command(int fd, int n, const char **argv) {
    char buf[1024];
    int len = snprintf(buf, sizeof buf, "*%d\r\n", n);
    for (int i = 0; i < n; i++) {
        len += snprintf(buf + len, sizeof buf - len, "$%zu\r\n%s\r\n", strlen(argv[i]), argv[i]);
        if (len >= (int)sizeof buf) return -1;
    }
    for (int off = 0; off < len;) {
        ssize_t w = send(fd, buf + off, len - off, 0);
        if (w < 0 && errno == EAGAIN) {
            struct pollfd p = {fd, POLLOUT, 0};
            if (poll(&p, 1, (int)opt.timeout_ms) != 1) return -1;
            continue;
        }
        if (w <= 0) return -1;
        off += w;
    }
    return 0;
}

/* ---------- replies ---------- */

/* A reply reader: buffered bytes of one connection, and a deadline for the whole reply. */
struct reader {
    int fd;
    char *buf;
    size_t len, cap, pos;
    double deadline;
};

enum { RP_OK = 0, RP_TIMEOUT = -1, RP_BROKEN = -2, RP_PROTOCOL = -3 };

/* Makes at least `need` unread bytes available; RP_OK or why not. */
static int fill(struct reader *r, size_t need) {
    while (r->len - r->pos < need) {
        double left = r->deadline - now_s();
        if (left <= 0) return RP_TIMEOUT;
        struct pollfd p = {r->fd, POLLIN, 0};
        int ready = poll(&p, 1, (int)(left * 1000) + 1);
        if (ready == 0) return RP_TIMEOUT;
        if (ready < 0) return RP_BROKEN;
        if (r->len == r->cap) {
            r->cap = r->cap ? r->cap * 2 : 4096;
            r->buf = realloc(r->buf, r->cap);
            if (!r->buf) usage("out of memory");
        }
        ssize_t n = recv(r->fd, r->buf + r->len, r->cap - r->len, 0);
        if (n < 0 && errno == EAGAIN) continue;
        if (n <= 0) return RP_BROKEN;
        r->len += n;
    }
    return RP_OK;
}

/* The next CRLF-terminated line (without CRLF) into *line; RP_OK or why not. */
static int read_line(struct reader *r, char **line) {
    for (;;) {
        char *start = r->buf + r->pos;
        size_t avail = r->len - r->pos;
        for (size_t i = 0; i + 1 < avail; i++) {
            if (start[i] == '\r' && start[i + 1] == '\n') {
                start[i] = 0;
                *line = start;
                r->pos += i + 2;
                return RP_OK;
            }
        }
        int rc = fill(r, avail + 1);
        if (rc != RP_OK) return rc;
    }
}

/* One reply: `kind` is its first byte ('+', '-', ':', '$', '*'); a bulk string's or simple
 * reply's text goes to *text (NULL for a nil bulk); an array's elements are appended to
 * `items` (bulk strings only, as SMEMBERS and SENTINEL answer) as a JSON list body. */
struct reply {
    char kind;
    char *text;
    long long integer;
    char *json; /* for arrays: "a,b,c" with numbers bare and other strings quoted */
    size_t json_len, json_cap;
    char *first, *second; /* the first two array elements (for SENTINEL's [ip, port]) */
};

static void json_append(struct reply *rep, const char *s, size_t n, int quote) {
    size_t need = rep->json_len + n + 4;
    if (need > rep->json_cap) {
        rep->json_cap = need * 2;
        rep->json = realloc(rep->json, rep->json_cap);
        if (!rep->json) usage("out of memory");
    }
    if (rep->json_len) rep->json[rep->json_len++] = ',';
    if (quote) rep->json[rep->json_len++] = '"';
    memcpy(rep->json + rep->json_len, s, n);
    rep->json_len += n;
    if (quote) rep->json[rep->json_len++] = '"';
    rep->json[rep->json_len] = 0;
}

static int read_bulk(struct reader *r, long n, char **out) {
    if (n < 0) {
        *out = NULL;
        return RP_OK;
    }
    int rc = fill(r, (size_t)n + 2);
    if (rc != RP_OK) return rc;
    *out = r->buf + r->pos;
    (*out)[n] = 0;
    r->pos += (size_t)n + 2;
    return RP_OK;
}

static int read_reply(struct reader *r, struct reply *rep) {
    char *line;
    int rc = read_line(r, &line);
    if (rc != RP_OK) return rc;
    rep->kind = line[0];
    switch (line[0]) {
    case '+':
    case '-':
        rep->text = strdup(line + 1);
        return RP_OK;
    case ':':
        rep->integer = atoll(line + 1);
        return RP_OK;
    case '$': {
        char *s;
        rc = read_bulk(r, atol(line + 1), &s);
        rep->text = s ? strdup(s) : NULL;
        return rc;
    }
    case '*': {
        long n = atol(line + 1);
        for (long i = 0; i < n; i++) {
            char *item, *s;
            if ((rc = read_line(r, &item)) != RP_OK) return rc;
            if (item[0] != '$') return RP_PROTOCOL;
            if ((rc = read_bulk(r, atol(item + 1), &s)) != RP_OK) return rc;
            if (!s) continue;
            size_t len = strlen(s);
            int numeric = len > 0 && strspn(s, "0123456789") == len && (s[0] != '0' || len == 1);
            json_append(rep, s, len, !numeric);
            if (i == 0) rep->first = strdup(s);
            if (i == 1) rep->second = strdup(s);
        }
        if (!rep->json) json_append(rep, "", 0, 0), rep->json_len = 0, rep->json[0] = 0;
        return RP_OK;
    }
    default:
        return RP_PROTOCOL;
    }
}

static void reply_free(struct reply *rep) {
    free(rep->text);
    free(rep->json);
    free(rep->first);
    free(rep->second);
    memset(rep, 0, sizeof *rep);
}

/* Sends argv on fd and reads one reply within the timeout; RP_OK or why not. */
static int call(int fd, int n, const char **argv, struct reply *rep) {
    if (send_command(fd, n, argv) != 0) return RP_BROKEN;
    struct reader r = {fd, NULL, 0, 0, 0, now_s() + opt.timeout_ms / 1000.0};
    int rc = read_reply(&r, rep);
    free(r.buf);
    return rc;
}

/* ---------- the primary ---------- */

/* Writes the primary's address into out; 0 on success. */
static int locate(char *out, size_t cap) {
    if (opt.primary) {
        snprintf(out, cap, "%s", opt.primary);
        return 0;
    }
    for (int i = 0; i < opt.n_sentinels; i++) {
        int fd = dial(opt.sentinels[i]);
        if (fd < 0) continue;
        const char *argv[] = {"SENTINEL", "get-master-addr-by-name", opt.master};
        struct reply rep = {0};
        int rc = call(fd, 3, argv, &rep);
        close(fd);
        if (rc == RP_OK && rep.kind == '*' && rep.first && rep.second) {
            snprintf(out, cap, "%s:%s", rep.first, rep.second);
            reply_free(&rep);
            return 0;
        }
        reply_free(&rep);
    }
    return -1;
}

/* A connection to the current primary, or -1. */
static int connect_primary(void) {
    char addr[128];
    if (locate(addr, sizeof addr) != 0) return -1;
    return dial(addr);
}

/* ---------- the workload ---------- */

static void add_one(int *fd, long element) {
    char value[32];
    snprintf(value, sizeof value, "%ld", element);
    history("invoke", "add", value);
    if (*fd < 0) *fd = connect_primary();
    if (*fd < 0) {
        history("fail", "add", value); /* never sent */
        return;
    }
    const char *argv[] = {"SADD", opt.key, value};
    struct reply rep = {0};
    int rc = call(*fd, 3, argv, &rep);
    if (rc == RP_OK && rep.kind == ':') {
        history("ok", "add", value);
    } else if (rc == RP_OK && rep.kind == '-') {
        history("fail", "add", value); /* READONLY, LOADING, ...: not applied */
    } else {
        history("info", "add", value); /* timed out or broke after sending */
        opt.process += 1000;
    }
    if (rc != RP_OK || rep.kind == '-') {
        close(*fd);
        *fd = -1;
    }
    reply_free(&rep);
}

/* Reads the whole set until one read succeeds; 0 on success. */
static int final_read(void) {
    while (since_start() < opt.give_up) {
        history("invoke", "read", "null");
        int fd = connect_primary();
        struct reply rep = {0};
        int rc = RP_BROKEN;
        if (fd >= 0) {
            const char *argv[] = {"SMEMBERS", opt.key};
            rc = call(fd, 2, argv, &rep);
            close(fd);
        }
        if (rc == RP_OK && rep.kind == '*') {
            size_t n = rep.json_len + 3;
            char *list = malloc(n);
            snprintf(list, n, "[%s]", rep.json ? rep.json : "");
            history("ok", "read", list);
            free(list);
            reply_free(&rep);
            return 0;
        }
        history(fd < 0 || (rc == RP_OK && rep.kind == '-') ? "fail" : "info", "read", "null");
        if (!(fd < 0 || (rc == RP_OK && rep.kind == '-'))) opt.process += 1000;
        reply_free(&rep);
        sleep_ms(200);
    }
    return -1;
}

static void parse_args(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc) usage("every option takes a value");
        char *v = argv[++i];
        if (!strcmp(a, "--primary")) opt.primary = v;
        else if (!strcmp(a, "--sentinels")) {
            for (char *s = strtok(v, ","); s && opt.n_sentinels < MAX_SENTINELS; s = strtok(NULL, ","))
                opt.sentinels[opt.n_sentinels++] = s;
        } else if (!strcmp(a, "--master")) opt.master = v;
        else if (!strcmp(a, "--key")) opt.key = v;
        else if (!strcmp(a, "--process")) opt.process = atol(v);
        else if (!strcmp(a, "--add-for")) opt.add_for = atof(v);
        else if (!strcmp(a, "--read-at")) opt.read_at = atof(v);
        else if (!strcmp(a, "--give-up")) opt.give_up = atof(v);
        else if (!strcmp(a, "--interval-ms")) opt.interval_ms = atol(v);
        else if (!strcmp(a, "--timeout-ms")) opt.timeout_ms = atol(v);
        else usage("unknown option (see the comment at the top of redis-set.c)");
    }
    if (!opt.primary == !opt.n_sentinels) usage("give exactly one of --primary, --sentinels");
    if (opt.timeout_ms <= 0 || opt.interval_ms < 0) usage("bad --timeout-ms or --interval-ms");
}

int main(int argc, char **argv) {
    parse_args(argc, argv);
    start_s = now_s();
    int fd = -1;
    long element = 0, acked_or_tried = 0;
    while (since_start() < opt.add_for) {
        add_one(&fd, ++element);
        acked_or_tried++;
        if (fd < 0) sleep_ms(opt.interval_ms > 100 ? opt.interval_ms : 100); /* back off */
        else if (opt.interval_ms) sleep_ms(opt.interval_ms);
    }
    if (fd >= 0) close(fd);
    double wait = opt.read_at - since_start();
    if (wait > 0) sleep_ms((long)(wait * 1000));
    int rc = final_read();
    fprintf(stderr, "redis-set: %ld adds attempted, final read %s\n", acked_or_tried,
            rc == 0 ? "done" : "never succeeded");
    return rc == 0 ? 0 : 1;
}
