/* Files of other users under weft's user namespace. usage: owners FILE, FILE owned by a user
 * other than weft's, readable by its owner only: reads it, chowns a file of its own to that
 * user, drops to that user and reads the kernel's (not the shim's) ids of it in /proc, and
 * whether it still dies with weft (the kernel clears the parent-death signal at a drop). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* The real uid on the "Uid:" line of /proc/self/status. */
static const char *kernel_uid(void) {
    static char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "Uid:\t", 5)) {
            line[5 + strcspn(line + 5, "\t\n")] = 0;
            return line + 5;
        }
    }
    return "unknown";
}

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    setvbuf(stdout, NULL, _IONBF, 0);
    struct stat theirs;
    if (stat(argv[1], &theirs) != 0) return 2;
    char buf[64] = {0};
    int fd = open(argv[1], O_RDONLY);
    if (fd >= 0 && read(fd, buf, sizeof buf - 1) > 0) {
        buf[strcspn(buf, "\n")] = 0;
        printf("read their file: %s\n", buf);
    } else {
        printf("read their file: %s\n", strerror(errno));
    }
    int mine = open("mine", O_CREAT | O_WRONLY, 0644);
    int r = fchown(mine, theirs.st_uid, theirs.st_gid);
    struct stat st;
    fstat(mine, &st);
    printf("chown: %s, owner now %u:%u\n", r == 0 ? "ok" : strerror(errno), st.st_uid, st.st_gid);
    r = setgid(theirs.st_gid) || setuid(theirs.st_uid);
    printf("drop: %s, the kernel's uid %s\n", r == 0 ? "ok" : strerror(errno), kernel_uid());
    int sig = 0;
    prctl(PR_GET_PDEATHSIG, &sig);
    printf("parent-death signal after the drop: %d\n", sig);
    return 0;
}
