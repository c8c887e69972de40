/* Writes, syncs, renames, reads back and removes a file under DIR, printing what it sees.
 * usage: files DIR */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    char a[512], b[512], buf[32];
    snprintf(a, sizeof a, "%s/weft-files-a", argv[1]);
    snprintf(b, sizeof b, "%s/weft-files-b", argv[1]);
    int fd = open(a, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    printf("write %zd\n", write(fd, "hello", 5));
    printf("pwrite %zd\n", pwrite(fd, "J", 1, 0));
    printf("fsync %d\n", fsync(fd));
    printf("ftruncate %d\n", ftruncate(fd, 4));
    close(fd);
    printf("rename %d\n", rename(a, b));
    fd = open(b, O_RDONLY);
    ssize_t n = read(fd, buf, sizeof buf);
    printf("read %zd '%.*s'\n", n, (int)n, buf);
    close(fd);
    printf("unlink %d\n", unlink(b));
    printf("open missing %d\n", open(b, O_RDONLY));
    return 0;
}
