// Thread stacks under the shim, printed for tests/stacks.rs: each simulated thread's stack is
// in the shim's arena (placed like every mapping, not where the kernel would put it), a
// joined thread's stack is the next thread's, a detached thread's too once it has ended, a
// stack the program gives is kept, and many short detached threads do not run out of room.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const uintptr_t LO = 0x100000000000, HI = 0x7e0000000000;

static void *where(void *out) {
    int local;
    *(uintptr_t *)out = (uintptr_t)&local;
    return NULL;
}

static int in_arena(uintptr_t a) { return a >= LO && a < HI; }

/// The address of a local of a new thread: joined, or detached and waited for.
static uintptr_t run(int detached, pthread_attr_t *given) {
    pthread_attr_t attr;
    pthread_attr_t *use = given;
    if (!given) {
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, detached ? PTHREAD_CREATE_DETACHED : PTHREAD_CREATE_JOINABLE);
        use = &attr;
    }
    volatile uintptr_t at = 0;
    pthread_t t;
    if (pthread_create(&t, use, where, (void *)&at) != 0)
        return 0;
    if (detached)
        while (!at)
            usleep(1000);
    else
        pthread_join(t, NULL);
    if (detached)
        usleep(1000); // its goodbye
    return at;
}

int main(void) {
    uintptr_t a = run(0, NULL), b = run(0, NULL);
    printf("joined: in arena %d, reused %d\n", in_arena(a), a == b);
    uintptr_t c = run(1, NULL), d = run(0, NULL);
    printf("detached: in arena %d, reused %d\n", in_arena(c), c == d);
    pthread_attr_t own;
    pthread_attr_init(&own);
    size_t size = 1 << 20;
    char *mine = malloc(size);
    pthread_attr_setstack(&own, mine, size);
    uintptr_t e = run(0, &own);
    printf("given: kept %d\n", e >= (uintptr_t)mine && e < (uintptr_t)mine + size);
    int arena = 0;
    for (int i = 0; i < 200; i++)
        arena += in_arena(run(1, NULL));
    printf("200 detached: %d in arena\n", arena);
    return 0;
}
