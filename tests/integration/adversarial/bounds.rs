//! Attacks on dlqspec's bounds: replies it must not block on, diffs it must not hold whole.
