//! Asking the person at a terminal: whether stdin is one, and one-letter answers read from it
//! (`bless --interactive`).

use std::io::{BufRead, Read, Write};

/// The environment variable that makes dlqspec take stdin for a terminal whatever it is. It
/// exists for the tests alone: they drive the real binary with answers piped to stdin, which
/// is never a terminal. Set to `1`; it is not documented for users.
pub(crate) const ASSUME_TTY: &str = "DLQSPEC_ASSUME_TTY";

/// Whether a person can answer on stdin: it is a terminal (or `DLQSPEC_ASSUME_TTY=1`).
pub(crate) fn stdin_is_terminal() -> bool {
    if std::env::var_os(ASSUME_TTY).is_some_and(|v| v == "1") {
        return true;
    }
    std::io::IsTerminal::is_terminal(&std::io::stdin())
}

/// What the person said to one change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReviewAnswer {
    Accept,
    Skip,
    Quit,
}

/// The longest answer line read; the rest of a longer one is read and ignored.
const MAX_ANSWER: u64 = 256;

/// Asks `question` on `out` until `input` gives `a`, `s` or `q` (or a word starting with
/// one: `accept`, `skip`, `quit`); the end of the input is a quit.
pub(crate) fn ask(question: &str, input: &mut dyn BufRead, out: &mut dyn Write) -> ReviewAnswer {
    loop {
        let _ = write!(out, "{question} [a]ccept, [s]kip, [q]uit: ");
        let _ = out.flush();
        let mut line = Vec::new();
        let read = (&mut *input).take(MAX_ANSWER).read_until(b'\n', &mut line);
        if !line.ends_with(b"\n") && line.len() as u64 == MAX_ANSWER {
            // Past the bound: drop the rest of the line.
            let _ = input.skip_until(b'\n');
        }
        match read {
            Ok(0) | Err(_) => {
                let _ = writeln!(out);
                return ReviewAnswer::Quit;
            }
            Ok(_) => {}
        }
        let word = String::from_utf8_lossy(&line).trim().to_ascii_lowercase();
        match word.chars().next() {
            Some('a') => return ReviewAnswer::Accept,
            Some('s') => return ReviewAnswer::Skip,
            Some('q') => return ReviewAnswer::Quit,
            _ => {
                let _ = writeln!(out, "please answer a (accept), s (skip) or q (quit)");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answers(input: &str) -> (Vec<ReviewAnswer>, String) {
        let mut input = std::io::Cursor::new(input.as_bytes().to_vec());
        let mut out = Vec::new();
        let mut got = Vec::new();
        loop {
            let answer = ask("accept?", &mut input, &mut out);
            got.push(answer);
            if answer == ReviewAnswer::Quit {
                break;
            }
        }
        (got, String::from_utf8(out).unwrap())
    }

    #[test]
    fn letters_and_words_answer_and_anything_else_asks_again() {
        let (got, out) = answers("a\n skip \nwhat\n\nQ\n");
        assert_eq!(
            got,
            [ReviewAnswer::Accept, ReviewAnswer::Skip, ReviewAnswer::Quit]
        );
        assert_eq!(
            out.matches("please answer a (accept), s (skip) or q (quit)")
                .count(),
            2
        );
    }

    #[test]
    fn the_end_of_the_input_is_a_quit_and_a_long_line_is_cut() {
        assert_eq!(answers("").0, [ReviewAnswer::Quit]);
        let long = format!("{}\na\n", "x".repeat(10_000));
        assert_eq!(answers(&long).0, [ReviewAnswer::Accept, ReviewAnswer::Quit]);
    }
}
