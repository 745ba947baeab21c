//! The programs of an exercise folder (its reference and its known mistakes) as built-in
//! implementations: each a pool of processes started by a launcher the command line hands in
//! (only `external/` starts processes), lent to one spec at a time and given back after it.
//!
//! A process is kept by the thread that started it and lent only to that thread: a child
//! dies with the thread that started it (`external::children`), so a process started by one
//! thread (the run's reference verdicts, worked out ahead) and lent to another (a worker)
//! would be killed under that worker when the first thread ends. A thread's idle processes
//! end with it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

use crate::contracts::builtin::{Builtin, Subject};
use crate::model::implementation::{ImplError, ImplInfo, Implementation, Offer, Reply, WorldHost};

/// Starts an implementation from an `--impl` value (a solution's path, or `cmd:...`).
pub type Launcher = dyn Fn(&str) -> Box<dyn Implementation + Send> + Send + Sync;

type Idle = Vec<Box<dyn Implementation + Send>>;

thread_local! {
    /// Each pool's idle processes that this thread started, by the pool's number.
    static IDLE: RefCell<HashMap<usize, Idle>> = RefCell::new(HashMap::new());
}

/// The number the next pool takes.
static NEXT_POOL: AtomicUsize = AtomicUsize::new(0);

/// The processes of one program, idle ones kept for the next spec of the thread that started them.
pub(crate) struct Pool {
    id: usize,
    target: String,
    launcher: Arc<Launcher>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("target", &self.target)
            .finish()
    }
}

impl Pool {
    pub(crate) fn new(target: String, launcher: Arc<Launcher>) -> Self {
        Pool {
            id: NEXT_POOL.fetch_add(1, Ordering::Relaxed),
            target,
            launcher,
        }
    }

    fn take(&self) -> Box<dyn Implementation + Send> {
        let idle = IDLE
            .try_with(|idle| idle.borrow_mut().get_mut(&self.id).and_then(Vec::pop))
            .ok()
            .flatten();
        idle.unwrap_or_else(|| (self.launcher)(&self.target))
    }

    fn give_back(&self, implementation: Box<dyn Implementation + Send>) {
        // A thread that is ending drops it instead, ending its process.
        let _ = IDLE.try_with(|idle| {
            idle.borrow_mut()
                .entry(self.id)
                .or_default()
                .push(implementation);
        });
    }

    /// What the program says it provides (`Implementation::offer`), asked of a process of the
    /// pool, which is kept for the next spec: an error when it does not load.
    pub(crate) fn offer(&self) -> Result<Option<Offer>, ImplError> {
        let mut lent = self.take();
        let offer = lent.offer();
        self.give_back(lent);
        offer
    }

    /// The program as a built-in implementation, described by `info`: each `create` lends it
    /// a process of the pool, which the instance gives back when it is dropped.
    pub(crate) fn builtin(&'static self, info: ImplInfo) -> Builtin {
        let factory = move |contract: &str, args: &Value, world: &mut dyn WorldHost| {
            let mut lent = self.take();
            if let Err(error) = lent.begin_spec() {
                self.give_back(lent);
                return Err(error);
            }
            match lent.create(contract, args, world) {
                Ok(Reply::Returned(_) | Reply::Undefined) => Ok(Ok(Box::new(Lent {
                    pool: self,
                    implementation: Some(lent),
                })
                    as Box<dyn Subject>)),
                Ok(reply) => {
                    self.give_back(lent);
                    Ok(Err(reply))
                }
                Err(error) => {
                    self.give_back(lent);
                    Err(error)
                }
            }
        };
        Builtin::from_subjects(info, Box::new(factory))
    }
}

/// An instance made in a lent process.
struct Lent {
    pool: &'static Pool,
    implementation: Option<Box<dyn Implementation + Send>>,
}

impl Subject for Lent {
    fn call(
        &mut self,
        method: &str,
        args: &[Value],
        world: &mut dyn WorldHost,
    ) -> Result<Reply, ImplError> {
        match &mut self.implementation {
            Some(implementation) => implementation.call(method, args, world),
            None => unreachable!("an instance holds its process until it is dropped"),
        }
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        if let Some(implementation) = self.implementation.take() {
            self.pool.give_back(implementation);
        }
    }
}
