/* diskfault: argv[2] rounds of pwrite, fsync and pread of 64 bytes at offset 64 * round on one
 * file of the data directory argv[1], printing each result (errno by name) and whether a read
 * returned what its round wrote, so tests/disk.rs can see the disk fault knobs reach a real
 * program. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *ename(int e) {
    return e == EIO ? "EIO" : e == ENOSPC ? "ENOSPC" : e == 0 ? "0" : "other";
}

int main(int argc, char **argv) {
    if (argc < 3)
        return 2;
    char path[4096];
    snprintf(path, sizeof path, "%s/f", argv[1]);
    int fd = open(path, O_CREAT | O_RDWR, 0644);
    if (fd < 0)
        return 3;
    for (int i = 0; i < atoi(argv[2]); i++) {
        char block[64], back[64];
        memset(block, 'a' + i % 26, sizeof block);
        ssize_t w = pwrite(fd, block, sizeof block, 64L * i);
        printf("write %d -> %zd %s\n", i, w, ename(w < 0 ? errno : 0));
        int s = fsync(fd);
        printf("fsync %d -> %d %s\n", i, s, ename(s < 0 ? errno : 0));
        ssize_t r = pread(fd, back, sizeof back, 64L * i);
        const char *same = w == 64 && r == 64 && !memcmp(block, back, 64) ? "same" : "differs";
        printf("read %d -> %zd %s %s\n", i, r, ename(r < 0 ? errno : 0), r < 0 ? "" : same);
    }
    return 0;
}
