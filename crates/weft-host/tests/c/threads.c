/* Two threads incrementing a counter under a mutex, printing who ran. */
#include <pthread.h>
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

int main(void) {
    pthread_t t[2];
    for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    printf("final %d\n", counter);
    return 0;
}
