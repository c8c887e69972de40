//! The function an address falls in, from an ELF object's symbol table (`.symtab`, else
//! `.dynsym`): enough to say where a spinning thread spins. Reads the file; used only on the
//! way to reporting a run that cannot finish.

use std::path::Path;

fn u16_at(b: &[u8], o: usize) -> Option<u64> {
    Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?) as u64)
}
fn u32_at(b: &[u8], o: usize) -> Option<u64> {
    Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?) as u64)
}
fn u64_at(b: &[u8], o: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?))
}

/// The name of the function containing `pc`, for an object mapped at `map_start` from file
/// offset `map_offset`. `None` when the object has no symbol covering it.
pub(crate) fn function_at(path: &Path, pc: u64, map_start: u64, map_offset: u64) -> Option<String> {
    let b = std::fs::read(path).ok()?;
    if b.get(..4)? != b"\x7fELF" || *b.get(4)? != 2 {
        return None;
    }
    // The address in the object's own virtual addresses: executables (ET_EXEC) are mapped
    // where they say; shared objects and PIEs at a bias (segments keep offset == vaddr mod page
    // in practice, so map_start - map_offset is the bias).
    let vaddr = if u16_at(&b, 16)? == 2 { pc } else { pc - map_start + map_offset };
    let (shoff, shentsize, shnum) = (u64_at(&b, 40)?, u16_at(&b, 58)?, u16_at(&b, 60)?);
    let section = |i: u64| -> Option<(u64, u64, u64, u64, u64)> {
        let o = (shoff + i * shentsize) as usize;
        // (type, offset, size, link, entsize)
        Some((
            u32_at(&b, o + 4)?,
            u64_at(&b, o + 24)?,
            u64_at(&b, o + 32)?,
            u32_at(&b, o + 40)?,
            u64_at(&b, o + 56)?,
        ))
    };
    let tables: Vec<_> = (0..shnum).filter_map(section).filter(|s| s.0 == 2 || s.0 == 11).collect();
    // .symtab (2) first: it has the static functions a stripped .dynsym lacks.
    let mut ordered = tables.clone();
    ordered.sort_by_key(|s| if s.0 == 2 { 0 } else { 1 });
    ordered.into_iter().find_map(|(_, off, size, link, ent)| {
        let (_, stroff, strsize, _, _) = section(link)?;
        let ent = ent.max(24);
        (0..size / ent).find_map(|k| {
            let o = (off + k * ent) as usize;
            let (name, info, value, len) =
                (u32_at(&b, o)?, *b.get(o + 4)?, u64_at(&b, o + 8)?, u64_at(&b, o + 16)?);
            let is_func = info & 0xf == 2;
            if !is_func || !(value..value + len.max(1)).contains(&vaddr) || name >= strsize {
                return None;
            }
            let start = (stroff + name) as usize;
            let end = start + b.get(start..)?.iter().position(|&c| c == 0)?;
            Some(String::from_utf8_lossy(&b[start..end]).into_owned())
        })
    })
}
