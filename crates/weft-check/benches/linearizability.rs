//! Linearizability checker throughput on synthetic key-value histories of 10,000 to 100,000
//! operations (concurrent clients, known answer), printed as operations checked per second.
//!
//!     cargo bench -p weft-check

use weft_check::linearizability::{check, KeyValue, Limits, Verdict};
use weft_check::synth::{corrupt_a_read, kv_history, Shape};

// A benchmark reads the wall clock by definition; nothing simulated runs here.
#[allow(clippy::disallowed_methods)]
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let start = std::time::Instant::now();
    let out = f();
    (out, start.elapsed().as_secs_f64())
}

fn main() {
    let cases = [
        (
            "10k ops, 8 clients, 64 keys",
            Shape { ops: 10_000, clients: 8, keys: 64, duration_max: 20, put_percent: 30 },
        ),
        (
            "10k ops, 8 clients, 4 keys",
            Shape { ops: 10_000, clients: 8, keys: 4, duration_max: 20, put_percent: 30 },
        ),
        (
            "10k ops, 4 clients, 1 key",
            Shape { ops: 10_000, clients: 4, keys: 1, duration_max: 10, put_percent: 30 },
        ),
        (
            "100k ops, 16 clients, 256 keys",
            Shape { ops: 100_000, clients: 16, keys: 256, duration_max: 20, put_percent: 30 },
        ),
    ];
    println!("{:<34} {:>10} {:>14} {:>16}", "history", "verdict", "seconds", "ops/s");
    for (name, shape) in cases {
        let mut history = kv_history(7, shape);
        for corrupt in [false, true] {
            if corrupt {
                corrupt_a_read(&mut history);
            }
            let (verdict, secs) = timed(|| check(&KeyValue, &history, Limits::default()));
            let label = match verdict {
                Verdict::Linearizable => "ok",
                Verdict::NotLinearizable { .. } => "violation",
                Verdict::Unknown { .. } => "unknown",
            };
            assert_eq!(label, if corrupt { "violation" } else { "ok" }, "{name}: wrong verdict");
            println!(
                "{:<34} {:>10} {:>14.4} {:>16.0}",
                format!("{name}{}", if corrupt { " (bad)" } else { "" }),
                label,
                secs,
                history.len() as f64 / secs
            );
        }
    }
}
