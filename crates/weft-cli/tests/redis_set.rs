//! The redis-set workload client (`programs/redis-set`) against one real `redis-server` under
//! `weft run --cluster`: the client's history passes the set model, deterministically per seed,
//! and a planted loss (the set deleted before the final read) is a `history` violation naming
//! the lost elements. Skipped, with the reason printed, where `redis-server` is not installed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const REDIS: &str = "/usr/bin/redis-server";

/// A folder with the client compiled and `programs/redis-set/single.toml` copied beside it.
fn setup(name: &str) -> Option<PathBuf> {
    if !Path::new(REDIS).exists() {
        assert!(
            option_env!("WEFT_REQUIRE_PACKAGES").is_none(),
            "{REDIS} is missing (.ci/run installs it)"
        );
        println!("skipped: {REDIS} is not installed (apt-get install redis-server)");
        return None;
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("redis-set-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let ok = Command::new("cc")
        .args(["-O1", "-Wall", "-o"])
        .arg(dir.join("redis-set"))
        .arg(repo.join("programs/redis-set/redis-set.c"))
        .status()
        .expect("a C compiler (`cc`) is needed for this test");
    assert!(ok.success(), "cc failed for redis-set.c");
    std::fs::copy(repo.join("programs/redis-set/single.toml"), dir.join("single.toml")).unwrap();
    Some(dir)
}

fn weft(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weft")).current_dir(dir).args(args).output().expect("weft")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn hash_line(o: &Output) -> String {
    stdout(o).lines().find(|l| l.contains("trace hash")).expect("a trace hash line").to_string()
}

#[test]
fn the_set_history_against_one_redis_passes_and_is_deterministic() {
    let Some(dir) = setup("pass") else { return };
    let a = weft(&dir, &["run", "--cluster", "single.toml", "--seed", "4"]);
    let out = stdout(&a);
    assert_eq!(a.status.code(), Some(0), "{out}{}", String::from_utf8_lossy(&a.stderr));
    assert!(out.contains("note: set: final read at"), "{out}");
    assert!(out.contains("acknowledged before it are present"), "{out}");
    let acked = out.matches(r#""type":"ok","process":0,"f":"add""#).count();
    assert!(acked > 50, "the client added for 3 s: {acked} acknowledged adds\n{out}");
    let b = weft(&dir, &["run", "--cluster", "single.toml", "--seed", "4"]);
    assert_eq!(hash_line(&a), hash_line(&b), "same seed, same trace");
    assert_eq!(out, stdout(&b), "same seed, same output");
}

#[test]
fn elements_deleted_before_the_final_read_are_reported_lost() {
    let Some(dir) = setup("lose") else { return };
    // A second client deletes the set at 2 s: everything acknowledged before is lost.
    let mut file = std::fs::read_to_string(dir.join("single.toml")).unwrap();
    file = file.replace("--add-for\", \"3\"", "--add-for\", \"1\"");
    std::fs::write(dir.join("single.toml"), file).unwrap();
    let spoiler = dir.join("spoiler.c");
    std::fs::write(&spoiler, SPOILER).unwrap();
    let ok = Command::new("cc").args(["-O1", "-o"]).arg(dir.join("spoiler")).arg(&spoiler).status();
    assert!(ok.expect("cc").success());
    let extra = "\n[[group]]\nname = \"spoiler\"\nprogram = \"spoiler\"\nargs = [\"{peers:redis}\"]\nstart = \"2s\"\n";
    let mut file = std::fs::read_to_string(dir.join("single.toml")).unwrap();
    file.push_str(extra);
    std::fs::write(dir.join("single.toml"), file).unwrap();
    let o = weft(&dir, &["run", "--cluster", "single.toml", "--seed", "4"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("outcome: safety violation"), "{out}");
    assert!(out.contains("acknowledged adds lost: 1 (ok at"), "{out}");
}

/// Deletes the set `weft-set` on the server at argv[1] (RESP by hand) and exits.
const SPOILER: &str = r#"
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
int main(int argc, char **argv) {
    char ip[64]; const char *c = strrchr(argv[1], ':');
    memcpy(ip, argv[1], c - argv[1]); ip[c - argv[1]] = 0;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(atoi(c + 1))};
    inet_pton(AF_INET, ip, &sa.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) return 1;
    const char *cmd = "*2\r\n$3\r\nDEL\r\n$8\r\nweft-set\r\n";
    if (write(fd, cmd, strlen(cmd)) < 0) return 1;
    char buf[64]; return read(fd, buf, sizeof buf) > 0 ? 0 : 1;
}
"#;
