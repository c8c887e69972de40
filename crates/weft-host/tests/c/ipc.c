/* Shared memory a node makes for itself: a System V segment (created exclusively, never
 * removed) and a POSIX one in /dev/shm (the same), and whether a file the machine has in
 * /dev/shm is visible. Run twice, each run must create both afresh. usage: ipc HOSTFILE */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    int id = shmget(0x5745, 4096, IPC_CREAT | IPC_EXCL | 0600);
    printf("System V segment: %s, id %d\n", id >= 0 ? "created" : strerror(errno), id);
    int fd = shm_open("/weft-ipc-probe", O_CREAT | O_EXCL | O_RDWR, 0600);
    printf("POSIX shared memory: %s\n", fd >= 0 ? "created" : strerror(errno));
    printf("the machine's /dev/shm file visible: %d\n", access(argv[1], F_OK) == 0);
    return 0;
}
