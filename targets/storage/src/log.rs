//! The on-disk record format shared by the demonstration targets:
//! `[len: u32 LE][crc32: u32 LE][payload]`. Payloads are large enough (about 200 bytes) that
//! records straddle 512-byte blocks, so a torn append is possible under `posix`.

/// A record's payload for client value `v`: the value and a recognisable filler.
pub fn payload(v: u64) -> Vec<u8> {
    let mut p = v.to_le_bytes().to_vec();
    let filler = 152 + (v % 7) as usize * 24; // records stay 8-byte aligned
    p.extend((0..filler).map(|i| (v as u8).wrapping_mul(31).wrapping_add(i as u8) | 1));
    p
}

pub fn describe(p: &[u8]) -> String {
    match p.get(..8) {
        Some(b) => format!("#{}", u64::from_le_bytes(b.try_into().expect("8 bytes"))),
        None => format!("<{} garbage bytes>", p.len()),
    }
}

pub fn encode(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 8);
    out.extend((payload.len() as u32).to_le_bytes());
    out.extend(crc32(payload).to_le_bytes());
    out.extend(payload);
    out
}

/// Decodes records; see [`decode_with_len`].
pub fn decode(bytes: &[u8], trusting: bool) -> Vec<Vec<u8>> {
    decode_with_len(bytes, trusting).1
}

/// Decodes records from the start of `bytes`. Careful (`trusting = false`): stops at the first
/// record whose length runs past the end or whose checksum fails, and returns how many bytes
/// were valid. Trusting (the torn-log bug): no checksum, and a zero length is taken for padding
/// and skipped, so a record after a lost one is still read.
pub fn decode_with_len(bytes: &[u8], trusting: bool) -> (usize, Vec<Vec<u8>>) {
    let mut out = Vec::new();
    let mut at = 0;
    let mut valid = 0;
    while at + 8 <= bytes.len() {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes")) as usize;
        let crc = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().expect("4 bytes"));
        if len == 0 {
            if trusting {
                at += 8; // BUG: a zeroed header is "padding"; keep scanning
                continue;
            }
            break;
        }
        let end = at + 8 + len;
        if end > bytes.len() {
            break;
        }
        let p = &bytes[at + 8..end];
        if !trusting && crc32(p) != crc {
            break;
        }
        out.push(p.to_vec());
        at = end;
        valid = at;
    }
    (valid, out)
}

/// CRC-32 (IEEE), bitwise: small, and plenty fast for demonstration logs.
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_matches_the_standard_check_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn round_trip_and_torn_tail() {
        let mut bytes: Vec<u8> = [1, 2, 3].iter().flat_map(|&v| encode(&payload(v))).collect();
        assert_eq!(decode(&bytes, false), vec![payload(1), payload(2), payload(3)]);
        let n = bytes.len();
        bytes[n - 5] ^= 1;
        assert_eq!(decode(&bytes, false).len(), 2);
        assert_eq!(decode(&bytes, true).len(), 3, "the trusting reader accepts the torn record");
    }

    #[test]
    fn trusting_reader_skips_a_zeroed_record() {
        let first = encode(&payload(1));
        let mut bytes = vec![0u8; first.len()];
        bytes.extend(encode(&payload(2)));
        assert!(decode(&bytes, false).is_empty());
        // The zeroed region is skipped 8 bytes at a time until the next header lines up.
        assert!(decode(&bytes, true).contains(&payload(2)));
    }
}
