/* The kernel's clock discipline as NTP daemons use it (chronyd, ntpd): reads through every
 * entry point glibc has (adjtimex, ntp_adjtime, clock_adjtime, ntp_gettime, syscall(2)), then,
 * with an argument, one write: "freq" (adjtimex ADJ_FREQUENCY), "settime" (settimeofday) or
 * "clock" (clock_settime). Under the shim the reads answer the virtual clock, synchronised,
 * and a write is refused by name. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

static void show(const char *what, long r, struct timex *t) {
    printf("%s: %ld, time %ld, offset %ld, freq %ld, maxerror %ld, status %#x\n", what, r,
           (long)t->time.tv_sec, t->offset, t->freq, t->maxerror, t->status);
}

int main(int argc, char **argv) {
    struct timex t;
    memset(&t, 0, sizeof t);
    show("adjtimex", adjtimex(&t), &t);
    memset(&t, 0, sizeof t);
    show("ntp_adjtime", ntp_adjtime(&t), &t);
    memset(&t, 0, sizeof t);
    show("clock_adjtime", clock_adjtime(CLOCK_REALTIME, &t), &t);
    memset(&t, 0, sizeof t);
    show("raw adjtimex", syscall(SYS_adjtimex, &t), &t);
    struct ntptimeval n;
    int state = ntp_gettime(&n);
    printf("ntp_gettime: %d, time %ld, maxerror %ld\n", state, (long)n.time.tv_sec, n.maxerror);
    printf("raw settimeofday(NULL, NULL): %ld\n", syscall(SYS_settimeofday, NULL, NULL));
    fflush(stdout);
    if (argc < 2) return 0;
    if (!strcmp(argv[1], "freq")) {
        memset(&t, 0, sizeof t);
        t.modes = ADJ_FREQUENCY;
        t.freq = 1 << 16;
        printf("set frequency: %d\n", adjtimex(&t));
    } else if (!strcmp(argv[1], "settime")) {
        struct timeval tv = {1, 0};
        printf("settimeofday: %d\n", settimeofday(&tv, NULL));
    } else if (!strcmp(argv[1], "clock")) {
        struct timespec ts = {1, 0};
        printf("clock_settime: %d\n", clock_settime(CLOCK_REALTIME, &ts));
    }
    return 0;
}
