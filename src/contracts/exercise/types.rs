//! The types a student's editor needs for an exercise, derived from `exercise.yaml`: a
//! TypeScript declaration of its `given` module and of the class to write, or a Python stub
//! (`dlqspec types`), so that no one writes them by hand.

use serde_json::Value;

use super::definition::{ErrorBase, Exercise, GivenKind, Method};

/// The TypeScript type of an argument, from the first value explore draws for it (one the
/// method accepts), `unknown` when it draws none.
fn ts_type(draws: &[Value]) -> &'static str {
    match draws.first() {
        Some(Value::String(_)) => "string",
        Some(Value::Number(_)) => "number",
        Some(Value::Bool(_)) => "boolean",
        Some(Value::Array(_)) => "unknown[]",
        Some(Value::Object(_)) => "Record<string, unknown>",
        _ => "unknown",
    }
}

fn py_type(draws: &[Value]) -> &'static str {
    match draws.first() {
        Some(Value::String(_)) => "str",
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => "int",
        Some(Value::Number(_)) => "float",
        Some(Value::Bool(_)) => "bool",
        Some(Value::Array(_)) => "list",
        Some(Value::Object(_)) => "dict",
        _ => "object",
    }
}

fn camel(name: &str) -> String {
    crate::model::implementation::Naming::Camel
        .key(name)
        .into_owned()
}

fn part_methods_ts(kind: GivenKind) -> &'static str {
    match kind {
        GivenKind::Clock => "  now(): number;\n",
        GivenKind::Log => {
            "  apply(key: string, effect: unknown): void;\n  entries(): Record<string, unknown[]>;\n"
        }
        GivenKind::Callable => "",
    }
}

fn part_methods_py(kind: GivenKind) -> &'static str {
    match kind {
        // A float: a spec may move the clock by a fraction (`advance: 0.5`), and an int is
        // a float to a type checker, so whole ticks type-check too.
        GivenKind::Clock => "    def now(self) -> float: ...\n",
        GivenKind::Log => {
            "    def apply(self, key: str, effect: object) -> None: ...\n    def entries(self) -> dict: ...\n"
        }
        GivenKind::Callable => "    ...\n",
    }
}

fn ts_params(exercise: &Exercise, method: &Method) -> String {
    method
        .args
        .iter()
        .map(|arg| {
            let ty = match &arg.given {
                Some(part) => part_type_ts(exercise, part),
                None => ts_type(&arg.draw).to_owned(),
            };
            let optional = if method.optional.contains(&arg.name) {
                "?"
            } else {
                ""
            };
            format!("{}{optional}: {ty}", camel(&arg.name))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn part_type_ts(exercise: &Exercise, part: &str) -> String {
    match exercise.given.iter().find(|g| g.name == part) {
        Some(given) if given.kind == GivenKind::Callable => {
            "(...args: unknown[]) => unknown".to_owned()
        }
        Some(given) => given.class.clone().unwrap_or_else(|| "unknown".to_owned()),
        None => "unknown".to_owned(),
    }
}

/// The methods without arguments a solution's class has besides `methods`: its views and the
/// restart's snapshot, each once.
fn shape_extras(exercise: &Exercise) -> Vec<&str> {
    let mut extras: Vec<&str> = Vec::new();
    let snapshot = exercise.restart.as_ref().map(|(snapshot, _)| snapshot);
    for name in exercise.views.keys().chain(snapshot) {
        if !exercise.methods.contains_key(name) && !extras.contains(&name.as_str()) {
            extras.push(name);
        }
    }
    extras
}

/// `given.d.ts` for the exercise: its given parts and errors, and the shape of its class, all
/// in the ambient module `given`. The file is a script (nothing at its top level is exported),
/// so the module is a declaration TypeScript finds, not an augmentation of a module it cannot
/// find; a solution imports every name from `'given'`.
pub(crate) fn typescript(exercise: &Exercise) -> String {
    let mut inner = String::new();
    for part in &exercise.given {
        if let Some(class) = &part.class {
            inner.push_str(&format!("export class {class} {{\n"));
            inner.push_str(part_methods_ts(part.kind));
            inner.push_str("}\n");
        }
    }
    for (class, base) in &exercise.errors {
        let base = match base {
            ErrorBase::Error | ErrorBase::Crash => "Error",
        };
        inner.push_str(&format!("export class {class} extends {base} {{}}\n"));
    }
    inner.push_str(&format!(
        "\n/** What a solution's `{}` offers; `implements {}Shape` checks it. */\nexport interface {}Shape {{\n",
        exercise.class, exercise.class, exercise.class
    ));
    for (name, method) in &exercise.methods {
        inner.push_str(&format!(
            "  {}({}): unknown;\n",
            camel(name),
            ts_params(exercise, method)
        ));
    }
    // A view may be a method too (`state`), and so may the restart's snapshot: each is
    // declared once.
    for view in shape_extras(exercise) {
        inner.push_str(&format!("  {}(): unknown;\n", camel(view)));
    }
    inner.push_str("}\n");
    inner.push_str(&format!(
        "\n/** The constructor: `new {}({})`. */\nexport type {}Constructor = new ({}) => {}Shape;\n",
        exercise.class,
        ts_params(exercise, &exercise.create),
        exercise.class,
        ts_params(exercise, &exercise.create),
        exercise.class
    ));
    if let Some((_, from)) = &exercise.restart {
        inner.push_str(&format!(
            "\n/** What a `restart` calls: the class's static `{class}.{from}(snapshot, ...)`. */\nexport interface {class}Factory {{\n  {from}({}): {class}Shape;\n}}\n",
            factory_params(exercise, camel),
            class = exercise.class,
            from = camel(from),
        ));
    }
    let mut out = format!(
        "// Types of the exercise `{}`, made by `dlqspec types` from its exercise.yaml.\n\
         // Import from 'given', not './given': `import {{ {} }} from 'given';`, and the types\n\
         // only with `import type {{ {}Shape }} from 'given';`. This file declares the module\n\
         // `given`; tsc reads it where it is part of the program (a tsconfig.json beside it, or\n\
         // named: `tsc --strict solution.ts given.d.ts`); dlqspec supplies `given` at run time.\n\
         \ndeclare module 'given' {{\n",
        exercise.name,
        imported_values(exercise),
        exercise.class
    );
    for line in inner.lines() {
        if !line.is_empty() {
            out.push_str("  ");
        }
        out.push_str(line);
        out.push('\n');
    }
    out.push_str("}\n");
    out
}

/// What a solution imports from `given` as values, as the header's example names it: the
/// given parts' classes and the errors, else the class's shape as a type.
fn imported_values(exercise: &Exercise) -> String {
    let names: Vec<&str> = exercise
        .given
        .iter()
        .filter_map(|part| part.class.as_deref())
        .chain(exercise.errors.keys().map(String::as_str))
        .collect();
    match names.is_empty() {
        true => format!("type {}Constructor", exercise.class),
        false => names.join(", "),
    }
}

/// The parameters of the restart's factory: the snapshot, then the constructor's given parts
/// in order, each named through `spell`.
fn factory_params(exercise: &Exercise, spell: fn(&str) -> String) -> String {
    std::iter::once("snapshot: unknown".to_owned())
        .chain(
            exercise
                .create
                .args
                .iter()
                .filter_map(|arg| arg.given.as_ref().map(|part| (arg, part)))
                .map(|(arg, part)| {
                    format!("{}: {}", spell(&arg.name), part_type_ts(exercise, part))
                }),
        )
        .collect::<Vec<_>>()
        .join(", ")
}

/// `given.pyi` for the exercise: its given parts and errors, and a Protocol of its class. A
/// clock's time is whole ticks: it starts at 0 and hands out a JSON integer while every move
/// is whole (explore's always are), so `now()` is an `int`; the restart's factory is a static
/// method taking the snapshot, then the given parts.
pub(crate) fn python(exercise: &Exercise) -> String {
    let mut out = format!(
        "# Types of the exercise `{}`, made by `dlqspec types` from its exercise.yaml.\nfrom typing import Protocol\n\n",
        exercise.name
    );
    for part in &exercise.given {
        if let Some(class) = &part.class {
            out.push_str(&format!("class {class}:\n{}\n", part_methods_py(part.kind)));
        }
    }
    for (class, base) in &exercise.errors {
        let base = match base {
            ErrorBase::Error => "Exception",
            ErrorBase::Crash => "BaseException",
        };
        out.push_str(&format!("class {class}({base}): ...\n\n"));
    }
    let params = |method: &Method| {
        method
            .args
            .iter()
            .map(|arg| {
                let ty = match &arg.given {
                    Some(part) => exercise
                        .given
                        .iter()
                        .find(|g| &g.name == part)
                        .and_then(|g| g.class.clone())
                        .unwrap_or_else(|| "object".to_owned()),
                    None => py_type(&arg.draw).to_owned(),
                };
                format!(", {}: {ty}", arg.name)
            })
            .collect::<String>()
    };
    out.push_str(&format!("class {}Shape(Protocol):\n", exercise.class));
    out.push_str(&format!(
        "    def __init__(self{}) -> None: ...\n",
        params(&exercise.create)
    ));
    for (name, method) in &exercise.methods {
        out.push_str(&format!(
            "    def {name}(self{}) -> object: ...\n",
            params(method)
        ));
    }
    for view in shape_extras(exercise) {
        out.push_str(&format!("    def {view}(self) -> object: ...\n"));
    }
    if let Some((_, from)) = &exercise.restart {
        let given: String = exercise
            .create
            .args
            .iter()
            .filter_map(|arg| {
                let part = arg.given.as_ref()?;
                let class = exercise
                    .given
                    .iter()
                    .find(|g| &g.name == part)
                    .and_then(|g| g.class.clone())
                    .unwrap_or_else(|| "object".to_owned());
                Some(format!(", {}: {class}", arg.name))
            })
            .collect();
        out.push_str(&format!(
            "    @staticmethod\n    def {from}(snapshot: object{given}) -> \"{}Shape\": ...\n",
            exercise.class
        ));
    }
    out
}
