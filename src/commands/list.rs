//! `dlqspec run --list`: the specs a run would run, in its order, without running them.

use std::io::Write;

use crate::report::Palette;
use crate::report::ReportFormat;
use crate::report::listing::{self, Listed};
use crate::run::exit;
use crate::run::runner::{self, RunConfig};

/// Lists what `config` selects; exits 2 when a selected spec is broken, as a run would.
#[expect(clippy::disallowed_methods, reason = "prints: the list goes to stdout")]
pub(crate) fn list(config: &RunConfig, format: ReportFormat, palette: &Palette) -> i32 {
    if !lists(format) {
        let message = "--list prints the human or the json format";
        return super::messages::usage_error(message, palette);
    }
    let gathered = match runner::gather(config) {
        Ok(gathered) => gathered,
        Err(error) => return super::messages::usage_error(&error.to_string(), palette),
    };
    crate::report::render::warn_skipped(&gathered.skipped, palette);
    let mut broken = false;
    let mut text = String::new();
    for (path, spec) in &gathered.specs {
        let listed = match spec {
            Ok(spec) => {
                let header = spec.scenario.header();
                Listed {
                    path: path.clone(),
                    name: Some(header.name.clone()),
                    contract: Some(spec.contract.name()),
                    rules: header.rule_ids().map(str::to_owned).collect(),
                    spec_error: None,
                }
            }
            Err(error) => {
                broken = true;
                Listed {
                    path: path.clone(),
                    name: None,
                    contract: None,
                    rules: Vec::new(),
                    spec_error: Some(error.to_string()),
                }
            }
        };
        text.push_str(&match format {
            ReportFormat::Json => listing::json(&listed),
            _ => listing::human(&listed, palette),
        });
    }
    // JSON goes out as it is (already escaped); the human list through the workflow guard.
    let written = match format {
        ReportFormat::Json => std::io::stdout().write_all(text.as_bytes()),
        _ => crate::report::sanitize::stdout().write_all(text.as_bytes()),
    };
    drop(written);
    if broken {
        exit::SPEC_OR_USAGE_ERROR
    } else {
        exit::PASSED
    }
}

/// Whether `format` can list specs (`run --list`): human and JSON lines can.
pub(crate) fn lists(format: ReportFormat) -> bool {
    matches!(format, ReportFormat::Human | ReportFormat::Json)
}
