//! Thread pools for the batch calls: `num_threads` as the caller asked.
//!
//! The global rayon pool has one thread per core. A caller asking for fewer gets a pool of that
//! size, built once per size and kept (building one per call would cost more than a small batch).

use std::sync::{Arc, Mutex};

use rayon::{ThreadPool, ThreadPoolBuilder};

static POOLS: Mutex<Vec<(usize, Arc<ThreadPool>)>> = Mutex::new(Vec::new());

/// Runs `f` (which uses rayon's parallel iterators) on at most `num_threads` threads.
pub fn with_threads<R: Send>(num_threads: usize, f: impl FnOnce() -> R + Send) -> R {
    if num_threads >= rayon::current_num_threads() {
        return f();
    }
    let pool = {
        let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
        match pools.iter().find(|(n, _)| *n == num_threads) {
            Some((_, p)) => Some(p.clone()),
            None => match ThreadPoolBuilder::new().num_threads(num_threads).build() {
                Ok(p) => {
                    let p = Arc::new(p);
                    pools.push((num_threads, p.clone()));
                    Some(p)
                }
                Err(_) => None, // could not start threads: run on the global pool instead
            },
        }
    };
    match pool {
        Some(p) => p.install(f),
        None => f(),
    }
}
