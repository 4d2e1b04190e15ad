//! The one error type of the core. The binding layer maps each variant to a Python exception.

/// Everything that can go wrong in the core, each with enough context to act on.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A vocabulary file is malformed. `location` says where ("line 7", "byte 64 (token table)").
    #[error("{location}: {message}")]
    Format { location: String, message: String },

    /// The vocabulary given in memory is inconsistent (duplicate ranks, missing byte tokens, ...).
    #[error("invalid vocabulary: {0}")]
    Vocab(String),

    /// The split pattern does not compile.
    #[error("invalid split pattern: {0}")]
    Pattern(String),

    /// The regex engine gave up on an input (for example its backtracking limit was reached).
    #[error("the split pattern failed on this input: {0}")]
    Split(String),

    /// Reading a vocabulary file failed (the file is missing, unreadable, or changed while read).
    #[error("{0}")]
    Io(std::io::Error),

    /// A token id that is neither a mergeable rank nor a special token.
    #[error("token id {0} is not in the vocabulary")]
    UnknownToken(u32),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn format(location: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Format { location: location.into(), message: message.into() }
    }
}
