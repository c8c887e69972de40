//! A Rust std program under the shim (compiled by tests/rust_std.rs with rustc): HashMap's
//! random seed, SystemTime/Instant, UdpSocket with a read timeout, thread::sleep and
//! thread::spawn all go through libc entry points the shim interposes.
//! usage: udp ADDR PEER
use std::collections::HashMap;
use std::net::UdpSocket;
use std::time::{Duration, Instant, SystemTime};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sock = UdpSocket::bind(&args[1]).unwrap();
    let t0 = Instant::now();
    let m: HashMap<&str, i32> = [("a", 1), ("b", 2), ("c", 3), ("d", 4)].into_iter().collect();
    let keys: Vec<_> = m.keys().collect();
    let epoch = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs();
    println!("keys {keys:?} epoch {epoch}");
    sock.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    sock.send_to(b"hi", &args[2]).unwrap();
    let mut buf = [0u8; 16];
    match sock.recv_from(&mut buf) {
        Ok((n, from)) => println!("got {n} bytes from {from} after {:?}", t0.elapsed()),
        Err(e) => println!("recv error {:?} after {:?}", e.kind(), t0.elapsed()),
    }
    std::thread::sleep(Duration::from_millis(5));
    let h = std::thread::spawn(|| 42);
    println!("thread {} done after {:?}", h.join().unwrap(), t0.elapsed());
}
