/* What a process learns of the machine it runs on: its name, kernel, processors, memory and
 * the system files programs tune themselves by. Under the shim every line is the simulated
 * machine's, the same on every real one (tests/machine.rs). Through libc's entry points, then
 * glibc's own callers and syscall(2) (the escape trap's answers). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static void file(const char *path) {
    char line[256] = "";
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("%s: cannot open\n", path);
        return;
    }
    if (!fgets(line, sizeof line, f)) line[0] = 0;
    fclose(f);
    line[strcspn(line, "\n")] = 0;
    printf("%s: %s\n", path, line);
}

/* How many lines of `path` start with `prefix`, and the first of them. */
static void count(const char *path, const char *prefix) {
    char line[2048], first[2048] = "";
    int n = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("%s: cannot open\n", path);
        return;
    }
    while (fgets(line, sizeof line, f))
        if (strncmp(line, prefix, strlen(prefix)) == 0 && n++ == 0)
            snprintf(first, sizeof first, "%s", line);
    fclose(f);
    first[strcspn(first, "\n")] = 0;
    printf("%s: %d x %s\n", path, n, first);
}

int main(void) {
    struct utsname u;
    uname(&u);
    printf("uname: %s %s %s %s %s\n", u.sysname, u.nodename, u.release, u.version, u.machine);
    char host[64];
    gethostname(host, sizeof host);
    printf("hostname: %s\n", host);
    struct utsname raw;
    syscall(SYS_uname, &raw);
    printf("raw uname: %s %s\n", raw.nodename, raw.release);
    printf("cpus: %ld %ld %d %d\n", sysconf(_SC_NPROCESSORS_ONLN), sysconf(_SC_NPROCESSORS_CONF),
           get_nprocs(), get_nprocs_conf());
    cpu_set_t set;
    CPU_ZERO(&set);
    sched_getaffinity(0, sizeof set, &set);
    printf("affinity: %d\n", CPU_COUNT(&set));
    CPU_ZERO(&set);
    long n = syscall(SYS_sched_getaffinity, 0, sizeof set, &set);
    printf("raw affinity: %ld %d\n", n, CPU_COUNT(&set));
    printf("pages: %ld %ld\n", sysconf(_SC_PHYS_PAGES), get_phys_pages());
    struct sysinfo si;
    sysinfo(&si);
    printf("sysinfo: ram %lu free %lu swap %lu uptime %ld unit %u\n", si.totalram, si.freeram,
           si.totalswap, si.uptime, si.mem_unit);
    const char *files[] = {"/proc/meminfo", "/proc/uptime", "/proc/loadavg", "/proc/version",
                           "/proc/sys/kernel/hostname", "/proc/sys/kernel/osrelease",
                           "/proc/sys/kernel/pid_max",
                           "/proc/sys/net/core/somaxconn", "/proc/sys/vm/overcommit_memory",
                           "/sys/kernel/mm/transparent_hugepage/enabled",
                           "/sys/devices/system/cpu/online", "/proc/self/cgroup"};
    for (unsigned i = 0; i < sizeof files / sizeof *files; i++) file(files[i]);
    count("/proc/cpuinfo", "processor");
    count("/proc/cpuinfo", "flags");
    count("/proc/stat", "cpu");
    count("/proc/stat", "btime");
    file("/proc/sys/kernel/random/boot_id");
    file("/etc/machine-id");
    file("/proc/sys/kernel/random/entropy_avail");
    char a[64] = "", b[64] = "";
    for (int i = 0; i < 2; i++) {
        FILE *r = fopen("/proc/sys/kernel/random/uuid", "r");
        if (r && !fgets(i ? b : a, sizeof a, r)) a[0] = 0;
        if (r) fclose(r);
    }
    printf("uuid: version %c variant %c, fresh %d, length %zu\n", a[14], a[19], strcmp(a, b) != 0,
           strlen(a));
    /* The clock found on libc's own handle (Python's ctypes.CDLL("libc.so.6") does this):
     * glibc's time and gettimeofday are IFUNCs answering the vDSO's functions. */
    void *libc = dlopen("libc.so.6", RTLD_NOW);
    time_t (*t)(time_t *) = (time_t (*)(time_t *))dlsym(libc, "time");
    int (*g)(struct timeval *, void *) = (int (*)(struct timeval *, void *))dlsym(libc, "gettimeofday");
    struct timeval tv;
    g(&tv, NULL);
    printf("clock on libc's handle: %ld %ld\n", (long)t(NULL), (long)tv.tv_sec);
    return 0;
}
