/* /proc names the node's processes by the pids getpid and fork answer: a process's directory
 * and files exist while it runs or lies unwaited, its stat tells its pid, parent and state, a
 * pid no process has is ENOENT, and a listing of /proc holds the processes. Printed so that a
 * native run and a run under the shim compare; the last line, "listed N", counts the listing's
 * processes (the machine's under a native run, the node's under weft). */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int exists(pid_t pid) {
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%d", pid);
    if (stat(path, &st) == 0) return S_ISDIR(st.st_mode);
    return errno == ENOENT ? 0 : -errno;
}

/* Its stat's state, and whether its pid and parent fields are `pid` and `parent`. */
static char state_of(pid_t pid, pid_t parent, int *ids_ok) {
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    *ids_ok = 0;
    if (!f) return '-';
    char *got = fgets(line, sizeof line, f);
    fclose(f);
    char *close = got ? strrchr(line, ')') : NULL;
    if (!close) return '?';
    char state;
    int ppid;
    sscanf(close + 2, "%c %d", &state, &ppid);
    *ids_ok = atoi(line) == pid && ppid == parent;
    return state;
}

static int listed_in(const char *dir, pid_t a, pid_t b, int *count) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    *count = 0;
    while ((e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0])) continue;
        ++*count;
        pid_t pid = atoi(e->d_name);
        found += (pid == a) + (pid == b);
    }
    closedir(d);
    return found;
}

static int listed(pid_t a, pid_t b, int *count) {
    return listed_in("/proc", a, b, count);
}

/* The child as seen from a working directory of /proc, as sysvinit's pidof looks. */
static void relative(pid_t child) {
    char path[64];
    int pid = 0, count;
    if (chdir("/proc") != 0) return;
    snprintf(path, sizeof path, "%d/stat", child);
    FILE *f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "%d", &pid) != 1) pid = 0;
        fclose(f);
    }
    printf("from /proc: stat %d, listed %d\n", pid == child, listed_in(".", child, -1, &count));
    if (chdir("/") != 0) return;
}

int main(int argc, char **argv) {
    (void)argc;
    setvbuf(stdout, NULL, _IOLBF, 0);
    pid_t me = getpid();
    int ok, count;
    pid_t child = fork();
    if (child == 0) {
        pause();
        _exit(0);
    }
    printf("own directory %d, child's %d\n", exists(me), exists(child));
    char state = state_of(child, me, &ok);
    printf("child's stat: state %c, ids %d\n", state == 'R' ? 'S' : state, ok);
    printf("own stat: state %c, ids %d\n", state_of(me, getppid(), &ok), ok);
    char cmd[256] = {0};
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/cmdline", child);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(cmd, 1, sizeof cmd - 1, f) : 0;
    if (f) fclose(f);
    printf("child's cmdline is argv[0]: %d\n", n > 0 && strcmp(cmd, argv[0]) == 0);
    printf("listing holds both: %d\n", listed(me, child, &count));
    relative(child);
    printf("no such pid: %d\n", exists(4194305));
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    printf("killed and waited: %d\n", exists(child));
    pid_t quick = fork();
    if (quick == 0) _exit(0);
    while (state_of(quick, me, &ok) != 'Z') usleep(1000);
    printf("ended unwaited: Z, ids %d, listed %d\n", ok, listed(quick, -1, &count));
    waitpid(quick, NULL, 0);
    printf("waited: %d\n", exists(quick));
    listed(me, -1, &count);
    printf("listed %d\n", count);
    return 0;
}
