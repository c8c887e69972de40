// What a process under the shim can learn of the machine and of whoever started weft through
// its limits, its mappings' addresses, its descriptors, its signal dispositions and its umask,
// printed for tests/layout.rs: all must be the same on every machine and from every launcher.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>

static void limit(const char *name, int resource) {
    struct rlimit r;
    getrlimit(resource, &r);
    printf("%s: %lld %lld\n", name, (long long)r.rlim_cur, (long long)r.rlim_max);
}

/* The span of the preloaded shim's loadable segments (found as the object defining `fork`). */
static void *shim_base;
static unsigned long shim_extent;

static int measure(struct dl_phdr_info *info, size_t size, void *arg) {
    (void)size; (void)arg;
    if ((void *)info->dlpi_addr != shim_base) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type == PT_LOAD && p->p_vaddr + p->p_memsz > shim_extent)
            shim_extent = p->p_vaddr + p->p_memsz;
    }
    return 1;
}

static void *map(size_t len) {
    return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

int main(void) {
    limit("nofile", RLIMIT_NOFILE);
    limit("stack", RLIMIT_STACK);
    limit("core", RLIMIT_CORE);
    // An allocator's chunks: one, a second below it, the first freed and its gap reused by a
    // smaller one, a bigger one that does not fit there, then that one grown by mremap.
    char *a = map(1 << 20), *b = map(3 << 20);
    munmap(a, 1 << 20);
    char *c = map(4096), *d = map(2 << 20);
    char *e = mremap(d, 2 << 20, 8 << 20, MREMAP_MAYMOVE); // b above it: it moves
    printf("maps: %p %p %p %p %p\n", (void *)a, (void *)b, (void *)c, (void *)d, (void *)e);
    *e = 1;
    // A move that fails (nothing mapped there) leaves no reservation behind: the next map
    // takes the highest gap, where d was.
    void *bad = mremap((void *)4096, 4096, 1 << 20, MREMAP_MAYMOVE);
    printf("failed move: %d %d\n", bad == MAP_FAILED, errno);
    printf("after: %p\n", (void *)map(1 << 20));
    // Inherited: the lowest free descriptor, how many others are open (the shim's own region
    // descriptor, 1021, is not counted), SIGHUP's disposition, the umask.
    int open_fds = 0;
    for (int fd = 3; fd < 1021; fd++)
        open_fds += fcntl(fd, F_GETFD) >= 0;
    int first = dup(0);
    // The kernel's own record (the shim keeps a simulated one that sigaction would read).
    char line[256], ignored[64] = "?";
    FILE *status = fopen("/proc/self/status", "r");
    while (status && fgets(line, sizeof line, status))
        if (sscanf(line, "SigIgn: %63s", ignored) == 1)
            break;
    int hup = ignored[0] != '?' && (strtoull(ignored, NULL, 16) >> (SIGHUP - 1)) & 1;
    mode_t mask = umask(0);
    printf("inherited: fd %d, %d open, SIGHUP %s, umask %03o\n", first, open_fds,
           ignored[0] == '?' ? "unknown" : hup ? "ignored" : "default", (unsigned)mask);
    // The shim's extent is fixed (its build pads it), so the libraries the loader maps below
    // it land at the same addresses whatever the shim's code size.
    Dl_info info;
    if (dladdr(dlsym(RTLD_DEFAULT, "fork"), &info)) shim_base = info.dli_fbase;
    dl_iterate_phdr(measure, NULL);
    printf("shim extent: %#lx\n", shim_extent);
    return 0;
}
