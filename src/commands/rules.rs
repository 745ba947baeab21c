//! `dlqspec rules`: the rule catalogue of every contract, with the specs that cover each rule.

use std::collections::BTreeMap;
use std::io::Write;

use crate::commands::cli::RulesArgs;
use crate::contracts::builtin::Builtin;
use crate::contracts::contract::RunMode;
use crate::report::Palette;
use crate::report::sanitize;
use crate::report::style::paint;
use crate::run::exit;
use crate::run::runner::{self, RunConfig};

pub(crate) fn rules(args: RulesArgs, palette: Palette) -> i32 {
    let config = RunConfig {
        paths: args.specs.paths,
        ..RunConfig::default()
    };
    let prepared = match runner::gather(&config) {
        Ok(gathered) => {
            crate::report::render::warn_skipped(&gathered.skipped, &palette);
            gathered.specs
        }
        Err(error) => return super::messages::usage_error(&error.to_string(), &palette),
    };
    // A spec covers a rule it claims only if its run on the built-in implementation exercises
    // it: a claim the scenario never reaches tests nothing.
    let mut coverage: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut claimed_only: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut broken = 0;
    let mut builtin = Builtin::new();
    for (path, loaded) in &prepared {
        match loaded {
            Ok(spec) => {
                let exercised = spec.run(&mut builtin, RunMode::Check).exercised;
                for rule in spec.scenario.header().rule_ids() {
                    let into = if exercised.contains(&rule) {
                        &mut coverage
                    } else {
                        &mut claimed_only
                    };
                    into.entry(rule.to_owned()).or_default().push(path.clone());
                }
            }
            Err(_) => broken += 1,
        }
    }
    let mut out = sanitize::stdout();
    let mut uncovered = 0;
    // Specs of exercise folders alone (an author's `dlqspec rules exercises/NAME`): the rules
    // of those exercises, not the built-in contracts' too.
    let loaded: Vec<&'static dyn crate::contracts::contract::Contract> = prepared
        .iter()
        .filter_map(|(_, loaded)| loaded.as_ref().ok().map(|spec| spec.contract))
        .collect();
    let exercises_only = !loaded.is_empty()
        && loaded
            .iter()
            .all(|contract| !crate::contracts::registry::is_built_in(contract.name()));
    let listed = crate::contracts::all()
        .into_iter()
        .filter(|contract| !exercises_only || loaded.iter().any(|c| c.name() == contract.name()));
    for contract in listed {
        let _ = writeln!(
            out,
            "{} ({} rules): {}",
            paint(palette.bold, contract.name()),
            contract.rules().len(),
            contract.title()
        );
        for rule in contract.rules() {
            let specs = coverage.get(rule.id).map(Vec::as_slice).unwrap_or_default();
            let count = if specs.is_empty() {
                uncovered += 1;
                paint(palette.fail, "NOT COVERED")
            } else {
                paint(
                    palette.pass,
                    &format!(
                        "{} spec{}",
                        specs.len(),
                        if specs.len() == 1 { "" } else { "s" }
                    ),
                )
            };
            let _ = writeln!(out, "  {}  {count}", paint(palette.bold, rule.id));
            let _ = writeln!(out, "      {}", rule.statement);
            for spec in specs {
                let _ = writeln!(out, "      {}", paint(palette.dim, &sanitize::line(spec)));
            }
            for spec in claimed_only.get(rule.id).into_iter().flatten() {
                let _ = writeln!(
                    out,
                    "      {} {}",
                    paint(palette.dim, spec),
                    paint(
                        palette.skip,
                        "(claims it, never exercises it: `dlqspec lint` says more)"
                    )
                );
            }
        }
        let _ = writeln!(out);
    }
    if broken > 0 {
        let _ = writeln!(
            out,
            "{broken} spec file(s) could not be loaded; `dlqspec run` shows why"
        );
    }
    if uncovered > 0 {
        let _ = writeln!(out, "{uncovered} rule(s) covered by no spec");
        exit::FAILED
    } else {
        let _ = writeln!(out, "every rule is covered");
        exit::PASSED
    }
}
