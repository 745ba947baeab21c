//! The formats against their JSON Schemas and their documents: every field the types write is
//! one the schema lists (and every field it lists is one they write), what the types write is
//! valid, and every example docs/reports.md, docs/protocol.md and docs/autograders.md show reads
//! as the types, validates against its schema, and is written back as shown.

use std::borrow::Cow;
use std::collections::BTreeSet;

use dlqspec_formats::captured::{Captured, Frame, Stream, Traceback};
use dlqspec_formats::grade::{
    AgainstRecord, CauseExample, CauseRecord, ChangedRecord, GoneRecord, NewRecord, RowRecord,
    RuleShare, SUMMARY_FORMAT, SUMMARY_VERSION, SpecChange, SpecOutcome, SpecVerdictRecord,
    StandingRecord, SuiteRecord, SummaryFile,
};
use dlqspec_formats::protocol::{
    ForeseenCall, ImplementationInfo, Incoming, IncomingBody, Naming, Outgoing, PROTOCOL_VERSION,
    Raised, Request, Returned,
};
use dlqspec_formats::record::{
    BrokerProperty, DivergenceRecord, FORMAT_VERSION, ImplErrorKind, ImplErrorRecord, ImplInfo,
    MismatchRecord, OutcomeKind, RunEvent, RunFinished, RunStarted, SkippedPath, SpecErrorKind,
    SpecErrorRecord, SpecFinished,
};
use dlqspec_formats::schema;
use serde_json::{Value, json};

fn compiled(text: &str) -> (Value, jsonschema::Validator) {
    let schema: Value = serde_json::from_str(text).expect("a schema is JSON");
    let validator = jsonschema::draft7::new(&schema).expect("a schema compiles as draft-07");
    (schema, validator)
}

fn keys(object: &Value) -> BTreeSet<String> {
    object
        .as_object()
        .unwrap_or_else(|| panic!("an object: {object}"))
        .keys()
        .cloned()
        .collect()
}

/// The keys of `written` are the properties of the schema's object at `pointer`, and the schema
/// closes that object.
fn same_keys(schema: &Value, pointer: &str, written: &Value) {
    let object = schema
        .pointer(pointer)
        .unwrap_or_else(|| panic!("the schema has {pointer}"));
    assert_eq!(object["additionalProperties"], json!(false), "{pointer}");
    assert_eq!(
        keys(written),
        keys(&object["properties"]),
        "{pointer}: the fields the types write (left) and the schema's (right)"
    );
}

fn assert_valid(validator: &jsonschema::Validator, value: &Value) {
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{value}:\n{}", errors.join("\n"));
}

fn stream(text: &str) -> Stream {
    Stream {
        text: text.into(),
        cut_bytes: 2,
    }
}

fn frame() -> Frame {
    Frame {
        file: "/s/solution.py".into(),
        line: 12,
        function: Some("process_one".into()),
        source: Some("x = m['x']".into()),
    }
}

fn spec_error(more: Vec<SpecErrorRecord<'static>>) -> SpecErrorRecord<'static> {
    SpecErrorRecord {
        kind: SpecErrorKind::Invalid,
        path: "specs/a.yaml".into(),
        line: 3,
        column: 5,
        message: "unknown rule".into(),
        source_line: Some("rules: [x]".into()),
        untold: (!more.is_empty()).then(|| "fix these and run again".into()),
        more,
    }
}

/// A `spec_finished` with every field written, each optional one present.
fn every_field() -> SpecFinished<'static> {
    SpecFinished {
        path: "specs/a.yaml".into(),
        name: Some("a".into()),
        contract: Some("dlq-consumer".into()),
        rules: Cow::Owned(vec!["dlq-consumer/poison".into()]),
        points: 2.0,
        outcome: OutcomeKind::Mismatch,
        duration_ms: 1.5,
        mismatch: Some(MismatchRecord {
            step: "step 4 (process)".into(),
            line: 9,
            column: 7,
            expected: "dead".into(),
            actual: "retry".into(),
            note: Some("a note".into()),
            diff: "-dead\n+retry\n".into(),
        }),
        spec_error: Some(spec_error(vec![spec_error(Vec::new())])),
        impl_error: Some(ImplErrorRecord {
            kind: ImplErrorKind::Timeout,
            message: "no answer".into(),
        }),
        skip_reason: Some("not run: --fail-fast".into()),
        not_attempted: Some("no class".into()),
        divergence: Some(DivergenceRecord {
            world: "rabbitmq classic at amqp://guest@localhost:5672/".into(),
            broker_properties: vec![BrokerProperty {
                id: "requeue-at-head".into(),
                says: "s".into(),
                means: "m".into(),
                first: "f".into(),
            }],
            failure: OutcomeKind::Mismatch,
        }),
        details: Some("details".into()),
        cause: Some("dlq-consumer/poison: ...".into()),
        cause_id: Some("c0123456789ab".into()),
        cause_rule: Some("dlq-consumer/poison".into()),
        departure: Some("after dlq.put(a), ...".into()),
        known_mistake: Some("a mistake".into()),
        output: Some(Cow::Owned(Captured {
            stdout: stream("out"),
            stderr: stream("err"),
            tracebacks: vec![Traceback {
                error: "KeyError: 'x'".into(),
                frames: vec![frame()],
            }],
            tracebacks_cut: 1,
        })),
    }
}

#[test]
fn the_run_records_schema_lists_every_field_its_events_write() {
    let (schema, validator) = compiled(schema::RUN_RECORD);
    let implementation = ImplInfo {
        label: "python:solution.py".into(),
        language: "python".into(),
        is_reference: false,
    };
    let started = RunEvent::RunStarted(RunStarted {
        format_version: FORMAT_VERSION,
        dlqspec_version: "0.1.0".into(),
        implementation: Cow::Owned(implementation),
        total: 3,
        filtered_out: 1,
        skipped: vec![SkippedPath {
            path: "specs/x".into(),
            reason: "a link".into(),
        }],
        world: Cow::Owned(vec!["world: rabbitmq".into()]),
    });
    let written = serde_json::to_value(&started).unwrap();
    same_keys(&schema, "/definitions/run_started", &written);
    same_keys(
        &schema,
        "/definitions/run_started/properties/implementation",
        &written["implementation"],
    );
    same_keys(
        &schema,
        "/definitions/run_started/properties/skipped/items",
        &written["skipped"][0],
    );
    assert_valid(&validator, &written);

    let mut spec = serde_json::to_value(RunEvent::SpecFinished(Box::new(every_field()))).unwrap();
    same_keys(&schema, "/definitions/spec_finished", &spec);
    for (pointer, at) in [
        ("/definitions/mismatch", "/mismatch"),
        ("/definitions/spec_error", "/spec_error"),
        ("/definitions/spec_error", "/spec_error/more/0"),
        (
            "/definitions/spec_finished/properties/impl_error",
            "/impl_error",
        ),
        ("/definitions/divergence", "/divergence"),
        (
            "/definitions/divergence/properties/broker_properties/items",
            "/divergence/broker_properties/0",
        ),
        ("/definitions/output", "/output"),
        ("/definitions/stream", "/output/stdout"),
        (
            "/definitions/output/properties/tracebacks/items",
            "/output/tracebacks/0",
        ),
        (
            "/definitions/output/properties/tracebacks/items/properties/frames/items",
            "/output/tracebacks/0/frames/0",
        ),
    ] {
        let mut object = spec.pointer(at).unwrap().clone();
        if at == "/spec_error/more/0" {
            // The file's other errors have the fields of the first, but `more` and `untold`.
            let fields = object.as_object_mut().unwrap();
            fields.insert("more".into(), json!([]));
            fields.insert("untold".into(), json!(""));
        }
        same_keys(&schema, pointer, &object);
    }
    // A mismatch as a run writes it: only the fields of its outcome.
    let fields = spec.as_object_mut().unwrap();
    for field in [
        "spec_error",
        "impl_error",
        "skip_reason",
        "not_attempted",
        "divergence",
    ] {
        fields.remove(field);
    }
    assert_valid(&validator, &spec);

    let finished = RunEvent::RunFinished(RunFinished {
        passed: 1,
        mismatched: 1,
        errored: 0,
        spec_errors: 0,
        skipped: 0,
        expected_failures: 0,
        stale: 0,
        failed: 1,
        total: 2,
        duration_ms: 3.25,
        exit_code: 1,
        diverged: 1,
        not_attempted: 1,
        world_fault: Some("the broker went away".into()),
    });
    let written = serde_json::to_value(&finished).unwrap();
    same_keys(&schema, "/definitions/run_finished", &written);
    assert_valid(&validator, &written);

    // The outcomes are the schema's, in its order, each name as it serializes.
    let outcomes: Vec<Value> = OutcomeKind::ALL
        .iter()
        .map(|k| serde_json::to_value(k).unwrap())
        .collect();
    assert_eq!(schema["definitions"]["outcome"]["enum"], json!(outcomes));
}

#[test]
fn the_protocols_schemas_list_every_field_its_messages_write() {
    let (requests, request_validator) = compiled(schema::REQUEST);
    let (replies, reply_validator) = compiled(schema::REPLY);
    let error = Raised::error("TransientError", "db timeout");
    let outgoing = |seq, body| serde_json::to_value(Outgoing { seq, body }).unwrap();
    let foreseen = ForeseenCall {
        call: "queue.receive".into(),
        args: vec![],
        value: Some(Value::Null),
        raise: None,
    };
    let hello = outgoing(
        1,
        Request::Hello {
            protocol: PROTOCOL_VERSION,
            exercises: serde_json::Map::new(),
        },
    );
    assert_valid(&request_validator, &hello);
    let mut hello_keys = hello.clone();
    hello_keys["exercises"] = json!({});
    same_keys(&requests, "/definitions/hello", &hello_keys);
    let new = outgoing(
        2,
        Request::New {
            contract: "lease-queue".into(),
            args: json!({"params": [{"value": 10}]}),
            class: Some("LeaseQueue".into()),
        },
    );
    let call = outgoing(
        3,
        Request::Call {
            method: "process_one".into(),
            args: vec![],
            foresee: vec![foreseen.clone()],
        },
    );
    let mut foresee = serde_json::to_value(&foreseen).unwrap();
    foresee["raise"] = serde_json::to_value(&error).unwrap();
    same_keys(&requests, "/definitions/foresee/items", &foresee);
    let result = outgoing(
        3,
        Request::Result {
            n: 1,
            value: json!({"id": "a"}),
        },
    );
    let raise = outgoing(
        3,
        Request::Raise {
            n: 2,
            error: error.clone().extending("PermanentError"),
        },
    );
    same_keys(
        &requests,
        "/definitions/raise/properties/error",
        &raise["error"],
    );
    let bye = outgoing(9, Request::Bye);
    for (kind, message) in [
        ("new", &new),
        ("call", &call),
        ("result", &result),
        ("raise", &raise),
        ("bye", &bye),
    ] {
        same_keys(&requests, &format!("/definitions/{kind}"), message);
        assert_valid(&request_validator, message);
    }

    let incoming = |seq, body| serde_json::to_value(Incoming { seq, body }).unwrap();
    let traceback = Some(vec![frame()]);
    let messages = [
        incoming(
            1,
            IncomingBody::Hello {
                protocol: PROTOCOL_VERSION,
                implementation: ImplementationInfo {
                    name: "solution.py".into(),
                    language: "python".into(),
                    version: "3.11.7".into(),
                },
                contracts: vec!["dlq-consumer".into()],
                defines: Some(vec!["DLQConsumer".into()]),
                naming: Some(Naming::Camel),
                features: vec!["foresight".into()],
            },
        ),
        incoming(
            2,
            IncomingBody::Errored {
                message: "boom".into(),
                file: Some("/s/solution.py".into()),
                line: Some(6),
                details: Some("Traceback ...".into()),
                traceback: traceback.clone(),
            },
        ),
        incoming(3, IncomingBody::Return(Returned::Value(json!("ok")))),
        incoming(
            3,
            IncomingBody::Raised {
                error: Raised::invalid_argument("ValueError", "no"),
                traceback,
            },
        ),
        incoming(
            3,
            IncomingBody::Output {
                stream: dlqspec_formats::captured::StreamName::Stdout,
                text: "hi\n".into(),
                cut: 0,
            },
        ),
        incoming(
            2,
            IncomingBody::Skipped {
                reason: "no Stack".into(),
            },
        ),
        incoming(
            3,
            IncomingBody::World {
                n: 1,
                call: "dlq.has".into(),
                args: vec![json!("a")],
                foreseen: true,
            },
        ),
        incoming(9, IncomingBody::Bye),
    ];
    for message in &messages {
        let kind = message["type"].as_str().unwrap();
        let mut written = message.clone();
        if kind == "return" {
            // `value` or `undefined`, never both: the schema lists the two.
            written["undefined"] = json!(true);
        }
        same_keys(&replies, &format!("/definitions/{kind}"), &written);
        assert_valid(&reply_validator, message);
    }
    same_keys(
        &replies,
        "/definitions/hello/properties/implementation",
        &messages[0]["implementation"],
    );
    same_keys(
        &replies,
        "/definitions/raised/properties/error",
        &messages[3]["error"],
    );
    same_keys(
        &replies,
        "/definitions/errored/properties/traceback/items",
        &messages[1]["traceback"][0],
    );
    let undefined = incoming(3, IncomingBody::Return(Returned::Undefined));
    assert_valid(&reply_validator, &undefined);
}

/// The JSON values of a document's ```json blocks, a value spanning lines read whole.
fn examples(document: &str) -> Vec<Value> {
    let path = format!("{}/../../docs/{document}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut values = Vec::new();
    let mut block: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        match &mut block {
            None if trimmed.starts_with("```json") => block = Some(String::new()),
            Some(json) if trimmed.starts_with("```") => {
                let stream = serde_json::Deserializer::from_str(json).into_iter::<Value>();
                for value in stream {
                    values.push(value.unwrap_or_else(|e| panic!("{document}: {e}\n{json}")));
                }
                block = None;
            }
            Some(json) => {
                json.push_str(line);
                json.push('\n');
            }
            None => {}
        }
    }
    values
}

/// Numbers compared as numbers: the types write `1` read into an `f64` back as `1.0`.
fn numbers_as_floats(value: &Value) -> Value {
    match value {
        Value::Number(n) => json!(n.as_f64()),
        Value::Array(items) => Value::Array(items.iter().map(numbers_as_floats).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(k, v)| (k.clone(), numbers_as_floats(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn written_back<T: serde::Serialize + serde::de::DeserializeOwned>(example: &Value) -> Value {
    let read: T = serde_json::from_value(example.clone())
        .unwrap_or_else(|e| panic!("{example} does not read: {e}"));
    serde_json::to_value(read).unwrap()
}

#[test]
fn the_run_records_documented_events_read_validate_and_write_back() {
    let (_, validator) = compiled(schema::RUN_RECORD);
    let events = examples("reports.md");
    assert!(events.len() >= 2, "{events:?}");
    for event in &events {
        assert_valid(&validator, event);
        let line = event.to_string();
        assert!(RunEvent::read(&line).is_some(), "{line}");
        assert_eq!(
            numbers_as_floats(&written_back::<RunEvent<'static>>(event)),
            numbers_as_floats(event)
        );
    }
}

#[test]
fn the_protocols_documented_messages_read_validate_and_write_back() {
    let (_, requests) = compiled(schema::REQUEST);
    let (_, replies) = compiled(schema::REPLY);
    // Whole messages: a block may also show a part of one (an argument's shape), with no `seq`.
    let messages: Vec<Value> = examples("protocol.md")
        .into_iter()
        .filter(|example| example.get("seq").is_some())
        .collect();
    let mut seen = BTreeSet::new();
    for message in &messages {
        // `hello` and `bye` go both ways: a message is what one of the schemas allows.
        let written = if requests.is_valid(message) {
            written_back::<Outgoing>(message)
        } else {
            assert_valid(&replies, message);
            written_back::<Incoming>(message)
        };
        assert_eq!(&written, message);
        seen.insert(message["type"].as_str().unwrap().to_owned());
    }
    for kind in [
        "hello", "new", "call", "result", "raise", "return", "raised", "errored", "skipped",
        "world", "output", "bye",
    ] {
        assert!(seen.contains(kind), "docs/protocol.md shows no `{kind}`");
    }
}

fn standing(status: &str) -> StandingRecord {
    StandingRecord {
        status: status.into(),
        score: 3.0,
        max_score: 4.0,
    }
}

#[test]
fn the_grade_records_schema_lists_every_field_its_summary_writes() {
    let (schema, validator) = compiled(schema::GRADE_SUMMARY);
    let verdict = SpecVerdictRecord {
        outcome: SpecOutcome::Ran(OutcomeKind::Mismatch),
        cause: Some("dlq-consumer/poison: ...".into()),
        cause_id: Some("c0123456789ab".into()),
        cause_rule: Some("dlq-consumer/poison".into()),
    };
    let summary = SummaryFile {
        format: SUMMARY_FORMAT.into(),
        version: SUMMARY_VERSION,
        partition: Some("2/4".into()),
        suite: Some(SuiteRecord {
            folders: vec!["specs/dlq-consumer".into()],
            specs: 52,
            digest: "7f8f6c98b998".into(),
            graded: "2026-12-01 22:43 UTC".into(),
            dlqspec: "0.1.0".into(),
        }),
        rules: Some(
            [(
                "dlq-consumer/poison".to_owned(),
                RuleShare {
                    passed: 1,
                    submissions: 2,
                    not_attempted: 1,
                    not_run: 1,
                },
            )]
            .into_iter()
            .collect(),
        ),
        causes: Some(vec![CauseRecord {
            cause: "dlq-consumer/poison: ...".into(),
            id: Some("c0123456789ab".into()),
            rule: Some("dlq-consumer/poison".into()),
            who: vec!["bob".into()],
            submissions: 1,
            specs: 1,
            failures: 1,
            example: CauseExample {
                submission: "submissions/bob".into(),
                name: "bob".into(),
                spec: "specs/dlq-consumer/poison-cycle.yaml".into(),
            },
        }]),
        against: Some(AgainstRecord {
            dir: "earlier".into(),
            no_change: false,
            unchanged: 1,
            changed: vec![ChangedRecord {
                name: "bob".into(),
                submission: "submissions/bob".into(),
                before: standing("pass"),
                after: standing("fail"),
                specs: vec![SpecChange {
                    spec: "specs/a.yaml".into(),
                    before: None,
                    after: Some(SpecOutcome::NotRun),
                }],
            }],
            new: vec![NewRecord {
                name: "carol".into(),
                submission: "submissions/carol".into(),
                after: standing("pass"),
            }],
            gone: vec![GoneRecord {
                name: "dave".into(),
                submission: "submissions/dave".into(),
                before: standing("broken"),
            }],
        }),
        rows: vec![RowRecord {
            submission: "submissions/bob".into(),
            name: "bob".into(),
            status: "fail".into(),
            score: 3.0,
            max_score: 4.0,
            passed: 3,
            failed: 1,
            seconds: 2.1,
            note: String::new(),
            report: Some("bob.txt".into()),
            json_report: Some("bob.jsonl".into()),
            pictures: vec!["specs/a.yaml".into()],
            rules: [("dlq-consumer/poison".to_owned(), "fail".to_owned())]
                .into_iter()
                .collect(),
            specs: [("specs/a.yaml".to_owned(), verdict)].into_iter().collect(),
            not_attempted: 1,
            not_run: 1,
        }],
    };
    let written = serde_json::to_value(&summary).unwrap();
    assert_valid(&validator, &written);
    same_keys(&schema, "", &written);
    for (pointer, at) in [
        ("/definitions/suite", "/suite"),
        ("/definitions/rule_share", "/rules/dlq-consumer~1poison"),
        ("/definitions/cause", "/causes/0"),
        ("/definitions/cause/properties/example", "/causes/0/example"),
        ("/definitions/against", "/against"),
        (
            "/definitions/against/properties/changed/items",
            "/against/changed/0",
        ),
        (
            "/definitions/against/properties/changed/items/properties/specs/items",
            "/against/changed/0/specs/0",
        ),
        ("/definitions/standing", "/against/changed/0/before"),
        (
            "/definitions/against/properties/new/items",
            "/against/new/0",
        ),
        (
            "/definitions/against/properties/gone/items",
            "/against/gone/0",
        ),
        ("/definitions/row", "/rows/0"),
        (
            "/definitions/row/properties/specs/additionalProperties",
            "/rows/0/specs/specs~1a.yaml",
        ),
    ] {
        same_keys(&schema, pointer, written.pointer(at).unwrap());
    }
    // Every outcome a grading gives a spec is the schema's, in its order.
    let outcomes: Vec<Value> = OutcomeKind::ALL
        .into_iter()
        .map(|kind| SpecOutcome::reported(Some(kind)))
        .filter(|outcome| *outcome != SpecOutcome::NotRun)
        .chain([SpecOutcome::NotRun])
        .map(|outcome| serde_json::to_value(outcome).unwrap())
        .collect();
    assert_eq!(
        schema["definitions"]["spec_outcome"]["enum"],
        json!(outcomes)
    );
}

#[test]
fn the_grade_records_documented_summary_reads_and_writes_back() {
    let (_, validator) = compiled(schema::GRADE_SUMMARY);
    let summaries = examples("autograders.md");
    let summary = summaries
        .iter()
        .find(|v| v["format"] == SUMMARY_FORMAT)
        .expect("docs/autograders.md shows a summary.json");
    assert_eq!(summary["version"], SUMMARY_VERSION);
    let read: SummaryFile = serde_json::from_value(summary.clone()).expect("it reads");
    assert_eq!(read.rows.len(), 1);
    // Written back, it says what the document shows, and what the document leaves out of a
    // row (`pictures`, `not_attempted`, `not_run`) as none.
    let mut shown = numbers_as_floats(summary);
    let row = shown["rows"][0].as_object_mut().unwrap();
    row.insert("pictures".into(), json!([]));
    row.insert("not_attempted".into(), json!(0.0));
    row.insert("not_run".into(), json!(0.0));
    assert_valid(&validator, &shown);
    assert_eq!(
        numbers_as_floats(&serde_json::to_value(&read).unwrap()),
        shown
    );
}
