//! The BPE trainer: learn rank-BPE merges from text.
//!
//! Two stages, one module each:
//!
//! - [`count`]: split each document with the split pattern (the core's [`Pretokenizer`]) and
//!   count every distinct chunk (64-bit counts). Documents are counted in parallel; the counts
//!   are sums, so the result does not depend on the number of threads.
//! - [`merge`]: the merge loop over the distinct chunks. Start from the 256 byte tokens
//!   (rank = byte value); repeatedly merge the adjacent pair with the highest total count (each
//!   chunk weighted by its count; non-overlapping left-to-right replacement inside each chunk),
//!   ties broken by the smallest `(left id, right id)`.
//!
//! The algorithm, its edge cases and its complexity are written down in `docs/training.md`.
//!
//! [`Pretokenizer`]: crate::pretokenize::Pretokenizer

pub mod count;
pub mod merge;

pub use count::{ChunkCounter, ChunkCounts};
pub use merge::{Merge, Merger};
