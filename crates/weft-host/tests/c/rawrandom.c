/* Escapes the hooks: getrandom through syscall(2), as the Rust getrandom crate 0.2 does.
 * Under the shim this must end the run as Unsupported naming getrandom. */
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void) {
    unsigned char b[8];
    long n = syscall(SYS_getrandom, b, sizeof b, 0);
    printf("raw getrandom returned %ld\n", n);
    return 0;
}
