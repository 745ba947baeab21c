//! Checking an implementation against a dlq-consumer scenario, behind the `Scenario` trait the
//! runner knows: a run, on a broker's world too, a failing run's departure from the reference, and lint's smells.

use super::queue::rabbitmq::RabbitQueue;
use super::record::RecordKeeping;
use super::scenario::DlqScenario;
use crate::contracts::contract::{RunMode, Scenario, ScenarioRun, Smell, SpecHeader};
use crate::model::cause::Departure;
use crate::model::implementation::Implementation;
use crate::model::outcome::{DivergedBy, Divergence, Mismatch, Outcome};
use crate::model::world::WorldChoice;
use crate::text::source::Position;

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
            Outcome::Mismatch(_) => super::departure::find(self, record, implementation.naming()),
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
        let queue = match RabbitQueue::open(rabbit, self.budget()) {
            Ok(queue) => queue,
            Err(fault) => return ScenarioRun::ended(Outcome::WorldFault(fault)),
        };
        let (mut run, mut record) = self.play(
            implementation,
            mode,
            RecordKeeping::default(),
            Box::new(queue),
        );
        // The end of the spec reads the DLQ too: what the broker dead-lettered by itself
        // (dead-letter=broker) is compared with it, and both kept for the difference shown.
        record.world.compare_dead_letters();
        let dead_letters = record.world.dead_letters_shown();
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
        let dead_lettering = departures.iter().any(|d| d.property.is_dead_letter());
        if !failed && matches!(run.outcome, Outcome::Passed) && dead_lettering {
            // The spec holds on the broker's queue, but its DLQ is not what the broker's own
            // dead-lettering makes of it: that is the divergence, shown as the two DLQs. It
            // points at the spec's end, where the last comparison is made.
            if let Some((lesson, broker)) = dead_letters {
                let failure = Outcome::Mismatch(Mismatch {
                    step: "the broker's dead letters".to_owned(),
                    position: self.last_position(),
                    expected: lesson.into(),
                    actual: broker.into(),
                    note: Some(
                        "expected: the lesson's DLQ; actual: what RabbitMQ dead-lettered by itself, as its x-death headers say; both as they were when they first parted".to_owned(),
                    ),
                    step_as_written: None,
                    rule: None,
                });
                run.outcome = diverged(world, departures, failure);
            }
            return run;
        }
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
        run.outcome = diverged(world, departures, run.outcome);
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

impl DlqScenario {
    /// Where a difference found at the end of the run points: the final `expect`, else the
    /// last step, else the top of the file.
    fn last_position(&self) -> Position {
        self.expect
            .as_ref()
            .map(|(position, _)| *position)
            .or_else(|| self.steps.last().map(|(position, _)| *position))
            .unwrap_or(Position::START)
    }
}

/// The divergence of a spec whose run on `world` met `departures` and ended in `failure`:
/// each property once, with where it first showed.
fn diverged(
    world: &WorldChoice,
    departures: Vec<super::queue::BrokerDeparture>,
    failure: Outcome,
) -> Outcome {
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
    Outcome::Divergence(Box::new(Divergence {
        world: world.to_string(),
        properties,
        failure,
    }))
}
