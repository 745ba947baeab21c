//! The adversarial suite: hostile submissions against `run`, `grade` and the report formats,
//! one test per attack class of docs/security.md, each asserting on the verdict, the files
//! and the processes left. Honest solutions beside them must keep their true verdicts.

mod bounds;
mod sandbox;
mod verdict;
mod warm;
