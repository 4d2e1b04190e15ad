//! SentencePiece `.model` files: a protobuf `ModelProto`.
//!
//! ```text
//! ModelProto      1: repeated SentencePiece pieces   2: TrainerSpec   3: NormalizerSpec
//!                 4: SelfTestData (kept as bytes)    5: NormalizerSpec denormalizer (kept)
//! SentencePiece   1: piece (string)  2: score (float)  3: type (NORMAL=1 UNKNOWN=2 CONTROL=3
//!                 USER_DEFINED=4 UNUSED=5 BYTE=6; default NORMAL)
//! TrainerSpec     3: model_type (UNIGRAM=1 BPE=2 ...)  24: treat_whitespace_as_suffix
//!                 35: byte_fallback  40-43: unk/bos/eos/pad id  44: unk_surface
//!                 45-48: unk/bos/eos/pad piece
//! NormalizerSpec  1: name  2: precompiled_charsmap  3: add_dummy_prefix (default true)
//!                 4: remove_extra_whitespaces (default true)  5: escape_whitespaces (default true)
//! ```
//! Fields this reader does not interpret are kept as raw bytes and written back unchanged, so
//! a model read and written again is the same model.

use super::protobuf::{Reader, Value, Writer};
use crate::error::{Error, Result};

/// Pieces longer than this are refused: real pieces are a few dozen bytes.
pub const MAX_PIECE_LEN: usize = 4096;

pub use crate::spec::{ModelProto, Piece, PieceType};

fn bad(at: usize, field: &str, message: impl Into<String>) -> Error {
    Error::format(format!("byte {at} ({field})"), message)
}

fn string(b: &[u8], at: usize, field: &str) -> Result<String> {
    std::str::from_utf8(b).map(str::to_owned).map_err(|e| bad(at, field, format!("not UTF-8: {e}")))
}

fn expect_varint(v: Value<'_>, at: usize, field: &str) -> Result<u64> {
    match v {
        Value::Varint(x) => Ok(x),
        _ => Err(bad(at, field, "expected a varint")),
    }
}

fn expect_bytes<'a>(v: Value<'a>, at: usize, field: &str) -> Result<(&'a [u8], usize)> {
    match v {
        Value::Bytes(b, off) => Ok((b, off)),
        _ => Err(bad(at, field, "expected a length-delimited value")),
    }
}

/// Parses a `.model` file held in memory.
pub fn read(data: &[u8]) -> Result<ModelProto<'_>> {
    let mut m = ModelProto { remove_extra_whitespaces: true, ..ModelProto::default() };
    m.model_type = 1; // protobuf default: UNIGRAM
    let mut r = Reader::new(data, 0, "ModelProto");
    // A piece takes at least 4 bytes on the wire (tag, length, a non-empty piece field), so
    // this never reserves more than the file can fill; real models use ~15 bytes per piece.
    let mut pieces = Vec::with_capacity(data.len() / 12);
    while let Some((field, value, at)) = r.next_field()? {
        match field {
            1 => {
                let (b, off) = expect_bytes(value, at, "pieces")?;
                pieces.push(read_piece(b, off, pieces.len())?);
            }
            2 => {
                let (b, off) = expect_bytes(value, at, "trainer_spec")?;
                read_trainer(b, off, &mut m)?;
                m.trainer_spec_raw = Some(b.to_vec());
            }
            3 => {
                let (b, off) = expect_bytes(value, at, "normalizer_spec")?;
                read_normalizer(b, off, &mut m)?;
                m.normalizer_spec_raw = Some(b.to_vec());
            }
            4 | 5 => {
                let (b, _) = expect_bytes(value, at, "ModelProto")?;
                m.other_raw.push((field, b.to_vec()));
            }
            _ => {
                return Err(bad(at, "ModelProto", format!(
                    "unexpected field {field}: a SentencePiece ModelProto has fields 1-5")))
            }
        }
    }
    if pieces.is_empty() {
        return Err(bad(0, "pieces", "the model has no pieces"));
    }
    m.pieces = pieces;
    Ok(m)
}

fn read_piece(data: &[u8], base: usize, index: usize) -> Result<Piece<'_>> {
    let mut r = Reader::new(data, base, "SentencePiece");
    let (mut piece, mut score, mut kind) = (None, 0f32, PieceType::Normal);
    // Field names are formatted only for an error: a model has tens of thousands of pieces.
    let field = |name: &str| format!("pieces[{index}].{name}");
    while let Some((f, value, at)) = r.next_field()? {
        match f {
            1 => {
                let Value::Bytes(b, off) = value else {
                    return Err(bad(at, &field("piece"), "expected a length-delimited value"));
                };
                if b.len() > MAX_PIECE_LEN {
                    return Err(bad(off, &field("piece"), format!("{} bytes; pieces longer than {MAX_PIECE_LEN} bytes are refused", b.len())));
                }
                let text = std::str::from_utf8(b).map_err(|e| bad(off, &field("piece"), format!("not UTF-8: {e}")))?;
                piece = Some(text);
            }
            2 => match value {
                Value::Fixed32(bits) => {
                    score = f32::from_bits(bits);
                    if !score.is_finite() {
                        return Err(bad(at, &field("score"), format!("{score} is not a finite number")));
                    }
                }
                _ => return Err(bad(at, &field("score"), "expected a 32-bit float")),
            },
            3 => {
                let Value::Varint(v) = value else {
                    return Err(bad(at, &field("type"), "expected a varint"));
                };
                kind = PieceType::from_i64(v as i64).ok_or_else(|| {
                    bad(at, &field("type"), format!("{v} is not a piece type (1-6)"))
                })?;
            }
            _ => {} // unknown fields of a piece carry nothing we need
        }
    }
    let piece = piece.filter(|p| !p.is_empty()).ok_or_else(|| bad(base, &field("piece"), "empty or missing"))?;
    // Kept bit for bit (-0.0 too) so a model written back is the same file; the encoder folds
    // -0.0 into 0.0, as SentencePiece's comparisons do.
    Ok(Piece { piece, score, kind })
}

fn read_trainer(data: &[u8], base: usize, m: &mut ModelProto<'_>) -> Result<()> {
    let mut r = Reader::new(data, base, "TrainerSpec");
    while let Some((f, value, at)) = r.next_field()? {
        match f {
            3 => m.model_type = expect_varint(value, at, "trainer_spec.model_type")? as i64,
            24 => m.treat_whitespace_as_suffix = expect_varint(value, at, "trainer_spec.treat_whitespace_as_suffix")? != 0,
            35 => m.byte_fallback = expect_varint(value, at, "trainer_spec.byte_fallback")? != 0,
            44..=48 => {
                let (b, off) = expect_bytes(value, at, "trainer_spec piece names")?;
                let s = string(b, off, "trainer_spec piece names")?;
                match f {
                    44 => m.unk_surface = s,
                    45 => m.unk_piece = s,
                    46 => m.bos_piece = s,
                    47 => m.eos_piece = s,
                    _ => m.pad_piece = s,
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn read_normalizer(data: &[u8], base: usize, m: &mut ModelProto<'_>) -> Result<()> {
    let mut r = Reader::new(data, base, "NormalizerSpec");
    while let Some((f, value, at)) = r.next_field()? {
        match f {
            1 => {
                let (b, off) = expect_bytes(value, at, "normalizer_spec.name")?;
                m.normalizer_name = string(b, off, "normalizer_spec.name")?;
            }
            2 => m.precompiled_charsmap_len = expect_bytes(value, at, "normalizer_spec.precompiled_charsmap")?.0.len(),
            3 => m.add_dummy_prefix = expect_varint(value, at, "normalizer_spec.add_dummy_prefix")? != 0,
            4 => m.remove_extra_whitespaces = expect_varint(value, at, "normalizer_spec.remove_extra_whitespaces")? != 0,
            5 => m.escape_whitespaces = expect_varint(value, at, "normalizer_spec.escape_whitespaces")? != 0,
            _ => {}
        }
    }
    Ok(())
}

/// Writes a ModelProto. Raw specs read from a file are written back unchanged; a model made
/// from another format gets specs synthesised from the fields above.
pub fn write(m: &ModelProto<'_>) -> Vec<u8> {
    let mut w = Writer::default();
    for p in &m.pieces {
        let mut pw = Writer::default();
        pw.bytes(1, p.piece.as_bytes());
        pw.float(2, p.score);
        if p.kind != PieceType::Normal {
            pw.uint(3, p.kind as u64);
        }
        w.bytes(1, &pw.buf);
    }
    let trainer = m.trainer_spec_raw.clone().unwrap_or_else(|| {
        let mut t = Writer::default();
        t.uint(3, m.model_type as u64);
        t.int32(4, m.pieces.len() as i32);
        if m.treat_whitespace_as_suffix {
            t.uint(24, 1);
        }
        if m.byte_fallback {
            t.uint(35, 1);
        }
        let id_of = |name: &str, kind: PieceType| {
            m.pieces.iter().position(|p| p.piece == name && p.kind == kind).map_or(-1, |i| i as i32)
        };
        t.int32(40, id_of(&m.unk_piece, PieceType::Unknown));
        t.int32(41, id_of(&m.bos_piece, PieceType::Control));
        t.int32(42, id_of(&m.eos_piece, PieceType::Control));
        t.int32(43, id_of(&m.pad_piece, PieceType::Control));
        t.bytes(45, m.unk_piece.as_bytes());
        t.bytes(46, m.bos_piece.as_bytes());
        t.bytes(47, m.eos_piece.as_bytes());
        t.bytes(48, m.pad_piece.as_bytes());
        t.buf
    });
    w.bytes(2, &trainer);
    let normalizer = m.normalizer_spec_raw.clone().unwrap_or_else(|| {
        let mut n = Writer::default();
        n.bytes(1, m.normalizer_name.as_bytes());
        n.uint(3, m.add_dummy_prefix as u64);
        n.uint(4, m.remove_extra_whitespaces as u64);
        n.uint(5, m.escape_whitespaces as u64);
        n.buf
    });
    w.bytes(3, &normalizer);
    for (f, b) in &m.other_raw {
        w.bytes(*f, b);
    }
    w.buf
}
