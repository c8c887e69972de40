/* Arms a CPU-time timer, which the shim cannot simulate (virtual time has no CPU time). */
#include <stdio.h>
#include <sys/time.h>

int main(void) {
    struct itimerval v = {{0, 0}, {1, 0}};
    setitimer(ITIMER_PROF, &v, NULL);
    printf("armed\n");
    return 0;
}
