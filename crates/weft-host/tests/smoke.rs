mod common;
use weft_core::{Decisions, NullObserver, Scenario};

#[test]
fn pingpong_smoke() {
    let cfg = common::config("pingpong", &["{id}", "{addr}", "{peers}"], 3);
    let mut d = Decisions::random(1);
    let out = weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
    print!("{}", common::render(&out));
    println!("{:?} {:?}", out.report, out.notes);
}
