//! Benchmark: `dlqspec explore` on the built-in implementation against itself.
//!
//! Each case is generated, blessed on the built-in (the expectations filled in), and judged by
//! running the blessed spec on the built-in again, so this is the cost of exploring with no
//! language start-up or protocol in the way: the ceiling any `--impl` run can reach. Crash
//! schedules are measured on one bundled spec the same way. The seed is fixed, so every run
//! explores the same cases and the numbers compare across commits. Run with
//! `cargo bench --bench explore`.

// clippy.toml's rules hold the library; benchmarks set their cases up by writing files, starting
// programs and printing what they measured or found.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_macros,
    clippy::disallowed_types,
    reason = "benchmarks: files, processes and prints set cases up and tell what was found"
)]

mod support;

use dlqspec::contracts::builtin::Builtin;
use dlqspec::contracts::contract::RunMode;
use dlqspec::explore::crashes::{self, CrashPlan};
use dlqspec::explore::{self, ExploreSettings, Quiet};

use support::best_of;

/// The seed every round explores: the same cases each time.
const SEED: u64 = 1;
const CASES: u64 = 200;
const ROUNDS: usize = 5;

fn main() {
    println!("explore on the built-in against itself: seed {SEED}, best of {ROUNDS}");
    // The exercise folders (outcome-queue's among the specs, the example exercises), whose
    // reference is a program: explore runs it against itself as the built-in's case.
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let broken =
        dlqspec::commands::exercises::register_found(&[root.join("specs"), root.join("exercises")]);
    assert!(broken.is_empty(), "{broken:?}");
    for contract in dlqspec::contracts::all() {
        let settings = ExploreSettings {
            seed: SEED,
            cases: CASES,
            time: None,
            contracts: vec![contract],
            shrink_tries: 0,
            tag: None,
        };
        let mut ran = 0;
        let best = best_of(ROUNDS, || {
            let summary = explore::search(&settings, &mut Builtin::new(), &mut Quiet);
            // The built-in never diverges from itself; a finding here is a bug of explore.
            assert!(summary.finding.is_none(), "{:?}", summary.finding);
            ran = summary.total_cases();
        });
        println!(
            "  {:<14} {ran} cases  {:>8.1} ms  {:>7.0} cases/s  {:>6.0} µs per case",
            contract.name(),
            best.as_secs_f64() * 1e3,
            ran as f64 / best.as_secs_f64(),
            best.as_secs_f64() * 1e6 / ran.max(1) as f64
        );
    }

    let spec_path = root.join("specs/dlq-consumer/replay-given-ids-in-their-order.yaml");
    let loaded = dlqspec::load::loader::load_path(&spec_path).expect("the bundled spec loads");
    let reference = loaded.run(&mut Builtin::new(), RunMode::Check);
    assert!(
        matches!(reference.outcome, dlqspec::model::outcome::Outcome::Passed),
        "the bundled spec passes on the built-in"
    );
    let explorer = loaded.contract.explorer().expect("dlq-consumer explores");
    let schedules = explorer
        .crash_schedules(&loaded.file)
        .expect("dlq-consumer has crash schedules");
    let plan = CrashPlan {
        contract: loaded.contract,
        spec: "replay-given-ids-in-their-order.yaml",
        max_crashes: 2,
        shrink_tries: 0,
    };
    let mut ran = 0;
    let best = best_of(ROUNDS, || {
        let summary = crashes::explore(&plan, schedules.as_ref(), &mut Builtin::new(), &mut Quiet);
        assert!(summary.violation.is_none(), "{:?}", summary.violation);
        ran = summary.schedules;
    });
    println!(
        "  crash schedules of {} (up to 2 crashes): {ran} schedules  {:>8.1} ms  {:>7.0} schedules/s",
        plan.spec,
        best.as_secs_f64() * 1e3,
        ran as f64 / best.as_secs_f64()
    );
}
