/* Busy waits that must make progress under the shim (issue: "busy waits make progress").
 * Each loop below makes only calls that do not block; on Linux real time passes while they
 * spin, and under weft a modelled latency per call must move virtual time (and let the other
 * threads run) so that every loop ends.
 * usage: busywait */
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static long long ns_now(clockid_t c) {
    struct timespec t;
    clock_gettime(c, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static atomic_int flag;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *setter(void *arg) {
    (void)arg;
    usleep(2000);
    atomic_store(&flag, 1);
    return NULL;
}

static void *holder(void *arg) {
    (void)arg;
    pthread_mutex_lock(&lock);
    usleep(3000);
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* 1. Wait for the clock to move at all, then for 5 ms to pass, reading only the clock. */
    long long t0 = ns_now(CLOCK_MONOTONIC);
    while (ns_now(CLOCK_MONOTONIC) == t0) {
    }
    while (ns_now(CLOCK_MONOTONIC) - t0 < 5000000LL) {
    }
    printf("clock spin done\n");
    /* 2. Another thread sets a flag after sleeping; spin on it with sched_yield. */
    pthread_t a;
    pthread_create(&a, NULL, setter, NULL);
    while (!atomic_load(&flag)) sched_yield();
    pthread_join(a, NULL);
    printf("yield spin done\n");
    /* 3. poll() with timeout 0 on nothing, until 3 ms of time passed. */
    t0 = ns_now(CLOCK_REALTIME);
    while (ns_now(CLOCK_REALTIME) - t0 < 3000000LL) poll(NULL, 0, 0);
    printf("poll spin done\n");
    /* 4. trylock until the holder lets go. */
    pthread_t b;
    pthread_create(&b, NULL, holder, NULL);
    usleep(100);
    int tries = 0;
    while (pthread_mutex_trylock(&lock) != 0) tries++;
    pthread_mutex_unlock(&lock);
    pthread_join(b, NULL);
    printf("trylock spin done after %s\n", tries > 0 ? "retries" : "no retry");
    return 0;
}
