/* A joinable thread that gets the stack, and so the pthread_t, of a detached thread that has
 * ended, while another process holds the slot the detached thread had (mariadbd does this
 * under Galera: a detached applier ends, a forked helper or another node's thread takes its
 * slot, and the next joinable thread is joined). The join must wait for the new thread, not
 * for whoever now has the old slot. */
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int ended;

static void *detached(void *arg) {
    (void)arg;
    ended = 1;
    return NULL;
}

static void *joinable(void *arg) {
    usleep(1000);
    return arg;
}

int main(void) {
    pthread_t a, b;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_create(&a, &attr, detached, NULL);
    while (!ended)
        usleep(1000);
    usleep(10000); /* it has left the simulation */
    pid_t child = fork();
    if (child == 0) {
        usleep(500000); /* holds the lowest free slot meanwhile */
        _exit(0);
    }
    pthread_create(&b, NULL, joinable, (void *)42L);
    void *ret = NULL;
    int r = pthread_join(b, &ret);
    printf("same pthread_t %d, join %d, returned %ld\n", a == b, r, (long)ret);
    int status;
    waitpid(child, &status, 0);
    printf("child %d\n", WEXITSTATUS(status));
    return 0;
}
