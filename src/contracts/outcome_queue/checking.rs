//! Checking an implementation against an outcome-queue scenario, behind the `Scenario` trait the
//! runner knows: a run, a failing run's departure from the reference, and lint's smells.

use super::scenario::QueueScenario;
use crate::contracts::contract::{RunMode, Scenario, ScenarioRun, Smell, SpecHeader};
use crate::model::cause::Departure;
use crate::model::implementation::Implementation;
use crate::model::outcome::Outcome;

impl Scenario for QueueScenario {
    fn header(&self) -> &SpecHeader {
        &self.header
    }

    fn run(&self, implementation: &mut dyn Implementation, mode: RunMode) -> ScenarioRun {
        self.execute(implementation, mode, false).0
    }

    fn diagnose(
        &self,
        implementation: &mut dyn Implementation,
        mode: RunMode,
    ) -> (ScenarioRun, Option<Departure>) {
        // The reference departs from nothing: its run keeps no calls.
        if implementation.info().is_reference {
            return (self.run(implementation, mode), None);
        }
        let (run, calls) = self.marked(implementation, mode, false);
        let departure = match run.outcome {
            Outcome::Mismatch(_) => super::departure::find(self, &calls),
            _ => None,
        };
        (run, departure)
    }

    fn smells(
        &self,
        implementation: &mut dyn Implementation,
    ) -> Result<(Vec<Smell>, ScenarioRun), Outcome> {
        let (run, facts) = self.execute(implementation, RunMode::Record, true);
        match run.outcome {
            Outcome::Passed | Outcome::Mismatch(_) => {
                let smells = super::smells::find(&self.steps, &run.checkpoints, &facts);
                Ok((smells, run))
            }
            cut_short => Err(cut_short),
        }
    }
}
