//! `dlqspec matrix`: the specs against the built-in and other implementations, rule by rule.

use crate::commands::cli::{MatrixArgs, MatrixFormat};
use crate::external::launch::Target;
use crate::report::Palette;
use crate::report::sanitize;
use crate::run::exit;
use crate::run::matrix;
use crate::run::runner::{self, RunConfig};
use crate::text::source::display_path;
use std::io::Write;

/// The format `--format` names, else the one `--output`'s extension says, else text; a file
/// whose extension says none needs `--format`.
fn chosen_format(args: &MatrixArgs) -> Result<MatrixFormat, String> {
    match (args.format, &args.output) {
        (Some(format), _) => Ok(format),
        (None, None) => Ok(MatrixFormat::Text),
        (None, Some(path)) => MatrixFormat::of_extension(path).ok_or_else(|| {
            format!(
                "--output {}: name its format with --format text|markdown|html, or end the file name in .md (Markdown) or .html",
                path.display()
            )
        }),
    }
}

pub(crate) fn matrix(args: MatrixArgs, palette: Palette) -> i32 {
    let format = match chosen_format(&args) {
        Ok(format) => format,
        Err(why) => return super::messages::usage_error(&why, &palette),
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
        Err(error) => return super::messages::usage_error(&error.to_string(), &palette),
    };
    let mut targets = vec![Target::Builtin];
    for target in args.implementations {
        let target = target.with_limits(args.limits.limits());
        if let Some(code) = super::messages::refuse_unrunnable(&target, &palette) {
            return code;
        }
        super::sandbox_warnings::warn_once(&target);
        if !targets.contains(&target) {
            targets.push(target);
        }
    }
    for world in &args.world {
        match runner::prepare_world(world, &prepared) {
            Ok(lines) => {
                for line in lines {
                    let _ = writeln!(sanitize::stderr(), "{}", sanitize::line(&line));
                }
            }
            Err(fault) => {
                super::messages::failure(&fault, &palette);
                return exit::SPEC_OR_USAGE_ERROR;
            }
        }
    }
    let matrix = matrix::run(&prepared, &targets, &args.world, args.limits.timeout);
    let written = |format: MatrixFormat, palette: &Palette| match format {
        MatrixFormat::Text => crate::report::matrix::terminal(&matrix, palette),
        MatrixFormat::Markdown => crate::report::matrix::markdown(&matrix),
        MatrixFormat::Html => crate::report::matrix::html(&matrix),
    };
    let mut out = sanitize::stdout();
    let Some(path) = &args.output else {
        let _ = out.write_all(written(format, &palette).as_bytes());
        return matrix.exit_code();
    };
    // As `run --output`: the file gets the format, the terminal its table.
    let _ = out.write_all(crate::report::matrix::terminal(&matrix, &palette).as_bytes());
    let page = written(format, &Palette::new(false));
    if let Err(error) = crate::files::atomic_file::write_atomically(path, page.as_bytes()) {
        return super::messages::usage_error(
            &format!("cannot write {}: {error}", path.display()),
            &palette,
        );
    }
    let _ = writeln!(out, "written to {}", sanitize::line(&display_path(path)));
    matrix.exit_code()
}
