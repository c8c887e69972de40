/* disklocks: advisory locks on a file in argv[1] between two processes: record locks (a
 * conflict refused and reported by F_GETLK, a waiting F_SETLKW granted when the holder
 * unlocks, the holder's locks going when it closes any descriptor of the file), flock (a
 * non-blocking conflict, a waiting lock granted when the holder closes), and OFD locks
 * (shared with a forked child through the inherited description, not with a new one). Run
 * natively on a real directory and under weft on a data directory, the output must be
 * identical. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char path[4096];
static int to_child[2], to_parent[2];

static void say(const char *what, int r) {
    printf("%s -> %d%s\n", what, r, r < 0 ? (errno == EAGAIN ? " EAGAIN" : errno == EWOULDBLOCK ? " EWOULDBLOCK" : " other") : "");
    fflush(stdout);
    errno = 0;
}

static int lk(int fd, int cmd, short type, off_t start, off_t len) {
    struct flock f = {.l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len};
    return fcntl(fd, cmd, &f);
}

static void signal_to(int *p) { char b = 1; write(p[1], &b, 1); }
static void wait_on(int *p) { char b; read(p[0], &b, 1); }

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void child(pid_t parent) {
    int fd = open(path, O_RDWR);
    say("child: write lock [5,6) while the parent holds [0,10)", lk(fd, F_SETLK, F_WRLCK, 5, 1));
    struct flock q = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 5, .l_len = 1};
    fcntl(fd, F_GETLK, &q);
    printf("child: F_GETLK says %s [%ld,+%ld) by the parent %d\n", q.l_type == F_WRLCK ? "write" : "other",
           (long)q.l_start, (long)q.l_len, q.l_pid == parent);
    say("child: read lock [10,20)", lk(fd, F_SETLK, F_RDLCK, 10, 10));
    signal_to(to_parent);
    double t0 = now();
    say("child: waiting write lock [0,1)", lk(fd, F_SETLKW, F_WRLCK, 0, 1));
    printf("child: it waited for the parent's unlock: %d\n", now() - t0 >= 0.9);
    lk(fd, F_SETLK, F_UNLCK, 0, 0);
    signal_to(to_parent);
    wait_on(to_child); /* the parent holds [0,10) again, then closes another descriptor */
    say("child: write lock after the parent closed another descriptor", lk(fd, F_SETLK, F_WRLCK, 0, 10));
    lk(fd, F_SETLK, F_UNLCK, 0, 0);
    signal_to(to_parent);
    wait_on(to_child); /* the parent holds flock LOCK_EX */
    say("child: flock LOCK_EX|LOCK_NB", flock(fd, LOCK_EX | LOCK_NB));
    signal_to(to_parent);
    t0 = now();
    say("child: waiting flock LOCK_SH", flock(fd, LOCK_SH));
    printf("child: it waited for the parent's close: %d\n", now() - t0 >= 0.9);
    flock(fd, LOCK_UN);
    signal_to(to_parent);
    wait_on(to_child); /* the parent holds an OFD lock on a description we do not share */
    say("child: OFD write lock on its own description", lk(fd, F_OFD_SETLK, F_WRLCK, 0, 1));
    close(fd);
    signal_to(to_parent);
}

int main(int argc, char **argv) {
    if (argc < 2)
        return 2;
    setvbuf(stdout, NULL, _IOLBF, 0);
    snprintf(path, sizeof path, "%s/f", argv[1]);
    int fd = open(path, O_CREAT | O_RDWR, 0644);
    write(fd, "0123456789abcdefghij", 20);
    pipe(to_child);
    pipe(to_parent);
    say("parent: write lock [0,10)", lk(fd, F_SETLK, F_WRLCK, 0, 10));
    pid_t me = getpid();
    pid_t c = fork();
    if (c == 0) {
        child(me);
        _exit(0);
    }
    wait_on(to_parent);
    sleep(1);
    printf("parent: unlocking\n");
    lk(fd, F_SETLK, F_UNLCK, 0, 10);
    wait_on(to_parent);
    say("parent: write lock [0,10) again", lk(fd, F_SETLK, F_WRLCK, 0, 10));
    close(open(path, O_RDONLY)); /* POSIX: closing any descriptor of the file drops the locks */
    signal_to(to_child);
    wait_on(to_parent);
    int ffd = open(path, O_RDWR);
    say("parent: flock LOCK_EX", flock(ffd, LOCK_EX));
    signal_to(to_child);
    wait_on(to_parent);
    sleep(1);
    close(ffd);
    wait_on(to_parent);
    int ofd = open(path, O_RDWR);
    say("parent: OFD write lock [0,1)", lk(ofd, F_OFD_SETLK, F_WRLCK, 0, 1));
    pid_t d = fork();
    if (d == 0) {
        say("second child: OFD lock on the inherited description", lk(ofd, F_OFD_SETLK, F_WRLCK, 0, 1));
        _exit(0);
    }
    waitpid(d, NULL, 0);
    signal_to(to_child);
    wait_on(to_parent);
    waitpid(c, NULL, 0);
    return 0;
}
