//! A byte writer over a fixed buffer, for hooks that build text without allocating: the
//! simulated machine's files and `uname` fields, the variables `exec` passes on.

/// A byte writer over a fixed buffer (no allocation); output past its end is dropped.
pub(crate) struct Text<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> Text<'a> {
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        Text { buf, len: 0 }
    }
    pub(crate) fn len(&self) -> usize {
        self.len
    }
    pub(crate) fn put(&mut self, s: &[u8]) -> &mut Self {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s[..n]);
        self.len += n;
        self
    }
    pub(crate) fn num(&mut self, mut v: u64) -> &mut Self {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.put(&digits[i..])
    }
    /// `v` in upper-case hexadecimal, zero-padded to `width` digits (C's `%0*X`).
    pub(crate) fn hex(&mut self, v: u64, width: usize) -> &mut Self {
        let mut digits = [b'0'; 16];
        let n = (64 - v.leading_zeros() as usize).div_ceil(4).max(width).min(16);
        for (k, d) in digits[16 - n..].iter_mut().rev().enumerate() {
            *d = b"0123456789ABCDEF"[((v >> (4 * k)) & 15) as usize];
        }
        self.put(&digits[16 - n..])
    }
    /// `v` in decimal, right-aligned in `width` columns (C's `%*u`).
    pub(crate) fn num_in(&mut self, v: u64, width: usize) -> &mut Self {
        let mut digits = [0u8; 20];
        let n = Text::new(&mut digits).num(v).len();
        for _ in n..width {
            self.put(b" ");
        }
        self.put(&digits[..n])
    }
}
