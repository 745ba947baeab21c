//! Rules: the stable ids and one-line statements a contract's specs check.

/// One rule of a contract. The catalogue of each contract lives beside its reference
/// implementation, in one `RULES` slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// Stable id, `contract/slug`, used in specs, reports and known-failure lists.
    pub id: &'static str,
    /// What the rule demands, in one line.
    pub(crate) statement: &'static str,
}
