//! Attacks on the verdict: swapped reports, vanishing classes, scores that lie by omission.
