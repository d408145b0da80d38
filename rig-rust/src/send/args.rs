//! The sender's command line: `send --fd N --transport tcp|udp|tls [--ca PATH] [--server-name NAME]`.

use super::error::SendError;

pub struct Args {
    /// The socket the Python rig connected (passed to this process).
    pub fd: i32,
    pub transport: String,
    /// TLS: the run's CA certificate, and the name the server's certificate must carry.
    pub ca: Option<String>,
    pub server_name: String,
}

impl Args {
    pub fn parse(argv: &[String]) -> Result<Args, SendError> {
        let mut parsed = Args {
            fd: -1,
            transport: String::new(),
            ca: None,
            server_name: "central".into(),
        };
        let mut words = argv.iter();
        while let Some(word) = words.next() {
            let mut value = || {
                words
                    .next()
                    .cloned()
                    .ok_or_else(|| SendError::NeedsValue(word.clone()))
            };
            match word.as_str() {
                "--fd" => parsed.fd = value()?.parse().map_err(|_| SendError::BadFd)?,
                "--transport" => parsed.transport = value()?,
                "--ca" => parsed.ca = Some(value()?),
                "--server-name" => parsed.server_name = value()?,
                other => return Err(SendError::UnknownArgument(other.into())),
            }
        }
        if parsed.fd < 0 || !["tcp", "udp", "tls"].contains(&parsed.transport.as_str()) {
            return Err(SendError::Usage);
        }
        Ok(parsed)
    }
}
