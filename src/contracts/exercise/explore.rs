//! Exploring an exercise (`dlqspec explore`): random call sequences drawn from the argument
//! values `exercise.yaml` gives each method (`draw:`), each call's answer and every state view
//! after it left for blessing to fill in from the reference, and the ways to shrink them.
//!
//! A case is typed steps (JSON values of the spec's own form, the vocabulary being the
//! exercise's), written out as YAML by `generate::writer` only when a spec is made of it.

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::definition::{Exercise, Method};
use crate::generate::Explorer;
use crate::generate::case::Case;
use crate::generate::crashes::Schedules;
use crate::generate::rng::Rng;
use crate::generate::variants;
use crate::generate::writer::Block;
use crate::text::source::SourceFile;

/// An exercise's explorer.
#[derive(Debug)]
pub(crate) struct ExerciseExplorer {
    pub(crate) exercise: &'static Exercise,
}

impl Explorer for ExerciseExplorer {
    fn generate(&self, rng: &mut Rng) -> Box<dyn Case> {
        Box::new(generate(self.exercise, rng))
    }

    fn crash_schedules(&self, _file: &SourceFile) -> Result<Box<dyn Schedules>, String> {
        Err(format!(
            "{} is an exercise folder: its crashes are the spec's own `restart` steps, and explore draws those among the others",
            self.exercise.name
        ))
    }
}

/// A spec of an exercise after its header: its steps, one a line.
#[derive(Serialize)]
struct ExerciseSpec<'a> {
    steps: Block<&'a [Value]>,
}

/// A drawn scenario: its steps as a spec writes them.
#[derive(Debug, Clone)]
pub(crate) struct ExerciseCase {
    exercise: &'static Exercise,
    steps: Vec<Value>,
}

/// Cases of one exercise are the same when their steps are.
impl PartialEq for ExerciseCase {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.exercise, other.exercise) && self.steps == other.steps
    }
}

/// A call of `method` with drawn arguments, its answer a placeholder blessing rewrites; `None`
/// when an argument has nothing to draw from.
fn call(
    method: &Method,
    rng: &mut Rng,
    answer: bool,
    used: &mut Used,
    pools: &Pools,
) -> Option<Value> {
    let mut body = Map::new();
    let mut taken = Vec::new();
    for arg in method.written_args() {
        if arg.draw.is_empty() {
            if method.optional.contains(&arg.name) {
                continue;
            }
            return None;
        }
        let value = if arg.unique {
            // A value callers promise never to pass twice is drawn once per case; with none
            // left, the call is not drawn.
            let fresh: Vec<&Value> = arg
                .draw
                .iter()
                .filter(|v| {
                    !used
                        .iter()
                        .any(|(m, a, x)| *m == method.name && *a == arg.name && x == *v)
                })
                .collect();
            if fresh.is_empty() {
                return None;
            }
            let value = (*rng.pick(&fresh)).clone();
            taken.push((method.name.clone(), arg.name.clone(), value.clone()));
            value
        } else {
            // A narrow case draws from its few values where the argument has them.
            let narrow: Vec<&Value> = pools
                .get(&arg.name)
                .map(|pool| arg.draw.iter().filter(|v| pool.contains(v)).collect())
                .unwrap_or_default();
            if narrow.is_empty() {
                rng.pick(&arg.draw).clone()
            } else {
                (*rng.pick(&narrow)).clone()
            }
        };
        body.insert(arg.name.clone(), value);
    }
    used.extend(taken);
    // A placeholder blessing fills in; none where what the method returns is left free.
    if answer && !method.free {
        body.insert("returns".into(), Value::Null);
    }
    Some(json!({ method.name.clone(): body }))
}

/// The values of `unique` arguments a case has drawn: method, argument, value.
type Used = Vec<(String, String, Value)>;

/// A narrow case's values for each argument name its methods share: one or two of all they
/// draw, so that `finish(job_id, worker)` meets the job and worker `submit` and `take` used.
type Pools = std::collections::HashMap<String, Vec<Value>>;

/// Half the cases are narrow (`Pools` for every argument its methods draw but `unique` ones),
/// the other half draw from every value. Which half, and the pools, come from a fork of the
/// case's generator, so a wide case is the case it was before narrow ones were drawn.
fn pools(exercise: &Exercise, rng: &Rng) -> Pools {
    let mut side = rng.fork(1);
    let mut pools = Pools::new();
    if side.below(2) == 0 {
        return pools;
    }
    let mut all: indexmap::IndexMap<&str, Vec<&Value>> = indexmap::IndexMap::new();
    for arg in exercise
        .methods
        .values()
        .flat_map(|m| m.written_args())
        .filter(|arg| !arg.unique)
    {
        let values = all.entry(arg.name.as_str()).or_default();
        for value in &arg.draw {
            if !values.contains(&value) {
                values.push(value);
            }
        }
    }
    for (name, mut values) in all {
        let size = side.between(1, values.len().min(2) as u64) as usize;
        let mut pool = Vec::new();
        while pool.len() < size && !values.is_empty() {
            pool.push(values.remove(side.below(values.len())).clone());
        }
        pools.insert(name.to_owned(), pool);
    }
    pools
}

/// Whether `step` calls a method with a `unique` argument.
fn has_unique(exercise: &Exercise, step: &Value) -> bool {
    step.as_object()
        .and_then(|fields| fields.keys().next())
        .and_then(|name| exercise.methods.get(name))
        .is_some_and(|method| method.args.iter().any(|arg| arg.unique))
}

/// The clock's moves a case draws from: all the clock's, or in a narrow case one or two of
/// them (from a fork, as the pools), so that a take, fail, wait cycle repeats with the same
/// wait and a retry's delay can outgrow it.
fn advances(exercise: &Exercise, pools: &Pools, rng: &Rng) -> Vec<u64> {
    let all = exercise.clock().map_or_else(
        || super::definition::ADVANCES.to_vec(),
        |c| c.advance.clone(),
    );
    if pools.is_empty() || all.len() < 2 {
        return all;
    }
    let mut side = rng.fork(4);
    let mut left = all;
    let mut narrow = Vec::new();
    for _ in 0..side.between(1, 2) {
        narrow.push(left.remove(side.below(left.len())));
    }
    narrow
}

/// Two to four rounds, each the same calls: one of each of `methods` (none with a `unique`
/// argument, whose value would come twice), in the order the exercise lists them (submit,
/// take, finish: a job's life), then a clock move where the exercise has a clock. The wait is
/// one of the case's `advances`, the same each round (a delay that doubles with each attempt
/// outgrows it) or, in half the cases, the clock's least move of at least twice the last (it
/// keeps up with the delay, so a budget of attempts runs out).
fn rounds(
    exercise: &Exercise,
    methods: &[&Method],
    advances: &[u64],
    side: &mut Rng,
    used: &mut Used,
    pools: &Pools,
) -> Vec<Value> {
    let calls: Vec<Value> = methods
        .iter()
        .filter(|method| !method.args.iter().any(|arg| arg.unique))
        .filter_map(|method| call(method, side, true, used, pools))
        .collect();
    let moves = exercise.clock().map(|clock| {
        let mut all = clock.advance.clone();
        all.sort_unstable();
        all
    });
    let doubling = side.below(2) == 0;
    let mut wait = moves.as_ref().map(|_| *side.pick(advances));
    let mut steps = Vec::new();
    for _ in 0..side.between(2, 4) {
        steps.extend(calls.iter().cloned());
        if let (Some(now), Some(all)) = (wait, &moves) {
            steps.push(json!({ "advance": now }));
            if doubling {
                wait = Some(
                    all.iter()
                        .copied()
                        .find(|m| *m >= 2 * now)
                        .unwrap_or(all[all.len() - 1]),
                );
            }
        }
    }
    steps
}

/// The placeholder `expect` of every view and record, which blessing fills in.
fn expect(exercise: &Exercise) -> Value {
    if exercise.inline_expect() {
        return json!({ "expect": {} });
    }
    let names: Map<String, Value> = exercise
        .views
        .keys()
        .cloned()
        .chain(exercise.recorded_parts().map(|g| g.name.clone()))
        .map(|name| (name, json!({})))
        .collect();
    json!({ "expect": names })
}

/// Draws one case: a `create` with drawn arguments, then calls, view changes, clock moves and
/// restarts, each followed by an `expect` of every view.
pub(crate) fn generate(exercise: &'static Exercise, rng: &mut Rng) -> ExerciseCase {
    let mut steps = Vec::new();
    // A constructor's answer is blessed too: a drawn argument it refuses becomes `raises`, and
    // a second `create` then makes the instance the steps after it use (one it refuses too
    // makes a case the reference cannot run, which is skipped).
    let mut used = Used::new();
    let pools = pools(exercise, rng);
    steps.push(
        call(&exercise.create, rng, true, &mut used, &Pools::new())
            .unwrap_or_else(|| json!({ "create": {} })),
    );
    if exercise.create.written_args().next().is_some() {
        // The first value each argument draws is one the constructor accepts, and so is
        // each of an argument's `draw` values where it lists the refused ones apart (drawn
        // from a fork, so exercises that list none keep their cases).
        let mut side = rng.fork(2);
        let first: Map<String, Value> = exercise
            .create
            .written_args()
            .filter_map(|arg| {
                let value = match &arg.accepted {
                    Some(accepted) if !accepted.is_empty() => side.pick(accepted).clone(),
                    _ => arg.draw.first()?.clone(),
                };
                Some((arg.name.clone(), value))
            })
            .collect();
        steps.push(json!({ "create": first }));
    }
    let methods: Vec<&Method> = exercise
        .methods
        .values()
        .filter(|m| {
            m.written_args()
                .all(|a| !a.draw.is_empty() || m.optional.contains(&a.name))
        })
        .collect();
    let deep_views: Vec<&String> = exercise
        .views
        .iter()
        .filter(|(_, view)| view.deep_copy && !view.draws.is_empty())
        .map(|(view, _)| view)
        .collect();
    let expecting = !exercise.views.is_empty() || exercise.recorded_parts().next().is_some();
    let advances = advances(exercise, &pools, rng);
    // Half the narrow cases are rounds (decided from a fork, as the pools): up to four steps
    // drawn as any case's, then the same round of calls again and again.
    let mut round_side = rng.fork(5);
    let round = !pools.is_empty() && round_side.below(2) == 0;
    let count = if round {
        round_side.between(0, 4)
    } else {
        rng.between(3, 16)
    };
    let mut drawn = Vec::new();
    for _ in 0..count {
        let step = match rng.weighted(&[
            (if methods.is_empty() { 0 } else { 80 }, 0),
            (if deep_views.is_empty() { 0 } else { 6 }, 1),
            (if exercise.clock().is_some() { 10 } else { 0 }, 2),
            (4, 3),
        ]) {
            0 => {
                let method: &Method = rng.pick::<&Method>(&methods);
                call(method, rng, true, &mut used, &pools)
            }
            1 => {
                let view: &String = rng.pick::<&String>(&deep_views);
                let changes = rng.pick(&exercise.views[view].draws).clone();
                Some(json!({ format!("mutate_{view}"): changes }))
            }
            2 => Some(json!({ "advance": rng.pick(&advances) })),
            _ => Some(json!("restart")),
        };
        drawn.extend(step);
    }
    // A narrow case of no rounds may repeat its last steps, two to four of them, up to three
    // times more: take, fail, wait, again is how a budget runs out and a retry's delay grows.
    // A call with a `unique` argument is not repeated (its value would come twice).
    let mut side = rng.fork(3);
    if round {
        drawn.extend(rounds(
            exercise,
            &methods,
            &advances,
            &mut round_side,
            &mut used,
            &pools,
        ));
    } else if !pools.is_empty() && side.below(2) == 0 {
        let block = (side.between(2, 4) as usize).min(drawn.len());
        let repeated: Vec<Value> = drawn[drawn.len() - block..]
            .iter()
            .filter(|step| !has_unique(exercise, step))
            .cloned()
            .collect();
        for _ in 0..side.between(1, 3) {
            drawn.extend(repeated.iter().cloned());
        }
    }
    for step in drawn {
        steps.push(step);
        if expecting {
            steps.push(expect(exercise));
        }
    }
    ExerciseCase { exercise, steps }
}

impl ExerciseCase {
    fn with_steps(&self, steps: Vec<Value>) -> ExerciseCase {
        ExerciseCase {
            exercise: self.exercise,
            steps,
        }
    }

    fn is_expect(step: &Value) -> bool {
        step.get("expect").is_some()
    }

    fn is_create(step: &Value) -> bool {
        step.get("create").is_some()
    }

    /// How far a clock move step moves the clock.
    fn advance_of(step: &Value) -> Option<u64> {
        step.get("advance")?.as_u64()
    }
}

impl Case for ExerciseCase {
    fn body(&self) -> Value {
        serde_json::to_value(ExerciseSpec {
            steps: Block(&self.steps),
        })
        .unwrap_or_default()
    }

    fn steps(&self) -> usize {
        self.steps.len()
    }

    fn shrinks(&self) -> Vec<Box<dyn Case>> {
        // The first step makes the instance: it stays, unless another `create` follows it
        // (the first was refused, and the second makes the instance).
        let mut smaller: Vec<ExerciseCase> = Vec::new();
        if self.steps.get(1).is_some_and(Self::is_create) {
            smaller.push(self.with_steps(self.steps[1..].to_vec()));
        }
        smaller.extend(
            variants::chunks_removed(&self.steps[1..])
                .into_iter()
                .map(|rest| {
                    let mut steps = vec![self.steps[0].clone()];
                    steps.extend(rest);
                    self.with_steps(steps)
                }),
        );
        // Two clock moves in a row, as one.
        for at in 1..self.steps.len() {
            if let (Some(one), Some(other)) = (
                Self::advance_of(&self.steps[at - 1]),
                Self::advance_of(&self.steps[at]),
            ) {
                let mut steps = self.steps.clone();
                steps[at - 1] = json!({ "advance": one.saturating_add(other) });
                steps.remove(at);
                smaller.push(self.with_steps(steps));
            }
        }
        variants::boxed_except(smaller, self)
    }

    fn focused(&self, index: usize, keys: &[String]) -> Box<dyn Case> {
        let steps = self
            .steps
            .iter()
            .take(index + 1)
            .enumerate()
            .filter(|(at, step)| *at == index || !Self::is_expect(step))
            .map(|(at, step)| match step.get("expect") {
                // The expectation that fails, cut to the views and records that differ.
                Some(Value::Object(expected)) if at == index && !keys.is_empty() => {
                    let kept: Map<String, Value> = expected
                        .iter()
                        .filter(|(name, _)| keys.contains(name))
                        .map(|(name, value)| (name.clone(), value.clone()))
                        .collect();
                    if kept.is_empty() {
                        step.clone()
                    } else {
                        json!({ "expect": kept })
                    }
                }
                _ => step.clone(),
            })
            .collect();
        Box::new(self.with_steps(steps))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every exercise folder of the repository (`specs/*/`, `exercises/*/`), read.
    fn bundled() -> Vec<&'static Exercise> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut found = Vec::new();
        for parent in ["specs", "exercises"] {
            let Ok(entries) = std::fs::read_dir(root.join(parent)) else {
                continue;
            };
            for entry in entries {
                let folder = entry.expect("entry").path();
                if folder
                    .join(super::super::definition::EXERCISE_FILE)
                    .is_file()
                {
                    let exercise = super::super::definition::read(&folder).expect("it reads");
                    found.push(&*Box::leak(Box::new(exercise)));
                }
            }
        }
        assert!(found.len() >= 2, "the bundled exercises");
        found
    }

    fn cases(exercise: &'static Exercise) -> impl Iterator<Item = ExerciseCase> {
        (0..300).map(move |n| generate(exercise, &mut Rng::for_case(1, exercise.name, n)))
    }

    #[test]
    fn a_unique_argument_is_drawn_once_per_case() {
        for exercise in bundled() {
            for (name, method) in &exercise.methods {
                for arg in method.args.iter().filter(|arg| arg.unique) {
                    for case in cases(exercise) {
                        let drawn: Vec<String> = case
                            .steps
                            .iter()
                            .filter_map(|step| step.get(name)?.get(&arg.name))
                            .map(Value::to_string)
                            .collect();
                        let distinct: std::collections::BTreeSet<&String> = drawn.iter().collect();
                        assert_eq!(distinct.len(), drawn.len(), "{:?}", case.steps);
                    }
                }
            }
        }
    }

    #[test]
    fn the_instance_is_made_from_accepted_values_and_varies_where_refused_ones_are_listed() {
        for exercise in bundled() {
            for arg in exercise.create.written_args() {
                let Some(accepted) = &arg.accepted else {
                    continue;
                };
                let mut seen = std::collections::BTreeSet::new();
                for case in cases(exercise) {
                    let value = case.steps[1]["create"][&arg.name].clone();
                    assert!(accepted.contains(&value), "{}: {value}", arg.name);
                    seen.insert(value.to_string());
                }
                assert_eq!(seen.len(), accepted.len(), "{}: {seen:?}", arg.name);
            }
        }
    }

    /// The calls and clock moves of a case, its `expect` steps left out.
    fn moves(case: &ExerciseCase) -> Vec<&Value> {
        case.steps
            .iter()
            .filter(|step| !ExerciseCase::is_expect(step))
            .collect()
    }

    /// The method a step calls, `advance` for a clock move.
    fn name(step: &Value) -> &str {
        step.as_object()
            .and_then(|fields| fields.keys().next())
            .map_or("", String::as_str)
    }

    #[test]
    fn rounds_repeat_one_call_of_each_method_in_order_then_a_wait_that_stays_or_doubles() {
        for exercise in bundled() {
            let round: Vec<&str> = exercise
                .methods
                .values()
                .filter(|m| !m.args.iter().any(|arg| arg.unique))
                .map(|m| m.name.as_str())
                .chain(exercise.clock().map(|_| "advance"))
                .collect();
            let mut clock: Vec<u64> = exercise
                .clock()
                .map(|c| c.advance.clone())
                .unwrap_or_default();
            clock.sort_unstable();
            let (mut rounds, mut doubled) = (0, 0);
            for case in cases(exercise) {
                let steps = moves(&case);
                // A case ends in rounds when its last steps are the same round at least twice.
                let tail =
                    |at: usize| &steps[steps.len() - (at + 1) * round.len()..][..round.len()];
                let same = |a: &[&Value], b: &[&Value]| {
                    a.iter().zip(b).all(|(x, y)| name(x) == "advance" || x == y)
                };
                let ends_in = |at: usize| {
                    steps.len() >= (at + 1) * round.len()
                        && tail(at).iter().map(|s| name(s)).eq(round.iter().copied())
                };
                if !ends_in(0) || !ends_in(1) || !same(tail(0), tail(1)) {
                    continue;
                }
                rounds += 1;
                let count = (0..)
                    .take_while(|at| ends_in(*at) && same(tail(0), tail(*at)))
                    .count();
                let waits: Vec<u64> = (0..count)
                    .rev()
                    .flat_map(|at| tail(at).iter().filter_map(|s| s.get("advance")?.as_u64()))
                    .collect();
                let stays = waits.windows(2).all(|w| w[0] == w[1]);
                let doubles = waits.windows(2).all(|w| {
                    let least = clock.iter().copied().find(|m| *m >= 2 * w[0]);
                    w[1] == least.unwrap_or(clock[clock.len() - 1])
                });
                assert!(stays || doubles, "{}: {waits:?}", exercise.name);
                doubled += usize::from(!stays);
            }
            // A quarter of the cases are rounds.
            assert!(
                rounds >= 40,
                "{}: {rounds} of 300 cases end in rounds",
                exercise.name
            );
            if exercise.clock().is_some() {
                assert!(
                    doubled >= 10,
                    "{}: {doubled} cases double their wait",
                    exercise.name
                );
            }
        }
    }

    /// The lease queue, with clock moves and a constructor that refuses values.
    fn lease_queue() -> &'static Exercise {
        bundled()
            .into_iter()
            .find(|e| e.clock().is_some() && e.restart.is_some())
            .expect("the capstone is bundled")
    }

    /// A case's steps, read back from the body it writes (a block list).
    fn steps_of(case: &dyn Case) -> Vec<Value> {
        let steps = &case.body()["steps"];
        let list = steps.as_object().and_then(|marked| marked.values().next());
        list.and_then(Value::as_array).cloned().unwrap_or_default()
    }

    #[test]
    fn a_refused_first_create_may_go_and_two_clock_moves_become_one() {
        let exercise = lease_queue();
        let case = ExerciseCase {
            exercise,
            steps: vec![
                json!({"create": {"budget": 0, "returns": null}}),
                json!({"create": {"budget": 2}}),
                json!({"advance": 3}),
                json!({"advance": 5}),
                json!({"expect": {"state": {}}}),
            ],
        };
        let shrinks: Vec<Vec<Value>> = case.shrinks().iter().map(|c| steps_of(&**c)).collect();
        assert!(shrinks.contains(&case.steps[1..].to_vec()), "{shrinks:?}");
        let merged = vec![
            case.steps[0].clone(),
            case.steps[1].clone(),
            json!({"advance": 8}),
            case.steps[4].clone(),
        ];
        assert!(shrinks.contains(&merged), "{shrinks:?}");
        // A lone create stays first in every variant.
        let alone = case.with_steps(case.steps[1..].to_vec());
        assert!(
            alone
                .shrinks()
                .iter()
                .all(|c| steps_of(&**c)[0] == case.steps[1]),
            "the instance's create stays"
        );
    }

    #[test]
    fn a_focused_case_expects_only_the_views_that_differ() {
        let exercise = lease_queue();
        let expect = json!({"expect": {"state": {}, "policy": {}, "effects": {}}});
        let case = ExerciseCase {
            exercise,
            steps: vec![
                json!({"create": {"budget": 2}}),
                expect.clone(),
                json!({"advance": 3}),
                expect.clone(),
                json!({"advance": 3}),
            ],
        };
        let focused = case.focused(3, &["state".to_owned()]);
        assert_eq!(
            steps_of(&*focused),
            vec![
                case.steps[0].clone(),
                case.steps[2].clone(),
                json!({"expect": {"state": {}}}),
            ]
        );
        // Keys it does not hold leave the expectation whole.
        let whole = case.focused(3, &["elsewhere".to_owned()]);
        assert_eq!(steps_of(&*whole)[2], expect);
    }
}
