#!/usr/bin/python3
"""A Jepsen-style register client for a MariaDB Galera cluster (../galera/register.toml).

Client INDEX of COUNT talks to database node INDEX mod 3 (at 127.1.0.(INDEX mod 3)+1) through
PyMySQL, one connection at a time. Once its node is synced in a cluster of three, it runs a random mix of
reads, writes and compare-and-sets on a few keys of one table for DURATION seconds, and prints
every operation as a history event (WEFT-HISTORY lines, the `kv` model): `ok` when the server
answered, `fail` when it certainly did not apply it (a certification conflict, a node that is
not in the primary component, a compare-and-set that matched no row), `info` when the answer
was lost (a timeout or a dropped connection; the client then reconnects as a new process).

SYNC_WAIT is the session's wsrep_sync_wait: 0 (MariaDB's default) lets a read on one node run
before that node has applied a write another node has already acknowledged; 1 makes each read
wait until its node has caught up with the cluster.
"""
import json
import os
import random
import sys
import time

import pymysql

KEYS = 3


def emit(kind, process, f, key, value):
    event = {"type": kind, "process": process, "f": f, "key": key, "value": value}
    print("WEFT-HISTORY " + json.dumps(event), flush=True)


def connect(host, port, sync_wait):
    conn = pymysql.connect(host=host, port=port, user="root", connect_timeout=2,
                           read_timeout=2, write_timeout=2, autocommit=True)
    with conn.cursor() as cur:
        cur.execute("set session wsrep_sync_wait = %s", (sync_wait,))
    return conn


def status(conn, name):
    with conn.cursor() as cur:
        cur.execute("show status like %s", (name,))
        row = cur.fetchone()
    return row[1] if row else None


def synced(port, sync_wait):
    """Whether all three nodes are synced members of one cluster of three."""
    for node in range(3):
        try:
            conn = connect("127.1.0.%d" % (node + 1), port, sync_wait)
            ok = status(conn, "wsrep_cluster_size") == "3" and \
                status(conn, "wsrep_local_state_comment") == "Synced"
            conn.close()
        except pymysql.MySQLError:
            return False
        if not ok:
            return False
    return True


def ready(host, port, sync_wait, index):
    """Waits until the cluster is whole and the table exists (client 0 makes it)."""
    while True:
        try:
            if synced(port, sync_wait):
                conn = connect(host, port, sync_wait)
                with conn.cursor() as cur:
                    if index == 0:
                        cur.execute("create database if not exists t")
                        cur.execute("create table if not exists t.kv "
                                    "(k int primary key, v int)")
                        return conn
                    cur.execute("select count(*) from information_schema.tables "
                                "where table_schema = 't' and table_name = 'kv'")
                    if cur.fetchone()[0] == 1:
                        return conn
                conn.close()
        except pymysql.MySQLError:
            pass
        time.sleep(0.5)


def apply(conn, f, key, value):
    """Runs one operation; returns (type, value) for its completion."""
    with conn.cursor() as cur:
        if f == "read":
            cur.execute("select v from t.kv where k = %s", (key,))
            row = cur.fetchone()
            return "ok", (row[0] if row else None)
        if f == "write":
            cur.execute("insert into t.kv values (%s, %s) on duplicate key update v = %s",
                        (key, value, value))
            return "ok", value
        old, new = value
        if old == 0:
            # The register starts at 0: a missing row is 0.
            cur.execute("insert ignore into t.kv values (%s, %s)", (key, 0))
        cur.execute("update t.kv set v = %s where k = %s and v = %s", (new, key, old))
        return ("ok" if cur.rowcount == 1 else "fail"), value


def first_process(index, count):
    """The process number to start with. A node's working folder survives its crash, so a
    client restarted after one continues its numbering there: the operation it had open is
    left open (indeterminate), and it goes on as a new process."""
    try:
        with open("process") as f:
            return int(f.read()) + count
    except (OSError, ValueError):
        return index


def remember(process):
    with open("process.new", "w") as f:
        f.write(str(process))
    os.replace("process.new", "process")


# Server errors after which the statement certainly did not take effect: a node not in the
# primary component (1047), a lock wait timeout (1205), a certification conflict (1213).
DEFINITE = {1047, 1205, 1213}


def main():
    index, count = int(sys.argv[1]), int(sys.argv[2])
    port, duration = int(sys.argv[3]), float(sys.argv[4])
    sync_wait = int(os.environ.get("SYNC_WAIT", "0"))
    host = "127.1.0.%d" % (index % 3 + 1)
    rng = random.Random(index)
    conn = ready(host, port, sync_wait, index)
    process, written, last = first_process(index, count), 0, {}
    remember(process)
    end = time.monotonic() + duration
    while time.monotonic() < end:
        key = rng.randrange(KEYS)
        f = rng.choice(["read", "read", "write", "cas"])
        written += 1
        value = None
        if f == "write":
            value = index * 100000 + written
        elif f == "cas":
            value = [last.get(key, 0), index * 100000 + written]
        emit("invoke", process, f, key, value)
        try:
            if conn is None:
                conn = connect(host, port, sync_wait)
            kind, result = apply(conn, f, key, value)
            emit(kind, process, f, key, result)
            if f == "read":
                last[key] = result or 0
        except pymysql.MySQLError as e:
            code = e.args[0] if e.args else 0
            definite = isinstance(e, (pymysql.InternalError, pymysql.OperationalError,
                                      pymysql.IntegrityError)) and code in DEFINITE
            if definite or f == "read":
                emit("fail", process, f, key, value)
            else:
                emit("info", process, f, key, value)
                process += count
                remember(process)
            if not definite:
                try:
                    conn.close()
                except Exception:
                    pass
                conn = None
        time.sleep(rng.uniform(0, 0.01))


main()
