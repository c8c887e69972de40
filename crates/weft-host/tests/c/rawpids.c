/* The system calls that name a process by pid, made through syscall(2), answer as their libc
 * functions do: under weft both see virtual pids (the kernel, given a virtual pid, would name
 * some other process). Printed so that a native run and a run under the shim compare. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    pid_t me = getpid();
    printf("getpgid %d\n", syscall(SYS_getpgid, me) == getpgid(me));
    printf("getpgrp %d\n", syscall(SYS_getpgrp) == getpgrp());
    printf("getsid %d\n", syscall(SYS_getsid, me) == getsid(me));
    long prio = syscall(SYS_getpriority, PRIO_PROCESS, me);
    printf("getpriority %d\n", prio == 20 - getpriority(PRIO_PROCESS, me));
    printf("setpriority %ld\n", syscall(SYS_setpriority, PRIO_PROCESS, me, 0));
    struct rlimit64 lim;
    printf("prlimit64 %ld\n", syscall(SYS_prlimit64, me, RLIMIT_NOFILE, NULL, &lim));
    struct sched_param sp;
    printf("sched_getparam %ld\n", syscall(SYS_sched_getparam, me, &sp));
    printf("sched_getscheduler %ld\n", syscall(SYS_sched_getscheduler, me));
    pid_t c = fork();
    if (c == 0) {
        pause();
        _exit(0);
    }
    printf("setpgid of the child %ld\n", syscall(SYS_setpgid, c, c));
    printf("its group %d\n", syscall(SYS_getpgid, c) == c);
    kill(c, SIGKILL);
    waitpid(c, NULL, 0);
    return 0;
}
