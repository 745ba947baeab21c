//! `explain --format html`: a scenario's timeline drawn as an SVG sequence diagram, in one
//! self-contained page (inline SVG and CSS, no script, nothing fetched).
//!
//! The lanes are the contract's (queue, consumer, handler and DLQ for dlq-consumer; the test
//! and the queue for outcome-queue, with its ready, done and quarantine lists after each
//! step). Each event of the timeline is one row: a step's band, a call's arrow, a mark on a
//! lane, a rule, a decision, a check. The first place the implementation and the spec part
//! ways (a decision the rule did not expect, or a checked value that differs) is marked
//! `class="difference"`, `id="first-difference"`, with what was expected and what happened.
//!
//! Every text comes from a spec or an implementation: it is shown with its control characters
//! escaped, cut to what its row holds, and escaped for HTML. The page depends on nothing but
//! its input, so the same run draws the same bytes.

use std::fmt::Write as _;

use crate::contracts::timeline::{TimelineEvent, TimelineLine};
use crate::report::sanitize;

/// What the page shows besides the timeline: the spec, the implementation and the verdict.
pub(crate) struct Page<'a> {
    pub(crate) name: &'a str,
    pub(crate) path: &'a str,
    pub(crate) contract: &'a str,
    pub(crate) implementation: &'a str,
    pub(crate) rules: &'a [String],
    pub(crate) description: &'a str,
    /// The lanes the calls run between, left to right.
    pub(crate) lanes: &'a [&'static str],
    pub(crate) timeline: &'a [TimelineLine],
    /// `PASS: ...`, `FAIL: ...`, as the text says it.
    pub(crate) verdict: &'a str,
    pub(crate) passed: bool,
    /// The outcome's details as the text tells them (the diff of the first difference).
    pub(crate) details: &'a str,
}

/// Left margin of every row.
const LEFT: u32 = 16;
/// Where the first lane's line runs.
const FIRST_LANE: u32 = 90;
/// Between two lanes of four; two lanes (outcome-queue's) stand further apart, so that a
/// call's label (its arguments and answer) fits between them.
fn lane_gap(lanes: &[&str]) -> u32 {
    if lanes.len() <= 2 { 280 } else { 190 }
}
/// The width of each of the lists' boxes (outcome-queue), right of the lanes.
const LIST_WIDTH: u32 = 230;
/// The top of the first row, below the lanes' heads.
const TOP: u32 = 56;
/// Pixels per character of the monospace font at its size (12px): how much text a row holds.
const CHAR_WIDTH: f64 = 7.3;
/// The least width of the picture, for rows of text between few lanes.
const MIN_WIDTH: u32 = 960;
/// The most characters any one text of the page keeps (a description, a detail line).
const MAX_TEXT: usize = 2000;
/// The most rows drawn: a long scenario's picture stays a page a browser opens at once.
pub(crate) const MAX_ROWS: usize = 4000;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}\n\
h1{font-size:1.3em;margin:.2em 0}\n\
.meta{color:#555;margin:.2em 0}\n\
.picture{overflow-x:auto;border:1px solid #ddd;padding:.3em;background:#fff}\n\
svg text{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;white-space:pre;fill:#222}\n\
.lane line{stroke:#bbb;stroke-dasharray:4 3}\n\
.lane rect{fill:#eef;stroke:#99a}\n\
.lane text{font-weight:bold;text-anchor:middle}\n\
.step rect{fill:#f3f3f3}\n\
.step text{font-weight:bold}\n\
.call line{stroke:#555;stroke-width:1.5}\n\
.call text{text-anchor:middle;font-size:11px}\n\
.tone-delivery line{stroke:#2a5db0}.tone-success line{stroke:#2e8b3e}.tone-retry line{stroke:#c77d00}\n\
.tone-dead line{stroke:#7a2a9a}.tone-replay line{stroke:#00838f}.tone-crash line{stroke:#c62828}\n\
.tone-read line{stroke:#999;stroke-dasharray:3 2}.tone-misuse line{stroke:#c62828;stroke-dasharray:2 2}\n\
.mark text{font-weight:bold}.mark.tone-crash text,.mark.tone-misuse text{fill:#c62828}\n\
.mark.tone-crash path{stroke:#c62828;stroke-width:3}.mark circle{fill:#888}\n\
.rule text{fill:#666;font-size:11px}\n\
.note text{fill:#444}\n\
.decision.ok text,.check.ok text{fill:#2e7d32}\n\
.decision.wrong text,.check.differs text{fill:#c62828;font-weight:bold}\n\
.difference rect{fill:#fdecea;stroke:#c62828;stroke-width:2}\n\
.list rect{fill:#fafafa;stroke:#aaa}.list.quarantine rect{fill:#fbeef5}.list.done rect{fill:#eef8ee}\n\
.list text{font-size:11px}\n\
.verdict{font-weight:bold;padding:.3em .5em;display:inline-block}\n\
.verdict.pass{background:#dfd}.verdict.fail{background:#fdd}\n\
pre{background:#f6f6f6;padding:.5em;white-space:pre-wrap;overflow-wrap:anywhere}\n";

/// The page: header, the picture, the verdict and its details, and the timeline as text.
pub(crate) fn html(page: &Page) -> String {
    let mut out =
        String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    let _ = writeln!(
        out,
        "<title>dlqspec explain: {}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>",
        escape(page.name, 200)
    );
    let _ = writeln!(out, "<h1 id=\"spec-name\">{}</h1>", escape(page.name, 500));
    let _ = writeln!(
        out,
        "<p class=\"meta\">{} · contract {} · implementation <span id=\"implementation\">{}</span></p>",
        escape(page.path, 500),
        escape(page.contract, 100),
        escape(page.implementation, 500)
    );
    if !page.rules.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"meta\">rules: {}</p>",
            escape(&page.rules.join(", "), MAX_TEXT)
        );
    }
    if !page.description.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"description\">{}</p>",
            escape(page.description, MAX_TEXT)
        );
    }
    out.push_str("<div class=\"picture\">\n");
    out.push_str(&svg(page.lanes, page.timeline));
    out.push_str("</div>\n");
    let _ = writeln!(
        out,
        "<p>outcome: <span id=\"verdict\" class=\"verdict {}\">{}</span></p>",
        if page.passed { "pass" } else { "fail" },
        escape(page.verdict, 500)
    );
    if !page.details.trim().is_empty() {
        out.push_str("<pre class=\"details\">");
        for line in page.details.lines().take(200) {
            out.push_str(&escape(line, MAX_TEXT));
            out.push('\n');
        }
        out.push_str("</pre>\n");
    }
    out.push_str("<details>\n<summary>the timeline as text</summary>\n<pre class=\"timeline\">");
    for told in page.timeline.iter().take(MAX_ROWS) {
        out.push_str(&escape(&told.line, MAX_TEXT));
        out.push('\n');
    }
    if page.timeline.len() > MAX_ROWS {
        let _ = writeln!(out, "... {} more", page.timeline.len() - MAX_ROWS);
    }
    out.push_str("</pre>\n</details>\n</body>\n</html>\n");
    out
}

/// Where lane `name` runs, if it is one of `lanes`.
fn lane_x(lanes: &[&str], name: &str) -> Option<u32> {
    let index = lanes.iter().position(|lane| *lane == name)?;
    Some(FIRST_LANE + lane_gap(lanes) * index as u32)
}

/// How many characters fit from `x` to `right`.
fn fits(x: u32, right: u32) -> usize {
    (f64::from(right.saturating_sub(x)) / CHAR_WIDTH) as usize
}

/// The timeline as an SVG sequence diagram.
fn svg(lanes: &[&'static str], timeline: &[TimelineLine]) -> String {
    let lists = timeline
        .iter()
        .any(|t| matches!(t.event, TimelineEvent::Lists(_)));
    let lanes_right = FIRST_LANE + lane_gap(lanes) * lanes.len().saturating_sub(1) as u32 + 60;
    let lists_left = lanes_right + 20;
    let width = if lists {
        (lists_left + 3 * (LIST_WIDTH + 10)).max(MIN_WIDTH)
    } else {
        lanes_right.max(MIN_WIDTH)
    };
    let right = width - 8;
    let mut rows = String::new();
    let mut y = TOP;
    let mut marked = false;
    for told in timeline.iter().take(MAX_ROWS) {
        let text = told.line.trim_start();
        let indent = if told.line.starts_with(' ') { 24 } else { 0 };
        match &told.event {
            TimelineEvent::Start => {
                let _ = writeln!(
                    rows,
                    "<g class=\"start\"><text x=\"{LEFT}\" y=\"{}\">{}</text></g>",
                    y + 14,
                    escape(text, fits(LEFT, right))
                );
                y += 22;
            }
            TimelineEvent::Step { kind } => {
                y = band(&mut rows, kind, y, width, text, right);
            }
            // A call that is a step's heading (outcome-queue's) starts the step's band too.
            TimelineEvent::Call { .. } if indent == 0 => {
                y = band(&mut rows, "call-step", y, width, text, right);
                y = arrow(&mut rows, lanes, &told.event, y, indent, text, right);
            }
            TimelineEvent::Call { .. } => {
                y = arrow(&mut rows, lanes, &told.event, y, indent, text, right);
            }
            TimelineEvent::Mark { lane, label, tone } => {
                let x = lane_x(lanes, lane).unwrap_or(FIRST_LANE);
                let symbol = match tone.word() {
                    "crash" => format!("<path d=\"M{} {} l12 12 m0 -12 l-12 12\"/>", x - 6, y + 4),
                    _ => format!("<circle cx=\"{x}\" cy=\"{}\" r=\"5\"/>", y + 10),
                };
                let _ = writeln!(
                    rows,
                    "<g class=\"mark tone-{}\">{symbol}<text x=\"{}\" y=\"{}\">{}</text></g>",
                    tone.word(),
                    x + 12,
                    y + 14,
                    escape(label, fits(x + 12, right))
                );
                y += 24;
            }
            TimelineEvent::Rule => {
                y = note_row(&mut rows, "rule", y, indent, text, right);
            }
            TimelineEvent::Decision { did, expected } => {
                let first = expected.is_some() && !std::mem::replace(&mut marked, true);
                match expected {
                    Some(expected) if first => {
                        y = difference(&mut rows, "decision wrong", y, text, did, expected, right);
                    }
                    Some(_) => y = note_row(&mut rows, "decision wrong", y, indent, text, right),
                    None => y = note_row(&mut rows, "decision ok", y, indent, text, right),
                }
            }
            TimelineEvent::Check {
                expected, actual, ..
            } => {
                let differs = told.event.differs();
                if differs && !std::mem::replace(&mut marked, true) {
                    y = difference(&mut rows, "check differs", y, text, actual, expected, right);
                } else {
                    let class = if differs { "check differs" } else { "check ok" };
                    y = note_row(&mut rows, class, y, indent, text, right);
                }
            }
            TimelineEvent::Lists(lists) => {
                let _ = write!(rows, "<g class=\"lists\">");
                for (i, (name, items)) in lists.iter().enumerate() {
                    let x = lists_left + i as u32 * (LIST_WIDTH + 10);
                    let shown = if items.is_empty() {
                        "(empty)".to_owned()
                    } else {
                        items.join(", ")
                    };
                    let _ = write!(
                        rows,
                        "<g class=\"list {name}\"><rect x=\"{x}\" y=\"{y}\" width=\"{LIST_WIDTH}\" height=\"20\"/><text x=\"{}\" y=\"{}\">{}: {}</text></g>",
                        x + 4,
                        y + 14,
                        escape(name, 20),
                        escape(&shown, fits(x + 4 + 8 * name.len() as u32, x + LIST_WIDTH))
                    );
                }
                rows.push_str("</g>\n");
                y += 26;
            }
            TimelineEvent::Note => {
                y = note_row(&mut rows, "note", y, indent, text, right);
            }
        }
    }
    if timeline.len() > MAX_ROWS {
        y = note_row(
            &mut rows,
            "note",
            y,
            0,
            &format!(
                "... {} more events: the text timeline below holds them",
                timeline.len() - MAX_ROWS
            ),
            right,
        );
    }
    let height = y + 12;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg id=\"explain\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"the scenario as a sequence diagram\">"
    );
    out.push_str("<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"8\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0 0 L10 5 L0 10 z\" fill=\"#555\"/></marker></defs>\n");
    for (i, lane) in lanes.iter().enumerate() {
        let x = FIRST_LANE + lane_gap(lanes) * i as u32;
        let _ = writeln!(
            out,
            "<g class=\"lane\" id=\"lane-{}\" data-lane=\"{}\"><rect x=\"{}\" y=\"8\" width=\"110\" height=\"26\" rx=\"4\"/><text x=\"{x}\" y=\"26\">{}</text><line x1=\"{x}\" y1=\"34\" x2=\"{x}\" y2=\"{height}\"/></g>",
            lane_id(lane),
            escape(lane, 20),
            x - 55,
            escape(lane, 14)
        );
    }
    if lists {
        for (i, name) in ["ready", "done", "quarantine"].iter().enumerate() {
            let x = lists_left + i as u32 * (LIST_WIDTH + 10);
            let _ = writeln!(
                out,
                "<g class=\"lane list-head\" id=\"lane-{name}\" data-lane=\"{name}\"><rect x=\"{x}\" y=\"8\" width=\"{LIST_WIDTH}\" height=\"26\" rx=\"4\"/><text x=\"{}\" y=\"26\">{name}</text></g>",
                x + LIST_WIDTH / 2
            );
        }
    }
    out.push_str(&rows);
    out.push_str("</svg>\n");
    out
}

/// A step's heading: a band across the picture, with a mark saying what kind of step it is.
fn band(rows: &mut String, kind: &str, y: u32, width: u32, text: &str, right: u32) -> u32 {
    let _ = writeln!(
        rows,
        "<g class=\"step {kind}\"><rect x=\"4\" y=\"{y}\" width=\"{}\" height=\"22\"/><text x=\"{LEFT}\" y=\"{}\">{} {}</text></g>",
        width - 8,
        y + 15,
        glyph(kind),
        escape(text, fits(LEFT + 16, right))
    );
    y + 26
}

/// A call's arrow from one lane to another, its label above it; a call between lanes the
/// picture does not draw is a row of text.
fn arrow(
    rows: &mut String,
    lanes: &[&str],
    event: &TimelineEvent,
    y: u32,
    indent: u32,
    text: &str,
    right: u32,
) -> u32 {
    let TimelineEvent::Call {
        from,
        to,
        label,
        tone,
    } = event
    else {
        return note_row(rows, "note", y, indent, text, right);
    };
    let (Some(x1), Some(x2)) = (lane_x(lanes, from), lane_x(lanes, to)) else {
        return note_row(rows, "note", y, indent, text, right);
    };
    let (mid, span) = ((x1 + x2) / 2, x1.abs_diff(x2).max(lane_gap(lanes)));
    let head = if x2 >= x1 { x2 - 6 } else { x2 + 6 };
    let _ = writeln!(
        rows,
        "<g class=\"call tone-{}\" data-from=\"{}\" data-to=\"{}\"><text x=\"{mid}\" y=\"{}\">{}</text><line x1=\"{x1}\" y1=\"{y2}\" x2=\"{head}\" y2=\"{y2}\" marker-end=\"url(#arrow)\"/></g>",
        tone.word(),
        lane_id(from),
        lane_id(to),
        y + 11,
        escape(label, fits(0, span - 10)),
        y2 = y + 18
    );
    y + 26
}

/// A lane's name as an id: letters and digits, the rest `-`.
fn lane_id(lane: &str) -> String {
    lane.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// The height of one line of a row's text.
const LINE: u32 = 15;

/// One row of text (a rule, a note, a decision, a check), indented as the text timeline
/// indents it; a long one wraps onto more lines, none cut.
fn note_row(rows: &mut String, class: &str, y: u32, indent: u32, text: &str, right: u32) -> u32 {
    let x = LEFT + indent;
    let lines = wrap(text, fits(x, right));
    let _ = writeln!(
        rows,
        "<g class=\"{class}\"><text x=\"{x}\" y=\"{}\">{}</text></g>",
        y + 13,
        tspans(x, &lines)
    );
    y + 18 + LINE * (lines.len() as u32 - 1)
}

/// Lines of one text element, each below the last.
fn tspans(x: u32, lines: &[String]) -> String {
    match lines {
        [one] => one.clone(),
        _ => lines
            .iter()
            .enumerate()
            .map(|(i, line)| {
                let dy = if i == 0 { 0 } else { LINE };
                format!("<tspan x=\"{x}\" dy=\"{dy}\">{line}</tspan>")
            })
            .collect(),
    }
}

/// Untrusted text for HTML in lines of at most `width` characters (broken after a space where
/// the line has one), control characters shown as escapes: all of it, up to `MAX_TEXT`.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(20);
    let text = sanitize::line(text);
    let text = sanitize::cut(&text, MAX_TEXT);
    let mut lines = Vec::new();
    let mut rest: &str = &text;
    loop {
        let Some((end, _)) = rest.char_indices().nth(width) else {
            lines.push(sanitize::html(rest));
            return lines;
        };
        let cut = rest[..end]
            .rfind(' ')
            .filter(|&at| at > 0)
            .map_or(end, |at| at + 1);
        lines.push(sanitize::html(&rest[..cut]));
        rest = &rest[cut..];
    }
}

/// The first difference: its line, then what happened and what was expected, in a red box
/// that grows with them: a long decision or expected trace wraps, none is cut.
fn difference(
    rows: &mut String,
    class: &str,
    y: u32,
    text: &str,
    actual: &str,
    expected: &str,
    right: u32,
) -> u32 {
    let x = LEFT + 24;
    // `expected: ` and `actual:   ` take 10 characters; what follows wraps under itself.
    let after = x + (10.0 * CHAR_WIDTH) as u32;
    let heading = wrap(text, fits(x, right));
    let expected = wrap(expected, fits(after, right));
    let actual = wrap(actual, fits(after, right));
    let lines = |n: usize| LINE * (n as u32 - 1);
    let heading_y = y + 15;
    let expected_y = heading_y + lines(heading.len()) + 17;
    let actual_y = expected_y + lines(expected.len()) + 17;
    let height = actual_y + lines(actual.len()) + 9 - y;
    let _ = writeln!(
        rows,
        "<g class=\"{class} difference\" id=\"first-difference\"><rect x=\"{}\" y=\"{y}\" width=\"{}\" height=\"{height}\" rx=\"3\"/><text x=\"{x}\" y=\"{heading_y}\">{}</text><text class=\"expected\" x=\"{x}\" y=\"{expected_y}\">expected: {}</text><text class=\"actual\" x=\"{x}\" y=\"{actual_y}\">actual:   {}</text></g>",
        x - 6,
        right - x,
        tspans(x, &heading),
        continued(after, &expected),
        continued(after, &actual),
    );
    y + height + 6
}

/// A value's lines after its label: the first beside it, the rest under the first.
fn continued(x: u32, lines: &[String]) -> String {
    let mut out = lines.first().cloned().unwrap_or_default();
    for line in &lines[1.min(lines.len())..] {
        let _ = write!(out, "<tspan x=\"{x}\" dy=\"{LINE}\">{line}</tspan>");
    }
    out
}

/// A mark before a step's heading, saying what kind of step it is.
fn glyph(kind: &str) -> &'static str {
    match kind {
        "advance" => "\u{25d4}",
        "recover" => "\u{21ba}",
        "replay" => "\u{21c4}",
        "restart" => "\u{21bb}",
        "fault" => "\u{26a0}",
        "broke" => "\u{2717}",
        "expect" => "\u{2611}",
        _ => "\u{25b6}",
    }
}

/// Untrusted text for HTML: control characters shown as escapes, cut to `max` characters
/// (an ellipsis says so), then escaped.
fn escape(text: &str, max: usize) -> String {
    sanitize::html(&sanitize::cut(&sanitize::line(text), max))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contracts::timeline::Tone;

    fn page<'a>(timeline: &'a [TimelineLine], lanes: &'a [&'static str]) -> Page<'a> {
        Page {
            name: "n",
            path: "p.yaml",
            contract: "dlq-consumer",
            implementation: "builtin",
            rules: &[],
            description: "",
            lanes,
            timeline,
            verdict: "FAIL",
            passed: false,
            details: "",
        }
    }

    #[test]
    fn hostile_text_is_escaped_and_cut() {
        let timeline = [TimelineLine {
            line: "    x".to_owned(),
            event: TimelineEvent::Call {
                from: "queue",
                to: "consumer",
                label: format!("<script>\u{1b}[31m{}", "y".repeat(500)),
                tone: Tone::Delivery,
            },
        }];
        let html = html(&page(&timeline, &["queue", "consumer"]));
        assert!(html.contains("&lt;script&gt;\\x1b[31m"), "{html}");
        assert!(!html.contains("<script") && !html.contains('\u{1b}'));
        assert!(!html.contains(&"y".repeat(100)) && html.contains("y\u{2026}"));
    }

    #[test]
    fn only_the_first_difference_is_marked_as_such() {
        let check = |actual: &str| TimelineLine {
            line: format!("    \u{2717} k: expected 1, got {actual}"),
            event: TimelineEvent::Check {
                expected: "1".into(),
                actual: actual.into(),
            },
        };
        let timeline = [check("2"), check("3")];
        let html = html(&page(&timeline, &["queue"]));
        assert_eq!(
            html.matches("class=\"check differs difference\"").count(),
            1
        );
        assert_eq!(html.matches("id=\"first-difference\"").count(), 1);
        assert!(html.contains("expected: 1</text>") && html.contains("actual:   2</text>"));
        assert!(html.contains("<g class=\"check differs\">"), "{html}");
    }

    #[test]
    fn a_long_decision_and_its_expected_trace_wrap_whole() {
        let long = |word: &str| {
            (0..60)
                .map(|i| format!("{word}{i}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let timeline = [TimelineLine {
            line: format!("    \u{2717} {}", long("decided")),
            event: TimelineEvent::Check {
                expected: long("want"),
                actual: long("got"),
            },
        }];
        let html = html(&page(&timeline, &["queue"]));
        for word in ["decided59", "want59", "got59", "want0 "] {
            assert!(html.contains(word), "{word} cut: {html}");
        }
        assert!(!html.contains('\u{2026}'), "{html}");
        assert!(html.matches("<tspan").count() >= 6, "{html}");
        // The box holds its lines: taller than the three lines of a short difference.
        let height: u32 = html
            .split("id=\"first-difference\"><rect")
            .nth(1)
            .and_then(|rest| rest.split("height=\"").nth(1))
            .and_then(|rest| rest.split('"').next())
            .and_then(|h| h.parse().ok())
            .unwrap();
        assert!(height > 58, "{height}");
    }

    #[test]
    fn the_page_fetches_nothing_and_runs_nothing() {
        let html = html(&page(&[], &["queue"]));
        assert!(!html.contains("<script") && !html.contains("src=") && !html.contains("href="));
        assert!(html.contains("<svg id=\"explain\""));
        assert!(html.contains("<g class=\"lane\" id=\"lane-queue\""));
    }
}
