//! Serde's view of a positioned tree: decodes a spec's types from it exactly as serde-saphyr
//! would, or fails (with no message) where it is not sure, so that serde-saphyr decides.
//!
//! Exactness is the whole point: a value decoded here must equal what serde-saphyr decodes
//! from the same text, spans included. So a scalar becomes a number, a boolean or null only in
//! the plainest spellings (`12`, `-3`, `true`, `null`, `~`, nothing); any other spelling YAML
//! might read as one of those (`0x1F`, `1_000`, `yes`, `.inf`, `007`) is not guessed at here.
//! `yaml::agreement`, run by a unit test of each contract, compares both loads over the bundled
//! specs and thousands of variations of them.

use std::fmt;

use serde::de::{
    self, DeserializeSeed, EnumAccess, IntoDeserializer, MapAccess, SeqAccess, VariantAccess,
    Visitor,
};

use super::tree::TreeNode;

/// "Not here: let serde-saphyr decode it". Never shown to anyone.
#[derive(Debug)]
pub(crate) struct Declined;

impl fmt::Display for Declined {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("declined: serde-saphyr decodes this")
    }
}

impl std::error::Error for Declined {}

impl de::Error for Declined {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Declined
    }
}

type Result<T> = std::result::Result<T, Declined>;

/// serde-saphyr's name for its span-carrying wrapper, and the first key of the mapping it
/// shows that wrapper's visitor (see `serde_saphyr::Spanned`'s `Deserialize`).
const SPANNED: &str = "__yaml_spanned";
const SPANNED_MARKER: &str = "__serde_saphyr_private_spanned";

/// Decodes one node.
pub(crate) struct NodeDeserializer<'t, 'a>(pub &'t TreeNode<'a>);

/// What a plain scalar means when nothing says which type it should be.
enum Plain<'s> {
    Null,
    Bool(bool),
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    Text(&'s str),
}

/// The plain spellings of null (serde-saphyr's `scalar_is_nullish`).
fn is_null(text: &str) -> bool {
    matches!(text, "" | "~" | "null" | "Null" | "NULL")
}

/// A whole number written only with digits, without a leading zero: read the same by any YAML.
fn unsigned(text: &str) -> Option<u64> {
    let simple = !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    simple.then(|| text.parse().ok()).flatten()
}

fn signed(text: &str) -> Option<i64> {
    match text.strip_prefix('-') {
        Some(digits) if digits != "0" => unsigned(digits).and_then(|_| text.parse().ok()),
        Some(_) => None,
        None => unsigned(text).and_then(|n| i64::try_from(n).ok()),
    }
}

/// A fraction written `2.5` or `-0.25`: digits on both sides of the point, no exponent.
fn decimal(text: &str) -> Option<f64> {
    let (whole, fraction) = text.strip_prefix('-').unwrap_or(text).split_once('.')?;
    let simple = (whole == "0" || unsigned(whole).is_some())
        && !fraction.is_empty()
        && fraction.bytes().all(|b| b.is_ascii_digit());
    simple.then(|| text.parse().ok()).flatten()
}

/// What serde-saphyr's `deserialize_any` would make of a plain scalar, or `None` where it might
/// read a boolean, a number or a special float that this module does not decode.
fn plain(text: &str) -> Option<Plain<'_>> {
    if is_null(text) {
        return Some(Plain::Null);
    }
    match text {
        "true" => return Some(Plain::Bool(true)),
        "false" => return Some(Plain::Bool(false)),
        _ => {}
    }
    if let Some(n) = unsigned(text) {
        return Some(Plain::Unsigned(n));
    }
    if text.starts_with('-')
        && let Some(n) = signed(text)
    {
        return Some(Plain::Signed(n));
    }
    if let Some(x) = decimal(text) {
        return Some(Plain::Float(x));
    }
    let maybe_special = text.starts_with(|c: char| c.is_ascii_digit() || "+-.".contains(c))
        || [
            "y", "n", "yes", "no", "on", "off", "true", "false", "nan", "inf", "infinity",
        ]
        .iter()
        .any(|word| text.eq_ignore_ascii_case(word));
    (!maybe_special).then_some(Plain::Text(text))
}

impl<'t, 'a> NodeDeserializer<'t, 'a> {
    /// The text of a scalar that is not null.
    fn text(&self) -> Result<&'t str> {
        match self.0 {
            TreeNode::Scalar { text, plain, .. } if !(*plain && is_null(text)) => Ok(text),
            _ => Err(Declined),
        }
    }

    /// The text of a plain scalar.
    fn plain_text(&self) -> Result<&'t str> {
        match self.0 {
            TreeNode::Scalar {
                text, plain: true, ..
            } => Ok(text),
            _ => Err(Declined),
        }
    }

    fn is_null(&self) -> bool {
        matches!(self.0, TreeNode::Scalar { text, plain: true, .. } if is_null(text))
    }
}

macro_rules! unsigned_numbers {
    ($($method:ident $visit:ident $ty:ty),*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            let n = unsigned(self.plain_text()?).ok_or(Declined)?;
            visitor.$visit(<$ty>::try_from(n).map_err(|_| Declined)?)
        }
    )*};
}

macro_rules! signed_numbers {
    ($($method:ident $visit:ident $ty:ty),*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            let n = signed(self.plain_text()?).ok_or(Declined)?;
            visitor.$visit(<$ty>::try_from(n).map_err(|_| Declined)?)
        }
    )*};
}

macro_rules! declined {
    ($($method:ident),*) => {$(
        fn $method<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value> {
            Err(Declined)
        }
    )*};
}

impl<'de, 't, 'a> de::Deserializer<'de> for NodeDeserializer<'t, 'a> {
    type Error = Declined;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.0 {
            TreeNode::Scalar {
                text, plain: true, ..
            } => match plain(text).ok_or(Declined)? {
                Plain::Null => visitor.visit_unit(),
                Plain::Bool(b) => visitor.visit_bool(b),
                Plain::Unsigned(n) => visitor.visit_u64(n),
                Plain::Signed(n) => visitor.visit_i64(n),
                Plain::Float(x) => visitor.visit_f64(x),
                Plain::Text(text) => visitor.visit_str(text),
            },
            TreeNode::Scalar { text, .. } => visitor.visit_str(text),
            TreeNode::List { items, .. } => visitor.visit_seq(Items(items.iter())),
            TreeNode::Map { pairs, .. } => visitor.visit_map(Pairs {
                pairs: pairs.iter(),
                value: None,
            }),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.plain_text()? {
            "true" => visitor.visit_bool(true),
            "false" => visitor.visit_bool(false),
            _ => Err(Declined),
        }
    }

    unsigned_numbers!(deserialize_u8 visit_u8 u8, deserialize_u16 visit_u16 u16,
        deserialize_u32 visit_u32 u32, deserialize_u64 visit_u64 u64);
    signed_numbers!(deserialize_i8 visit_i8 i8, deserialize_i16 visit_i16 i16,
        deserialize_i32 visit_i32 i32, deserialize_i64 visit_i64 i64);
    declined!(
        deserialize_f32,
        deserialize_f64,
        deserialize_char,
        deserialize_bytes,
        deserialize_byte_buf
    );

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_str(self.text()?)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_string(self.text()?.to_owned())
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.is_null() {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.is_null() {
            visitor.visit_unit()
        } else {
            Err(Declined)
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        if name == SPANNED {
            visitor.visit_newtype_struct(SpannedView(self.0))
        } else {
            visitor.visit_newtype_struct(self)
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.0 {
            TreeNode::List { items, .. } => visitor.visit_seq(Items(items.iter())),
            _ => Err(Declined),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.0 {
            TreeNode::Map { pairs, .. } => visitor.visit_map(Pairs {
                pairs: pairs.iter(),
                value: None,
            }),
            _ => Err(Declined),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_map(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        match self.0 {
            TreeNode::Scalar { .. } => visitor.visit_enum(Variant {
                name: self.text()?,
                value: None,
            }),
            TreeNode::Map { pairs, .. } => match pairs.as_slice() {
                [(key, value)] => visitor.visit_enum(Variant {
                    name: NodeDeserializer(key).text()?,
                    value: Some(value),
                }),
                _ => Err(Declined),
            },
            TreeNode::List { .. } => Err(Declined),
        }
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_str(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_unit()
    }
}

struct Items<'t, 'a>(std::slice::Iter<'t, TreeNode<'a>>);

impl<'de> SeqAccess<'de> for Items<'_, '_> {
    type Error = Declined;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        self.0
            .next()
            .map(|item| seed.deserialize(NodeDeserializer(item)))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct Pairs<'t, 'a> {
    pairs: std::slice::Iter<'t, (TreeNode<'a>, TreeNode<'a>)>,
    value: Option<&'t TreeNode<'a>>,
}

impl<'de> MapAccess<'de> for Pairs<'_, '_> {
    type Error = Declined;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        let Some((key, value)) = self.pairs.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        seed.deserialize(NodeDeserializer(key)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        seed.deserialize(NodeDeserializer(self.value.take().ok_or(Declined)?))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.pairs.len())
    }
}

/// An enum's variant: a bare name, or the one key of a mapping and its value.
struct Variant<'t, 'a> {
    name: &'t str,
    value: Option<&'t TreeNode<'a>>,
}

impl<'de, 't, 'a> EnumAccess<'de> for Variant<'t, 'a> {
    type Error = Declined;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Self)> {
        let name: de::value::StrDeserializer<'_, Declined> = self.name.into_deserializer();
        Ok((seed.deserialize(name)?, self))
    }
}

impl<'de> VariantAccess<'de> for Variant<'_, '_> {
    type Error = Declined;

    /// Only a bare name: a unit variant written as a mapping (`recover: ~`) is left to
    /// serde-saphyr to judge.
    fn unit_variant(self) -> Result<()> {
        self.value.map_or(Ok(()), |_| Err(Declined))
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value> {
        seed.deserialize(NodeDeserializer(self.value.ok_or(Declined)?))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value> {
        de::Deserializer::deserialize_seq(NodeDeserializer(self.value.ok_or(Declined)?), visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        de::Deserializer::deserialize_map(NodeDeserializer(self.value.ok_or(Declined)?), visitor)
    }
}

/// The mapping serde-saphyr shows `Spanned`'s visitor: a marker, the value, and where it is
/// written (`referenced` and `defined` are the same place: there are no aliases here).
struct SpannedView<'t, 'a>(&'t TreeNode<'a>);

impl<'de> de::Deserializer<'de> for SpannedView<'_, '_> {
    type Error = Declined;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_map(SpannedFields {
            node: self.0,
            field: 0,
        })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

struct SpannedFields<'t, 'a> {
    node: &'t TreeNode<'a>,
    field: u8,
}

const SPANNED_FIELDS: [&str; 4] = [SPANNED_MARKER, "value", "referenced", "defined"];

impl<'de> MapAccess<'de> for SpannedFields<'_, '_> {
    type Error = Declined;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        let Some(key) = SPANNED_FIELDS.get(usize::from(self.field)) else {
            return Ok(None);
        };
        self.field += 1;
        let key: de::value::StrDeserializer<'_, Declined> = key.into_deserializer();
        seed.deserialize(key).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        match self.field {
            1 => seed.deserialize(true.into_deserializer()),
            2 => seed.deserialize(NodeDeserializer(self.node)),
            3 | 4 => {
                let at = self.node.at();
                seed.deserialize(LineColumn {
                    line: at.line as u64,
                    column: at.column as u64,
                    field: 0,
                })
            }
            _ => Err(Declined),
        }
    }
}

/// A `serde_saphyr::Location` as its `Deserialize` reads one: `line` and `column` (its span
/// is optional, and nothing in dlqspec reads it).
struct LineColumn {
    line: u64,
    column: u64,
    field: u8,
}

impl<'de> de::Deserializer<'de> for LineColumn {
    type Error = Declined;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_map(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

impl<'de> MapAccess<'de> for LineColumn {
    type Error = Declined;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        let key = match self.field {
            0 => "line",
            1 => "column",
            _ => return Ok(None),
        };
        self.field += 1;
        let key: de::value::StrDeserializer<'_, Declined> = key.into_deserializer();
        seed.deserialize(key).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let value = if self.field == 1 {
            self.line
        } else {
            self.column
        };
        seed.deserialize(value.into_deserializer())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_scalars_are_typed_only_in_their_plainest_spellings() {
        assert!(matches!(plain("12"), Some(Plain::Unsigned(12))));
        assert!(matches!(plain("-3"), Some(Plain::Signed(-3))));
        assert!(matches!(plain("~"), Some(Plain::Null)));
        assert!(matches!(plain("-0.5"), Some(Plain::Float(x)) if x == -0.5));
        assert!(matches!(plain("true"), Some(Plain::Bool(true))));
        assert!(matches!(
            plain("db timeout"),
            Some(Plain::Text("db timeout"))
        ));
        for unsure in [
            "0x1F",
            "1_000",
            "007",
            "-0",
            "+5",
            "1.",
            ".5",
            "1.5e3",
            "01.5",
            ".inf",
            "yes",
            "No",
            "ON",
            "y",
            "NaN",
            "True",
            "99999999999999999999",
        ] {
            assert!(plain(unsure).is_none(), "{unsure}");
        }
    }
}
