/* diskrefuse: one call on a data directory (argv[1]) that weft does not model, chosen by
 * argv[2]; under weft the run must end as unsupported, naming the call. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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
    if (!strcmp(what, "mmap"))
        mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    else if (!strcmp(what, "odirect"))
        open(path, O_RDONLY | O_DIRECT);
    else if (!strcmp(what, "symlink"))
        symlink(path, other);
    else if (!strcmp(what, "fallocate"))
        fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096);
    printf("not refused: %s\n", what);
    return 0;
}
