//! `dlqspec matrix`: the specs against the built-in and other implementations, rule by rule.

use std::io::Write;
use std::path::Path;

use crate::commands::cli::MatrixArgs;
use crate::external::launch::Target;
use crate::report::Palette;
use crate::report::sanitize;
use crate::run::matrix;
use crate::run::runner::{self, RunConfig};
use crate::text::source::display_path;

#[derive(Clone, Copy)]
enum Format {
    Markdown,
    Html,
}

fn format_of(path: &Path) -> Option<Format> {
    match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
        "md" | "markdown" => Some(Format::Markdown),
        "html" | "htm" => Some(Format::Html),
        _ => None,
    }
}

pub fn matrix(args: MatrixArgs, palette: Palette) -> i32 {
    let output = match &args.output {
        None => None,
        Some(path) => match format_of(path) {
            Some(format) => Some((path, format)),
            None => {
                return super::dispatch::usage_error(
                    &format!(
                        "--output {}: the file name must end in .md (Markdown) or .html",
                        path.display()
                    ),
                    &palette,
                );
            }
        },
    };
    let config = RunConfig {
        paths: args.specs.paths,
        filters: args.filter,
        ..RunConfig::default()
    };
    let prepared = match runner::gather(&config) {
        Ok(gathered) => {
            crate::report::render::warn_skipped(&gathered.skipped, &palette);
            gathered.specs
        }
        Err(error) => return super::dispatch::usage_error(&error.to_string(), &palette),
    };
    let mut targets = vec![Target::Builtin];
    for target in args.implementations {
        let target = target.with_limits(args.limits.limits());
        super::box_note::tell(&target);
        if !targets.contains(&target) {
            targets.push(target);
        }
    }
    let matrix = matrix::run(&prepared, &targets, args.timeout.per_request);
    let table = crate::report::matrix::terminal(&matrix, &palette);
    let mut out = sanitize::stdout();
    let _ = out.write_all(table.as_bytes());
    if let Some((path, format)) = output {
        let page = match format {
            Format::Markdown => crate::report::matrix::markdown(&matrix),
            Format::Html => crate::report::matrix::html(&matrix),
        };
        if let Err(error) = crate::files::atomic_file::write_atomically(path, page.as_bytes()) {
            return super::dispatch::usage_error(
                &format!("cannot write {}: {error}", path.display()),
                &palette,
            );
        }
        let _ = writeln!(out, "written to {}", sanitize::line(&display_path(path)));
    }
    matrix.exit_code()
}
