//! What an implementation wrote and raised while one spec ran: its stdout and stderr, each
//! bounded (with how much was cut), and the tracebacks of errors its own code raised.
//!
//! The shims send these with `output` messages and the `traceback` of a `raised` reply
//! (docs/protocol.md); reporters show them under a failing spec, as pytest shows captured
//! output, and the run record carries them (`spec_finished`'s `output`).

use serde::{Deserialize, Serialize};

/// The most bytes of one stream kept for one spec; the rest is counted, not kept.
pub const MAX_STREAM_BYTES: usize = 64 * 1024;

/// The most tracebacks kept for one spec, and frames kept of each.
pub const MAX_TRACEBACKS: usize = 8;
pub const MAX_FRAMES: usize = 40;

/// The longest file name, function name and source line of a frame kept, in characters.
const MAX_FIELD_CHARS: usize = 300;

/// The output and tracebacks of one spec.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Captured {
    pub stdout: Stream,
    pub stderr: Stream,
    /// Errors raised from the implementation's own code, in the order they were raised.
    pub tracebacks: Vec<Traceback>,
    /// Tracebacks beyond `MAX_TRACEBACKS`, counted.
    pub tracebacks_cut: usize,
}

/// One captured stream: the first `MAX_STREAM_BYTES` of it, and how many bytes were cut.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stream {
    pub text: String,
    pub cut_bytes: u64,
}

/// An error raised from the implementation's code, with the frames in the solution's files,
/// innermost first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Traceback {
    /// `KeyError: 'first_received'`.
    pub error: String,
    pub frames: Vec<Frame>,
}

/// One frame in a solution's file, as a shim reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frame {
    /// The file, as the shim names it (an absolute path).
    pub file: String,
    /// 1-based.
    pub line: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// The text of that line, trimmed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// Which stream an `output` message carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StreamName {
    Stdout,
    Stderr,
}

impl Stream {
    /// Appends `text`, keeping at most `MAX_STREAM_BYTES` (cut at a character boundary);
    /// `cut` more bytes were already dropped by the sender.
    pub fn push(&mut self, text: &str, cut: u64) {
        let room = MAX_STREAM_BYTES.saturating_sub(self.text.len());
        let mut take = room.min(text.len());
        while !text.is_char_boundary(take) {
            take -= 1;
        }
        self.text.push_str(&text[..take]);
        self.cut_bytes = self
            .cut_bytes
            .saturating_add((text.len() - take) as u64)
            .saturating_add(cut);
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty() && self.cut_bytes == 0
    }
}

impl Captured {
    pub fn push(&mut self, stream: StreamName, text: &str, cut: u64) {
        match stream {
            StreamName::Stdout => self.stdout.push(text, cut),
            StreamName::Stderr => self.stderr.push(text, cut),
        }
    }

    /// Keeps a traceback, bounded: long fields cut, at most `MAX_FRAMES` frames.
    pub fn add_traceback(&mut self, traceback: Traceback) {
        if self.tracebacks.len() == MAX_TRACEBACKS {
            self.tracebacks_cut += 1;
            return;
        }
        let frames = traceback
            .frames
            .into_iter()
            .take(MAX_FRAMES)
            .map(|frame| Frame {
                file: cut(&frame.file),
                line: frame.line,
                function: frame.function.as_deref().map(cut),
                source: frame.source.as_deref().map(|s| cut(s.trim())),
            })
            .collect();
        self.tracebacks.push(Traceback {
            error: cut(&traceback.error),
            frames,
        });
    }

    pub fn is_empty(&self) -> bool {
        self.stdout.is_empty() && self.stderr.is_empty() && self.tracebacks.is_empty()
    }

    /// `None` when nothing was captured.
    pub fn non_empty(self) -> Option<Captured> {
        (!self.is_empty()).then_some(self)
    }
}

fn cut(text: &str) -> String {
    if text.chars().count() > MAX_FIELD_CHARS {
        format!(
            "{}...",
            text.chars().take(MAX_FIELD_CHARS).collect::<String>()
        )
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_keeps_its_start_and_counts_the_rest() {
        let mut stream = Stream::default();
        stream.push("hello\n", 0);
        assert_eq!(stream.text, "hello\n");
        stream.push(&"x".repeat(MAX_STREAM_BYTES), 10);
        assert_eq!(stream.text.len(), MAX_STREAM_BYTES);
        assert_eq!(stream.cut_bytes, 6 + 10);
        // A character is never split.
        let mut stream = Stream::default();
        stream.push(&"a".repeat(MAX_STREAM_BYTES - 1), 0);
        stream.push("é", 0);
        assert_eq!(stream.text.len(), MAX_STREAM_BYTES - 1);
        assert_eq!(stream.cut_bytes, 2);
    }

    #[test]
    fn tracebacks_are_bounded() {
        let mut captured = Captured::default();
        let frame = Frame {
            file: "f".repeat(1000),
            line: 3,
            function: None,
            source: Some("  x = 1  ".into()),
        };
        for _ in 0..MAX_TRACEBACKS + 2 {
            captured.add_traceback(Traceback {
                error: "E: x".into(),
                frames: vec![frame.clone(); MAX_FRAMES + 5],
            });
        }
        assert_eq!(captured.tracebacks.len(), MAX_TRACEBACKS);
        assert_eq!(captured.tracebacks_cut, 2);
        let kept = &captured.tracebacks[0].frames;
        assert_eq!(kept.len(), MAX_FRAMES);
        assert_eq!(kept[0].source.as_deref(), Some("x = 1"));
        assert!(kept[0].file.ends_with("...") && kept[0].file.len() < 400);
        assert!(Captured::default().non_empty().is_none());
    }
}
