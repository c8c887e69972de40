/* The kernel's AT_RANDOM bytes and the stack-protector canary glibc made from them (at
 * %fs:0x28), in the main thread, a new thread and a forked child. Built with
 * -fstack-protector-all, so every function here checks the canary on return. Natively they
 * differ at every exec; under weft a seed fixes them. */
#include <pthread.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned long canary(void) {
    unsigned long v;
    __asm__ volatile("mov %%fs:0x28, %0" : "=r"(v));
    return v;
}

static void *in_thread(void *out) {
    *(unsigned long *)out = canary();
    return NULL;
}

int main(void) {
    const unsigned char *r = (const unsigned char *)getauxval(AT_RANDOM);
    printf("at_random ");
    for (int i = 0; i < 16; i++) printf("%02x", r[i]);
    printf("\ncanary %016lx\n", canary());
    unsigned long t = 0;
    pthread_t th;
    pthread_create(&th, NULL, in_thread, &t);
    pthread_join(th, NULL);
    printf("thread's canary is main's %d\n", t == canary());
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        printf("child's canary is main's %d\n", canary() == *(unsigned long *)&t);
        return 0;
    }
    int st;
    waitpid(c, &st, 0);
    return WEXITSTATUS(st);
}
