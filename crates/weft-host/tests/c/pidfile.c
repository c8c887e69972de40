/* A daemon's pid-file check, as Kea and chronyd do it: at start, a pid file in DIR naming a
 * live process (kill(pid, 0) succeeds) means "already running" (exit 1); otherwise it writes
 * its own pid there, durably, and runs for 4 s. After a crash and restart the file names the
 * crashed incarnation, which must not be alive.
 * usage: pidfile DIR */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    char path[4096];
    snprintf(path, sizeof path, "%s/pid", argc > 1 ? argv[1] : ".");
    FILE *f = fopen(path, "r");
    int old = 0;
    if (f) {
        if (fscanf(f, "%d", &old) != 1) old = 0;
        fclose(f);
        printf("found pid file %d\n", old);
    }
    if (old > 0 && (kill(old, 0) == 0 || errno == EPERM)) {
        printf("already running as %d\n", old);
        return 1;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char line[32];
    int n = snprintf(line, sizeof line, "%d\n", (int)getpid());
    if (fd < 0 || write(fd, line, n) != n || fsync(fd) != 0) {
        perror("pid file");
        return 2;
    }
    close(fd);
    int dir = open(argc > 1 ? argv[1] : ".", O_RDONLY | O_DIRECTORY);
    fsync(dir);
    close(dir);
    printf("up as %d\n", (int)getpid());
    for (int i = 0; i < 40; i++) usleep(100000);
    return 0;
}
