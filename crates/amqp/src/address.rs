//! A broker's address, `amqp://USER:PASS@HOST:PORT/VHOST?KEY=VALUE`, read and shown without
//! its password.

use std::fmt;

/// Where a broker is and whom to log in as. Its `Display` never shows the password.
#[derive(Clone, PartialEq, Eq)]
pub struct Address {
    pub(crate) user: String,
    password: String,
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) vhost: String,
    /// The query's `KEY=VALUE` pairs, in order, for the caller to read (`queue-type=...`).
    pub query: Vec<(String, String)>,
}

/// RabbitMQ's port for AMQP without TLS.
pub(crate) const DEFAULT_PORT: u16 = 5672;

impl Address {
    /// Reads `amqp://USER:PASS@HOST:PORT/VHOST?KEY=VALUE&...`. User and password default to
    /// RabbitMQ's `guest`, the port to 5672, the virtual host to `/` (written `%2f` in the
    /// path, or left out). `Err` says what is wrong, without repeating the password.
    pub fn parse(text: &str) -> Result<Address, String> {
        let rest = match text.split_once("://") {
            Some(("amqp", rest)) => rest,
            Some(("amqps", _)) => {
                return Err("amqps:// (AMQP over TLS) is not supported: use amqp://".to_owned());
            }
            _ => return Err("expected an address such as amqp://guest:guest@localhost:5672/%2f?queue-type=quorum".to_owned()),
        };
        let (rest, query) = match rest.split_once('?') {
            Some((rest, query)) => (rest, query),
            None => (rest, ""),
        };
        let (authority, path) = match rest.split_once('/') {
            Some((authority, path)) => (authority, path),
            None => (rest, ""),
        };
        let (credentials, host_port) = match authority.rsplit_once('@') {
            Some((credentials, host_port)) => (Some(credentials), host_port),
            None => (None, authority),
        };
        let (user, password) = match credentials {
            None => ("guest".to_owned(), "guest".to_owned()),
            Some(credentials) => match credentials.split_once(':') {
                Some((user, password)) => (
                    decode(user, "the user")?,
                    decode(password, "the password")
                        .map_err(|_| "the password is not valid percent-encoding".to_owned())?,
                ),
                None => (decode(credentials, "the user")?, String::new()),
            },
        };
        let (host, port) = match host_port.rsplit_once(':') {
            Some((host, port)) if !host.ends_with(']') || host.starts_with('[') => {
                let port = port
                    .parse::<u16>()
                    .ok()
                    .filter(|port| *port > 0)
                    .ok_or_else(|| format!("the port `{port}` is not a number from 1 to 65535"))?;
                (host, port)
            }
            _ => (host_port, DEFAULT_PORT),
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err("the address names no host: amqp://HOST...".to_owned());
        }
        let vhost = if path.is_empty() {
            "/".to_owned()
        } else {
            decode(path, "the virtual host")?
        };
        let mut pairs = Vec::new();
        for pair in query.split('&').filter(|pair| !pair.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            pairs.push((decode(key, "a query key")?, decode(value, "a query value")?));
        }
        Ok(Address {
            user,
            password,
            host: host.to_owned(),
            port,
            vhost,
            query: pairs,
        })
    }

    pub(crate) fn password(&self) -> &str {
        &self.password
    }

    /// The value of query key `key`, if given.
    pub fn param(&self, key: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// `%XX` decoded; `Err` names `what` when it does not decode to UTF-8.
fn decode(text: &str, what: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text
                .get(i + 1..i + 3)
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
                .ok_or_else(|| format!("{what} has a `%` not followed by two hex digits"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("{what} is not UTF-8 once decoded"))
}

/// Percent-encodes what an address cannot hold as itself.
fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

impl fmt::Display for Address {
    /// `amqp://USER@HOST:PORT/VHOST?...`: the password is never shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        write!(
            f,
            "amqp://{}@{host}:{}/{}",
            encode(&self.user),
            self.port,
            encode(&self.vhost)
        )?;
        for (i, (key, value)) in self.query.iter().enumerate() {
            let separator = if i == 0 { '?' } else { '&' };
            write!(f, "{separator}{}={}", encode(key), encode(value))?;
        }
        Ok(())
    }
}

impl fmt::Debug for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_reads_every_part_and_shows_no_password() {
        let address =
            Address::parse("amqp://alice:s%40cret@broker.local:5673/lessons?queue-type=classic")
                .unwrap();
        assert_eq!(address.user, "alice");
        assert_eq!(address.password(), "s@cret");
        assert_eq!(
            (address.host.as_str(), address.port),
            ("broker.local", 5673)
        );
        assert_eq!(address.vhost, "lessons");
        assert_eq!(address.param("queue-type"), Some("classic"));
        let shown = address.to_string();
        assert_eq!(
            shown,
            "amqp://alice@broker.local:5673/lessons?queue-type=classic"
        );
        assert!(!format!("{address:?}").contains("cret"));
    }

    #[test]
    fn what_an_address_leaves_out_is_rabbitmqs_default() {
        let address = Address::parse("amqp://localhost").unwrap();
        assert_eq!(
            (
                address.user.as_str(),
                address.password(),
                address.port,
                address.vhost.as_str()
            ),
            ("guest", "guest", DEFAULT_PORT, "/")
        );
        assert_eq!(Address::parse("amqp://h/%2f").unwrap().vhost, "/");
        assert_eq!(address.to_string(), "amqp://guest@localhost:5672/%2F");
    }

    #[test]
    fn a_wrong_address_says_what_is_wrong_without_the_password() {
        for (text, says) in [
            ("http://localhost", "expected an address such as amqp://"),
            ("amqps://localhost", "not supported"),
            ("amqp://u:p@localhost:99999/", "port `99999`"),
            ("amqp://u:p@:5672/", "no host"),
            ("amqp://u:%zzsecret@localhost/", "the password is not valid"),
        ] {
            let error = Address::parse(text).unwrap_err();
            assert!(error.contains(says), "{text}: {error}");
            assert!(!error.contains("secret"), "{error}");
        }
    }
}
