//! A scenario's timeline as data: each event with the line `explain` prints for it and what
//! it is, so that the text and the picture (`report::explain_picture`) tell the same events.

/// One event of a timeline: the line told for it, and what the picture draws of it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TimelineLine {
    /// The event as one line of text, indented as the timeline indents it.
    pub(crate) line: String,
    pub(crate) event: TimelineEvent,
}

impl TimelineLine {
    /// A line that is only text: the picture shows it as a note.
    pub(crate) fn note(line: String) -> Self {
        TimelineLine {
            line,
            event: TimelineEvent::Note,
        }
    }
}

/// What an event of a timeline is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TimelineEvent {
    /// What the world holds before the first step.
    Start,
    /// A step begins (or the final expect, `expect`): the line is its heading; `kind` names
    /// the step (`process`, `advance`, `recover`, `replay`, ...).
    Step { kind: &'static str },
    /// A call from one lane to another (a delivery, a handler call, an ack, a put, ...):
    /// `label` is what its arrow says.
    Call {
        from: &'static str,
        to: &'static str,
        label: String,
        tone: Tone,
    },
    /// Something that happens on one lane: an injected crash, a misuse, a clock move.
    Mark {
        lane: &'static str,
        label: String,
        tone: Tone,
    },
    /// The rule behind a decision, and why it applies there (the line names the rule and
    /// says why).
    Rule,
    /// What the implementation did at a decision, against what its rule expects (the line
    /// names the rule): `expected` is what the rule wanted, when the implementation did
    /// something else.
    Decision {
        did: String,
        expected: Option<String>,
    },
    /// One checked value (the line names it): as expected, or not.
    Check { expected: String, actual: String },
    /// Named lists and what each holds after a step (the lists of an exercise's state view:
    /// a queue's ready, done and quarantine), each item as shown.
    Lists(Vec<(String, Vec<String>)>),
    /// Anything else told.
    Note,
}

impl TimelineEvent {
    /// Whether this is a check whose value differs, or a decision the implementation got wrong.
    pub(crate) fn differs(&self) -> bool {
        match self {
            TimelineEvent::Check {
                expected, actual, ..
            } => expected != actual,
            TimelineEvent::Decision { expected, .. } => expected.is_some(),
            _ => false,
        }
    }
}

/// What kind of effect a call or mark is, for its colour in the picture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tone {
    /// A call that only reads.
    Read,
    /// A message handed out.
    Delivery,
    /// A success, and the ack after it.
    Success,
    /// A transient failure, and the retry after it.
    Retry,
    /// A dead-lettering, a permanent failure, a quarantine.
    Dead,
    /// A replay's sends and removals.
    Replay,
    /// An injected crash, a handler that crashes the process.
    Crash,
    /// A move of the clock.
    Clock,
    /// A misuse of the world, an unscripted handler call.
    Misuse,
    /// Anything else.
    Plain,
}

impl Tone {
    /// The word the picture's classes use for it.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Tone::Read => "read",
            Tone::Delivery => "delivery",
            Tone::Success => "success",
            Tone::Retry => "retry",
            Tone::Dead => "dead",
            Tone::Replay => "replay",
            Tone::Crash => "crash",
            Tone::Clock => "clock",
            Tone::Misuse => "misuse",
            Tone::Plain => "plain",
        }
    }
}
