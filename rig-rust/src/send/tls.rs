//! TLS over the socket the Python rig connected, with rustls: the run's throwaway CA only, and the server's
//! name checked. The socket stays ours, so the tail-loss fix holds: close_notify is queued without waiting
//! for the peer's, then the send queue is drained (close.rs).

use super::error::SendError;
use super::link::wait_writable;
use crate::clock::now;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, RootCertStore};
use std::io::{Read, Write};
use std::sync::Arc;

/// Why the TLS session could not be made: the CA, the server's name, or the handshake.
#[derive(Debug)]
pub enum TlsError {
    NoCa {
        ca: String,
        error: std::io::Error,
    },
    Pem {
        ca: String,
        error: std::io::Error,
    },
    Root {
        ca: String,
        error: rustls::Error,
    },
    NoCertificate {
        ca: String,
    },
    Config(rustls::Error),
    ServerName {
        name: String,
        error: rustls::pki_types::InvalidDnsNameError,
    },
    /// The server's certificate, checked against the CA for the name: what a user changes.
    Unverified {
        ca: String,
        name: String,
        why: rustls::CertificateError,
    },
    Handshake {
        name: String,
        error: std::io::Error,
    },
}

impl std::fmt::Display for TlsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TlsError::NoCa { ca, error } => write!(f, "no CA certificate at {ca}: {error}"),
            TlsError::Pem { ca, error } => write!(f, "{ca}: {error}"),
            TlsError::Root { ca, error } => write!(f, "{ca}: {error}"),
            TlsError::NoCertificate { ca } => write!(f, "{ca} holds no certificate"),
            TlsError::Config(error) => write!(f, "{error}"),
            TlsError::ServerName { name, error } => write!(f, "{name}: {error}"),
            TlsError::Unverified { ca, name, why } => write!(
                f,
                "TLS: the server's certificate does not verify against {ca} for the name '{name}': {why:?}"
            ),
            TlsError::Handshake { name, error } => {
                write!(f, "TLS handshake with {name} failed: {error}")
            }
        }
    }
}

impl std::error::Error for TlsError {}

pub struct Tls {
    session: ClientConnection,
}

/// The socket as Read and Write for rustls, by its descriptor (the Python rig owns its life).
struct Socket(i32);

impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        // SAFETY: read into a buffer we borrow, of its length.
        let got = unsafe { libc::read(self.0, buf.as_mut_ptr().cast(), buf.len()) };
        if got < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(got as usize)
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // SAFETY: send from a slice we borrow; MSG_NOSIGNAL: a closed peer is an error, not a signal.
        let done =
            unsafe { libc::send(self.0, buf.as_ptr().cast(), buf.len(), libc::MSG_NOSIGNAL) };
        if done < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(done as usize)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn config(ca: &str) -> Result<Arc<ClientConfig>, TlsError> {
    let pem = std::fs::read(ca).map_err(|error| TlsError::NoCa {
        ca: ca.into(),
        error,
    })?;
    let mut roots = RootCertStore::empty();
    for cert in rustls_pemfile::certs(&mut pem.as_slice()) {
        let cert = cert.map_err(|error| TlsError::Pem {
            ca: ca.into(),
            error,
        })?;
        roots.add(cert).map_err(|error| TlsError::Root {
            ca: ca.into(),
            error,
        })?;
    }
    if roots.is_empty() {
        return Err(TlsError::NoCertificate { ca: ca.into() });
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(TlsError::Config)?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// What a failed handshake says: a certificate that does not verify names the CA and the name it was
/// checked against (what a user changes), anything else the connection's error.
fn handshake_error(error: std::io::Error, ca: &str, server_name: &str) -> TlsError {
    let inner = error
        .get_ref()
        .and_then(|e| e.downcast_ref::<rustls::Error>());
    if let Some(rustls::Error::InvalidCertificate(why)) = inner {
        return TlsError::Unverified {
            ca: ca.into(),
            name: server_name.into(),
            why: why.clone(),
        };
    }
    TlsError::Handshake {
        name: server_name.into(),
        error,
    }
}

impl Tls {
    /// The handshake, done; an error names what failed (the certificate, or the connection).
    pub fn connect(fd: i32, ca: &str, server_name: &str) -> Result<Tls, TlsError> {
        let name = ServerName::try_from(server_name.to_string()).map_err(|error| {
            TlsError::ServerName {
                name: server_name.into(),
                error,
            }
        })?;
        let session = ClientConnection::new(config(ca)?, name).map_err(TlsError::Config)?;
        let mut tls = Tls { session };
        let mut socket = Socket(fd);
        let deadline = now() + 60.0;
        while tls.session.is_handshaking() {
            match tls.session.complete_io(&mut socket) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && now() < deadline => {}
                Err(e) => {
                    let _ = tls.session.write_tls(&mut socket); // our alert, so the daemon logs why
                    return Err(handshake_error(e, ca, server_name));
                }
            }
        }
        Ok(tls)
    }

    pub fn version(&self) -> String {
        match self.session.protocol_version() {
            Some(rustls::ProtocolVersion::TLSv1_3) => "TLSv1.3".into(),
            Some(rustls::ProtocolVersion::TLSv1_2) => "TLSv1.2".into(),
            Some(other) => format!("{other:?}"),
            None => "unknown".into(),
        }
    }

    pub fn cipher(&self) -> String {
        self.session
            .negotiated_cipher_suite()
            .map(|suite| format!("{:?}", suite.suite()))
            .unwrap_or_else(|| "unknown".into())
    }

    /// Encrypt plaintext (at most one record's worth) into the session's outgoing buffer.
    pub fn write(&mut self, plaintext: &[u8]) {
        // Writing into the session only buffers; it cannot fail short of a closed session.
        let _ = self.session.writer().write_all(plaintext);
    }

    pub fn close_notify(&mut self) {
        self.session.send_close_notify();
    }

    /// Hand the session's records to the kernel. Ok(false) if the give-up time came first: the rest stays
    /// in the session and goes out first next time (the stream must stay whole).
    pub fn flush(&mut self, fd: i32, give_up: Option<f64>) -> Result<bool, SendError> {
        let mut socket = Socket(fd);
        while self.session.wants_write() {
            match self.session.write_tls(&mut socket) {
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
                    ) =>
                {
                    if !wait_writable(fd, give_up) {
                        return Ok(false);
                    }
                }
                Err(e) => return Err(SendError::Socket(e)),
            }
        }
        Ok(true)
    }
}
