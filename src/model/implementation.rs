//! The interface every implementation under test offers the runner, built-in or external.
//!
//! A contract's scenario drives an implementation through `create` and `call`; while a call
//! runs, the implementation acts on the scenario's world only through `WorldHost`. The
//! built-in implementation and an external process therefore make the same calls on the same
//! world, and every one of them is seen, ordered and can be faulted.

use serde_json::Value;

/// An error raised by an implementation, or by the world into an implementation, and how it
/// is classified: a format of the protocol.
pub use crate::formats::protocol::Raised;
pub(crate) use crate::formats::protocol::RaisedKind;

/// The note under a difference where `null` was expected and `undefined` returned: the diff
/// shows the two words, this says which one the contract wants and how to write it.
pub(crate) const UNDEFINED_IS_NOT_NULL: &str = "JavaScript's undefined is not null: the contract pins null here, so write `return null;`, not a bare `return;`";

/// What an implementation answered to `create` or `call`.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Returned(Value),
    /// Returned the language's "no value" that is not its null: JavaScript's `undefined`
    /// (a bare `return;`, or none at all). Where a contract pins `null` this is a wrong
    /// answer; where it pins nothing (a constructor, `submit`) it is as good as any.
    Undefined,
    Raised(Raised),
    /// The implementation does not provide this contract (e.g. no class of the name the contract declares).
    Skipped(String),
}

/// Why an implementation could not be asked at all: it broke, hung or spoke garbage.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ImplError {
    pub(crate) kind: ImplErrorKind,
    pub(crate) message: String,
    /// The grader's option that would have allowed more (`--timeout SECS allows more`): told
    /// to whoever runs dlqspec, never in a result a student reads (Gradescope, Exercism, a
    /// grade's pages and reports), where it is no step the student can take.
    pub(crate) hint: Option<&'static str>,
}

/// Why an implementation could not be asked at all, in a word: a format of the run record.
pub(crate) use crate::formats::record::ImplErrorKind;

impl ImplError {
    /// The message is bounded (`truncate::MAX_SHOWN_BYTES`): parts of it come from the
    /// implementation, which may send megabytes.
    pub(crate) fn new(kind: ImplErrorKind, message: impl Into<String>) -> Self {
        ImplError {
            kind,
            message: crate::text::truncate::text(
                message.into(),
                crate::text::truncate::MAX_SHOWN_BYTES,
            ),
            hint: None,
        }
    }

    /// The error, with the grader's option that would have allowed more.
    pub(crate) fn with_hint(self, hint: &'static str) -> Self {
        ImplError {
            hint: Some(hint),
            ..self
        }
    }

    /// Whether it is a request that never returned: the implementation hung (an infinite loop,
    /// a wait on something that never comes), and the specs after it are not run.
    pub(crate) fn hung(&self) -> bool {
        self.kind == ImplErrorKind::Timeout
    }
}

/// The world as an implementation sees it during a call: named calls with JSON arguments.
pub trait WorldHost {
    fn world_call(&mut self, call: &str, args: &[Value]) -> Result<Value, Raised>;

    /// The world itself, for an implementation in this process that knows its type to call it
    /// without encoding every call in JSON. Such calls must go through the same checks, faults
    /// and journal as `world_call`; `None` (the default) leaves JSON as the only way in.
    fn in_process(&mut self) -> Option<&mut dyn std::any::Any> {
        None
    }
}

/// A world call an implementation is expected to make next, with the world's answer to it:
/// foreseen by dlqspec, so that an implementation which makes exactly that call need not wait
/// for the answer (docs/protocol.md, Foresight). The world still performs the call when it
/// arrives, in order; a foresight only saves the wait, and one not followed costs nothing.
#[derive(Debug, Clone, PartialEq)]
pub struct Foreseen {
    pub(crate) call: String,
    /// As the implementation's language spells them (`Naming`), as its call will carry them.
    pub(crate) args: Vec<Value>,
    pub(crate) answer: Result<Value, Raised>,
}

/// A world for contracts that have none: any call is refused.
pub(crate) struct NoWorld;

impl WorldHost for NoWorld {
    fn world_call(&mut self, call: &str, _args: &[Value]) -> Result<Value, Raised> {
        Err(Raised::error(
            "MisuseError",
            format!("this contract has no world; `{call}` is not available"),
        ))
    }
}

/// How an implementation's language spells the contract's multi-word keys: a format of the
/// protocol.
pub use crate::formats::protocol::Naming;

/// Who is answering: shown in reports and the conformance matrix; a format of the run record.
pub use crate::formats::record::ImplInfo;

/// What an external implementation provides, from its handshake.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Offer {
    /// The contracts it provides, by name.
    pub(crate) contracts: Vec<String>,
    /// The names its solution file defines at top level (classes, functions), when it says.
    pub(crate) defines: Option<Vec<String>>,
}

impl Offer {
    /// What to say when it provides none of `wanted` (each contract's name and the class it
    /// expects): `it has no class `Gadget` (gadget) and no class ...; it defines: GadGet (did you
    /// mean `Gadget`?), helper`. A defined name near an expected class (a typo, or the
    /// same letters in another case) gets the did-you-mean, and that class is named first.
    pub(crate) fn none_of(&self, wanted: &[(&str, &str)]) -> String {
        let defines = self.defines.as_deref().unwrap_or_default();
        // Each defined name near an expected class, with that class.
        let mut near: Vec<(&str, &str)> = Vec::new();
        for (_, class) in wanted {
            let close = crate::text::suggest::nearest(class, defines)
                .or_else(|| {
                    defines
                        .iter()
                        .find(|name| name.eq_ignore_ascii_case(class))
                        .map(String::as_str)
                })
                .filter(|name| !near.iter().any(|(taken, _)| taken == name));
            if let Some(name) = close {
                near.push((name, class));
            }
        }
        let mut ordered: Vec<&(&str, &str)> = wanted.iter().collect();
        ordered.sort_by_key(|(_, class)| !near.iter().any(|(_, c)| c == class));
        let missing: Vec<String> = ordered
            .iter()
            .map(|(name, class)| format!("`{class}` ({name})"))
            .collect();
        let told = match &self.defines {
            None => String::new(),
            Some(names) if names.is_empty() => "; it defines nothing at top level".to_owned(),
            Some(names) => {
                let names: Vec<String> = names
                    .iter()
                    .map(|name| match near.iter().find(|(n, _)| n == name) {
                        Some((_, class)) => format!("{name} (did you mean `{class}`?)"),
                        None => name.clone(),
                    })
                    .collect();
                format!("; it defines: {}", names.join(", "))
            }
        };
        format!("it has no class {}{told}", missing.join(" and no class "))
    }
}

/// An implementation under test. One value lives for a whole run and serves spec after spec.
pub trait Implementation {
    fn info(&self) -> ImplInfo;

    /// How the implementation spells multi-word keys of messages and entries.
    fn naming(&self) -> Naming {
        Naming::Snake
    }

    /// Starts what takes long to start (an external implementation's process) without
    /// waiting for it to be ready, so that what the run does meanwhile (loading its specs)
    /// overlaps the interpreter's start; the first call that needs it waits for it.
    fn begin_start(&mut self) {}

    /// What the implementation says it provides, before any spec runs; `None` when it provides
    /// whatever it is asked for (an in-process implementation). Starts an external one.
    fn offer(&mut self) -> Result<Option<Offer>, ImplError> {
        Ok(None)
    }

    /// Called before each spec; an implementation that died is restarted here.
    fn begin_spec(&mut self) -> Result<(), ImplError> {
        Ok(())
    }

    /// Makes a fresh instance of the contract's subject, dropping any earlier one.
    fn create(
        &mut self,
        contract: &str,
        args: &Value,
        world: &mut dyn WorldHost,
    ) -> Result<Reply, ImplError>;

    /// Calls a method of the current instance.
    fn call(
        &mut self,
        method: &str,
        args: &[Value],
        world: &mut dyn WorldHost,
    ) -> Result<Reply, ImplError>;

    /// Whether the implementation can use what the world foresees (`foresee`): asking the
    /// world, on a copy of it, what it answers costs that copy, paid only when it is used.
    fn foresees(&self) -> bool {
        false
    }

    /// The world calls the next `call` is foreseen to make, in order, with their answers; an
    /// implementation that cannot use them ignores them.
    fn foresee(&mut self, _calls: Vec<Foreseen>) {}

    /// What the implementation printed and raised during the spec that just ran, if it
    /// reports that (external implementations do, through their shims).
    fn take_output(&mut self) -> Option<crate::model::captured::Captured> {
        None
    }

    /// Called after a spec whose details the student may not see (a hidden spec): ends
    /// whatever would carry what that spec showed into later ones (an external
    /// implementation's process, its stderr, its memory), so no visible spec's report can
    /// hold any of it.
    fn forget_spec(&mut self) {}
}

/// Makes implementations for a run: one per worker, since each serves one spec at a time.
pub trait ImplementationFactory: Sync {
    fn create(&self) -> Box<dyn Implementation + Send>;
}

impl<F> ImplementationFactory for F
where
    F: Fn() -> Box<dyn Implementation + Send> + Sync,
{
    fn create(&self) -> Box<dyn Implementation + Send> {
        self()
    }
}

#[cfg(test)]
mod tests {
    use super::Offer;

    fn offer(defines: Option<&[&str]>) -> Offer {
        Offer {
            contracts: Vec::new(),
            defines: defines.map(|names| names.iter().map(|n| (*n).to_owned()).collect()),
        }
    }

    const WANTED: &[(&str, &str)] = &[("widget-store", "WidgetStore"), ("gadget", "Gadget")];

    #[test]
    fn a_name_near_an_expected_class_is_asked_about_and_its_class_comes_first() {
        assert_eq!(
            offer(Some(&["checkKey", "GadGet"])).none_of(WANTED),
            "it has no class `Gadget` (gadget) and no class `WidgetStore` (widget-store); \
             it defines: checkKey, GadGet (did you mean `Gadget`?)"
        );
        // The same letters in another case are near however long the name.
        assert_eq!(
            offer(Some(&["WIDGETSTORE"])).none_of(&WANTED[..1]),
            "it has no class `WidgetStore` (widget-store); it defines: WIDGETSTORE (did you mean `WidgetStore`?)"
        );
    }

    #[test]
    fn names_far_from_every_class_are_listed_as_they_are() {
        assert_eq!(
            offer(Some(&["Helper"])).none_of(WANTED),
            "it has no class `WidgetStore` (widget-store) and no class `Gadget` (gadget); it defines: Helper"
        );
        assert_eq!(
            offer(Some(&[])).none_of(&WANTED[1..]),
            "it has no class `Gadget` (gadget); it defines nothing at top level"
        );
        assert_eq!(
            offer(None).none_of(&WANTED[1..]),
            "it has no class `Gadget` (gadget)"
        );
    }
}
