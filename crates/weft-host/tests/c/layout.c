// What a process under the shim can learn of the machine through its limits and its
// mappings' addresses, printed for tests/layout.rs: both must be the same on every machine.
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>

static void limit(const char *name, int resource) {
    struct rlimit r;
    getrlimit(resource, &r);
    printf("%s: %lld %lld\n", name, (long long)r.rlim_cur, (long long)r.rlim_max);
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
    return 0;
}
