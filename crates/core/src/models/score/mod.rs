//! [`ScoreTokenizer`]: the whole encode/decode path of score-BPE models, in two flavours:
//!
//! - **SentencePiece** (`.model`, BPE type): normalise (identity rules only), replace spaces with
//!   U+2581 and add the dummy prefix; cut into initial symbols (user-defined pieces matched
//!   longest-first, else one character); score BPE; pieces not in the vocabulary become
//!   `<0xHH>` byte pieces (byte fallback) or the unknown id (runs of them merged into one, as
//!   SentencePiece does); optional BOS/EOS.
//! - **LEAP** (llama2.c `tokenizer.bin`): prepend one space to non-empty text (llama2.c's dummy
//!   prefix; off for tables exported from rank vocabularies); initial symbols are characters,
//!   and for a character not in the vocabulary its `<0xHH>` byte pieces; any token may be merged
//!   into, as in llama2.c. A byte-level table (no `<0xHH>` pieces, all 256 single bytes: a rank
//!   vocabulary exported with score = -rank) starts from bytes instead, which makes score BPE
//!   exactly rank BPE.
//!
//! **Segments.** SentencePiece runs BPE over the whole text. A merged symbol holds every
//! character it spans, so between two adjacent characters that no mergeable (or user-defined)
//! piece holds side by side, no merge can ever join: the text is cut at every such point (in
//! practice before most spaces and punctuation) and each segment is encoded alone with the
//! same result. A segment that is one whole piece whose own BPE keeps it whole costs one hash
//! lookup; other segments are merged once and cached (most text is a few thousand distinct
//! words). Exactness does not depend on the model: the pairs are computed from its pieces.

pub mod merge;

use std::collections::HashMap;
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, Input, MatchKind, StartKind};

use crate::models::cache::ShardedCache;
use crate::models::score::merge::{merge, PairTable, ScoreVocab, Scratch, Symbol, NONE};
use crate::error::{Error, Result};
use crate::spec::{ModelProto, PieceType};
use crate::added::{AddedTokens, SpecialFilter};

pub use crate::normalizers::SPACE as SPACE_SYMBOL;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    SentencePiece,
    Leap,
}

/// Per piece: does a segment equal to the piece encode to exactly that piece? (The
/// whole-segment shortcut is exact only for those.) Worked out the first time a segment equal
/// to the piece is met, not at load: running BPE over every piece at load cost more than the
/// rest of loading (13 ms for a 32 K-piece SentencePiece model, 130 ms for a 100 K-token LEAP
/// table), and a text meets a few thousand distinct pieces. 0 = not yet known, 1 = yes, 2 = no.
/// Relaxed atomics: two threads that race compute the same answer.
struct WholeFlags(Box<[std::sync::atomic::AtomicU8]>);

impl WholeFlags {
    fn new(n: usize) -> Self {
        WholeFlags((0..n).map(|_| std::sync::atomic::AtomicU8::new(0)).collect())
    }
}

impl Clone for WholeFlags {
    fn clone(&self) -> Self {
        use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
        WholeFlags(self.0.iter().map(|a| AtomicU8::new(a.load(Relaxed))).collect())
    }
}

impl std::fmt::Debug for WholeFlags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WholeFlags")
    }
}

#[derive(Debug, Clone)]
pub struct ScoreTokenizer {
    flavor: Flavor,
    vocab: ScoreVocab,
    kinds: Vec<PieceType>,
    whole: WholeFlags,
    /// Control, unknown and byte pieces (SentencePiece's reserved map): found by exact lookup
    /// only, never merged into.
    reserved: HashMap<Vec<u8>, u32>,
    user_defined: Option<AhoCorasick>,
    /// The id for each byte under byte fallback.
    byte_ids: Option<Box<[u32; 256]>>,
    /// LEAP: whether the fallback byte ids are raw bytes (mergeable) or `<0xHH>` (frozen).
    raw_byte_fallback: bool,
    unk_id: Option<u32>,
    bos_id: Option<u32>,
    eos_id: Option<u32>,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    /// The space symbol: U+2581 when SentencePiece escapes whitespace, else " ".
    space: &'static str,
    whitespace_suffix: bool,
    /// Adjacent character pairs that occur inside some mergeable or user-defined piece; `None`
    /// disables segmenting (a byte-level table, or pieces that are not UTF-8).
    joins: Option<Joins>,
    /// First bytes of the user-defined pieces (the matcher runs only where one starts).
    user_first: [bool; 256],
    /// The id of each single-byte segment that is a whole piece (punctuation, digits), so the
    /// commonest short segments skip hashing.
    byte_whole: [u32; 256],
    unk_surface: String,
    /// Merged segments (see [`crate::models::cache`]).
    cache: ShardedCache,
    /// Control and unknown pieces (SentencePiece) or BOS/EOS (LEAP): spellings that are plain
    /// text unless a call allows them (`encode_allowed`).
    specials: AddedTokens,
}

/// Which adjacent character pairs may be joined by a merge: ASCII pairs in a bit table, the rest
/// in a hash set.
/// The pairs with the space symbol on one side and ASCII (or the space symbol) on the other,
/// the commonest non-ASCII pairs in SentencePiece text, have their own bit rows.
#[derive(Debug, Clone)]
struct Joins {
    ascii: Box<[u128; 128]>,
    space: char,
    space_then: u128,
    then_space: u128,
    space_space: bool,
    other: hashbrown::HashSet<(char, char), foldhash::fast::FixedState>,
}

impl Joins {
    fn new(space: char) -> Self {
        Joins { ascii: Box::new([0; 128]), space, space_then: 0, then_space: 0, space_space: false, other: Default::default() }
    }

    fn insert(&mut self, a: char, b: char) {
        match (a.is_ascii(), b.is_ascii()) {
            (true, true) => self.ascii[a as usize] |= 1u128 << (b as u32),
            (false, true) if a == self.space => self.space_then |= 1u128 << (b as u32),
            (true, false) if b == self.space => self.then_space |= 1u128 << (a as u32),
            _ if a == self.space && b == self.space => self.space_space = true,
            _ => {
                self.other.insert((a, b));
            }
        }
    }

    #[inline]
    fn contains(&self, a: char, b: char) -> bool {
        match (a.is_ascii(), b.is_ascii()) {
            (true, true) => self.ascii[a as usize] >> (b as u32) & 1 == 1,
            (false, true) if a == self.space => self.space_then >> (b as u32) & 1 == 1,
            (true, false) if b == self.space => self.then_space >> (a as u32) & 1 == 1,
            _ if a == self.space && b == self.space => self.space_space,
            _ => self.other.contains(&(a, b)),
        }
    }
}

/// The byte of a `<0xHH>` piece.
pub fn byte_piece(p: &[u8]) -> Option<u8> {
    if p.len() == 6 && p.starts_with(b"<0x") && p[5] == b'>' {
        let hex = std::str::from_utf8(&p[3..5]).ok()?;
        if hex.bytes().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_lowercase()) {
            return u8::from_str_radix(hex, 16).ok();
        }
    }
    None
}

fn char_len(first: u8) -> usize {
    match first {
        0..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

impl ScoreTokenizer {
    /// From a SentencePiece ModelProto of BPE type.
    pub fn from_sentencepiece(m: &ModelProto<'_>) -> Result<Self> {
        if m.model_type != 2 {
            let name = match m.model_type { 1 => "Unigram", 3 => "word", 4 => "char", _ => "unknown" };
            return Err(Error::format("trainer_spec.model_type", format!(
                "this is a {name} model (type {}); only BPE models (type 2) are supported", m.model_type)));
        }
        if m.precompiled_charsmap_len > 0 && m.normalizer_name != "identity" {
            return Err(Error::format("normalizer_spec", format!(
                "normalization rules {:?} are not supported (only the identity normalizer)", m.normalizer_name)));
        }
        let mut reserved = HashMap::new();
        let mut user = Vec::new();
        let mut unk_id = None;
        let mut bytes = [NONE; 256];
        let mut entries: Vec<(&[u8], f32, bool)> = Vec::with_capacity(m.pieces.len());
        let mut kinds = Vec::with_capacity(m.pieces.len());
        for (id, p) in m.pieces.iter().enumerate() {
            let b = p.piece.as_bytes();
            let mergeable = matches!(p.kind, PieceType::Normal | PieceType::UserDefined | PieceType::Unused);
            if !mergeable && reserved.insert(b.to_vec(), id as u32).is_some() {
                return Err(Error::format(format!("pieces[{id}]"), format!("piece {:?} is already defined", p.piece)));
            }
            match p.kind {
                PieceType::UserDefined => user.push(p.piece.to_owned()),
                PieceType::Unknown if unk_id.replace(id as u32).is_some() => {
                    return Err(Error::format(format!("pieces[{id}]"), "a second unknown piece"));
                }
                PieceType::Byte if !m.byte_fallback => {
                    // SentencePiece refuses such a model ("byte piece is found although
                    // byte_fallback is false"); loading it would encode as no reference does.
                    return Err(Error::format(format!("pieces[{id}]"), format!(
                        "byte piece {:?} in a model whose byte_fallback is off (SentencePiece refuses it)", p.piece)));
                }
                PieceType::Byte => {
                    let byte = byte_piece(b).ok_or_else(|| Error::format(format!("pieces[{id}]"),
                        format!("byte piece {:?} is not of the form <0xHH>", p.piece)))?;
                    bytes[byte as usize] = id as u32;
                }
                _ => {}
            }
            entries.push((b, p.score, mergeable));
            kinds.push(p.kind);
        }
        let Some(unk) = unk_id else {
            return Err(Error::format("pieces", "the model has no unknown piece (type UNKNOWN)"));
        };
        let byte_ids = if m.byte_fallback {
            if let Some(b) = bytes.iter().position(|&i| i == NONE) {
                return Err(Error::format("pieces", format!(
                    "byte_fallback is on but there is no byte piece <0x{b:02X}>: all 256 are needed")));
            }
            Some(Box::new(bytes))
        } else {
            None
        };
        let space = if m.escape_whitespaces { SPACE_SYMBOL } else { " " };
        // The piece table and the segment joins are independent: built side by side (the pair
        // table follows in the background). Symbols are whole characters (or frozen
        // user-defined pieces), so the pair table needs only cuts between characters.
        // (A scoped thread, not `rayon::join`: called from outside rayon's pool, a join waits
        // for a pool worker, which may first run whatever else is queued there.)
        let joins_now = || joins_of(space, entries.iter().filter(|e| e.2 && !e.0.is_empty()).map(|e| e.0));
        let (vocab, joins) = std::thread::scope(|s| {
            let helper = std::thread::Builder::new().spawn_scoped(s, joins_now);
            let vocab = ScoreVocab::new(&entries, true, PairTable::Background);
            // No thread (resource limits): computed here instead.
            let joins = helper.map_or_else(|_| Ok(joins_now()), |h| h.join());
            (vocab, joins)
        });
        let joins = joins.map_err(|_| Error::Vocab("the segment joins could not be computed".into()))?;
        let vocab = vocab.map_err(|e| Error::format("pieces", e.to_string()))?;
        let control = |name: &str| {
            reserved.get(name.as_bytes()).copied().filter(|&i| kinds[i as usize] == PieceType::Control)
        };
        let mut t = ScoreTokenizer {
            flavor: Flavor::SentencePiece,
            whole: WholeFlags::new(m.pieces.len()),
            bos_id: control(&m.bos_piece),
            eos_id: control(&m.eos_piece),
            vocab,
            kinds,
            reserved,
            user_defined: build_matcher(&user)?,
            byte_ids,
            raw_byte_fallback: false,
            unk_id: Some(unk),
            add_dummy_prefix: m.add_dummy_prefix,
            remove_extra_whitespaces: m.remove_extra_whitespaces,
            space,
            whitespace_suffix: m.treat_whitespace_as_suffix,
            joins: None,
            user_first: [false; 256],
            byte_whole: [NONE; 256],
            unk_surface: m.unk_surface.clone(),
            cache: ShardedCache::new(),
            specials: AddedTokens::from_specials(Vec::new())?,
        };
        t.finish(user.iter().map(|u| u.as_bytes()), Some(joins))?;
        Ok(t)
    }

    /// From a LEAP table as llama2.c runs it: BOS = 1 and EOS = 2 when those ids hold `<s>` and
    /// `</s>` (llama2.c hard-codes them); `dummy_prefix` by default only for such tables (a
    /// rank vocabulary's export has none).
    pub fn from_leap_llama2c(tokens: &[(Vec<u8>, f32)], dummy_prefix: Option<bool>) -> Result<Self> {
        let at = |i: usize, want: &[u8]| tokens.len() > 2 && tokens[i].0 == want;
        let bos = at(1, b"<s>").then_some(1);
        let eos = at(2, b"</s>").then_some(2);
        Self::from_leap(tokens, bos, eos, dummy_prefix.unwrap_or(bos.is_some()))
    }

    /// From a LEAP table (`(bytes, score)` by id). `bos_id`/`eos_id` as llama2.c uses them.
    /// `dummy_prefix`: prepend a space to non-empty text, as llama2.c does for its
    /// SentencePiece-derived tables (not wanted for a table exported from a rank vocabulary).
    pub fn from_leap(tokens: &[(Vec<u8>, f32)], bos_id: Option<u32>, eos_id: Option<u32>, dummy_prefix: bool) -> Result<Self> {
        let entries: Vec<(&[u8], f32, bool)> = tokens.iter().map(|(b, s)| (b.as_slice(), *s, true)).collect();
        // Byte fallback: <0xHH> pieces if the table has them all, else raw single bytes (a
        // repeated single byte is refused by `ScoreVocab::new` below).
        let mut hex = [NONE; 256];
        let mut raw = [NONE; 256];
        for (id, (b, _)) in tokens.iter().enumerate() {
            if let Some(byte) = byte_piece(b) {
                hex[byte as usize] = id as u32;
            }
            if b.len() == 1 && raw[b[0] as usize] == NONE {
                raw[b[0] as usize] = id as u32;
            }
        }
        // A byte-level table's symbols start as single bytes: its pair table needs every cut.
        let byte_level = hex.contains(&NONE) && !raw.contains(&NONE);
        let vocab = ScoreVocab::new(&entries, !byte_level, PairTable::Background)?;
        let (bytes, raw_fallback) = if !hex.contains(&NONE) {
            (hex, false)
        } else if !raw.contains(&NONE) {
            (raw, true)
        } else {
            let b = raw.iter().position(|&i| i == NONE).unwrap_or(0);
            return Err(Error::Vocab(format!(
                "byte {b:#04x} has neither a <0x{b:02X}> token nor a single-byte token: every byte needs one")));
        };
        let mut t = ScoreTokenizer {
            flavor: Flavor::Leap,
            whole: WholeFlags::new(tokens.len()),
            vocab,
            kinds: vec![PieceType::Normal; tokens.len()],
            reserved: HashMap::new(),
            user_defined: None,
            byte_ids: Some(Box::new(bytes)),
            raw_byte_fallback: raw_fallback,
            unk_id: None,
            bos_id: bos_id.filter(|&i| (i as usize) < tokens.len()),
            eos_id: eos_id.filter(|&i| (i as usize) < tokens.len()),
            add_dummy_prefix: dummy_prefix,
            remove_extra_whitespaces: false,
            space: " ",
            whitespace_suffix: false,
            joins: None,
            user_first: [false; 256],
            byte_whole: [NONE; 256],
            unk_surface: String::new(),
            cache: ShardedCache::new(),
            specials: AddedTokens::from_specials(Vec::new())?,
        };
        t.finish(std::iter::empty(), None)?;
        Ok(t)
    }

    /// `joins`: the segment joins if already computed (else computed here).
    fn finish<'a>(&mut self, extra: impl Iterator<Item = &'a [u8]>, joins: Option<Option<Joins>>) -> Result<()> {
        let mut specials = Vec::new();
        for id in 0..self.vocab.len() as u32 {
            let special = match self.flavor {
                Flavor::SentencePiece => matches!(self.kinds[id as usize], PieceType::Control | PieceType::Unknown),
                Flavor::Leap => Some(id) == self.bos_id || Some(id) == self.eos_id,
            };
            if let Some(s) = self.vocab.token(id).filter(|_| special).and_then(|b| std::str::from_utf8(b).ok()) {
                specials.push((s.to_owned(), id));
            }
        }
        self.specials = AddedTokens::from_specials(specials)?;
        let extra: Vec<&[u8]> = extra.collect();
        for p in &extra {
            self.user_first[p[0] as usize] = true;
        }
        self.joins = match joins {
            _ if self.raw_byte_fallback => None,
            Some(j) => j,
            None => self.compute_joins(&extra),
        };
        for b in 0..128u8 {
            if let Some(id) = self.vocab.lookup(&[b]).filter(|&id| self.whole(id)) {
                self.byte_whole[b as usize] = id;
            }
        }
        Ok(())
    }

    /// Whether a segment equal to piece `id` encodes to exactly `id` (see [`WholeFlags`]).
    #[inline]
    fn whole(&self, id: u32) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        let flag = &self.whole.0[id as usize];
        match flag.load(Relaxed) {
            1 => true,
            2 => false,
            _ => {
                let w = self.compute_whole(id);
                flag.store(if w { 1 } else { 2 }, Relaxed);
                w
            }
        }
    }

    #[cold]
    fn compute_whole(&self, id: u32) -> bool {
        let Some(bytes) = self.vocab.token(id) else { return false };
        // Segments are UTF-8, so a piece that is not can never be one.
        if self.vocab.lookup(bytes) != Some(id) || std::str::from_utf8(bytes).is_err() {
            return false;
        }
        let mut syms = Vec::new();
        self.initial_symbols(bytes, &mut syms);
        let mut result = (0usize, NONE);
        merge(&self.vocab, bytes, &mut syms, &mut Scratch::default(), |s| {
            result.0 += 1;
            result.1 = s.id;
        });
        result == (1, id)
    }

    /// Every adjacent character pair inside a mergeable or user-defined piece. A merged symbol
    /// holds all the characters it spans, so no symbol can ever span a boundary between two
    /// characters that no piece holds side by side: the text can be cut there and each part
    /// encoded alone, with the same result.
    fn compute_joins(&self, extra: &[&[u8]]) -> Option<Joins> {
        let pieces = (0..self.vocab.len() as u32).filter_map(|id| self.vocab.token(id).filter(|p| self.vocab.lookup(p) == Some(id)));
        joins_of(self.space, pieces.chain(extra.iter().copied()))
    }

    /// Cuts a segment into initial symbols.
    fn initial_symbols(&self, text: &[u8], out: &mut Vec<Symbol>) {
        let mut i = 0;
        // The next user-defined piece at or after `i`: (start, end), `usize::MAX` when there
        // is none left. One unanchored leftmost-longest search finds it, and the positions
        // before its start are known not to start one. (An anchored search at every position
        // where a piece could start read up to a piece's length each time: text "x" * N with
        // a piece "x" * 1023 + "y" took N * 1023 steps, 21 s for 1.6 MB.) Leftmost-longest
        // from `i` gives the same piece as trying each position in turn: no position before
        // the leftmost match starts one, and at that position the longest piece wins.
        let mut next_user: Option<(usize, usize)> = None;
        while i < text.len() {
            if let Some(ac) = self.user_defined.as_ref().filter(|_| self.user_first[text[i] as usize]) {
                let (start, end) = match next_user {
                    Some(n) if n.0 >= i => n,
                    _ => *next_user.insert(ac.find(Input::new(text).range(i..)).map_or((usize::MAX, 0), |m| (m.start(), m.end()))),
                };
                if start == i {
                    let id = self.vocab.lookup(&text[i..end]).unwrap_or(NONE);
                    out.push(Symbol { start: i as u32, end: end as u32, id, frozen: true });
                    i = end;
                    continue;
                }
            }
            if self.raw_byte_fallback {
                // A byte-level table (a rank vocabulary's export) starts from bytes, as rank BPE
                // does: starting from characters would differ where a character is a token
                // that rank BPE would not form (b"\xc2\x80" + b"\xc2\xb5" vs b"\x80\xc2" first).
                let bytes = self.byte_ids.as_ref().expect("LEAP always has byte ids");
                out.push(Symbol { start: i as u32, end: i as u32 + 1, id: bytes[text[i] as usize], frozen: false });
                i += 1;
                continue;
            }
            let end = (i + char_len(text[i])).min(text.len());
            let id = self.vocab.lookup(&text[i..end]).unwrap_or(NONE);
            if id == NONE && self.flavor == Flavor::Leap {
                // llama2.c: a character not in the vocabulary becomes its bytes.
                let bytes = self.byte_ids.as_ref().expect("LEAP always has byte ids");
                for b in i..end {
                    out.push(Symbol { start: b as u32, end: b as u32 + 1, id: bytes[text[b] as usize], frozen: !self.raw_byte_fallback });
                }
            } else {
                out.push(Symbol { start: i as u32, end: end as u32, id, frozen: false });
            }
            i = end;
        }
    }

    /// SentencePiece's normalisation with the identity rule set.
    fn normalize(&self, text: &str, out: &mut String) {
        out.clear();
        if self.flavor == Flavor::Leap {
            if !text.is_empty() && self.add_dummy_prefix {
                out.push(' ');
            }
            out.push_str(text);
            return;
        }
        let mut text = text;
        if self.remove_extra_whitespaces {
            text = text.trim_start_matches(' ');
        }
        if text.is_empty() {
            return;
        }
        let space = self.space;
        if self.add_dummy_prefix && !self.whitespace_suffix {
            out.push_str(space);
        }
        if !self.remove_extra_whitespaces {
            // Every space becomes the space symbol; nothing else changes. Runs between spaces
            // are copied whole (`str::split` would cost a searcher step per space, and spaces
            // are every few bytes).
            let bytes = text.as_bytes();
            let mut run = 0;
            for (i, &b) in bytes.iter().enumerate() {
                if b == b' ' {
                    out.push_str(&text[run..i]);
                    out.push_str(space);
                    run = i + 1;
                }
            }
            out.push_str(&text[run..]);
            if self.add_dummy_prefix && self.whitespace_suffix {
                out.push_str(space);
            }
            return;
        }
        let mut prev_space = false;
        for (i, piece) in text.split(' ').enumerate() {
            if i > 0 {
                if !(self.remove_extra_whitespaces && prev_space) {
                    out.push_str(space);
                }
                prev_space = true;
            }
            if !piece.is_empty() {
                out.push_str(piece);
                prev_space = false;
            }
        }
        if self.remove_extra_whitespaces {
            while out.ends_with(space) {
                out.truncate(out.len() - space.len());
            }
        }
        if self.add_dummy_prefix && self.whitespace_suffix {
            out.push_str(space);
        }
    }

    /// Encodes `text` into `out`, with BOS/EOS when asked and the model has them.
    pub fn encode_into(&self, text: &str, add_bos: bool, add_eos: bool, out: &mut Vec<u32>) {
        if add_bos {
            if let Some(b) = self.bos_id {
                out.push(b);
            }
        }
        let mut norm = String::with_capacity(text.len() + text.len() / 2 + 3);
        self.normalize(text, &mut norm);
        let (text, norm) = (norm.as_str(), norm.as_bytes());
        let mut scratch = Scratch::default();
        let mut prev_unk = false;
        let mut start = 0;
        match &self.joins {
            None => {
                if !text.is_empty() {
                    self.encode_segment(text.as_bytes(), &mut scratch, &mut prev_unk, false, out);
                }
            }
            Some(joins) => {
                // Bytes, with characters decoded only where a byte is not ASCII: a run of ASCII
                // costs one bit test per byte.
                let mut i = 0;
                let mut prev = match text.chars().next() {
                    Some(c) => {
                        i = c.len_utf8();
                        c
                    }
                    None => '\0',
                };
                while i < norm.len() {
                    let b = norm[i];
                    let c = if b < 0x80 {
                        if prev.is_ascii() {
                            if joins.ascii[prev as usize] >> b & 1 == 0 {
                                self.encode_segment(&norm[start..i], &mut scratch, &mut prev_unk, true, out);
                                start = i;
                            }
                            prev = b as char;
                            i += 1;
                            continue;
                        }
                        b as char
                    } else {
                        // `i` is on a character boundary: every step advances by whole characters.
                        match text.get(i..).and_then(|t| t.chars().next()) {
                            Some(c) => c,
                            None => break,
                        }
                    };
                    if !joins.contains(prev, c) {
                        self.encode_segment(&norm[start..i], &mut scratch, &mut prev_unk, true, out);
                        start = i;
                    }
                    prev = c;
                    i += c.len_utf8();
                }
                if start < norm.len() {
                    self.encode_segment(&norm[start..], &mut scratch, &mut prev_unk, true, out);
                }
            }
        }
        if add_eos {
            if let Some(e) = self.eos_id {
                out.push(e);
            }
        }
    }

    /// Encodes one segment: a whole piece that its own BPE keeps whole, a cached result, or
    /// score BPE (whose result is then cached).
    #[inline]
    fn encode_segment(&self, seg: &[u8], scratch: &mut Scratch, prev_unk: &mut bool, cache: bool, out: &mut Vec<u32>) {
        if seg.len() == 1 && self.byte_whole[seg[0] as usize] != NONE {
            out.push(self.byte_whole[seg[0] as usize]);
            *prev_unk = false;
            return;
        }
        let hash = self.vocab.hash(seg);
        if let Some(id) = self.vocab.lookup_hashed(seg, hash) {
            if self.whole(id) {
                out.push(id);
                *prev_unk = false;
                return;
            }
        }
        let cacheable = cache && ShardedCache::holds(seg.len());
        if cacheable && self.cache.get(seg, hash, out) {
            *prev_unk = false;
            return;
        }
        let before = out.len();
        let mut syms = std::mem::take(&mut scratch.symbols);
        syms.clear();
        self.initial_symbols(seg, &mut syms);
        let mut unknown = false;
        merge(&self.vocab, seg, &mut syms, scratch, |s| unknown |= self.emit(seg, s, prev_unk, out));
        scratch.symbols = syms;
        // A segment with an unknown symbol is left out: runs of unknowns fuse across segments,
        // so its ids depend on what came before. Judged by the symbols, not by the ids: an
        // unknown fused into the previous segment's gives no id at all, and caching that empty
        // result dropped the unknown from the next text that started with it ("\0\0" without
        // byte fallback: [▁, <unk>] once, then [▁]; found by fuzz/read_sentencepiece).
        if cacheable && !unknown && !self.unk_id.is_some_and(|u| out[before..].contains(&u)) {
            self.cache.put(seg, hash, &out[before..]);
        }
    }

    /// Pushes the ids of one final symbol; true when it became (or fused into) the unknown id.
    #[inline]
    fn emit(&self, seg: &[u8], s: &Symbol, prev_unk: &mut bool, out: &mut Vec<u32>) -> bool {
        let mut id = s.id;
        if id == NONE {
            id = self.reserved.get(&seg[s.start as usize..s.end as usize]).copied().unwrap_or(NONE);
        }
        if id != NONE {
            out.push(id);
            *prev_unk = false;
            return false;
        }
        // Not in the vocabulary.
        if let Some(bytes) = &self.byte_ids {
            out.extend(seg[s.start as usize..s.end as usize].iter().map(|&b| bytes[b as usize]));
            *prev_unk = false;
            false // byte pieces do not depend on what came before: cacheable
        } else if let Some(unk) = self.unk_id {
            if !*prev_unk {
                out.push(unk);
            }
            *prev_unk = true;
            true
        } else {
            false
        }
    }

    /// Encodes with the spellings of the `allowed` special pieces taken as those pieces, as a
    /// caller that splits the text there and encodes each part on its own would (each part
    /// gets its own dummy prefix, as with `sentencepiece`'s `encode` per part). A refused
    /// spelling is skipped as tiktoken skips one ([`AddedTokens::next_allowed`]).
    pub fn encode_allowed_into(&self, text: &str, allowed: &SpecialFilter, out: &mut Vec<u32>) {
        if allowed.is_none() || self.specials.is_empty() {
            return self.encode_into(text, false, false, out);
        }
        let mut start = 0;
        while let Some(m) = self.specials.next_allowed(text, start, allowed) {
            self.encode_into(&text[start..m.start], false, false, out);
            out.push(m.id);
            start = m.end;
        }
        self.encode_into(&text[start..], false, false, out);
    }

    /// Forgets the merged segments this tokenizer has cached (the ids never depend on them).
    pub fn clear_cache(&self) {
        self.cache.clear();
    }

    /// The special pieces (control and unknown; LEAP: BOS/EOS), as added tokens with no flags.
    pub fn added(&self) -> &AddedTokens {
        &self.specials
    }

    pub fn encode(&self, text: &str, add_bos: bool, add_eos: bool) -> Vec<u32> {
        let mut out = Vec::with_capacity(text.len() / 3 + 2);
        self.encode_into(text, add_bos, add_eos, &mut out);
        out
    }

    fn piece(&self, id: u32) -> Result<&[u8]> {
        self.vocab.token(id).ok_or(Error::UnknownToken(id))
    }

    /// Decodes as the home system does: SentencePiece's `DecodeIds` (byte pieces joined and read
    /// as UTF-8 with U+FFFD per bad byte, control pieces dropped, the unknown piece shown as
    /// " ⁇ ", U+2581 as space, the first piece's leading space dropped) or llama2.c's decode
    /// (the leading space of the piece after BOS dropped). Bytes that are not UTF-8 are kept
    /// raw (`lossy = false`) or replaced (`lossy = true`, SentencePiece's rule).
    pub fn decode(&self, ids: &[u32], lossy: bool) -> Result<Vec<u8>> {
        let mut text = Vec::with_capacity(ids.len() * 4);
        if self.flavor == Flavor::Leap {
            let mut prev = NONE;
            for &id in ids {
                let mut p = self.piece(id)?;
                // BOS and EOS are markers, not text (llama2.c never prints them).
                if Some(id) == self.bos_id || Some(id) == self.eos_id {
                    prev = id;
                    continue;
                }
                if prev != NONE && Some(prev) == self.bos_id && p.first() == Some(&b' ') {
                    p = &p[1..];
                }
                match byte_piece(p) {
                    Some(b) => text.push(b),
                    None => text.extend_from_slice(p),
                }
                prev = id;
            }
            return Ok(text);
        }
        let mut bytes: Vec<u8> = Vec::new();
        let flush = |bytes: &mut Vec<u8>, text: &mut Vec<u8>| {
            if lossy {
                push_lossy(bytes, text);
            } else {
                text.extend_from_slice(bytes);
            }
            bytes.clear();
        };
        let (mut is_bos_ws, mut bos_ws_seen) = (true, false);
        let space = self.space.as_bytes();
        for &id in ids {
            let p = self.piece(id)?;
            let kind = self.kinds[id as usize];
            if kind == PieceType::Byte {
                bytes.push(byte_piece(p).unwrap_or(0));
                continue;
            }
            flush(&mut bytes, &mut text);
            if bos_ws_seen || !text.is_empty() {
                is_bos_ws = false;
            }
            bos_ws_seen = false;
            match kind {
                PieceType::Control => {}
                PieceType::Unknown => text.extend_from_slice(self.unk_surface.as_bytes()),
                _ => {
                    let mut p = p;
                    if is_bos_ws && (self.add_dummy_prefix || self.remove_extra_whitespaces) && p.starts_with(space) {
                        p = &p[space.len()..];
                        bos_ws_seen = true;
                    }
                    replace_space(p, space, &mut text);
                }
            }
        }
        flush(&mut bytes, &mut text);
        Ok(text)
    }

    pub fn token_bytes(&self, id: u32) -> Result<&[u8]> {
        self.piece(id)
    }
    pub fn piece_id(&self, piece: &[u8]) -> Option<u32> {
        self.reserved.get(piece).copied().or_else(|| self.vocab.lookup(piece))
    }
    pub fn score(&self, id: u32) -> Result<f32> {
        self.piece(id)?;
        Ok(self.vocab.score(id))
    }
    pub fn kind(&self, id: u32) -> Result<PieceType> {
        self.piece(id)?;
        Ok(self.kinds[id as usize])
    }
    pub fn len(&self) -> usize {
        self.vocab.len()
    }
    pub fn is_empty(&self) -> bool {
        self.vocab.is_empty()
    }
    pub fn bos_id(&self) -> Option<u32> {
        self.bos_id
    }
    pub fn eos_id(&self) -> Option<u32> {
        self.eos_id
    }
    pub fn unk_id(&self) -> Option<u32> {
        self.unk_id
    }
    pub fn flavor(&self) -> Flavor {
        self.flavor
    }
    /// Whether the text is cut into independent segments before BPE (see the module docs).
    pub fn segmented(&self) -> bool {
        self.joins.is_some()
    }
}

/// The [`Joins`] of these pieces (`None` if one is not UTF-8: segmenting is then off).
fn joins_of<'a>(space: &str, pieces: impl Iterator<Item = &'a [u8]>) -> Option<Joins> {
    let mut joins = Joins::new(space.chars().next().unwrap_or(' '));
    for p in pieces {
        let Ok(s) = std::str::from_utf8(p) else { return None };
        let mut chars = s.chars();
        let Some(mut prev) = chars.next() else { continue };
        for c in chars {
            joins.insert(prev, c);
            prev = c;
        }
    }
    Some(joins)
}

fn build_matcher(user: &[String]) -> Result<Option<AhoCorasick>> {
    if user.is_empty() {
        return Ok(None);
    }
    // Unanchored (see `initial_symbols`), so a DFA would be built along failure links, in time
    // quadratic in a piece that repeats one character: only for short sets (`automaton_kind`).
    AhoCorasickBuilder::new()
        .match_kind(MatchKind::LeftmostLongest)
        .start_kind(StartKind::Unanchored)
        .kind(Some(crate::added::automaton_kind(user.iter().map(String::len))))
        .build(user)
        .map(Some)
        .map_err(|e| Error::Vocab(format!("user-defined pieces: {e}")))
}

fn replace_space(p: &[u8], space: &[u8], out: &mut Vec<u8>) {
    if space == b" " {
        out.extend_from_slice(p);
        return;
    }
    let mut i = 0;
    while i < p.len() {
        if p[i..].starts_with(space) {
            out.push(b' ');
            i += space.len();
        } else {
            out.push(p[i]);
            i += 1;
        }
    }
}

/// Appends bytes as UTF-8, each byte of an invalid sequence becoming U+FFFD (SentencePiece's
/// rule: one replacement per bad byte, not per maximal bad subsequence).
fn push_lossy(mut bytes: &[u8], out: &mut Vec<u8>) {
    loop {
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                out.extend_from_slice(s.as_bytes());
                return;
            }
            Err(e) => {
                let good = e.valid_up_to();
                out.extend_from_slice(&bytes[..good]);
                let bad = e.error_len().unwrap_or(bytes.len() - good);
                for _ in 0..bad {
                    out.extend_from_slice("\u{FFFD}".as_bytes());
                }
                bytes = &bytes[good + bad..];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The golden SentencePiece model with byte fallback off (its byte pieces made normal
    /// pieces, as SentencePiece requires): characters outside the vocabulary become the unknown
    /// id, one per run.
    fn without_byte_fallback() -> ScoreTokenizer {
        let data = include_bytes!("../../../../../tests/data/golden/tiny_sp.model");
        let mut m = crate::formats::sentencepiece::read(data).unwrap();
        m.byte_fallback = false;
        assert!(ScoreTokenizer::from_sentencepiece(&m).unwrap_err().to_string().contains("byte_fallback is off"));
        for p in &mut m.pieces {
            if p.kind == PieceType::Byte {
                p.kind = PieceType::Normal;
            }
        }
        ScoreTokenizer::from_sentencepiece(&m).unwrap()
    }

    #[test]
    fn a_fused_unknown_is_not_cached_as_nothing() {
        let t = without_byte_fallback();
        let unk = t.unk_id.unwrap();
        let cold = t.encode("\0\0", false, false);
        assert_eq!(cold.iter().filter(|&&i| i == unk).count(), 1, "{cold:?}");
        // Warm: the second "\0" (fused into the first's unknown, no id of its own) must not
        // have been cached as an empty result.
        assert_eq!(t.encode("\0\0", false, false), cold);
        assert_eq!(t.encode("\0", false, false), cold);
        assert_eq!(t.encode("a\0\0\0 \0", false, false), { t.clear_cache(); t.encode("a\0\0\0 \0", false, false) });
    }
}
