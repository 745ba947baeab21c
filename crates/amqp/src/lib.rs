//! A small blocking AMQP 0.9.1 client for RabbitMQ, for the broker world.
//!
//! One blocking connection, its channels, and the methods a broker world needs (declare,
//! delete, bind, publish with confirms, get, ack, nack), and a dead-lettered message's
//! `x-death` read (`death.rs`).
//!
//! Blocking on purpose: a world performs one call at a time, in order, and waits for each.
//! Every read is bounded: a frame by the negotiated `frame_max`, a message body by
//! `MAX_BODY`, each wait by the connection's timeout. Heartbeats are switched off: the world
//! is only ever waiting on the broker, so a dead broker shows as an error of the next call.
//!
//! Why dlqspec's own client, not one from crates.io: a broker world needs a dozen methods used
//! strictly one at a time, blocking, in the order the world performs them. lapin, the most used
//! 0.9.1 client, is async: with its smallest runtime (`async-global-executor`) it brings 65 crates
//! dlqspec does not have (`async-io`, `polling`, `flume`, `url` and its IDNA tables, `nom`, the
//! generated protocol of `amq-protocol`, ...) to build on two cores for every contributor and
//! every CI run, a thread of its own for the reactor, and a `block_on` at every call; amiquip,
//! the sync client, is unmaintained and pulls `mio` 0.6, `handlebars` and `pest` to generate
//! amq-protocol 1.4 at build time. This one (about 1,400 lines with its tests) adds no crate and
//! nothing to the build worth measuring, reads every body within 64 MiB (the tests check a frame
//! that lies about its sizes), and keeps the broker's password out of every message
//! (`Address`'s `Display`). What it does not do: TLS (`amqps://` is refused with a message),
//! heartbeats, consumers (`basic.consume`), SASL other than PLAIN.

// A crate attribute, so written once in each crate of the workspace (clippy's lint tables
// cannot carry a `cfg`): the unit tests set their cases up with files, threads and prints,
// and clippy.toml's rules hold the crate's code, which the build without `cfg(test)` lints.
#![cfg_attr(
    test,
    allow(
        clippy::disallowed_methods,
        clippy::disallowed_macros,
        clippy::disallowed_types,
        reason = "tests: unit tests set their cases up with files, processes and prints"
    )
)]

pub(crate) mod address;
pub mod death;
pub mod wire;

use std::collections::{BTreeSet, HashMap};
use std::io::{BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

pub use address::Address;
use wire::{
    FRAME_BODY, FRAME_END, FRAME_HEADER, FRAME_HEARTBEAT, FRAME_METHOD, Field, Properties, Reader,
    Table, Writer, frame,
};

/// The largest frame dlqspec accepts (and offers): RabbitMQ's default.
const FRAME_MAX: u32 = 131_072;

/// The largest message body dlqspec reads back: its own messages are a spec's bodies, far
/// smaller; a larger one is refused rather than allocated.
pub(crate) const MAX_BODY: u64 = 64 << 20;

/// How a call on the broker failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// No connection could be made (nothing listens there, the name does not resolve...).
    Unreachable(String),
    /// The connection broke, or the broker did not answer in time.
    Lost(String),
    /// The broker closed the connection, with its reply code and text (403: the credentials
    /// are refused; 320: the broker is shutting down; 530: no access to the virtual host).
    Closed { code: u16, text: String },
    /// The broker closed one channel (404 no such queue, 405 locked by another connection,
    /// 406 a precondition failed): the connection is still good.
    Channel { code: u16, text: String },
    /// The broker sent what is not AMQP 0.9.1.
    Malformed(String),
}

impl Error {
    /// Whether the connection survives this error (only a channel's own error leaves it).
    pub fn is_channel_error(&self) -> bool {
        matches!(self, Error::Channel { .. })
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Unreachable(why) => write!(f, "cannot connect: {why}"),
            Error::Lost(why) => write!(f, "the connection was lost: {why}"),
            Error::Closed { code: 403, text } => {
                write!(f, "the broker refused the credentials (403: {text})")
            }
            Error::Closed { code: 530, text } => {
                write!(
                    f,
                    "the broker refused access to the virtual host (530: {text})"
                )
            }
            Error::Closed { code, text } => {
                write!(f, "the broker closed the connection ({code}: {text})")
            }
            Error::Channel { code, text } => {
                write!(f, "the broker closed the channel ({code}: {text})")
            }
            Error::Malformed(why) => write!(f, "the broker sent what is not AMQP 0.9.1: {why}"),
        }
    }
}

impl From<wire::Malformed> for Error {
    fn from(malformed: wire::Malformed) -> Self {
        Error::Malformed(malformed.0)
    }
}

/// A message taken by `basic.get`.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    pub tag: u64,
    pub(crate) redelivered: bool,
    pub properties: Properties,
    pub(crate) body: Vec<u8>,
    /// How many messages were left ready behind it.
    pub(crate) message_count: u32,
}

/// What `queue.declare` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Declared {
    /// Messages ready (neither delivered nor unacked).
    pub messages: u32,
    pub(crate) consumers: u32,
}

/// The flags of `queue.declare`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueFlags {
    pub passive: bool,
    pub durable: bool,
    pub exclusive: bool,
    pub auto_delete: bool,
}

/// One connection to a broker, used from one thread.
pub struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    frame_max: u32,
    channel_max: u16,
    open: BTreeSet<u16>,
    /// Channels in confirm mode, with the sequence number of their last publish.
    published: HashMap<u16, u64>,
    /// The first error that broke the connection: every later call returns it.
    broken: Option<Error>,
}

impl Connection {
    /// Connects and logs in; each wait (the connection, every answer later) is at most
    /// `timeout`.
    pub fn open(address: &Address, timeout: Duration) -> Result<Connection, Error> {
        let targets = (address.host.as_str(), address.port)
            .to_socket_addrs()
            .map_err(|error| Error::Unreachable(error.to_string()))?;
        let mut last = Error::Unreachable("the host name resolves to no address".to_owned());
        let mut connected = None;
        for target in targets {
            match TcpStream::connect_timeout(&target, timeout) {
                Ok(stream) => {
                    connected = Some(stream);
                    break;
                }
                Err(error) => last = Error::Unreachable(error.to_string()),
            }
        }
        let stream = connected.ok_or(last)?;
        let setup = |stream: &TcpStream| -> std::io::Result<TcpStream> {
            stream.set_nodelay(true)?;
            stream.set_read_timeout(Some(timeout))?;
            stream.set_write_timeout(Some(timeout))?;
            stream.try_clone()
        };
        let writer = setup(&stream).map_err(|error| Error::Unreachable(error.to_string()))?;
        let mut connection = Connection {
            reader: BufReader::new(stream),
            writer,
            frame_max: FRAME_MAX,
            channel_max: 2047,
            open: BTreeSet::new(),
            published: HashMap::new(),
            broken: None,
        };
        connection.handshake(address).inspect_err(|error| {
            connection.broken = Some(error.clone());
        })?;
        Ok(connection)
    }

    fn handshake(&mut self, address: &Address) -> Result<(), Error> {
        self.write(b"AMQP\x00\x00\x09\x01")?;
        let start = self.expect(0, 10, 10)?;
        let mut reader = Reader::new(&start);
        let (_major, _minor) = (reader.u8()?, reader.u8()?);
        let _server = reader.table()?;
        let mechanisms = reader.long_string()?;
        if !mechanisms.split(' ').any(|m| m == "PLAIN") {
            return Err(Error::Malformed(format!(
                "the broker offers no PLAIN login (it offers {mechanisms})"
            )));
        }
        let capabilities = Table::default().with("authentication_failure_close", Field::Bool(true));
        let client = Table::default()
            .with("product", Field::text("dlqspec"))
            // The workspace's version, one for its three crates: dlqspec's.
            .with("version", Field::text(env!("CARGO_PKG_VERSION")))
            .with("capabilities", Field::Table(capabilities));
        let mut response = vec![0u8];
        response.extend_from_slice(address.user.as_bytes());
        response.push(0);
        response.extend_from_slice(address.password().as_bytes());
        let mut start_ok = Writer::method(10, 11);
        start_ok
            .table(&client)
            .short_string("PLAIN")
            .long_bytes(&response)
            .short_string("en_US");
        self.send(0, start_ok)?;
        let tune = match self.expect(0, 10, 30) {
            // A broker that closes the socket at once after the login refused it.
            Err(Error::Lost(_)) => {
                return Err(Error::Closed {
                    code: 403,
                    text: "the connection was closed during the login".to_owned(),
                });
            }
            other => other?,
        };
        let mut reader = Reader::new(&tune);
        let channel_max = reader.u16()?;
        let frame_max = reader.u32()?;
        let _heartbeat = reader.u16()?;
        if channel_max != 0 {
            self.channel_max = self.channel_max.min(channel_max);
        }
        if frame_max != 0 {
            self.frame_max = FRAME_MAX.min(frame_max);
        }
        let mut tune_ok = Writer::method(10, 31);
        tune_ok.u16(self.channel_max).u32(self.frame_max).u16(0);
        self.send(0, tune_ok)?;
        let mut open = Writer::method(10, 40);
        open.short_string(&address.vhost)
            .short_string("")
            .bit(false);
        self.send(0, open)?;
        self.expect(0, 10, 41)?;
        Ok(())
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), Error> {
        if let Some(broken) = &self.broken {
            return Err(broken.clone());
        }
        self.writer.write_all(bytes).map_err(|error| {
            let lost = Error::Lost(error.to_string());
            self.broken = Some(lost.clone());
            lost
        })
    }

    fn send(&mut self, channel: u16, method: Writer) -> Result<(), Error> {
        self.write(&frame(FRAME_METHOD, channel, &method.bytes))
    }

    /// Reads one frame: its type, channel and payload.
    fn read_frame(&mut self) -> Result<(u8, u16, Vec<u8>), Error> {
        if let Some(broken) = &self.broken {
            return Err(broken.clone());
        }
        let read = |reader: &mut BufReader<TcpStream>, frame_max: u32| {
            let mut header = [0u8; 7];
            reader.read_exact(&mut header)?;
            let size = u32::from_be_bytes([header[3], header[4], header[5], header[6]]);
            Ok::<_, std::io::Error>((header, size, frame_max)).and_then(|(header, size, max)| {
                if header[0] == b'A' {
                    // The broker answered the protocol header with its own: another version.
                    return Err(std::io::Error::other(
                        "the broker speaks another AMQP version",
                    ));
                }
                if size > max {
                    return Err(std::io::Error::other(format!(
                        "a frame of {size} bytes, more than the {max} agreed"
                    )));
                }
                let mut payload = vec![0u8; size as usize + 1];
                reader.read_exact(&mut payload)?;
                if payload.pop() != Some(FRAME_END) {
                    return Err(std::io::Error::other("a frame without its end octet"));
                }
                Ok((
                    header[0],
                    u16::from_be_bytes([header[1], header[2]]),
                    payload,
                ))
            })
        };
        read(&mut self.reader, self.frame_max).map_err(|error| {
            let error = match error.kind() {
                std::io::ErrorKind::Other => Error::Malformed(error.to_string()),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
                    Error::Lost("the broker did not answer in time".to_owned())
                }
                std::io::ErrorKind::UnexpectedEof => {
                    Error::Lost("the broker closed the connection".to_owned())
                }
                _ => Error::Lost(error.to_string()),
            };
            self.broken = Some(error.clone());
            error
        })
    }

    /// Reads frames until method `class.method` arrives on `channel`, and returns its
    /// arguments. A close of the connection or of that channel is the error it says; a
    /// publisher confirm for another channel is noted on the way.
    fn expect(&mut self, channel: u16, class: u16, method: u16) -> Result<Vec<u8>, Error> {
        loop {
            let (kind, on, payload) = self.read_frame()?;
            if kind == FRAME_HEARTBEAT {
                continue;
            }
            if kind != FRAME_METHOD {
                return Err(self.malformed(format!(
                    "a frame of type {kind} on channel {on} where a method was awaited"
                )));
            }
            let mut reader = Reader::new(&payload);
            let (got_class, got_method) = (reader.u16()?, reader.u16()?);
            let args = payload[4..].to_vec();
            match (on, got_class, got_method) {
                (0, 10, 50) => {
                    let code = reader.u16()?;
                    let text = reader.short_string()?;
                    let _ = self.send(0, Writer::method(10, 51));
                    let closed = Error::Closed { code, text };
                    self.broken = Some(closed.clone());
                    return Err(closed);
                }
                (on, 20, 40) if on != 0 => {
                    let code = reader.u16()?;
                    let text = reader.short_string()?;
                    self.send(on, Writer::method(20, 41))?;
                    self.open.remove(&on);
                    self.published.remove(&on);
                    if on == channel {
                        return Err(Error::Channel { code, text });
                    }
                }
                (on, c, m) if on == channel && c == class && m == method => return Ok(args),
                (on, 60, 80) if self.published.contains_key(&on) && on != channel => {}
                (on, c, m) => {
                    return Err(self.malformed(format!(
                        "method {c}.{m} on channel {on} where {class}.{method} on channel {channel} was awaited"
                    )));
                }
            }
        }
    }

    fn malformed(&mut self, why: String) -> Error {
        let error = Error::Malformed(why);
        self.broken = Some(error.clone());
        error
    }

    /// Opens a channel and returns its number.
    pub fn open_channel(&mut self) -> Result<u16, Error> {
        let number = (1..=self.channel_max)
            .find(|n| !self.open.contains(n))
            .ok_or_else(|| Error::Malformed("every channel of the connection is open".into()))?;
        let mut open = Writer::method(20, 10);
        open.short_string("");
        self.send(number, open)?;
        self.expect(number, 20, 11)?;
        self.open.insert(number);
        Ok(number)
    }

    /// Closes a channel: the broker requeues what was delivered on it and not acked.
    pub fn close_channel(&mut self, channel: u16) -> Result<(), Error> {
        if !self.open.contains(&channel) {
            return Ok(());
        }
        let mut close = Writer::method(20, 40);
        close
            .u16(200)
            .short_string("closed by dlqspec")
            .u16(0)
            .u16(0);
        self.send(channel, close)?;
        self.expect(channel, 20, 41)?;
        self.open.remove(&channel);
        self.published.remove(&channel);
        Ok(())
    }

    /// Puts the channel in confirm mode: each `publish` on it then waits for the broker's ack.
    pub fn confirm_select(&mut self, channel: u16) -> Result<(), Error> {
        let mut select = Writer::method(85, 10);
        select.bit(false);
        self.send(channel, select)?;
        self.expect(channel, 85, 11)?;
        self.published.insert(channel, 0);
        Ok(())
    }

    pub fn declare_queue(
        &mut self,
        channel: u16,
        name: &str,
        flags: QueueFlags,
        arguments: &Table,
    ) -> Result<Declared, Error> {
        let mut declare = Writer::method(50, 10);
        declare
            .u16(0)
            .short_string(name)
            .bit(flags.passive)
            .bit(flags.durable)
            .bit(flags.exclusive)
            .bit(flags.auto_delete)
            .bit(false)
            .table(arguments);
        self.send(channel, declare)?;
        let ok = self.expect(channel, 50, 11)?;
        let mut reader = Reader::new(&ok);
        let _name = reader.short_string()?;
        Ok(Declared {
            messages: reader.u32()?,
            consumers: reader.u32()?,
        })
    }

    /// Deletes a queue, with what it held; a queue that is not there is no error (RabbitMQ).
    pub fn delete_queue(&mut self, channel: u16, name: &str) -> Result<(), Error> {
        self.send(channel, Self::delete(name, false))?;
        self.expect(channel, 50, 41)?;
        Ok(())
    }

    /// `delete_queue` without waiting for the answer (none comes): the next call on the same
    /// channel is performed after it.
    pub fn delete_queue_nowait(&mut self, channel: u16, name: &str) -> Result<(), Error> {
        self.send(channel, Self::delete(name, true))
    }

    fn delete(name: &str, nowait: bool) -> Writer {
        let mut delete = Writer::method(50, 40);
        delete
            .u16(0)
            .short_string(name)
            .bit(false)
            .bit(false)
            .bit(nowait);
        delete
    }

    /// Publishes a message; on a channel in confirm mode, returns once the broker has it.
    pub fn publish(
        &mut self,
        channel: u16,
        exchange: &str,
        routing_key: &str,
        properties: &Properties,
        body: &[u8],
    ) -> Result<(), Error> {
        let mut publish = Writer::method(60, 40);
        publish
            .u16(0)
            .short_string(exchange)
            .short_string(routing_key)
            .bit(false)
            .bit(false);
        let mut bytes = frame(FRAME_METHOD, channel, &publish.bytes);
        bytes.extend(frame(
            FRAME_HEADER,
            channel,
            &properties.header(body.len() as u64),
        ));
        let chunk = (self.frame_max as usize).saturating_sub(8).max(1);
        for piece in body.chunks(chunk) {
            bytes.extend(frame(FRAME_BODY, channel, piece));
        }
        self.write(&bytes)?;
        let Some(sequence) = self.published.get_mut(&channel) else {
            return Ok(());
        };
        *sequence += 1;
        let sequence = *sequence;
        loop {
            let (kind, on, payload) = self.read_frame()?;
            if kind == FRAME_HEARTBEAT {
                continue;
            }
            let mut reader = Reader::new(&payload);
            let method = (reader.u16()?, reader.u16()?);
            match (kind, on, method) {
                (FRAME_METHOD, _, (60, 80)) if on == channel => {
                    let tag = reader.u64()?;
                    let multiple = reader.bit()?;
                    if tag == sequence || (multiple && tag >= sequence) {
                        return Ok(());
                    }
                }
                (FRAME_METHOD, _, (60, 120)) if on == channel => {
                    return Err(Error::Channel {
                        code: 0,
                        text: "the broker did not take the message (basic.nack)".to_owned(),
                    });
                }
                _ => {
                    // Anything else is read as an answer would be: closes become errors.
                    return Err(self.unexpected(kind, on, payload, channel));
                }
            }
        }
    }

    /// The error for a frame that is not what a wait expected: a close, or garbage.
    fn unexpected(&mut self, kind: u8, on: u16, payload: Vec<u8>, channel: u16) -> Error {
        let mut reader = Reader::new(&payload);
        let method = (reader.u16(), reader.u16());
        match (kind, on, method) {
            (FRAME_METHOD, 0, (Ok(10), Ok(50))) => {
                let code = reader.u16().unwrap_or(0);
                let text = reader.short_string().unwrap_or_default();
                let _ = self.send(0, Writer::method(10, 51));
                let closed = Error::Closed { code, text };
                self.broken = Some(closed.clone());
                closed
            }
            (FRAME_METHOD, on, (Ok(20), Ok(40))) if on == channel => {
                let code = reader.u16().unwrap_or(0);
                let text = reader.short_string().unwrap_or_default();
                let _ = self.send(on, Writer::method(20, 41));
                self.open.remove(&on);
                self.published.remove(&on);
                Error::Channel { code, text }
            }
            _ => self.malformed(format!(
                "a frame of type {kind} on channel {on} out of turn"
            )),
        }
    }

    /// `basic.get` without auto-ack: the message stays unacked on `channel` until acked,
    /// nacked, or the channel closes. `None` when the queue has nothing ready.
    pub fn get(&mut self, channel: u16, queue: &str) -> Result<Option<Delivery>, Error> {
        let mut get = Writer::method(60, 70);
        get.u16(0).short_string(queue).bit(false);
        self.send(channel, get)?;
        loop {
            let (kind, on, payload) = self.read_frame()?;
            if kind == FRAME_HEARTBEAT {
                continue;
            }
            let mut reader = Reader::new(&payload);
            match (kind, on, reader.u16(), reader.u16()) {
                (FRAME_METHOD, on, Ok(60), Ok(72)) if on == channel => return Ok(None),
                (FRAME_METHOD, on, Ok(60), Ok(71)) if on == channel => {
                    let tag = reader.u64()?;
                    let redelivered = reader.bit()?;
                    let _exchange = reader.short_string()?;
                    let _routing_key = reader.short_string()?;
                    let message_count = reader.u32()?;
                    let (properties, body) = self.content(channel)?;
                    return Ok(Some(Delivery {
                        tag,
                        redelivered,
                        properties,
                        body,
                        message_count,
                    }));
                }
                _ => return Err(self.unexpected(kind, on, payload, channel)),
            }
        }
    }

    /// The content header and body frames that follow a delivery.
    fn content(&mut self, channel: u16) -> Result<(Properties, Vec<u8>), Error> {
        let (kind, on, header) = self.read_frame()?;
        if kind != FRAME_HEADER || on != channel {
            return Err(self.malformed("a delivery without its content header".to_owned()));
        }
        let (size, properties) = Properties::read_header(&header)?;
        if size > MAX_BODY {
            return Err(self.malformed(format!(
                "a message body of {size} bytes, more than the {MAX_BODY} dlqspec reads"
            )));
        }
        let mut body = Vec::with_capacity(size as usize);
        while (body.len() as u64) < size {
            let (kind, on, piece) = self.read_frame()?;
            if kind != FRAME_BODY || on != channel || body.len() as u64 + piece.len() as u64 > size
            {
                return Err(self.malformed("a message body that does not match its header".into()));
            }
            body.extend_from_slice(&piece);
        }
        Ok((properties, body))
    }

    /// Acknowledges one delivery of `channel` (the broker answers nothing).
    pub fn ack(&mut self, channel: u16, tag: u64) -> Result<(), Error> {
        let mut ack = Writer::method(60, 80);
        ack.u64(tag).bit(false);
        self.send(channel, ack)
    }

    /// Rejects one delivery of `channel`; with `requeue` the broker puts it back.
    pub fn nack(&mut self, channel: u16, tag: u64, requeue: bool) -> Result<(), Error> {
        let mut nack = Writer::method(60, 120);
        nack.u64(tag).bit(false).bit(requeue);
        self.send(channel, nack)
    }

    /// Closes the connection politely (the broker then logs no error).
    pub fn close(mut self) {
        let mut close = Writer::method(10, 50);
        close.u16(200).short_string("dlqspec is done").u16(0).u16(0);
        if self.send(0, close).is_ok() {
            let _ = self.expect(0, 10, 51);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A server on a loopback port that reads the protocol header and answers `reply`.
    fn server(reply: Vec<u8>) -> Address {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let port = listener.local_addr().expect("its address").port();
        std::thread::spawn(move || {
            if let Ok((mut stream, _)) = listener.accept() {
                let mut header = [0u8; 8];
                let _ = stream.read_exact(&mut header);
                let _ = stream.write_all(&reply);
            }
        });
        Address::parse(&format!("amqp://u:secret-pw@127.0.0.1:{port}/")).expect("an address")
    }

    fn open(address: &Address) -> Error {
        match Connection::open(address, Duration::from_secs(10)) {
            Ok(_) => panic!("a connection to a server that is no broker"),
            Err(error) => error,
        }
    }

    #[test]
    fn a_frame_longer_than_agreed_is_refused_before_it_is_read() {
        // A method frame claiming 4 GiB: refused from its header, nothing allocated for it.
        let mut reply = vec![FRAME_METHOD, 0, 0];
        reply.extend_from_slice(&u32::MAX.to_be_bytes());
        let error = open(&server(reply));
        assert!(
            matches!(&error, Error::Malformed(why) if why.contains("more than the 131072 agreed")),
            "{error:?}"
        );
    }

    #[test]
    fn a_server_of_another_protocol_version_or_none_is_told_as_such() {
        let error = open(&server(b"AMQP\x00\x00\x08\x00".to_vec()));
        assert!(
            matches!(&error, Error::Malformed(why) if why.contains("another AMQP version")),
            "{error:?}"
        );
        let error = open(&server(Vec::new()));
        assert!(matches!(error, Error::Lost(_)), "{error:?}");
        assert!(!error.to_string().contains("secret-pw"));
    }

    #[test]
    fn nothing_listening_is_unreachable() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let port = listener.local_addr().expect("its address").port();
        drop(listener);
        let address = Address::parse(&format!("amqp://127.0.0.1:{port}")).expect("an address");
        assert!(matches!(open(&address), Error::Unreachable(_)));
    }
}
