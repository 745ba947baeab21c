//! The conformance matrix: every rule against every implementation, from the specs' outcomes.
//!
//! Each implementation runs the same specs; a cell counts, for one rule and one
//! implementation, how many of the specs covering the rule passed. `report::matrix` renders it.

use std::time::Duration;

use crate::external::launch::Target;
use crate::model::implementation::ImplInfo;
use crate::model::outcome::Outcome;
use crate::model::rule::Rule;
use crate::model::world::WorldChoice;
use crate::run::events::{NOT_RUN_WORLD, SpecReport, Summary};
use crate::run::exit;
use crate::run::runner::{self, Prepared};

/// One implementation's results on one world, in the order of the specs.
#[derive(Debug, Clone)]
pub(crate) struct Column {
    /// The implementation, its label naming the world too when the matrix has several, or a
    /// broker's: `builtin on rabbitmq classic`; the world alone in a table of worlds.
    pub(crate) implementation: ImplInfo,
    pub(crate) reports: Vec<SpecReport>,
    pub(crate) summary: Summary,
}

/// One rule and how each implementation fares on the specs covering it.
#[derive(Debug, Clone)]
pub(crate) struct RuleRow {
    pub(crate) rule: Rule,
    /// One per column.
    pub(crate) cells: Vec<Cell>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Cell {
    pub(crate) passed: usize,
    pub(crate) failed: usize,
    pub(crate) total: usize,
    /// The first covering spec that failed, to link to its details.
    pub(crate) first_failure: Option<usize>,
    /// Covering specs that pass on the fake world and fail on this column's broker.
    pub(crate) diverged: usize,
    /// The first of them, to link to its details.
    pub(crate) first_divergence: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CellStatus {
    /// No spec covers the rule.
    Uncovered,
    Passed,
    /// Some covering spec failed (mismatch, error, stale listing).
    Failed,
    /// Every covering spec was skipped (the implementation does not provide the contract).
    Skipped,
    /// Those that ran passed; some were skipped.
    Partial,
    /// None failed; some diverged on the broker (they pass on the fake world).
    Diverged,
}

impl Cell {
    pub(crate) fn status(&self) -> CellStatus {
        if self.total == 0 {
            CellStatus::Uncovered
        } else if self.failed > 0 {
            CellStatus::Failed
        } else if self.diverged > 0 {
            CellStatus::Diverged
        } else if self.passed == self.total {
            CellStatus::Passed
        } else if self.passed == 0 {
            CellStatus::Skipped
        } else {
            CellStatus::Partial
        }
    }

    /// `2/3`, `skipped`, or `-` for a rule no spec covers.
    pub(crate) fn text(&self) -> String {
        match self.status() {
            CellStatus::Uncovered => "-".to_owned(),
            CellStatus::Skipped => "skipped".to_owned(),
            _ if self.diverged > 0 => format!(
                "{}/{}, {} diverge{}",
                self.passed,
                self.total,
                self.diverged,
                if self.diverged == 1 { "s" } else { "" }
            ),
            _ => format!("{}/{}", self.passed, self.total),
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Matrix {
    pub(crate) columns: Vec<Column>,
    pub(crate) rows: Vec<RuleRow>,
    pub(crate) duration: Duration,
    /// What its columns are: implementations (on the fake world), worlds (one implementation
    /// on each `--world`), or both.
    pub(crate) compares: Compares,
}

/// What a matrix's columns compare.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Compares {
    #[default]
    Implementations,
    Worlds,
    /// Several implementations, each on several worlds.
    Pairs,
}

impl Compares {
    /// `3 implementations`, `2 worlds`, `4 implementations on worlds`: what the columns are.
    pub(crate) fn count(self, n: usize) -> String {
        match self {
            Compares::Implementations => crate::text::listing::count(n, "implementation"),
            Compares::Worlds => crate::text::listing::count(n, "world"),
            Compares::Pairs => format!(
                "{} on worlds",
                crate::text::listing::count(n, "implementation")
            ),
        }
    }
}

impl Matrix {
    /// Tallies the columns (each holding reports for the same specs, in the same order).
    pub(crate) fn build(columns: Vec<Column>, duration: Duration) -> Matrix {
        let specs = spec_list(&columns);
        let mut rows = Vec::new();
        for contract in crate::contracts::all() {
            let of_contract = specs.iter().any(|s| s.contract == Some(contract.name()));
            if !of_contract {
                continue;
            }
            for rule in contract.rules() {
                let covering: Vec<usize> = specs
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.rules.iter().any(|r| r == rule.id))
                    .map(|(i, _)| i)
                    .collect();
                let cells = columns
                    .iter()
                    .map(|column| tally(&covering, &column.reports))
                    .collect();
                rows.push(RuleRow { rule: *rule, cells });
            }
        }
        Matrix {
            columns,
            rows,
            duration,
            compares: Compares::default(),
        }
    }

    /// The specs in the order they ran (paths, names, rules).
    pub(crate) fn specs(&self) -> &[SpecReport] {
        spec_list(&self.columns)
    }

    /// Specs that could not be loaded: broken for every implementation alike.
    pub(crate) fn spec_errors(&self) -> Vec<&SpecReport> {
        self.specs()
            .iter()
            .filter(|s| matches!(s.outcome, Outcome::SpecError(_)))
            .collect()
    }

    /// For each column, the specs that diverged on its broker, in order.
    pub(crate) fn divergences(&self, column: usize) -> Vec<&SpecReport> {
        self.columns.get(column).map_or_else(Vec::new, |c| {
            c.reports
                .iter()
                .filter(|r| matches!(r.outcome, Outcome::Divergence(_)))
                .collect()
        })
    }

    /// What broke a broker under a column, if one did.
    pub(crate) fn world_faults(&self) -> Vec<&str> {
        self.columns
            .iter()
            .filter_map(|c| c.summary.world_fault.as_deref())
            .collect()
    }

    /// For each column, the specs it failed (spec errors aside), in order.
    pub(crate) fn failures(&self, column: usize) -> Vec<&SpecReport> {
        self.columns.get(column).map_or_else(Vec::new, |c| {
            c.reports
                .iter()
                .filter(|r| r.outcome.is_failure() && !matches!(r.outcome, Outcome::SpecError(_)))
                .collect()
        })
    }

    /// 0 every implementation passed every spec it ran; 1 some failed; 2 some spec is broken.
    pub(crate) fn exit_code(&self) -> i32 {
        if !self.spec_errors().is_empty() || !self.world_faults().is_empty() {
            exit::SPEC_OR_USAGE_ERROR
        } else if self.columns.iter().any(|c| c.summary.failed() > 0) {
            exit::FAILED
        } else {
            exit::PASSED
        }
    }
}

/// Every column ran the same specs; a column left empty by a crash does not count.
fn spec_list(columns: &[Column]) -> &[SpecReport] {
    columns
        .iter()
        .map(|c| c.reports.as_slice())
        .max_by_key(|r| r.len())
        .unwrap_or_default()
}

fn tally(covering: &[usize], reports: &[SpecReport]) -> Cell {
    let mut cell = Cell::default();
    for &index in covering {
        let Some(report) = reports.get(index) else {
            continue;
        };
        cell.total += 1;
        match &report.outcome {
            Outcome::Passed => cell.passed += 1,
            Outcome::Skipped(_) => {}
            Outcome::Divergence(_) => {
                cell.diverged += 1;
                cell.first_divergence.get_or_insert(index);
            }
            // A failure known in advance still is not conformance.
            _ => {
                cell.failed += 1;
                cell.first_failure.get_or_insert(index);
            }
        }
    }
    cell
}

/// Runs the specs against each target on each world (the fake when `worlds` is empty), one
/// thread per column (external ones are processes of their own), and tallies the matrix. The
/// built-in implementation should come first.
pub(crate) fn run(
    prepared: &[Prepared],
    targets: &[Target],
    worlds: &[WorldChoice],
    timeout: Duration,
) -> Matrix {
    let started = std::time::Instant::now();
    let fake = [WorldChoice::Fake];
    let worlds = if worlds.is_empty() { &fake[..] } else { worlds };
    let pairs: Vec<(&Target, &WorldChoice)> = targets
        .iter()
        .flat_map(|target| worlds.iter().map(move |world| (target, world)))
        .collect();
    // A column is named by its world when the worlds are what is compared.
    let label = |target: &Target, world: &WorldChoice, label: String| match (targets.len(), worlds)
    {
        (1, [_, _, ..]) => world.short(),
        (_, [WorldChoice::Fake]) => label,
        _ => format!("{} on {}", target.label(), world.short()),
    };
    let columns = std::thread::scope(|scope| {
        let handles: Vec<_> = pairs
            .iter()
            .map(|(target, world)| scope.spawn(move || column(prepared, target, world, timeout)))
            .collect();
        handles
            .into_iter()
            .zip(&pairs)
            .map(|(handle, (target, world))| {
                let labelled = |mut column: Column| {
                    column.implementation.label =
                        label(target, world, column.implementation.label.clone());
                    column
                };
                // A panic is a dlqspec bug; the column still shows, marked, and fails the run.
                handle.join().map(labelled).unwrap_or_else(|_| Column {
                    implementation: ImplInfo {
                        label: format!("{} (dlqspec crashed)", target.label()),
                        language: "unknown".into(),
                        is_reference: false,
                    },
                    reports: Vec::new(),
                    summary: Summary {
                        errored: prepared.len().max(1),
                        ..Summary::default()
                    },
                })
            })
            .collect::<Vec<Column>>()
    });
    let mut matrix = Matrix::build(columns, started.elapsed());
    matrix.compares = match (targets.len(), worlds) {
        (_, [WorldChoice::Fake]) => Compares::Implementations,
        (1, _) => Compares::Worlds,
        _ => Compares::Pairs,
    };
    matrix
}

fn column(
    prepared: &[Prepared],
    target: &Target,
    world: &WorldChoice,
    timeout: Duration,
) -> Column {
    let started = std::time::Instant::now();
    let mut implementation = target.instantiate(timeout);
    let mut summary = Summary::default();
    let reports: Vec<SpecReport> = prepared
        .iter()
        .map(|spec| {
            // Once the broker broke, no spec of the column runs on it.
            let mut report = match &summary.world_fault {
                Some(_) => runner::not_run(spec, NOT_RUN_WORLD),
                None => runner::run_one_in(spec, implementation.as_mut(), world),
            };
            if let Outcome::WorldFault(fault) = &report.outcome {
                summary.world_fault = Some(fault.clone());
                report.outcome = Outcome::Skipped(NOT_RUN_WORLD.to_owned());
            }
            summary.add(&report.outcome);
            report
        })
        .collect();
    summary.duration = started.elapsed();
    Column {
        implementation: implementation.info(),
        reports,
        summary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::implementation::{ImplError, ImplErrorKind};

    fn report(rules: &[&str], outcome: Outcome) -> SpecReport {
        SpecReport {
            path: "s.yaml".into(),
            name: Some("s".into()),
            contract: Some("dlq-consumer"),
            rules: rules.iter().map(|r| r.to_string()).collect(),
            outcome,
            duration: Duration::ZERO,
            output: None,
            grading: Default::default(),
            source: None,
            departure: None,
            cause: None,
        }
    }

    #[test]
    fn cells_count_the_specs_covering_their_rule() {
        let reports = vec![
            report(&["dlq-consumer/poison"], Outcome::Passed),
            report(
                &["dlq-consumer/poison", "dlq-consumer/success"],
                Outcome::Errored(ImplError::new(ImplErrorKind::Timeout, "hung")),
            ),
            report(&["dlq-consumer/success"], Outcome::Skipped("no".into())),
        ];
        let cell = tally(&[0, 1], &reports);
        assert_eq!(
            cell,
            Cell {
                passed: 1,
                failed: 1,
                total: 2,
                first_failure: Some(1),
                ..Cell::default()
            }
        );
        assert_eq!(cell.status(), CellStatus::Failed);
        assert_eq!(cell.text(), "1/2");
        assert_eq!(tally(&[0], &reports).status(), CellStatus::Passed);
        assert_eq!(tally(&[2], &reports).text(), "skipped");
        assert_eq!(tally(&[0, 2], &reports).status(), CellStatus::Partial);
        assert_eq!(tally(&[], &reports).text(), "-");
    }

    #[test]
    fn rows_follow_the_catalogue_of_each_contract_with_specs() {
        let column = Column {
            implementation: ImplInfo {
                label: "builtin".into(),
                language: "rust".into(),
                is_reference: true,
            },
            reports: vec![report(&["dlq-consumer/poison"], Outcome::Passed)],
            summary: Summary::default(),
        };
        let matrix = Matrix::build(vec![column], Duration::ZERO);
        let contract = crate::contracts::find("dlq-consumer").unwrap();
        assert_eq!(matrix.rows.len(), contract.rules().len());
        let poison = matrix
            .rows
            .iter()
            .find(|r| r.rule.id == "dlq-consumer/poison")
            .unwrap();
        assert_eq!(poison.cells[0].total, 1);
        assert_eq!(poison.cells[0].status(), CellStatus::Passed);
        assert_eq!(matrix.exit_code(), exit::PASSED);
    }
}
