//! A failure's cause: where an implementation first departs from the reference on a spec's
//! scenario, and the key by which the failures that share one mistake are told as one.
//!
//! A contract finds the [`Departure`] (the first effect, returned value or raised error the
//! reference would not make at that point), words it twice (in the spec's own ids, and with
//! placeholders, so the same mistake on other data reads the same), and names the rule that
//! decides it. The runner makes each failure's [`Cause`] from it and from what the
//! implementation raised: the same exception at the same line is one cause, whatever spec it
//! broke. Reporters only render causes.
//!
//! One mistake, one cause: `Scenario::diagnose` runs the spec as `run` does, keeping a mark of
//! each step (or each call), and on a mismatch runs the built-in reference, and each classic
//! mistake, again, never the implementation under test, so no verdict changes (a test holds
//! every solution's verdicts to be the same with causes and without). Each contract compares
//! what it can observe (dlq-consumer the journal's effects in the orders `trace.rs` pins, the
//! others the answers to the same calls) and names the rule from the reference's own decision
//! there (`Recorder::step_decisions`). The runner joins one mistake's failures into one
//! (`Causes`) in the run's order, before any reporter sees them.

use serde::Serialize;

use crate::model::captured::Captured;
use crate::model::implementation::{ImplErrorKind, Raised};
use crate::model::mistake::Mistake;
use crate::model::outcome::Outcome;
use crate::model::rule::Rule;

/// Where an implementation first did something the reference would not do on the same
/// scenario, as its contract found it.
#[derive(Debug, Clone, PartialEq)]
pub struct Departure {
    /// The rule that decides what the reference does at that point: the rule broken.
    pub rule: Option<&'static Rule>,
    /// What the implementation did and what the reference does there, in the spec's own ids
    /// and values: `after dlq.put(a), the reference acks a; yours returned dead without acking a`.
    pub told: String,
    /// The same, each message id written as a placeholder (`X`, `Y`, ...) and values left out,
    /// so the same mistake met on other messages reads the same.
    pub(crate) shape: String,
    /// What the failures of one mistake share: the shape of the miss itself, without what led
    /// to it in the step (`the reference acks X; yours returned dead without acking X`).
    pub(crate) key: String,
    /// The classic mistakes of the contract's catalogue that depart the same way here (the
    /// reference with one of them switched on does exactly what the implementation did),
    /// those breaking `rule` first.
    pub mistakes: Vec<&'static Mistake>,
    /// The error the implementation raised at that point, when it raised one: what the
    /// traceback it sent is matched against.
    pub(crate) raised: Option<Raised>,
    /// The spec's step (from 0) where it departs, when it departs in one: what `explain`'s
    /// picture marks.
    pub(crate) step: Option<usize>,
}

/// Why a spec failed, as every report carries it: failures with one `id` share one cause.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Cause {
    /// A short stable key (`c` and 12 hex digits) of what the failures sharing it have in
    /// common: the departure's shape and rule, the classic mistake, or the exception and the
    /// line it was raised at.
    pub(crate) id: String,
    /// The rule the cause breaks: the one deciding the departure, never the spec's `rules:`.
    pub(crate) rule: Option<&'static str>,
    /// The cause in one line, the same for every failure sharing it.
    pub(crate) line: String,
    /// This failure's own departure, in its spec's ids; `None` when there is none to tell
    /// besides `line` (an error, a spec error).
    pub(crate) told: Option<String>,
    /// The classic mistake it is, in plain words, when the catalogue knows it.
    pub(crate) mistake: Option<&'static str>,
    /// The line of the implementation's own code a traceback names for it: where the error
    /// that is the cause was raised, or, for an implementation error, where its code raised
    /// last. `None` when no traceback names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) at: Option<CodeLine>,
}

/// A line of an implementation's own code, as its traceback names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct CodeLine {
    /// The file, as the shim names it (an absolute path).
    pub(crate) file: String,
    /// 1-based.
    pub(crate) line: u64,
}

impl Cause {
    /// `rule: line`, or the line alone: how a list of causes shows one.
    pub(crate) fn summary(&self) -> String {
        match self.rule {
            Some(rule) => format!("{rule}: {}", self.line),
            None => self.line.clone(),
        }
    }

    /// This failure's cause in one line, as a report of the one spec says it: `rule: ` and
    /// the failure's own departure, in its spec's ids; the cause's line instead where that is
    /// what the cause is (an error raised at a line of the implementation's code) or there is
    /// no departure to tell.
    pub(crate) fn this_failure(&self) -> String {
        let said = match (&self.told, &self.at) {
            (Some(told), None) => told.as_str(),
            _ => self.line.as_str(),
        };
        match self.rule {
            Some(rule) => format!("{rule}: {said}"),
            None => said.to_owned(),
        }
    }

    /// The cause of a failure: from the departure its contract found, else from the outcome
    /// itself (an error's first line, the shape of a difference no departure explains).
    /// `output` is what the implementation raised and printed during the spec; `rules` the
    /// spec's `rules:`, named only when nothing else is known. `None` for what is no failure.
    pub(crate) fn of(
        outcome: &Outcome,
        departure: Option<&Departure>,
        output: Option<&Captured>,
        rules: &[String],
    ) -> Option<Cause> {
        match (outcome, departure) {
            (Outcome::Mismatch(_), Some(departure)) => Some(Cause::of_departure(departure, output)),
            (Outcome::Errored(_), _) => Cause::of_outcome(outcome, rules).map(|cause| Cause {
                at: output.and_then(last_raised),
                ..cause
            }),
            _ => Cause::of_outcome(outcome, rules),
        }
    }

    fn of_departure(departure: &Departure, output: Option<&Captured>) -> Cause {
        Cause::raised(departure, output).unwrap_or_else(|| Cause::missed(departure))
    }

    /// The cause of a departure that is an exception raised from the implementation's own
    /// code, by the line it was raised at; `None` without a traceback of it.
    fn raised(departure: &Departure, output: Option<&Captured>) -> Option<Cause> {
        let raised = departure.raised.as_ref()?;
        let (at, line_key, code_line) = raised_at(raised, output)?;
        Some(Cause {
            id: key(&["raised", &raised.class, &line_key]),
            rule: departure.rule.map(|r| r.id),
            line: line(&format!("{} raised at {at}", raised.describe())),
            told: Some(departure.told.clone()),
            mistake: None,
            at: Some(code_line),
        })
    }

    /// The cause of a departure that raised nothing of the implementation's own: its miss.
    fn missed(departure: &Departure) -> Cause {
        let rule = departure.rule.map(|r| r.id);
        let told = Some(departure.told.clone());
        let mistake = departure.mistakes.first().map(|m| m.what);
        let id = key(&["departure", rule.unwrap_or_default(), &departure.key]);
        Cause {
            id,
            rule,
            line: line(&departure.shape),
            told,
            mistake,
            at: None,
        }
    }

    /// The cause of a difference the built-in reference itself made: the spec's expectation
    /// is what is wrong, never a rule (the reference is the rules), so no rule is named. It
    /// says at which step, that the reference's values are the diff's actual side, and what to
    /// run: `bless` takes them into the spec, `explain` tells the reference's run step by
    /// step. `path` is the spec's, as the commands take it; `reference` names the reference
    /// (`the built-in reference`, `the reference (reference.py)`).
    pub(crate) fn expectation_differs(
        mismatch: &crate::model::outcome::Mismatch,
        path: &str,
        reference: &str,
    ) -> Cause {
        let at = mismatch
            .step
            .rsplit_once('(')
            .map_or(mismatch.step.as_str(), |(_, kind)| {
                kind.trim_end_matches(')')
            });
        // Each spec's expectation is its own mistake: its diff is shown under it, never
        // "the same cause as" another spec's.
        Cause {
            id: key(&["reference", path, at]),
            rule: None,
            line: line(&format!(
                "the spec's expectation differs from what {reference} does (at {at})"
            )),
            told: Some(format!(
                "the spec's expectation differs from what {reference} does at {}: the reference did what the +++ lines show. If the reference is right, `dlqspec bless {path}` writes that into the spec; `dlqspec explain {path}` tells the reference's run step by step",
                mismatch.step
            )),
            mistake: None,
            at: None,
        }
    }

    /// The cause of a failure no departure explains.
    fn of_outcome(outcome: &Outcome, rules: &[String]) -> Option<Cause> {
        let (parts, rule, text): (Vec<String>, Option<&'static str>, String) = match outcome {
            Outcome::Mismatch(m) => {
                let rule = m.rule.map(|r| r.id);
                // `step 4 (process)` fails the same way as `step 9 (process)`.
                let at = m
                    .step
                    .rsplit_once('(')
                    .map_or(m.step.as_str(), |(_, kind)| kind.trim_end_matches(')'));
                // A note's shape is its last clause: `message `p` reached the handler a 3rd
                // time, ...: the implementation called the handler more often than the rules
                // allow` is the same mistake whatever the message and the count.
                let what = match &m.note {
                    Some(note) => {
                        let first = note.lines().next().unwrap_or_default();
                        first.rsplit(": ").next().unwrap_or(first).to_owned()
                    }
                    None => format!("a difference at {at}"),
                };
                // Where no decision is known, the spec's rules are its context.
                let text = match (rule, rules.is_empty()) {
                    (None, false) => format!("{} ({})", what, rules.join(", ")),
                    _ => what.clone(),
                };
                let parts = vec![
                    "mismatch".into(),
                    rule.map_or_else(|| rules.join(", "), str::to_owned),
                    at.to_owned(),
                    what,
                ];
                (parts, rule, text)
            }
            Outcome::Errored(e) => {
                let first = e.message.lines().next().unwrap_or_default();
                let first = first.strip_suffix(" (in full above)").unwrap_or(first);
                // The brief form repeats the `-->` line on the first line; the full one below it.
                let first = first.split(" --> ").next().unwrap_or(first).to_owned();
                let kind = error_kind(e.kind);
                let text = format!("implementation error ({kind}): {first}");
                (vec!["errored".into(), kind, first], None, text)
            }
            Outcome::SpecError(e) => {
                let first = e.message.lines().next().unwrap_or_default().to_owned();
                let text = format!("spec error: {first}");
                (vec!["spec".into(), first], None, text)
            }
            Outcome::Stale(message) => (
                vec!["stale".into(), message.clone()],
                None,
                "a known failure now passes".to_owned(),
            ),
            _ => return None,
        };
        let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
        Some(Cause {
            id: key(&parts),
            rule,
            line: line(&text),
            told: None,
            mistake: None,
            at: None,
        })
    }
}

/// The causes of one run's failures so far, so that one mistake is one cause however it
/// shows: a failure joins the cause of an earlier one when the two raised the same exception
/// at the same line, depart as the same classic mistake does, or make the same miss breaking
/// the same rule. Which cause a failure joins depends only on the failures before it, so a
/// run told spec by spec, in order, tells every failure's cause as it goes.
#[derive(Debug, Default)]
pub(crate) struct Causes {
    known: Vec<Known>,
}

/// A cause of the run, and what its failures have in common.
#[derive(Debug)]
struct Known {
    cause: Cause,
    /// Whether it is an exception at a line, which nothing else joins.
    raised: bool,
    /// The classic mistakes that depart as some of its failures do.
    mistakes: Vec<&'static Mistake>,
    /// The misses of its failures, each with the rule it breaks.
    keys: Vec<(Option<&'static str>, String)>,
}

impl Causes {
    /// The cause of a failure that comes after those settled so far (`Cause::of`, joined to
    /// an earlier cause when it is the same); `None` for what is no failure.
    pub(crate) fn settle(
        &mut self,
        outcome: &Outcome,
        departure: Option<&Departure>,
        output: Option<&Captured>,
        rules: &[String],
    ) -> Option<Cause> {
        let natural = Cause::of(outcome, departure, output, rules)?;
        let departure = departure.filter(|_| matches!(outcome, Outcome::Mismatch(_)));
        let raised = departure.is_some_and(|d| Cause::raised(d, output).is_some());
        let miss = departure.map(|d| (d.rule.map(|r| r.id), d.key.clone()));
        let mistakes = departure.map_or(&[][..], |d| d.mistakes.as_slice());
        let same = |known: &Known| {
            known.cause.id == natural.id
                || (!raised
                    && !known.raised
                    && (mistakes.iter().any(|m| known.mistakes.contains(m))
                        || miss.as_ref().is_some_and(|miss| known.keys.contains(miss))))
        };
        let Some(known) = self.known.iter_mut().find(|known| same(known)) else {
            self.known.push(Known {
                cause: natural.clone(),
                raised,
                mistakes: mistakes.to_vec(),
                keys: miss.into_iter().collect(),
            });
            return Some(natural);
        };
        for mistake in mistakes {
            if !known.mistakes.contains(mistake) {
                known.mistakes.push(mistake);
            }
        }
        if let Some(miss) = miss
            && !known.keys.contains(&miss)
        {
            known.keys.push(miss);
        }
        Some(Cause {
            told: natural.told,
            ..known.cause.clone()
        })
    }
}

/// Where the implementation's own code raised `raised`, from the traceback it sent:
/// `FILE:LINE`, and ` in FUNCTION` when the frame names one; and the key of that line: its
/// function and its text, which the same code has wherever its file is (two students'
/// copies, graded in two folders, are one cause), else the file's name and the line's number.
/// `None` without a traceback of that error.
fn raised_at(raised: &Raised, output: Option<&Captured>) -> Option<(String, String, CodeLine)> {
    let described = raised.describe();
    let traceback = output?.tracebacks.iter().find(|t| {
        t.error == described || t.error.split(": ").next() == Some(raised.class.as_str())
    })?;
    let frame = traceback.frames.first()?;
    let function = frame
        .function
        .as_deref()
        .map(|f| format!(" in {f}"))
        .unwrap_or_default();
    let at = format!("{}:{}{function}", frame.file, frame.line);
    let name = frame.file.rsplit(['/', '\\']).next().unwrap_or(&frame.file);
    let line_key = match frame.source.as_deref().map(str::trim) {
        Some(source) if !source.is_empty() => format!("{function}\n{source}"),
        _ => format!("{name}:{}{function}", frame.line),
    };
    let code_line = CodeLine {
        file: frame.file.clone(),
        line: frame.line,
    };
    Some((at, line_key, code_line))
}

/// Where the implementation's own code raised last, by the innermost frame of its last
/// traceback: the line an implementation error most likely comes from.
fn last_raised(output: &Captured) -> Option<CodeLine> {
    let frame = output.tracebacks.last()?.frames.first()?;
    Some(CodeLine {
        file: frame.file.clone(),
        line: frame.line,
    })
}

/// The word reports use for an implementation error's kind.
fn error_kind(kind: ImplErrorKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The most of a cause's line kept.
const MAX_LINE_BYTES: usize = 300;

fn line(text: &str) -> String {
    crate::text::truncate::line(text.lines().next().unwrap_or_default(), MAX_LINE_BYTES)
}

/// `value` rendered, stopping at `max` bytes (then `…` after them): the rest is never
/// rendered at all.
fn rendered_up_to(value: impl std::fmt::Display, max: usize) -> String {
    struct UpTo {
        text: String,
        max: usize,
        cut: bool,
    }
    impl std::fmt::Write for UpTo {
        fn write_str(&mut self, piece: &str) -> std::fmt::Result {
            let room = self.max - self.text.len();
            if piece.len() <= room {
                self.text.push_str(piece);
                return Ok(());
            }
            let mut end = room;
            while !piece.is_char_boundary(end) {
                end -= 1;
            }
            self.text.push_str(&piece[..end]);
            self.cut = true;
            Err(std::fmt::Error)
        }
    }
    let mut up_to = UpTo {
        text: String::new(),
        max,
        cut: false,
    };
    let _ = std::fmt::Write::write_fmt(&mut up_to, format_args!("{value}"));
    if up_to.cut {
        up_to.text.push('…');
    }
    up_to.text
}

/// A stable key of `parts`: FNV-1a (64 bits) of them, each ended by a zero byte, as
/// `c` and 12 hex digits. The same parts give the same key on every machine and release.
fn key(parts: &[&str]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.bytes().chain([0]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("c{:012x}", hash >> 16)
}

/// Writes a departure in the spec's ids and with placeholders, from one function: `write`
/// names each id through the [`Ids`] it is given, and is called once for each way.
pub(crate) fn told_and_shaped(mut write: impl FnMut(&mut Ids) -> String) -> (String, String) {
    let told = write(&mut Ids::told());
    let shape = write(&mut Ids::shaped());
    (told, shape)
}

/// How a departure names message ids: as they are, or as placeholders in the order they are
/// first named (`X`, `Y`, `Z`, then `X4`, `X5`...).
#[derive(Debug, Default)]
pub(crate) struct Ids {
    shaped: bool,
    seen: Vec<String>,
}

impl Ids {
    pub(crate) fn told() -> Ids {
        Ids::default()
    }

    pub(crate) fn shaped() -> Ids {
        Ids {
            shaped: true,
            seen: Vec::new(),
        }
    }

    /// Whether values (numbers, messages) are left out: a shape names no value.
    pub(crate) fn is_shaped(&self) -> bool {
        self.shaped
    }

    /// `id` as this way names it.
    pub(crate) fn id(&mut self, id: &str) -> String {
        if !self.shaped {
            return id.to_owned();
        }
        let at = match self.seen.iter().position(|seen| seen == id) {
            Some(at) => at,
            None => {
                self.seen.push(id.to_owned());
                self.seen.len() - 1
            }
        };
        match at {
            0 => "X".to_owned(),
            1 => "Y".to_owned(),
            2 => "Z".to_owned(),
            n => format!("X{}", n + 1),
        }
    }

    /// An error as this way names it: `Class: message`, or the class alone in a shape.
    pub(crate) fn raised(&self, raised: &Raised) -> String {
        if self.shaped {
            raised.class.clone()
        } else {
            crate::text::truncate::line(&raised.describe(), 160)
        }
    }

    /// `value` as this way names it: as it is (its first `MAX_LINE_BYTES`, rendered no
    /// further: a value may be as long as a protocol line), or `placeholder` in a shape.
    pub(crate) fn value(&self, value: impl std::fmt::Display, placeholder: &str) -> String {
        if self.shaped {
            placeholder.to_owned()
        } else {
            rendered_up_to(value, MAX_LINE_BYTES)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::captured::{Frame, Traceback};
    use crate::model::implementation::{ImplError, RaisedKind};
    use crate::model::outcome::Mismatch;
    use crate::text::source::Position;

    const RULE: Rule = Rule {
        id: "c/r",
        statement: "",
    };

    fn mismatch() -> Outcome {
        Outcome::Mismatch(Mismatch {
            step: "step 4 (process)".into(),
            position: Position::new(3, 5),
            expected: "".into(),
            actual: "".into(),
            note: None,
            step_as_written: None,
            rule: Some(&RULE),
        })
    }

    fn departure(told: &str, shape: &str) -> Departure {
        Departure {
            rule: Some(&RULE),
            told: told.into(),
            shape: shape.into(),
            key: shape.into(),
            mistakes: Vec::new(),
            raised: None,
            step: None,
        }
    }

    #[test]
    fn one_shape_is_one_cause_whatever_the_ids() {
        let a = Cause::of(&mismatch(), Some(&departure("acks a", "acks X")), None, &[]).unwrap();
        let b = Cause::of(&mismatch(), Some(&departure("acks b", "acks X")), None, &[]).unwrap();
        assert_eq!(
            (a.id.as_str(), a.rule, a.line.as_str()),
            (b.id.as_str(), Some("c/r"), "acks X")
        );
        assert_eq!(a.told.as_deref(), Some("acks a"));
        assert_eq!(a.summary(), "c/r: acks X");
        let other = Cause::of(&mismatch(), Some(&departure("x", "retries X")), None, &[]).unwrap();
        assert_ne!(other.id, a.id);
        assert!(a.id.starts_with('c') && a.id.len() == 13, "{}", a.id);
    }

    #[test]
    fn the_same_exception_at_the_same_line_is_one_cause() {
        let raised = Raised::new(RaisedKind::Error, "KeyError", "'receiveCount'");
        let captured = |line| Captured {
            tracebacks: vec![Traceback {
                error: "KeyError: 'receiveCount'".into(),
                frames: vec![Frame {
                    file: "/s/solution.py".into(),
                    line,
                    function: Some("process_one".into()),
                    source: None,
                }],
            }],
            ..Captured::default()
        };
        let with = |told: &str, shape: &str| Departure {
            raised: Some(raised.clone()),
            ..departure(told, shape)
        };
        let first =
            Cause::of(&mismatch(), Some(&with("a", "X")), Some(&captured(26)), &[]).unwrap();
        let second = Cause::of(
            &mismatch(),
            Some(&with("b", "Y other")),
            Some(&captured(26)),
            &[],
        )
        .unwrap();
        assert_eq!(first.id, second.id);
        assert_eq!(
            first.line,
            "KeyError: 'receiveCount' raised at /s/solution.py:26 in process_one"
        );
        // Another line is another cause; the same line of another copy of the file is not.
        let elsewhere = |file: &str, line, source: &str| {
            let mut captured = captured(line);
            captured.tracebacks[0].frames[0].file = file.into();
            captured.tracebacks[0].frames[0].source = Some(source.into());
            Cause::of(&mismatch(), Some(&with("a", "X")), Some(&captured), &[])
                .unwrap()
                .id
        };
        let here = elsewhere("/s/solution.py", 26, "if msg[\"receiveCount\"] > 3:");
        assert_eq!(
            elsewhere("/t/bob.py", 30, "if msg[\"receiveCount\"] > 3:"),
            here
        );
        assert_ne!(
            elsewhere("/s/solution.py", 26, "return msg[\"receiveCount\"]"),
            here
        );
        assert_ne!(elsewhere("/s/solution.py", 27, ""), first.id);
        // Without a traceback, the departure's shape is the cause.
        let untraced = Cause::of(&mismatch(), Some(&with("a", "X")), None, &[]).unwrap();
        assert_eq!(untraced.line, "X");
    }

    #[test]
    fn a_failure_no_departure_explains_keeps_its_outcomes_cause() {
        let cause = Cause::of(&mismatch(), None, None, &[]).unwrap();
        assert_eq!(cause.summary(), "c/r: a difference at process");
        let error = Outcome::Errored(ImplError::new(ImplErrorKind::Timeout, "no answer\nmore"));
        let cause = Cause::of(&error, None, None, &[]).unwrap();
        assert_eq!(cause.summary(), "implementation error (timeout): no answer");
        assert_eq!(cause.rule, None);
        assert!(Cause::of(&Outcome::Passed, None, None, &[]).is_none());
    }

    #[test]
    fn a_cause_names_the_line_of_code_a_traceback_names_and_says_one_failure_in_its_ids() {
        let traced = Captured {
            tracebacks: vec![Traceback {
                error: "KeyError: 'x'".into(),
                frames: vec![Frame {
                    file: "/s/solution.py".into(),
                    line: 12,
                    function: None,
                    source: None,
                }],
            }],
            ..Captured::default()
        };
        // An implementation error: the line its code raised at last.
        let error = Outcome::Errored(ImplError::new(ImplErrorKind::Exited, "exited with 1"));
        let cause = Cause::of(&error, None, Some(&traced), &[]).unwrap();
        let at = CodeLine {
            file: "/s/solution.py".into(),
            line: 12,
        };
        assert_eq!(cause.at.as_ref(), Some(&at));
        assert_eq!(
            cause.this_failure(),
            "implementation error (exited): exited with 1"
        );
        // A miss: no line of code, and the failure said in its own ids.
        let missed = Cause::of(
            &mismatch(),
            Some(&departure("acks a", "acks X")),
            Some(&traced),
            &[],
        )
        .unwrap();
        assert_eq!(missed.at, None);
        assert_eq!(missed.this_failure(), "c/r: acks a");
        // An error raised at a line: that line, and the cause's own words.
        let raised = Departure {
            raised: Some(Raised::new(RaisedKind::Error, "KeyError", "'x'")),
            ..departure("a", "X")
        };
        let cause = Cause::of(&mismatch(), Some(&raised), Some(&traced), &[]).unwrap();
        assert_eq!(cause.at, Some(at));
        assert_eq!(
            cause.this_failure(),
            "c/r: KeyError: 'x' raised at /s/solution.py:12"
        );
    }

    #[test]
    fn placeholders_name_ids_in_the_order_first_named() {
        let (told, shape) = told_and_shaped(|ids| {
            let (a, b, a_again) = (ids.id("a"), ids.id("b"), ids.id("a"));
            format!("{a} {b} {a_again} {}", ids.value(3, "N"))
        });
        assert_eq!((told.as_str(), shape.as_str()), ("a b a 3", "X Y X N"));
        let mut ids = Ids::shaped();
        let names: Vec<String> = ["p", "q", "r", "s"].iter().map(|id| ids.id(id)).collect();
        assert_eq!(names, ["X", "Y", "Z", "X4"]);
    }

    #[test]
    fn a_value_is_rendered_no_further_than_a_line_keeps() {
        let long = serde_json::Value::Array(vec![serde_json::Value::from(0); 1 << 20]);
        let told = Ids::told().value(&long, "V");
        assert_eq!(told.len(), MAX_LINE_BYTES + '…'.len_utf8());
        assert!(told.starts_with("[0,0,") && told.ends_with('…'));
        assert_eq!(Ids::told().value(7, "N"), "7");
        assert_eq!(Ids::shaped().value(&long, "V"), "V");
        // Never inside a character.
        let wide = "é".repeat(400);
        assert!(Ids::told().value(&wide, "V").ends_with("é…"));
    }

    #[test]
    fn keys_are_stable() {
        // Written down: a key must not change between releases, or CI history regroups.
        assert_eq!(key(&["a", "b"]), key(&["a", "b"]));
        assert_ne!(key(&["ab"]), key(&["a", "b"]));
    }
}
