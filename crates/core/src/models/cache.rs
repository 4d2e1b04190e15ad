//! [`ShardedCache`]: piece bytes -> the ids their merge produced, shared by every thread that
//! encodes with one tokenizer. Used by the score model (per segment) and the merge-list model
//! (per pre-tokenized piece); the rank model keeps its own per-thread cache
//! ([`crate::models::rank::cache`]), tuned for its short-piece lookups.
//!
//! Why: text is Zipfian. A few thousand distinct words make up most of the pieces that are not
//! one token, so most merges (a linked list and a heap, a few hundred nanoseconds to a few
//! microseconds) are done once and then copied (a hash, a probe and a compare). HF tokenizers'
//! BPE model keeps a word cache for the same reason.
//!
//! How:
//! - **Owned by the tokenizer**, not the call: a loop of short `encode` calls (a line each)
//!   merges each repeated word once, not once per call.
//! - **Sharded mutexes taken with `try_lock`**: a shard another thread holds is skipped (a miss
//!   for `get`, nothing stored for `put`), never waited for, so a batch on many threads does not
//!   queue on the cache.
//! - **Bounded, cleared when full**: a shard holding [`PER_SHARD`] entries is emptied before
//!   the next insert. Crude, but O(1), rare, and a shard refills with what is frequent; an LRU
//!   would cost bookkeeping on every hit.
//! - **Keyed by the caller's hash** of the bytes: each model has already hashed the piece for
//!   its whole-piece lookup, so the hash is computed once per piece. The shard is chosen by
//!   bits 20-23 of it (hashbrown uses the low bits for the bucket and the top 7 for the tag).
//!
//! Exactness: a model stores exactly the ids its merge produced for those bytes, and only for
//! pieces whose ids depend on nothing but their bytes (the score model leaves out segments with
//! the unknown id, whose runs fuse across segments). A hit returns the same ids as a miss, so the
//! ids never depend on what is cached, on the order of calls, or on which thread got a shard.

use std::sync::Mutex;

use crate::models::short_eq;

/// Shards: enough that a few threads rarely meet on one.
pub const SHARDS: usize = 16;
/// Entries per shard before it is cleared (64 K in all: at most a few MB).
pub const PER_SHARD: usize = 4096;
/// Longest piece cached, in bytes. Longer ones are rare in text and each would hold its bytes
/// and ids in memory; they are merged every time.
pub const MAX_KEY: usize = 64;

/// (hash, piece bytes, ids).
type Entry = (u64, Box<[u8]>, Box<[u32]>);
type Shard = Mutex<hashbrown::HashTable<Entry>>;

pub struct ShardedCache {
    shards: Box<[Shard]>,
    per_shard: usize,
}

impl Default for ShardedCache {
    fn default() -> Self {
        Self::new()
    }
}

impl ShardedCache {
    pub fn new() -> Self {
        Self::with_limit(PER_SHARD)
    }

    /// A cache whose shards are cleared at `per_shard` entries (tests use a small limit).
    pub fn with_limit(per_shard: usize) -> Self {
        ShardedCache { shards: (0..SHARDS).map(|_| Mutex::new(hashbrown::HashTable::new())).collect(), per_shard }
    }

    /// Whether a piece of this length is ever cached (callers skip hashing otherwise).
    #[inline]
    pub fn holds(len: usize) -> bool {
        len <= MAX_KEY
    }

    #[inline]
    fn shard(&self, hash: u64) -> &Shard {
        &self.shards[(hash >> 20) as usize % SHARDS]
    }

    /// Appends the cached ids of `key` (hashed to `hash`) to `out`; false when absent, too long
    /// to be cached, or its shard is busy.
    #[inline]
    pub fn get(&self, key: &[u8], hash: u64, out: &mut Vec<u32>) -> bool {
        if !Self::holds(key.len()) {
            return false;
        }
        let Ok(map) = self.shard(hash).try_lock() else { return false };
        match map.find(hash, |e| e.0 == hash && short_eq(&e.1, key)) {
            Some(e) => {
                out.extend_from_slice(&e.2);
                true
            }
            None => false,
        }
    }

    /// Remembers that `key` (hashed to `hash`) merges into `ids`. Skipped when the key is too
    /// long or its shard is busy; a key already present is left as it is (its ids are the same).
    pub fn put(&self, key: &[u8], hash: u64, ids: &[u32]) {
        if !Self::holds(key.len()) {
            return;
        }
        if let Ok(mut map) = self.shard(hash).try_lock() {
            if map.len() >= self.per_shard {
                map.clear();
            }
            if let hashbrown::hash_table::Entry::Vacant(v) = map.entry(hash, |e| e.0 == hash && short_eq(&e.1, key), |e| e.0) {
                v.insert((hash, key.into(), ids.into()));
            }
        }
    }

    /// Forgets every entry (to time cold encoding, or to free the memory). A shard another
    /// thread holds right now is waited for: this is not on any encoding path.
    pub fn clear(&self) {
        for s in self.shards.iter() {
            // A poisoned shard (a thread panicked holding it) is cleared all the same.
            s.lock().unwrap_or_else(|e| e.into_inner()).clear();
        }
    }

    /// Entries held now (all shards; a busy shard counts as empty).
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.try_lock().map_or(0, |m| m.len())).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A clone starts empty: the cache is a memo, not state.
impl Clone for ShardedCache {
    fn clone(&self) -> Self {
        Self::with_limit(self.per_shard)
    }
}

impl std::fmt::Debug for ShardedCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ShardedCache")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(key: &[u8]) -> u64 {
        use std::hash::BuildHasher;
        foldhash::fast::FixedState::default().hash_one(key)
    }

    #[test]
    fn get_what_was_put() {
        let c = ShardedCache::new();
        let mut out = vec![7];
        assert!(!c.get(b"hello", h(b"hello"), &mut out));
        c.put(b"hello", h(b"hello"), &[1, 2]);
        assert!(c.get(b"hello", h(b"hello"), &mut out));
        assert_eq!(out, [7, 1, 2], "appended after what was there");
        // Same hash, other bytes: not a hit.
        assert!(!c.get(b"hellp", h(b"hello"), &mut out));
        // Too long to cache: never stored.
        let long = vec![b'a'; MAX_KEY + 1];
        c.put(&long, h(&long), &[1]);
        assert!(!c.get(&long, h(&long), &mut out));
        assert_eq!(c.len(), 1);
        c.clear();
        assert!(c.is_empty() && !c.get(b"hello", h(b"hello"), &mut out));
    }

    /// A shard at its limit is emptied by the next insert, and answers correctly after.
    #[test]
    fn a_full_shard_clears_and_still_answers() {
        let c = ShardedCache::with_limit(4);
        // Keys that all land in shard 0 (their hash is made up: the cache trusts the caller's).
        let keys: Vec<Vec<u8>> = (0..10u8).map(|i| vec![b'k', i]).collect();
        let hash = |i: usize| (i as u64) << 32; // bits 20-23 zero: shard 0
        for (i, k) in keys.iter().enumerate() {
            c.put(k, hash(i), &[i as u32, 100 + i as u32]);
            assert!(c.len() <= 4);
        }
        // 10 inserts with a limit of 4: cleared after the 4th and the 8th; 8 and 9 remain.
        assert_eq!(c.len(), 2);
        for (i, k) in keys.iter().enumerate() {
            let mut out = Vec::new();
            let hit = c.get(k, hash(i), &mut out);
            assert_eq!(hit, i >= 8, "key {i}");
            if hit {
                assert_eq!(out, [i as u32, 100 + i as u32]);
            }
        }
    }
}
