/* splice, tee, vmsplice and copy_file_range between files of a directory (argv[1]: a data
 * directory under weft), pipes and a socketpair, printed so that a native run and a run under
 * the shim can be compared line by line: what each call answers, where the offsets are, and
 * what bytes arrived. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

static char path[512];

static int file(const char *dir, const char *name, int flags) {
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return open(path, flags | O_CREAT, 0644);
}

static void answer(const char *what, ssize_t n) {
    printf("%s: %zd errno %s\n", what, n, n < 0 ? strerrorname_np(errno) : "-");
}

static void drain(const char *what, int fd, size_t n) {
    char buf[128] = {0};
    ssize_t r = read(fd, buf, n < sizeof buf - 1 ? n : sizeof buf - 1);
    printf("%s holds %zd: [%s]\n", what, r, buf);
}

static void copies(const char *dir) {
    int a = file(dir, "a", O_RDWR | O_TRUNC);
    write(a, "0123456789abcdefghij", 20);
    lseek(a, 3, SEEK_SET);
    int b = file(dir, "b", O_RDWR | O_TRUNC);
    answer("copy_file_range at the offsets", copy_file_range(a, NULL, b, NULL, 5, 0));
    printf("offsets %ld %ld\n", (long)lseek(a, 0, SEEK_CUR), (long)lseek(b, 0, SEEK_CUR));
    off64_t in = 15, out = 100;
    answer("copy_file_range past the end", copy_file_range(a, &in, b, &out, 50, 0));
    printf("offsets %ld %ld, given %ld %ld\n", (long)lseek(a, 0, SEEK_CUR),
           (long)lseek(b, 0, SEEK_CUR), (long)in, (long)out);
    struct stat st;
    fstat(b, &st);
    char buf[128] = {0};
    pread(b, buf, 5, 0);
    printf("b: %ld bytes, starts [%s]\n", (long)st.st_size, buf);
    answer("copy_file_range with flags", copy_file_range(a, NULL, b, NULL, 5, 1));
    int app = file(dir, "c", O_WRONLY | O_APPEND);
    answer("copy_file_range into O_APPEND", copy_file_range(a, NULL, app, NULL, 5, 0));
    int p[2];
    pipe(p);
    answer("copy_file_range into a pipe", copy_file_range(a, NULL, p[1], NULL, 5, 0));
    close(a), close(b), close(app), close(p[0]), close(p[1]);
}

static void splices(const char *dir) {
    int a = file(dir, "a", O_RDWR);
    int p[2], q[2], s[2];
    pipe(p), pipe(q);
    socketpair(AF_UNIX, SOCK_STREAM, 0, s);
    off64_t at = 10;
    answer("splice file -> pipe", splice(a, &at, p[1], NULL, 6, 0));
    printf("given offset %ld, file offset %ld\n", (long)at, (long)lseek(a, 0, SEEK_CUR));
    answer("tee pipe -> pipe", tee(p[0], q[1], 100, 0));
    drain("the tee'd pipe", q[0], 100);
    answer("splice pipe -> socketpair, 4 of 6", splice(p[0], NULL, s[0], NULL, 4, 0));
    drain("the pipe", p[0], 100);
    answer("splice socketpair -> pipe", splice(s[1], NULL, q[1], NULL, 100, 0));
    drain("the second pipe", q[0], 100);
    write(p[1], "tail", 4);
    off64_t w = 2;
    answer("splice pipe -> file", splice(p[0], NULL, a, &w, 100, 0));
    char buf[32] = {0};
    pread(a, buf, 8, 0);
    printf("file now starts [%s], offset given %ld\n", buf, (long)w);
    answer("splice file -> file", splice(a, NULL, a, NULL, 4, 0));
    answer("splice with an offset on a pipe", splice(p[0], &at, a, NULL, 4, 0));
    answer("splice from an empty pipe, nonblocking", splice(p[0], NULL, a, NULL, 4, SPLICE_F_NONBLOCK));
    struct iovec iov[2] = {{"vm", 2}, {"splice", 6}};
    answer("vmsplice into a pipe", vmsplice(p[1], iov, 2, 0));
    char got[16] = {0};
    struct iovec back = {got, sizeof got - 1};
    answer("vmsplice out of a pipe", vmsplice(p[0], &back, 1, 0));
    printf("read back [%s]\n", got);
}

int main(int argc, char **argv) {
    mkdir(argv[1], 0755);
    copies(argv[1]);
    splices(argv[1]);
    return 0;
}
