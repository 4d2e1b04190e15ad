//! The batch calls: `num_threads` as the caller asked, and the one batch loop every tokenizer
//! class uses ([`encode_batch`]).
//!
//! The global rayon pool has one thread per core. A caller asking for fewer gets a pool of that
//! size, built once per size and kept (building one per call would cost more than a small batch).

use std::ops::Deref;
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::PyList;
use rayon::prelude::*;
use rayon::{ThreadPool, ThreadPoolBuilder};

use crate::ids::IntCache;

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

/// Encodes every text with `one` on up to `num_threads` threads and returns the `list[list[int]]`.
///
/// Worker threads encode with the GIL released while this thread, holding the GIL only
/// between results, turns each finished result into a list: building lists is the serial
/// part of a batch, and overlapping it with the encoding is what lets a batch use the cores.
/// With one thread (or one text) everything runs here, the GIL released while encoding.
pub fn encode_batch<'py, T, F>(
    py: Python<'py>,
    texts: &[T],
    num_threads: usize,
    ints: &IntCache,
    one: F,
) -> PyResult<Bound<'py, PyList>>
where
    T: Deref<Target = str> + Sync,
    F: Fn(&str) -> PyResult<Vec<u32>> + Sync,
{
    if num_threads <= 1 || texts.len() <= 1 {
        let all = py.allow_threads(|| texts.iter().map(|t| one(t)).collect::<PyResult<Vec<_>>>())?;
        let lists = all.iter().map(|ids| ints.list(py, ids)).collect::<PyResult<Vec<_>>>()?;
        return PyList::new(py, lists);
    }
    let mut lists: Vec<Option<Bound<'py, PyList>>> = vec![None; texts.len()];
    // Texts go out in chunks of CHUNK and come back a chunk per message: one channel send, one
    // wake-up of this thread and one GIL round trip per chunk rather than per text.
    const CHUNK: usize = 16;
    let chunks = texts.len().div_ceil(CHUNK);
    let (tx, rx) = std::sync::mpsc::channel::<(usize, Vec<PyResult<Vec<u32>>>)>();
    let mut first_err = None;
    std::thread::scope(|scope| {
        let one = &one;
        scope.spawn(move || {
            with_threads(num_threads, || {
                texts.par_chunks(CHUNK).enumerate().for_each_with(tx, |tx, (c, ts)| {
                    let _ = tx.send((c, ts.iter().map(|t| one(t)).collect()));
                })
            })
        });
        let mut rx = rx;
        for _ in 0..chunks {
            let (got, back) = py.allow_threads(move || (rx.recv(), rx));
            rx = back;
            let Ok((c, results)) = got else { break };
            for (k, res) in results.into_iter().enumerate() {
                match res.and_then(|ids| ints.list(py, &ids)) {
                    Ok(list) => lists[c * CHUNK + k] = Some(list),
                    Err(e) => {
                        first_err.get_or_insert(e);
                    }
                }
            }
        }
    });
    if let Some(e) = first_err {
        return Err(e);
    }
    let lists: Vec<Bound<'py, PyList>> = lists.into_iter().map(|l| l.expect("every text was encoded")).collect();
    PyList::new(py, lists)
}
