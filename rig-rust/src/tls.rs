//! TLS over the socket the Python rig connected, with rustls: the run's throwaway CA only, and the server's
//! name checked. The socket stays ours, so the tail-loss fix holds: close_notify is queued without waiting
//! for the peer's, then the send queue is drained (send.rs).

use crate::clock::now;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, RootCertStore};
use std::io::{Read, Write};
use std::sync::Arc;

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

fn config(ca: &str) -> Result<Arc<ClientConfig>, String> {
    let pem = std::fs::read(ca).map_err(|e| format!("no CA certificate at {ca}: {e}"))?;
    let mut roots = RootCertStore::empty();
    for cert in rustls_pemfile::certs(&mut pem.as_slice()) {
        let cert = cert.map_err(|e| format!("{ca}: {e}"))?;
        roots.add(cert).map_err(|e| format!("{ca}: {e}"))?;
    }
    if roots.is_empty() {
        return Err(format!("{ca} holds no certificate"));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// What a failed handshake says: a certificate that does not verify names the CA and the name it was
/// checked against (what a user changes), anything else the connection's error.
fn handshake_error(error: &std::io::Error, ca: &str, server_name: &str) -> String {
    let inner = error
        .get_ref()
        .and_then(|e| e.downcast_ref::<rustls::Error>());
    if let Some(rustls::Error::InvalidCertificate(why)) = inner {
        return format!(
            "TLS: the server's certificate does not verify against {ca} for the name '{server_name}': {why:?}"
        );
    }
    format!("TLS handshake with {server_name} failed: {error}")
}

impl Tls {
    /// The handshake, done; an error names what failed (the certificate, or the connection).
    pub fn connect(fd: i32, ca: &str, server_name: &str) -> Result<Tls, String> {
        let name = ServerName::try_from(server_name.to_string())
            .map_err(|e| format!("{server_name}: {e}"))?;
        let session = ClientConnection::new(config(ca)?, name).map_err(|e| e.to_string())?;
        let mut tls = Tls { session };
        let mut socket = Socket(fd);
        let deadline = now() + 60.0;
        while tls.session.is_handshaking() {
            match tls.session.complete_io(&mut socket) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && now() < deadline => {}
                Err(e) => {
                    let _ = tls.session.write_tls(&mut socket); // our alert, so the daemon logs why
                    return Err(handshake_error(&e, ca, server_name));
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
    pub fn flush(&mut self, fd: i32, give_up: Option<f64>) -> Result<bool, String> {
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
                    if !crate::send::wait_writable(fd, give_up) {
                        return Ok(false);
                    }
                }
                Err(e) => return Err(format!("send: {e}")),
            }
        }
        Ok(true)
    }
}
