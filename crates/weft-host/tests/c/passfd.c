/* Descriptors passed over a socketpair (SCM_RIGHTS) from a parent to its child: a pipe's write
 * end, a socketpair end and a file. The child writes to the first two and reads the third; the
 * parent, having closed its own copies, reads what the child wrote and then EOF (the passed
 * descriptor was the last writer). A second batch read with a plain read() is discarded, as
 * Linux does: the parent sees that pipe's EOF at once.
 * usage: passfd [named]: with "named", over a named AF_UNIX socket the child accepts on (as
 * Python's multiprocessing forkserver gets its pipes), the second batch read by a recvmsg
 * without a control buffer (which discards it too). */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/un.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int send_fds(int s, const int *fds, int n, char tag) {
    char buf[CMSG_SPACE(3 * sizeof(int))];
    memset(buf, 0, sizeof buf);
    struct iovec iov = {&tag, 1};
    struct msghdr m = {0};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = buf;
    m.msg_controllen = CMSG_SPACE(n * sizeof(int));
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(n * sizeof(int));
    memcpy(CMSG_DATA(c), fds, n * sizeof(int));
    return (int)sendmsg(s, &m, 0);
}

static int named;

/* A connected pair through a named socket in the working directory: the parent's end in
 * *a, and the child's, after it forked and accepted, in *b (the parent gets -1 there). */
static pid_t connect_named(int *a, int *b) {
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    strcpy(addr.sun_path, "passfd.sock");
    unlink(addr.sun_path);
    int l = socket(AF_UNIX, SOCK_STREAM, 0);
    if (bind(l, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(l, 1) != 0) exit(3);
    pid_t pid = fork();
    if (pid == 0) {
        *b = accept(l, NULL, NULL);
        return 0;
    }
    close(l);
    *a = socket(AF_UNIX, SOCK_STREAM, 0);
    if (connect(*a, (struct sockaddr *)&addr, sizeof addr) != 0) exit(4);
    *b = -1;
    return pid;
}

static void discard_next(int s, char *tag) {
    if (!named) {
        read(s, tag, 1); /* the second batch, by plain read: its descriptor is discarded */
        return;
    }
    struct iovec iov = {tag, 1};
    struct msghdr m = {0};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    recvmsg(s, &m, 0); /* no control buffer: discarded as well */
}

static int child(int s) {
    char tag, buf[CMSG_SPACE(3 * sizeof(int))];
    struct iovec iov = {&tag, 1};
    struct msghdr m = {0};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = buf;
    m.msg_controllen = sizeof buf;
    if (recvmsg(s, &m, 0) != 1) return 1;
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    if (!c || c->cmsg_type != SCM_RIGHTS) return 2;
    int fds[3];
    memcpy(fds, CMSG_DATA(c), sizeof fds);
    printf("child got %zu descriptors with '%c'\n", (c->cmsg_len - CMSG_LEN(0)) / sizeof(int), tag);
    printf("they are close-on-exec: %d\n", (fcntl(fds[0], F_GETFD) & FD_CLOEXEC) != 0);
    write(fds[0], "through the passed pipe\n", 24);
    write(fds[1], "through the passed socket\n", 26);
    char text[64] = {0};
    ssize_t n = read(fds[2], text, sizeof text - 1);
    printf("child read the passed file: %.*s", (int)n, text);
    close(fds[0]);
    close(fds[1]);
    close(fds[2]);
    discard_next(s, &tag);
    printf("child read '%c' without taking its descriptor\n", tag);
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    named = argc > 1 && !strcmp(argv[1], "named");
    int sp[2] = {-1, -1}, q[2], p[2], p2[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, q);
    pipe(p);
    pipe(p2);
    FILE *f = tmpfile();
    fputs("file contents\n", f);
    fflush(f);
    int file = dup(fileno(f));
    lseek(file, 0, SEEK_SET);
    pid_t pid;
    if (named) {
        pid = connect_named(&sp[0], &sp[1]);
    } else {
        socketpair(AF_UNIX, SOCK_STREAM, 0, sp);
        pid = fork();
    }
    if (pid == 0) {
        close(sp[0]);
        close(p[0]);
        close(p[1]);
        close(q[0]);
        close(p2[1]);
        return child(sp[1]);
    }
    if (sp[1] >= 0) close(sp[1]);
    int fds[3] = {p[1], q[0], file};
    send_fds(sp[0], fds, 3, 'a');
    close(p[1]);
    close(q[0]);
    close(file);
    char buf[64];
    ssize_t n = read(p[0], buf, sizeof buf);
    printf("parent read from the pipe: %.*s", (int)n, buf);
    printf("then the pipe's end: %zd\n", read(p[0], buf, sizeof buf));
    n = read(q[1], buf, sizeof buf);
    printf("parent read from the socket: %.*s", (int)n, buf);
    send_fds(sp[0], &p2[1], 1, 'b');
    close(p2[1]);
    printf("the discarded pipe's end: %zd\n", read(p2[0], buf, sizeof buf));
    int st;
    waitpid(pid, &st, 0);
    printf("child exit %d\n", WEXITSTATUS(st));
    return 0;
}
