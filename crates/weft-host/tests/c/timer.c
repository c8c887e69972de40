/* Arms a real-time timer, which the shim cannot yet simulate. */
#include <stdio.h>
#include <unistd.h>

int main(void) {
    alarm(1);
    printf("armed\n");
    return 0;
}
