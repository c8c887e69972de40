/* A library whose constructor allocates: linked into ctormain, it is initialised before the
 * shim (a preloaded library is initialised after the program's own dependencies), so its
 * malloc draws glibc's tcache key before the shim has installed its SIGSYS handler. */
#include <stdlib.h>

int ctorlib_ready;

__attribute__((constructor)) static void allocate(void) {
    char *p = malloc(64);
    ctorlib_ready = p != NULL;
    free(p);
}
