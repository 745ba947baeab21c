//! Which world a run's specs act on (`--world`): the lesson's fake, the default, or a queue
//! on a real broker, RabbitMQ, whose address and queue type a URL gives.

use std::fmt;

use crate::amqp::Address;

/// The world `--world` names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum WorldChoice {
    /// dlqspec's own fake queue, DLQ and clock: the lessons' world.
    #[default]
    Fake,
    /// The main queue on RabbitMQ; the DLQ and the clock stay dlqspec's.
    RabbitMq(RabbitMq),
}

/// A queue on RabbitMQ, as `amqp://USER:PASS@HOST:PORT/VHOST?queue-type=...` gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RabbitMq {
    pub(crate) address: Address,
    pub(crate) queue_type: QueueType,
}

/// RabbitMQ's two kinds of queue for this, which differ exactly where the lessons look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum QueueType {
    /// Raft-replicated; keeps a delivery count (`x-delivery-count`); requeues to the tail.
    Quorum,
    /// The original queue: only a `redelivered` flag; requeues to the head.
    Classic,
}

impl QueueType {
    pub(crate) fn word(self) -> &'static str {
        match self {
            QueueType::Quorum => "quorum",
            QueueType::Classic => "classic",
        }
    }
}

/// The query keys an address may have.
const KEYS: &[&str] = &["queue-type"];

impl WorldChoice {
    /// Reads `fake` or `amqp://...?queue-type=quorum|classic` (quorum when left out).
    pub(crate) fn parse(text: &str) -> Result<WorldChoice, String> {
        if text == "fake" {
            return Ok(WorldChoice::Fake);
        }
        if !text.starts_with("amqp") {
            return Err(format!(
                "expected `fake` or a RabbitMQ address such as amqp://guest:guest@localhost:5672/%2f?queue-type=quorum, not `{}`",
                crate::text::truncate::text(text.to_owned(), 80)
            ));
        }
        let address = Address::parse(text)?;
        for (key, _) in &address.query {
            if !KEYS.contains(&key.as_str()) {
                let hint = crate::text::suggest::hint(key, KEYS);
                return Err(format!(
                    "`{key}` is not a setting of a RabbitMQ world{hint}: the one setting is queue-type=quorum|classic"
                ));
            }
        }
        let queue_type = match address.param("queue-type") {
            None | Some("quorum") => QueueType::Quorum,
            Some("classic") => QueueType::Classic,
            Some(other) => {
                return Err(format!("queue-type is quorum or classic, not `{other}`"));
            }
        };
        Ok(WorldChoice::RabbitMq(RabbitMq {
            address,
            queue_type,
        }))
    }

    pub(crate) fn is_fake(&self) -> bool {
        matches!(self, WorldChoice::Fake)
    }

    /// A short name for a column or a line: `fake`, `rabbitmq quorum`, `rabbitmq classic`.
    pub(crate) fn short(&self) -> String {
        match self {
            WorldChoice::Fake => "fake".to_owned(),
            WorldChoice::RabbitMq(rabbit) => format!("rabbitmq {}", rabbit.queue_type.word()),
        }
    }
}

impl fmt::Display for WorldChoice {
    /// `fake`, or the address without its password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WorldChoice::Fake => f.write_str("fake"),
            WorldChoice::RabbitMq(rabbit) => write!(f, "{}", rabbit.address),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_world_is_the_fake_or_a_rabbitmq_queue_of_a_type() {
        assert_eq!(WorldChoice::parse("fake"), Ok(WorldChoice::Fake));
        let WorldChoice::RabbitMq(rabbit) =
            WorldChoice::parse("amqp://u:pw@localhost/%2f?queue-type=classic").unwrap()
        else {
            panic!("not a broker");
        };
        assert_eq!(rabbit.queue_type, QueueType::Classic);
        let quorum = WorldChoice::parse("amqp://localhost").unwrap();
        assert_eq!(quorum.short(), "rabbitmq quorum");
        assert_eq!(quorum.to_string(), "amqp://guest@localhost:5672/%2F");
    }

    #[test]
    fn a_wrong_world_says_what_would_be_right() {
        for (text, says) in [
            ("rabbit", "expected `fake` or a RabbitMQ address"),
            (
                "amqp://localhost?queue-typ=classic",
                "did you mean `queue-type`?",
            ),
            (
                "amqp://localhost?queue-type=stream",
                "quorum or classic, not `stream`",
            ),
        ] {
            let error = WorldChoice::parse(text).unwrap_err();
            assert!(error.contains(says), "{text}: {error}");
        }
    }
}
