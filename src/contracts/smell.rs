//! The catalogue of smell ids `dlqspec lint` reports, and a spec's `allow:` of some of them.
//!
//! Smell ids are stable: people allow them by name, on the command line (`lint --allow ID`)
//! or in a spec (`allow: [{smell: ID, reason: ...}]`). Both are checked against this catalogue,
//! with a did-you-mean for a typo.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::text::source::{Position, SourceFile};
use crate::text::spec_error::SpecError;
use crate::text::yaml::{self, Spanned};

/// The smells `dlqspec lint` finds across specs or in any spec (each contract names its own
/// scenario smells).
pub(crate) const NO_RULE: &str = "no-rule";
pub(crate) const DUPLICATE_NAME: &str = "duplicate-name";
pub(crate) const UNCOVERED_RULE: &str = "uncovered-rule";
pub(crate) const UNEXERCISED_RULE: &str = "unexercised-rule";
pub(crate) const CHECKS_NOTHING: &str = "checks-nothing";

/// The smells of a scenario's run, found for every contract by `smells.rs` from the facts each
/// one tells (`never-delivered` is dlq-consumer's alone; `never-processed` was found by a
/// contract once written in Rust, now an exercise folder, and no contract finds it now, though
/// an `allow:` of it is still read), named here, where every id is listed.
pub(crate) const NEVER_DELIVERED: &str = "never-delivered";
pub(crate) const UNUSED_OUTCOMES: &str = "unused-outcomes";
pub(crate) const NEVER_PROCESSED: &str = "never-processed";
pub(crate) const IDLE_TRAILING_STEP: &str = "idle-trailing-step";

/// An allow in a spec that suppresses nothing: reported like a stale known failure.
pub(crate) const STALE_ALLOW: &str = "stale-allow";

/// Every smell id, in the order the docs list them.
pub(crate) const SMELLS: &[&str] = &[
    NO_RULE,
    UNEXERCISED_RULE,
    CHECKS_NOTHING,
    DUPLICATE_NAME,
    UNCOVERED_RULE,
    NEVER_DELIVERED,
    UNUSED_OUTCOMES,
    NEVER_PROCESSED,
    IDLE_TRAILING_STEP,
    STALE_ALLOW,
];

/// The catalogue's spelling of `word`, or why it is not a smell id, with a did-you-mean;
/// also the value parser of `lint --allow`.
pub(crate) fn known(word: &str) -> Result<&'static str, String> {
    if let Some(id) = SMELLS.iter().find(|id| **id == word) {
        return Ok(id);
    }
    let near = crate::text::suggest::hint(word, SMELLS);
    Err(format!(
        "`{word}` is not a smell id{near}; the smells are {}",
        SMELLS.join(", ")
    ))
}

/// One `allow:` item as a spec writes it.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AllowSpec {
    /// The id of the smell to allow in this spec (`dlqspec lint` prints ids with each smell).
    #[schemars(schema_with = "smell_schema")]
    pub(crate) smell: Spanned<String>,
    /// Why the smell is fine here, for the next reader; required, not blank.
    // Optional to the parser only, so that a missing reason is a spec error saying what to
    // write; the schema requires it.
    #[schemars(required, schema_with = "reason_schema")]
    pub(crate) reason: Option<Spanned<String>>,
}

/// The smells a spec may allow: all but those about a whole suite or about allows.
fn allowable() -> Vec<&'static str> {
    SMELLS
        .iter()
        .copied()
        .filter(|id| *id != UNCOVERED_RULE && *id != STALE_ALLOW)
        .collect()
}

fn smell_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": allowable(),
        "description": "The id of the smell to allow in this spec (`dlqspec lint` prints ids with each smell)."
    })
}

fn reason_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "minLength": 1,
        "pattern": "\\S",
        "description": "Why the smell is fine here, for the next reader; required, not blank."
    })
}

/// A smell a spec allows, checked: `lint` does not report it in this spec, and reports the
/// allow itself (`stale-allow`) when the spec has no such smell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Allow {
    pub(crate) smell: &'static str,
    pub(crate) reason: String,
    /// Where the allowed smell's id is written.
    pub(crate) position: Position,
}

/// The allows of a spec, checked: each names a smell of the catalogue that one spec can have,
/// once, with a reason that is not blank. Every broken allow is told.
pub(crate) fn allows(
    file: &SourceFile,
    written: &[Spanned<AllowSpec>],
) -> Result<Vec<Allow>, SpecError> {
    let mut out: Vec<Allow> = Vec::with_capacity(written.len());
    let mut errors = crate::text::spec_error::SpecErrors::default();
    for item in written {
        if let Some(allow) = errors.keep(allow_of(file, item, &out)) {
            out.push(allow);
        }
    }
    errors.check()?;
    Ok(out)
}

/// One allow, checked against the allows before it.
fn allow_of(
    file: &SourceFile,
    item: &Spanned<AllowSpec>,
    out: &[Allow],
) -> Result<Allow, SpecError> {
    let at = yaml::at(&item.value.smell);
    let word = item.value.smell.value.as_str();
    let smell = known(word).map_err(|why| SpecError::invalid(file, at, why))?;
    if smell == UNCOVERED_RULE || smell == STALE_ALLOW {
        let why = if smell == STALE_ALLOW {
            "an allow that suppresses nothing is to be removed, not allowed"
        } else {
            "a rule no spec covers is about a whole suite, not one spec: allow it with `dlqspec lint --allow uncovered-rule`"
        };
        return Err(SpecError::invalid(
            file,
            at,
            format!("`{smell}` cannot be allowed in a spec: {why}"),
        ));
    }
    if out.iter().any(|allow| allow.smell == smell) {
        return Err(SpecError::invalid(
            file,
            at,
            format!("`{smell}` is allowed twice: keep one allow, with one reason"),
        ));
    }
    let reason = match &item.value.reason {
        Some(reason) if !reason.value.trim().is_empty() => reason.value.trim().to_owned(),
        Some(reason) => {
            return Err(SpecError::invalid(
                file,
                yaml::at(reason),
                format!(
                    "the allow of `{smell}` has an empty `reason`: say why the smell is fine in this spec"
                ),
            ));
        }
        None => {
            return Err(SpecError::invalid(
                file,
                yaml::at(item),
                format!(
                    "the allow of `{smell}` has no `reason`: write `{{smell: {smell}, reason: \"why it is fine here\"}}`"
                ),
            ));
        }
    };
    Ok(Allow {
        smell,
        reason,
        position: at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_id_is_kept_and_a_typo_gets_a_did_you_mean() {
        assert_eq!(known("no-rule"), Ok("no-rule"));
        let error = known("never-delivred").unwrap_err();
        assert!(
            error.starts_with("`never-delivred` is not a smell id (did you mean `never-delivered`?); the smells are no-rule, "),
            "{error}"
        );
        assert!(
            known("banana")
                .unwrap_err()
                .starts_with("`banana` is not a smell id (the nearest valid one is `no-rule`); ")
        );
    }
}
