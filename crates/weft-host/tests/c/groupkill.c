/* Signals to a process group under the shim, as a supervisor sends them: killpg to a group of
 * two workers a parent made (shell style, setpgid in the parent), kill(0) to the caller's own
 * group (itself and a child still in it), kill(-pgid) of a group no process leads (ESRCH), and
 * kill(-1), every process but the caller.
 * Each receiver prints from its handler; the lines are the same natively. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t got;

static void on_signal(int sig) { got = sig; }

/* A worker: waits for one signal (blocked until the wait, so none is lost), says which. */
static pid_t worker(const char *name, int ready) {
    pid_t c = fork();
    if (c != 0)
        return c;
    sigset_t none;
    sigemptyset(&none);
    char b = 1;
    write(ready, &b, 1);
    while (!got)
        sigsuspend(&none);
    printf("%s got %s\n", name, strsignal(got));
    fflush(stdout);
    _exit(0);
}

int main(void) {
    signal(SIGUSR1, on_signal);
    signal(SIGUSR2, on_signal);
    sigset_t both;
    sigemptyset(&both);
    sigaddset(&both, SIGUSR1);
    sigaddset(&both, SIGUSR2);
    sigprocmask(SIG_BLOCK, &both, NULL);
    int ready[2];
    pipe(ready);
    char b;
    pid_t a = worker("a", ready[1]);
    setpgid(a, a);
    pid_t w = worker("b", ready[1]);
    setpgid(w, a);
    read(ready[0], &b, 1);
    read(ready[0], &b, 1);
    printf("killpg(a's group, USR1): %d\n", killpg(a, SIGUSR1));
    fflush(stdout);
    int st;
    waitpid(a, &st, 0);
    waitpid(w, &st, 0);
    pid_t c = worker("c", ready[1]);
    read(ready[0], &b, 1);
    printf("kill(0, USR2): %d\n", kill(0, SIGUSR2));
    fflush(stdout);
    sigset_t none;
    sigemptyset(&none);
    while (!got)
        sigsuspend(&none);
    printf("main got %s\n", strsignal(got));
    fflush(stdout);
    waitpid(c, &st, 0);
    errno = 0;
    int r = kill(-a, SIGUSR1);
    printf("kill(-a) after a's group ended: %d ESRCH %d\n", r, errno == ESRCH);
    fflush(stdout);
    got = 0;
    pid_t d = worker("d", ready[1]);
    setpgid(d, d);
    read(ready[0], &b, 1);
    printf("kill(-1, USR1): %d\n", kill(-1, SIGUSR1)); /* every process of the node but me */
    fflush(stdout);
    waitpid(d, &st, 0);
    printf("main not signalled by kill(-1): %d\n", got == 0);
    return 0;
}
