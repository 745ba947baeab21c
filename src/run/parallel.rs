//! Running numbered pieces of work on worker threads while handing results on in order.
//!
//! Each worker owns one state (for the runner: its own implementation), so nothing is shared
//! but the next index to take. Results reach the caller's thread in index order whatever
//! order they finish in, which keeps every report identical for any number of jobs.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;

/// The most indices a worker takes at once.
const MAX_BATCH: usize = 32;

/// Runs `work(state, i)` for i in `0..count`, one worker thread per state, and calls
/// `emit(i, result)` on this thread in order of i. Once `stops(result)` holds for the result
/// of some i, no index after i is started (those before it all finish); those never started
/// are emitted as `None`.
pub(crate) fn run_in_order<S, R>(
    count: usize,
    mut states: Vec<S>,
    work: &(dyn Fn(&mut S, usize) -> R + Sync),
    stops: &(dyn Fn(&R) -> bool + Sync),
    emit: &mut dyn FnMut(usize, Option<R>),
) where
    S: Send,
    R: Send,
{
    if states.len() <= 1 || count <= 1 {
        // One worker: no threads, no channel.
        let Some(state) = states.first_mut() else {
            (0..count).for_each(|i| emit(i, None));
            return;
        };
        let mut stopped = false;
        for i in 0..count {
            if stopped {
                emit(i, None);
                continue;
            }
            let result = work(state, i);
            stopped = stops(&result);
            emit(i, Some(result));
        }
        return;
    }

    // Workers take indices a batch at a time and send each batch's results at once: a
    // hand-off per spec (a channel send and a wake-up of this thread) cost more than a small
    // spec takes to run. Batches stay small next to the work, so workers still finish together.
    let batch = (count / (states.len() * 16)).clamp(1, MAX_BATCH);
    let next = AtomicUsize::new(0);
    // The lowest index whose result stopped the run: work after it is not started, work
    // before it always finishes (with batches, it may not have started yet).
    let stop_at = AtomicUsize::new(usize::MAX);
    let (sender, receiver) = mpsc::channel::<Vec<(usize, R)>>();
    thread::scope(|scope| {
        for mut state in states.drain(..) {
            let sender = sender.clone();
            let (next, stop_at) = (&next, &stop_at);
            scope.spawn(move || {
                loop {
                    let first = next.fetch_add(batch, Ordering::SeqCst);
                    if first >= count || first > stop_at.load(Ordering::SeqCst) {
                        break;
                    }
                    let mut results = Vec::with_capacity(batch);
                    for i in first..(first + batch).min(count) {
                        if i > stop_at.load(Ordering::SeqCst) {
                            break;
                        }
                        let result = work(&mut state, i);
                        if stops(&result) {
                            stop_at.fetch_min(i, Ordering::SeqCst);
                        }
                        results.push((i, result));
                    }
                    if sender.send(results).is_err() {
                        break;
                    }
                }
            });
        }
        // The workers hold the only senders left, so the loop below ends when they do.
        drop(sender);
        let mut slots: Vec<Option<R>> = (0..count).map(|_| None).collect();
        let mut emitted = 0;
        for results in receiver {
            for (i, result) in results {
                slots[i] = Some(result);
            }
            while emitted < count && slots[emitted].is_some() {
                emit(emitted, slots[emitted].take());
                emitted += 1;
            }
        }
        for (i, slot) in slots.iter_mut().enumerate().skip(emitted) {
            emit(i, slot.take());
        }
    });
}

/// Runs `work(i)` for i in `0..count` on `jobs` worker threads (at least one), each taking the
/// next index not yet taken, one at a time: for work that takes seconds each (a submission's
/// grading), where a batch would leave the other workers idle. The results in order of i, once
/// all are done.
pub(crate) fn run_each<R: Send>(
    count: usize,
    jobs: usize,
    work: &(dyn Fn(usize) -> R + Sync),
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, R)> = thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs.max(1))
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        if i >= count {
                            return mine;
                        }
                        mine.push((i, work(i)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| {
                worker
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, result)| result).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn collect(
        count: usize,
        workers: usize,
        stop_at: Option<usize>,
    ) -> Vec<(usize, Option<usize>)> {
        let mut seen = Vec::new();
        run_in_order(
            count,
            (0..workers).collect(),
            &|_worker: &mut usize, i| {
                // Later items finish first, so ordering is really exercised.
                thread::sleep(Duration::from_millis(((count - i) % 4) as u64));
                i * 10
            },
            &|result| stop_at.is_some_and(|s| *result == s * 10),
            &mut |i, result| seen.push((i, result)),
        );
        seen
    }

    #[test]
    fn results_arrive_in_index_order_for_any_worker_count() {
        let expected: Vec<_> = (0..20).map(|i| (i, Some(i * 10))).collect();
        for workers in [1, 2, 3, 8] {
            assert_eq!(collect(20, workers, None), expected, "{workers} workers");
        }
    }

    #[test]
    fn batches_keep_the_order_and_a_stop_ends_every_batch() {
        let mut seen = Vec::new();
        let ran = AtomicUsize::new(0);
        run_in_order(
            5_000,
            vec![(); 2],
            &|_, i| {
                ran.fetch_add(1, Ordering::SeqCst);
                i
            },
            &|result| *result == 1_000,
            &mut |i, result| seen.push((i, result)),
        );
        let indices: Vec<usize> = seen.iter().map(|(i, _)| *i).collect();
        assert_eq!(indices, (0..5_000).collect::<Vec<_>>());
        assert!(seen[..=1_000].iter().all(|(i, r)| *r == Some(*i)));
        // Past the stop, at most what the other worker had already started runs.
        let ran = ran.load(Ordering::SeqCst);
        assert!(ran <= 1_002, "{ran} ran");
        assert_eq!(seen.iter().filter(|(_, r)| r.is_some()).count(), ran);
    }

    #[test]
    fn nothing_to_do_emits_nothing() {
        assert!(collect(0, 4, None).is_empty());
    }

    #[test]
    fn a_stopping_result_leaves_later_work_unstarted() {
        let seen = collect(10, 1, Some(3));
        assert_eq!(
            seen[..4],
            [(0, Some(0)), (1, Some(10)), (2, Some(20)), (3, Some(30))]
        );
        assert!(seen[4..].iter().all(|(_, r)| r.is_none()));

        // With several workers, items already started when the stop came still finish; how
        // many depends on scheduling. Every index is still emitted once and in order, and
        // nothing before the stopping item is left out.
        let seen = collect(50, 3, Some(3));
        let indices: Vec<usize> = seen.iter().map(|(i, _)| *i).collect();
        assert_eq!(indices, (0..50).collect::<Vec<_>>());
        assert!(seen[..4].iter().all(|(i, r)| *r == Some(i * 10)));
    }

    #[test]
    fn each_index_runs_once_and_the_results_come_back_in_order() {
        for jobs in [0, 1, 3, 40] {
            let ran = AtomicUsize::new(0);
            let results = run_each(20, jobs, &|i| {
                ran.fetch_add(1, Ordering::SeqCst);
                // Later items finish first, so ordering is really exercised.
                thread::sleep(Duration::from_millis(((20 - i) % 4) as u64));
                i * 10
            });
            assert_eq!(
                results,
                (0..20).map(|i| i * 10).collect::<Vec<_>>(),
                "{jobs}"
            );
            assert_eq!(ran.load(Ordering::SeqCst), 20);
        }
        assert!(run_each(0, 4, &|i| i).is_empty());
    }
}
