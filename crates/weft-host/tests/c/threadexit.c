/* Code that runs on a thread after its start routine: the destructor of a pthread key and, for
 * pthread_exit, a cleanup handler. Both sleep and take a lock; under the shim they must run
 * as part of the simulation (virtual time passes for their sleeps, the lock is seen), not
 * beside it. Prints the virtual milliseconds at which main sees each finish. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t key;

static long ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void destructor(void *v) {
    (void)v;
    pthread_mutex_lock(&m);
    usleep(10000);
    pthread_mutex_unlock(&m);
}

static void *returns(void *a) {
    pthread_setspecific(key, a);
    return NULL;
}

static void cleanup(void *a) {
    (void)a;
    usleep(5000);
}

static void *exits(void *a) {
    pthread_cleanup_push(cleanup, a);
    pthread_exit(NULL);
    pthread_cleanup_pop(0);
    return NULL;
}

int main(void) {
    pthread_key_create(&key, destructor);
    long start = ms();
    pthread_t t;
    pthread_create(&t, NULL, returns, &key);
    usleep(1000);
    pthread_mutex_lock(&m); /* held by the destructor until its sleep ends */
    printf("destructor done by %ld ms\n", ms() - start);
    pthread_mutex_unlock(&m);
    pthread_join(t, NULL);
    start = ms();
    pthread_create(&t, NULL, exits, NULL);
    pthread_join(t, NULL);
    printf("cleanup done by %ld ms\n", ms() - start);
    return 0;
}
