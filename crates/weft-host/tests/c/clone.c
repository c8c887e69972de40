/* Threads and processes made without pthread_create or fork, run natively and under the shim.
 * Modes that the shim simulates print the same lines in both worlds; modes it cannot follow
 * (a raw clone3 or clone system call) print natively and are reported under the shim.
 *   thread        glibc clone() threads, tid flags, waited for on CLONE_CHILD_CLEARTID; the
 *                 second ends itself with syscall(SYS_exit)
 *   fork          glibc clone(fn, stack, SIGCHLD, arg): a child process running fn
 *   sys-fork      syscall(SYS_clone, SIGCHLD, 0): fork by another name
 *   sys-clone3    syscall(SYS_clone3) thread (it returns through libc's syscall() into a
 *                 function whose address is on the new stack)
 *   sys-clone3-fork  syscall(SYS_clone3) without CLONE_VM: a fork
 *   sys-fork-nr   syscall(SYS_fork)
 *   asm-clone3    a clone3 fork made by a syscall instruction in this program
 *   asm-fork      a clone(SIGCHLD|CLONE_PARENT_SETTID|CLONE_CHILD_SETTID) made by a syscall
 *                 instruction here: a fork
 *   asm-vfork     a vfork made by a syscall instruction here
 *   asm-fork-files  a clone(SIGCHLD|CLONE_FILES): a process sharing the descriptor table
 *   libc-fork     glibc's _Fork() and daemon(), whose forks no fork hook sees
 *   asm-clone     a clone(CLONE_VM|CLONE_VFORK) made by a syscall instruction here
 *   c11-thread    thrd_create: a thread glibc makes with its internal pthread_create
 *   aio           aio_write: POSIX AIO, whose helper thread glibc makes the same way
 *   libc-handle-fork  fork found with dlsym on libc's handle (as Python's ctypes finds it): the
 *                 shim answers its own hook, so the fork is simulated
 *   libc-vsym-fork  libc's own fork, found with dlvsym (as glibc's internal callers reach it):
 *                 no fork hook sees it
 * Every child of a fork-like mode prints whether its pid differs from its parent's and exits
 * with a status its parent reports: a child the shim did not see would share its parent's
 * simulated identity. */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <aio.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <threads.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STACK (1 << 20)

static pid_t parent_pid;
static void child_says(const char *who, int code);
static int wait_report(const char *who, long pid);

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
    if (pid == 0) child_says("asm clone3", 3);
    return wait_report("asm clone3", pid);
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

/* In a fork-like child: what it observes, then exit with `code`. */
static void child_says(const char *who, int code) {
    printf("%s child: own pid: %d\n", who, getpid() != parent_pid && getpid() > 0);
    fflush(stdout);
    _exit(code);
}

static int wait_report(const char *who, long pid) {
    if (pid < 0) { printf("%s: %s\n", who, strerror(pid < -1 ? -pid : errno)); return 1; }
    int status = 0;
    printf("parent: waitpid returned the %s child: %d\n", who, waitpid(pid, &status, 0) == pid);
    report(who, status);
    return 0;
}

static int mode_sys_clone3_fork(void) {
    struct clone_args a;
    memset(&a, 0, sizeof a);
    a.exit_signal = SIGCHLD;
    long pid = syscall(SYS_clone3, &a, sizeof a);
    if (pid == 0) child_says("clone3", 10);
    return wait_report("clone3", pid);
}

static int mode_sys_fork_nr(void) {
    long pid = syscall(SYS_fork);
    if (pid == 0) child_says("SYS_fork", 11);
    return wait_report("SYS_fork", pid);
}

static long asm_clone(long flags, pid_t *ptid, pid_t *ctid) {
    long pid;
    register long r10 __asm__("r10") = (long)ctid;
    register long r8 __asm__("r8") = 0;
    __asm__ volatile("syscall"
                     : "=a"(pid)
                     : "0"((long)SYS_clone), "D"(flags), "S"(0L), "d"(ptid), "r"(r10), "r"(r8)
                     : "rcx", "r11", "memory");
    return pid;
}

static int mode_asm_fork(void) {
    static pid_t ptid = -1, ctid = -1;
    long pid = asm_clone(SIGCHLD | CLONE_PARENT_SETTID | CLONE_CHILD_SETTID, &ptid, &ctid);
    if (pid == 0) {
        printf("asm child: tid stored is its pid: %d\n", ctid == getpid());
        child_says("asm", 12);
    }
    int r = wait_report("asm", pid);
    printf("parent: tid stored is the child: %d\n", ptid == pid);
    return r;
}

static int mode_asm_vfork(void) {
    long pid;
    /* The child shares the stack natively: it exits without touching it. */
    __asm__ volatile("syscall\n\t"
                     "test %%rax, %%rax\n\t"
                     "jnz 1f\n\t"
                     "mov $60, %%eax\n\t"
                     "mov $13, %%edi\n\t"
                     "syscall\n"
                     "1:"
                     : "=a"(pid)
                     : "0"((long)SYS_vfork)
                     : "rcx", "r11", "memory");
    return wait_report("asm vfork", pid);
}

static int mode_asm_fork_files(void) {
    long pid = asm_clone(SIGCHLD | CLONE_FILES, NULL, NULL);
    if (pid == 0) child_says("asm files", 14);
    return wait_report("asm files", pid);
}

static int mode_libc_fork(void) {
    pid_t pid = _Fork();
    if (pid == 0) child_says("_Fork", 15);
    wait_report("_Fork", pid);
    /* daemon(): this process exits 0 in it, the child goes on (and stays quiet until then). */
    if (daemon(1, 1) < 0) { perror("daemon"); return 1; }
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    child_says("daemon", 0);
    return 0;
}

static int c11_fn(void *arg) {
    printf("c11 thread ran: %d\n", *(int *)arg);
    return 0;
}

static int mode_c11_thread(void) {
    thrd_t t;
    int arg = 7;
    if (thrd_create(&t, c11_fn, &arg) != thrd_success) return 1;
    thrd_join(t, NULL);
    return 0;
}

static int mode_aio(void) {
    char path[] = "/tmp/weft-clone-aio-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return 1;
    unlink(path);
    static char buf[] = "aio\n";
    struct aiocb cb;
    memset(&cb, 0, sizeof cb);
    cb.aio_fildes = fd;
    cb.aio_buf = buf;
    cb.aio_nbytes = sizeof buf - 1;
    cb.aio_sigevent.sigev_notify = SIGEV_NONE;
    if (aio_write(&cb) < 0) { perror("aio_write"); return 1; }
    const struct aiocb *list[1] = {&cb};
    while (aio_error(&cb) == EINPROGRESS) aio_suspend(list, 1, NULL);
    printf("aio wrote: %zd\n", aio_return(&cb));
    return 0;
}

static int mode_libc_handle_fork(int versioned) {
    void *libc = dlopen("libc.so.6", RTLD_NOW);
    void *f = !libc ? NULL : versioned ? dlvsym(libc, "fork", "GLIBC_2.2.5") : dlsym(libc, "fork");
    pid_t (*libc_fork)(void) = (pid_t (*)(void))f;
    if (!libc_fork) return 1;
    pid_t pid = libc_fork();
    if (pid == 0) child_says("libc handle fork", 16);
    return wait_report("libc handle fork", pid);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *m = argc > 1 ? argv[1] : "";
    parent_pid = getpid();
    if (!strcmp(m, "thread")) return mode_thread();
    if (!strcmp(m, "fork")) return mode_fork();
    if (!strcmp(m, "sys-fork")) return mode_sys_fork();
    if (!strcmp(m, "sys-clone3")) return mode_sys_clone3();
    if (!strcmp(m, "asm-clone3")) return mode_asm_clone3();
    if (!strcmp(m, "asm-clone")) return mode_asm_clone();
    if (!strcmp(m, "sys-clone3-fork")) return mode_sys_clone3_fork();
    if (!strcmp(m, "sys-fork-nr")) return mode_sys_fork_nr();
    if (!strcmp(m, "asm-fork")) return mode_asm_fork();
    if (!strcmp(m, "asm-vfork")) return mode_asm_vfork();
    if (!strcmp(m, "asm-fork-files")) return mode_asm_fork_files();
    if (!strcmp(m, "libc-fork")) return mode_libc_fork();
    if (!strcmp(m, "c11-thread")) return mode_c11_thread();
    if (!strcmp(m, "aio")) return mode_aio();
    if (!strcmp(m, "libc-handle-fork")) return mode_libc_handle_fork(0);
    if (!strcmp(m, "libc-vsym-fork")) return mode_libc_handle_fork(1);
    fprintf(stderr, "usage: clone MODE (see the top of clone.c)\n");
    return 2;
}
