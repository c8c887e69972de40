/* A client that writes a set history on stdout (WEFT-HISTORY lines): adds 1..5, sleeping
 * 10 ms between events, the fourth add ending `info`, then a final read. argv[1] = "good"
 * reads every element back; "lose" leaves out acknowledged element 2; "bad" prints a
 * completion that was never invoked. */
#include <stdio.h>
#include <string.h>
#include <time.h>

static void pause_ms(long ms) {
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

static void event(const char *type, const char *f, const char *value) {
    printf("WEFT-HISTORY {\"type\":\"%s\",\"process\":0,\"f\":\"%s\",\"value\":%s}\n", type, f,
           value);
    fflush(stdout);
    pause_ms(10);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "good";
    if (strcmp(mode, "bad") == 0) {
        event("ok", "add", "1");
        return 0;
    }
    char v[16];
    for (int i = 1; i <= 5; i++) {
        snprintf(v, sizeof v, "%d", i);
        event("invoke", "add", v);
        event(i == 4 ? "info" : "ok", "add", v);
    }
    event("invoke", "read", "null");
    event("ok", "read", strcmp(mode, "lose") == 0 ? "[1,3,5]" : "[1,2,3,5]");
    return 0;
}
