//! The CLI side of a campaign: wall-clock budgets, Ctrl-C (and SIGTERM, SIGHUP) and progress
//! display. The explorer reads no clock; it asks [`CliControl`] whether to stop and hands it
//! progress counts.
//!
//! On an interactive terminal progress is an indicatif bar on stderr (runs done, runs/s,
//! events/s, distinct features, violations, time left); otherwise a plain line on stderr every
//! two seconds, so logs of CI runs stay readable. `--json` keeps it (stdout carries only the
//! summary); nothing is drawn with `--quiet`.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};
use weft_explore::{Control, Progress};

/// Set by the interrupt handler, installed once per process and shared by every phase
/// (campaign, shrinking), so an interrupt during a campaign also cuts its shrinking short.
/// SIGTERM and SIGHUP count as Ctrl-C (ctrlc's `termination` feature): a campaign stops with
/// its repros on disk and exits 130 (or 1 after a violation), and `weft shrink` writes its
/// best result so far, where an unhandled SIGTERM used to kill it (exit 143) and lose it.
fn interrupted() -> &'static AtomicBool {
    static FLAG: OnceLock<&'static AtomicBool> = OnceLock::new();
    FLAG.get_or_init(|| {
        let flag: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
        // If a handler cannot be installed, Ctrl-C kills the process; repros already written
        // are on disk either way.
        let _ = ctrlc::set_handler(move || {
            if EXIT_AT_ONCE.load(Ordering::SeqCst) {
                eprintln!("weft: interrupted");
                std::process::exit(crate::exit::Code::Interrupted as i32);
            }
            flag.store(true, Ordering::SeqCst)
        });
        flag
    })
}

/// Whether an interrupt ends the process at once rather than asking the command to stop.
static EXIT_AT_ONCE: AtomicBool = AtomicBool::new(false);

/// For a command with nothing to save and no point to stop at (`replay`, `show`, `run`, …):
/// `true` makes Ctrl-C, SIGTERM and SIGHUP end it at once with exit 130 and `weft: interrupted`
/// on stderr, as the README's exit-code table says, where the signal's default action would
/// kill it (a SIGTERM as 143). `false` (campaigns, shrinking) keeps the stop cooperative.
pub fn exit_at_once_on_interrupt(at_once: bool) {
    EXIT_AT_ONCE.store(at_once, Ordering::SeqCst);
    if at_once {
        interrupted();
    }
}

pub fn was_interrupted() -> bool {
    interrupted().load(Ordering::SeqCst)
}

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Show {
    Nothing,
    Lines,
    Bar,
}

impl Show {
    /// A bar on a terminal, lines otherwise, nothing when asked to be quiet.
    pub fn auto(quiet: bool) -> Show {
        if quiet {
            Show::Nothing
        } else if std::io::stderr().is_terminal() {
            Show::Bar
        } else {
            Show::Lines
        }
    }
}

pub struct CliControl {
    start: Instant,
    deadline: Option<Duration>,
    /// Run budget, for the bar's length.
    total: Option<u64>,
    show: Show,
    bar: Option<ProgressBar>,
    last_shown: Mutex<Duration>,
    what: &'static str,
    /// Progress counts shrink candidates (`failures` = accepted ones), not campaign runs.
    shrinking: bool,
}

impl CliControl {
    #[allow(clippy::disallowed_methods)] // the CLI owns the wall clock
    pub fn new(
        deadline: Option<Duration>,
        total: Option<u64>,
        show: Show,
        what: &'static str,
    ) -> CliControl {
        interrupted();
        let bar = (show == Show::Bar).then(|| {
            let bar = match total {
                Some(n) => ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::stderr()),
                None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
            };
            let template = if total.is_some() {
                "{spinner} {elapsed_precise} [{bar:30}] {pos}/{len} {prefix}  {msg}"
            } else {
                "{spinner} {elapsed_precise} {pos} {prefix}  {msg}"
            };
            bar.set_style(
                ProgressStyle::with_template(template)
                    .expect("a valid template")
                    .progress_chars("=> "),
            );
            bar.set_prefix(what);
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        CliControl {
            start: Instant::now(),
            deadline,
            total,
            show,
            bar,
            last_shown: Mutex::new(Duration::ZERO),
            what,
            shrinking: what.starts_with("shrink"),
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Removes the bar (before printing results).
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }

    /// Whether to show progress now: every 100 ms on a bar, every 2 s as lines (the explorer
    /// reports after every run, which may be a hundred thousand times a second).
    fn due(&self, now: Duration) -> bool {
        let every = match self.show {
            Show::Nothing => return false,
            Show::Bar => Duration::from_millis(100),
            Show::Lines => Duration::from_secs(2),
        };
        let mut last = self.last_shown.lock().expect("progress lock");
        if now.saturating_sub(*last) < every {
            return false;
        }
        *last = now;
        true
    }

    fn time_left(&self, p: &Progress, secs: f64) -> Option<f64> {
        if let Some(d) = self.deadline {
            return Some((d.as_secs_f64() - secs).max(0.0));
        }
        let total = self.total?;
        (p.runs > 0).then(|| secs / p.runs as f64 * total.saturating_sub(p.runs) as f64)
    }
}

impl Control for CliControl {
    fn should_stop(&self) -> bool {
        was_interrupted() || self.deadline.is_some_and(|d| self.start.elapsed() >= d)
    }

    fn progress(&self, p: &Progress) {
        let now = self.start.elapsed();
        if !self.due(now) {
            return;
        }
        let secs = now.as_secs_f64().max(1e-9);
        let mut stats = if self.shrinking {
            let best = p.best.map_or(String::new(), |b| {
                format!(
                    "  best: {} decisions, {} events, {} faults",
                    b.decisions, b.events, b.faults
                )
            });
            format!(
                "{:.0} {}/s  {} smaller lists accepted{best}",
                p.runs as f64 / secs,
                self.what,
                p.failures
            )
        } else {
            format!(
                "{:.0} {}/s  {:.0} events/s  {} features  {} violations",
                p.runs as f64 / secs,
                self.what,
                p.events as f64 / secs,
                p.features,
                p.failures
            )
        };
        if p.states > 0 {
            stats.push_str(&format!("  {} states  depth {}", p.states, p.depth));
        }
        let left = self.time_left(p, secs).map(|s| format!("  {s:.0}s left")).unwrap_or_default();
        match self.show {
            Show::Nothing => {}
            Show::Bar => {
                if let Some(bar) = &self.bar {
                    bar.set_position(p.runs);
                    bar.set_message(format!("{stats}{left}"));
                }
            }
            Show::Lines => {
                eprintln!("  {:>9} {}  {stats}{left}  ({:.0}s)", p.runs, self.what, secs);
            }
        }
    }
}
