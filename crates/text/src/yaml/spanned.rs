//! A value with the place it was written (`Spanned`), and a one-key map read as a tagged
//! variant (`SingleKey`), guarding serde-saphyr's way of decoding a bare variant name.

use super::*;

/// The position of a parsed value.
pub(super) fn position(location: &serde_saphyr::Location) -> Position {
    Position::new(location.line() as usize, location.column() as usize)
}

/// The position where a spanned value starts in the file.
pub fn at<T>(spanned: &Spanned<T>) -> Position {
    spanned.referenced
}

/// A parsed value with where it is written: serde-saphyr's `Spanned`, under our own name so that
/// it can describe itself to schemars (a spanned value looks exactly like the value in a spec).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Spanned<T> {
    pub value: T,
    /// Where the value is used (for an alias: the alias).
    pub(crate) referenced: Position,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Spanned<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let spanned = serde_saphyr::Spanned::<T>::deserialize(deserializer)?;
        Ok(Spanned {
            value: spanned.value,
            referenced: position(&spanned.referenced),
        })
    }
}

/// A value written either as a bare name (`recover`) or as a mapping with exactly one key
/// (`process: ok`), decoded into the externally tagged enum `T`.
///
/// serde-saphyr decodes a bare name of a variant that takes a value by swallowing the *next*
/// list item as that value (`- process` then `- recover` became `process: recover`). Going
/// through `deserialize_any` makes a bare name a plain string, so that case is an error.
#[derive(Debug, Clone, PartialEq)]
pub struct SingleKey<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for SingleKey<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SingleKeyVisitor<T>(PhantomData<T>);

        impl<'de, T: Deserialize<'de>> Visitor<'de> for SingleKeyVisitor<T> {
            type Value = SingleKey<T>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a name, or a mapping with one key")
            }

            fn visit_str<E: de::Error>(self, name: &str) -> Result<Self::Value, E> {
                let as_name: de::value::StrDeserializer<'_, E> = name.into_deserializer();
                T::deserialize(as_name).map(SingleKey).map_err(|error| {
                    let text = error.to_string();
                    if text.contains("expected newtype variant")
                        || text.contains("expected struct variant")
                        || text.contains("expected tuple variant")
                    {
                        E::custom(format!("`{name}` needs a value: write `{name}: ...`"))
                    } else {
                        error
                    }
                })
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let Some(first) = map.next_key::<String>()? else {
                    return Err(de::Error::custom(
                        "expected a name, or a mapping with one key; found an empty mapping `{}`",
                    ));
                };
                let one = OneEntry {
                    key: Some(first.clone()),
                    map: &mut map,
                };
                let value = T::deserialize(de::value::MapAccessDeserializer::new(one))?;
                // serde's externally tagged enums read one entry and ignore the rest, so a
                // second key (`- process: ok` with `restart: 1` under it) would pass unread.
                if let Some(second) = map.next_key::<String>()? {
                    return Err(de::Error::custom(format!(
                        "`{second}` is a second key beside `{first}`: an item holds one key; put `{second}` in an item of its own (`- {second}: ...`), or remove it"
                    )));
                }
                Ok(SingleKey(value))
            }
        }

        deserializer.deserialize_any(SingleKeyVisitor(PhantomData))
    }
}

/// The first entry of a mapping whose key is already read: a mapping of that one entry, so
/// that an enum decodes from it and the entries after it are left for [`SingleKey`] to see.
pub(super) struct OneEntry<'m, A> {
    key: Option<String>,
    map: &'m mut A,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for OneEntry<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        match self.key.take() {
            Some(key) => seed.deserialize(key.into_deserializer()).map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}
