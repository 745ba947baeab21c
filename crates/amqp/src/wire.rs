//! AMQP 0.9.1 on the wire: frames, method arguments and field tables, each read within bounds.
//!
//! Everything the broker sends is read through `Reader`, which never reads past the frame it
//! was given and never allocates more than that frame holds; a frame is never longer than the
//! `frame_max` the connection negotiated.

use std::fmt;

/// The frame types of AMQP 0.9.1.
pub(crate) const FRAME_METHOD: u8 = 1;
pub(crate) const FRAME_HEADER: u8 = 2;
pub(crate) const FRAME_BODY: u8 = 3;
pub(crate) const FRAME_HEARTBEAT: u8 = 8;
/// The octet that ends every frame.
pub(crate) const FRAME_END: u8 = 0xCE;

/// A field value, as RabbitMQ writes them in tables (its own table of types, not the
/// standard's, where the two disagree: `s` is a signed 16-bit number).
#[derive(Debug, Clone, PartialEq)]
pub enum Field {
    Bool(bool),
    Int(i64),
    Float(f64),
    /// A long string: bytes, usually UTF-8.
    Text(Vec<u8>),
    Table(Table),
    Array(Vec<Field>),
    Timestamp(u64),
    Decimal {
        scale: u8,
        value: u32,
    },
    Bytes(Vec<u8>),
    Void,
}

impl Field {
    /// A long string from text.
    pub fn text(text: &str) -> Field {
        Field::Text(text.as_bytes().to_vec())
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            Field::Int(n) => Some(*n),
            Field::Timestamp(n) => i64::try_from(*n).ok(),
            _ => None,
        }
    }

    pub(crate) fn as_text(&self) -> Option<String> {
        match self {
            Field::Text(bytes) => Some(String::from_utf8_lossy(bytes).into_owned()),
            _ => None,
        }
    }
}

/// A field table, in the order written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table(pub Vec<(String, Field)>);

impl Table {
    pub fn get(&self, key: &str) -> Option<&Field> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn with(mut self, key: &str, value: Field) -> Table {
        self.0.push((key.to_owned(), value));
        self
    }
}

/// What the broker sent that does not read as AMQP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Malformed(pub String);

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reads the arguments of one frame's payload, never past its end.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    /// Bits are packed into octets: the octet being read and the next bit's place in it.
    bits: Option<(u8, u8)>,
}

/// Tables nest (a table in an array in a table): deeper than this is refused, so a hostile
/// frame cannot exhaust the stack.
const MAX_DEPTH: usize = 16;

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Reader {
            bytes,
            at: 0,
            bits: None,
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
        self.bits = None;
        let end = self
            .at
            .checked_add(n)
            .filter(|end| *end <= self.bytes.len())
            .ok_or_else(|| {
                Malformed(format!(
                    "a field runs past the end of its frame ({n} bytes at {})",
                    self.at
                ))
            })?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, Malformed> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn u16(&mut self) -> Result<u16, Malformed> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    pub(crate) fn u32(&mut self) -> Result<u32, Malformed> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(crate) fn u64(&mut self) -> Result<u64, Malformed> {
        let b = self.take(8)?;
        let mut array = [0u8; 8];
        array.copy_from_slice(b);
        Ok(u64::from_be_bytes(array))
    }

    /// One bit of a run of packed bits.
    pub(crate) fn bit(&mut self) -> Result<bool, Malformed> {
        let (octet, place) = match self.bits {
            Some((octet, place)) if place < 8 => (octet, place),
            _ => (self.u8()?, 0),
        };
        self.bits = Some((octet, place + 1));
        Ok(octet & (1 << place) != 0)
    }

    pub(crate) fn short_string(&mut self) -> Result<String, Malformed> {
        let len = self.u8()? as usize;
        Ok(String::from_utf8_lossy(self.take(len)?).into_owned())
    }

    pub(crate) fn long_bytes(&mut self) -> Result<Vec<u8>, Malformed> {
        let len = self.u32()? as usize;
        Ok(self.take(len)?.to_vec())
    }

    pub(crate) fn long_string(&mut self) -> Result<String, Malformed> {
        Ok(String::from_utf8_lossy(&self.long_bytes()?).into_owned())
    }

    pub(crate) fn table(&mut self) -> Result<Table, Malformed> {
        self.table_at(0)
    }

    fn table_at(&mut self, depth: usize) -> Result<Table, Malformed> {
        if depth > MAX_DEPTH {
            return Err(Malformed(format!("tables nested deeper than {MAX_DEPTH}")));
        }
        let len = self.u32()? as usize;
        let mut inner = Reader::new(self.take(len)?);
        let mut fields = Vec::new();
        while inner.at < inner.bytes.len() {
            let key = inner.short_string()?;
            let value = inner.field(depth)?;
            fields.push((key, value));
        }
        Ok(Table(fields))
    }

    fn field(&mut self, depth: usize) -> Result<Field, Malformed> {
        let kind = self.u8()?;
        Ok(match kind {
            b't' => Field::Bool(self.u8()? != 0),
            b'b' => Field::Int(i64::from(self.u8()? as i8)),
            b'B' => Field::Int(i64::from(self.u8()?)),
            b's' => Field::Int(i64::from(self.u16()? as i16)),
            b'u' => Field::Int(i64::from(self.u16()?)),
            b'I' => Field::Int(i64::from(self.u32()? as i32)),
            b'i' => Field::Int(i64::from(self.u32()?)),
            b'l' => Field::Int(self.u64()? as i64),
            b'L' => Field::Int(self.u64()? as i64),
            b'f' => Field::Float(f64::from(f32::from_bits(self.u32()?))),
            b'd' => Field::Float(f64::from_bits(self.u64()?)),
            b'D' => Field::Decimal {
                scale: self.u8()?,
                value: self.u32()?,
            },
            b'S' => Field::Text(self.long_bytes()?),
            b'x' => Field::Bytes(self.long_bytes()?),
            b'T' => Field::Timestamp(self.u64()?),
            b'F' => Field::Table(self.table_at(depth + 1)?),
            b'A' => {
                let len = self.u32()? as usize;
                let mut inner = Reader::new(self.take(len)?);
                let mut items = Vec::new();
                while inner.at < inner.bytes.len() {
                    items.push(inner.field(depth + 1)?);
                }
                Field::Array(items)
            }
            b'V' => Field::Void,
            other => {
                return Err(Malformed(format!(
                    "a table field of unknown type {:?}",
                    char::from(other)
                )));
            }
        })
    }
}

/// Writes method arguments and tables.
#[derive(Default)]
pub(crate) struct Writer {
    pub(crate) bytes: Vec<u8>,
    /// Where the octet of the current run of bits is, and how many bits it holds.
    bits: Option<(usize, u8)>,
}

impl Writer {
    pub(crate) fn method(class: u16, method: u16) -> Writer {
        let mut writer = Writer::default();
        writer.u16(class).u16(method);
        writer
    }

    pub(crate) fn u8(&mut self, value: u8) -> &mut Self {
        self.bits = None;
        self.bytes.push(value);
        self
    }

    pub(crate) fn u16(&mut self, value: u16) -> &mut Self {
        self.bits = None;
        self.bytes.extend_from_slice(&value.to_be_bytes());
        self
    }

    pub(crate) fn u32(&mut self, value: u32) -> &mut Self {
        self.bits = None;
        self.bytes.extend_from_slice(&value.to_be_bytes());
        self
    }

    pub(crate) fn u64(&mut self, value: u64) -> &mut Self {
        self.bits = None;
        self.bytes.extend_from_slice(&value.to_be_bytes());
        self
    }

    pub(crate) fn bit(&mut self, value: bool) -> &mut Self {
        let (at, place) = match self.bits {
            Some((at, place)) if place < 8 => (at, place),
            _ => {
                self.bytes.push(0);
                (self.bytes.len() - 1, 0)
            }
        };
        if value {
            self.bytes[at] |= 1 << place;
        }
        self.bits = Some((at, place + 1));
        self
    }

    /// A short string, which holds at most 255 bytes: callers keep to that (a longer text
    /// is cut at a character boundary rather than written as a frame the broker refuses).
    pub(crate) fn short_string(&mut self, text: &str) -> &mut Self {
        let mut end = text.len().min(255);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let bytes = &text.as_bytes()[..end];
        self.u8(bytes.len() as u8);
        self.bytes.extend_from_slice(bytes);
        self
    }

    pub(crate) fn long_bytes(&mut self, bytes: &[u8]) -> &mut Self {
        self.u32(bytes.len() as u32);
        self.bytes.extend_from_slice(bytes);
        self
    }

    pub(crate) fn table(&mut self, table: &Table) -> &mut Self {
        let mut inner = Writer::default();
        for (key, value) in &table.0 {
            inner.short_string(key);
            inner.field(value);
        }
        self.long_bytes(&inner.bytes)
    }

    fn field(&mut self, value: &Field) -> &mut Self {
        match value {
            Field::Bool(yes) => self.u8(b't').u8(u8::from(*yes)),
            Field::Int(n) => self.u8(b'l').u64(*n as u64),
            Field::Float(x) => self.u8(b'd').u64(x.to_bits()),
            Field::Text(bytes) => self.u8(b'S').long_bytes(bytes),
            Field::Bytes(bytes) => self.u8(b'x').long_bytes(bytes),
            Field::Timestamp(t) => self.u8(b'T').u64(*t),
            Field::Decimal { scale, value } => self.u8(b'D').u8(*scale).u32(*value),
            Field::Table(table) => self.u8(b'F').table(table),
            Field::Array(items) => {
                let mut inner = Writer::default();
                for item in items {
                    inner.field(item);
                }
                self.u8(b'A').long_bytes(&inner.bytes)
            }
            Field::Void => self.u8(b'V'),
        }
    }
}

/// One frame with its header and end octet, ready to send.
pub(crate) fn frame(kind: u8, channel: u16, payload: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(payload.len() + 8);
    bytes.push(kind);
    bytes.extend_from_slice(&channel.to_be_bytes());
    bytes.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    bytes.extend_from_slice(payload);
    bytes.push(FRAME_END);
    bytes
}

/// The basic properties of a message that dlqspec writes or reads; the others are skipped.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Properties {
    pub message_id: Option<String>,
    pub headers: Table,
    /// 2 for persistent.
    pub delivery_mode: Option<u8>,
}

// The property flags of class `basic`, from the highest bit down.
const CONTENT_TYPE: u16 = 1 << 15;
const CONTENT_ENCODING: u16 = 1 << 14;
const HEADERS: u16 = 1 << 13;
const DELIVERY_MODE: u16 = 1 << 12;
const PRIORITY: u16 = 1 << 11;
const CORRELATION_ID: u16 = 1 << 10;
const REPLY_TO: u16 = 1 << 9;
const EXPIRATION: u16 = 1 << 8;
const MESSAGE_ID: u16 = 1 << 7;
const TIMESTAMP: u16 = 1 << 6;
const TYPE: u16 = 1 << 5;
const USER_ID: u16 = 1 << 4;
const APP_ID: u16 = 1 << 3;
const CLUSTER_ID: u16 = 1 << 2;

impl Properties {
    /// The content header's payload for a body of `size` bytes.
    pub(crate) fn header(&self, size: u64) -> Vec<u8> {
        let mut flags = 0u16;
        if !self.headers.0.is_empty() {
            flags |= HEADERS;
        }
        if self.delivery_mode.is_some() {
            flags |= DELIVERY_MODE;
        }
        if self.message_id.is_some() {
            flags |= MESSAGE_ID;
        }
        let mut writer = Writer::default();
        writer.u16(60).u16(0).u64(size).u16(flags);
        if !self.headers.0.is_empty() {
            writer.table(&self.headers);
        }
        if let Some(mode) = self.delivery_mode {
            writer.u8(mode);
        }
        if let Some(id) = &self.message_id {
            writer.short_string(id);
        }
        writer.bytes
    }

    /// Reads a content header: the body's size and the properties.
    pub(crate) fn read_header(payload: &[u8]) -> Result<(u64, Properties), Malformed> {
        let mut reader = Reader::new(payload);
        let _class = reader.u16()?;
        let _weight = reader.u16()?;
        let size = reader.u64()?;
        let flags = reader.u16()?;
        if flags & 1 != 0 {
            return Err(Malformed(
                "a content header with more than one flag word".into(),
            ));
        }
        let mut properties = Properties::default();
        if flags & CONTENT_TYPE != 0 {
            reader.short_string()?;
        }
        if flags & CONTENT_ENCODING != 0 {
            reader.short_string()?;
        }
        if flags & HEADERS != 0 {
            properties.headers = reader.table()?;
        }
        if flags & DELIVERY_MODE != 0 {
            properties.delivery_mode = Some(reader.u8()?);
        }
        if flags & PRIORITY != 0 {
            reader.u8()?;
        }
        for flag in [CORRELATION_ID, REPLY_TO, EXPIRATION] {
            if flags & flag != 0 {
                reader.short_string()?;
            }
        }
        if flags & MESSAGE_ID != 0 {
            properties.message_id = Some(reader.short_string()?);
        }
        if flags & TIMESTAMP != 0 {
            reader.u64()?;
        }
        for flag in [TYPE, USER_ID, APP_ID, CLUSTER_ID] {
            if flags & flag != 0 {
                reader.short_string()?;
            }
        }
        Ok((size, properties))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_reads_back_as_written_with_every_kind_of_field() {
        let table = Table::default()
            .with("flag", Field::Bool(true))
            .with("count", Field::Int(-3))
            .with("name", Field::text("dlqspec"))
            .with("at", Field::Timestamp(7))
            .with(
                "deaths",
                Field::Array(vec![Field::Table(
                    Table::default().with("count", Field::Int(2)),
                )]),
            )
            .with("nothing", Field::Void);
        let mut writer = Writer::default();
        writer.table(&table);
        assert_eq!(Reader::new(&writer.bytes).table(), Ok(table));
    }

    #[test]
    fn bits_pack_into_one_octet_and_read_back() {
        let mut writer = Writer::default();
        writer.bit(true).bit(false).bit(true).u8(9);
        assert_eq!(writer.bytes, [0b101, 9]);
        let mut reader = Reader::new(&writer.bytes);
        assert_eq!(
            (reader.bit(), reader.bit(), reader.bit(), reader.u8()),
            (Ok(true), Ok(false), Ok(true), Ok(9))
        );
    }

    #[test]
    fn a_field_that_claims_more_than_its_frame_holds_is_refused_not_read() {
        // A long string claiming 4 GiB in a frame of 6 bytes.
        let mut reader = Reader::new(&[0xff, 0xff, 0xff, 0xff, b'a', b'b']);
        assert!(reader.long_bytes().is_err());
        // An unknown field type.
        let mut writer = Writer::default();
        writer.u32(3).u8(1).u8(b'k').u8(b'?');
        assert!(Reader::new(&writer.bytes).table().is_err());
    }

    #[test]
    fn tables_nested_too_deep_are_refused() {
        let mut table = Table::default();
        for _ in 0..(MAX_DEPTH + 2) {
            table = Table::default().with("t", Field::Table(table));
        }
        let mut writer = Writer::default();
        writer.table(&table);
        assert!(Reader::new(&writer.bytes).table().is_err());
    }

    #[test]
    fn a_content_header_reads_back_its_size_and_properties() {
        let properties = Properties {
            message_id: Some("a".into()),
            headers: Table::default().with("x-delivery-count", Field::Int(2)),
            delivery_mode: Some(2),
        };
        let header = properties.header(5);
        assert_eq!(Properties::read_header(&header), Ok((5, properties)));
    }
}
