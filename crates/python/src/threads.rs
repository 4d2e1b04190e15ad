//! The batch calls: `num_threads` as the caller asked, and the two batch loops every tokenizer
//! class uses: [`encode_batch`] (a list of lists) and [`encode_flat`] (one flat buffer).
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
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::prelude::*;
use pyo3::types::PyList;
use bytepair_core::batch::{Claims, End, FlatError, Run};
use rayon::{ThreadPool, ThreadPoolBuilder};

use crate::ids::IdBuffer;

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
    pool_of(num_threads).map(|p| p.install(f))
}

/// Our pool of `num_threads` threads (at most one per core), to `spawn` work on that the
/// caller does not wait for; None if not even a one-thread pool could be started.
pub fn pool_of(num_threads: usize) -> Option<Arc<ThreadPool>> {
    pool(num_threads.clamp(1, cores())).or_else(|| pool(1))
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

/// Texts per chunk of the one-thread loop: as many as a claim of the threaded one.
const CHUNK: usize = bytepair_core::batch::MOST_TEXTS;

/// Most bytes of text in one run of the calling thread (at least one text): a few tens of
/// microseconds of encoding between two looks at the workers' finished chunks.
const BACK_BYTES: usize = 8 << 10;

/// A batch's failure as Python's error: the encoder's own, or a MemoryError when room for the
/// ids (up to one per byte) could not be had.
fn py_error(e: FlatError<PyErr>) -> PyErr {
    match e {
        FlatError::Text { error, .. } => error,
        FlatError::NoRoom { ids } => pyo3::exceptions::PyMemoryError::new_err(format!(
            "cannot reserve room for the ids of this batch ({ids} ids, up to one per byte of text)"
        )),
    }
}

/// Python's cyclic garbage collector, paused while a batch builds its lists and resumed on
/// drop. Thousands of new lists trigger a collection every 700 allocations, and each one
/// walks every id of every young list: perf put the collector at about 7% of a batch's
/// samples, all of it serial. Lists of ints cannot form cycles, so pausing loses nothing.
pub struct GcPaused(bool);

impl GcPaused {
    pub fn new(_py: Python<'_>) -> Self {
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
/// At most one thread per core is used, this one included. The pool's workers claim chunks of
/// texts from the front of the batch; this thread claims small runs from the back, encodes
/// them with the GIL released, and between runs turns every chunk the workers finished into
/// lists (holding the GIL: building lists is the serial part of a batch, about a tenth of it
/// on English). See [`Claims`] for why the two ends and the sizes. With one thread (or one
/// chunk) everything runs here, the GIL released while encoding.
pub fn encode_batch<'py, T, F>(
    py: Python<'py>,
    texts: &[T],
    num_threads: usize,
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
    // The lists of one encoded run of texts starting at text `first`.
    let mut take = |first: usize, chunk: Run<PyErr>, lists: &mut Vec<Option<Bound<'py, PyList>>>| -> PyResult<()> {
        let mut start = 0;
        for (k, &end) in chunk.ends.iter().enumerate() {
            lists[first + k] = Some(crate::ids::list(py, &chunk.ids[start..end])?);
            start = end;
        }
        if let Some(err) = chunk.err {
            // No room for the run's ids: its first text is where the batch failed.
            let at = match err {
                FlatError::Text { index, .. } => index,
                FlatError::NoRoom { .. } => first,
            };
            if first_err.as_ref().is_none_or(|(first, _)| at < *first) {
                first_err = Some((at, py_error(err)));
            }
        }
        Ok(())
    };
    // Never more threads than cores: the extra ones would only take turns.
    let threads = num_threads.min(cores()).min(chunks);
    // No pool (one thread, or none could be started): everything here.
    let workers = if threads > 1 { pool(threads - 1) } else { None };
    let Some(workers) = workers else {
        let all: Vec<Run<PyErr>> = py.allow_threads(|| {
            let mut all = Vec::with_capacity(chunks);
            for (c, ts) in texts.chunks(CHUNK).enumerate() {
                let chunk = Run::encode(c * CHUNK, ts, &one);
                let failed = chunk.err.is_some();
                all.push(chunk);
                if failed {
                    break;
                }
            }
            all
        });
        for (c, chunk) in all.into_iter().enumerate() {
            take(c * CHUNK, chunk, &mut lists)?;
        }
        return finish(py, lists, first_err);
    };
    let claims = Claims::new(texts, threads);
    // The workers' runs from the front; this thread's short runs from the back (see `Claims`):
    // whenever it is inside one of its own, finished chunks wait for their lists.
    let (tx, rx) = std::sync::mpsc::channel::<(std::ops::Range<usize>, Run<PyErr>)>();
    let mut built = Ok(());
    // In place: this thread runs the closure (it holds the GIL and builds the lists) while the
    // spawned jobs run on the pool; no thread is started per call. The scope ends once every
    // job has returned, and a job returns as soon as nothing is left to claim.
    workers.in_place_scope(|scope| {
        for _ in 0..threads - 1 {
            let (tx, claims, one) = (tx.clone(), &claims, &one);
            scope.spawn(move |_| {
                while let Some(r) = claims.take(End::Front, usize::MAX) {
                    if tx.send((r.clone(), Run::encode(r.start, &texts[r], one))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx); // only the jobs hold senders now: `recv` fails once they are all done
        let mut rx = rx;
        let mut resolved = 0;
        let mut got = |first: usize, chunk: Run<PyErr>, resolved: &mut usize, n: usize| {
            *resolved += n;
            if built.is_ok() {
                built = take(first, chunk, &mut lists);
            }
        };
        while resolved < texts.len() {
            // The workers' finished chunks first: their lists are the work only this thread
            // can do, and a worker never waits for them.
            if let Ok((r, chunk)) = rx.try_recv() {
                got(r.start, chunk, &mut resolved, r.len());
                continue;
            }
            if let Some(r) = claims.take(End::Back, BACK_BYTES) {
                let chunk = py.allow_threads(|| Run::encode(r.start, &texts[r.clone()], &one));
                got(r.start, chunk, &mut resolved, r.len());
                continue;
            }
            // Nothing left to claim: wait (GIL released) for the chunks still being encoded.
            // (The receiver moves in and back out: a `&Receiver` may not cross threads.)
            let (next, back) = py.allow_threads(move || (rx.recv(), rx));
            rx = back;
            match next {
                Ok((r, chunk)) => got(r.start, chunk, &mut resolved, r.len()),
                Err(_) => break, // every job has returned: nothing more will come
            }
        }
    });
    built?;
    finish(py, lists, first_err)
}

/// The batch's result once every text was encoded: the first error, or the list of lists.
fn finish<'py>(py: Python<'py>, lists: Vec<Option<Bound<'py, PyList>>>, first_err: Option<(usize, PyErr)>) -> PyResult<Bound<'py, PyList>> {
    if let Some((_, e)) = first_err {
        return Err(e);
    }
    let lists: Vec<Bound<'py, PyList>> = lists.into_iter().map(|l| l.expect("every text was encoded")).collect();
    PyList::new(py, lists)
}

/// Encodes every text with `one` on up to `num_threads` threads into one flat buffer
/// (`bytepair_core::batch`): `(ids, offsets)`, text `i`'s ids at `ids[offsets[i]..offsets[i +
/// 1]]`, both handed to numpy without a copy. No Python object per text, so the GIL is
/// released for the whole call, and the only serial part is converting the texts. With one
/// thread (or none could be started) everything runs on this thread, straight into the one
/// buffer. On failure the error of the lowest-numbered failing text is raised, as a serial
/// loop would.
pub fn encode_flat<T, F>(py: Python<'_>, texts: &[T], num_threads: usize, one: F) -> PyResult<(IdBuffer, IdBuffer)>
where
    T: Deref<Target = str> + Sync,
    F: Fn(&str, &mut Vec<u32>) -> PyResult<()> + Sync,
{
    use bytepair_core::batch;

    let threads = num_threads.clamp(1, cores());
    let flat = py.allow_threads(|| {
        // This thread and threads - 1 workers (see `batch::encode_flat_on`).
        let workers = if threads > 1 && texts.len() > 1 { pool(threads - 1) } else { None };
        match workers {
            Some(pool) => batch::encode_flat_on(&pool, texts, &one),
            None => batch::encode_flat(texts, &one),
        }
    });
    let f = flat.map_err(py_error)?;
    Ok((IdBuffer::new(f.ids), IdBuffer::offsets(f.offsets)))
}
