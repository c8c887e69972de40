/* gdbm-acks: a crash-consistency workload for Debian's GDBM (libgdbm).
 *
 * It opens DB (creating it) as a writer with GDBM_SYNC, reads every key, then stores --adds
 * distinct keys with gdbm_store, --interval-ms apart, and reads everything again. With
 * GDBM_SYNC, gdbm_store returns after the update is written and fsync'ed (the commit point GDBM
 * documents: "synchronize all database operations to disk"), so an `add` is acknowledged
 * (`ok`) only after gdbm_store returned 0. Every operation is a weft history line
 * (`WEFT-HISTORY {json}`, Jepsen's set model). Keys are unique across incarnations: the
 * process number (virtual monotonic milliseconds at start) times 1000 plus the add's number.
 * A database that does not open or read after a crash prints a line with CORRUPT (use
 * --forbid CORRUPT).
 *
 *   gdbm-acks DB [--adds N] [--interval-ms MS] [--commit store|sync] [--mmap yes|no]
 *
 * --commit store (the default) acknowledges after gdbm_store alone; --commit sync calls
 * gdbm_sync (an fsync of the database file) after each store and acknowledges after it.
 *
 * --mmap no (the default) opens with GDBM_NOMMAP: GDBM then reads and writes with
 * pread/pwrite instead of a shared writable mapping, which weft refuses by name.
 *
 * Build: cc -O1 -o programs/storage/gdbm-acks programs/storage/gdbm-acks.c -lgdbm
 */
#include <gdbm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long process;

static void history(const char *type, const char *f, const char *value) {
    printf("WEFT-HISTORY {\"type\":\"%s\",\"process\":%ld,\"f\":\"%s\",\"value\":%s}\n", type,
           process, f, value);
    fflush(stdout);
}

static void corrupt(const char *what) {
    printf("CORRUPT or failed: %s: %s\n", what, gdbm_strerror(gdbm_errno));
    fflush(stdout);
    exit(3);
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The read operation: every key (decimal text), as a JSON array. */
static void read_all(GDBM_FILE db) {
    history("invoke", "read", "null");
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    out[len++] = '[';
    datum key = gdbm_firstkey(db);
    while (key.dptr) {
        if (len + key.dsize + 4 > cap) out = realloc(out, cap *= 2);
        if (len > 1) out[len++] = ',';
        memcpy(out + len, key.dptr, key.dsize);
        len += key.dsize;
        datum next = gdbm_nextkey(db, key);
        free(key.dptr);
        key = next;
    }
    if (gdbm_errno != GDBM_NO_ERROR && gdbm_errno != GDBM_ITEM_NOT_FOUND) corrupt("read");
    out[len++] = ']';
    out[len] = 0;
    history("ok", "read", out);
    free(out);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: gdbm-acks DB [--adds N] [--interval-ms MS] [--commit store|sync] "
                        "[--mmap yes|no]\n");
        return 2;
    }
    long adds = 20, interval = 10;
    int mmap = 0, sync_each = 0;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--adds")) adds = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--interval-ms")) interval = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--mmap")) mmap = !strcmp(argv[i + 1], "yes");
        else if (!strcmp(argv[i], "--commit")) sync_each = !strcmp(argv[i + 1], "sync");
        else {
            fprintf(stderr, "gdbm-acks: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    process = (long)(now.tv_sec % 100000) * 1000 + now.tv_nsec / 1000000;

    int flags = GDBM_WRCREAT | GDBM_SYNC | (mmap ? 0 : GDBM_NOMMAP);
    GDBM_FILE db = gdbm_open(argv[1], 0, flags, 0644, NULL);
    if (!db) corrupt("open");
    read_all(db);
    for (long k = 1; k <= adds; k++) {
        char id[32];
        snprintf(id, sizeof id, "%ld", process * 1000 + k);
        history("invoke", "add", id);
        datum key = {id, (int)strlen(id)}, value = {"1", 1};
        if (gdbm_store(db, key, value, GDBM_REPLACE) != 0 || (sync_each && gdbm_sync(db) != 0)) {
            history("info", "add", id);
            corrupt("store");
        }
        history("ok", "add", id);
        sleep_ms(interval);
    }
    read_all(db);
    if (gdbm_close(db) != 0) corrupt("close");
    return 0;
}
