//! [`TokenTable`]: the one table every model keeps its tokens in.
//!
//! - **id -> bytes**, in the BPE2 file's layout: every token back to back in one blob, and per
//!   id an (offset, length) span into it; length 0 is a hole (an id with no token). Decoding any
//!   id is one lookup.
//! - **bytes -> id** for the ids the model chooses to index (the rank model: mergeable tokens
//!   longer than its packed-key indexes take; the score model: mergeable pieces; the merge-list
//!   model: every token but the special ones). The index is a `hashbrown::HashTable<u32>` that
//!   stores ids only and compares keys against the blob, so no token is held twice.
//!
//! The hash reads keys of up to 16 bytes (nearly every piece) as two overlapping words mixed
//! with one folded multiply, inline; longer keys go through foldhash. Equality is always
//! checked ([`short_eq`]), so the hash only has to spread keys. Callers that key other tables by
//! a piece (the piece caches) take [`TokenTable::hash`] and look up with
//! [`TokenTable::id_hashed`], hashing each piece once.

use hashbrown::hash_table::Entry;
use hashbrown::HashTable;
use std::hash::BuildHasher;

use super::MAX_TOKEN_ID;
use crate::error::{Error, Result};
use crate::models::{short_eq, u32_at, u64_at};

type Hasher = foldhash::fast::FixedState;

#[derive(Clone, Default)]
pub struct TokenTable {
    /// (offset, length) into `blob`, indexed by id; length 0 is a hole.
    spans: Vec<(u32, u32)>,
    blob: Vec<u8>,
    /// Ids of the indexed tokens, hashed by their bytes.
    index: HashTable<u32>,
    hasher: Hasher,
}

impl std::fmt::Debug for TokenTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenTable").field("ids", &self.spans.len()).field("indexed", &self.index.len()).finish()
    }
}

/// The hash of the index (see the module docs).
#[inline(always)]
fn hash_bytes(hasher: &Hasher, b: &[u8]) -> u64 {
    let n = b.len();
    let (x, y) = match n {
        0 => (0, 0),
        1..=3 => (((b[0] as u64) << 16) | ((b[n / 2] as u64) << 8) | b[n - 1] as u64, 0),
        4..=7 => (u32_at(b, 0) as u64, u32_at(b, n - 4) as u64),
        8..=16 => (u64_at(b, 0), u64_at(b, n - 8)),
        _ => return hasher.hash_one(b),
    };
    let p = (x ^ 0x243f_6a88_85a3_08d3) as u128 * (y ^ 0x1319_8a2e_0370_7344 ^ ((n as u64) << 56)) as u128;
    (p as u64) ^ (p >> 64) as u64
}

/// Two ids the index was asked to hold for the same bytes: (the one indexed first, the other).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Duplicate(pub u32, pub u32);

impl TokenTable {
    /// `tokens[id]`, an empty slice for a hole; nothing indexed yet. Refuses more ids than
    /// [`MAX_TOKEN_ID`] and more than 4 GiB of bytes (spans are 32-bit).
    pub fn from_tokens<'a>(tokens: impl IntoIterator<Item = &'a [u8]>) -> Result<Self> {
        let mut t = TokenTable::default();
        for bytes in tokens {
            t.push(bytes)?;
        }
        Ok(t)
    }

    /// An id-indexed table already in BPE2 layout (a BPE2 file's, or one built in place by the
    /// rank model); every span is checked to lie within the blob.
    pub fn from_spans(spans: Vec<(u32, u32)>, blob: Vec<u8>) -> Result<Self> {
        if spans.len() > MAX_TOKEN_ID as usize + 1 {
            return Err(Error::Vocab(format!("more than {MAX_TOKEN_ID} token ids")));
        }
        if let Some(id) = spans.iter().position(|&(o, l)| o as usize + l as usize > blob.len()) {
            return Err(Error::Vocab(format!("token {id} points past the end of the blob")));
        }
        Ok(TokenTable { spans, blob, index: HashTable::new(), hasher: Hasher::default() })
    }

    fn push(&mut self, bytes: &[u8]) -> Result<()> {
        if self.spans.len() > MAX_TOKEN_ID as usize {
            return Err(Error::Vocab(format!("more than {MAX_TOKEN_ID} token ids")));
        }
        let offset = u32::try_from(self.blob.len()).ok().filter(|o| o.checked_add(bytes.len() as u32).is_some());
        let Some(offset) = offset.filter(|_| bytes.len() <= u32::MAX as usize) else {
            return Err(Error::Vocab("the tokens' bytes add up to more than 4 GiB".into()));
        };
        self.spans.push((offset, bytes.len() as u32));
        self.blob.extend_from_slice(bytes);
        Ok(())
    }

    /// Adds `ids` to the bytes -> id index (holes are skipped). The same bytes at two indexed
    /// ids is a [`Duplicate`]: which is an error, and how to word it, is the model's to say.
    pub fn index(&mut self, ids: impl IntoIterator<Item = u32>) -> std::result::Result<(), Duplicate> {
        let TokenTable { spans, blob, index, hasher } = self;
        let token = |id: u32| {
            let (o, l) = spans[id as usize];
            &blob[o as usize..(o + l) as usize]
        };
        let ids = ids.into_iter();
        // The upper bound where there is one: a filtered iterator's lower bound is 0, and
        // growing the index from nothing rehashed it a dozen times (a tenth of loading a
        // SentencePiece model).
        let (lower, upper) = ids.size_hint();
        index.reserve(upper.unwrap_or(lower), |&i| hash_bytes(hasher, token(i)));
        for id in ids {
            let bytes = token(id);
            if bytes.is_empty() {
                continue;
            }
            match index.entry(hash_bytes(hasher, bytes), |&i| token(i) == bytes, |&i| hash_bytes(hasher, token(i))) {
                Entry::Occupied(e) => return Err(Duplicate(*e.get(), id)),
                Entry::Vacant(e) => {
                    e.insert(id);
                }
            }
        }
        Ok(())
    }

    /// The bytes of a token; `None` for a hole or an id past the table.
    #[inline]
    pub fn token(&self, id: u32) -> Option<&[u8]> {
        match self.spans.get(id as usize) {
            Some(&(o, l)) if l > 0 => Some(&self.blob[o as usize..(o + l) as usize]),
            _ => None,
        }
    }

    /// The bytes of an id known to be in the table (a hole gives an empty slice).
    #[inline(always)]
    pub fn token_unchecked(&self, id: u32) -> &[u8] {
        let (o, l) = self.spans[id as usize];
        &self.blob[o as usize..(o + l) as usize]
    }

    /// The indexed id of these bytes.
    #[inline]
    pub fn id(&self, bytes: &[u8]) -> Option<u32> {
        self.id_hashed(bytes, self.hash(bytes))
    }

    /// The hash [`id_hashed`](Self::id_hashed) takes.
    #[inline]
    pub fn hash(&self, bytes: &[u8]) -> u64 {
        hash_bytes(&self.hasher, bytes)
    }

    /// [`id`](Self::id) with the bytes' [`hash`](Self::hash) already known.
    #[inline]
    pub fn id_hashed(&self, bytes: &[u8], hash: u64) -> Option<u32> {
        self.index.find(hash, |&i| short_eq(self.token_unchecked(i), bytes)).copied()
    }

    /// The indexed ids, in no particular order.
    pub fn indexed(&self) -> impl ExactSizeIterator<Item = u32> + '_ {
        self.index.iter().copied()
    }

    /// Every id's bytes, in id order (empty for a hole).
    pub fn tokens(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        self.spans.iter().map(|&(o, l)| &self.blob[o as usize..(o + l) as usize])
    }

    /// The number of ids: the largest id + 1.
    #[inline]
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The (offset, length) spans and the blob, as a BPE2 file lays them out.
    pub fn spans(&self) -> &[(u32, u32)] {
        &self.spans
    }
    pub fn blob(&self) -> &[u8] {
        &self.blob
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_bytes_holes_and_duplicates() {
        let toks: [&[u8]; 4] = [b"a", b"", b"a long token of many bytes", b"bc"];
        let mut t = TokenTable::from_tokens(toks).unwrap();
        t.index([0, 1, 2, 3]).unwrap();
        assert_eq!(t.token(1), None);
        assert_eq!(t.token(9), None);
        assert_eq!(t.token(2), Some(&b"a long token of many bytes"[..]));
        assert_eq!(t.id(b"a long token of many bytes"), Some(2));
        assert_eq!(t.id(b"bc"), Some(3));
        assert_eq!(t.id(b"b"), None);
        assert_eq!(t.indexed().count(), 3);
        let mut d = TokenTable::from_tokens([&b"x"[..], b"x"]).unwrap();
        assert_eq!(d.index([0, 1]), Err(Duplicate(0, 1)));
        assert!(TokenTable::from_spans(vec![(0, 2)], vec![1]).is_err());
    }
}
