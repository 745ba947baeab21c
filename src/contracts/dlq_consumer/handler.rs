//! The scripted handler's vocabulary: what a spec says the handler does on each call (its
//! outcome, the class of the error it raises, how long the call takes), how a spec writes it,
//! and the error each outcome raises into an implementation.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::{self, MapAccess, Visitor, value::MapAccessDeserializer};

use crate::model::implementation::Raised;

/// The given error a `permanent` outcome raises, or a subclass of.
pub(crate) const PERMANENT_ERROR: &str = "PermanentError";
/// The given error a `transient` outcome raises, or a subclass of.
pub(crate) const TRANSIENT_ERROR: &str = "TransientError";

/// The error classes the given module defines: a subclass named after one of them would be
/// two classes of one name, so a spec may not name one.
pub(crate) const GIVEN_ERRORS: &[&str] =
    &[PERMANENT_ERROR, TRANSIENT_ERROR, "Crash", "MisuseError"];

/// The outcomes, as a spec writes them.
pub(crate) const OUTCOME_WORDS: &[&str] = &["ok", "transient", "permanent", "error", "crash"];

/// What the handler does on one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptedOutcome {
    /// The handler returns normally.
    Ok,
    /// The handler raises `TransientError`, or a subclass of it.
    Transient(GivenError),
    /// The handler raises `PermanentError`, or a subclass of it.
    Permanent(GivenError),
    /// An exception of another class, e.g. `TypeError`: the consumer must treat it as transient.
    Error { class: String, message: String },
    /// The handler crashes the process (`Crash`), which no consumer may catch.
    Crash,
}

/// A given error a handler raises: the given class itself, or a subclass of it the spec names
/// (`permanent: {class: OutOfStockError, message: ...}`), which the lesson's `except
/// PermanentError` treats as the given class and whose entry error names the subclass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GivenError {
    pub(crate) message: String,
    /// The subclass's name; `None` raises the given class itself. Boxed, so that an outcome,
    /// which the journal keeps for every handler call, is no bigger than one without it.
    pub(crate) subclass: Option<Box<str>>,
}

impl GivenError {
    /// The given class itself, with this message.
    pub(crate) fn new(message: impl Into<String>) -> Self {
        GivenError {
            message: message.into(),
            subclass: None,
        }
    }

    #[cfg(test)]
    /// A subclass named `class` of the given class, with this message.
    pub(crate) fn subclass(class: impl Into<String>, message: impl Into<String>) -> Self {
        GivenError {
            message: message.into(),
            subclass: Some(class.into().into_boxed_str()),
        }
    }

    /// The error raised: the subclass, extending `given`, or `given` itself.
    fn raised(&self, given: &str) -> Raised {
        match &self.subclass {
            Some(class) => Raised::error(&**class, &self.message).extending(given),
            None => Raised::error(given, &self.message),
        }
    }
}

impl From<&str> for GivenError {
    fn from(message: &str) -> Self {
        GivenError::new(message)
    }
}

impl From<String> for GivenError {
    fn from(message: String) -> Self {
        GivenError::new(message)
    }
}

impl ScriptedOutcome {
    /// The error the handler raises, if it raises.
    pub(crate) fn raised(&self) -> Option<Raised> {
        match self {
            ScriptedOutcome::Ok => None,
            ScriptedOutcome::Transient(error) => Some(error.raised(TRANSIENT_ERROR)),
            ScriptedOutcome::Permanent(error) => Some(error.raised(PERMANENT_ERROR)),
            ScriptedOutcome::Error { class, message } => Some(Raised::error(class, message)),
            ScriptedOutcome::Crash => Some(Raised::crash("the handler crashed the process")),
        }
    }

    /// The error a DLQ entry names for this outcome, `Class: message`, if it raises one an
    /// entry can hold (a crash is never dead-lettered).
    pub(crate) fn entry_error(&self) -> Option<String> {
        match self {
            ScriptedOutcome::Crash => None,
            other => other.raised().map(|raised| raised.describe()),
        }
    }

    /// The outcome in a trace line: `ok`, `crash`, or the class of the error raised.
    pub(crate) fn label(&self) -> &str {
        match self {
            ScriptedOutcome::Ok => "ok",
            ScriptedOutcome::Transient(error) => {
                error.subclass.as_deref().unwrap_or(TRANSIENT_ERROR)
            }
            ScriptedOutcome::Permanent(error) => {
                error.subclass.as_deref().unwrap_or(PERMANENT_ERROR)
            }
            ScriptedOutcome::Error { class, .. } => class,
            ScriptedOutcome::Crash => "crash",
        }
    }

    /// Whether a consumer must dead-letter it at once: a `PermanentError`, a subclass of it,
    /// or an `error` outcome that names the given class itself.
    pub(crate) fn is_permanent(&self) -> bool {
        match self {
            ScriptedOutcome::Permanent(_) => true,
            ScriptedOutcome::Error { class, .. } => class == PERMANENT_ERROR,
            _ => false,
        }
    }
}

/// One scripted handler call: what the handler does, and how long the call takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptedCall {
    pub(crate) outcome: ScriptedOutcome,
    /// How far the world's clock moves during the call (`takes: N`): a handler that waits on a
    /// database timeout returns later than it was called, and whatever reads the clock after
    /// the call (`failed_at`) sees it. 0 is an instant call.
    pub(crate) takes: u64,
}

impl From<ScriptedOutcome> for ScriptedCall {
    fn from(outcome: ScriptedOutcome) -> Self {
        ScriptedCall { outcome, takes: 0 }
    }
}

impl ScriptedCall {
    /// The same outcome, the call taking `takes`.
    pub(crate) fn taking(outcome: ScriptedOutcome, takes: u64) -> Self {
        ScriptedCall { outcome, takes }
    }
}

/// A message's scripted calls, shared: a `generate` group gives all its messages one list,
/// and every run of a scenario reads the same script.
pub(crate) type Outcomes = Arc<[ScriptedCall]>;

/// The handler's scripted calls per message id.
pub type Script = HashMap<String, Outcomes>;

/// A message's calls with these outcomes, each taking no time.
pub(crate) fn instant(outcomes: impl IntoIterator<Item = ScriptedOutcome>) -> Outcomes {
    outcomes.into_iter().map(ScriptedCall::from).collect()
}

/// `ok: {takes: N}`, `crash: {takes: N}`: an outcome with no message, taking time.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "TimedOutcome")]
struct Timed {
    /// How far the clock moves during the call.
    takes: u64,
}

/// `transient: {message: ..., class: ..., takes: ...}` and its `permanent` twin.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "GivenErrorDetails")]
struct GivenErrorFields {
    /// The error's message.
    message: String,
    /// A subclass of the given error, by the name the spec chooses: it is the given error to
    /// every `except` / `instanceof` of it, and the entry's error names it.
    #[serde(default)]
    #[schemars(with = "String")]
    class: Option<String>,
    /// How far the clock moves during the call.
    #[serde(default)]
    takes: u64,
}

/// `error: {class: ..., message: ..., takes: ...}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "ErrorOutcome")]
struct ErrorFields {
    /// The exception's class, e.g. `TypeError`.
    class: String,
    message: String,
    /// How far the clock moves during the call.
    #[serde(default)]
    takes: u64,
}

/// What `transient:` or `permanent:` holds: the message alone, or a mapping.
struct GivenErrorValue(GivenErrorFields);

impl<'de> Deserialize<'de> for GivenErrorValue {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ValueVisitor;

        impl<'de> Visitor<'de> for ValueVisitor {
            type Value = GivenErrorValue;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "the error's message, or a mapping `{message: ..., class: ..., takes: ...}`",
                )
            }

            fn visit_str<E: de::Error>(self, message: &str) -> Result<Self::Value, E> {
                Ok(GivenErrorValue(GivenErrorFields {
                    message: message.to_owned(),
                    class: None,
                    takes: 0,
                }))
            }

            // The value may be a mapping, so YAML types a plain scalar before it is read: a
            // whole number is its own text (`transient: 404`), but a boolean, a fraction or
            // nothing could have been written several ways, and a message must read exactly
            // as written, so those are refused with the fix.
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Self::Value, E> {
                self.visit_str(&n.to_string())
            }

            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Self::Value, E> {
                self.visit_str(&n.to_string())
            }

            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Err(E::custom(unquoted("a number with a fraction")))
            }

            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Err(E::custom(unquoted(
                    "a boolean (`yes`, `no`, `on`, `off`, `true`, `false`...)",
                )))
            }

            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Err(E::custom(
                    "expected the error's message, found nothing (an empty message is written \"\")",
                ))
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                GivenErrorFields::deserialize(MapAccessDeserializer::new(map)).map(GivenErrorValue)
            }
        }

        deserializer.deserialize_any(ValueVisitor)
    }
}

/// Why a message YAML typed as `what` is refused, and the fix.
fn unquoted(what: &str) -> String {
    format!(
        "YAML reads this message as {what}, not as text: write it in quotes, e.g. `transient: \"no\"`"
    )
}

/// A handler outcome is written as a bare name (`ok`, `crash`) or a mapping with one key, the
/// outcome, holding its message or its details (`SingleKey` hands this either one).
impl<'de> Deserialize<'de> for ScriptedCall {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct CallVisitor;

        impl<'de> Visitor<'de> for CallVisitor {
            type Value = ScriptedCall;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a handler outcome: ok, crash, or a mapping with one key")
            }

            fn visit_str<E: de::Error>(self, word: &str) -> Result<Self::Value, E> {
                match word {
                    "ok" => Ok(ScriptedOutcome::Ok.into()),
                    "crash" => Ok(ScriptedOutcome::Crash.into()),
                    "transient" | "permanent" | "error" => Err(E::custom(format!(
                        "`{word}` needs a value: write `{word}: ...`"
                    ))),
                    other => Err(E::unknown_variant(other, OUTCOME_WORDS)),
                }
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let Some(word) = map.next_key::<String>()? else {
                    return Err(de::Error::custom(
                        "expected a handler outcome; found an empty mapping `{}`",
                    ));
                };
                let call = match word.as_str() {
                    "ok" => {
                        ScriptedCall::taking(ScriptedOutcome::Ok, map.next_value::<Timed>()?.takes)
                    }
                    "crash" => ScriptedCall::taking(
                        ScriptedOutcome::Crash,
                        map.next_value::<Timed>()?.takes,
                    ),
                    "transient" | "permanent" => {
                        let GivenErrorValue(fields) = map.next_value()?;
                        let error = GivenError {
                            message: fields.message,
                            subclass: fields.class.map(String::into_boxed_str),
                        };
                        let outcome = if word == "transient" {
                            ScriptedOutcome::Transient(error)
                        } else {
                            ScriptedOutcome::Permanent(error)
                        };
                        ScriptedCall::taking(outcome, fields.takes)
                    }
                    "error" => {
                        let fields: ErrorFields = map.next_value()?;
                        let outcome = ScriptedOutcome::Error {
                            class: fields.class,
                            message: fields.message,
                        };
                        ScriptedCall::taking(outcome, fields.takes)
                    }
                    other => return Err(de::Error::unknown_variant(other, OUTCOME_WORDS)),
                };
                Ok(call)
            }
        }

        deserializer.deserialize_any(CallVisitor)
    }
}

/// Why `class`, the subclass a `transient` or `permanent` outcome names, cannot be one, if it
/// cannot: a class name is a name, and not one the given module already defines.
pub(crate) fn check_subclass(class: &str, given: &str) -> Result<(), String> {
    if class.trim().is_empty() {
        return Err(format!(
            "`class` names the subclass of {given} the handler raises; it cannot be empty (leave it out to raise {given} itself)"
        ));
    }
    if GIVEN_ERRORS.contains(&class) {
        let itself = if class == given {
            format!("leave `class` out to raise {given} itself")
        } else {
            format!("name a subclass of {given} of your own, e.g. `OutOfStockError`")
        };
        return Err(format!(
            "`{class}` is a class of the given module, not a subclass of {given}: {itself}"
        ));
    }
    Ok(())
}

// The schema of a handler outcome as a spec writes it, which `ScriptedCall` reads: a bare
// name, or a mapping with one key. Only the schema is made from it.
/// What the handler does on one call, as the spec scripts it; `takes` is how far the clock
/// moves during the call.
#[allow(dead_code)]
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
#[schemars(rename = "ScriptedOutcome")]
enum OutcomeSchema {
    /// The handler returns normally.
    Ok,
    /// The handler returns normally, the call taking `takes`.
    #[serde(rename = "ok")]
    OkTaking(Timed),
    /// The handler raises `TransientError`, or a subclass of it named `class`.
    Transient(GivenErrorSchema),
    /// The handler raises `PermanentError`, or a subclass of it named `class`.
    Permanent(GivenErrorSchema),
    /// An exception of another class, e.g. `TypeError`: the consumer must treat it as transient.
    Error(ErrorFields),
    /// The handler crashes the process (`Crash`), which no consumer may catch.
    Crash,
    /// The handler crashes the process, the call taking `takes`.
    #[serde(rename = "crash")]
    CrashTaking(Timed),
}

// The value of `transient:` or `permanent:`, for the schema.
/// The error's message, or the message with a subclass and the time the call takes.
#[allow(dead_code)]
#[derive(JsonSchema)]
#[serde(untagged)]
#[schemars(rename = "GivenErrorOutcome")]
enum GivenErrorSchema {
    Message(String),
    Described(GivenErrorFields),
}

impl JsonSchema for ScriptedCall {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        OutcomeSchema::schema_name()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        OutcomeSchema::schema_id()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        OutcomeSchema::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::yaml::SingleKey;

    fn read(text: &str) -> Result<Vec<ScriptedCall>, String> {
        let file = crate::text::source::SourceFile::from_text("t.yaml", text);
        crate::text::yaml::parse::<Vec<SingleKey<ScriptedCall>>>(&file)
            .map(|calls| calls.into_iter().map(|call| call.0).collect())
            .map_err(|error| error.to_string())
    }

    #[test]
    fn every_outcome_reads_bare_or_with_its_details() {
        let calls = read(
            "- ok\n- crash\n- transient: db timeout\n- permanent: bad\n- error: {class: TypeError, message: t}\n\
             - ok: {takes: 2}\n- crash: {takes: 3}\n- transient: {message: db timeout, takes: 5}\n\
             - permanent: {message: gone, class: OutOfStockError}\n- error: {class: KeyError, message: sku, takes: 1}\n- transient: 404\n",
        )
        .unwrap();
        let outcomes: Vec<(&str, u64)> =
            calls.iter().map(|c| (c.outcome.label(), c.takes)).collect();
        assert_eq!(
            outcomes,
            [
                ("ok", 0),
                ("crash", 0),
                ("TransientError", 0),
                ("PermanentError", 0),
                ("TypeError", 0),
                ("ok", 2),
                ("crash", 3),
                ("TransientError", 5),
                ("OutOfStockError", 0),
                ("KeyError", 1),
                ("TransientError", 0),
            ]
        );
        assert_eq!(
            calls[8].outcome.raised(),
            Some(Raised::error("OutOfStockError", "gone").extending(PERMANENT_ERROR))
        );
        assert_eq!(
            calls[8].outcome.entry_error().as_deref(),
            Some("OutOfStockError: gone")
        );
        assert!(calls[8].outcome.is_permanent());
        assert_eq!(calls[10].outcome, ScriptedOutcome::Transient("404".into()));
    }

    #[test]
    fn a_misspelt_outcome_or_detail_is_named() {
        let unknown = read("- retry\n").unwrap_err();
        assert!(unknown.contains("unknown value `retry`"), "{unknown}");
        let bare = read("- transient\n").unwrap_err();
        assert!(
            bare.contains("`transient` needs a value: write `transient: ...`"),
            "{bare}"
        );
        let field = read("- transient: {mesage: x}\n").unwrap_err();
        assert!(field.contains("unknown field `mesage`"), "{field}");
        let takes = read("- ok: {takes: -1}\n").unwrap_err();
        assert!(takes.contains("1:"), "{takes}");
        // A message YAML types as a boolean could have been written `no`, `off` or `false`.
        let boolean = read("- permanent: no\n").unwrap_err();
        assert!(boolean.contains("write it in quotes"), "{boolean}");
        assert_eq!(
            read("- permanent: \"no\"\n").unwrap()[0]
                .outcome
                .entry_error()
                .as_deref(),
            Some("PermanentError: no")
        );
    }

    #[test]
    fn a_subclass_may_not_be_named_after_a_given_class() {
        assert!(check_subclass("OutOfStockError", PERMANENT_ERROR).is_ok());
        assert!(
            check_subclass("PermanentError", PERMANENT_ERROR)
                .unwrap_err()
                .contains("leave `class` out")
        );
        assert!(
            check_subclass("TransientError", PERMANENT_ERROR)
                .unwrap_err()
                .contains("not a subclass of PermanentError")
        );
        assert!(check_subclass(" ", TRANSIENT_ERROR).is_err());
    }
}
