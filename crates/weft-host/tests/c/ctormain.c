/* Exec'd under the shim (through /bin/sh), with ctorlib's constructor allocating first.
 * usage: ctormain */
#include <stdio.h>

extern int ctorlib_ready;

int main(void) {
    printf("constructor allocated %d; main ran\n", ctorlib_ready);
    return 0;
}
