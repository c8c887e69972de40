//! What the servers and clients say to each other, and length-prefixed JSON frames on a
//! stream.

use crate::sys::{AsyncReadExt, AsyncWriteExt};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io;

/// A server's whole state machine: the key-value map and the version that orders states.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The term of the leader that produced this state.
    pub last_term: u64,
    pub index: u64,
    pub kv: BTreeMap<u64, u64>,
}

impl Snapshot {
    pub fn version(&self) -> (u64, u64) {
        (self.last_term, self.index)
    }
}

/// Between servers: votes over UDP, replication over a stream.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Peer {
    RequestVote { term: u64, candidate: u32, version: (u64, u64) },
    Vote { term: u64, granted: bool },
    Append { term: u64, leader: u32, snap: Snapshot },
    AppendAck { term: u64, index: u64 },
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Request {
    Get { key: u64 },
    Put { key: u64, value: u64 },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Response {
    /// A write took effect, or a read returned this value.
    Done(Option<u64>),
    NotLeader {
        hint: Option<u32>,
    },
    /// The leader could not confirm the operation (it may still take effect).
    Unavailable,
}

pub fn encode<T: Serialize>(msg: &T) -> Vec<u8> {
    serde_json::to_vec(msg).expect("messages serialize")
}

pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> io::Result<T> {
    serde_json::from_slice(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

pub async fn send_frame<W: AsyncWriteExt + Unpin, T: Serialize>(
    w: &mut W,
    msg: &T,
) -> io::Result<()> {
    let body = encode(msg);
    let mut frame = (body.len() as u32).to_be_bytes().to_vec();
    frame.extend_from_slice(&body);
    w.write_all(&frame).await
}

pub async fn recv_frame<R: AsyncReadExt + Unpin, T: DeserializeOwned>(r: &mut R) -> io::Result<T> {
    let len = r.read_u32().await? as usize;
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).await?;
    decode(&body)
}
