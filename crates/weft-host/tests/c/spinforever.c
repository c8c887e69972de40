/* A thread that spins forever without a single call: weft must report it as a deadlock
 * that names the spinning thread and where it spins, within seconds of real time.
 * usage: spinforever */
#include <stdio.h>

static volatile unsigned long counter;

__attribute__((noinline)) static void spin_here(void) {
    for (;;) counter++;
}

int main(void) {
    printf("about to spin\n");
    fflush(stdout);
    spin_here();
    return 0;
}
