/* glibc's time calls that read the clock, sleep, arm a timer or read the machine's load with
 * internal calls no hook sees: ftime, thrd_sleep, ualarm, getloadavg. Printed in virtual time
 * (offsets from the start), so a run under the shim can be checked line by line. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <sys/timeb.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static volatile sig_atomic_t alarms;

static void on_alarm(int s) {
    (void)s;
    alarms++;
}

static long ms_since(const struct timeb *t0) {
    struct timeb t;
    ftime(&t);
    return (t.time - t0->time) * 1000 + (t.millitm - t0->millitm);
}

int main(void) {
    struct timeb t0;
    ftime(&t0);
    struct timeval tv;
    gettimeofday(&tv, NULL);
    printf("ftime agrees with gettimeofday: %d\n", t0.time == tv.tv_sec);
    struct timespec d = {1, 500000000};
    printf("thrd_sleep %d\n", thrd_sleep(&d, NULL));
    printf("after it: %ld ms\n", ms_since(&t0));
    signal(SIGALRM, on_alarm);
    printf("ualarm answers %u\n", ualarm(200000, 0));
    printf("armed again, %u us were left\n", ualarm(300000, 0));
    pause();
    printf("alarms %d at %ld ms\n", alarms, ms_since(&t0));
    double loads[3] = {9, 9, 9};
    int n = getloadavg(loads, 3);
    printf("getloadavg %d: %.2f %.2f %.2f\n", n, loads[0], loads[1], loads[2]);
    return 0;
}
