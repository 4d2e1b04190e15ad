//! Chunk counting: text -> `{distinct chunk: count}`.
//!
//! The table keeps every chunk's bytes once, back to back in one arena, and a
//! `hashbrown::HashTable` of (offset, length, count) that compares keys against the arena. Most
//! pieces of real text are already in the table, so the hot path is one hash and one compare,
//! with no allocation per piece.
//!
//! Parallelism: [`ChunkCounter`] keeps one table per worker for the whole run (workers never
//! share a table, so there is no locking); each batch of documents is cut into one contiguous
//! share per worker, balanced by bytes. [`ChunkCounter::finish`] adds the tables together.
//! Counts are sums, so the result is the same for any number of workers and any batching.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use rayon::prelude::*;

use crate::error::Result;
use crate::pretokenize::Pretokenizer;

type Hasher = foldhash::fast::FixedState;

#[derive(Clone, Copy)]
struct Entry {
    start: usize,
    len: usize,
    count: u64,
}

/// A multiset of byte strings: each distinct chunk and how often it occurred.
#[derive(Clone, Default)]
pub struct ChunkCounts {
    arena: Vec<u8>,
    table: HashTable<Entry>,
    hasher: Hasher,
}

impl ChunkCounts {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `n` occurrences of `chunk`.
    #[inline]
    pub fn add(&mut self, chunk: &[u8], n: u64) {
        let hash = self.hasher.hash_one(chunk);
        let arena = &self.arena;
        if let Some(e) = self.table.find_mut(hash, |e| &arena[e.start..e.start + e.len] == chunk) {
            e.count += n;
            return;
        }
        let start = self.arena.len();
        self.arena.extend_from_slice(chunk);
        let (arena, hasher) = (&self.arena, &self.hasher);
        self.table.insert_unique(hash, Entry { start, len: chunk.len(), count: n }, |e| {
            hasher.hash_one(&arena[e.start..e.start + e.len])
        });
    }

    /// Adds every chunk of `other`.
    pub fn extend(&mut self, other: &ChunkCounts) {
        for (chunk, n) in other.iter() {
            self.add(chunk, n);
        }
    }

    /// The number of distinct chunks.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Each distinct chunk with its count, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u64)> + '_ {
        self.table.iter().map(|e| (&self.arena[e.start..e.start + e.len], e.count))
    }

    /// The sum of all counts (the number of chunks in the text).
    pub fn total(&self) -> u64 {
        self.table.iter().map(|e| e.count).sum()
    }

    /// Bytes of memory held (arena and table), for logging.
    pub fn memory(&self) -> usize {
        self.arena.capacity() + self.table.capacity() * (std::mem::size_of::<Entry>() + 1)
    }
}

/// Counts the chunks of a stream of documents, batch by batch, on all workers.
pub struct ChunkCounter {
    /// One splitter and one table per worker, kept across batches. Each worker has its own
    /// copy of the splitter: a shared regex hands out its scratch space under a lock, which
    /// costs more than the split itself when documents are short.
    workers: Vec<(Pretokenizer, ChunkCounts)>,
    documents: u64,
    bytes: u64,
}

impl ChunkCounter {
    /// `workers` tables are kept; batches run on the current rayon pool (the caller picks its
    /// size with `ThreadPool::install`).
    pub fn new(pattern: &str, workers: usize) -> Result<Self> {
        Ok(Self::from_pretokenizer(Pretokenizer::new(pattern)?, workers))
    }

    pub fn from_pretokenizer(pretokenizer: Pretokenizer, workers: usize) -> Self {
        ChunkCounter {
            workers: (0..workers.max(1)).map(|_| (pretokenizer.clone(), ChunkCounts::new())).collect(),
            documents: 0,
            bytes: 0,
        }
    }

    /// Splits and counts every document of the batch. Chunks never span documents.
    pub fn add_documents<S: AsRef<str> + Sync>(&mut self, docs: &[S]) -> Result<()> {
        let total: usize = docs.iter().map(|d| d.as_ref().len()).sum();
        self.documents += docs.len() as u64;
        self.bytes += total as u64;
        let shares = split_by_bytes(docs, self.workers.len(), total);
        let count_share = |((pre, table), range): (&mut (Pretokenizer, ChunkCounts), std::ops::Range<usize>)| {
            for doc in &docs[range] {
                pre.for_each_piece(doc.as_ref(), |piece| table.add(piece.as_bytes(), 1))?;
            }
            Ok(())
        };
        if self.workers.len() == 1 {
            count_share((&mut self.workers[0], 0..docs.len()))
        } else {
            self.workers.par_iter_mut().zip(shares).try_for_each(count_share)
        }
    }

    /// Counts a block of text holding one document per line (each line keeps its `\n`; a
    /// last line without one is a document too). The block is cut at line ends into one share
    /// per worker, so no list of lines is ever built.
    pub fn add_lines(&mut self, text: &str) -> Result<()> {
        let n = self.workers.len();
        let bytes = text.as_bytes();
        self.bytes += bytes.len() as u64;
        self.documents += bytecount_lines(bytes);
        // Share boundaries: just after the first newline at or past each k/n of the block.
        let mut cuts = vec![0usize];
        for k in 1..n {
            let from = (bytes.len() * k / n).max(*cuts.last().unwrap_or(&0));
            let cut = match bytes[from..].iter().position(|&b| b == b'\n') {
                Some(i) => from + i + 1,
                None => bytes.len(),
            };
            cuts.push(cut);
        }
        cuts.push(bytes.len());
        let count_share = |((pre, table), w): (&mut (Pretokenizer, ChunkCounts), &[usize])| {
            // Cuts sit just after a '\n' (ASCII), so they are char boundaries.
            for line in text[w[0]..w[1]].split_inclusive('\n') {
                pre.for_each_piece(line, |piece| table.add(piece.as_bytes(), 1))?;
            }
            Ok(())
        };
        if n == 1 {
            count_share((&mut self.workers[0], &cuts[..]))
        } else {
            self.workers.par_iter_mut().zip(cuts.par_windows(2)).try_for_each(count_share)
        }
    }

    /// Documents and bytes seen so far.
    pub fn seen(&self) -> (u64, u64) {
        (self.documents, self.bytes)
    }

    /// The counts of everything added (the workers' tables added together).
    pub fn finish(self) -> ChunkCounts {
        let mut tables: Vec<ChunkCounts> = self.workers.into_iter().map(|(_, t)| t).collect();
        // Add the smaller tables into the largest one: fewest insertions.
        tables.sort_by_key(|t| std::cmp::Reverse(t.len()));
        let mut it = tables.into_iter();
        let mut all = it.next().unwrap_or_default();
        for t in it {
            all.extend(&t);
        }
        all
    }
}

/// The number of lines in `bytes` (a last line without a newline counts).
fn bytecount_lines(bytes: &[u8]) -> u64 {
    let newlines = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
    newlines + u64::from(!bytes.is_empty() && bytes[bytes.len() - 1] != b'\n')
}

/// Cuts `docs` into `n` contiguous ranges of about `total / n` bytes each.
fn split_by_bytes<S: AsRef<str>>(docs: &[S], n: usize, total: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::with_capacity(n);
    let mut start = 0;
    let mut acc = 0usize;
    for (i, d) in docs.iter().enumerate() {
        acc += d.as_ref().len();
        // Close share k once it holds (k+1)/n of the bytes.
        if out.len() + 1 < n && acc * n >= total * (out.len() + 1) {
            out.push(start..i + 1);
            start = i + 1;
        }
    }
    out.push(start..docs.len());
    while out.len() < n {
        out.push(docs.len()..docs.len());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_sums_for_any_worker_count() {
        let docs: Vec<String> = (0..200).map(|i| format!("hello world {i} hello  there\n")).collect();
        let pat = r"\w+|\s+|[^\w\s]+";
        let mut one = ChunkCounter::new(pat, 1).unwrap();
        one.add_documents(&docs).unwrap();
        let one = one.finish();
        let mut three = ChunkCounter::new(pat, 3).unwrap();
        three.add_documents(&docs[..50]).unwrap();
        three.add_documents(&docs[50..]).unwrap();
        let three = three.finish();
        let mut a: Vec<_> = one.iter().map(|(c, n)| (c.to_vec(), n)).collect();
        let mut b: Vec<_> = three.iter().map(|(c, n)| (c.to_vec(), n)).collect();
        a.sort();
        b.sort();
        assert_eq!(a, b);
        assert_eq!(one.iter().find(|(c, _)| *c == b"hello").unwrap().1, 400);
    }

    #[test]
    fn add_lines_is_add_documents_of_the_lines() {
        let text: String = (0..300).map(|i| format!("line {i} with  words\n\n")).collect::<String>() + "last";
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let pat = r"\w+|\s+|[^\w\s]+";
        for workers in [1, 2, 5] {
            let mut a = ChunkCounter::new(pat, workers).unwrap();
            a.add_lines(&text).unwrap();
            let mut b = ChunkCounter::new(pat, 1).unwrap();
            b.add_documents(&lines).unwrap();
            assert_eq!(a.seen(), b.seen());
            let mut x: Vec<_> = a.finish().iter().map(|(c, n)| (c.to_vec(), n)).collect();
            let mut y: Vec<_> = b.finish().iter().map(|(c, n)| (c.to_vec(), n)).collect();
            x.sort();
            y.sort();
            assert_eq!(x, y);
        }
    }

    #[test]
    fn split_by_bytes_covers_everything() {
        let docs = ["aaaa", "b", "cc", "", "dddddd"];
        for n in 1..7 {
            let r = split_by_bytes(&docs, n, 13);
            assert_eq!(r.len(), n);
            assert_eq!(r[0].start, 0);
            assert_eq!(r.last().unwrap().end, docs.len());
            for w in r.windows(2) {
                assert_eq!(w[0].end, w[1].start);
            }
        }
    }
}
