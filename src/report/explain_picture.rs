//! `explain --format html`: a scenario's timeline drawn as an SVG sequence diagram, in one
//! self-contained page (inline SVG and CSS, no script, nothing fetched).
//!
//! The lanes are the contract's (queue, consumer, handler and DLQ for dlq-consumer; the test
//! and the class for an exercise, with the lists of its state view after each
//! step). Each event of the timeline is one row: a step's band, a call's arrow, a mark on a
//! lane, a rule, a decision, a check. The first place the implementation and the spec part
//! ways (a decision the rule did not expect, or a checked value that differs) is marked
//! `class="difference"`, `id="first-difference"`, with what was expected and what happened.
//!
//! Every text comes from a spec or an implementation: it is shown with its control characters
//! escaped, cut to what its row holds, and spliced into maud's `html!`, which escapes it for
//! HTML by construction. The page depends on nothing but
//! its input, so the same run draws the same bytes.

use maud::{DOCTYPE, Markup, html};

use crate::contracts::timeline::{TimelineEvent, TimelineLine};
use crate::report::{page, sanitize};

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
    /// Where the implementation first departs from the reference, when it does.
    pub(crate) departure: Option<Departed<'a>>,
}

/// The step where an implementation first departs from the reference (the cause's step): the
/// picture marks its heading with a cross and tells the departure under it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Departed<'a> {
    /// The spec's step, from 0.
    pub(crate) step: usize,
    /// The departure in the spec's ids: `after ..., the reference acks a; yours ...`.
    pub(crate) told: &'a str,
}

/// Left margin of every row.
const LEFT: u32 = 16;
/// Where the first lane's line runs.
const FIRST_LANE: u32 = 90;
/// Between two lanes of four; two lanes (an exercise with no given part) stand further apart, so that a
/// call's label (its arguments and answer) fits between them.
fn lane_gap(lanes: &[&str]) -> u32 {
    if lanes.len() <= 2 { 280 } else { 190 }
}
/// The width of each of the lists' boxes (an exercise's state view), right of the lanes.
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

/// The page: header, the picture, the verdict and its details, and the timeline as text.
pub(crate) fn html(page: &Page) -> String {
    let details: Vec<&str> = page.details.lines().take(200).collect();
    let markup = html! {
        (DOCTYPE) "\n"
        html lang="en" {
            "\n"
            head {
                "\n" meta charset="utf-8"; "\n"
                title { "dlqspec explain: " (shown(page.name, 200)) } "\n"
                (page::style(page::EXPLAIN_CSS)) "\n"
            }
            "\n"
            body {
                "\n"
                h1 #spec-name { (shown(page.name, 500)) } "\n"
                p.meta {
                    (shown(page.path, 500)) " · contract " (shown(page.contract, 100))
                    " · implementation " span #implementation { (shown(page.implementation, 500)) }
                }
                "\n"
                @if !page.rules.is_empty() {
                    p.meta { "rules: " (shown(&page.rules.join(", "), MAX_TEXT)) } "\n"
                }
                @if !page.description.is_empty() {
                    p.description { (shown(page.description, MAX_TEXT)) } "\n"
                }
                div.picture { "\n" (svg(page.lanes, page.timeline, page.departure)) } "\n"
                p {
                    "outcome: "
                    span #verdict class={ "verdict " (if page.passed { "pass" } else { "fail" }) } {
                        (shown(page.verdict, 500))
                    }
                }
                "\n"
                @if !page.details.trim().is_empty() {
                    pre.details { @for line in &details { (shown(line, MAX_TEXT)) "\n" } } "\n"
                }
                details {
                    "\n" summary { "the timeline as text" } "\n"
                    pre.timeline {
                        @for told in page.timeline.iter().take(MAX_ROWS) {
                            (shown(&told.line, MAX_TEXT)) "\n"
                        }
                        @if page.timeline.len() > MAX_ROWS {
                            "... " (page.timeline.len() - MAX_ROWS) " more\n"
                        }
                    }
                    "\n"
                }
                "\n"
            }
            "\n"
        }
        "\n"
    };
    markup.into_string()
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

/// Whether `heading` (a step's heading, `step 3 (line 9): ...`) is the heading of the step
/// where the implementation departs.
fn departs_at(heading: &str, departed: Departed) -> bool {
    heading.starts_with(&format!("step {} (", departed.step + 1))
}

/// The timeline as an SVG sequence diagram.
fn svg(lanes: &[&'static str], timeline: &[TimelineLine], departure: Option<Departed>) -> Markup {
    // The lists' heads are the names the state view gives them, from the row of the most: an
    // exercise's own, whatever they are.
    let heads: Vec<&str> = timeline
        .iter()
        .filter_map(|t| match &t.event {
            TimelineEvent::Lists(lists) => Some(lists),
            _ => None,
        })
        .max_by_key(|lists| lists.len())
        .map(|lists| lists.iter().map(|(name, _)| name.as_str()).collect())
        .unwrap_or_default();
    let most_lists = heads.len() as u32;
    let lists = most_lists > 0;
    let lanes_right = FIRST_LANE + lane_gap(lanes) * lanes.len().saturating_sub(1) as u32 + 60;
    let lists_left = lanes_right + 20;
    let width = if lists {
        (lists_left + most_lists * (LIST_WIDTH + 10)).max(MIN_WIDTH)
    } else {
        lanes_right.max(MIN_WIDTH)
    };
    let right = width - 8;
    let mut rows: Vec<Markup> = Vec::new();
    let mut y = TOP;
    let mut marked = false;
    // Marked once, at the first heading of its step.
    let mut departing = departure;
    for told in timeline.iter().take(MAX_ROWS) {
        let text = told.line.trim_start();
        let indent = if told.line.starts_with(' ') { 24 } else { 0 };
        let (row, next) = match &told.event {
            TimelineEvent::Start => (
                html! { g.start { text x=(LEFT) y=(y + 14) { (shown(text, fits(LEFT, right))) } } },
                y + 22,
            ),
            TimelineEvent::Step { kind } => {
                let here = departing.take_if(|departed| departs_at(text, *departed));
                let (heading, y) = band(kind, here.is_some(), y, width, text, right);
                let (note, y) = departed(here, y, right);
                (html! { (heading) (note) }, y)
            }
            // A call that is a step's heading (an exercise's) starts the step's band too.
            TimelineEvent::Call { .. } if indent == 0 => {
                let here = departing.take_if(|departed| departs_at(text, *departed));
                let (heading, y) = band("call-step", here.is_some(), y, width, text, right);
                let (note, y) = departed(here, y, right);
                let (call, y) = arrow(lanes, &told.event, y, indent, text, right);
                (html! { (heading) (note) "\n" (call) }, y)
            }
            TimelineEvent::Call { .. } => arrow(lanes, &told.event, y, indent, text, right),
            TimelineEvent::Mark { lane, label, tone } => {
                let x = lane_x(lanes, lane).unwrap_or(FIRST_LANE);
                let row = html! {
                    g class={ "mark tone-" (tone.word()) } {
                        @if tone.word() == "crash" {
                            path d=(format!("M{} {} l12 12 m0 -12 l-12 12", x - 6, y + 4)) {}
                        } @else {
                            circle cx=(x) cy=(y + 10) r="5" {}
                        }
                        text x=(x + 12) y=(y + 14) { (shown(label, fits(x + 12, right))) }
                    }
                };
                (row, y + 24)
            }
            TimelineEvent::Rule => note_row("rule", y, indent, text, right),
            TimelineEvent::Decision { did, expected } => {
                let first = expected.is_some() && !std::mem::replace(&mut marked, true);
                match expected {
                    Some(expected) if first => {
                        difference("decision wrong", y, text, did, expected, right)
                    }
                    Some(_) => note_row("decision wrong", y, indent, text, right),
                    None => note_row("decision ok", y, indent, text, right),
                }
            }
            TimelineEvent::Check {
                expected, actual, ..
            } => {
                let differs = told.event.differs();
                if differs && !std::mem::replace(&mut marked, true) {
                    difference("check differs", y, text, actual, expected, right)
                } else {
                    let class = if differs { "check differs" } else { "check ok" };
                    note_row(class, y, indent, text, right)
                }
            }
            TimelineEvent::Lists(lists) => {
                let row = html! {
                    g.lists {
                        @for (i, (name, items)) in lists.iter().enumerate() {
                            @let x = lists_left + i as u32 * (LIST_WIDTH + 10);
                            @let shown_items = if items.is_empty() { "(empty)".to_owned() } else { items.join(", ") };
                            g class={ "list list-of-" (class_word(name)) } {
                                rect x=(x) y=(y) width=(LIST_WIDTH) height="20" {}
                                text x=(x + 4) y=(y + 14) {
                                    (shown(name, 20)) ": "
                                    (shown(&shown_items, fits(x + 4 + 8 * name.len() as u32, x + LIST_WIDTH)))
                                }
                            }
                        }
                    }
                };
                (row, y + 26)
            }
            TimelineEvent::Note => note_row("note", y, indent, text, right),
        };
        rows.push(row);
        y = next;
    }
    if timeline.len() > MAX_ROWS {
        let more = format!(
            "... {} more events: the text timeline below holds them",
            timeline.len() - MAX_ROWS
        );
        let (row, next) = note_row("note", y, 0, &more, right);
        rows.push(row);
        y = next;
    }
    let height = y + 12;
    html! {
        svg #explain width=(width) height=(height) viewBox={ "0 0 " (width) " " (height) } role="img" aria-label="the scenario as a sequence diagram" {
            "\n"
            defs {
                marker #arrow viewBox="0 0 10 10" refX="8" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse" {
                    path d="M0 0 L10 5 L0 10 z" fill="#555" {}
                }
            }
            "\n"
            @for (i, lane) in lanes.iter().enumerate() {
                @let x = FIRST_LANE + lane_gap(lanes) * i as u32;
                g.lane id={ "lane-" (lane_id(lane)) } data-lane=(shown(lane, 20)) {
                    rect x=(x - 55) y="8" width="110" height="26" rx="4" {}
                    text x=(x) y="26" { (shown(lane, 14)) }
                    line x1=(x) y1="34" x2=(x) y2=(height) {}
                }
                "\n"
            }
            @if lists {
                @for (i, name) in heads.iter().enumerate() {
                    @let x = lists_left + i as u32 * (LIST_WIDTH + 10);
                    g.lane.list-head id={ "lane-" (lane_id(name)) } data-lane=(shown(name, 20)) {
                        rect x=(x) y="8" width=(LIST_WIDTH) height="26" rx="4" {}
                        text x=(x + LIST_WIDTH / 2) y="26" { (shown(name, 20)) }
                    }
                    "\n"
                }
            }
            @for row in &rows { (row) "\n" }
        }
        "\n"
    }
}

/// A name as one word of a `class` attribute, in its own namespace (`step-`, `list-of-`
/// before it): a method is named `call` and a view's list `departure` without taking the
/// style of the picture's own classes, and a name the solution chose (a list's key) is one
/// class, not several. Letters, digits, `-` and `_` stay; anything else becomes `-`.
fn class_word(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// A step's heading: a band across the picture, with a mark saying what kind of step it is
/// (a cross where the implementation `departs` from the reference); the row and the top of
/// the next.
fn band(kind: &str, departs: bool, y: u32, width: u32, text: &str, right: u32) -> (Markup, u32) {
    let glyph = if departs { "\u{2717}" } else { glyph(kind) };
    let class = if departs {
        format!("step step-{} departure", class_word(kind))
    } else {
        format!("step step-{}", class_word(kind))
    };
    let row = html! {
        g class=(class) id=[departs.then_some("departure")] {
            rect x="4" y=(y) width=(width - 8) height="22" {}
            text x=(LEFT) y=(y + 15) { (glyph) " " (shown(text, fits(LEFT + 16, right))) }
        }
    };
    (row, y + 26)
}

/// Under the heading of the step where the implementation departs, what it did there and
/// what the reference does; nothing under any other.
fn departed(departure: Option<Departed>, y: u32, right: u32) -> (Markup, u32) {
    match departure {
        Some(departed) => {
            let told = format!(
                "\u{2717} here yours departs from the reference: {}",
                departed.told
            );
            let (row, y) = note_row("departs", y, 24, &told, right);
            (html! { "\n" (row) }, y)
        }
        None => (html! {}, y),
    }
}

/// A call's arrow from one lane to another, its label above it; a call between lanes the
/// picture does not draw is a row of text.
fn arrow(
    lanes: &[&str],
    event: &TimelineEvent,
    y: u32,
    indent: u32,
    text: &str,
    right: u32,
) -> (Markup, u32) {
    let TimelineEvent::Call {
        from,
        to,
        label,
        tone,
    } = event
    else {
        return note_row("note", y, indent, text, right);
    };
    let (Some(x1), Some(x2)) = (lane_x(lanes, from), lane_x(lanes, to)) else {
        return note_row("note", y, indent, text, right);
    };
    let (mid, span) = ((x1 + x2) / 2, x1.abs_diff(x2).max(lane_gap(lanes)));
    let head = if x2 >= x1 { x2 - 6 } else { x2 + 6 };
    let row = html! {
        g class={ "call tone-" (tone.word()) } data-from=(lane_id(from)) data-to=(lane_id(to)) {
            text x=(mid) y=(y + 11) { (shown(label, fits(0, span - 10))) }
            line x1=(x1) y1=(y + 18) x2=(head) y2=(y + 18) marker-end="url(#arrow)" {}
        }
    };
    (row, y + 26)
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
fn note_row(class: &str, y: u32, indent: u32, text: &str, right: u32) -> (Markup, u32) {
    let x = LEFT + indent;
    let lines = wrap(text, fits(x, right));
    let row = html! { g class=(class) { text x=(x) y=(y + 13) { (tspans(x, &lines)) } } };
    (row, y + 18 + LINE * (lines.len() as u32 - 1))
}

/// Lines of one text element, each below the last.
fn tspans(x: u32, lines: &[String]) -> Markup {
    html! {
        @if let [one] = lines {
            (one)
        } @else {
            @for (i, line) in lines.iter().enumerate() {
                tspan x=(x) dy=(if i == 0 { 0 } else { LINE }) { (line) }
            }
        }
    }
}

/// Untrusted text in lines of at most `width` characters (broken after a space where the
/// line has one), control characters shown as escapes: all of it, up to `MAX_TEXT`.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(20);
    let text = sanitize::line(text);
    let text = sanitize::cut(&text, MAX_TEXT);
    let mut lines = Vec::new();
    let mut rest: &str = &text;
    loop {
        let Some((end, _)) = rest.char_indices().nth(width) else {
            lines.push(rest.to_owned());
            return lines;
        };
        let cut = rest[..end]
            .rfind(' ')
            .filter(|&at| at > 0)
            .map_or(end, |at| at + 1);
        lines.push(rest[..cut].to_owned());
        rest = &rest[cut..];
    }
}

/// The first difference: its line, then what happened and what was expected, in a red box
/// that grows with them: a long decision or expected trace wraps, none is cut.
fn difference(
    class: &str,
    y: u32,
    text: &str,
    actual: &str,
    expected: &str,
    right: u32,
) -> (Markup, u32) {
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
    let row = html! {
        g class={ (class) " difference" } id="first-difference" {
            rect x=(x - 6) y=(y) width=(right - x) height=(height) rx="3" {}
            text x=(x) y=(heading_y) { (tspans(x, &heading)) }
            text.expected x=(x) y=(expected_y) { "expected: " (continued(after, &expected)) }
            text.actual x=(x) y=(actual_y) { "actual:   " (continued(after, &actual)) }
        }
    };
    (row, y + height + 6)
}

/// A value's lines after its label: the first beside it, the rest under the first.
fn continued(x: u32, lines: &[String]) -> Markup {
    html! {
        @if let Some(first) = lines.first() { (first) }
        @for line in lines.iter().skip(1) {
            tspan x=(x) dy=(LINE) { (line) }
        }
    }
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

/// Untrusted text as a page shows it: control characters as escapes, cut to `max` characters
/// (an ellipsis says so). maud escapes it for HTML where it is spliced in.
fn shown(text: &str, max: usize) -> String {
    sanitize::cut(&sanitize::line(text), max).into_owned()
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
            departure: None,
        }
    }

    #[test]
    fn the_step_where_the_implementation_departs_is_marked_and_told() {
        let step = |n: usize| TimelineLine {
            line: format!("step {n} (line {}): process_one() returned dead", n + 6),
            event: TimelineEvent::Step { kind: "process" },
        };
        let timeline = [step(1), step(2), step(2), step(12)];
        let mut page = page(&timeline, &["queue"]);
        page.departure = Some(Departed {
            step: 1,
            told: "the reference retries <a>; yours put a in the DLQ",
        });
        let html = html(&page);
        assert_eq!(html.matches("id=\"departure\"").count(), 1, "{html}");
        assert!(
            html.contains(
                "<g class=\"step step-process departure\" id=\"departure\"><rect x=\"4\" y=\"82\""
            ),
            "the second step, not the first nor the twelfth: {html}"
        );
        assert!(html.contains("\u{2717} step 2 (line 8)"), "{html}");
        assert!(
            html.contains(
                "here yours departs from the reference: the reference retries &lt;a&gt;; yours"
            ),
            "{html}"
        );
        assert!(html.contains("\u{25b6} step 1 (line 7)"), "{html}");
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
