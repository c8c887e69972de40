//! Synchronisation with deterministic wake order. [`watch`] has the API shape of
//! `tokio::sync::watch`; it exists because tokio's own watch channel spreads its waiters over
//! eight notifiers chosen with tokio's thread RNG whenever tokio is built with its `rt` or
//! `macros` feature, which makes the order waiters wake in differ between processes (with
//! `sync` alone it is round-robin and deterministic). tokio's `Mutex`, `Semaphore`, `Notify`
//! and `mpsc` use no randomness and work here unchanged.

pub mod watch {
    use std::cell::{Cell, Ref, RefCell};
    use std::fmt;
    use std::rc::Rc;
    use std::task::{Poll, Waker};

    struct Shared<T> {
        value: RefCell<T>,
        version: Cell<u64>,
        closed: Cell<bool>,
        /// Waiters in the order they started waiting; all are woken on a change.
        waiters: RefCell<Vec<Waker>>,
    }

    impl<T> Shared<T> {
        fn wake_all(&self) {
            let waiters = std::mem::take(&mut *self.waiters.borrow_mut());
            for w in waiters {
                w.wake();
            }
        }
    }

    /// The sending half; dropping it closes the channel.
    pub struct Sender<T> {
        shared: Rc<Shared<T>>,
    }

    /// A receiving half: it remembers the last version it saw.
    pub struct Receiver<T> {
        shared: Rc<Shared<T>>,
        seen: u64,
    }

    pub mod error {
        /// The sender was dropped.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct RecvError(pub(super) ());

        impl std::fmt::Display for RecvError {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("channel closed")
            }
        }

        impl std::error::Error for RecvError {}
    }

    pub fn channel<T>(init: T) -> (Sender<T>, Receiver<T>) {
        let shared = Rc::new(Shared {
            value: RefCell::new(init),
            version: Cell::new(0),
            closed: Cell::new(false),
            waiters: RefCell::new(Vec::new()),
        });
        (Sender { shared: shared.clone() }, Receiver { shared, seen: 0 })
    }

    impl<T> Sender<T> {
        /// Replaces the value, marks it changed, returns the old one.
        pub fn send_replace(&self, value: T) -> T {
            let old = std::mem::replace(&mut *self.shared.value.borrow_mut(), value);
            self.changed();
            old
        }

        /// Modifies the value in place; waiters are told only if `f` returns true.
        pub fn send_if_modified(&self, f: impl FnOnce(&mut T) -> bool) -> bool {
            let modified = f(&mut self.shared.value.borrow_mut());
            if modified {
                self.changed();
            }
            modified
        }

        pub fn send_modify(&self, f: impl FnOnce(&mut T)) {
            self.send_if_modified(|v| {
                f(v);
                true
            });
        }

        pub fn borrow(&self) -> Ref<'_, T> {
            self.shared.value.borrow()
        }

        /// A receiver that has seen the current value.
        pub fn subscribe(&self) -> Receiver<T> {
            Receiver { shared: self.shared.clone(), seen: self.shared.version.get() }
        }

        fn changed(&self) {
            self.shared.version.set(self.shared.version.get() + 1);
            self.shared.wake_all();
        }
    }

    impl<T> Drop for Sender<T> {
        fn drop(&mut self) {
            self.shared.closed.set(true);
            self.shared.wake_all();
        }
    }

    impl<T> Receiver<T> {
        pub fn borrow(&self) -> Ref<'_, T> {
            self.shared.value.borrow()
        }

        pub fn borrow_and_update(&mut self) -> Ref<'_, T> {
            self.seen = self.shared.version.get();
            self.shared.value.borrow()
        }

        /// Waits for a value this receiver has not seen.
        pub async fn changed(&mut self) -> Result<(), error::RecvError> {
            std::future::poll_fn(|cx| {
                if self.shared.version.get() != self.seen {
                    self.seen = self.shared.version.get();
                    Poll::Ready(Ok(()))
                } else if self.shared.closed.get() {
                    Poll::Ready(Err(error::RecvError(())))
                } else {
                    self.shared.waiters.borrow_mut().push(cx.waker().clone());
                    Poll::Pending
                }
            })
            .await
        }

        /// Waits until `f` holds for the current value, and returns it.
        pub async fn wait_for(
            &mut self,
            mut f: impl FnMut(&T) -> bool,
        ) -> Result<Ref<'_, T>, error::RecvError> {
            loop {
                self.seen = self.shared.version.get();
                if f(&self.shared.value.borrow()) {
                    return Ok(self.shared.value.borrow());
                }
                self.changed().await?;
            }
        }
    }

    impl<T> Clone for Receiver<T> {
        fn clone(&self) -> Self {
            Receiver { shared: self.shared.clone(), seen: self.seen }
        }
    }

    impl<T: fmt::Debug> fmt::Debug for Sender<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "Sender({:?})", self.shared.value.borrow())
        }
    }
}
