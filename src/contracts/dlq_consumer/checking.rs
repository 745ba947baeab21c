//! Checking an implementation against a dlq-consumer scenario, behind the `Scenario` trait the
//! runner knows: a run, on a broker's world too, a failing run's departure from the reference, and lint's smells.

use super::queue::rabbitmq::RabbitQueue;
use super::record::RecordKeeping;
use super::scenario::DlqScenario;
use crate::contracts::contract::{RunMode, Scenario, ScenarioRun, Smell, SpecHeader};
use crate::model::cause::Departure;
use crate::model::implementation::Implementation;
use crate::model::outcome::{DivergedBy, Divergence, Outcome};
use crate::model::world::WorldChoice;

impl Scenario for DlqScenario {
    fn header(&self) -> &SpecHeader {
        &self.header
    }

    fn run(&self, implementation: &mut dyn Implementation, mode: RunMode) -> ScenarioRun {
        // Nobody reads what each step did from a plain run: it is not kept.
        self.play(
            implementation,
            mode,
            RecordKeeping::default(),
            Box::default(),
        )
        .0
    }

    fn diagnose(
        &self,
        implementation: &mut dyn Implementation,
        mode: RunMode,
    ) -> (ScenarioRun, Option<Departure>) {
        // The reference departs from nothing: its run keeps no marks.
        if implementation.info().is_reference {
            return (self.run(implementation, mode), None);
        }
        let marks = RecordKeeping {
            marks: true,
            ..RecordKeeping::default()
        };
        let (run, record) = self.play(implementation, mode, marks, Box::default());
        let departure = match run.outcome {
            Outcome::Mismatch(_) => super::departure::find(self, &record, implementation.naming()),
            _ => None,
        };
        (run, departure)
    }

    fn run_in(
        &self,
        implementation: &mut dyn Implementation,
        mode: RunMode,
        world: &WorldChoice,
    ) -> ScenarioRun {
        let WorldChoice::RabbitMq(rabbit) = world else {
            return self.run(implementation, mode);
        };
        let queue = match RabbitQueue::open(rabbit) {
            Ok(queue) => queue,
            Err(fault) => return ScenarioRun::ended(Outcome::WorldFault(fault)),
        };
        let (mut run, record) = self.play(
            implementation,
            mode,
            RecordKeeping::default(),
            Box::new(queue),
        );
        let (fault, departures) = (
            record.world.queue().fault(),
            record.world.queue().departures(),
        );
        // The spec's queue is deleted here, before another spec claims a slot.
        drop(record);
        if let Some(fault) = fault {
            run.outcome = Outcome::WorldFault(fault);
            return run;
        }
        if mode == RunMode::Explain {
            for departure in &departures {
                run.timeline
                    .push(crate::contracts::timeline::TimelineLine::note(format!(
                        "broker: {} ({}: {})",
                        departure.detail, departure.property.id, departure.property.says
                    )));
            }
        }
        let failed = matches!(run.outcome, Outcome::Mismatch(_) | Outcome::Errored(_));
        if !failed || departures.is_empty() {
            return run;
        }
        // The broker's answers parted from the fake's before the spec failed: whether the
        // failure is the broker's is what the same implementation does on the fake.
        let on_fake = self
            .play(
                implementation,
                RunMode::Check,
                RecordKeeping::default(),
                Box::default(),
            )
            .0;
        if !matches!(on_fake.outcome, Outcome::Passed) {
            return run;
        }
        let mut properties: Vec<DivergedBy> = Vec::new();
        for departure in departures {
            if properties.iter().all(|p| p.id != departure.property.id) {
                properties.push(DivergedBy {
                    id: departure.property.id,
                    says: departure.property.says,
                    means: departure.property.means,
                    first: departure.detail,
                });
            }
        }
        run.outcome = Outcome::Divergence(Box::new(Divergence {
            world: world.to_string(),
            properties,
            failure: run.outcome,
        }));
        run
    }

    fn smells(
        &self,
        implementation: &mut dyn Implementation,
    ) -> Result<(Vec<Smell>, ScenarioRun), Outcome> {
        let (run, record) = self.execute(implementation, RunMode::Record);
        match run.outcome {
            Outcome::Passed | Outcome::Mismatch(_) => {
                let written = super::smells::WrittenScenario {
                    messages: &self.messages,
                    message_positions: &self.message_positions,
                    outcome_positions: &self.outcome_positions,
                    steps: &self.steps,
                };
                let smells = super::smells::find(&written, &run.checkpoints, &record);
                Ok((smells, run))
            }
            cut_short => Err(cut_short),
        }
    }
}
