//! The targets a command line knows, by name: installed by each [`crate::main_with`] call (the
//! `weft` binary installs [`builtin_targets`], a user's binary its own).

use std::sync::{Arc, Mutex};
use weft_core::Target;

/// None until [`install`]: then [`all`] is [`builtin_targets`] (code that uses these modules
/// without `main_with`, like the fuzz test, sees the `weft` binary's targets).
static TARGETS: Mutex<Option<Vec<Arc<dyn Target>>>> = Mutex::new(None);

/// weft's own targets: the canary, Chord, omnipaxos, raft-rs, the storage demos and `process`
/// (unmodified programs under the shim).
#[cfg(feature = "builtin-targets")]
pub fn builtin_targets() -> Vec<Box<dyn Target>> {
    let mut all: Vec<Box<dyn Target>> = vec![
        Box::new(weft_target_primary_backup::PrimaryBackup),
        Box::new(weft_target_chord::Chord),
        Box::new(weft_target_omnipaxos::OmniPaxos),
        Box::new(weft_target_raft_rs::RaftRs),
        Box::new(weft_host::ProcessTarget),
        Box::new(weft_target_async_kv::AsyncKv),
    ];
    for demo in weft_target_storage::Demo::ALL {
        all.push(Box::new(weft_target_storage::StorageDemo(demo)));
    }
    all
}

/// Without the `builtin-targets` feature: only `process` (unmodified programs under the shim),
/// which the command line itself depends on.
#[cfg(not(feature = "builtin-targets"))]
pub fn builtin_targets() -> Vec<Box<dyn Target>> {
    vec![Box::new(weft_host::ProcessTarget)]
}

/// Makes `targets` the ones this process's commands know. Names must be unique.
#[allow(dead_code)] // unused where a test includes this module by path (tests/fuzz.rs)
pub fn install(targets: Vec<Box<dyn Target>>) -> Result<(), String> {
    let mut names: Vec<&'static str> = Vec::new();
    for t in &targets {
        let name = t.info().name;
        if names.contains(&name) {
            return Err(format!("two targets are named `{name}`: target names must be unique"));
        }
        names.push(name);
    }
    let targets: Vec<Arc<dyn Target>> = targets.into_iter().map(Arc::from).collect();
    *TARGETS.lock().unwrap_or_else(|e| e.into_inner()) = Some(targets);
    Ok(())
}

pub fn all() -> Vec<Arc<dyn Target>> {
    let installed = TARGETS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    installed.unwrap_or_else(|| builtin_targets().into_iter().map(Arc::from).collect())
}

pub fn find(name: &str) -> anyhow::Result<Arc<dyn Target>> {
    let targets = all();
    let known: Vec<&str> = targets.iter().map(|t| t.info().name).collect::<Vec<_>>();
    let known = known.join(", ");
    targets.into_iter().find(|t| t.info().name == name).ok_or_else(|| {
        anyhow::anyhow!("unknown target `{name}` (known: {known}; see `weft targets`)")
    })
}
