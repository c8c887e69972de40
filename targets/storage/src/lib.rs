//! Crash-consistency demonstration targets, each a single storage node with a `buggy` and a
//! `fixed` variant, modelled on classic public bugs (see `shared/specs/storage-contracts.md`):
//!
//! | target | bug | found under |
//! |---|---|---|
//! | `wal-ack` | acknowledges an append before the fsync that covers it (nats-server #7564) | `fsync`, `posix` |
//! | `snapshot-rename` | renames a fsynced snapshot into place without fsyncing the directory, then truncates the log (etcd #6368, RocksDB #5287) | `posix` |
//! | `torn-log` | recovery trusts appends torn or reordered before the fsync covering them: no checksum, skips zeroed regions (etcd #6378/#6379) | `posix` |
//!
//! Clients write values; the node acknowledges each write (an `Acked` observation) once its
//! variant considers it durable. Crashes happen at event boundaries and between storage calls;
//! after each restart the node recovers from its disk and reports what it found. The oracle
//! replays the history: every recovered log must be a prefix of what was appended (no holes,
//! no garbage) and must contain every acknowledged write.

mod log;

use weft_core::{
    Allowed, ConfigError, Contract, Modality, OptionDecl, PropertyInfo, Ratio, RunSpec, Runner,
    Scenario, SimDuration, Target, TargetInfo, VariantInfo,
};
use weft_sim::{Check, Ctx, Node, NodeId, Property, SimRunner, SimSpec, TimerId, View};

const LOG: &str = "log";
const SNAP: &str = "snap";
const SNAP_TMP: &str = "snap.tmp";
const TIMER_SYNC: u64 = 1;
const TIMER_SNAPSHOT: u64 = 2;
const SYNC_EVERY: SimDuration = SimDuration::from_millis(50);
const SNAPSHOT_EVERY: SimDuration = SimDuration::from_millis(120);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Demo {
    WalAck,
    SnapshotRename,
    TornLog,
}

impl Demo {
    pub const ALL: [Demo; 3] = [Demo::WalAck, Demo::SnapshotRename, Demo::TornLog];

    pub fn name(self) -> &'static str {
        match self {
            Demo::WalAck => "wal-ack",
            Demo::SnapshotRename => "snapshot-rename",
            Demo::TornLog => "torn-log",
        }
    }

    /// Contracts under which the buggy variant's crash state is reachable.
    pub fn buggy_found_under(self) -> &'static [Contract] {
        match self {
            Demo::WalAck => &[Contract::Fsync, Contract::Posix],
            Demo::SnapshotRename | Demo::TornLog => &[Contract::Posix],
        }
    }
}

#[derive(Clone, Debug, Hash)]
pub struct Write(pub u64);

/// A record's payload, shown as `#value` in traces.
#[derive(Clone, PartialEq, Eq)]
pub struct Record(pub Vec<u8>);

impl std::fmt::Debug for Record {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&log::describe(&self.0))
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Obs {
    /// A record was appended to the log (not yet durable).
    Appended(Record),
    /// The client was told its write is durable.
    Acked(Record),
    /// The log was folded into a snapshot (snapshot-rename): the records so far now live there.
    Snapshotted,
    /// After a restart: the records recovered from disk, in order.
    Recovered(Vec<Record>),
}

pub struct StorageNode {
    demo: Demo,
    buggy: bool,
    /// Records appended and not yet acknowledged (waiting for the next fsync).
    unsynced: Vec<Vec<u8>>,
    recovered: usize,
}

impl StorageNode {
    fn ensure_log(&mut self, ctx: &mut Ctx<'_, Self>) {
        let mut disk = ctx.disk();
        if !disk.exists(LOG) {
            let _ = disk.create(LOG);
            let _ = disk.fsync(LOG);
            // Under posix a new name is durable only once its directory is fsynced; every variant
            // does this, the bugs lie elsewhere.
            let _ = disk.fsync_dir("");
        }
    }

    fn sync_and_ack(&mut self, ctx: &mut Ctx<'_, Self>) {
        if self.unsynced.is_empty() {
            return;
        }
        if ctx.disk().fsync(LOG).is_ok() && !(self.buggy && self.demo == Demo::WalAck) {
            for r in std::mem::take(&mut self.unsynced) {
                ctx.observe(Obs::Acked(Record(r)));
            }
        }
        if self.buggy && self.demo == Demo::WalAck {
            self.unsynced.clear();
        }
    }

    fn snapshot(&mut self, ctx: &mut Ctx<'_, Self>) {
        let mut disk = ctx.disk();
        let Ok(mut records) = disk
            .read(SNAP)
            .map(|b| log::decode(&b, false))
            .or_else(|_| Ok::<_, std::io::Error>(Vec::new()))
        else {
            return;
        };
        let Ok(bytes) = disk.read(LOG) else { return };
        for r in log::decode(&bytes, false) {
            if !records.contains(&r) {
                records.push(r);
            }
        }
        let image: Vec<u8> = records.iter().flat_map(|r| log::encode(r)).collect();
        let _ = disk.unlink(SNAP_TMP);
        if disk.write(SNAP_TMP, 0, &image).is_err() || disk.fsync(SNAP_TMP).is_err() {
            return;
        }
        if disk.rename(SNAP_TMP, SNAP).is_err() {
            return;
        }
        if !self.buggy {
            // FIX: the rename is durable only once the directory is fsynced.
            if disk.fsync_dir("").is_err() {
                return;
            }
        }
        let _ = disk.truncate(LOG, 0);
        let _ = disk.fsync(LOG);
        ctx.observe(Obs::Snapshotted);
    }

    fn recover(&mut self, ctx: &mut Ctx<'_, Self>) {
        let trusting = self.buggy && self.demo == Demo::TornLog;
        let mut disk = ctx.disk();
        let mut records = match disk.read(SNAP) {
            Ok(b) => log::decode(&b, false),
            Err(_) => Vec::new(),
        };
        let bytes = disk.read(LOG).unwrap_or_default();
        let (valid_len, log_records) = log::decode_with_len(&bytes, trusting);
        if !trusting && valid_len < bytes.len() {
            // FIX: cut a torn or garbage tail so later appends do not land behind it.
            let _ = disk.truncate(LOG, valid_len);
            let _ = disk.fsync(LOG);
        }
        // A crash between installing a snapshot and truncating the log leaves records in both:
        // recovery must be idempotent.
        for r in log_records {
            if !records.contains(&r) {
                records.push(r);
            }
        }
        self.recovered = records.len();
        ctx.observe(Obs::Recovered(records.into_iter().map(Record).collect()));
        self.ensure_log(ctx);
    }
}

impl Node for StorageNode {
    type Msg = ();
    type Req = Write;
    type Obs = Obs;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.ensure_log(ctx);
        ctx.set_timer(SYNC_EVERY, TIMER_SYNC);
        if self.demo == Demo::SnapshotRename {
            ctx.set_timer(SNAPSHOT_EVERY, TIMER_SNAPSHOT);
        }
    }

    fn on_recover(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.recover(ctx);
        ctx.set_timer(SYNC_EVERY, TIMER_SYNC);
        if self.demo == Demo::SnapshotRename {
            ctx.set_timer(SNAPSHOT_EVERY, TIMER_SNAPSHOT);
        }
    }

    fn on_message(&mut self, _: NodeId, _: (), _: &mut Ctx<'_, Self>) {}

    fn on_timer(&mut self, _: TimerId, tag: u64, ctx: &mut Ctx<'_, Self>) {
        if tag == TIMER_SYNC {
            self.sync_and_ack(ctx);
            ctx.set_timer(SYNC_EVERY, TIMER_SYNC);
        } else {
            self.snapshot(ctx);
            ctx.set_timer(SNAPSHOT_EVERY, TIMER_SNAPSHOT);
        }
    }

    fn on_request(&mut self, Write(value): Write, ctx: &mut Ctx<'_, Self>) {
        let record = log::payload(value);
        if ctx.disk().append(LOG, &log::encode(&record)).is_err() {
            return; // the client hears nothing: not acknowledged
        }
        ctx.observe(Obs::Appended(Record(record.clone())));
        match (self.demo, self.buggy) {
            (Demo::WalAck, true) => {
                // BUG: acknowledged before the fsync that makes it durable.
                ctx.observe(Obs::Acked(Record(record.clone())));
                self.unsynced.push(record);
            }
            (Demo::TornLog, _) => self.unsynced.push(record), // group commit on the timer
            _ => {
                if ctx.disk().fsync(LOG).is_ok() {
                    ctx.observe(Obs::Acked(Record(record)));
                }
            }
        }
    }

    fn describe(&self) -> String {
        format!("unsynced={} recovered={}", self.unsynced.len(), self.recovered)
    }

    fn feature(&self) -> u64 {
        (self.unsynced.len() as u64) << 16 | self.recovered as u64
    }
}

/// Replays the history: what the disk should hold at each recovery.
fn check_history(v: &View<'_, StorageNode>, acked_only: bool) -> Result<(), String> {
    let mut appended: Vec<&Record> = Vec::new();
    let mut acked: Vec<&Record> = Vec::new();
    for o in v.history() {
        match &o.obs {
            Obs::Appended(r) => appended.push(r),
            Obs::Acked(r) => acked.push(r),
            Obs::Snapshotted => {}
            Obs::Recovered(list) => {
                let at = o.time.to_string();
                for a in &acked {
                    if !list.contains(a) {
                        return Err(format!(
                            "acknowledged write {} missing after the recovery at {}",
                            log::describe(&a.0),
                            at.trim()
                        ));
                    }
                }
                if !acked_only {
                    let prefix = list.len() <= appended.len()
                        && list.iter().zip(&appended).all(|(x, y)| x == *y);
                    if !prefix {
                        let shown: Vec<String> = list.iter().map(|r| log::describe(&r.0)).collect();
                        return Err(format!(
                            "recovered log [{}] at {} is not a prefix of the {} records appended",
                            shown.join(", "),
                            at.trim(),
                            appended.len()
                        ));
                    }
                }
                appended = list.iter().collect();
                acked.retain(|a| list.contains(a));
            }
        }
    }
    Ok(())
}

fn acked_writes_survive(v: &View<'_, StorageNode>) -> Result<(), String> {
    check_history(v, true)
}

fn recovered_log_is_prefix(v: &View<'_, StorageNode>) -> Result<(), String> {
    check_history(v, false)
}

/// Name, modality, summary and check of every property: `info()` and the world read one table.
const PROPERTIES: [(&str, Modality, &str, Check<StorageNode>); 2] = [
    (
        "AckedWritesSurvive",
        Modality::Always,
        "every acknowledged write is recovered after every crash",
        acked_writes_survive,
    ),
    (
        "RecoveredLogIsPrefix",
        Modality::Always,
        "every recovered log is a prefix of what was appended: no holes, no garbage",
        recovered_log_is_prefix,
    ),
];

/// One of the demonstration targets.
pub struct StorageDemo(pub Demo);

/// Most client writes per run: the demonstrations' recovery rereads the whole log, so a run
/// costs the square of its writes (1,000 take 0.4 s; 100,000 took four minutes).
const MAX_WRITES: u64 = 1_000;

const OPTIONS: &[OptionDecl] = &[OptionDecl::new(
    "writes",
    "40",
    Allowed::Int { min: 0, max: MAX_WRITES },
    "client writes per run, spread over the fault phase",
)];

impl Target for StorageDemo {
    fn info(&self) -> TargetInfo {
        let summary = match self.0 {
            Demo::WalAck => "write-ahead log; buggy acks before fsync (found under fsync, posix)",
            Demo::SnapshotRename => {
                "snapshot renamed into place; buggy skips the directory fsync (found under posix)"
            }
            Demo::TornLog => {
                "group-committed log; buggy recovery trusts torn appends (found under posix)"
            }
        };
        TargetInfo {
            name: self.0.name(),
            summary,
            variants: vec![
                VariantInfo { name: "buggy", summary: "the classic bug" },
                VariantInfo { name: "fixed", summary: "the textbook fix" },
            ],
            options: weft_core::options::infos(OPTIONS),
            properties: PROPERTIES
                .iter()
                .map(|&(name, modality, summary, _)| PropertyInfo { name, modality, summary })
                .collect(),
        }
    }

    fn options(&self) -> Vec<OptionDecl> {
        OPTIONS.to_vec()
    }

    fn prepare(&self, spec: &RunSpec) -> Result<Box<dyn Runner>, ConfigError> {
        let info = self.info();
        weft_core::check_spec(self, spec)?;
        let writes: u64 = info.parse_option(spec, "writes")?;
        let (demo, buggy) = (self.0, spec.variant == "buggy");
        let sim = SimSpec {
            nodes: 1,
            make: Box::new(move |_| StorageNode {
                demo,
                buggy,
                unsynced: Vec::new(),
                recovered: 0,
            }),
            workload: weft_sim::spread_over_fault_phase::<StorageNode>(writes, 0, |i| Write(i + 1)),
            properties: PROPERTIES
                .iter()
                .map(|&(name, modality, _, check)| Property { name, modality, check })
                .collect(),
            assumptions: Vec::new(),
            crash_gate: None,
            focus: spec.property.clone(),
        };
        Ok(Box::new(SimRunner { sim, scenario: default_scenario() }))
    }
}

/// One node, no network faults; crashes at event boundaries and between storage calls, each
/// followed by a restart and recovery; the `posix` contract (what Linux promises) unless
/// `--contract` says otherwise.
fn default_scenario() -> Scenario {
    let mut s = Scenario::calm();
    s.rates.crash = Ratio::new(1, 30);
    s.budget.crashes = 3;
    s.restart = true;
    s.outage_max = SimDuration::from_millis(20);
    s.fault_phase = SimDuration::from_secs(1);
    s.heal_phase = SimDuration::from_millis(200);
    s.disk.contract = Contract::Posix;
    s.disk.crash_at_call = Ratio::new(1, 30);
    s
}
