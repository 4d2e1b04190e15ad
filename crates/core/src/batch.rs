//! A batch's ids in one buffer: the flat layout (Arrow's list layout) of many encoded texts.
//!
//! Text `i`'s ids are `ids[offsets[i]..offsets[i + 1]]`, and `offsets` has one entry more than
//! there are texts, starting at 0. Such a pair is what Arrow, Ray and HF `datasets` take as a
//! column of id lists without a copy, and what a training loop slices windows from; building
//! it costs no allocation per text, where a list of lists costs one vector (and, in Python, one
//! list object and one reference per id) per text.
//!
//! - [`encode_flat`]: on the calling thread, every text straight into the one buffer (no
//!   copy at all).
//! - [`encode_flat_on`]: this thread and a pool's workers, from the two ends of the batch
//!   ([`Claims`]). This thread's texts, the batch's first ones, go straight into the one
//!   buffer; each worker's run into a vector of its own, appended once the two sides meet (one
//!   pass over the workers' ids; knowing their places first would need every text's count,
//!   which costs as much as encoding it).
//!
//! The encoder of one text is the caller's closure (it appends a text's ids to the vector it
//! is given), so the special-token policy and errors stay the caller's: this module owns only
//! the layout, the split into runs ([`Claims`], which the binding's list batches use too) and the order of errors (the lowest-numbered failing text,
//! as a serial loop would report, whichever thread met it first).

use std::collections::TryReserveError;
use std::ops::{Deref, Range};
use std::sync::Mutex;

/// The ids of a batch and where each text's ids start (see the module docs). Offsets are
/// `i64`, as Arrow's large lists and numpy's indexes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flat {
    pub ids: Vec<u32>,
    pub offsets: Vec<i64>,
}

/// Why a flat batch failed.
#[derive(Debug)]
pub enum FlatError<E> {
    /// The encoder failed on text `index` (the lowest-numbered text it failed on).
    Text { index: usize, error: E },
    /// No room could be reserved for `ids` ids (sized by the input: up to one id per byte).
    NoRoom { ids: usize },
}

/// The most ids `texts` can give: one per byte (every token is at least one byte), with room
/// for a BOS and an EOS per text. Reserving it means no vector ever grows (growing copies into
/// fresh pages); pages reserved but never written cost no memory.
fn room<T: Deref<Target = str>>(texts: &[T]) -> usize {
    let bytes = texts.iter().map(|t| t.len()).fold(0usize, usize::saturating_add);
    bytes.saturating_add(texts.len().saturating_mul(2)).saturating_add(16)
}

fn reserved<T>(n: usize) -> Result<Vec<T>, TryReserveError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)?;
    Ok(v)
}

/// Offsets never exceed `isize::MAX` (a vector's length), so the cast is exact.
fn offset(n: usize) -> i64 {
    n as i64
}

/// A flat batch's ids and offsets (the first, 0, pushed), reserved up front for the most ids
/// `texts` can give ([`room`]) and one offset per text.
fn buffers<T: Deref<Target = str>, E>(texts: &[T]) -> Result<(Vec<u32>, Vec<i64>), FlatError<E>> {
    let n = room(texts);
    let ids = reserved(n).map_err(|_| FlatError::NoRoom { ids: n })?;
    let mut offsets = reserved(texts.len() + 1).map_err(|_| FlatError::NoRoom { ids: texts.len() + 1 })?;
    offsets.push(0);
    Ok((ids, offsets))
}

/// Every text of `texts`, in order, encoded by `one` straight into one buffer, on this thread.
/// Stops at the first text `one` fails on.
pub fn encode_flat<T, E>(texts: &[T], mut one: impl FnMut(&str, &mut Vec<u32>) -> Result<(), E>) -> Result<Flat, FlatError<E>>
where
    T: Deref<Target = str>,
{
    let (mut ids, mut offsets) = buffers(texts)?;
    for (index, t) in texts.iter().enumerate() {
        one(t, &mut ids).map_err(|error| FlatError::Text { index, error })?;
        offsets.push(offset(ids.len()));
    }
    Ok(Flat { ids, offsets })
}

/// Most texts in one claim: one hand-back per claim (a channel send, a wake-up of the caller,
/// for lists a GIL round trip) rather than per text.
pub const MOST_TEXTS: usize = 16;

/// Which end of the unclaimed texts a thread takes from.
#[derive(Clone, Copy)]
pub enum End {
    Front,
    Back,
}

/// Who encodes which texts of a batch: one side takes runs of texts from the front, the other
/// from the back, until the two meet; each run in text order.
///
/// A run is a share of what is left: about `1 / (2 * threads)` of the unclaimed bytes (at
/// least one text, at most [`MOST_TEXTS`] and the caller's byte bound). Runs shrink as the
/// batch runs out, so the last run anyone takes is small and the threads finish together:
/// with fixed runs the thread that takes the last one finishes it while the others idle. Bytes,
/// not texts, so one long text among short ones makes a run of its own. Two ends rather than
/// one counter because one side is special: for lists the calling thread (which also builds
/// every list, and so takes short runs between looks at the workers' results), for a flat
/// batch the calling thread again (which writes straight into the batch's buffer, so its
/// texts must be one run from text 0; see [`encode_flat_on`]).
pub struct Claims {
    /// Texts [front, back) are unclaimed.
    span: Mutex<(usize, usize)>,
    /// Bytes of text before each text, and of the whole batch at the end.
    starts: Vec<usize>,
    threads: usize,
}

impl Claims {
    pub fn new<T: Deref<Target = str>>(texts: &[T], threads: usize) -> Self {
        let mut starts = Vec::with_capacity(texts.len() + 1);
        let mut at = 0usize;
        starts.push(0);
        for t in texts {
            at = at.saturating_add(t.len());
            starts.push(at);
        }
        Claims { span: Mutex::new((0, texts.len())), starts, threads: threads.max(1) }
    }

    /// Leaves nothing more to claim: once the front side fails, nothing after it matters.
    pub fn close(&self) {
        let mut span = self.span.lock().unwrap_or_else(|e| e.into_inner());
        span.1 = span.0;
    }

    /// The next run from `end` (see the type's docs), of at most `most_bytes` bytes unless a
    /// single text is longer; None once every text is claimed.
    pub fn take(&self, end: End, most_bytes: usize) -> Option<Range<usize>> {
        let mut span = self.span.lock().unwrap_or_else(|e| e.into_inner());
        let (front, back) = *span;
        if front == back {
            return None;
        }
        let left = self.starts[back] - self.starts[front];
        let share = (left / (2 * self.threads)).clamp(1, most_bytes.max(1));
        let bytes = |a: usize, b: usize| self.starts[b] - self.starts[a];
        match end {
            End::Front => {
                let mut to = front + 1;
                while to < back && to - front < MOST_TEXTS && bytes(front, to + 1) <= share {
                    to += 1;
                }
                span.0 = to;
                Some(front..to)
            }
            End::Back => {
                let mut from = back - 1;
                while from > front && back - from < MOST_TEXTS && bytes(from - 1, back) <= share {
                    from -= 1;
                }
                span.1 = from;
                Some(from..back)
            }
        }
    }
}

/// One run of a batch encoded into a vector of its own (a flat batch's worker run, a list
/// batch's run): its ids, where each of its texts ends (relative to the run), and the first
/// failure (the run stops there).
pub struct Run<E> {
    pub ids: Vec<u32>,
    pub ends: Vec<usize>,
    pub err: Option<FlatError<E>>,
}

impl<E> Run<E> {
    /// `texts`, text `first` of the batch onward, each encoded by `one` into the run's vector,
    /// reserved up front for the most ids they can give.
    pub fn encode<T: Deref<Target = str>>(first: usize, texts: &[T], one: &impl Fn(&str, &mut Vec<u32>) -> Result<(), E>) -> Self {
        let n = room(texts);
        let mut run = Run { ids: Vec::new(), ends: Vec::with_capacity(texts.len()), err: None };
        match reserved(n) {
            Ok(ids) => run.ids = ids,
            Err(_) => {
                run.err = Some(FlatError::NoRoom { ids: n });
                return run;
            }
        }
        for (k, t) in texts.iter().enumerate() {
            if let Err(error) = one(t, &mut run.ids) {
                run.err = Some(FlatError::Text { index: first + k, error });
                break;
            }
            run.ends.push(run.ids.len());
        }
        run
    }
}

/// [`encode_flat`] with the workers of `pool` beside this thread, with the same result (ids,
/// offsets and which error). On a pool of no use (one text) it is [`encode_flat`].
///
/// This thread takes runs from the front ([`Claims`]) and encodes them straight into the
/// batch's buffer, reserved up front for the most ids the batch can give (as [`encode_flat`]
/// does; pages never written cost nothing): its texts are always the batch's first ones, so
/// their place is known. Each worker takes runs from the back, each into a vector of its own.
/// When the two sides meet, the workers' runs are appended after this thread's ids, the only
/// copy: about the workers' share of the ids rather than all of them. Measured against the
/// runs of fixed size that rayon's workers stole, with this thread asleep (benchmarks/
/// two_threads.py, docs/engine.md section 4).
///
/// Errors: this thread stops at its first failing text (every text before it succeeded); a
/// worker's run stops at its own first failure, and the lowest index wins, as a serial loop
/// would report it.
pub fn encode_flat_on<T, E, F>(pool: &rayon::ThreadPool, texts: &[T], one: F) -> Result<Flat, FlatError<E>>
where
    T: Deref<Target = str> + Sync,
    E: Send,
    F: Fn(&str, &mut Vec<u32>) -> Result<(), E> + Sync,
{
    let workers = pool.current_num_threads();
    if texts.len() <= 1 {
        return encode_flat(texts, one);
    }
    let (mut ids, mut offsets) = buffers(texts)?;
    let claims = Claims::new(texts, workers + 1);
    let runs: Mutex<Vec<(usize, Run<E>)>> = Mutex::new(Vec::new());
    let mut mine: Option<FlatError<E>> = None;
    pool.in_place_scope(|scope| {
        for _ in 0..workers {
            let (claims, runs, one) = (&claims, &runs, &one);
            scope.spawn(move |_| {
                while let Some(r) = claims.take(End::Back, usize::MAX) {
                    let run = Run::encode(r.start, &texts[r.clone()], one);
                    runs.lock().unwrap_or_else(|e| e.into_inner()).push((r.start, run));
                }
            });
        }
        'claims: while let Some(r) = claims.take(End::Front, usize::MAX) {
            for (k, t) in texts[r.clone()].iter().enumerate() {
                if let Err(error) = one(t, &mut ids) {
                    mine = Some(FlatError::Text { index: r.start + k, error });
                    // Every text before this one succeeded: nothing a worker meets can come
                    // first, so the workers need claim nothing more.
                    claims.close();
                    break 'claims;
                }
                offsets.push(offset(ids.len()));
            }
        }
    });
    if let Some(err) = mine {
        return Err(err);
    }
    let mut runs = runs.into_inner().unwrap_or_else(|e| e.into_inner());
    runs.sort_unstable_by_key(|(first, _)| *first);
    // In text order each run stops at its own first failure, so the first run that failed
    // holds the lowest-numbered failing text.
    if let Some(i) = runs.iter().position(|(_, run)| run.err.is_some()) {
        if let Some(err) = runs.swap_remove(i).1.err {
            return Err(err);
        }
    }
    for (_, run) in &runs {
        let base = ids.len();
        // Within the reservation (the most ids the whole batch can give): no regrowth.
        ids.extend_from_slice(&run.ids);
        offsets.extend(run.ends.iter().map(|&e| offset(base + e)));
    }
    Ok(Flat { ids, offsets })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in encoder: one id per byte, and text "bad" fails with its own length.
    fn bytes_of(t: &str, out: &mut Vec<u32>) -> Result<(), usize> {
        if t == "bad" {
            return Err(t.len());
        }
        out.extend(t.bytes().map(u32::from));
        Ok(())
    }

    fn texts(n: usize) -> Vec<String> {
        (0..n).map(|i| "abcdefghij"[..i % 11].repeat(1 + i % 7)).collect()
    }

    fn flat_by_hand(texts: &[String]) -> Flat {
        let mut f = Flat { ids: Vec::new(), offsets: vec![0] };
        for t in texts {
            f.ids.extend(t.bytes().map(u32::from));
            f.offsets.push(f.ids.len() as i64);
        }
        f
    }

    /// `encode_flat_on` with `threads` threads in all: this one and a pool of the rest.
    fn on_threads<E: Send>(threads: usize, texts: &[&str], one: fn(&str, &mut Vec<u32>) -> Result<(), E>) -> Result<Flat, FlatError<E>> {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads - 1).build().expect("a test pool");
        encode_flat_on(&pool, texts, one)
    }

    #[test]
    fn serial_and_parallel_give_the_layout() {
        for n in [0, 1, 2, 3, 17, 500] {
            let t = texts(n);
            let want = flat_by_hand(&t);
            let strs: Vec<&str> = t.iter().map(String::as_str).collect();
            assert_eq!(encode_flat(&strs, bytes_of).ok(), Some(want.clone()), "serial, {n} texts");
            for threads in [2, 3, 5] {
                let got = on_threads(threads, &strs, bytes_of).ok();
                assert_eq!(got, Some(want.clone()), "{threads} threads, {n} texts");
            }
        }
    }

    #[test]
    fn empty_batch_has_one_offset() {
        let none: [&str; 0] = [];
        let f = on_threads(2, &none, bytes_of).ok();
        assert_eq!(f, Some(Flat { ids: vec![], offsets: vec![0] }));
    }

    #[test]
    fn the_lowest_failing_text_is_reported() {
        let mut t = texts(400);
        t[123] = "bad".into();
        t[350] = "bad".into();
        let strs: Vec<&str> = t.iter().map(String::as_str).collect();
        for threads in [2, 3, 5] {
            match on_threads(threads, &strs, bytes_of) {
                Err(FlatError::Text { index, error }) => assert_eq!((index, error), (123, 3)),
                other => panic!("{threads} threads: expected text 123 to fail, got {other:?}"),
            }
        }
        assert!(matches!(encode_flat(&strs, bytes_of), Err(FlatError::Text { index: 123, .. })));
    }

    /// Claims from both ends, with any mix of text sizes and of which end asks: the runs never
    /// overlap, cover the batch, each is in text order and within its bounds, and they shrink
    /// towards the end of the batch.
    #[test]
    fn claims_cover_the_batch_once() {
        let sizes: Vec<String> = (0..300).map(|i| "x".repeat([1, 4000, 10, 200_000, 0, 3000][i % 6] + i % 7)).collect();
        for threads in [1, 2, 4] {
            for pattern in [[End::Front, End::Back], [End::Back, End::Back], [End::Front, End::Front]] {
                let claims = Claims::new(&sizes, threads);
                let mut seen = vec![false; sizes.len()];
                let mut k = 0;
                while let Some(r) = claims.take(pattern[k % 2], if k % 3 == 0 { 8 << 10 } else { usize::MAX }) {
                    assert!(!r.is_empty() && r.len() <= MOST_TEXTS, "{r:?}");
                    let bytes: usize = sizes[r.clone()].iter().map(|t| t.len()).sum();
                    assert!(r.len() == 1 || bytes <= if k % 3 == 0 { 8 << 10 } else { usize::MAX }, "{r:?}: {bytes} bytes");
                    for i in r {
                        assert!(!seen[i], "text {i} claimed twice");
                        seen[i] = true;
                    }
                    k += 1;
                }
                assert!(seen.iter().all(|&s| s), "every text claimed");
            }
        }
        let empty: [&str; 0] = [];
        assert_eq!(Claims::new(&empty, 2).take(End::Front, usize::MAX), None);
        // Equal texts: the first runs are whole (the text bound), the last ones single texts.
        let equal: Vec<String> = (0..300).map(|_| "y".repeat(4000)).collect();
        let claims = Claims::new(&equal, 2);
        let mut lens = Vec::new();
        while let Some(r) = claims.take(if lens.len() % 2 == 0 { End::Front } else { End::Back }, usize::MAX) {
            lens.push(r.len());
        }
        assert_eq!((lens[0], lens[1]), (MOST_TEXTS, MOST_TEXTS), "{lens:?}");
        assert_eq!(lens.last(), Some(&1), "{lens:?}");
        assert!(lens.windows(2).all(|w| w[1] <= w[0]), "runs never grow: {lens:?}");
    }

    /// One long text among short ones, empty texts, texts that fail near both ends: the
    /// layout and the error are the serial ones on every thread count.
    #[test]
    fn uneven_batches_give_the_serial_layout() {
        let mut t: Vec<String> = (0..200).map(|i| "abcdefg".repeat(i % 5)).collect();
        t[17] = "z".repeat(1 << 20);
        let strs: Vec<&str> = t.iter().map(String::as_str).collect();
        let want = flat_by_hand(&t);
        for threads in [2, 3, 5] {
            assert_eq!(on_threads(threads, &strs, bytes_of).ok(), Some(want.clone()), "{threads} threads");
        }
        for bad in [[0, 199], [198, 199], [1, 2], [150, 151]] {
            let mut t = t.clone();
            for &b in &bad {
                t[b] = "bad".into();
            }
            let strs: Vec<&str> = t.iter().map(String::as_str).collect();
            for threads in [2, 3, 5] {
                match on_threads(threads, &strs, bytes_of) {
                    Err(FlatError::Text { index, .. }) => assert_eq!(index, bad[0], "{threads} threads"),
                    other => panic!("{threads} threads: expected text {} to fail, got {other:?}", bad[0]),
                }
            }
        }
    }
}
