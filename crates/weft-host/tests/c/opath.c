/* O_PATH descriptors in a directory (argv[1]: a data directory under weft), printed so that a
 * native run and a run under the shim can be compared line by line: an O_PATH descriptor names
 * a file or directory (fstat, *at calls relative to it), and calls on its contents answer
 * EBADF. `cp` opens its target with O_PATH|O_DIRECTORY to ask whether it is a directory. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void answer(const char *what, long n) {
    printf("%s: %ld errno %s\n", what, n, n < 0 ? strerrorname_np(errno) : "-");
}

static void on_a_file(int dir) {
    int f = openat(dir, "f", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    answer("write f", write(f, "contents", 8));
    close(f);
    int p = openat(dir, "f", O_PATH | O_RDWR | O_TRUNC);
    answer("O_PATH open of f", p < 0 ? -1 : 0);
    struct stat st;
    answer("fstat of it", fstat(p, &st));
    printf("size %ld regular %d\n", (long)st.st_size, S_ISREG(st.st_mode));
    char buf[16];
    answer("read on it", read(p, buf, sizeof buf));
    answer("write on it", write(p, "x", 1));
    answer("lseek on it", lseek(p, 0, SEEK_SET));
    answer("fsync on it", fsync(p));
    answer("O_PATH|O_DIRECTORY open of f", openat(dir, "f", O_PATH | O_DIRECTORY));
    close(p);
}

static void on_a_directory(const char *path) {
    int d = open(path, O_PATH | O_DIRECTORY);
    answer("O_PATH|O_DIRECTORY open of the directory", d < 0 ? -1 : 0);
    on_a_file(d);
    struct stat st;
    answer("fstatat f relative to it", fstatat(d, "f", &st, 0));
    printf("size %ld\n", (long)st.st_size);
    answer("mkdirat relative to it", mkdirat(d, "sub", 0755));
    char buf[4096];
    answer("getdents on it", getdents64(d, buf, sizeof buf));
    close(d);
}

int main(int argc, char **argv) {
    mkdir(argv[1], 0755);
    on_a_directory(argv[1]);
    return 0;
}
