/* Call-cost loops for the benchmark: `bench MODE N` makes N calls of one kind.
 * sleep0: nanosleep of zero (under the shim: one full hand-off to the host and back);
 * clock: clock_gettime (under the shim: served locally from the shared time page);
 * getppid: a plain system call no one intercepts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    long n = atol(argv[2]);
    long sink = 0;
    struct timespec z = {0, 0}, t;
    if (!strcmp(argv[1], "sleep0"))
        for (long i = 0; i < n; i++) sink += nanosleep(&z, NULL);
    else if (!strcmp(argv[1], "clock"))
        for (long i = 0; i < n; i++) sink += clock_gettime(CLOCK_MONOTONIC, &t) + t.tv_nsec;
    else if (!strcmp(argv[1], "getppid"))
        for (long i = 0; i < n; i++) sink += getppid();
    else
        return 2;
    printf("%ld\n", sink & 1);
    return 0;
}
