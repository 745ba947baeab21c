//! The compact form of a dlq-consumer spec, for big scenarios in a few lines: `generate`
//! (messages from id and body patterns and a count), `repeat` (a step list N times), and
//! compact expectations (`counts`, `dlq_reasons`, DLQ entries with a `count`). Everything is
//! expanded on loading into the plain form, so the runner, `explain` and `bless` see the
//! messages, steps and entries one by one, each pointing at the line that wrote it.
//!
//! A pattern is text in which `{n}` stands for the message's number: `from`, `from + 1`, ...
//! Expansion is bounded, whatever the counts say, so a hostile spec cannot make dlqspec
//! allocate without end.

use std::sync::Arc;

use super::spec::{Expectation, GenerateGroup, Step};
use super::world::ScriptedCall;
use crate::text::source::{Position, SourceFile};
use crate::text::spec_error::SpecError;
use crate::text::yaml::{self, SingleKey, Spanned};

/// The most messages all `generate` groups of a spec may add together.
pub(crate) const MAX_GENERATED: u64 = 1_000_000;

/// The most steps a spec may have once every `repeat` is expanded.
pub(crate) const MAX_STEPS: u64 = 2_000_000;

/// The most DLQ entries all patterned entries of one expectation may stand for.
pub(crate) const MAX_PATTERN_ENTRIES: u64 = 1_000_000;

/// The most text the expansion of one spec may produce, messages, steps and entries together,
/// counted as their debug text: a pattern's bytes times its count, a repeated step's times its
/// repetitions. The counts above bound how many things there are; this bounds how big they
/// are, so a long body repeated a million times is refused before it is allocated.
pub(crate) const MAX_EXPANDED_BYTES: u64 = 1 << 30;

/// The placeholder for a message's number in a pattern.
pub(crate) const NUMBER: &str = "{n}";

/// `pattern` with every `{n}` replaced by `n`.
pub(crate) fn fill(pattern: &str, n: u64) -> String {
    if pattern.contains(NUMBER) {
        pattern.replace(NUMBER, &n.to_string())
    } else {
        pattern.to_owned()
    }
}

/// What the expansion of one spec has produced so far, against `MAX_EXPANDED_BYTES`.
#[derive(Debug, Default)]
pub(crate) struct Expansion {
    bytes: u64,
}

impl Expansion {
    /// Counts `bytes` more, or refuses at `at` when the spec's expansion would pass the limit.
    fn spend(&mut self, file: &SourceFile, at: Position, bytes: u64) -> Result<(), SpecError> {
        self.bytes = self.bytes.saturating_add(bytes);
        if self.bytes > MAX_EXPANDED_BYTES {
            return Err(SpecError::invalid(
                file,
                at,
                format!(
                    "expanded, this spec would hold more than {} MiB of messages, steps and entries, the most a spec may: use fewer or shorter patterns, bodies or repetitions",
                    MAX_EXPANDED_BYTES >> 20
                ),
            ));
        }
        Ok(())
    }
}

/// The length of `value`'s debug text, counted without building it: the measure of one
/// expanded thing's size that every kind of step, outcome and entry has.
fn weight(value: &impl std::fmt::Debug) -> u64 {
    struct LengthCount(u64);
    impl std::fmt::Write for LengthCount {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0 = self.0.saturating_add(s.len() as u64);
            Ok(())
        }
    }
    let mut count = LengthCount(0);
    // Writing into a counter cannot fail.
    let _ = std::fmt::write(&mut count, format_args!("{value:?}"));
    count.0
}

/// The widest a number put in place of `{n}` can be.
const NUMBER_WIDTH: u64 = 20;

/// The outcome list of a `generate` group, written once and shared by all its messages: a
/// group of 100,000 messages would otherwise hold 100,000 copies of the same list.
#[derive(Debug)]
pub(crate) struct GroupOutcomes {
    /// Where the list is written.
    pub(crate) at: Position,
    pub(crate) outcomes: Arc<[ScriptedCall]>,
    /// Where each outcome is written.
    pub(crate) positions: Arc<[Position]>,
}

/// One generated message, as the plain form would write it.
pub(crate) struct Generated {
    pub(crate) id: String,
    pub(crate) body: String,
    /// The group's outcomes and where each is written.
    pub(crate) outcomes: Option<Arc<GroupOutcomes>>,
    /// Where the group is written.
    pub(crate) at: Position,
}

/// The messages of every group, in order, or a spec error at the group that asks too much.
pub(crate) fn generate(
    file: &SourceFile,
    groups: &[Spanned<GenerateGroup>],
    expansion: &mut Expansion,
) -> Result<Vec<Generated>, SpecError> {
    let invalid = |position: Position, message: String| SpecError::invalid(file, position, message);
    let mut total: u64 = 0;
    let mut messages = Vec::new();
    for group in groups {
        let at = yaml::at(group);
        let g = &group.value;
        let count = g.count.value;
        if count == 0 {
            return Err(invalid(
                yaml::at(&g.count),
                "`count` must be at least 1".into(),
            ));
        }
        total = total.saturating_add(count);
        if total > MAX_GENERATED {
            return Err(invalid(
                yaml::at(&g.count),
                format!(
                    "the `generate` groups add up to more than {MAX_GENERATED} messages, the most a spec may generate"
                ),
            ));
        }
        if count > 1 && !g.id.value.contains(NUMBER) {
            return Err(invalid(
                yaml::at(&g.id),
                format!(
                    "`{}` would give all {count} messages the same id: put `{NUMBER}` where the number goes, e.g. `{}-{NUMBER}`",
                    g.id.value, g.id.value
                ),
            ));
        }
        let from = g.from.unwrap_or(1);
        let Some(last) = from.checked_add(count - 1) else {
            return Err(invalid(
                at,
                "`from + count - 1` is past the largest number".into(),
            ));
        };
        // Each message holds its own id and body; the group's outcome list is one, shared by
        // its messages and the script.
        let each = (g.id.value.len() + g.body.len()) as u64 + 2 * NUMBER_WIDTH;
        let shared = g.handler.as_ref().map_or(0, |list| weight(&list.value));
        expansion.spend(
            file,
            yaml::at(&g.count),
            each.saturating_mul(count).saturating_add(shared),
        )?;
        let outcomes = g.handler.as_ref().map(|list| {
            Arc::new(GroupOutcomes {
                at: yaml::at(list),
                outcomes: list.value.iter().map(|o| o.value.0.clone()).collect(),
                positions: list.value.iter().map(yaml::at).collect(),
            })
        });
        messages.reserve(usize::try_from(count).unwrap_or(0));
        for n in from..=last {
            messages.push(Generated {
                id: fill(&g.id.value, n),
                body: fill(&g.body, n),
                outcomes: outcomes.clone(),
                at,
            });
        }
    }
    Ok(messages)
}

/// The steps with every `repeat` written out and every patterned DLQ entry of an `expect`
/// expanded, each with the position of the line that wrote it.
pub(crate) fn flatten(
    file: &SourceFile,
    steps: Vec<Spanned<SingleKey<Step>>>,
    expansion: &mut Expansion,
) -> Result<Vec<(Position, Step)>, SpecError> {
    let mut out = Vec::with_capacity(steps.len());
    flatten_into(file, steps, &mut out, expansion)?;
    Ok(out)
}

/// Appends the expanded `steps` to `out`, and returns their weight.
fn flatten_into(
    file: &SourceFile,
    steps: Vec<Spanned<SingleKey<Step>>>,
    out: &mut Vec<(Position, Step)>,
    expansion: &mut Expansion,
) -> Result<u64, SpecError> {
    let mut added: u64 = 0;
    for step in steps {
        let position = yaml::at(&step);
        match step.value.0 {
            Step::Repeat(repeat) => {
                let mut body = Vec::new();
                let body_weight = flatten_into(file, repeat.steps, &mut body, expansion)?;
                let times = repeat.times.value;
                if body.is_empty() || times == 0 {
                    // Nothing to run, however many times: not a loop of nothing.
                    continue;
                }
                let adds = times.saturating_mul(body.len() as u64);
                if (out.len() as u64).saturating_add(adds) > MAX_STEPS {
                    return Err(SpecError::invalid(
                        file,
                        yaml::at(&repeat.times),
                        format!(
                            "repeated, the steps add up to more than {MAX_STEPS}, the most a spec may run"
                        ),
                    ));
                }
                // The body was counted once, as it was expanded; each further copy costs as much.
                let copies = body_weight.saturating_mul(times - 1);
                expansion.spend(file, yaml::at(&repeat.times), copies)?;
                added = added.saturating_add(body_weight.saturating_add(copies));
                for _ in 1..times {
                    out.extend(body.iter().cloned());
                }
                out.append(&mut body);
            }
            Step::Expect(mut expect) => {
                let entries = expand_entries(file, &mut expect, expansion)?;
                let own = weight(&expect).saturating_sub(entries);
                expansion.spend(file, position, own)?;
                added = added.saturating_add(own.saturating_add(entries));
                out.push((position, Step::Expect(expect)));
            }
            plain => {
                let own = weight(&plain);
                expansion.spend(file, position, own)?;
                added = added.saturating_add(own);
                out.push((position, plain));
            }
        }
    }
    Ok(added)
}

/// Replaces each DLQ entry written with a `count` by the entries it stands for, and marks the
/// expectation as holding patterns (which `bless` does not rewrite). Returns the weight of the
/// entries it added, which it has counted in `expansion`.
pub(crate) fn expand_entries(
    file: &SourceFile,
    expect: &mut Expectation,
    expansion: &mut Expansion,
) -> Result<u64, SpecError> {
    let Some(entries) = &expect.dlq else {
        return Ok(0);
    };
    if entries.iter().all(|e| e.count.is_none()) {
        return Ok(0);
    }
    let mut added: u64 = 0;
    let mut total: u64 = 0;
    let mut expanded = Vec::new();
    for entry in entries {
        let Some(count) = &entry.count else {
            expanded.push(entry.clone());
            continue;
        };
        let at = yaml::at(count);
        total = total.saturating_add(count.value);
        if total > MAX_PATTERN_ENTRIES {
            return Err(SpecError::invalid(
                file,
                at,
                format!(
                    "the patterned entries stand for more than {MAX_PATTERN_ENTRIES} DLQ entries, the most an expectation may list"
                ),
            ));
        }
        let each = weight(entry) + 3 * NUMBER_WIDTH;
        expansion.spend(file, at, each.saturating_mul(count.value))?;
        added = added.saturating_add(each.saturating_mul(count.value));
        if count.value > 1 && !entry.id.contains(NUMBER) {
            return Err(SpecError::invalid(
                file,
                at,
                format!(
                    "an entry with `count: {}` needs `{NUMBER}` in its id, or every entry would have the id `{}`",
                    count.value, entry.id
                ),
            ));
        }
        let from = entry.from.unwrap_or(1);
        let Some(last) = count
            .value
            .checked_sub(1)
            .and_then(|more| from.checked_add(more))
        else {
            // `count: 0` stands for no entry.
            continue;
        };
        for n in from..=last {
            let mut one = entry.clone();
            one.id = fill(&entry.id, n);
            one.body = fill(&entry.body, n);
            one.error.value = entry.error.value.as_deref().map(|e| fill(e, n));
            one.count = None;
            one.from = None;
            expanded.push(one);
        }
    }
    expect.dlq = Some(expanded);
    expect.patterned = true;
    Ok(added)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_large_scale_spec_holds_a_hundred_thousand_mixed_messages() {
        let path = "scale/dlq-consumer/large-scale.yaml";
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let file = SourceFile::read(&root.join(path)).expect("large-scale.yaml");
        let scenario = crate::contracts::dlq_consumer::loading::load(&file).expect("loads");
        assert!(
            scenario.messages.len() >= 100_000,
            "{}",
            scenario.messages.len()
        );
        let mut firsts: Vec<&str> = scenario
            .script
            .values()
            .filter_map(|outcomes| outcomes.first().map(|o| o.outcome.label()))
            .collect();
        firsts.sort_unstable();
        firsts.dedup();
        assert_eq!(
            firsts,
            [
                "PermanentError",
                "TransientError",
                "TypeError",
                "crash",
                "ok"
            ]
        );
    }

    #[test]
    fn a_pattern_fills_every_placeholder() {
        assert_eq!(fill("m-{n}/{n}", 7), "m-7/7");
        assert_eq!(fill("plain", 7), "plain");
    }
}
