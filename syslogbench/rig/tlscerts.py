"""Throwaway TLS material for one run: a CA and a server certificate for the daemon's name.

The watcher makes them in the control volume before it writes run.json, only for a TLS scenario, so no key
is ever committed. EC P-256 keeps generation quick. The openssl command line (Debian's openssl package in
the watcher image) does the work: stdlib Python cannot make certificates. The CA's key lives only in a
temporary directory and is gone when this returns.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import tempfile
from pathlib import Path

SERVER_NAME = "central"  # the daemon's network alias in compose.yaml
FILES = ("ca.pem", "server.pem", "server.key")
VALID_DAYS = 2
OPENSSL_TIMEOUT_S = 30

SERVER_EXTENSIONS = """\
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:{name}
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
"""


class CertError(RuntimeError):
    """openssl failed; the message carries what it said."""


def openssl(*args: str, cwd: Path) -> None:
    try:
        subprocess.run(
            ["openssl", *args], cwd=cwd, check=True, capture_output=True, text=True, timeout=OPENSSL_TIMEOUT_S
        )
    except FileNotFoundError as error:
        raise CertError("the openssl command is missing: install Debian's openssl package") from error
    except subprocess.CalledProcessError as error:
        raise CertError(f"openssl {args[0]} failed: {error.stderr.strip()}") from error


def new_key(path: Path, cwd: Path) -> None:
    openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(path), cwd=cwd)


def make_ca(work: Path) -> None:
    new_key(work / "ca.key", work)
    openssl(
        "req", "-x509", "-new", "-key", "ca.key", "-sha256", "-days", str(VALID_DAYS),
        "-subj", "/CN=syslogbench throwaway CA",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        "-out", "ca.pem",
        cwd=work,
    )  # fmt: skip


def make_server(work: Path, name: str) -> None:
    new_key(work / "server.key", work)
    openssl("req", "-new", "-key", "server.key", "-subj", f"/CN={name}", "-out", "server.csr", cwd=work)
    (work / "server.ext").write_text(SERVER_EXTENSIONS.format(name=name))
    openssl(
        "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-set_serial", f"0x{secrets.token_hex(16)}", "-sha256", "-days", str(VALID_DAYS),
        "-extfile", "server.ext", "-out", "server.pem",
        cwd=work,
    )  # fmt: skip


def generate(out_dir: Path, name: str = SERVER_NAME) -> dict[str, Path]:
    """Write ca.pem, server.pem and server.key (mode 0600) into out_dir; return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = {}
    with tempfile.TemporaryDirectory(prefix="syslogbench-tls-") as temp:
        work = Path(temp)
        make_ca(work)
        make_server(work, name)
        for file_name in FILES:
            target = out_dir / file_name
            mode = 0o600 if file_name.endswith(".key") else 0o644
            # Created with its final mode, so the key is never readable by others, not even for a moment.
            descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
            with os.fdopen(descriptor, "wb") as handle:
                handle.write((work / file_name).read_bytes())
            os.chmod(target, mode)
            written[file_name] = target
    return written
