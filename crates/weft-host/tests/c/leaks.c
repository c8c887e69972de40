/* What a program learns of the real machine through libc paths that are not the obvious clock
 * and random calls: a mkstemp or mkdtemp name (glibc draws it from the real clock), getrusage, and its own
 * /proc memory files. Under the shim all of them must be the same in every run.
 * usage: leaks DIR   (DIR: a writable folder for the temporary file) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static void show_file(const char *path) {
    char buf[512] = {0};
    int fd = open(path, O_RDONLY);
    long n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
    if (fd >= 0) close(fd);
    for (char *c = buf; *c; c++)
        if (*c == '\n') *c = ' ';
    printf("%s: %ld bytes: %s\n", path, n, buf);
}

int main(int argc, char **argv) {
    char name[4096];
    snprintf(name, sizeof name, "%s/conf.XXXXXX", argc > 1 ? argv[1] : ".");
    int fd = mkstemp(name);
    printf("mkstemp %s -> %s\n", fd >= 0 ? "ok" : "failed", strrchr(name, '/') + 1);
    if (fd >= 0) unlink(name), close(fd);
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    printf("rusage user %ld.%06ld sys %ld.%06ld maxrss %ld\n", (long)u.ru_utime.tv_sec,
           (long)u.ru_utime.tv_usec, (long)u.ru_stime.tv_sec, (long)u.ru_stime.tv_usec,
           u.ru_maxrss);
    show_file("/proc/self/statm");
    char stat[64];
    snprintf(stat, sizeof stat, "/proc/%ld/stat", (long)getpid());
    show_file(stat);
    /* A directory's name too (mkdtemp: libqb names its shared-memory folders so). */
    snprintf(name, sizeof name, "%s/dir.XXXXXX", argc > 1 ? argv[1] : ".");
    char *dir = mkdtemp(name);
    printf("mkdtemp %s -> %s\n", dir ? "ok" : "failed", strrchr(name, '/') + 1);
    if (dir) rmdir(dir);
    return 0;
}
