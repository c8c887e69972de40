/* A daemon's privilege drop under weft's user namespace: initgroups, setgid, a temporary
 * seteuid and back, setuid, the ids after it (also across exec), and what an unprivileged
 * process may no longer do. usage: creds [after-exec] */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

static void show(const char *when) {
    uid_t r, e, s;
    gid_t gr, ge, gs;
    getresuid(&r, &e, &s);
    getresgid(&gr, &ge, &gs);
    printf("%s: uid %u %u %u gid %u %u %u groups %d\n", when, r, e, s, gr, ge, gs,
           getgroups(0, NULL));
}

static const char *err(int r) { return r == 0 ? "ok" : strerror(errno); }

int main(int argc, char **argv) {
    struct passwd *pw = getpwnam("nobody");
    if (!pw) return 2;
    if (argc > 1 && !strcmp(argv[1], "after-exec")) {
        show("after exec");
        printf("setuid(0) after exec: %s\n", err(setuid(0)));
        return 0;
    }
    setvbuf(stdout, NULL, _IONBF, 0);
    show("start");
    /* libcap-ng (setpriv) names the process by its pid, the one getpid answers. */
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, getpid()};
    struct __user_cap_data_struct data[2];
    printf("capget of own pid: %s\n", err(syscall(SYS_capget, &hdr, data)));
    int fd = memfd_create("owned", 0); /* a file of its own, left nowhere */
    printf("fchown to nobody as root: %s\n", err(fchown(fd, pw->pw_uid, pw->pw_gid)));
    printf("initgroups: %s\n", err(initgroups("nobody", pw->pw_gid)));
    gid_t list[64];
    int n = getgroups(64, list);
    printf("groups %d, nobody's group among them %d\n", n,
           n > 0 && list[0] == pw->pw_gid);
    printf("setgid: %s\n", err(setgid(pw->pw_gid)));
    printf("seteuid: %s\n", err(seteuid(pw->pw_uid)));
    show("effective nobody");
    printf("setgroups unprivileged: %s\n", err(setgroups(0, NULL)));
    printf("seteuid back: %s\n", err(seteuid(0)));
    printf("setuid: %s\n", err(setuid(pw->pw_uid)));
    show("dropped");
    printf("setuid(0): %s\n", err(setuid(0)));
    printf("setresuid to own: %s\n", err(setresuid(-1, pw->pw_uid, -1)));
    printf("fchown to root unprivileged: %s\n", err(fchown(fd, 0, 0)));
    execl("/proc/self/exe", argv[0], "after-exec", (char *)NULL);
    printf("exec failed: %s\n", strerror(errno));
    return 1;
}
