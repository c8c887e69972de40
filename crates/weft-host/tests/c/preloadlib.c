/* A library a user preloads (a group's `env = { LD_PRELOAD = … }`, or `LD_PRELOAD=… exec prog`
 * in a shell): its constructor says so, with the pid it sees, which is the virtual one only
 * while the shim is loaded too and first (so its hooks win). */
#include <stdio.h>
#include <unistd.h>

__attribute__((constructor)) static void announce(void) {
    printf("preloaded library loaded, pid %d\n", (int)getpid());
    fflush(stdout);
}
