/* sqlite-acks: a crash-consistency workload for Debian's SQLite (libsqlite3).
 *
 * It opens DB (creating it), reads every row of table `acks`, then inserts --rows rows, one
 * autocommit transaction each (the commit point SQLite documents: sqlite3_step of the INSERT
 * returning SQLITE_DONE), --interval-ms apart, and reads everything again. Every operation is a
 * weft history line (`WEFT-HISTORY {json}`, Jepsen's set model): `add` is acknowledged (`ok`)
 * only after its commit returned, so `weft run --history set` checks the promise — after a
 * crash and a restart, every acknowledged row is still there. A row id is unique across
 * incarnations: the process number (virtual monotonic milliseconds at start) times 1000 plus
 * the row's number. An error opening or reading the database (corruption after a crash)
 * prints a line with CORRUPT (use --forbid CORRUPT).
 *
 *   sqlite-acks DB [--journal delete|wal|wal-shared] [--sync off|normal|full|extra] [--rows N]
 *                  [--interval-ms MS]
 *
 * `wal` runs with `locking_mode=EXCLUSIVE`, so SQLite keeps the WAL index in heap memory;
 * `wal-shared` is SQLite's default WAL setup, the index in a shared writable mapping of DB-shm
 * (which weft serves since 2026-12-04; before, it refused the mapping by name).
 *
 * Build: cc -O1 -o programs/storage/sqlite-acks programs/storage/sqlite-acks.c -lsqlite3
 */
#include <sqlite3.h>
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

static void fail(sqlite3 *db, const char *what) {
    printf("CORRUPT or failed: %s: %s\n", what, db ? sqlite3_errmsg(db) : "no handle");
    fflush(stdout);
    exit(3);
}

static void exec(sqlite3 *db, const char *sql) {
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
        printf("CORRUPT or failed: %s: %s\n", sql, err ? err : "?");
        fflush(stdout);
        exit(3);
    }
}

/* The read operation: every id, as a JSON array. */
static void read_all(sqlite3 *db) {
    history("invoke", "read", "null");
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT id FROM acks ORDER BY id", -1, &st, NULL) != SQLITE_OK)
        fail(db, "prepare read");
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    out[len++] = '[';
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (len + 32 > cap)
            out = realloc(out, cap *= 2);
        len += snprintf(out + len, cap - len, "%s%lld", len > 1 ? "," : "",
                        (long long)sqlite3_column_int64(st, 0));
    }
    if (rc != SQLITE_DONE)
        fail(db, "read");
    sqlite3_finalize(st);
    out[len++] = ']';
    out[len] = 0;
    history("ok", "read", out);
    free(out);
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: sqlite-acks DB [--journal delete|wal|wal-shared] [--sync MODE] [--rows N] "
                        "[--interval-ms MS]\n");
        return 2;
    }
    const char *path = argv[1], *journal = "delete", *sync = "full";
    long rows = 20, interval = 10;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--journal")) journal = argv[i + 1];
        else if (!strcmp(argv[i], "--sync")) sync = argv[i + 1];
        else if (!strcmp(argv[i], "--rows")) rows = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--interval-ms")) interval = atol(argv[i + 1]);
        else {
            fprintf(stderr, "sqlite-acks: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    process = (long)(now.tv_sec % 100000) * 1000 + now.tv_nsec / 1000000;

    /* One thread: no mutexes (each would be a hand-off to weft's scheduler for nothing). */
    sqlite3_config(SQLITE_CONFIG_SINGLETHREAD);
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK)
        fail(db, "open");
    char sql[256];
    if (!strcmp(journal, "wal")) {
        exec(db, "PRAGMA locking_mode=EXCLUSIVE");
        exec(db, "PRAGMA journal_mode=WAL");
    } else if (!strcmp(journal, "wal-shared")) {
        exec(db, "PRAGMA journal_mode=WAL"); /* the WAL index in a shared mapping of -shm */
    } else {
        snprintf(sql, sizeof sql, "PRAGMA journal_mode=%s", journal);
        exec(db, sql);
    }
    snprintf(sql, sizeof sql, "PRAGMA synchronous=%s", sync);
    exec(db, sql);
    exec(db, "CREATE TABLE IF NOT EXISTS acks(id INTEGER PRIMARY KEY)");
    read_all(db);

    sqlite3_stmt *ins;
    if (sqlite3_prepare_v2(db, "INSERT INTO acks(id) VALUES(?)", -1, &ins, NULL) != SQLITE_OK)
        fail(db, "prepare insert");
    for (long k = 1; k <= rows; k++) {
        char id[32];
        snprintf(id, sizeof id, "%ld", process * 1000 + k);
        history("invoke", "add", id);
        sqlite3_bind_int64(ins, 1, process * 1000 + k);
        int rc = sqlite3_step(ins);
        sqlite3_reset(ins);
        if (rc != SQLITE_DONE) {
            history("info", "add", id);
            fail(db, "insert");
        }
        history("ok", "add", id);
        sleep_ms(interval);
    }
    sqlite3_finalize(ins);
    read_all(db);
    if (sqlite3_close(db) != SQLITE_OK)
        fail(db, "close");
    return 0;
}
