//! Just enough of the protobuf wire format to read and write SentencePiece's `ModelProto`.
//!
//! Why hand-written instead of a protobuf library: we read five messages and a dozen fields,
//! every error must name the byte offset and the field (a generic decoder says "failed to
//! parse"), every length must be checked against the bytes present before anything is
//! allocated, and the core stays free of a code generator and a build-time `protoc`.

use crate::error::{Error, Result};

/// One field's value as it appears on the wire.
#[derive(Debug, Clone, Copy)]
pub enum Value<'a> {
    Varint(u64),
    Fixed64(u64),
    /// A length-delimited value and its absolute offset in the file.
    Bytes(&'a [u8], usize),
    Fixed32(u32),
}

/// Reads the fields of one message. `base` is the message's offset in the file, for errors.
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    base: usize,
    what: &'static str,
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8], base: usize, what: &'static str) -> Self {
        Reader { data, pos: 0, base, what }
    }

    #[cold]
    fn err(&self, at: usize, message: impl Into<String>) -> Error {
        Error::format(format!("byte {} ({})", self.base + at, self.what), message)
    }

    #[inline]
    fn varint(&mut self) -> Result<u64> {
        // One byte (tags, short lengths, piece types): nearly every varint of a model.
        if let Some(&b) = self.data.get(self.pos) {
            if b < 0x80 {
                self.pos += 1;
                return Ok(b as u64);
            }
        }
        let start = self.pos;
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let Some(&b) = self.data.get(self.pos) else {
                return Err(self.err(start, "a varint runs past the end of the message"));
            };
            self.pos += 1;
            if shift == 63 && b > 1 {
                return Err(self.err(start, "a varint overflows 64 bits"));
            }
            value |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(self.err(start, "a varint is longer than 10 bytes"))
    }

    /// The next (field number, value, offset of the tag), or `None` at the end of the message.
    #[inline]
    pub fn next_field(&mut self) -> Result<Option<(u32, Value<'a>, usize)>> {
        if self.pos >= self.data.len() {
            return Ok(None);
        }
        let at = self.pos;
        let key = self.varint()?;
        let field = key >> 3;
        if field == 0 || field > u32::MAX as u64 >> 3 {
            return Err(self.err(at, format!("field number {field} is not valid (tag {key:#x})")));
        }
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => {
                let b = self.take(8, at)?;
                Value::Fixed64(u64::from_le_bytes(b.try_into().expect("8 bytes")))
            }
            2 => {
                let len = self.varint()?;
                if len > (self.data.len() - self.pos) as u64 {
                    return Err(self.err(at, format!(
                        "field {field} says {len} bytes follow, only {} remain", self.data.len() - self.pos)));
                }
                let start = self.pos;
                let b = self.take(len as usize, at)?;
                Value::Bytes(b, self.base + start)
            }
            5 => {
                let b = self.take(4, at)?;
                Value::Fixed32(u32::from_le_bytes(b.try_into().expect("4 bytes")))
            }
            w => return Err(self.err(at, format!("field {field} has wire type {w}, which this reader does not accept (groups are not used by ModelProto)"))),
        };
        Ok(Some((field as u32, value, self.base + at)))
    }

    #[inline]
    fn take(&mut self, n: usize, at: usize) -> Result<&'a [u8]> {
        if self.data.len() - self.pos < n {
            return Err(self.err(at, format!("a {n}-byte value runs past the end of the message")));
        }
        let b = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(b)
    }
}

/// Appends protobuf fields to a buffer.
#[derive(Default)]
pub struct Writer {
    pub buf: Vec<u8>,
}

impl Writer {
    pub fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }
    pub fn tag(&mut self, field: u32, wire: u8) {
        self.varint(((field as u64) << 3) | wire as u64);
    }
    pub fn bytes(&mut self, field: u32, b: &[u8]) {
        self.tag(field, 2);
        self.varint(b.len() as u64);
        self.buf.extend_from_slice(b);
    }
    pub fn uint(&mut self, field: u32, v: u64) {
        self.tag(field, 0);
        self.varint(v);
    }
    /// int32 on the wire: negative values are sign-extended to 10 bytes, as protobuf does.
    pub fn int32(&mut self, field: u32, v: i32) {
        self.tag(field, 0);
        self.varint(v as i64 as u64);
    }
    pub fn float(&mut self, field: u32, v: f32) {
        self.tag(field, 5);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let mut w = Writer::default();
        w.bytes(1, b"abc");
        w.int32(2, -1);
        w.float(3, 1.5);
        let mut r = Reader::new(&w.buf, 0, "test");
        assert!(matches!(r.next_field().unwrap(), Some((1, Value::Bytes(b"abc", 2), 0))));
        assert!(matches!(r.next_field().unwrap(), Some((2, Value::Varint(v), _)) if v as i64 as i32 == -1));
        assert!(matches!(r.next_field().unwrap(), Some((3, Value::Fixed32(v), _)) if f32::from_bits(v) == 1.5));
        assert!(r.next_field().unwrap().is_none());
        let e = Reader::new(&[0x0a, 0x7f, 1], 10, "m").next_field().unwrap_err().to_string();
        assert!(e.contains("byte 10 (m)") && e.contains("127 bytes follow"), "{e}");
        assert!(Reader::new(&[0x0b], 0, "m").next_field().unwrap_err().to_string().contains("wire type 3"));
        assert!(Reader::new(&[0x08, 0xff], 0, "m").next_field().unwrap_err().to_string().contains("past the end"));
    }
}
