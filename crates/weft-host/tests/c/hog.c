/* Allocates and touches memory without end (like a leak), or with `cpu` spins without end:
 * its limits must end it, as `resource_limit`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    printf("hogging\n");
    fflush(stdout);
    if (argc > 1 && strcmp(argv[1], "cpu") == 0) {
        volatile unsigned long x = 0;
        for (;;) x++;
    }
    for (;;) {
        char *p = malloc(1 << 20);
        memset(p, 1, 1 << 20); /* a NULL from a failed malloc faults here */
    }
}
