/* Leaks real CPU time (ns) into its output through a path the shim does not virtualise
 * (/proc/self/schedstat), so two runs of one seed differ: the determinism check must notice. */
#include <stdio.h>

int main(void) {
    char buf[64] = "";
    FILE *f = fopen("/proc/self/schedstat", "r");
    if (f && fgets(buf, sizeof buf, f)) printf("cpu time %s", buf);
    return 0;
}
