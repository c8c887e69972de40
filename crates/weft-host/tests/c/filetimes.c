/* Times of real files the run changes, as a program sees them: a file made, looked at, left,
 * changed through stdio (whose write the shim never sees) and looked at again; a directory
 * that gains an entry; statx's birth time. Every line is the same in every run: times are
 * printed relative to the program's start in its own clock. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static time_t start;

static void show(const char *what, const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) {
        perror(what);
        return;
    }
    printf("%s: modified at +%lds, accessed as modified %d, changed as modified %d\n", what,
           (long)(st.st_mtime - start), st.st_atime == st.st_mtime, st.st_ctime == st.st_mtime);
}

int main(void) {
    start = time(NULL);
    int fd = open("f", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    write(fd, "a", 1);
    struct stat a, b;
    fstat(fd, &a);
    close(fd);
    printf("made: modified at +%lds\n", (long)(a.st_mtime - start));
    sleep(2);
    stat("f", &b);
    printf("untouched for 2 s: same time %d\n", a.st_mtim.tv_sec == b.st_mtim.tv_sec &&
                                                    a.st_mtim.tv_nsec == b.st_mtim.tv_nsec);
    FILE *f = fopen("f", "a");
    fprintf(f, "more\n");
    fclose(f);
    sleep(1);
    show("appended through stdio, looked at 1 s later", "f");
    sleep(1);
    show("read back later", "f");
    char buf[8];
    fd = open("f", O_RDONLY);
    read(fd, buf, sizeof buf);
    close(fd);
    show("after a read", "f");
    mkdir("d", 0755);
    show("directory made", "d");
    sleep(3);
    close(open("d/x", O_CREAT | O_WRONLY, 0644));
    show("directory with a new entry", "d");
    struct statx x;
    statx(AT_FDCWD, "f", 0, STATX_BASIC_STATS | STATX_BTIME, &x);
    printf("statx: modified at +%llds, birth time reported %d\n",
           (long long)(x.stx_mtime.tv_sec - start), (x.stx_mask & STATX_BTIME) != 0);
    struct stat old;
    stat("/bin/sh", &old);
    printf("a file from before the run keeps its time: %d\n", old.st_mtime < start);
    return 0;
}
