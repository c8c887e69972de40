/* The pid a real AF_UNIX socket reports for its peer, as SO_PEERCRED and as SCM_CREDENTIALS
 * (libqb authenticates its clients so), is the pid getpid and fork name, natively and under
 * weft (where it would otherwise be the kernel's, different in every run). */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int sv[2];
    socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv); /* a kind weft leaves real */
    struct ucred me;
    socklen_t len = sizeof me;
    getsockopt(sv[0], SOL_SOCKET, SO_PEERCRED, &me, &len);
    printf("SO_PEERCRED names this process: %d\n", me.pid == getpid());
    int on = 1;
    setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
    pid_t child = fork();
    if (child == 0) {
        write(sv[1], "x", 1);
        return 0;
    }
    char byte;
    union { char buf[CMSG_SPACE(sizeof(struct ucred))]; struct cmsghdr align; } u;
    struct iovec iov = {&byte, 1};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                       .msg_controllen = sizeof u.buf};
    recvmsg(sv[0], &m, 0);
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    struct ucred from = {0, 0, 0};
    if (c && c->cmsg_type == SCM_CREDENTIALS) memcpy(&from, CMSG_DATA(c), sizeof from);
    printf("SCM_CREDENTIALS name the child: %d\n", from.pid == child);
    waitpid(child, NULL, 0);
    return 0;
}
