"""TLS on one daemon per family, at small scale: exact counts, every DONE, and a refused server certificate."""

from __future__ import annotations

import json
import time

import jsonschema
import pytest

from syslogbench.host import profiles
from syslogbench.rig import tlscerts

from .conftest import ROOT
from .test_runs import EXPECTED, SENDERS, check_done_log, check_split_files

pytestmark = pytest.mark.integration
SCHEMA = json.loads((ROOT / "results" / "schema.json").read_text())


@pytest.mark.parametrize(
    ("profile", "scenario", "format_"),
    [
        ("rsyslog-8.2504", "tls", "rfc3164"),
        ("syslog-ng-4.8", "tls-rfc5424", "rfc5424"),
        # sid's versions: rsyslog 8.2610 reworked its TLS netstream defaults (it warns of anonymous TLS).
        ("rsyslog-8.2610", "tls", "rfc3164"),
        ("syslog-ng-4.12", "tls-rfc5424", "rfc5424"),
    ],
)
def test_tls_delivers_every_message_once(bench, profile: str, scenario: str, format_: str) -> None:
    run = bench(profile, {"SCENARIO": scenario})
    result = run.result
    jsonschema.validate(result, SCHEMA)
    assert run.code == 0 and result["verdict"] == "pass", result["errors"]
    assert (result["scenario"]["transport"], result["scenario"]["format"]) == ("tls", format_)
    m = result["messages"]
    assert (m["sent"], m["received"], m["lost"], m["duplicated"]) == (EXPECTED, EXPECTED, 0, 0)
    assert (m["misfiled"], m["unknown"], m["done_received"], m["done_log_extra"]) == (0, 0, len(SENDERS), 0)
    check_split_files(run.logs, profiles.resolve(profile).daemon)
    check_done_log(run.logs)
    # Every sender verified the daemon and says what it negotiated; each daemon closed after close_notify.
    for sender in result["senders"]:
        assert sender["tls"]["version"] in ("TLSv1.2", "TLSv1.3"), sender
        assert sender["tls"]["cipher"] and sender["tls"]["peer_closed"] is True, sender
    assert any(note.startswith("TLS (sender side): TLSv1.") for note in result["notes"])


def test_a_server_certificate_that_does_not_verify_fails_the_run(bench, tmp_path) -> None:
    """Senders trusting another CA refuse the daemon: a clear error verdict, quickly, not a hang."""
    wrong = tlscerts.generate(tmp_path / "wrong")["ca.pem"]
    override = (
        "services:\n  generator:\n"
        f"    environment:\n      TLS_CA: /wrong-ca.pem\n"
        f"    volumes:\n      - {wrong}:/wrong-ca.pem:ro\n"
    )
    started = time.monotonic()
    run = bench("syslog-ng-4.8", {"SCENARIO": "tls", "HOSTS": "1"}, extra_compose=override)
    took = time.monotonic() - started
    result = run.result
    jsonschema.validate(result, SCHEMA)
    assert result["verdict"] == "error" and run.code == 3, result["errors"]
    errors = " ".join(result["errors"])
    assert "a sender failed before the start" in errors
    assert "does not verify against /wrong-ca.pem for the name 'central'" in errors
    assert result["messages"]["received"] == 0
    assert all(c["State"] == "exited" for c in run.containers)
    assert took < 120, f"the refused run took {took:.0f} s"
