//! The built-in targets, by name.

use weft_core::Target;

pub fn all() -> Vec<Box<dyn Target>> {
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

pub fn find(name: &str) -> anyhow::Result<Box<dyn Target>> {
    let targets = all();
    let known: Vec<&str> = targets.iter().map(|t| t.info().name).collect::<Vec<_>>();
    let known = known.join(", ");
    all().into_iter().find(|t| t.info().name == name).ok_or_else(|| {
        anyhow::anyhow!("unknown target `{name}` (known: {known}; see `weft targets`)")
    })
}
