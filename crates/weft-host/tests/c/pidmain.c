/* Linked with preloadlib.so, whose constructor asks getpid before any hook has run (a
 * library is initialised before the preloaded shim's constructor). usage: pidmain */
#include <stdio.h>
#include <unistd.h>

int main(void) {
    printf("main: pid %d\n", (int)getpid());
    return 0;
}
