/* A node that receives a TCP stream by splicing it, 5 bytes at a time, into a pipe it reads
 * (node 0, listening on port 7000), and a node that sends it 14 bytes and closes (argv: id,
 * node 0's address). Each splice answers what it moved: 5, 5, 4, then 0 at end-of-file. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int id = atoi(argv[1]);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(7000)};
    inet_pton(AF_INET, argv[2], &a.sin_addr);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (id == 0) {
        int one = 1;
        setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        a.sin_addr.s_addr = 0;
        bind(s, (void *)&a, sizeof a);
        listen(s, 4);
        int c = accept(s, 0, 0);
        int p[2];
        pipe(p);
        ssize_t total = 0, n;
        while ((n = splice(c, NULL, p[1], NULL, 5, 0)) > 0) {
            total += n;
            char buf[16] = {0};
            read(p[0], buf, n);
            printf("got %zd [%s]\n", n, buf);
        }
        printf("end %zd total %zd\n", n, total);
    } else {
        usleep(10000);
        if (connect(s, (void *)&a, sizeof a) != 0) {
            perror("connect");
            return 1;
        }
        write(s, "hello over tcp", 14);
        close(s);
    }
    return 0;
}
