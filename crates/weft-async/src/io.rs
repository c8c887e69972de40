//! `AsyncReadExt` / `AsyncWriteExt` with the method names of `tokio::io`, for
//! [`crate::net::TcpStream`] and its halves, so `use tokio::io::{AsyncReadExt, AsyncWriteExt}`
//! becomes `use weft_async::io::{…}`. Integers are big-endian, as in tokio.
// The futures are not `Send`: one thread runs a node, and nothing here crosses threads.
#![allow(async_fn_in_trait)]

use crate::net::{OwnedReadHalf, OwnedWriteHalf, TcpStream};
pub use std::io::{Error, ErrorKind, Result};

/// Reading from a stream.
pub trait AsyncReadExt {
    /// Reads what has arrived (at least one byte), or 0 at the end of the stream.
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize>;

    /// Fills `buf`, or fails with `UnexpectedEof`.
    async fn read_exact(&mut self, buf: &mut [u8]) -> Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            match self.read(&mut buf[done..]).await? {
                0 => return Err(Error::new(ErrorKind::UnexpectedEof, "early eof")),
                n => done += n,
            }
        }
        Ok(done)
    }

    async fn read_u32(&mut self) -> Result<u32> {
        let mut b = [0u8; 4];
        self.read_exact(&mut b).await?;
        Ok(u32::from_be_bytes(b))
    }

    async fn read_u64(&mut self) -> Result<u64> {
        let mut b = [0u8; 8];
        self.read_exact(&mut b).await?;
        Ok(u64::from_be_bytes(b))
    }

    /// Reads to the end of the stream.
    async fn read_to_end(&mut self, out: &mut Vec<u8>) -> Result<usize> {
        let mut buf = [0u8; 4096];
        let start = out.len();
        loop {
            match self.read(&mut buf).await? {
                0 => return Ok(out.len() - start),
                n => out.extend_from_slice(&buf[..n]),
            }
        }
    }
}

/// Writing to a stream. Writes complete at once: the simulated send buffer is unbounded.
pub trait AsyncWriteExt {
    async fn write(&mut self, buf: &[u8]) -> Result<usize>;

    /// Ends the stream for writing (the peer reads 0 after what was written).
    async fn shutdown(&mut self) -> Result<()>;

    async fn write_all(&mut self, buf: &[u8]) -> Result<()> {
        self.write(buf).await.map(|_| ())
    }

    async fn write_u32(&mut self, v: u32) -> Result<()> {
        self.write_all(&v.to_be_bytes()).await
    }

    async fn write_u64(&mut self, v: u64) -> Result<()> {
        self.write_all(&v.to_be_bytes()).await
    }

    async fn flush(&mut self) -> Result<()> {
        Ok(())
    }
}

impl AsyncReadExt for TcpStream {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        self.read_some(buf).await
    }
}

impl AsyncReadExt for OwnedReadHalf {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        self.read_some(buf).await
    }
}

impl AsyncWriteExt for TcpStream {
    async fn write(&mut self, buf: &[u8]) -> Result<usize> {
        self.write_some(buf)
    }
    async fn shutdown(&mut self) -> Result<()> {
        self.shutdown_write();
        Ok(())
    }
}

impl AsyncWriteExt for OwnedWriteHalf {
    async fn write(&mut self, buf: &[u8]) -> Result<usize> {
        self.write_some(buf)
    }
    async fn shutdown(&mut self) -> Result<()> {
        self.shutdown_write();
        Ok(())
    }
}
