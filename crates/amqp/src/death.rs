//! A dead-lettered message's `x-death` header, read: why RabbitMQ dead-lettered it, how many
//! times, from which queue and when.
//!
//! RabbitMQ writes `x-death` as an array of tables, the latest death first, one table per
//! queue and reason, each counting how many times the message died there for that reason:
//! `{count, reason, queue, time, exchange, routing-keys}`. Every field is read within the
//! header's own bounds (the frame was read within bounds already); a table that lacks one of
//! the fields RabbitMQ always writes is refused, not guessed at.

use super::wire::{Field, Table};

/// One entry of `x-death`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Death {
    /// `delivery_limit` (a quorum queue's delivery count passed `x-delivery-limit`),
    /// `rejected` (a consumer's `basic.nack`/`basic.reject` without requeue), `expired`,
    /// `maxlen`: as the broker writes it.
    pub reason: String,
    /// How many times the message died in `queue` for `reason`.
    pub count: u64,
    /// The queue it died in.
    pub queue: String,
    /// The broker's clock when it died (seconds since the Unix epoch), if written.
    pub time: Option<u64>,
    /// The exchange it had been published to.
    pub exchange: String,
    /// The routing keys it had been published with.
    pub routing_keys: Vec<String>,
}

/// The header RabbitMQ writes a message's deaths in.
pub(crate) const X_DEATH: &str = "x-death";

/// The deaths a message's `headers` record, the latest first: none for a message that never
/// died. `Err` says what in the header is not RabbitMQ's `x-death`.
pub fn deaths(headers: &Table) -> Result<Vec<Death>, String> {
    let Some(header) = headers.get(X_DEATH) else {
        return Ok(Vec::new());
    };
    let Field::Array(items) = header else {
        return Err(format!("{X_DEATH} is not an array of tables"));
    };
    items
        .iter()
        .enumerate()
        .map(|(index, item)| match item {
            Field::Table(table) => death(table).map_err(|why| format!("{X_DEATH}[{index}]: {why}")),
            _ => Err(format!("{X_DEATH}[{index}] is not a table")),
        })
        .collect()
}

fn death(table: &Table) -> Result<Death, String> {
    let text = |key: &str| {
        table
            .get(key)
            .and_then(Field::as_text)
            .ok_or_else(|| format!("no text `{key}`"))
    };
    let count = table
        .get("count")
        .and_then(Field::as_int)
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| "no count of 0 or more".to_owned())?;
    let time = match table.get("time") {
        None => None,
        Some(Field::Timestamp(at)) => Some(*at),
        Some(_) => return Err("a `time` that is not a timestamp".to_owned()),
    };
    let routing_keys = match table.get("routing-keys") {
        None => Vec::new(),
        Some(Field::Array(keys)) => keys
            .iter()
            .map(|key| {
                key.as_text()
                    .ok_or_else(|| "a routing key that is not text".to_owned())
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("`routing-keys` that are not an array".to_owned()),
    };
    Ok(Death {
        reason: text("reason")?,
        count,
        queue: text("queue")?,
        time,
        exchange: table
            .get("exchange")
            .and_then(Field::as_text)
            .unwrap_or_default(),
        routing_keys,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `x-death` as RabbitMQ 3.10.8 writes it for a quorum queue's message dead-lettered to
    /// the default exchange (measured), with the `x-first-death-*` headers beside it.
    fn measured(reason: &str) -> Table {
        let death = Table::default()
            .with("count", Field::Int(1))
            .with("reason", Field::text(reason))
            .with("queue", Field::text("dlqspec.0.queue"))
            .with("time", Field::Timestamp(1_700_000_000))
            .with("exchange", Field::text(""))
            .with(
                "routing-keys",
                Field::Array(vec![Field::text("dlqspec.0.queue")]),
            );
        Table::default()
            .with(X_DEATH, Field::Array(vec![Field::Table(death)]))
            .with("x-first-death-reason", Field::text(reason))
    }

    #[test]
    fn a_death_reads_its_reason_count_queue_and_time() {
        let read = deaths(&measured("delivery_limit")).unwrap();
        assert_eq!(
            read,
            [Death {
                reason: "delivery_limit".to_owned(),
                count: 1,
                queue: "dlqspec.0.queue".to_owned(),
                time: Some(1_700_000_000),
                exchange: String::new(),
                routing_keys: vec!["dlqspec.0.queue".to_owned()],
            }]
        );
        assert_eq!(deaths(&measured("rejected")).unwrap()[0].reason, "rejected");
    }

    #[test]
    fn a_message_that_never_died_has_no_death() {
        let headers = Table::default().with("x-delivery-count", Field::Int(2));
        assert_eq!(deaths(&headers), Ok(Vec::new()));
    }

    #[test]
    fn a_header_that_is_not_rabbitmqs_x_death_is_refused_with_what_is_wrong() {
        let cases = [
            (Field::text("delivery_limit"), "not an array of tables"),
            (
                Field::Array(vec![Field::Int(1)]),
                "x-death[0] is not a table",
            ),
            (
                Field::Array(vec![Field::Table(
                    Table::default().with("reason", Field::text("rejected")),
                )]),
                "x-death[0]: no count",
            ),
            (
                Field::Array(vec![Field::Table(
                    Table::default()
                        .with("count", Field::Int(-1))
                        .with("reason", Field::text("rejected")),
                )]),
                "no count of 0 or more",
            ),
            (
                Field::Array(vec![Field::Table(
                    Table::default()
                        .with("count", Field::Int(1))
                        .with("reason", Field::text("rejected")),
                )]),
                "no text `queue`",
            ),
            (
                Field::Array(vec![Field::Table(
                    Table::default()
                        .with("count", Field::Int(1))
                        .with("reason", Field::text("rejected"))
                        .with("queue", Field::text("q"))
                        .with("time", Field::text("noon")),
                )]),
                "not a timestamp",
            ),
        ];
        for (header, says) in cases {
            let headers = Table::default().with(X_DEATH, header.clone());
            let error = deaths(&headers).unwrap_err();
            assert!(error.contains(says), "{header:?}: {error}");
        }
    }

    #[test]
    fn the_latest_death_comes_first_as_written() {
        let mut headers = measured("rejected");
        let Some((_, Field::Array(items))) = headers.0.first_mut() else {
            panic!("x-death first");
        };
        let earlier = Table::default()
            .with("count", Field::Int(2))
            .with("reason", Field::text("delivery_limit"))
            .with("queue", Field::text("other"));
        items.push(Field::Table(earlier));
        let read = deaths(&headers).unwrap();
        assert_eq!(
            read.iter()
                .map(|d| (d.reason.as_str(), d.count))
                .collect::<Vec<_>>(),
            [("rejected", 1), ("delivery_limit", 2)]
        );
        assert_eq!(read[1].time, None);
    }
}
