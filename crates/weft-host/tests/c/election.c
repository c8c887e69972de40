/* A toy leader election over UDP with a planted bug.
 *
 * Each node waits a random election timeout, then becomes a candidate for term+1 and asks
 * every peer for a vote; a node with a majority announces itself leader of that term. A node
 * that hears a leader announcement for the term it leads prints "SPLIT BRAIN" (the property
 * the test forbids). The planted bug: without --fixed, a voter does not remember whom it voted
 * for in a term, so two candidates of the same term can both win.
 * usage: election ID ADDR PEERS [--fixed] */
#include <arpa/inet.h>
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

static unsigned rnd(void) {
    unsigned r;
    getrandom(&r, sizeof r, 0);
    return r;
}

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    int id = atoi(argv[1]);
    int fixed = argc > 4 && strcmp(argv[4], "--fixed") == 0;
    struct sockaddr_in me = parse(argv[2]), peers[16];
    int npeers = 0;
    char list[1024];
    snprintf(list, sizeof list, "%s", argv[3]);
    for (char *tok = strtok(list, ","); tok && npeers < 16; tok = strtok(NULL, ","))
        peers[npeers++] = parse(tok);
    int n = npeers + 1, majority = n / 2 + 1;

    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    bind(fd, (struct sockaddr *)&me, sizeof me);
    int term = 0, voted_term = -1, votes = 0, leader_term = -1;
    long deadline = ms_now() + 100 + rnd() % 20;
    long stop = ms_now() + 1500;
    char buf[128];
    while (ms_now() < stop) {
        long wait = deadline - ms_now();
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, wait < 0 ? 0 : (int)wait) == 0) {
            if (leader_term >= 0) {
                /* heartbeat */
                int k = snprintf(buf, sizeof buf, "L %d %d", leader_term, id);
                for (int i = 0; i < npeers; i++)
                    sendto(fd, buf, (size_t)k, 0, (struct sockaddr *)&peers[i], sizeof peers[i]);
                deadline = ms_now() + 50;
                continue;
            }
            term++;
            voted_term = term;
            votes = 1;
            printf("candidate for term %d\n", term);
            int k = snprintf(buf, sizeof buf, "R %d %d", term, id);
            for (int i = 0; i < npeers; i++)
                sendto(fd, buf, (size_t)k, 0, (struct sockaddr *)&peers[i], sizeof peers[i]);
            deadline = ms_now() + 100 + rnd() % 20;
            continue;
        }
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        ssize_t len = recvfrom(fd, buf, sizeof buf - 1, 0, (struct sockaddr *)&from, &fl);
        if (len <= 0) continue;
        buf[len] = 0;
        char kind;
        int t, who;
        if (sscanf(buf, "%c %d %d", &kind, &t, &who) != 3) continue;
        if (kind == 'R') {
            int grant;
            if (fixed)
                grant = t > voted_term || (t == voted_term && 0);
            else
                grant = t >= term; /* BUG: forgets it already voted in this term */
            if (t > term) term = t;
            if (grant) {
                voted_term = t;
                if (leader_term < t) deadline = ms_now() + 100 + rnd() % 20;
                int k = snprintf(buf, sizeof buf, "V %d %d", t, id);
                sendto(fd, buf, (size_t)k, 0, (struct sockaddr *)&from, fl);
            }
        } else if (kind == 'V') {
            if (t == term && leader_term != term && ++votes >= majority) {
                leader_term = term;
                printf("LEADER of term %d\n", term);
                deadline = ms_now();
            }
        } else if (kind == 'L') {
            if (t == leader_term && who != id) printf("SPLIT BRAIN: %d also leads term %d\n", who, t);
            if (t >= term && who != id) {
                if (t > term) term = t;
                if (leader_term != t) leader_term = -1;
                deadline = ms_now() + 150 + rnd() % 20;
            }
        }
    }
    printf("stopping in term %d\n", term);
    return 0;
}
