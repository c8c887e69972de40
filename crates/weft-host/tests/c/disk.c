/* disk: one fixed sequence of file calls in the directory argv[1], printing what each returns
 * (value, errno name, contents, sizes, sorted listings) and nothing that differs between a real
 * file system and weft's simulated disk by design (no inode numbers, times, modes). Run
 * natively on an empty real directory and under weft with argv[1] a data directory, the output
 * must be identical line for line (tests/disk.rs). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

static const char *base;

static const char *P(const char *name) {
    static char buf[8][4096];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", base, name);
    return buf[k];
}

static const char *ename(int e) {
    switch (e) {
    case 0: return "0";
    case ENOENT: return "ENOENT";
    case EEXIST: return "EEXIST";
    case ENOTDIR: return "ENOTDIR";
    case EISDIR: return "EISDIR";
    case EBADF: return "EBADF";
    case EINVAL: return "EINVAL";
    case EXDEV: return "EXDEV";
    case ENOTEMPTY: return "ENOTEMPTY";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    default: return "other";
    }
}

/* Prints `what -> r` and the errno when r < 0. */
static long say(const char *what, long r) {
    int e = errno;
    if (r < 0)
        printf("%s -> %ld %s\n", what, r, ename(e));
    else
        printf("%s -> %ld\n", what, r);
    errno = 0;
    return r;
}

static void size_of(const char *name) {
    struct stat st;
    int r = stat(P(name), &st);
    if (r < 0) {
        say(name, r);
        return;
    }
    printf("stat %s: %s size %lld links %ld\n", name, S_ISDIR(st.st_mode) ? "dir" : S_ISREG(st.st_mode) ? "file" : "other",
           S_ISDIR(st.st_mode) ? 0LL : (long long)st.st_size, S_ISDIR(st.st_mode) ? 0L : (long)st.st_nlink);
}

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void list(const char *name) {
    DIR *d = opendir(P(name));
    if (!d) {
        say("opendir", -1);
        return;
    }
    char *names[64];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 64) {
        char t = e->d_type == DT_DIR ? 'd' : e->d_type == DT_REG ? 'f' : '?';
        names[n] = malloc(300);
        snprintf(names[n], 300, "%s:%c", e->d_name, t);
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp);
    printf("list %s:", name);
    for (int i = 0; i < n; i++) {
        printf(" %s", names[i]);
        free(names[i]);
    }
    printf("\n");
}

static void getdents_list(const char *name) {
    int fd = open(P(name), O_RDONLY | O_DIRECTORY);
    char buf[4096];
    char *names[64];
    int n = 0;
    long r;
    while ((r = getdents64(fd, buf, sizeof buf)) > 0) {
        for (long at = 0; at < r;) {
            struct dirent64 *e = (struct dirent64 *)(buf + at);
            if (n < 64)
                names[n++] = strdup(e->d_name);
            at += e->d_reclen;
        }
    }
    close(fd);
    qsort(names, n, sizeof *names, cmp);
    printf("getdents %s:", name);
    for (int i = 0; i < n; i++) {
        printf(" %s", names[i]);
        free(names[i]);
    }
    printf("\n");
}

static int not_dot(const struct dirent *e) { return e->d_name[0] != '.'; }

static void print_scanned(const char *how, const char *name, struct dirent **v, int n) {
    printf("%s %s: %d", how, name, n);
    for (int i = 0; i < n; i++) {
        printf(" %s:%c", v[i]->d_name, v[i]->d_type == DT_DIR ? 'd' : v[i]->d_type == DT_REG ? 'f' : '?');
        free(v[i]);
    }
    if (n >= 0) free(v);
    printf("\n");
}

/* scandir (filtered, sorted by alphasort), scandirat from an open directory, readdir_r, and
 * telldir/seekdir back to an entry after the listing's end:
 * glibc's scandir reads through its own internal readdir. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* readdir_r, still in use */
static void scanned(const char *name, int dfd) {
    struct dirent **v = NULL;
    print_scanned("scandir", name, v, scandir(P(name), &v, not_dot, alphasort));
    print_scanned("scandir missing", name, v, scandir(P("nope"), &v, NULL, NULL));
    if (dfd >= 0) print_scanned("scandirat", name, v, scandirat(dfd, name, &v, not_dot, alphasort));
    DIR *d = opendir(P(name));
    struct dirent entry, *e;
    int n = 0;
    while (d && readdir_r(d, &entry, &e) == 0 && e) n += e->d_name[0] != '.';
    if (d) closedir(d);
    printf("readdir_r %s: %d not dot\n", name, n);
    d = opendir(P(name));
    readdir(d);
    long at = telldir(d);
    struct dirent *next = readdir(d);
    char want[256] = "";
    if (next) snprintf(want, sizeof want, "%s", next->d_name);
    while (readdir(d)) {}
    seekdir(d, at);
    next = readdir(d);
    printf("seekdir %s: back at the same entry %d\n", name, next ? !strcmp(next->d_name, want) : !want[0]);
    closedir(d);
}

/* stdio on the directory's files: fopen in every mode, buffered writes flushed and synced
 * through fileno, seeks, line reads, fdopen, and a missing file. */
static void stdio(void) {
    FILE *f = fopen(P("s"), "w");
    printf("fopen w %d\n", f != NULL);
    say("fprintf", fprintf(f, "one %d\ntwo\n", 1));
    say("fflush", fflush(f));
    say("fsync fileno", fsync(fileno(f)));
    say("fclose", fclose(f));
    size_of("s");
    f = fopen(P("s"), "a");
    say("fputs a", fputs("three\n", f));
    say("ftell a", ftell(f));
    say("fclose a", fclose(f));
    char line[64];
    f = fopen(P("s"), "re");
    while (fgets(line, sizeof line, f))
        printf("  line %s", line);
    say("feof", feof(f));
    say("fclose r", fclose(f));
    f = fopen(P("s"), "r+");
    say("fseek", fseek(f, 4, SEEK_SET));
    say("fwrite r+", (long)fwrite("1!", 1, 2, f));
    say("fseek end", fseek(f, 0, SEEK_END));
    say("ftell end", ftell(f));
    rewind(f);
    memset(line, 0, sizeof line);
    say("fread r+", (long)fread(line, 1, sizeof line - 1, f));
    printf("  got '%s'\n", line);
    say("fclose r+", fclose(f));
    errno = 0;
    printf("fopen missing %d\n", fopen(P("nope/s"), "r") != NULL);
    say("errno", -errno);
    errno = 0;
    int fd = open(P("t"), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    f = fdopen(fd, "w");
    say("fdopen fileno same", fileno(f) == fd);
    say("fwrite fdopen", (long)fwrite("abcdef", 1, 6, f));
    say("fclose fdopen", fclose(f));
    say("write after fclose", write(fd, "x", 1));
    size_of("t");
}

/* fallocate (growing, inside the file, keeping the size), posix_fallocate, bad arguments, and
 * flock on one descriptor. */
static void allocation_and_locks(void) {
    int fd = open(P("fa"), O_CREAT | O_RDWR, 0644);
    say("write fa", write(fd, "abc", 3));
    say("fallocate", fallocate(fd, 0, 0, 4096));
    size_of("fa");
    say("fallocate inside", fallocate(fd, 0, 0, 10));
    say("fallocate keep size", fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 8192));
    size_of("fa");
    printf("posix_fallocate -> %s\n", ename(posix_fallocate(fd, 100, 5000)));
    size_of("fa");
    printf("posix_fallocate bad -> %s\n", ename(posix_fallocate(fd, -1, 10)));
    say("fallocate zero len", fallocate(fd, 0, 0, 0));
    char buf[8] = {0};
    say("pread fa", pread(fd, buf, 5, 0));
    printf("  got %d %d %d %d %d\n", buf[0], buf[1], buf[2], buf[3], buf[4]);
    say("flock ex", flock(fd, LOCK_EX | LOCK_NB));
    say("flock sh", flock(fd, LOCK_SH));
    say("flock un", flock(fd, LOCK_UN));
    say("flock bad", flock(fd, 0));
    say("flock sh|ex", flock(fd, LOCK_SH | LOCK_EX));
    close(fd);
}

/* Hard links: a second name shares the data; rename between two names of one file does
 * nothing; the file lives until its last name and descriptor are gone. */
static void links(void) {
    char buf[16] = {0};
    struct stat st;
    int fd = open(P("l1"), O_CREAT | O_RDWR, 0644);
    say("write l1", write(fd, "linked", 6));
    say("link", link(P("l1"), P("l2")));
    size_of("l1");
    size_of("l2");
    say("link over existing", link(P("l1"), P("l2")));
    say("link missing", link(P("nope"), P("l3")));
    say("link dir", link(P("d"), P("l3")));
    say("link into missing dir", link(P("l1"), P("nope/l3")));
    int dfd = open(base, O_RDONLY | O_DIRECTORY);
    say("linkat", linkat(dfd, "l2", dfd, "l3", AT_SYMLINK_FOLLOW));
    int g = open(P("l3"), O_WRONLY);
    say("write through l3", pwrite(g, "LINK", 4, 0));
    close(g);
    say("read l1", pread(fd, buf, 6, 0));
    printf("  got '%s'\n", buf);
    say("rename l1 onto l2", rename(P("l1"), P("l2")));
    size_of("l1");
    size_of("l2");
    say("unlink l1", unlink(P("l1")));
    size_of("l3");
    say("unlink l2", unlink(P("l2")));
    say("unlink l3", unlink(P("l3")));
    say("fstat", fstat(fd, &st));
    printf("  size %lld links %ld\n", (long long)st.st_size, (long)st.st_nlink);
    close(fd);
    close(dfd);
}

int main(int argc, char **argv) {
    if (argc < 2)
        return 2;
    base = argv[1];
    char buf[256];
    setvbuf(stdout, NULL, _IOLBF, 0);

    say("open missing", open(P("f"), O_RDONLY));
    int first = open(P("f"), O_CREAT | O_RDWR, 0644);
    say("create f", first >= 0 ? 0 : -1);
    int fd = open(P("f"), O_RDWR); /* a second description; the first stays open */
    say("write", write(fd, "hello world", 11));
    say("lseek cur", lseek(fd, 0, SEEK_CUR));
    memset(buf, 0, sizeof buf);
    say("pread", pread(fd, buf, 5, 6));
    printf("  got '%s'\n", buf);
    say("lseek set", lseek(fd, 0, SEEK_SET));
    memset(buf, 0, sizeof buf);
    say("read", read(fd, buf, 100));
    printf("  got '%s'\n", buf);
    say("read at end", read(fd, buf, 100));
    say("pwrite", pwrite(fd, "HELLO", 5, 0));
    struct iovec w[2] = {{"ab", 2}, {"cd", 2}};
    say("writev", writev(fd, w, 2));
    size_of("f");
    char a[4] = {0}, b[5] = {0};
    struct iovec rv[2] = {{a, 3}, {b, 4}};
    say("lseek 0", lseek(fd, 0, SEEK_SET));
    say("readv", readv(fd, rv, 2));
    printf("  got '%s' '%s'\n", a, b);
    say("ftruncate 3", ftruncate(fd, 3));
    size_of("f");
    say("ftruncate 10", ftruncate(fd, 10));
    memset(buf, 'x', sizeof buf);
    say("pread zeros", pread(fd, buf, 20, 0));
    printf("  got %c%c%c %d %d\n", buf[0], buf[1], buf[2], buf[3], buf[9]);
    say("lseek end-2", lseek(fd, -2, SEEK_END));
    say("lseek negative", lseek(fd, -20, SEEK_SET));
    say("pread negative", pread(fd, buf, 1, -1));
    say("fsync", fsync(fd));
    say("fdatasync", fdatasync(fd));
    say("getfl accmode", fcntl(fd, F_GETFL) & O_ACCMODE);
    struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    say("setlk", fcntl(fd, F_SETLK, &lk));
    int fd2 = dup(fd);
    say("dup write", write(fd2, "Z", 1));
    say("shared offset", lseek(fd, 0, SEEK_CUR));
    close(fd2);

    say("excl", open(P("f"), O_CREAT | O_EXCL | O_WRONLY, 0644));
    say("notdir", open(P("f/x"), O_RDONLY));
    say("mkdir d", mkdir(P("d"), 0755));
    say("mkdir d again", mkdir(P("d"), 0755));
    say("mkdir deep", mkdir(P("nope/x"), 0755));
    int dfd = open(P("d"), O_RDONLY);
    say("open dir", dfd >= 0 ? 0 : -1);
    say("fsync dir", fsync(dfd));
    say("write dir", write(dfd, "x", 1));
    say("read dir", read(dfd, buf, 1));
    say("open dir for writing", open(P("d"), O_WRONLY));
    int g = openat(dfd, "g", O_CREAT | O_WRONLY | O_APPEND, 0644);
    say("openat", g >= 0 ? 0 : -1);
    say("append 1", write(g, "12", 2));
    say("lseek 0 append", lseek(g, 0, SEEK_SET));
    say("append 2", write(g, "34", 2));
    say("read wronly", read(g, buf, 1));
    close(g);
    size_of("d/g");
    int ro = open(P("d/g"), O_RDONLY);
    say("write rdonly", write(ro, "x", 1));
    say("ftruncate rdonly", ftruncate(ro, 0));
    close(ro);
    struct stat st;
    say("fstatat d", fstatat(AT_FDCWD, P("d"), &st, 0));
    printf("  dir %d\n", S_ISDIR(st.st_mode));
    say("fstatat rel", fstatat(dfd, "g", &st, 0));
    printf("  size %lld\n", (long long)st.st_size);
    struct statx sx;
    say("statx", statx(AT_FDCWD, P("d/g"), 0, STATX_BASIC_STATS, &sx));
    printf("  size %llu reg %d\n", (unsigned long long)sx.stx_size, S_ISREG(sx.stx_mode));

    say("rename f d/h", rename(P("f"), P("d/h")));
    size_of("f");
    size_of("d/h");
    say("fstat after rename", fstat(fd, &st));
    printf("  size %lld\n", (long long)st.st_size);
    say("rename missing", rename(P("missing"), P("x")));
    say("rename into missing dir", rename(P("d/h"), P("nope/h")));
    close(open(P("e"), O_CREAT | O_WRONLY, 0644));
    say("rename over e", rename(P("d/h"), P("e")));
    size_of("e");
    say("renameat", renameat(dfd, "g", AT_FDCWD, P("g2")));
    say("rename to dir", rename(P("e"), P("d")));
    say("access g2", access(P("g2"), F_OK));
    say("access zz", access(P("zz"), F_OK));
    list(".");
    list("d");
    getdents_list(".");
    scanned(".", dfd);
    scanned("d", dfd);

    say("unlink e", unlink(P("e")));
    say("unlink e again", unlink(P("e")));
    say("unlink dir", unlink(P("d")));
    say("mkdir r", mkdir(P("r"), 0755));
    close(open(P("r/x"), O_CREAT | O_WRONLY, 0644));
    say("rmdir full", rmdir(P("r")));
    say("rmdir file", rmdir(P("r/x")));
    say("rmdir missing", rmdir(P("nope")));
    say("rmdir under missing", rmdir(P("nope/x")));
    say("unlinkat removedir full", unlinkat(AT_FDCWD, P("r"), AT_REMOVEDIR));
    say("unlink r/x", unlink(P("r/x")));
    say("rmdir empty", rmdir(P("r")));
    say("rmdir again", rmdir(P("r")));
    list(".");

    /* Directory renames: refused targets, then onto an empty directory; a descriptor of the
       moved directory follows it. */
    say("mkdir m", mkdir(P("m"), 0755));
    say("mkdir m/s", mkdir(P("m/s"), 0755));
    close(open(P("m/s/f"), O_CREAT | O_WRONLY, 0644));
    int mfd = open(P("m"), O_RDONLY | O_DIRECTORY);
    say("mkdir full", mkdir(P("full"), 0755));
    close(open(P("full/y"), O_CREAT | O_WRONLY, 0644));
    say("rename dir onto full", rename(P("m"), P("full")));
    say("rename dir onto file", rename(P("m"), P("full/y")));
    say("rename dir into itself", rename(P("m"), P("m/s/in")));
    say("rename missing dir", rename(P("nope"), P("nope2")));
    say("mkdir empty", mkdir(P("empty"), 0755));
    say("rename dir onto empty", rename(P("m"), P("empty")));
    size_of("empty/s/f");
    say("access old path", access(P("m/s/f"), F_OK));
    int moved = openat(mfd, "s/f", O_RDONLY);
    say("openat in the moved dir", moved >= 0 ? 0 : -1);
    close(moved);
    close(mfd);
    say("rename dir back", rename(P("empty"), P("m2")));
    list(".");
    list("m2/s");
    say("fstat unlinked", fstat(fd, &st));
    printf("  size %lld links %ld\n", (long long)st.st_size, (long)st.st_nlink);
    memset(buf, 0, sizeof buf);
    say("pread unlinked", pread(fd, buf, 3, 0));
    printf("  got '%s'\n", buf);
    close(fd);
    say("read closed", read(fd, buf, 1));

    int t = open(P("g2"), O_WRONLY | O_TRUNC);
    close(t);
    size_of("g2");
    say("truncate", truncate(P("g2"), 7));
    size_of("g2");
    int c = creat(P("c"), 0644);
    say("creat write", write(c, "abc", 3));
    close(c);
    size_of("c");

    /* A write larger than one hand-off, read back. */
    int big = open(P("big"), O_CREAT | O_RDWR, 0644);
    static char data[200000], back[200000];
    for (int i = 0; i < (int)sizeof data; i++)
        data[i] = (char)(i * 7 + i / 251);
    say("big pwrite", pwrite(big, data, sizeof data, 1000));
    say("big pread", pread(big, back, sizeof back, 1000));
    printf("  same %d\n", memcmp(data, back, sizeof data) == 0);
    close(big);
    size_of("big");
    stdio();
    allocation_and_locks();
    links();
    list(".");
    return 0;
}
