/* pthread barriers, natively and under the shim: four threads meet at a barrier three times;
 * each round, every thread adds to a shared sum before the barrier and the one thread told it
 * is the serial one checks the sum after it. Prints only what holds in both worlds. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define THREADS 4
#define ROUNDS 3

static pthread_barrier_t barrier;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int sum, serials, wrong;

static void *worker(void *arg) {
    long id = (long)arg;
    for (int round = 1; round <= ROUNDS; round++) {
        struct timespec ts = {0, (id + 1) * 1000 * 1000};
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&lock);
        sum += round;
        pthread_mutex_unlock(&lock);
        int r = pthread_barrier_wait(&barrier);
        if (r == PTHREAD_BARRIER_SERIAL_THREAD) {
            pthread_mutex_lock(&lock);
            serials++;
            if (sum != THREADS * round * (round + 1) / 2) wrong++;
            pthread_mutex_unlock(&lock);
        } else if (r != 0) {
            wrong++;
        }
        /* A second barrier, so that no thread adds the next round before the check. */
        pthread_barrier_wait(&barrier);
    }
    return NULL;
}

int main(void) {
    if (pthread_barrier_init(&barrier, NULL, THREADS) != 0) return 1;
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    printf("rounds %d, sum %d, serial threads %d, wrong %d\n", ROUNDS, sum, serials, wrong);
    printf("destroy: %d\n", pthread_barrier_destroy(&barrier));
    return 0;
}
