//! Why a sender failed. A failed request also goes to Python as a FailedRecord with this text; the binary
//! prints it as "syslogbench-rig send: <this>" and exits 3.

use super::tls::TlsError;
use crate::io::BadRequest;
use crate::mapped::MapError;
use crate::templates::TemplateError;
use std::fmt;

#[derive(Debug)]
pub enum SendError {
    /// An argument given without its value.
    NeedsValue(String),
    BadFd,
    UnknownArgument(String),
    Usage,
    NoCa,
    NotASocket {
        fd: i32,
        error: std::io::Error,
    },
    Request(BadRequest),
    UnknownOp(String),
    Tls(TlsError),
    FileAndTemplates,
    Templates(TemplateError),
    Mapped(MapError),
    /// A file of offsets that does not have one per message.
    Offsets {
        offsets: usize,
        count: u64,
    },
    PastTheFile,
    UdpWithoutOffsets,
    /// The connection broke: what the send call said.
    Socket(std::io::Error),
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use SendError::*;
        match self {
            NeedsValue(word) => write!(f, "{word} needs a value"),
            BadFd => write!(f, "--fd needs a number"),
            UnknownArgument(word) => write!(f, "unknown argument {word}"),
            Usage => write!(f, "send needs --fd N --transport tcp|udp|tls"),
            NoCa => write!(f, "TLS needs --ca"),
            NotASocket { fd, error } => write!(f, "fd {fd} is not a socket: {error}"),
            Request(error) => write!(f, "{error}"),
            UnknownOp(op) => write!(f, "unknown op {op:?}"),
            Tls(error) => write!(f, "{error}"),
            FileAndTemplates => write!(
                f,
                "a send takes its messages from a file or from templates, not both"
            ),
            Templates(error) => write!(f, "{error}"),
            Mapped(error) => write!(f, "{error}"),
            Offsets { offsets, count } => write!(f, "{offsets} offsets for {count} messages"),
            PastTheFile => write!(f, "the offsets run past the rendered file"),
            UdpWithoutOffsets => write!(f, "a UDP send needs each datagram's offsets"),
            Socket(error) => write!(f, "send: {error}"),
        }
    }
}

impl std::error::Error for SendError {}

impl From<BadRequest> for SendError {
    fn from(error: BadRequest) -> Self {
        SendError::Request(error)
    }
}

impl From<TlsError> for SendError {
    fn from(error: TlsError) -> Self {
        SendError::Tls(error)
    }
}

impl From<TemplateError> for SendError {
    fn from(error: TemplateError) -> Self {
        SendError::Templates(error)
    }
}

impl From<MapError> for SendError {
    fn from(error: MapError) -> Self {
        SendError::Mapped(error)
    }
}
