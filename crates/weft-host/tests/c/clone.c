/* Threads and processes made without pthread_create or fork, run natively and under the shim.
 * Modes that the shim simulates print the same lines in both worlds; modes it cannot follow
 * (a raw clone3 or clone system call) print natively and are reported under the shim.
 *   thread        glibc clone() threads, tid flags, waited for on CLONE_CHILD_CLEARTID; the
 *                 second ends itself with syscall(SYS_exit)
 *   fork          glibc clone(fn, stack, SIGCHLD, arg): a child process running fn
 *   sys-fork      syscall(SYS_clone, SIGCHLD, 0): fork by another name
 *   sys-clone3    syscall(SYS_clone3) thread (it returns through libc's syscall() into a
 *                 function whose address is on the new stack)
 *   asm-clone3    a clone3 fork made by a syscall instruction in this program
 *   asm-clone     a clone(CLONE_VM|CLONE_VFORK) made by a syscall instruction here */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STACK (1 << 20)

static void report(const char *what, int status) {
    if (WIFEXITED(status))
        printf("%s: exited %d\n", what, WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        printf("%s: killed by signal %d\n", what, WTERMSIG(status));
    else
        printf("%s: status %#x\n", what, status);
}

/* Waits until the kernel (or the shim) clears *word at the thread's exit. */
static void wait_cleared(volatile pid_t *word) {
    for (;;) {
        pid_t v = __atomic_load_n(word, __ATOMIC_SEQ_CST);
        if (v == 0) return;
        syscall(SYS_futex, word, FUTEX_WAIT, v, NULL, NULL, 0);
    }
}

static int counter;
static pid_t child_tid;

static int thread_fn(void *arg) {
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
    printf("child: arg %d, gettid is the tid: %d\n", *(int *)arg, gettid() == child_tid);
    __atomic_add_fetch(&counter, *(int *)arg, __ATOMIC_SEQ_CST);
    return 0;
}

/* Ends the thread itself, as raw-thread code often does, instead of returning. */
static int thread_exit_fn(void *arg) {
    thread_fn(arg);
    syscall(SYS_exit, 0);
    return 1; /* not reached */
}

static int mode_thread(void) {
    char *stack = malloc(STACK);
    static int arg = 42;
    static pid_t ptid, ctid = -1;
    int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM
                | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;
    pid_t tid = clone(thread_fn, stack + STACK, flags, &arg, &ptid, NULL, &ctid);
    if (tid < 0) { perror("clone"); return 1; }
    child_tid = tid;
    printf("parent: clone returned the tid it stored: %d\n", tid == ptid);
    wait_cleared(&ctid);
    printf("parent: child finished, counter %d\n", counter);
    /* A second one, to show the slot and the wake are not a one-off. */
    ctid = -1;
    arg = 7;
    tid = clone(thread_exit_fn, stack + STACK, flags, &arg, &ptid, NULL, &ctid);
    child_tid = tid;
    wait_cleared(&ctid);
    printf("parent: second child (ended by SYS_exit) finished, counter %d\n", counter);
    return 0;
}

static int fork_fn(void *arg) {
    printf("clone child: arg %d, parent is alive: %d\n", *(int *)arg, getppid() > 1);
    return 5;
}

static int mode_fork(void) {
    char *stack = malloc(STACK);
    int arg = 9;
    pid_t pid = clone(fork_fn, stack + STACK, SIGCHLD, &arg);
    if (pid < 0) { perror("clone"); return 1; }
    int status = 0;
    printf("parent: waitpid returned the child: %d\n", waitpid(pid, &status, 0) == pid);
    report("parent: clone child", status);
    return 0;
}

static int mode_sys_fork(void) {
    long pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
    if (pid < 0) { perror("syscall(SYS_clone)"); return 1; }
    if (pid == 0) {
        printf("raw child: running\n");
        _exit(6);
    }
    int status = 0;
    printf("parent: waitpid returned the child: %d\n", waitpid(pid, &status, 0) == pid);
    report("parent: raw child", status);
    return 0;
}

static volatile int raw_ran;

/* Entered by a `ret` on the new thread's stack: it must never return. */
static void raw_thread(void) {
    raw_ran = 1;
    for (;;) __asm__ volatile("syscall" ::"a"(SYS_exit), "D"(0) : "rcx", "r11", "memory");
}

static int mode_sys_clone3(void) {
    static pid_t ctid = -1;
    char *stack = aligned_alloc(64, STACK);
    struct clone_args a;
    memset(&a, 0, sizeof a);
    a.flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM
              | CLONE_CHILD_CLEARTID;
    a.child_tid = (uintptr_t)&ctid;
    a.stack = (uintptr_t)stack;
    a.stack_size = STACK - 64;
    *(void (**)(void))(stack + STACK - 64) = raw_thread;
    long tid = syscall(SYS_clone3, &a, sizeof a);
    if (tid < 0) { perror("syscall(SYS_clone3)"); return 1; }
    wait_cleared(&ctid);
    printf("parent: raw clone3 thread ran: %d\n", raw_ran);
    return 0;
}

static int mode_asm_clone3(void) {
    struct clone_args a;
    memset(&a, 0, sizeof a);
    a.exit_signal = SIGCHLD;
    long pid;
    __asm__ volatile("syscall"
                     : "=a"(pid)
                     : "0"((long)SYS_clone3), "D"(&a), "S"(sizeof a)
                     : "rcx", "r11", "memory");
    if (pid < 0) { printf("clone3: %s\n", strerror(-pid)); return 1; }
    if (pid == 0) _exit(3);
    int status = 0;
    printf("parent: waitpid returned the child: %d\n", waitpid(pid, &status, 0) == pid);
    report("parent: asm clone3 child", status);
    return 0;
}

static int mode_asm_clone(void) {
    long pid;
    register long r10 __asm__("r10") = 0;
    register long r8 __asm__("r8") = 0;
    /* The child shares the stack (vfork): it exits without touching it. */
    __asm__ volatile("syscall\n\t"
                     "test %%rax, %%rax\n\t"
                     "jnz 1f\n\t"
                     "mov $60, %%eax\n\t"
                     "mov $9, %%edi\n\t"
                     "syscall\n"
                     "1:"
                     : "=a"(pid)
                     : "0"((long)SYS_clone), "D"((long)(CLONE_VM | CLONE_VFORK | SIGCHLD)),
                       "S"(0L), "d"(0L), "r"(r10), "r"(r8)
                     : "rcx", "r11", "memory");
    if (pid < 0) { printf("clone: %s\n", strerror(-pid)); return 1; }
    int status = 0;
    printf("parent: waitpid returned the child: %d\n", waitpid(pid, &status, 0) == pid);
    report("parent: asm clone child", status);
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *m = argc > 1 ? argv[1] : "";
    if (!strcmp(m, "thread")) return mode_thread();
    if (!strcmp(m, "fork")) return mode_fork();
    if (!strcmp(m, "sys-fork")) return mode_sys_fork();
    if (!strcmp(m, "sys-clone3")) return mode_sys_clone3();
    if (!strcmp(m, "asm-clone3")) return mode_asm_clone3();
    if (!strcmp(m, "asm-clone")) return mode_asm_clone();
    fprintf(stderr, "usage: clone thread|fork|sys-fork|sys-clone3|asm-clone3|asm-clone\n");
    return 2;
}
