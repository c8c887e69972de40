//! `weft targets`: lists the installed targets with their variants, options (with the values
//! each allows) and properties.

use crate::exit::Code;
use crate::registry;
use anyhow::Result;

pub(super) fn targets() -> Result<Code> {
    for t in registry::all() {
        let info = t.info();
        println!("{}  {}", info.name, info.summary);
        for (i, v) in info.variants.iter().enumerate() {
            let default = if i == 0 { " (default)" } else { "" };
            println!("  --variant {:<12} {}{default}", v.name, v.summary);
        }
        for o in &t.options() {
            let allowed = match o.allowed {
                weft_core::Allowed::Any => String::new(),
                a => format!(" ({})", a.describe()),
            };
            println!("  -o {:<22} {}{allowed}", format!("{}={}", o.name, o.default), o.summary);
        }
        for p in &info.properties {
            println!("  property {:<28} {:<10} {}", p.name, p.modality.to_string(), p.summary);
        }
        println!();
    }
    Ok(Code::Ok)
}
