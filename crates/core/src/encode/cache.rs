//! A per-call memo of merged pieces: real text repeats its words, and a piece that is not one
//! token costs a few hundred nanoseconds to merge but a few tens to look up.
//!
//! The cache lives for one `encode` call (keys borrow the caller's text, so it allocates no
//! keys) and is created on the first piece that needs merging. It holds at most
//! [`MAX_ENTRIES`] pieces of at most [`MAX_PIECE`] bytes; past that, pieces are merged
//! directly. Output is identical with or without it: it stores exactly what the merge produced.

use hashbrown::HashMap;

use super::rank::merge_piece;
use super::Sink;
use crate::vocab::Vocab;

pub const MAX_ENTRIES: usize = 1 << 16;
pub const MAX_PIECE: usize = 64;

pub struct PieceCache<'t> {
    /// piece -> (offset, length) in `ids`.
    map: HashMap<&'t [u8], (u32, u32), foldhash::fast::FixedState>,
    ids: Vec<u32>,
}

impl<'t> PieceCache<'t> {
    fn new() -> Self {
        PieceCache { map: HashMap::with_capacity_and_hasher(1024, Default::default()), ids: Vec::with_capacity(4096) }
    }

    /// Merges `piece` (known not to be a single token) into `out`, through the cache.
    #[inline]
    pub fn merge<S: Sink>(slot: &mut Option<Self>, vocab: &Vocab, piece: &'t [u8], out: &mut S) {
        if piece.len() > MAX_PIECE {
            return merge_piece(vocab, piece, out);
        }
        let cache = slot.get_or_insert_with(Self::new);
        if let Some(&(off, len)) = cache.map.get(piece) {
            out.extend(&cache.ids[off as usize..(off + len) as usize]);
            return;
        }
        let off = cache.ids.len();
        merge_piece(vocab, piece, &mut cache.ids);
        out.extend(&cache.ids[off..]);
        if cache.map.len() < MAX_ENTRIES && cache.ids.len() <= u32::MAX as usize {
            cache.map.insert(piece, (off as u32, (cache.ids.len() - off) as u32));
        } else {
            cache.ids.truncate(off);
        }
    }
}
