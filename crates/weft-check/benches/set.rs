//! Set checker throughput: pairing and checking set histories of 10,000 and 100,000 adds (8
//! clients, some `info` and `fail` adds, one final read), intact and with 500 lost elements.
//!
//!     cargo bench -p weft-check --bench set

use weft_check::history::{check_set, SetError};
use weft_check::synth::{lose_elements, set_history};

// A benchmark reads the wall clock by definition; nothing simulated runs here.
#[allow(clippy::disallowed_methods)]
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let start = std::time::Instant::now();
    let out = f();
    (out, start.elapsed().as_secs_f64())
}

fn main() {
    println!("{:<30} {:>10} {:>12} {:>14}", "history", "verdict", "seconds", "ops/s");
    for adds in [10_000, 100_000] {
        let mut history = set_history(7, adds, 8);
        for lose in [0, 500] {
            if lose > 0 {
                lose_elements(&mut history, lose);
            }
            let (verdict, secs) = timed(|| check_set(&history));
            let label = match &verdict {
                Ok(_) => "ok",
                Err(SetError::Witness(w)) => {
                    assert_eq!(w.lost.len(), lose, "wrong witness");
                    "violation"
                }
                Err(SetError::Unusable(e)) => panic!("{e}"),
            };
            assert_eq!(label, if lose > 0 { "violation" } else { "ok" });
            let name =
                format!("{adds} adds, 8 clients{}", if lose > 0 { " (500 lost)" } else { "" });
            println!(
                "{:<30} {:>10} {:>12.4} {:>14.0}",
                name,
                label,
                secs,
                history.len() as f64 / secs
            );
        }
    }
}
