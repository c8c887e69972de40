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
}
