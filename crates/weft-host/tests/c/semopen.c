/* A named semaphore (sem_open: a file in /dev/shm, mapped) shared by a process and the image
 * its child execs, mapped at different addresses in the two: the parent posts after 10 ms, the
 * child, waiting, takes it. usage: semopen [child ADDR] */
#include <fcntl.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 2) {
        /* The child image: another semaphore first, so this one lands elsewhere. */
        sem_t *pad = sem_open("/weft-semopen-pad", O_CREAT, 0600, 0);
        sem_unlink("/weft-semopen-pad");
        sem_t *s = sem_open("/weft-semopen", 0);
        if (pad == SEM_FAILED || s == SEM_FAILED) return 1;
        printf("child maps it elsewhere %d\n", (unsigned long)s != strtoul(argv[2], NULL, 16));
        if (sem_wait(s) != 0) return 1;
        printf("child took the post\n");
        return 0;
    }
    sem_unlink("/weft-semopen");
    sem_t *s = sem_open("/weft-semopen", O_CREAT | O_EXCL, 0600, 0);
    if (s == SEM_FAILED) return 1;
    char at[32];
    snprintf(at, sizeof at, "%lx", (unsigned long)s);
    pid_t c = fork();
    if (c == 0) {
        execl("/proc/self/exe", argv[0], "child", at, (char *)NULL);
        return 1;
    }
    usleep(10000);
    printf("parent posts\n");
    sem_post(s);
    int st;
    waitpid(c, &st, 0);
    sem_unlink("/weft-semopen");
    return WEXITSTATUS(st);
}
