/* leveldb-acks: a crash-consistency workload for Debian's LevelDB (libleveldb, its C API).
 *
 * It opens DB (creating it), reads every key, then puts --puts distinct keys, --interval-ms
 * apart, each with a --value-bytes value and the write option `sync` (--sync 1, the default:
 * LevelDB fdatasyncs its log before the put returns — the durability LevelDB documents for a
 * synchronous write), and reads everything again. An `add` is acknowledged (`ok`) only after
 * leveldb_put returned without an error. Every operation is a weft history line
 * (`WEFT-HISTORY {json}`, Jepsen's set model), as the other programs/storage workloads print.
 * Keys are unique across incarnations: the process number (virtual monotonic milliseconds at
 * start) times 1000 plus the put's number. A database that does not open or read after a crash
 * prints a line with CORRUPT (use --forbid CORRUPT).
 *
 *   leveldb-acks DB [--puts N] [--value-bytes B] [--interval-ms MS] [--sync 1|0]
 *                   [--write-buffer BYTES]
 *
 * --write-buffer (LevelDB's write_buffer_size, at least 64 KiB) is small by default, so the
 * puts fill more than one memtable: LevelDB writes level-0 table files and reads them back
 * through mmap (its table reads map SST files), and a restart's recovery writes one more.
 *
 * Build: cc -O1 -o programs/storage/leveldb-acks programs/storage/leveldb-acks.c -lleveldb
 */
#include <leveldb/c.h>
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

static void corrupt(const char *what, char *err) {
    printf("CORRUPT or failed: %s: %s\n", what, err ? err : "?");
    fflush(stdout);
    exit(3);
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The read operation: every key (decimal text), as a JSON array. */
static void read_all(leveldb_t *db) {
    history("invoke", "read", "null");
    leveldb_readoptions_t *ro = leveldb_readoptions_create();
    leveldb_readoptions_set_verify_checksums(ro, 1);
    leveldb_iterator_t *it = leveldb_create_iterator(db, ro);
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    out[len++] = '[';
    for (leveldb_iter_seek_to_first(it); leveldb_iter_valid(it); leveldb_iter_next(it)) {
        size_t klen;
        const char *key = leveldb_iter_key(it, &klen);
        if (len + klen + 4 > cap) out = realloc(out, cap *= 2);
        if (len > 1) out[len++] = ',';
        memcpy(out + len, key, klen);
        len += klen;
    }
    char *err = NULL;
    leveldb_iter_get_error(it, &err);
    if (err) corrupt("read", err);
    leveldb_iter_destroy(it);
    leveldb_readoptions_destroy(ro);
    out[len++] = ']';
    out[len] = 0;
    history("ok", "read", out);
    free(out);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: leveldb-acks DB [--puts N] [--value-bytes B] [--interval-ms MS] "
                        "[--sync 1|0] [--write-buffer BYTES]\n");
        return 2;
    }
    long puts = 40, value_bytes = 4096, interval = 10, sync = 1, buffer = 64 << 10;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--puts")) puts = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--value-bytes")) value_bytes = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--interval-ms")) interval = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--sync")) sync = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--write-buffer")) buffer = atol(argv[i + 1]);
        else {
            fprintf(stderr, "leveldb-acks: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (puts < 0 || value_bytes < 1 || buffer < 1) {
        fprintf(stderr, "leveldb-acks: --puts, --value-bytes and --write-buffer must be positive\n");
        return 2;
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    process = (long)(now.tv_sec % 100000) * 1000 + now.tv_nsec / 1000000;

    leveldb_options_t *opt = leveldb_options_create();
    leveldb_options_set_create_if_missing(opt, 1);
    leveldb_options_set_write_buffer_size(opt, (size_t)buffer);
    char *err = NULL;
    leveldb_t *db = leveldb_open(opt, argv[1], &err);
    if (err) corrupt("open", err);
    read_all(db);

    leveldb_writeoptions_t *wo = leveldb_writeoptions_create();
    leveldb_writeoptions_set_sync(wo, (uint8_t)(sync != 0));
    char *value = malloc((size_t)value_bytes);
    for (long k = 1; k <= puts; k++) {
        char id[32];
        snprintf(id, sizeof id, "%ld", process * 1000 + k);
        for (long b = 0; b < value_bytes; b++) value[b] = (char)('a' + (k * 7 + b * 13) % 26);
        history("invoke", "add", id);
        leveldb_put(db, wo, id, strlen(id), value, (size_t)value_bytes, &err);
        if (err) {
            history("info", "add", id);
            corrupt("put", err);
        }
        history("ok", "add", id);
        sleep_ms(interval);
    }
    read_all(db);
    free(value);
    leveldb_writeoptions_destroy(wo);
    leveldb_close(db);
    leveldb_options_destroy(opt);
    return 0;
}
