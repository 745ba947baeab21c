//! Classic mistakes: realistic one-bug variants of a contract's reference implementation.
//!
//! Each contract keeps a catalogue of the mistakes students make, each breaking one rule, and
//! can run its own reference implementation with exactly one of them switched on. The tests use
//! the catalogue to show that the bundled suite catches every one of them in the *real*
//! reference code (not in a copy), and a suite's strength is how many of them it catches.

use crate::rule::Rule;

/// One classic mistake of a contract's implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mistake {
    /// Stable id within the contract, e.g. `counts-in-memory`.
    pub id: &'static str,
    /// The rule the mistake breaks.
    pub rule: &'static Rule,
    /// The mistake as a student makes it, in one sentence.
    pub what: &'static str,
}

/// The mistake of `catalogue` with this id.
pub fn find(catalogue: &'static [Mistake], id: &str) -> Option<&'static Mistake> {
    catalogue.iter().find(|m| m.id == id)
}

/// Declares a contract's catalogue once: an enum `Slip` (one variant per mistake, for the
/// reference code to test with `is`), the `MISTAKES` slice, and `Slip::of` from an id.
#[macro_export]
macro_rules! mistakes {
    ($($variant:ident = $id:literal, $rule:expr, $what:literal;)+) => {
        /// A mistake of the catalogue, as the reference implementation switches it on.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Slip {
            $($variant),+
        }

        /// The catalogue, in the order reports list it.
        pub const MISTAKES: &[$crate::mistake::Mistake] = &[
            $($crate::mistake::Mistake { id: $id, rule: &$rule, what: $what }),+
        ];

        impl Slip {
            pub const ALL: &'static [Slip] = &[$(Slip::$variant),+];

            /// The mistake with this id.
            pub fn of(id: &str) -> Option<Slip> {
                match id {
                    $($id => Some(Slip::$variant),)+
                    _ => None,
                }
            }
        }
    };
}
