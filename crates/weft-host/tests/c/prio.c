/* Priorities by process group and user under the shim (not run natively: a process group's
 * priority would reach the test runner's own processes). usage: prio alone | child | user
 *   alone: a node's program alone in its group sets and reads the group's priority, as corosync
 *          does when it cannot have SCHED_RR, by 0 and by its own group's id;
 *   child: the same with a child process alive (it shares the group): refused;
 *   user:  a user's priority (every process of the user): refused. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "alone";
    if (!strcmp(mode, "alone")) {
        printf("set group 0: %d\n", setpriority(PRIO_PGRP, 0, 5));
        errno = 0;
        printf("get group 0: %d errno %d\n", getpriority(PRIO_PGRP, 0), errno);
        printf("get process: %d\n", getpriority(PRIO_PROCESS, 0));
        printf("set own group by id: %d\n", setpriority(PRIO_PGRP, getpgrp(), 7));
        printf("get own group by id: %d\n", getpriority(PRIO_PGRP, getpgrp()));
        int r = setpriority(42, 0, 1);
        printf("unknown which: %d errno EINVAL %d\n", r, errno == EINVAL);
    } else if (!strcmp(mode, "child")) {
        int p[2];
        pipe(p);
        pid_t c = fork();
        if (c == 0) {
            char b;
            read(p[0], &b, 1);
            _exit(0);
        }
        printf("child started\n");
        setpriority(PRIO_PGRP, 0, 5);
        printf("not reached\n");
    } else {
        setpriority(PRIO_USER, 0, 5);
        printf("not reached\n");
    }
    return 0;
}
