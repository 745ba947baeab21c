//! The JSON-lines protocol between dlqspec and an external implementation (version 1): its
//! messages, whose serde types are `dlqspec-formats`' (`formats::protocol`), encoded and
//! decoded as dlqspec reads them (every key known, bounded in size and depth).
//!
//! docs/protocol.md is the description for shim writers; the formats crate's `schema/` holds
//! JSON Schemas of the same messages. Every message is one JSON object on one line; every one
//! carries `seq`.

use serde::Deserialize;
use serde_json::Value;

pub(crate) use crate::formats::protocol::{
    FEATURES, ForeseenCall, ImplementationInfo, Incoming, IncomingBody, Outgoing, PROTOCOL_VERSION,
    Request, Returned,
};
use crate::model::implementation::Foreseen;

impl From<Foreseen> for ForeseenCall {
    fn from(foreseen: Foreseen) -> Self {
        let (value, raise) = match foreseen.answer {
            Ok(value) => (Some(value), None),
            Err(raised) => (None, Some(raised)),
        };
        ForeseenCall {
            call: foreseen.call,
            args: foreseen.args,
            value,
            raise,
        }
    }
}

/// Why a line from the implementation is not a message dlqspec can use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DecodeError {
    /// Not JSON at all: typically a stray print on stdout.
    NotJson(String),
    /// Not UTF-8: the byte offset of the first byte that is not.
    NotUtf8(usize),
    /// JSON nested deeper than serde_json reads (128 levels).
    TooDeep,
    /// More JSON values in one message than it may carry (`MAX_MESSAGE_VALUES`).
    TooLarge,
    /// JSON, but not a protocol message.
    NotAMessage(String),
    /// A `hello` in a protocol version other than ours.
    WrongVersion(Value),
}

/// Encodes a message as one line, `\n` included.
pub(crate) fn encode(message: &Outgoing) -> String {
    // Serializing these types cannot fail: every key is a string and every number finite.
    let mut line = serde_json::to_string(message).unwrap_or_default();
    line.push('\n');
    line
}

/// A world call as shims write it, read straight from the line. Every world call of a spec
/// is a round trip, and the general path (a `Value` first, then the tagged and flattened
/// `Incoming` out of it, which buffers every field once more) cost more per call than the
/// rest of dlqspec's side of the trip.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WorldLine<'a> {
    seq: u64,
    #[serde(rename = "type", borrow)]
    kind: &'a str,
    n: u64,
    call: String,
    args: Vec<Value>,
    #[serde(default)]
    foreseen: bool,
}

impl WorldLine<'_> {
    /// The world call `text` is, when it is one in the usual shape; `None` sends the line down
    /// the general path, which alone decides what any other line means or what is wrong with
    /// it (a key given twice, a field of another type, an escaped `type`...).
    fn read(text: &str) -> Option<Incoming> {
        // serde reads a struct from a JSON array too; a message is an object.
        let object = text
            .trim_start_matches([' ', '\t', '\n', '\r'])
            .starts_with('{');
        if !object || !text.contains("\"world\"") {
            return None;
        }
        let line: WorldLine = serde_json::from_str(text).ok()?;
        (line.kind == "world").then(|| Incoming {
            seq: line.seq,
            body: IncomingBody::World {
                n: line.n,
                call: line.call,
                args: line.args,
                foreseen: line.foreseen,
            },
        })
    }
}

/// The most JSON values one message may carry: each number, string, `true`, `false`, `null`,
/// list and mapping is one. A value kept costs dlqspec about 32 bytes whatever its text
/// (`0,` is two), so a line of 16 MiB of zeros would be 8 million values, a quarter of a
/// gigabyte before anything is compared or rendered; checked on the text, before any is
/// kept. No protocol message needs more: a spec's largest, a list of DLQ entries, holds tens.
pub(crate) const MAX_MESSAGE_VALUES: usize = 100_000;

/// The deepest one message may nest lists and mappings (serde_json reads no deeper).
pub(crate) const MAX_MESSAGE_DEPTH: usize = 128;

/// Whether the JSON text `line` carries at most `MAX_MESSAGE_VALUES` values, nested at most
/// `MAX_MESSAGE_DEPTH` deep, read without building any. What is not JSON passes, for the
/// parser to name; the count is of value separators and openings outside strings, which is
/// each value once (a mapping's keys are not counted).
fn within_bounds(line: &[u8]) -> Result<(), DecodeError> {
    if !line.trim_ascii_start().starts_with(b"{") && !line.trim_ascii_start().starts_with(b"[") {
        return Ok(());
    }
    let mut values = 1usize;
    let mut depth = 0usize;
    let mut at = 0;
    while at < line.len() {
        match line[at] {
            b'"' => {
                at += 1;
                while at < line.len() && line[at] != b'"' {
                    at += if line[at] == b'\\' { 2 } else { 1 };
                }
            }
            b'[' | b'{' => {
                depth += 1;
                values += 1;
                if depth > MAX_MESSAGE_DEPTH {
                    return Err(DecodeError::TooDeep);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' => values += 1,
            _ => {}
        }
        if values > MAX_MESSAGE_VALUES {
            return Err(DecodeError::TooLarge);
        }
        at += 1;
    }
    Ok(())
}

/// Decodes one line (without its line ending) written by an implementation.
pub(crate) fn decode(line: &[u8]) -> Result<Incoming, DecodeError> {
    let text =
        std::str::from_utf8(line).map_err(|error| DecodeError::NotUtf8(error.valid_up_to()))?;
    within_bounds(line)?;
    if let Some(world) = WorldLine::read(text) {
        return Ok(world);
    }
    let value: Value = serde_json::from_str(text).map_err(|error| {
        if error.to_string().starts_with("recursion limit exceeded") {
            DecodeError::TooDeep
        } else {
            DecodeError::NotJson(error.to_string())
        }
    })?;
    if !value.is_object() {
        return Err(DecodeError::NotAMessage(
            "a message is a JSON object".to_owned(),
        ));
    }
    // A hello of another version may have another shape: name the version, not a missing field.
    if value.get("type").and_then(Value::as_str) == Some("hello") {
        match value.get("protocol") {
            Some(version) if version.as_u64() == Some(PROTOCOL_VERSION) => {}
            Some(version) => return Err(DecodeError::WrongVersion(version.clone())),
            None => {}
        }
    }
    unknown_key(&value).map_or(Ok(()), |why| Err(DecodeError::NotAMessage(why)))?;
    Incoming::deserialize(value).map_err(|error| DecodeError::NotAMessage(error.to_string()))
}

/// The keys each reply type may carry, as reply.schema.json lists them (its
/// `additionalProperties: false`); a test holds the two equal.
pub(crate) const REPLY_KEYS: &[(&str, &[&str])] = &[
    (
        "hello",
        &[
            "seq",
            "type",
            "protocol",
            "implementation",
            "contracts",
            "defines",
            "naming",
            "features",
        ],
    ),
    ("return", &["seq", "type", "value", "undefined"]),
    ("raised", &["seq", "type", "error", "traceback"]),
    ("skipped", &["seq", "type", "reason"]),
    (
        "errored",
        &[
            "seq",
            "type",
            "message",
            "file",
            "line",
            "details",
            "traceback",
        ],
    ),
    ("world", &["seq", "type", "n", "call", "args", "foreseen"]),
    ("output", &["seq", "type", "stream", "text", "cut"]),
    ("bye", &["seq", "type"]),
];

/// The keys of the objects nested in replies: `hello`'s `implementation`, `raised`'s `error`,
/// and each frame of a `traceback`.
const IMPLEMENTATION_KEYS: &[&str] = &["name", "language", "version"];
const ERROR_KEYS: &[&str] = &["kind", "class", "message"];
const FRAME_KEYS: &[&str] = &["file", "line", "function", "source"];

/// The first key of a reply, or of an object nested in it, that protocol v1 does not have,
/// said with the nearest valid key: a misspelt optional key ignored would be a verdict at
/// risk (a `traceback` spelt `trace_back` silently lost), so every key must be known. `None`
/// for a type the protocol does not have: serde names that one.
fn unknown_key(message: &Value) -> Option<String> {
    let kind = message.get("type")?.as_str()?;
    let (_, keys) = REPLY_KEYS.iter().find(|(name, _)| *name == kind)?;
    let mut objects: Vec<(String, &Value, &[&str])> =
        vec![(format!("a `{kind}` message"), message, keys)];
    if kind == "hello"
        && let Some(implementation) = message.get("implementation")
    {
        objects.push((
            format!("the `implementation` of `{kind}`"),
            implementation,
            IMPLEMENTATION_KEYS,
        ));
    }
    if kind == "raised"
        && let Some(error) = message.get("error")
    {
        objects.push((format!("the `error` of `{kind}`"), error, ERROR_KEYS));
    }
    if let Some(Value::Array(frames)) = message.get("traceback") {
        for (at, frame) in frames.iter().enumerate() {
            objects.push((
                format!("frame {} of the `traceback` of `{kind}`", at + 1),
                frame,
                FRAME_KEYS,
            ));
        }
    }
    objects.into_iter().find_map(|(what, object, keys)| {
        let object = object.as_object()?;
        let key = object.keys().find(|key| !keys.contains(&key.as_str()))?;
        let hint = crate::text::suggest::nearest(key, keys)
            .map(|near| format!(" (did you mean `{near}`?)"))
            .unwrap_or_default();
        Some(format!(
            "{what} has no key {}{hint}; its keys are {}",
            escaped(key),
            keys.join(", ")
        ))
    })
}

/// A key as JSON writes it, quotes and escapes included, so that no control character of it
/// is printed raw; cut if long.
fn escaped(key: &str) -> String {
    let shown: String = key.chars().take(60).collect();
    let mut text = Value::String(shown).to_string();
    if key.chars().count() > 60 {
        text.push_str("...");
    }
    text
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::formats::captured::{Frame, StreamName};
    use crate::model::implementation::Raised;

    fn line(request: Request, seq: u64) -> String {
        encode(&Outgoing { seq, body: request })
    }

    #[test]
    fn requests_are_one_line_with_seq_and_type() {
        assert_eq!(
            line(
                Request::Hello {
                    protocol: 1,
                    exercises: serde_json::Map::new()
                },
                1
            ),
            "{\"seq\":1,\"type\":\"hello\",\"protocol\":1}\n"
        );
        assert_eq!(
            line(
                Request::New {
                    contract: "dlq-consumer".into(),
                    args: json!({"params": [{"given": "queue"}, {"value": 3}]}),
                    class: Some("DLQConsumer".into()),
                },
                2
            ),
            "{\"seq\":2,\"type\":\"new\",\"contract\":\"dlq-consumer\",\"args\":{\"params\":[{\"given\":\"queue\"},{\"value\":3}]},\"class\":\"DLQConsumer\"}\n"
        );
        assert_eq!(
            line(
                Request::Call {
                    method: "replay".into(),
                    args: vec![json!(["a", "b"])],
                    foresee: vec![],
                },
                3
            ),
            "{\"seq\":3,\"type\":\"call\",\"method\":\"replay\",\"args\":[[\"a\",\"b\"]]}\n"
        );
        // A foresight: each call with its arguments and its answer, a null value written, a
        // raise as a world `raise`'s error.
        let receive = Foreseen {
            call: "queue.receive".into(),
            args: vec![],
            answer: Ok(Value::Null),
        };
        let has = Foreseen {
            call: "dlq.has".into(),
            args: vec![json!("a")],
            answer: Err(Raised::crash("injected crash before dlq.has")),
        };
        assert_eq!(
            line(
                Request::Call {
                    method: "process_one".into(),
                    args: vec![],
                    foresee: vec![receive.clone().into(), has.clone().into()],
                },
                4
            ),
            "{\"seq\":4,\"type\":\"call\",\"method\":\"process_one\",\"args\":[],\"foresee\":[{\"call\":\"queue.receive\",\"args\":[],\"value\":null},{\"call\":\"dlq.has\",\"args\":[\"a\"],\"raise\":{\"kind\":\"crash\",\"class\":\"Crash\",\"message\":\"injected crash before dlq.has\"}}]}\n"
        );
        // A foreseen answer is told from another: null is a value, and a raise no value.
        let (receive, has) = (ForeseenCall::from(receive), ForeseenCall::from(has));
        assert!(receive.answers(&Ok(Value::Null)));
        assert!(!receive.answers(&Ok(json!(false))));
        assert!(!receive.answers(&Err(Raised::crash("injected crash before dlq.has"))));
        assert!(has.answers(&Err(Raised::crash("injected crash before dlq.has"))));
        assert!(!has.answers(&Err(Raised::crash("another"))));
        assert!(!has.answers(&Ok(Value::Null)));
        assert_eq!(
            line(
                Request::Raise {
                    n: 2,
                    error: Raised::error("TransientError", "db timeout")
                },
                3
            ),
            "{\"seq\":3,\"type\":\"raise\",\"n\":2,\"error\":{\"kind\":\"error\",\"class\":\"TransientError\",\"message\":\"db timeout\"}}\n"
        );
        assert_eq!(line(Request::Bye, 9), "{\"seq\":9,\"type\":\"bye\"}\n");
    }

    #[test]
    fn replies_decode_into_their_variants() {
        let hello = decode(br#"{"seq":1,"type":"hello","protocol":1,"implementation":{"name":"solution.py","language":"python","version":"3.11.7"},"contracts":["dlq-consumer"]}"#).unwrap();
        assert_eq!(hello.seq, 1);
        assert!(
            matches!(hello.body, IncomingBody::Hello { ref contracts, .. } if contracts == &["dlq-consumer"])
        );
        let raised = decode(br#"{"seq":3,"type":"raised","error":{"kind":"invalid_argument","class":"ValueError","message":"no"}}"#).unwrap();
        assert_eq!(
            raised.body,
            IncomingBody::Raised {
                error: Raised::invalid_argument("ValueError", "no"),
                traceback: None,
            }
        );
        let traced = decode(br#"{"seq":3,"type":"raised","error":{"kind":"error","class":"KeyError","message":"'x'"},"traceback":[{"file":"/s/solution.py","line":12,"function":"process_one","source":"x = m['x']"}]}"#).unwrap();
        assert!(
            matches!(traced.body, IncomingBody::Raised { traceback: Some(ref frames), .. } if frames[0].line == 12 && frames[0].function.as_deref() == Some("process_one"))
        );
        let output =
            decode(br#"{"seq":3,"type":"output","stream":"stdout","text":"hi\n","cut":5}"#)
                .unwrap();
        assert_eq!(
            output.body,
            IncomingBody::Output {
                stream: StreamName::Stdout,
                text: "hi\n".into(),
                cut: 5
            }
        );
        let world =
            decode(br#"{"seq":3,"type":"world","n":1,"call":"queue.receive","args":[]}"#).unwrap();
        assert_eq!(
            world.body,
            IncomingBody::World {
                n: 1,
                call: "queue.receive".into(),
                args: vec![],
                foreseen: false,
            }
        );
        let foreseen = decode(
            br#"{"seq":3,"type":"world","n":2,"call":"dlq.has","args":["a"],"foreseen":true}"#,
        )
        .unwrap();
        assert!(matches!(
            foreseen.body,
            IncomingBody::World {
                foreseen: true,
                n: 2,
                ..
            }
        ));
        let errored = decode(br#"{"seq":1,"type":"errored","message":"SyntaxError: invalid syntax","file":"/s.py","line":12}"#).unwrap();
        assert!(matches!(
            errored.body,
            IncomingBody::Errored {
                line: Some(12),
                details: None,
                traceback: None,
                ..
            }
        ));
        // An error no call could catch carries its frames.
        let late = decode(br#"{"seq":4,"type":"errored","message":"uncaught exception after a call returned: Error: late","traceback":[{"file":"/s.mjs","line":3,"source":"throw e;"}]}"#).unwrap();
        let IncomingBody::Errored {
            traceback: Some(frames),
            ..
        } = late.body
        else {
            panic!("{late:?}");
        };
        assert_eq!(
            frames,
            vec![Frame {
                file: "/s.mjs".into(),
                line: 3,
                function: None,
                source: Some("throw e;".into())
            }]
        );
    }

    #[test]
    fn a_return_carries_a_value_or_undefined_and_never_both_nor_neither() {
        let body = |line: &str| decode(line.as_bytes()).map(|m| m.body);
        assert_eq!(
            body(r#"{"seq":3,"type":"return","value":null}"#),
            Ok(IncomingBody::Return(Returned::Value(Value::Null)))
        );
        assert_eq!(
            body(r#"{"seq":3,"type":"return","undefined":true}"#),
            Ok(IncomingBody::Return(Returned::Undefined))
        );
        let refused = [
            (
                r#"{"seq":3,"type":"return"}"#,
                "a `return` message has no `value`: a method that returns nothing sends \"value\":null, and JavaScript's undefined \"undefined\":true",
            ),
            (
                r#"{"seq":3,"type":"return","value":null,"undefined":true}"#,
                "a `return` message carries `value` or \"undefined\":true, not both",
            ),
            (
                r#"{"seq":3,"type":"return","undefined":false}"#,
                "`undefined` in a `return` message is true or left out: a value is sent as `value`",
            ),
        ];
        for (line, said) in refused {
            assert_eq!(
                body(line),
                Err(DecodeError::NotAMessage(said.to_owned())),
                "{line}"
            );
        }
        assert!(matches!(
            body(r#"{"seq":3,"type":"return","undefined":1}"#),
            Err(DecodeError::NotAMessage(_))
        ));
        // dlqspec writes what it reads: the two shapes, each as the protocol spells it.
        for returned in [Returned::Value(json!("ok")), Returned::Undefined] {
            let message = Incoming {
                seq: 3,
                body: IncomingBody::Return(returned),
            };
            let line = serde_json::to_string(&message).unwrap();
            assert_eq!(decode(line.as_bytes()), Ok(message), "{line}");
        }
    }

    /// `decode` without its shortcut for world calls: the general path alone.
    fn decode_generally(line: &str) -> Result<Incoming, String> {
        let value: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
        if !value.is_object() {
            return Err("not an object".into());
        }
        if let Some(why) = unknown_key(&value) {
            return Err(why);
        }
        Incoming::deserialize(value).map_err(|e| e.to_string())
    }

    #[test]
    fn world_calls_decode_as_the_general_path_decodes_them() {
        let lines = [
            r#"{"seq":3,"type":"world","n":1,"call":"queue.receive","args":[]}"#,
            r#" {"n":2,"args":["a",{"b":[1,2.5,-3,null,true]}],"call":"queue.send","type":"world","seq":7}"#,
            r#"{"seq":3,"type":"world","n":1,"call":"queue.receive","args":[],"extra":{"x":1}}"#,
            r#"{"seq":3,"type":"world","n":1,"call":"dlq.put","args":[{"id":"m1","id":"m2"}]}"#,
            r#"{"seq":3,"type":"world","n":18446744073709551615,"call":"q\u002ereceive","args":[1e400]}"#,
            // Not in the usual shape: the general path answers, as before.
            r#"{"seq":3,"seq":4,"type":"world","n":1,"call":"queue.receive","args":[]}"#,
            r#"{"seq":3,"type":"w\u006frld","n":1,"call":"queue.receive","args":[]}"#,
            r#"[3,"world",1,"queue.receive",[]]"#,
            r#"{"seq":3,"type":"world","n":"1","call":"queue.receive","args":[]}"#,
            r#"{"seq":3,"type":"world","n":1.0,"call":"queue.receive","args":[]}"#,
            r#"{"seq":3,"type":"world","n":1,"call":"queue.receive"}"#,
            r#"{"seq":3,"type":"world","n":1,"call":"queue.receive","args":null}"#,
            r#"{"seq":3,"type":"return","value":"world"}"#,
            r#"{"seq":3,"type":"world","n":1,"call":"queue.receive","args":[]} x"#,
        ];
        for line in lines {
            let general = decode_generally(line);
            match decode(line.as_bytes()) {
                Ok(decoded) => assert_eq!(Ok(decoded), general, "{line}"),
                Err(_) => assert!(general.is_err(), "{line}: {general:?}"),
            }
        }
        assert!(decode(lines[5].as_bytes()).is_ok_and(|m| m.seq == 4));
        assert!(matches!(
            decode(lines[2].as_bytes()),
            Err(DecodeError::NotAMessage(m)) if m.contains("no key \"extra\"")
        ));
        assert!(matches!(
            decode(lines[7].as_bytes()),
            Err(DecodeError::NotAMessage(m)) if m == "a message is a JSON object"
        ));
    }

    #[test]
    fn undecodable_lines_say_what_is_wrong() {
        assert!(matches!(
            decode(b"DEBUG: hello"),
            Err(DecodeError::NotJson(_))
        ));
        assert_eq!(
            decode(b"{\"seq\":1,\"x\":\"\xff\"}"),
            Err(DecodeError::NotUtf8(14))
        );
        let deep = format!("{{\"seq\":1,\"v\":{}{}}}", "[".repeat(200), "]".repeat(200));
        assert_eq!(decode(deep.as_bytes()), Err(DecodeError::TooDeep));
        // Values past the bound are refused before any is kept; a string holding commas and
        // brackets is one value.
        let zeros = |n: usize| {
            format!(
                "{{\"seq\":1,\"type\":\"return\",\"value\":[{}0]}}",
                "0,".repeat(n - 1)
            )
        };
        assert_eq!(
            decode(zeros(MAX_MESSAGE_VALUES).as_bytes()),
            Err(DecodeError::TooLarge)
        );
        assert!(decode(zeros(MAX_MESSAGE_VALUES - 10).as_bytes()).is_ok());
        let text = format!(
            "{{\"seq\":1,\"type\":\"return\",\"value\":\"{}\\\"\"}}",
            ",[{".repeat(MAX_MESSAGE_VALUES)
        );
        assert!(decode(text.as_bytes()).is_ok(), "{}", &text[..80]);
        assert!(matches!(decode(b"[1]"), Err(DecodeError::NotAMessage(_))));
        assert!(matches!(
            decode(br#"{"seq":1,"type":"shrug"}"#),
            Err(DecodeError::NotAMessage(m)) if m.contains("unknown variant `shrug`")
        ));
        assert!(matches!(
            decode(br#"{"type":"return","value":1}"#),
            Err(DecodeError::NotAMessage(m)) if m.contains("missing field `seq`")
        ));
        assert_eq!(
            decode(br#"{"seq":1,"type":"hello","protocol":2}"#),
            Err(DecodeError::WrongVersion(json!(2)))
        );
    }

    /// Each message kind dlqspec accepts, and each object nested in one, with a valid line
    /// and the key that line gets in addition, as the parser must name it.
    #[test]
    fn an_extra_key_in_any_message_is_named_with_the_nearest_valid_one() {
        let cases: &[(&str, &str, &str)] = &[
            (
                r#"{"seq":1,"type":"hello","protocol":1,"implementation":{"name":"s","language":"java","version":"17"},"contracts":[]}"#,
                r#""nameing":"camelCase""#,
                "a `hello` message has no key \"nameing\" (did you mean `naming`?)",
            ),
            (
                r#"{"seq":2,"type":"return","value":1}"#,
                r#""debug":1"#,
                "a `return` message has no key \"debug\"; its keys are seq, type, value, undefined",
            ),
            (
                r#"{"seq":2,"type":"raised","error":{"kind":"error","class":"E","message":"m"}}"#,
                r#""trace_back":[]"#,
                "a `raised` message has no key \"trace_back\" (did you mean `traceback`?)",
            ),
            (
                r#"{"seq":2,"type":"skipped","reason":"no"}"#,
                r#""reasons":"no""#,
                "a `skipped` message has no key \"reasons\" (did you mean `reason`?)",
            ),
            (
                r#"{"seq":1,"type":"errored","message":"boom"}"#,
                r#""detail":"x""#,
                "a `errored` message has no key \"detail\" (did you mean `details`?)",
            ),
            (
                r#"{"seq":3,"type":"world","n":1,"call":"queue.receive","args":[]}"#,
                r#""arg":[]"#,
                "a `world` message has no key \"arg\" (did you mean `args`?)",
            ),
            (
                r#"{"seq":3,"type":"output","stream":"stdout","text":"x"}"#,
                r#""cuts":0"#,
                "a `output` message has no key \"cuts\" (did you mean `cut`?)",
            ),
            (
                r#"{"seq":9,"type":"bye"}"#,
                r#""sequence":9"#,
                "a `bye` message has no key \"sequence\"; its keys are seq, type",
            ),
        ];
        for (valid, extra, said) in cases {
            assert!(decode(valid.as_bytes()).is_ok(), "{valid}");
            let with_extra = format!("{},{extra}}}", &valid[..valid.len() - 1]);
            match decode(with_extra.as_bytes()) {
                Err(DecodeError::NotAMessage(why)) => assert!(why.contains(said), "{why}"),
                other => panic!("{with_extra}: {other:?}"),
            }
        }
        let nested = [
            (
                r#"{"seq":1,"type":"hello","protocol":1,"implementation":{"name":"s","language":"java","version":"17","vendor":"x"},"contracts":[]}"#,
                "the `implementation` of `hello` has no key \"vendor\"; its keys are name, language, version",
            ),
            (
                r#"{"seq":2,"type":"raised","error":{"kind":"error","class":"E","message":"m","clas":"F"}}"#,
                "the `error` of `raised` has no key \"clas\" (did you mean `class`?)",
            ),
            (
                r#"{"seq":2,"type":"raised","error":{"kind":"error","class":"E","message":"m"},"traceback":[{"file":"/a","line":1},{"file":"/a","line":2,"func":"f"}]}"#,
                "frame 2 of the `traceback` of `raised` has no key \"func\"",
            ),
            (
                r#"{"seq":2,"type":"errored","message":"m","traceback":[{"file":"/a","line":1,"sourse":"x"}]}"#,
                "frame 1 of the `traceback` of `errored` has no key \"sourse\" (did you mean `source`?)",
            ),
        ];
        for (line, said) in nested {
            match decode(line.as_bytes()) {
                Err(DecodeError::NotAMessage(why)) => assert!(why.contains(said), "{why}"),
                other => panic!("{line}: {other:?}"),
            }
        }
        // A key with a control character is shown escaped.
        let odd = decode(b"{\"seq\":2,\"type\":\"return\",\"value\":1,\"\\u001b[31m\":1}");
        assert!(
            matches!(&odd, Err(DecodeError::NotAMessage(why)) if why.contains("\\u001b[31m") && !why.contains('\u{1b}')),
            "{odd:?}"
        );
    }

    /// The parser's key table is the schema's: each reply definition's properties.
    #[test]
    fn the_reply_keys_are_the_schemas() {
        let schema: Value = serde_json::from_str(crate::formats::schema::REPLY).unwrap();
        let definitions = &schema["definitions"];
        for (kind, keys) in REPLY_KEYS {
            let definition = &definitions[kind];
            assert_eq!(definition["additionalProperties"], json!(false), "{kind}");
            let mut in_schema: Vec<&str> = definition["properties"]
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            let mut ours = keys.to_vec();
            in_schema.sort_unstable();
            ours.sort_unstable();
            assert_eq!(ours, in_schema, "{kind}");
        }
        let nested = [
            (
                "/definitions/hello/properties/implementation",
                IMPLEMENTATION_KEYS,
            ),
            ("/definitions/raised/properties/error", ERROR_KEYS),
            ("/definitions/raised/properties/traceback/items", FRAME_KEYS),
            (
                "/definitions/errored/properties/traceback/items",
                FRAME_KEYS,
            ),
        ];
        for (pointer, keys) in nested {
            let object = schema.pointer(pointer).unwrap();
            assert_eq!(object["additionalProperties"], json!(false), "{pointer}");
            let mut in_schema: Vec<&str> = object["properties"]
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            let mut ours = keys.to_vec();
            in_schema.sort_unstable();
            ours.sort_unstable();
            assert_eq!(ours, in_schema, "{pointer}");
        }
        let kinds: Vec<&str> = schema["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                r["$ref"]
                    .as_str()
                    .unwrap()
                    .trim_start_matches("#/definitions/")
            })
            .collect();
        assert_eq!(
            kinds,
            REPLY_KEYS.iter().map(|(k, _)| *k).collect::<Vec<_>>()
        );
    }
}
