/* Ends badly on purpose: "segv" dereferences NULL, "exit3" exits with status 3, "spin"
 * busy-waits on the clock until the second turns (it ends: calls cost modelled time), "block" waits forever on a socket, "uring" sets up
 * an io_uring and "aio" a Linux AIO context (the simulated machine has neither: ENOSYS), "raw"
 * opens a raw ICMP socket and "packet" a link-layer one (not simulated). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/if_ether.h>
#include <arpa/inet.h>
#include <time.h>

int main(int argc, char **argv) {
    const char *m = argc > 1 ? argv[1] : "";
    printf("mode %s\n", m);
    if (!strcmp(m, "segv")) {
        volatile int *p = NULL;
        return *p;
    }
    if (!strcmp(m, "exit3")) return 3;
    if (!strcmp(m, "spin")) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        do clock_gettime(CLOCK_MONOTONIC, &b); while (b.tv_sec == a.tv_sec);
        return 0;
    }
    if (!strcmp(m, "aio")) {
        unsigned long ctx = 0;
        long r = syscall(SYS_io_setup, 8, &ctx);
        printf("io_setup %ld ENOSYS %d\n", r, errno == ENOSYS);
        return 0;
    }
    if (!strcmp(m, "uring")) {
        char params[120] = {0};
        long r = syscall(SYS_io_uring_setup, 4, params);
        printf("io_uring_setup %ld ENOSYS %d\n", r, errno == ENOSYS);
        return 0;
    }
    if (!strcmp(m, "raw")) return socket(AF_INET, SOCK_RAW, IPPROTO_ICMP) < 0;
    if (!strcmp(m, "packet")) return socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL)) < 0;
    if (!strcmp(m, "block")) {
        int fd = socket(AF_INET, SOCK_DGRAM, 0);
        char c;
        recv(fd, &c, 1, 0);
    }
    return 0;
}
