/* diskmap: mappings of files in the directory argv[1] (and sync_file_range), printing what
 * each call returns and what the mapping holds. Run natively on an empty real directory and
 * under weft with argv[1] a data directory, the output must be identical line for line
 * (tests/disk.rs). With argv[2] = "write-while-mapped" / "truncate-while-mapped" /
 * "write-after-munmap" / "child-write-while-mapped" it ends with that change of a file mapped
 * shared and what the mapping sees of it; "shared-stores" stores through writable shared
 * mappings; "rewrite-after-restart" maps and waits for a crash, and its restarted
 * incarnation rewrites the file; "store-then-crash" stores, syncs one page, and waits for a
 * crash, and its restarted incarnation reads the file back. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *base;

static const char *P(const char *name) {
    static char buf[4][4096];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", base, name);
    return buf[k];
}

static const char *ename(int e) {
    switch (e) {
    case 0: return "0";
    case EBADF: return "EBADF";
    case EINVAL: return "EINVAL";
    case EACCES: return "EACCES";
    case ENODEV: return "ENODEV";
    default: return "other";
    }
}

static void say(const char *what, long r) {
    if (r < 0)
        printf("%s -> %ld %s\n", what, r, ename(errno));
    else
        printf("%s -> %ld\n", what, r);
    errno = 0;
}

static void say_map(const char *what, void *p) {
    say(what, p == MAP_FAILED ? -1 : 0);
}

/* A file `name` of `n` bytes: byte i is 'a' + i % 23. */
static int make(const char *name, long n) {
    int fd = open(P(name), O_CREAT | O_RDWR | O_TRUNC, 0644);
    char *b = malloc(n);
    for (long i = 0; i < n; i++) b[i] = 'a' + i % 23;
    if (write(fd, b, n) != n) exit(3);
    free(b);
    return fd;
}

/* Prints a checksum of p[0..n) and a few bytes. */
static void show(const char *what, const unsigned char *p, long n) {
    unsigned long h = 0;
    for (long i = 0; i < n; i++) h = h * 31 + p[i];
    printf("  %s: sum %lu first %d last %d\n", what, h, p[0], p[n - 1]);
}

static void calls(void) {
    long page = sysconf(_SC_PAGESIZE);
    int fd = make("t", 3 * page + 100);
    int ro = open(P("t"), O_RDONLY);
    int wo = open(P("t"), O_WRONLY);
    unsigned char *p = mmap(NULL, 3 * page + 100, PROT_READ, MAP_SHARED, ro, 0);
    say_map("shared ro", p);
    show("whole", p, 3 * page + 100);
    show("tail of last page", p + 3 * page + 100, page - 100);
    say("munmap", munmap(p, 3 * page + 100));
    p = mmap(NULL, page, PROT_READ, MAP_SHARED, ro, 2 * page);
    say_map("shared at offset", p);
    show("page 2", p, page);
    say("munmap", munmap(p, page));
    p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE, ro, page);
    say_map("private rw", p);
    show("pages 1-2", p, 2 * page);
    memcpy(p, "XYZ", 3);
    show("after a private write", p, 2 * page);
    char back[4] = {0};
    say("pread", pread(fd, back, 3, page));
    printf("  file still '%s'\n", back);
    say("munmap", munmap(p, 2 * page));
    p = mmap(NULL, 4 * page, PROT_READ, MAP_SHARED, ro, 0);
    say_map("shared ro, split by munmap", p);
    say("munmap middle", munmap(p + page, page));
    show("page 0", p, page);
    show("page 2", p + 2 * page, page);
    say("munmap rest", munmap(p, 4 * page));
    p = mmap(NULL, page, PROT_READ, MAP_SHARED, ro, 0);
    say("mprotect writable, read-only fd", mprotect(p, page, PROT_READ | PROT_WRITE));
    say("mprotect none", mprotect(p, page, PROT_NONE));
    say("mprotect read", mprotect(p, page, PROT_READ));
    show("after mprotect", p, page);
    say("munmap", munmap(p, page));
    say_map("length 0", mmap(NULL, 0, PROT_READ, MAP_SHARED, ro, 0));
    say_map("unaligned offset", mmap(NULL, page, PROT_READ, MAP_SHARED, ro, 1));
    say_map("write-only fd", mmap(NULL, page, PROT_READ, MAP_PRIVATE, wo, 0));
    say_map("shared writable on a read-only fd", mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0));
    int dir = open(base, O_RDONLY | O_DIRECTORY);
    say_map("directory", mmap(NULL, page, PROT_READ, MAP_SHARED, dir, 0));
    say("sync_file_range", sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE));
    say("sync_file_range wait", sync_file_range(fd, page, page, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER));
    say("sync_file_range bad flags", sync_file_range(fd, 0, 0, 0x100));
    say("sync_file_range negative", sync_file_range(fd, -1, 0, SYNC_FILE_RANGE_WRITE));
    say("sync_file_range directory", sync_file_range(dir, 0, 0, SYNC_FILE_RANGE_WRITE));
    say("write after all unmapped", pwrite(fd, "ok", 2, 0));
    close(dir);
    close(wo);
    close(ro);
    close(fd);
}

/* Stores through writable shared mappings: a child's, seen by the file; one mapping's, seen
 * by another; a write, seen by a mapping; all of it in the file after munmap. */
static void stores(void) {
    long page = sysconf(_SC_PAGESIZE);
    int fd = make("s", 3 * page);
    char *q = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    say_map("shared rw", q);
    pid_t c = fork();
    if (c == 0) {
        memcpy(q, "child", 5);
        say("child msync", msync(q, page, MS_SYNC));
        _exit(0);
    }
    waitpid(c, NULL, 0);
    char buf[8] = {0};
    say("pread", pread(fd, buf, 5, 0));
    printf("  the file after the child's store: '%s'\n", buf);
    char *r = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, page);
    say_map("second mapping of page 1", r);
    memcpy(q + page, "parent", 6);
    printf("  it sees the first's store: '%.6s'\n", r);
    say("pwrite", pwrite(fd, "WRITE", 5, page + 10));
    printf("  the first sees the write: '%.5s'\n", q + page + 10);
    say("msync async", msync(q, 2 * page, MS_ASYNC));
    say("munmap", munmap(q, 2 * page));
    say("munmap", munmap(r, page));
    memset(buf, 0, sizeof buf);
    say("pread", pread(fd, buf, 6, page));
    printf("  the file after munmap: '%s'\n", buf);
    char *w = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 2 * page);
    say("mprotect writable", mprotect(w, page, PROT_READ | PROT_WRITE));
    memcpy(w, "mprot", 5);
    memset(buf, 0, sizeof buf);
    say("pread", pread(fd, buf, 5, 2 * page));
    printf("  the file sees a store made after mprotect: '%s'\n", buf);
    say("munmap", munmap(w, page));
    close(fd);
}

/* The first incarnation stores through a shared mapping, syncing one page, and waits for the
 * crash; the restarted one reads both pages back. */
static void store_then_crash(void) {
    long page = sysconf(_SC_PAGESIZE);
    int old = open(P("c"), O_RDONLY);
    if (old >= 0) {
        char a[4] = {0}, b[4] = {0};
        pread(old, a, 3, 0);
        pread(old, b, 3, page);
        printf("after restart: synced '%s', unsynced %s\n", a,
               !strcmp(b, "VOL") ? "kept" : !strcmp(b, "aaa") ? "lost" : b);
        return;
    }
    int fd = open(P("c"), O_CREAT | O_RDWR, 0644);
    char *fill = malloc(2 * page);
    memset(fill, 'a', 2 * page);
    write(fd, fill, 2 * page);
    fsync(fd);
    int dir = open(base, O_RDONLY | O_DIRECTORY);
    fsync(dir);
    char *q = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    memcpy(q, "DUR", 3);
    say("msync", msync(q, page, MS_SYNC));
    memcpy(q + page, "VOL", 3);
    printf("stored\n");
    for (;;) usleep(10000);
}

int main(int argc, char **argv) {
    if (argc < 2)
        return 2;
    base = argv[1];
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *end = argc > 2 ? argv[2] : "";
    if (!*end) {
        calls();
        return 0;
    }
    if (!strcmp(end, "rewrite-after-restart")) {
        /* The first incarnation maps m shared and waits for its crash; the restarted one
         * finds m and rewrites it (no process maps it any more). */
        int old = open(P("m"), O_RDWR);
        if (old >= 0) {
            say("rewrite after restart", pwrite(old, "new", 3, 0));
            return 0;
        }
        int fd = make("m", 5000);
        fsync(fd);
        say_map("mapped", mmap(NULL, 5000, PROT_READ, MAP_SHARED, fd, 0));
        for (;;) usleep(10000);
    }
    if (!strcmp(end, "shared-stores")) {
        stores();
        return 0;
    }
    if (!strcmp(end, "store-then-crash")) {
        store_then_crash();
        return 0;
    }
    int fd = make("m", 5000);
    unsigned char *p = mmap(NULL, 5000, PROT_READ, MAP_SHARED, fd, 0);
    say_map("mapped", p);
    close(fd); /* the mapping outlives the descriptor */
    fd = open(P("m"), O_RDWR);
    if (!strcmp(end, "write-after-munmap")) {
        munmap(p, 5000);
        say("write", write(fd, "x", 1));
    } else if (!strcmp(end, "write-while-mapped")) {
        say("write", write(fd, "x", 1));
        printf("the mapping sees '%c'\n", p[0]);
    } else if (!strcmp(end, "truncate-while-mapped")) {
        say("ftruncate", ftruncate(fd, 10));
        printf("after the truncate: byte 5 '%c', byte 20 %d\n", p[5], p[20]);
    } else if (!strcmp(end, "child-write-while-mapped")) {
        /* The parent unmaps and writes; the child it forked before still maps the file. */
        int go[2];
        pipe(go);
        pid_t c = fork();
        if (c == 0) {
            char b;
            read(go[0], &b, 1);
            printf("the child's mapping sees '%c'\n", p[0]);
            return 0;
        }
        munmap(p, 5000);
        say("write", write(fd, "x", 1));
        write(go[1], "g", 1);
        waitpid(c, NULL, 0);
    }
    printf("done\n");
    return 0;
}
