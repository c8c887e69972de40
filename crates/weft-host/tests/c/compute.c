/* A long computation without a single call (about 3.5 s of CPU on the machine that set the
 * count), then one line: a slow thread, not a spinning one. usage: compute [ITERATIONS] */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 3400000000UL;
    unsigned long h = 1469598103934665603UL;
    for (unsigned long i = 0; i < n; i++) h = (h ^ i) * 1099511628211UL;
    printf("computed %lu\n", h & 0xff);
    return 0;
}
