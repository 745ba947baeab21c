//! Classic mistakes: realistic one-bug variants of a contract's reference implementation.
//!
//! Each contract keeps a catalogue of the mistakes students make, each breaking one rule, and
//! can run its own reference implementation with exactly one of them switched on. The tests use
//! the catalogue to show that the bundled suite catches every one of them in the *real*
//! reference code (not in a copy), and a suite's strength is how many of them it catches.

use crate::model::rule::Rule;

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

/// Names every plain JavaScript object answers to through its prototype: what a lookup with
/// `in` (`outcome in POLICY`, `id in entries`) finds in an object that holds none of them.
pub(crate) const OBJECT_PROPERTIES: &[&str] = &[
    "constructor",
    "toString",
    "toLocaleString",
    "valueOf",
    "hasOwnProperty",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "__proto__",
    "__defineGetter__",
    "__defineSetter__",
    "__lookupGetter__",
    "__lookupSetter__",
];

/// The mistake of `catalogue` with this id.
pub(crate) fn find(catalogue: &'static [Mistake], id: &str) -> Option<&'static Mistake> {
    catalogue.iter().find(|m| m.id == id)
}

/// Declares a contract's catalogue once: an enum `Slip` (one variant per mistake, for the
/// reference code to test with `is`), the `MISTAKES` slice, and `Slip::of` from an id.
#[macro_export]
macro_rules! mistakes {
    ($($variant:ident = $id:literal, $rule:expr, $what:literal;)+) => {
        /// A mistake of the catalogue, as the reference implementation switches it on.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum Slip {
            $($variant),+
        }

        /// The catalogue, in the order reports list it.
        pub(crate) const MISTAKES: &[$crate::model::mistake::Mistake] = &[
            $($crate::model::mistake::Mistake { id: $id, rule: &$rule, what: $what }),+
        ];

        impl Slip {
            #[cfg(test)]
            pub(crate) const ALL: &'static [Slip] = &[$(Slip::$variant),+];

            /// The mistake with this id.
            pub(crate) fn of(id: &str) -> Option<Slip> {
                match id {
                    $($id => Some(Slip::$variant),)+
                    _ => None,
                }
            }
        }
    };
}

/// For unit tests of a reference implementation's scenarios: `Ok` when `got` is `want`, else
/// what differs, so a scenario can say which check a mistake broke.
#[cfg(test)]
pub(crate) fn expect_eq<T: PartialEq + std::fmt::Debug>(
    what: &str,
    got: T,
    want: T,
) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: got {got:?}, want {want:?}"))
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn every_catalogue_has_unique_ids_and_a_mistake_for_every_rule() {
        for contract in crate::contracts::all() {
            let catalogue = contract.mistakes();
            let mut ids: Vec<_> = catalogue.iter().map(|m| m.id).collect();
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(ids.len(), catalogue.len(), "{}", contract.name());
            for rule in contract.rules() {
                assert!(
                    catalogue.iter().any(|m| m.rule.id == rule.id),
                    "no mistake breaks {}",
                    rule.id
                );
            }
            for mistake in catalogue {
                assert!(contract.mistaken(mistake.id).is_some(), "{}", mistake.id);
            }
            assert!(contract.mistaken("no-such-mistake").is_none());
        }
    }
}
