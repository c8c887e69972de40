/* getrandom without the libc wrapper. `rawrandom` makes it with its own syscall instruction,
 * which escapes every hook: under the shim the run must end as Unsupported naming getrandom.
 * `rawrandom fn` makes it through syscall(2), as the Rust getrandom crate 0.2 does: the shim
 * serves that number from the process's random stream, like getrandom(). */
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long raw_getrandom(void *buf, unsigned long len) {
    long r;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "a"((long)SYS_getrandom), "D"(buf), "S"(len), "d"(0L)
                     : "rcx", "r11", "memory");
    return r;
}

int main(int argc, char **argv) {
    unsigned char b[8];
    if (argc > 1 && !strcmp(argv[1], "fn")) {
        long n = syscall(SYS_getrandom, b, sizeof b, 0);
        printf("syscall(2) getrandom returned %ld: %02x%02x%02x%02x\n", n, b[0], b[1], b[2], b[3]);
        return 0;
    }
    printf("raw getrandom returned %ld\n", raw_getrandom(b, sizeof b));
    return 0;
}
