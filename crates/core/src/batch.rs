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
//! - [`encode_flat_parallel`]: on the current rayon pool. Contiguous runs of texts are encoded
//!   into a vector per run, at once; then the buffer is allocated at its exact size and each
//!   run's ids are copied to their place, in parallel too. The copy is one pass over the ids
//!   (a few percent of the encoding); computing the places first would need every text's
//!   count, which costs as much as encoding it.
//!
//! The encoder of one text is the caller's closure (it appends a text's ids to the vector it
//! is given), so the special-token policy and errors stay the caller's: this module owns only
//! the layout, the split into runs and the order of errors (the lowest-numbered failing text,
//! as a serial loop would report, whichever thread met it first).

use std::collections::TryReserveError;
use std::mem::MaybeUninit;
use std::ops::{Deref, Range};

use rayon::prelude::*;

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

/// The most ids texts of `bytes` bytes in all, `count` of them, can give: one per byte (every
/// token is at least one byte), with room for a BOS and an EOS per text. Reserving it means no
/// vector ever grows (growing copies into fresh pages); pages reserved but never written cost
/// no memory.
fn room(bytes: usize, count: usize) -> usize {
    bytes.saturating_add(count.saturating_mul(2)).saturating_add(16)
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

/// Every text of `texts`, in order, encoded by `one` straight into one buffer, on this thread.
/// Stops at the first text `one` fails on.
pub fn encode_flat<T, E>(texts: &[T], mut one: impl FnMut(&str, &mut Vec<u32>) -> Result<(), E>) -> Result<Flat, FlatError<E>>
where
    T: Deref<Target = str>,
{
    let bytes = texts.iter().map(|t| t.len()).fold(0usize, usize::saturating_add);
    let n = room(bytes, texts.len());
    let mut ids = reserved(n).map_err(|_| FlatError::NoRoom { ids: n })?;
    let mut offsets = reserved(texts.len() + 1).map_err(|_| FlatError::NoRoom { ids: texts.len() + 1 })?;
    offsets.push(0);
    for (index, t) in texts.iter().enumerate() {
        one(t, &mut ids).map_err(|error| FlatError::Text { index, error })?;
        offsets.push(offset(ids.len()));
    }
    Ok(Flat { ids, offsets })
}

/// One run's result: its ids, where each of its texts ends (relative to the run), and the
/// first failure (the run stops there).
struct Part<E> {
    ids: Vec<u32>,
    ends: Vec<usize>,
    err: Option<FlatError<E>>,
}

/// Most bytes of text in one run. A run is the unit of work stealing, so a thread is never
/// left with a long run while the others idle; and its vector, reserved for its worst case
/// (4 bytes per byte of text), stays small.
const MAX_RUN_BYTES: usize = 1 << 20;

/// Contiguous runs of texts of about `target` bytes each (at least one text per run).
fn runs<T: Deref<Target = str>>(texts: &[T], target: usize) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0usize);
    for (i, t) in texts.iter().enumerate() {
        bytes = bytes.saturating_add(t.len());
        if bytes >= target {
            out.push(start..i + 1);
            (start, bytes) = (i + 1, 0);
        }
    }
    if start < texts.len() {
        out.push(start..texts.len());
    }
    out
}

/// [`encode_flat`] on the current rayon pool, with the same result (ids, offsets and which
/// error). Call it inside the pool meant to run it (`ThreadPool::install`): outside one, rayon
/// uses its global pool. On a pool of one thread it is [`encode_flat`].
pub fn encode_flat_parallel<T, E, F>(texts: &[T], one: F) -> Result<Flat, FlatError<E>>
where
    T: Deref<Target = str> + Sync,
    E: Send,
    F: Fn(&str, &mut Vec<u32>) -> Result<(), E> + Sync,
{
    let threads = rayon::current_num_threads();
    if threads <= 1 || texts.len() <= 1 {
        return encode_flat(texts, one);
    }
    let bytes = texts.iter().map(|t| t.len()).fold(0usize, usize::saturating_add);
    // Four runs per thread: enough for work stealing to even out texts of unequal cost.
    let target = (bytes / (4 * threads)).clamp(1, MAX_RUN_BYTES);
    let parts: Vec<Part<E>> = runs(texts, target)
        .into_par_iter()
        .map(|r| {
            let texts = &texts[r.clone()];
            let n = room(texts.iter().map(|t| t.len()).sum(), texts.len());
            let mut part = Part { ids: Vec::new(), ends: Vec::with_capacity(texts.len()), err: None };
            match reserved(n) {
                Ok(ids) => part.ids = ids,
                Err(_) => {
                    part.err = Some(FlatError::NoRoom { ids: n });
                    return part;
                }
            }
            for (k, t) in texts.iter().enumerate() {
                if let Err(error) = one(t, &mut part.ids) {
                    part.err = Some(FlatError::Text { index: r.start + k, error });
                    break;
                }
                part.ends.push(part.ids.len());
            }
            part
        })
        .collect();
    // Runs are in text order and each stops at its own first failure, so the first run that
    // failed holds the lowest-numbered failing text.
    let mut parts = parts;
    if let Some(i) = parts.iter().position(|p| p.err.is_some()) {
        if let Some(err) = parts.swap_remove(i).err {
            return Err(err);
        }
    }
    let total: usize = parts.iter().map(|p| p.ids.len()).sum();
    let mut ids: Vec<u32> = reserved(total).map_err(|_| FlatError::NoRoom { ids: total })?;
    let mut offsets = reserved(texts.len() + 1).map_err(|_| FlatError::NoRoom { ids: texts.len() + 1 })?;
    offsets.push(0);
    // Each run's place in the buffer: the spare room cut into consecutive slices of the runs'
    // lengths, filled in parallel (the copy also takes the buffer's first page faults).
    let mut places: Vec<(&mut [MaybeUninit<u32>], &[u32])> = Vec::with_capacity(parts.len());
    let mut rest = &mut ids.spare_capacity_mut()[..total];
    let mut base = 0;
    for p in &parts {
        let (here, after) = rest.split_at_mut(p.ids.len());
        places.push((here, &p.ids));
        rest = after;
        offsets.extend(p.ends.iter().map(|&e| offset(base + e)));
        base += p.ids.len();
    }
    places.into_par_iter().for_each(|(dst, src)| {
        for (d, &s) in dst.iter_mut().zip(src) {
            d.write(s);
        }
    });
    // Safety: the slices above cover the first `total` elements of the spare room exactly
    // (consecutive, of the runs' lengths, which sum to `total`), and each was written in full
    // from its run's ids (same length) before `for_each` returned.
    unsafe { ids.set_len(total) };
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

    fn on_threads<R: Send>(n: usize, f: impl FnOnce() -> R + Send) -> R {
        rayon::ThreadPoolBuilder::new().num_threads(n).build().expect("a test pool").install(f)
    }

    #[test]
    fn serial_and_parallel_give_the_layout() {
        for n in [0, 1, 2, 3, 17, 500] {
            let t = texts(n);
            let want = flat_by_hand(&t);
            let strs: Vec<&str> = t.iter().map(String::as_str).collect();
            assert_eq!(encode_flat(&strs, bytes_of).ok(), Some(want.clone()), "serial, {n} texts");
            for threads in [1, 2, 3] {
                let got = on_threads(threads, || encode_flat_parallel(&strs, bytes_of)).ok();
                assert_eq!(got, Some(want.clone()), "{threads} threads, {n} texts");
            }
        }
    }

    #[test]
    fn empty_batch_has_one_offset() {
        let none: [&str; 0] = [];
        let f = on_threads(2, || encode_flat_parallel(&none, bytes_of)).ok();
        assert_eq!(f, Some(Flat { ids: vec![], offsets: vec![0] }));
    }

    #[test]
    fn the_lowest_failing_text_is_reported() {
        let mut t = texts(400);
        t[123] = "bad".into();
        t[350] = "bad".into();
        let strs: Vec<&str> = t.iter().map(String::as_str).collect();
        for threads in [1, 2, 4] {
            match on_threads(threads, || encode_flat_parallel(&strs, bytes_of)) {
                Err(FlatError::Text { index, error }) => assert_eq!((index, error), (123, 3)),
                other => panic!("{threads} threads: expected text 123 to fail, got {other:?}"),
            }
        }
        assert!(matches!(encode_flat(&strs, bytes_of), Err(FlatError::Text { index: 123, .. })));
    }

    #[test]
    fn runs_cover_the_batch_in_order() {
        let t = texts(100);
        for target in [1, 10, 100, 1 << 20] {
            let r = runs(&t, target);
            assert_eq!(r.first().map(|r| r.start), Some(0));
            assert_eq!(r.last().map(|r| r.end), Some(100));
            assert!(r.windows(2).all(|w| w[0].end == w[1].start && !w[0].is_empty()));
        }
    }
}
