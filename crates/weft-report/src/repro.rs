//! The repro file: one versioned JSON document that replays a run anywhere.
//!
//! A counterexample is target + config + decision list. Decisions are stored as a run-length
//! encoded string (`"0*12 3 1 0*5"`) so that long runs of "simplest choice" stay small and the
//! file stays greppable. `trace_hash` is a hex string because JSON numbers lose 64-bit precision
//! in many readers.

use serde::{Deserialize, Serialize};
use std::path::Path;
use weft_core::{Outcome, RunSpec, Scenario};

pub const FORMAT: &str = "weft-repro";
pub const FORMAT_VERSION: u32 = 1;
/// Largest repro file weft reads (checked before reading, and while reading, so `/dev/zero`
/// or a runaway file costs at most this much memory).
pub const MAX_FILE_BYTES: u64 = 64 << 20;
/// Most decisions a repro may hold (80 MB as a list; a run of [`weft_core::scenario::MAX_EVENTS`]
/// events draws far fewer).
pub const MAX_DECISIONS: usize = 10_000_000;

/// Where a run came from within a campaign (informational; replay does not need it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    pub campaign_seed: u64,
    pub run_index: u64,
    pub strategy: String,
    /// Set when the repro was shrunk: decisions/events/faults before shrinking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shrunk_from: Option<Sizes>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sizes {
    pub decisions: u64,
    pub events: u64,
    pub faults: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Repro {
    pub format: String,
    pub format_version: u32,
    pub weft_version: String,
    pub spec: RunSpec,
    pub scenario: Scenario,
    /// The seed the run's decisions were drawn from (informational once `decisions` exist).
    pub seed: u64,
    pub provenance: Provenance,
    #[serde(with = "rle")]
    pub decisions: Vec<u64>,
    pub outcome: Outcome,
    #[serde(with = "hex")]
    pub trace_hash: u64,
    pub events: u64,
    pub faults: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum ReproError {
    #[error("cannot read {path}")]
    Io { path: String, source: std::io::Error },
    #[error("cannot write {path}")]
    Write { path: String, source: std::io::Error },
    #[error("{path} is larger than {MAX_FILE_BYTES} bytes, too large for a repro file")]
    TooLarge { path: String },
    #[error("{path} is not a valid weft repro file: {reason}")]
    Malformed { path: String, reason: String },
    #[error("{path} has repro format version {found}; this weft reads version {FORMAT_VERSION}")]
    Version { path: String, found: u32 },
}

impl Repro {
    pub fn read(path: &Path) -> Result<Repro, ReproError> {
        let shown = path.display().to_string();
        let text = read_bounded(path, &shown)?;
        Repro::parse(&text).map_err(|e| match e {
            ReproError::Malformed { reason, .. } => ReproError::Malformed { path: shown, reason },
            ReproError::Version { found, .. } => ReproError::Version { path: shown, found },
            other => other,
        })
    }

    pub fn parse(text: &str) -> Result<Repro, ReproError> {
        let malformed = |reason: String| ReproError::Malformed { path: "<input>".into(), reason };
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            malformed(if e.is_eof() { format!("truncated ({e})") } else { e.to_string() })
        })?;
        if value.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
            return Err(malformed(format!("missing \"format\": \"{FORMAT}\"")));
        }
        let found = match value.get("format_version") {
            None => return Err(malformed("missing field `format_version`".into())),
            Some(v) => v.as_u64().ok_or_else(|| {
                malformed(format!("`format_version` is {v}; expected {FORMAT_VERSION}"))
            })?,
        };
        if found != u64::from(FORMAT_VERSION) {
            let found = u32::try_from(found).unwrap_or(u32::MAX);
            return Err(ReproError::Version { path: "<input>".into(), found });
        }
        let repro: Repro = serde_json::from_value(value).map_err(|e| malformed(e.to_string()))?;
        repro.scenario.validate().map_err(|e| malformed(e.to_string()))?;
        Ok(repro)
    }

    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a repro always serialises");
        s.push('\n');
        s
    }

    /// Writes atomically (temporary file, then rename), so an interrupted write never leaves a
    /// truncated repro where a good one was.
    pub fn write(&self, path: &Path) -> Result<(), ReproError> {
        let shown = path.display().to_string();
        let io = |source| ReproError::Write { path: shown.clone(), source };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let tmp = temp_path(path);
        std::fs::write(&tmp, self.to_json()).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io(e)
        })
    }
}

/// A temporary name beside `path`, unique per process and call (two campaigns writing into
/// one folder never share one): `.NAME.PID-N.tmp`.
pub fn temp_path(path: &Path) -> std::path::PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let name = path.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.{}-{n}.tmp", std::process::id()))
}

/// Reads at most [`MAX_FILE_BYTES`] of `path` as text: a regular file's size is checked first,
/// anything else (a pipe, `/dev/zero`) is read through a bound.
fn read_bounded(path: &Path, shown: &str) -> Result<String, ReproError> {
    use std::io::Read;
    let io = |source| ReproError::Io { path: shown.to_string(), source };
    let file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if meta.is_dir() {
        return Err(io(std::io::Error::other("it is a directory")));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(ReproError::TooLarge { path: shown.to_string() });
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(ReproError::TooLarge { path: shown.to_string() });
    }
    String::from_utf8(bytes).map_err(|e| ReproError::Malformed {
        path: shown.to_string(),
        reason: format!("not UTF-8 text (invalid byte at offset {})", e.utf8_error().valid_up_to()),
    })
}

/// Run-length encoding of a decision list: space-separated `value` or `value*count`.
pub mod rle {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn encode(list: &[u64]) -> String {
        let mut out = String::new();
        let mut i = 0;
        while i < list.len() {
            let v = list[i];
            let mut j = i + 1;
            while j < list.len() && list[j] == v {
                j += 1;
            }
            if !out.is_empty() {
                out.push(' ');
            }
            let n = j - i;
            if n >= 3 {
                out.push_str(&format!("{v}*{n}"));
            } else {
                out.push_str(&vec![v.to_string(); n].join(" "));
            }
            i = j;
        }
        out
    }

    pub fn decode(text: &str) -> Result<Vec<u64>, String> {
        let mut out = Vec::new();
        for tok in text.split_ascii_whitespace() {
            let (v, n) = match tok.split_once('*') {
                Some((v, n)) => (
                    v,
                    n.parse::<usize>().map_err(|_| {
                        format!("bad count in `{}`", weft_core::target::shorten(tok))
                    })?,
                ),
                None => (tok, 1),
            };
            let v: u64 = v
                .parse()
                .map_err(|_| format!("bad decision `{}`", weft_core::target::shorten(tok)))?;
            if n > super::MAX_DECISIONS - out.len() {
                return Err(format!(
                    "more than {} decisions (at `{}`)",
                    super::MAX_DECISIONS,
                    weft_core::target::shorten(tok)
                ));
            }
            out.extend(std::iter::repeat_n(v, n));
        }
        Ok(out)
    }

    pub fn serialize<S: Serializer>(list: &[u64], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&encode(list))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
        let text = String::deserialize(d)?;
        decode(&text).map_err(serde::de::Error::custom)
    }
}

mod hex {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{v:016x}"))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        let text = String::deserialize(d)?;
        u64::from_str_radix(text.trim_start_matches("0x"), 16).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample() -> Repro {
        Repro {
            format: FORMAT.into(),
            format_version: FORMAT_VERSION,
            weft_version: weft_core::VERSION.into(),
            spec: RunSpec {
                target: "primary-backup".into(),
                variant: "buggy".into(),
                ..RunSpec::default()
            },
            scenario: Scenario::default(),
            seed: 7,
            provenance: Provenance {
                campaign_seed: 1,
                run_index: 6,
                strategy: "random".into(),
                shrunk_from: None,
            },
            decisions: vec![0, 0, 0, 0, 5, 1, 1, 0],
            outcome: Outcome::SafetyViolation { property: "P".into(), detail: "d".into() },
            trace_hash: u64::MAX - 5,
            events: 10,
            faults: 1,
        }
    }

    #[test]
    fn rle_round_trips() {
        for list in [vec![], vec![0], vec![0, 0, 0, 0, 5, 1, 1, 0], vec![7; 1000]] {
            assert_eq!(rle::decode(&rle::encode(&list)).unwrap(), list);
        }
        assert_eq!(rle::encode(&[0, 0, 0, 0, 5, 1, 1, 0]), "0*4 5 1 1 0");
        assert!(rle::decode("1 x").is_err());
        assert!(rle::decode("1*y").is_err());
    }

    #[test]
    fn json_round_trips() {
        let r = sample();
        assert_eq!(Repro::parse(&r.to_json()).unwrap(), r);
    }

    #[test]
    fn truncated_and_foreign_files_are_rejected_with_a_reason() {
        let json = sample().to_json();
        let err = Repro::parse(&json[..json.len() / 2]).unwrap_err().to_string();
        assert!(err.contains("truncated"), "{err}");
        let err = Repro::parse("{\"hello\": 1}").unwrap_err().to_string();
        assert!(err.contains("format"), "{err}");
        let bumped = json.replace("\"format_version\": 1", "\"format_version\": 99");
        assert!(matches!(Repro::parse(&bumped), Err(ReproError::Version { found: 99, .. })));
    }

    #[test]
    fn a_missing_format_version_is_named_as_missing() {
        let json = sample().to_json().replace("\"format_version\": 1,", "");
        let err = Repro::parse(&json).unwrap_err().to_string();
        assert!(err.contains("missing field `format_version`"), "{err}");
        let json = sample().to_json().replace("\"format_version\": 1", "\"format_version\": \"1\"");
        let err = Repro::parse(&json).unwrap_err().to_string();
        assert!(err.contains("`format_version` is \"1\""), "{err}");
    }

    #[test]
    fn scenario_invariants_are_checked_on_read() {
        let mut r = sample();
        r.scenario.rates.crash.den = 0;
        let err = Repro::parse(&r.to_json()).unwrap_err().to_string();
        assert!(err.contains("`scenario.rates.crash.den` is 0"), "{err}");
        let mut r = sample();
        r.scenario.disk.block_size = 0;
        let err = Repro::parse(&r.to_json()).unwrap_err().to_string();
        assert!(err.contains("`scenario.disk.block_size` is 0"), "{err}");
    }

    #[test]
    fn decision_lists_and_files_are_bounded() {
        let err = rle::decode("0*9000000 1*2000000").unwrap_err();
        assert!(err.contains("more than 10000000 decisions"), "{err}");
        assert_eq!(rle::decode("0*10000000").unwrap().len(), MAX_DECISIONS);
        let err = Repro::read(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(err.contains("larger than"), "{err}");
    }

    #[test]
    fn temporary_names_differ_per_call() {
        let p = Path::new("d/x.json");
        assert_ne!(temp_path(p), temp_path(p));
        assert!(temp_path(p).starts_with("d"));
    }
}
