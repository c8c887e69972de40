/* diskcwd: working in a directory of argv[1] (`mkdir -p` and daemons chdir into their data
 * directories): chdir into a subdirectory, files made and read by relative paths, a path
 * leading back out (`../f`), a listing of ".", chdir back up, and the errors of chdir into a
 * missing directory and into a file. Natively on a real directory and under weft on a data
 * directory the output must be identical. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void say(const char *what, int r) {
    printf("%s -> %d%s\n", what, r, r < 0 ? (errno == ENOENT ? " ENOENT" : errno == ENOTDIR ? " ENOTDIR" : " other") : "");
    errno = 0;
}

int main(int argc, char **argv) {
    if (argc < 2 || chdir(argv[1]) != 0)
        return 2;
    int fd = open("f", O_CREAT | O_WRONLY, 0644);
    say("write f", write(fd, "abcd", 4));
    close(fd);
    say("mkdir sub", mkdir("sub", 0755));
    say("chdir sub", chdir("sub"));
    char cwd[4096];
    printf("cwd ends with /sub: %d\n", getcwd(cwd, sizeof cwd) && strlen(cwd) > 4 &&
                                            !strcmp(cwd + strlen(cwd) - 4, "/sub"));
    fd = open("x", O_CREAT | O_WRONLY, 0644);
    say("write x", write(fd, "hello", 5));
    close(fd);
    char buf[8] = {0};
    fd = open("../f", O_RDONLY);
    say("read ../f", read(fd, buf, sizeof buf - 1));
    printf("  '%s'\n", buf);
    close(fd);
    DIR *d = opendir(".");
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.')
            printf("  entry %s\n", e->d_name);
    if (d)
        closedir(d);
    say("chdir ..", chdir(".."));
    struct stat st;
    say("stat sub/x", stat("sub/x", &st));
    printf("  size %ld\n", (long)st.st_size);
    say("chdir missing", chdir("missing"));
    say("chdir into a file", chdir("f"));
    return 0;
}
