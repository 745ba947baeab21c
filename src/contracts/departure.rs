//! Where a failing run first departs from the reference's run on the same scenario, for every
//! contract alike: each contract says how its runs part at a step, how a parting is worded
//! and which rule decides it (`Parts`), and this file finds the departure and assembles it.
//!
//! The frame: the reference is run on the scenario and must pass it (else the spec is what is
//! wrong, and nothing departs); the first step where the runs part is worded in the spec's own
//! values (`told`), with placeholders (`shape`), and without where it happened (`key`); each
//! classic mistake of the contract's catalogue is run as far as that step, and those parting
//! there alike are the known mistakes, those breaking the rule first.

use crate::contracts::builtin::Builtin;
use crate::contracts::contract::Contract;
use crate::model::cause::{Departure, Ids, told_and_shaped};
use crate::model::implementation::{Implementation, Raised};
use crate::model::mistake::Mistake;
use crate::model::outcome::Outcome;
use crate::model::rule::Rule;

/// A contract's side of a departure, for one scenario: how a run of it is kept, where two runs
/// part, and the parting in the contract's words and rules.
pub(crate) trait Parts {
    /// What a run of the scenario keeps for a departure to be found in.
    type Run;
    /// Where a run first parts from the reference's, and how.
    type Parting<'r>
    where
        Self::Run: 'r;

    /// The contract whose catalogue of classic mistakes is tried.
    fn contract(&self) -> &'static dyn Contract;

    /// The built-in reference, not yet begun.
    fn reference(&self) -> Builtin;

    /// Runs the scenario on `implementation`, begun already: its outcome and what it kept.
    /// `until` is the last step that matters, from 0 (a known mistake's run is compared up to
    /// the step where the run under test departs); `None`: every step, as the reference's.
    fn marked(
        &self,
        implementation: &mut dyn Implementation,
        until: Option<usize>,
    ) -> (Outcome, Self::Run);

    /// Whether the catalogue is tried on the scenario whose reference's run is `reference`:
    /// each mistake runs it once more.
    fn tries_mistakes(&self, reference: &Self::Run) -> bool {
        let _ = reference;
        true
    }

    /// The first step where `ours` parts from `reference`; `None` where they part nowhere the
    /// runs show.
    fn parting<'r>(
        &self,
        reference: &'r Self::Run,
        ours: &'r Self::Run,
    ) -> Option<Self::Parting<'r>>;

    /// The spec's step (from 0) where it parts, when it parts in one.
    fn step(&self, parting: &Self::Parting<'_>) -> Option<usize>;

    /// Whether two runs parting at the same step did the same there: `one` is a classic
    /// mistake's, `other` the run under test's.
    fn alike(
        &self,
        one: (&Self::Run, &Self::Parting<'_>),
        other: (&Self::Run, &Self::Parting<'_>),
    ) -> bool;

    /// The parting in one line, each value named by `ids`: with where it happens (`context`,
    /// the told line and its shape), or without (the key one mistake's failures share).
    fn words(&self, parting: &Self::Parting<'_>, ids: &mut Ids, context: bool) -> String;

    /// The rule that decides what the reference does where the runs part.
    fn rule(&self, parting: &Self::Parting<'_>) -> Option<&'static Rule>;

    /// The error the run under test raised where it parts, when it raised one.
    fn raised(&self, parting: &Self::Parting<'_>) -> Option<Raised>;
}

/// The reference's run of the scenario; `None` when it cannot begin or does not pass the
/// scenario (then it is the spec that is wrong).
pub(crate) fn reference<P: Parts>(parts: &P) -> Option<P::Run> {
    let mut reference = parts.reference();
    reference.begin_spec().ok()?;
    let (outcome, run) = parts.marked(&mut reference, None);
    matches!(outcome, Outcome::Passed).then_some(run)
}

/// The departure of `ours` from `reference` (the reference's run), and the parting it is made
/// from; `None` when they part nowhere.
pub(crate) fn departure<'r, P: Parts>(
    parts: &P,
    reference: &'r P::Run,
    ours: &'r P::Run,
) -> Option<(Departure, P::Parting<'r>)> {
    departure_trying(parts, reference, ours, true)
}

/// [`departure`] without the catalogue tried: the rule a failure is told under, at the cost
/// of the reference's run alone (for `strength`, which asks it of each known mistake).
pub(crate) fn departure_alone<'r, P: Parts>(
    parts: &P,
    reference: &'r P::Run,
    ours: &'r P::Run,
) -> Option<Departure> {
    departure_trying(parts, reference, ours, false).map(|(departure, _)| departure)
}

fn departure_trying<'r, P: Parts>(
    parts: &P,
    reference: &'r P::Run,
    ours: &'r P::Run,
    mistakes: bool,
) -> Option<(Departure, P::Parting<'r>)> {
    let parting = parts.parting(reference, ours)?;
    let (told, shape) = told_and_shaped(|ids| parts.words(&parting, ids, true));
    // What the failures of one mistake share wherever it shows: the same miss, whatever came
    // before it in the step.
    let key = parts.words(&parting, &mut Ids::shaped(), false);
    let rule = parts.rule(&parting);
    let mut mistakes = if mistakes {
        known_mistakes(parts, reference, (ours, &parting))
    } else {
        Vec::new()
    };
    // The mistakes breaking the rule decided here name the departure first.
    mistakes.sort_by_key(|m| rule.is_none_or(|rule| rule.id != m.rule.id));
    let departure = Departure {
        rule,
        told,
        shape,
        key,
        mistakes,
        raised: parts.raised(&parting),
        step: parts.step(&parting),
    };
    Some((departure, parting))
}

/// The classic mistakes of the catalogue whose built-in (begun on the spec as a fresh process
/// would be), run as far as the step where `ours` parts, parts from `reference` at that same
/// step, alike.
fn known_mistakes<P: Parts>(
    parts: &P,
    reference: &P::Run,
    (ours, parting): (&P::Run, &P::Parting<'_>),
) -> Vec<&'static Mistake> {
    if !parts.tries_mistakes(reference) {
        return Vec::new();
    }
    let contract = parts.contract();
    let step = parts.step(parting);
    contract
        .mistakes()
        .iter()
        .filter(|mistake| {
            let Some(mut mistaken) = contract.mistaken(mistake.id) else {
                return false;
            };
            if mistaken.begin_spec().is_err() {
                return false;
            }
            // Only as far as the step where ours parts: one parting earlier or later is
            // another mistake.
            let (_, theirs) = parts.marked(&mut mistaken, step);
            parts.parting(reference, &theirs).is_some_and(|departed| {
                parts.step(&departed) == step && parts.alike((&theirs, &departed), (ours, parting))
            })
        })
        .collect()
}

/// For the tests of a contract's departures: the departure of its built-in with `mistake`
/// switched on, on a spec of `text`, which that mistake fails with a difference.
#[cfg(test)]
pub(crate) fn diagnosed(contract: &dyn Contract, mistake: &str, text: &str) -> Option<Departure> {
    use crate::contracts::contract::RunMode;
    use crate::text::source::SourceFile;
    let scenario = contract
        .load(&SourceFile::from_text("t.yaml", text))
        .unwrap_or_else(|e| panic!("the spec loads: {e}"));
    let mut mistaken = contract.mistaken(mistake).expect("a mistake");
    mistaken.begin_spec().expect("begins");
    let (run, departure) = scenario.diagnose(&mut mistaken, RunMode::Check);
    assert!(
        matches!(run.outcome, Outcome::Mismatch(_)),
        "{:?}",
        run.outcome
    );
    departure
}

#[cfg(test)]
mod tests {
    use super::diagnosed;

    /// A permanent error dead-lettered, whose entry the spec gets wrong: 2 attempts, not 1.
    const WRONG: &str = "contract: dlq-consumer\nname: t\nmessages: [{id: a, body: x}]\nhandler: {a: [permanent: bad]}\nsteps:\n  - process: dead\nexpect:\n  in_flight: []\n  dlq: [{id: a, body: x, reason: permanent, error: 'PermanentError: bad', attempts: 2, first_attempt_at: 0, failed_at: 0}]\n";

    #[test]
    fn nothing_departs_from_a_reference_that_fails_the_spec() {
        let contract = crate::contracts::find("dlq-consumer").expect("built in");
        assert_eq!(diagnosed(contract, "put-without-ack", WRONG), None);
        // The same spec, right: the mistake departs, and is known.
        let right = WRONG.replace("attempts: 2", "attempts: 1");
        let departure = diagnosed(contract, "put-without-ack", &right).expect("a departure");
        let mistakes: Vec<&str> = departure.mistakes.iter().map(|m| m.id).collect();
        assert_eq!(mistakes, ["put-without-ack"]);
    }
}
