//! Plain data that file formats read into and models are built from: the meeting point that
//! keeps [`crate::formats`] and [`crate::models`] from importing each other. A format's reader
//! fills these types; a model's constructor takes them; neither knows the other.
//!
//! Today: a SentencePiece model ([`ModelProto`], its pieces and their types). The merge-list
//! formats hand over plain tables (`Vec<Vec<u8>>`, merge triples) and the stage types
//! ([`crate::normalizers::Normalizer`], [`crate::pretokenize::prefix::Prefix`],
//! [`crate::added::AddedToken`]); the rank formats hand over a [`crate::Vocab`].

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum PieceType {
    Normal = 1,
    Unknown = 2,
    Control = 3,
    UserDefined = 4,
    Unused = 5,
    Byte = 6,
}

impl PieceType {
    pub fn from_i64(v: i64) -> Option<Self> {
        Some(match v {
            1 => PieceType::Normal,
            2 => PieceType::Unknown,
            3 => PieceType::Control,
            4 => PieceType::UserDefined,
            5 => PieceType::Unused,
            6 => PieceType::Byte,
            _ => return None,
        })
    }
}

/// One piece, its text borrowed from the file's bytes (a model has tens of thousands: one
/// allocation each was a tenth of the load, and as much again to free them).
#[derive(Debug, Clone, PartialEq)]
pub struct Piece<'a> {
    pub piece: &'a str,
    pub score: f32,
    pub kind: PieceType,
}

/// The parts of a ModelProto that encoding needs, plus the raw bytes of the rest.
#[derive(Debug, Clone)]
pub struct ModelProto<'a> {
    pub pieces: Vec<Piece<'a>>,
    pub model_type: i64,
    pub byte_fallback: bool,
    pub treat_whitespace_as_suffix: bool,
    pub unk_piece: String,
    pub bos_piece: String,
    pub eos_piece: String,
    pub pad_piece: String,
    pub unk_surface: String,
    pub normalizer_name: String,
    pub precompiled_charsmap_len: usize,
    pub add_dummy_prefix: bool,
    pub remove_extra_whitespaces: bool,
    pub escape_whitespaces: bool,
    /// The TrainerSpec and NormalizerSpec as read (written back as they are).
    pub trainer_spec_raw: Option<Vec<u8>>,
    pub normalizer_spec_raw: Option<Vec<u8>>,
    /// Other top-level fields as (field number, raw value bytes), kept for writing.
    pub other_raw: Vec<(u32, Vec<u8>)>,
}

impl Default for ModelProto<'_> {
    fn default() -> Self {
        ModelProto {
            pieces: Vec::new(),
            model_type: 2,
            byte_fallback: false,
            treat_whitespace_as_suffix: false,
            unk_piece: "<unk>".into(),
            bos_piece: "<s>".into(),
            eos_piece: "</s>".into(),
            pad_piece: "<pad>".into(),
            unk_surface: " \u{2047} ".into(),
            normalizer_name: "identity".into(),
            precompiled_charsmap_len: 0,
            add_dummy_prefix: true,
            remove_extra_whitespaces: false,
            escape_whitespaces: true,
            trainer_spec_raw: None,
            normalizer_spec_raw: None,
            other_raw: Vec::new(),
        }
    }
}

