//! Which world a run's specs act on (`--world`): the lesson's fake, the default, or a queue
//! on a real broker, RabbitMQ, whose address, queue type and dead-lettering a URL gives.

use std::fmt;

use crate::amqp::Address;

/// The variable a run reads its world from when `--world` is not given, which `grade` hands
/// each run (an address may hold a password, which a command line shows to every user).
pub(crate) const WORLD_VARIABLE: &str = "DLQSPEC_WORLD";

/// The world `--world` names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum WorldChoice {
    /// dlqspec's own fake queue, DLQ and clock: the lessons' world.
    #[default]
    Fake,
    /// The main queue on RabbitMQ; the DLQ and the clock stay dlqspec's.
    RabbitMq(RabbitMq),
}

/// A queue on RabbitMQ, as `amqp://USER:PASS@HOST:PORT/VHOST?queue-type=...&dead-letter=...`
/// gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RabbitMq {
    pub(crate) address: Address,
    pub(crate) queue_type: QueueType,
    pub(crate) dead_letter: DeadLettering,
}

/// Who dead-letters on a broker's world (`dead-letter=consumer|broker`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum DeadLettering {
    /// The consumer, into dlqspec's DLQ, as the lesson has it; the broker only queues.
    #[default]
    Consumer,
    /// The broker too: the queue is declared with a dead-letter exchange (and, quorum, an
    /// `x-delivery-limit` from the spec's `max_attempts`), the consumer's dead-lettering is
    /// handed to it, and what it dead-letters is compared with the lesson's DLQ.
    Broker,
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
const KEYS: &[&str] = &["queue-type", "dead-letter"];

impl WorldChoice {
    /// Reads `fake` or `amqp://...?queue-type=quorum|classic&dead-letter=consumer|broker`
    /// (quorum and consumer when left out).
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
                    "`{key}` is not a setting of a RabbitMQ world{hint}: the settings are queue-type=quorum|classic and dead-letter=consumer|broker"
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
        let dead_letter = match address.param("dead-letter") {
            None | Some("consumer") => DeadLettering::Consumer,
            Some("broker") => DeadLettering::Broker,
            Some(other) => {
                return Err(format!(
                    "dead-letter is consumer (the consumer's DLQ alone, the default) or broker (RabbitMQ dead-letters too, compared with the lesson's DLQ), not `{other}`"
                ));
            }
        };
        Ok(WorldChoice::RabbitMq(RabbitMq {
            address,
            queue_type,
            dead_letter,
        }))
    }

    pub(crate) fn is_fake(&self) -> bool {
        matches!(self, WorldChoice::Fake)
    }

    /// A short name for a column or a line: `fake`, `rabbitmq quorum`, `rabbitmq classic`,
    /// `rabbitmq quorum dead-letter=broker`.
    pub(crate) fn short(&self) -> String {
        match self {
            WorldChoice::Fake => "fake".to_owned(),
            WorldChoice::RabbitMq(rabbit) => match rabbit.dead_letter {
                DeadLettering::Consumer => format!("rabbitmq {}", rabbit.queue_type.word()),
                DeadLettering::Broker => {
                    format!("rabbitmq {} dead-letter=broker", rabbit.queue_type.word())
                }
            },
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
        assert_eq!(rabbit.dead_letter, DeadLettering::Consumer);
        let broker =
            WorldChoice::parse("amqp://localhost?queue-type=quorum&dead-letter=broker").unwrap();
        assert_eq!(broker.short(), "rabbitmq quorum dead-letter=broker");
        assert_eq!(
            broker.to_string(),
            "amqp://guest@localhost:5672/%2F?queue-type=quorum&dead-letter=broker"
        );
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
            (
                "amqp://localhost?dead-letters=broker",
                "did you mean `dead-letter`?",
            ),
            (
                "amqp://localhost?dead-letter=dlx",
                "consumer (the consumer's DLQ alone, the default) or broker",
            ),
        ] {
            let error = WorldChoice::parse(text).unwrap_err();
            assert!(error.contains(says), "{text}: {error}");
        }
    }
}
