/* diskrefuse: one call on a data directory (argv[1]) that weft does not model, chosen by
 * argv[2]; under weft the run must end as unsupported, naming the call. argv[2] = "statfs"
 * prints what the statfs family tells of the simulated disk instead. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3)
        return 2;
    char path[4096], other[4096];
    snprintf(path, sizeof path, "%s/f", argv[1]);
    snprintf(other, sizeof other, "%s/g", argv[1]);
    int fd = open(path, O_CREAT | O_RDWR, 0644);
    if (write(fd, "abcd", 4) != 4)
        return 3;
    const char *what = argv[2];
    if (!strcmp(what, "statfs")) { /* served: the simulated disk's fixed file system */
        struct statfs a, b;
        struct statvfs c, d;
        int r = fstatfs(fd, &a) | statfs(path, &b) | fstatvfs(fd, &c) | statvfs(argv[1], &d);
        printf("statfs %d: type %lx, block %ld %ld %lu %lu, free %d\n", r, (long)a.f_type,
               (long)b.f_bsize, (long)a.f_bsize, c.f_bsize, d.f_frsize, d.f_bavail > 0);
        errno = 0;
        r = statfs(other, &b);
        printf("statfs of a missing file: %d ENOENT %d\n", r, errno == ENOENT);
        return 0;
    }
    if (!strcmp(what, "mremap"))
        mremap(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0), 4096, 8192, MREMAP_MAYMOVE);
    else if (!strcmp(what, "odirect"))
        open(path, O_RDONLY | O_DIRECT);
    else if (!strcmp(what, "symlink"))
        symlink(path, other);
    else if (!strcmp(what, "fallocate"))
        fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096);
    printf("not refused: %s\n", what);
    return 0;
}
