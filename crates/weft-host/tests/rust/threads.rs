//! Rust std synchronisation under the shim (compiled by tests/rust_std.rs): Mutex and Condvar
//! contention, an mpsc channel and joins all wait through futexes, which std reaches with
//! `syscall(SYS_futex, …)`.
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

fn main() {
    let counter = Arc::new(Mutex::new(Vec::new()));
    let pair = Arc::new((Mutex::new(0u32), Condvar::new()));
    let (tx, rx) = mpsc::channel();
    let mut handles = Vec::new();
    for id in 0..3u32 {
        let counter = Arc::clone(&counter);
        let pair = Arc::clone(&pair);
        let tx = tx.clone();
        handles.push(std::thread::spawn(move || {
            for k in 0..3 {
                let mut v = counter.lock().unwrap();
                v.push(id * 10 + k);
                drop(v);
                std::thread::sleep(Duration::from_millis(1 + id as u64));
            }
            let (m, c) = &*pair;
            *m.lock().unwrap() += 1;
            c.notify_all();
            tx.send(id).unwrap();
        }));
    }
    drop(tx);
    let (m, c) = &*pair;
    let done = c.wait_while(m.lock().unwrap(), |n| *n < 3).unwrap();
    println!("all {} workers done", *done);
    drop(done);
    let order: Vec<u32> = rx.iter().collect();
    println!("finished in order {order:?}");
    for h in handles {
        h.join().unwrap();
    }
    let v = counter.lock().unwrap();
    println!("pushes {:?}", *v);
    let timed = c.wait_timeout(m.lock().unwrap(), Duration::from_millis(20)).unwrap();
    println!("wait_timeout timed out {}", timed.1.timed_out());
}
