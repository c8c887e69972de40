/* Process groups and sessions under the shim, printed in pids: a node's program leads its
 * group and session (as a service manager starts it); a child is in its parent's until it
 * makes its own (setpgid, setsid); a parent moves a second child into a group of its own, as a
 * shell does; a pid no process has is ESRCH. Every line is the same in every run. */
#include <errno.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static void child_side(int fd) {
    /* Each call in its own statement: C leaves the order of arguments open. */
    pid_t me = getpid();
    printf("child %d: group %d session %d\n", me, getpgrp(), getsid(0));
    int r = setsid();
    printf("child setsid: is own %d, session is own %d, group is own %d\n", r == me,
           getsid(0) == me, getpgrp() == me);
    r = setpgid(0, 0);
    printf("setpgid(0,0) of a session leader: %d EPERM %d\n", r, errno == EPERM);
    fflush(stdout);
    char b = 1;
    write(fd, &b, 1);
    _exit(0);
}

int main(void) {
    pid_t me = getpid();
    printf("main %d: group %d session %d getpgid(0) %d getpgid(me) %d\n", me, getpgrp(),
           getsid(0), getpgid(0), getpgid(me));
    fflush(stdout);
    int sv[2];
    pipe(sv);
    int back[2];
    pipe(back);
    pid_t c = fork();
    if (c == 0) {
        close(sv[0]);
        child_side(sv[1]);
    }
    char b;
    read(sv[0], &b, 1);
    printf("parent sees child %d: group %d session %d\n", c, getpgid(c), getsid(c));
    pid_t d = fork();
    if (d == 0) {
        read(back[0], &b, 1);
        printf("second child %d: group %d\n", getpid(), getpgrp());
        _exit(0);
    }
    printf("parent setpgid(d, d): %d\n", setpgid(d, d));
    printf("parent setpgid(d, main's group): %d\n", setpgid(d, me));
    printf("back in main's group: %d\n", getpgid(d) == me);
    int r = setpgid(d, 0);
    printf("parent setpgid(d, 0): %d, group is its own %d\n", r, getpgid(d) == d);
    errno = 0;
    r = getpgid(99999);
    printf("getpgid(99999): %d ESRCH %d\n", r, errno == ESRCH);
    fflush(stdout);
    write(back[1], &b, 1);
    waitpid(c, 0, 0);
    waitpid(d, 0, 0);
    return 0;
}
