/* Two threads incrementing a counter under a mutex, printing who ran; then a producer and a
 * consumer handing items over through a condition variable, and a timed wait that times out. */
#include <errno.h>
#include <semaphore.h>
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int counter;

static void *worker(void *arg) {
    long id = (long)arg;
    for (int i = 0; i < 3; i++) {
        pthread_mutex_lock(&lock);
        counter++;
        printf("thread %ld: counter %d\n", id, counter);
        pthread_mutex_unlock(&lock);
        usleep(1000);
    }
    return NULL;
}

static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int items, done;

static void *producer(void *arg) {
    (void)arg;
    for (int i = 0; i < 3; i++) {
        usleep(2000);
        pthread_mutex_lock(&lock);
        items++;
        pthread_cond_signal(&cond);
        pthread_mutex_unlock(&lock);
    }
    pthread_mutex_lock(&lock);
    done = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    return NULL;
}

static sem_t sem;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;

static void *poster(void *arg) {
    (void)arg;
    for (int i = 0; i < 3; i++) {
        usleep(1000);
        sem_post(&sem);
    }
    return NULL;
}

static void *reader(void *arg) {
    (void)arg;
    pthread_rwlock_rdlock(&rw);
    printf("reader in\n");
    pthread_rwlock_unlock(&rw);
    return NULL;
}

static void *timed_locker(void *arg) {
    (void)arg;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 1;
    int r = pthread_mutex_timedlock(&lock, &ts);
    printf("timedlock %s\n", r == ETIMEDOUT ? "ETIMEDOUT" : "other");
    return NULL;
}

int main(void) {
    pthread_t t[2];
    for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    printf("final %d\n", counter);

    pthread_t p;
    pthread_create(&p, NULL, producer, NULL);
    int consumed = 0;
    pthread_mutex_lock(&lock);
    while (!done || items > 0) {
        while (items == 0 && !done) pthread_cond_wait(&cond, &lock);
        if (items > 0) {
            items--;
            printf("consumed item %d\n", ++consumed);
        }
    }
    pthread_mutex_unlock(&lock);
    pthread_join(p, NULL);

    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 5000000;
    if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
    pthread_mutex_lock(&lock);
    int r = pthread_cond_timedwait(&cond, &lock, &ts);
    pthread_mutex_unlock(&lock);
    printf("timedwait %s\n", r == ETIMEDOUT ? "ETIMEDOUT" : "other");

    /* A semaphore handing three tokens from a poster thread, a read-write lock, and timed
     * waits that time out. */
    sem_init(&sem, 0, 0);
    pthread_create(&p, NULL, poster, NULL);
    for (int i = 0; i < 3; i++) {
        sem_wait(&sem);
        printf("got token %d\n", i);
    }
    pthread_join(p, NULL);
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 3000000;
    if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
    int sr = sem_timedwait(&sem, &ts);
    printf("sem_timedwait %d %s\n", sr, errno == ETIMEDOUT ? "ETIMEDOUT" : "?");
    pthread_rwlock_wrlock(&rw);
    pthread_create(&p, NULL, reader, NULL);
    usleep(2000);
    printf("writer releases\n");
    pthread_rwlock_unlock(&rw);
    pthread_join(p, NULL);
    pthread_mutex_lock(&lock);
    pthread_create(&p, NULL, timed_locker, NULL);
    pthread_join(p, NULL);
    pthread_mutex_unlock(&lock);
    return 0;
}
