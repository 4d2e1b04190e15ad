//! The batch calls: `num_threads` as the caller asked, and the one batch loop every tokenizer
//! class uses ([`encode_batch`]).
//!
//! Every parallel call runs on pools of our own, never on rayon's global pool: a pool's
//! threads do not survive `fork`, and a job sent to a pool whose threads are gone waits
//! forever (a data loader's forked workers hung on their first batch call). So the pools
//! remember the process that built them, and a forked child builds its own on first use
//! (the parent's are leaked, not dropped: dropping one would wait on threads that do not
//! exist). Rayon's global pool is never touched, so a child has nothing of it to fall into.
//!
//! A caller asking for n threads gets a pool of that size (at most one per core), built once
//! per size and kept (building one per call would cost more than a small batch). A batch on
//! n threads runs n - 1 pool workers beside the calling thread.

use std::ops::Deref;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::prelude::*;
use pyo3::types::PyList;
use rayon::prelude::*;
use rayon::{ThreadPool, ThreadPoolBuilder};

use crate::ids::IntCache;

/// Threads of a batch call given `num_threads=None` (tiktoken's default, which it accepts
/// None for too).
pub const DEFAULT_THREADS: usize = 8;

/// The pools built so far, and the process they were built in.
struct Pools {
    pid: u32,
    by_size: Vec<(usize, Arc<ThreadPool>)>,
}

static POOLS: Mutex<Pools> = Mutex::new(Pools { pid: 0, by_size: Vec::new() });

/// Cores available to this process (what rayon's global pool would have had), read once.
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1))
}

/// Our pool of `n` threads, built in this process; None if its threads could not be started.
fn pool(n: usize) -> Option<Arc<ThreadPool>> {
    let pid = std::process::id();
    {
        let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
        if pools.pid != pid {
            // Built before a fork (or never built): their threads are not in this process.
            for (_, p) in pools.by_size.drain(..) {
                std::mem::forget(p);
            }
            pools.pid = pid;
        }
        if let Some((_, p)) = pools.by_size.iter().find(|(k, _)| *k == n) {
            return Some(p.clone());
        }
    }
    // Built outside the lock, so a fork from another thread meanwhile cannot leave the child
    // a lock that is held forever.
    let built = Arc::new(ThreadPoolBuilder::new().num_threads(n).thread_name(|i| format!("bytepair-{i}")).build().ok()?);
    let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    if pools.pid != pid {
        return Some(built); // forked while building (cannot happen in the child): use it once
    }
    if let Some((_, p)) = pools.by_size.iter().find(|(k, _)| *k == n) {
        return Some(p.clone()); // another thread built one first
    }
    pools.by_size.push((n, built.clone()));
    Some(built)
}

/// Runs `f` (which uses rayon's parallel iterators or `rayon::join`) on one of our pools of
/// at most `num_threads` threads (and at most one per core). None if not even a one-thread
/// pool could be started: `f` is then not run, since outside a pool rayon would send its jobs
/// to the global pool, the one that is dead in a forked child.
pub fn with_threads<R: Send>(num_threads: usize, f: impl FnOnce() -> R + Send) -> Option<R> {
    let n = num_threads.clamp(1, cores());
    pool(n).or_else(|| pool(1)).map(|p| p.install(f))
}

/// [`with_threads`], with "could not start threads" as a Python error.
pub fn on_threads<R: Send>(num_threads: usize, f: impl FnOnce() -> PyResult<R> + Send) -> PyResult<R> {
    with_threads(num_threads, f).unwrap_or_else(|| Err(pyo3::exceptions::PyRuntimeError::new_err("bytepair: cannot start worker threads")))
}

/// Runs `f` on our pool of one thread per core: for construction code in the core that uses
/// `rayon::join` or parallel iterators, which outside a pool would use rayon's global pool.
pub fn on_pool<R: Send>(f: impl FnOnce() -> PyResult<R> + Send) -> PyResult<R> {
    on_threads(cores(), f)
}

/// What a worker hands back for one chunk of texts: all their ids in one vector (one
/// allocation per chunk, not per text), where each text's ids end, and the first error with
/// the index of its text. A chunk stops at its first error; `ends` covers the texts before it.
struct Chunk {
    ids: Vec<u32>,
    ends: Vec<usize>,
    err: Option<(usize, PyErr)>,
}

/// Texts per chunk: one channel send, one wake-up of the caller and one GIL round trip per
/// chunk rather than per text.
const CHUNK: usize = 16;

fn encode_chunk<T, F>(first: usize, texts: &[T], one: &F) -> Chunk
where
    T: Deref<Target = str>,
    F: Fn(&str, &mut Vec<u32>) -> PyResult<()>,
{
    // Room for the most ids the texts can give (see `ids::reserve_for`): no regrowth.
    let bytes: usize = texts.iter().map(|t| t.len()).sum();
    let ids = match crate::ids::ids_vec(crate::ids::reserve_for(bytes)) {
        Ok(ids) => ids,
        Err(e) => return Chunk { ids: Vec::new(), ends: Vec::new(), err: Some((first, e)) },
    };
    let mut chunk = Chunk { ids, ends: Vec::with_capacity(texts.len()), err: None };
    for (k, t) in texts.iter().enumerate() {
        if let Err(e) = one(t, &mut chunk.ids) {
            chunk.err = Some((first + k, e));
            break;
        }
        chunk.ends.push(chunk.ids.len());
    }
    chunk
}

/// Python's cyclic garbage collector, paused while a batch builds its lists and resumed on
/// drop. Thousands of new lists trigger a collection every 700 allocations, and each one
/// walks every id of every young list: perf put the collector at about 7% of a batch's
/// samples, all of it serial. Lists of ints cannot form cycles, so pausing loses nothing.
struct GcPaused(bool);

impl GcPaused {
    fn new(_py: Python<'_>) -> Self {
        // Safety: the GIL is held (`_py`); PyGC_Disable returns the previous state.
        GcPaused(unsafe { pyo3::ffi::PyGC_Disable() } == 1)
    }
}

impl Drop for GcPaused {
    fn drop(&mut self) {
        if self.0 {
            // Safety: dropped on the thread that made it, which still holds the GIL.
            unsafe { pyo3::ffi::PyGC_Enable() };
        }
    }
}

/// Encodes every text with `one` (which appends a text's ids to the vector it is given) on up
/// to `num_threads` threads and returns the `list[list[int]]`. On failure the error of the
/// lowest-numbered failing text is raised, as a serial loop would.
///
/// At most one thread per core is used, this one included. Chunks of [`CHUNK`] texts are
/// claimed from a shared counter by the worker threads and by this thread, which encodes (GIL
/// released) whenever no finished chunk is waiting and otherwise, holding the GIL, turns
/// finished chunks into lists: building lists is the serial part of a batch, and interleaving
/// it with encoding keeps every core busy. With one thread (or one chunk) everything runs
/// here, the GIL released while encoding.
pub fn encode_batch<'py, T, F>(
    py: Python<'py>,
    texts: &[T],
    num_threads: usize,
    ints: &IntCache,
    one: F,
) -> PyResult<Bound<'py, PyList>>
where
    T: Deref<Target = str> + Sync,
    F: Fn(&str, &mut Vec<u32>) -> PyResult<()> + Sync,
{
    let _gc = GcPaused::new(py);
    let chunks = texts.len().div_ceil(CHUNK);
    let mut lists: Vec<Option<Bound<'py, PyList>>> = vec![None; texts.len()];
    let mut first_err: Option<(usize, PyErr)> = None;
    let mut take = |c: usize, chunk: Chunk, lists: &mut Vec<Option<Bound<'py, PyList>>>| -> PyResult<()> {
        let mut start = 0;
        for (k, &end) in chunk.ends.iter().enumerate() {
            lists[c * CHUNK + k] = Some(ints.list(py, &chunk.ids[start..end])?);
            start = end;
        }
        if let Some((at, e)) = chunk.err {
            if first_err.as_ref().is_none_or(|(first, _)| at < *first) {
                first_err = Some((at, e));
            }
        }
        Ok(())
    };
    // Never more threads than cores: the extra ones would only take turns.
    let threads = num_threads.min(cores()).min(chunks);
    if threads <= 1 {
        let all: Vec<Chunk> = py.allow_threads(|| {
            let mut all = Vec::with_capacity(chunks);
            for (c, ts) in texts.chunks(CHUNK).enumerate() {
                let chunk = encode_chunk(c * CHUNK, ts, &one);
                let failed = chunk.err.is_some();
                all.push(chunk);
                if failed {
                    break;
                }
            }
            all
        });
        for (c, chunk) in all.into_iter().enumerate() {
            take(c, chunk, &mut lists)?;
        }
    } else {
        // The calling thread is one of the `threads`: whenever no finished chunk is waiting
        // for its lists, it claims and encodes a chunk itself. So n threads keep n cores busy,
        // rather than n workers plus a list builder taking turns on them (measured: 1.5-1.7x
        // on 2 threads that way, the list building being about a tenth of the work).
        let workers = threads - 1;
        let next = AtomicUsize::new(0);
        let claim = || {
            let c = next.fetch_add(1, Ordering::Relaxed);
            (c < chunks).then_some(c)
        };
        let encode = |c: usize| {
            let first = c * CHUNK;
            encode_chunk(first, &texts[first..(first + CHUNK).min(texts.len())], &one)
        };
        let (tx, rx) = std::sync::mpsc::channel::<(usize, Chunk)>();
        let mut built = Ok(());
        std::thread::scope(|scope| {
            let (claim, encode) = (&claim, &encode);
            // If no pool starts, `tx` is dropped unused and this thread encodes every chunk.
            scope.spawn(move || {
                with_threads(workers, || {
                    (0..workers).into_par_iter().for_each_with(tx, |tx, _| {
                        while let Some(c) = claim() {
                            if tx.send((c, encode(c))).is_err() {
                                break;
                            }
                        }
                    })
                })
            });
            let mut rx = rx;
            for _ in 0..chunks {
                let (c, chunk) = match rx.try_recv() {
                    Ok(got) => got,
                    Err(_) => match claim() {
                        Some(c) => (c, py.allow_threads(|| encode(c))),
                        None => {
                            let (got, back) = py.allow_threads(move || (rx.recv(), rx));
                            rx = back;
                            let Ok(got) = got else { break };
                            got
                        }
                    },
                };
                if built.is_ok() {
                    built = take(c, chunk, &mut lists);
                }
            }
        });
        built?;
    }
    if let Some((_, e)) = first_err {
        return Err(e);
    }
    let lists: Vec<Bound<'py, PyList>> = lists.into_iter().map(|l| l.expect("every text was encoded")).collect();
    PyList::new(py, lists)
}
