//! Rendering a smoke report: the handshake, each request with its timing, and a verdict.

use std::fmt::Write as _;
use std::time::Duration;

use super::render;
use super::sanitize::{self, line};
use super::style::{Palette, paint};
use crate::external::smoke::{SmokeReport, SmokeVerdict};

/// `12.3 ms`, or `1.20 s` from a second on.
pub(crate) fn duration(took: Duration) -> String {
    let ms = took.as_secs_f64() * 1000.0;
    if ms >= 1000.0 {
        format!("{:.2} s", ms / 1000.0)
    } else {
        format!("{ms:.1} ms")
    }
}

pub(crate) fn smoke(report: &SmokeReport, p: &Palette) -> String {
    let mut out = String::new();
    let label = line(&report.label);
    let _ = writeln!(out, "smoke test of {}", paint(p.bold, &label));
    let _ = writeln!(out, "  command    {}", line(&report.command));
    match &report.sandbox {
        None => {
            let _ = writeln!(
                out,
                "  box        {}",
                paint(p.fail, "off (--sandbox off): unsafe for grading")
            );
        }
        Some(protections) => {
            for (i, protection) in protections.iter().enumerate() {
                let head = if i == 0 { "box" } else { "" };
                let mark = if protection.held {
                    paint(p.pass, "✓")
                } else {
                    paint(p.fail, "✗")
                };
                let _ = writeln!(out, "  {head:<10} {mark} {}", line(&protection.text));
            }
        }
    }
    let handshake = match &report.handshake {
        Ok(handshake) => handshake,
        Err(error) => {
            let _ = writeln!(out, "  {}", paint(p.fail, "hello      FAILED"));
            for line in render::impl_error(error).lines() {
                let _ = writeln!(out, "    {line}");
            }
            let _ = writeln!(
                out,
                "\n{} {label} did not complete the handshake",
                paint(p.fail, "FAILED:"),
            );
            return out;
        }
    };
    let info = &handshake.implementation;
    let _ = writeln!(
        out,
        "  hello      {} ({} {}), protocol {}, pid {}, ready in {}",
        line(&info.name),
        line(&info.language),
        line(&info.version),
        crate::external::protocol::PROTOCOL_VERSION,
        handshake.pid,
        duration(handshake.startup)
    );
    let claimed = if handshake.contracts.is_empty() {
        paint(p.fail, "none")
    } else {
        line(&handshake.contracts.join(", ")).into_owned()
    };
    let _ = writeln!(out, "  contracts  {claimed}");
    for check in &report.contracts {
        if !check.known {
            let _ = writeln!(
                out,
                "{}  {}",
                paint(p.bold, &line(&check.contract)),
                paint(
                    p.skip,
                    "no smoke steps for it (its specs check it); left alone"
                )
            );
            continue;
        }
        let _ = writeln!(out, "{}", paint(p.bold, &line(&check.contract)));
        for step in &check.steps {
            let world = match step.world_calls {
                0 => String::new(),
                1 => ", 1 world call".to_owned(),
                n => format!(", {n} world calls"),
            };
            let timing = paint(p.dim, &format!("({}{world})", duration(step.took)));
            let request = line(&step.request);
            match &step.verdict {
                SmokeVerdict::Ok(answer) => {
                    let answer = line(answer);
                    let _ = writeln!(
                        out,
                        "  {}  {request} -> {answer}  {timing}",
                        paint(p.pass, "ok  ")
                    );
                }
                SmokeVerdict::Wrong {
                    actual,
                    expected,
                    why,
                } => {
                    let _ = writeln!(
                        out,
                        "  {}  {request} -> {}  {timing}",
                        paint(p.fail, "FAIL"),
                        line(actual)
                    );
                    let _ = writeln!(
                        out,
                        "        expected {}: {}",
                        line(expected),
                        sanitize::text(why)
                    );
                }
                SmokeVerdict::Broke(error) => {
                    let _ = writeln!(out, "  {}  {request}  {timing}", paint(p.fail, "FAIL"));
                    for line in render::impl_error(error).lines() {
                        let _ = writeln!(out, "        {line}");
                    }
                }
                SmokeVerdict::Skipped(reason) => {
                    let _ = writeln!(
                        out,
                        "  {}  {request}: {}",
                        paint(p.fail, "FAIL"),
                        sanitize::text(reason)
                    );
                }
            }
            // Under a failing check, what the implementation printed and raised serving it.
            if let (false, Some(captured)) =
                (matches!(step.verdict, SmokeVerdict::Ok(_)), &step.output)
            {
                for line in render::captured(captured, p).lines() {
                    let _ = writeln!(out, "        {line}");
                }
            }
        }
    }
    if let Some(departure) = &report.departure {
        let answered = if departure.said_bye {
            "answered"
        } else {
            "no answer"
        };
        let status = departure.status.map_or_else(
            || "lingered and was killed".to_owned(),
            crate::external::process::describe_exit,
        );
        let _ = writeln!(
            out,
            "  bye        {answered}, {status} in {}",
            duration(departure.took)
        );
    }
    let _ = writeln!(out);
    let problems = report.problems();
    if problems.is_empty() {
        let _ = writeln!(
            out,
            "{} {label} answered {} requests correctly in {}",
            paint(p.pass, "ok:"),
            report.requests(),
            duration(report.took)
        );
    } else {
        let _ = writeln!(out, "{}", paint(p.fail, "FAILED:"));
        for problem in problems {
            let _ = writeln!(out, "  {}", sanitize::text(&problem));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_in_milliseconds_then_seconds() {
        assert_eq!(duration(Duration::from_micros(1234)), "1.2 ms");
        assert_eq!(duration(Duration::from_millis(1500)), "1.50 s");
    }
}
