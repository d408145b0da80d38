"""Pre-processing rows and raw receive: the expected subset, the payload forms, the proofs, reconciliation."""

from __future__ import annotations

import calendar
import dataclasses
import json
import re
from pathlib import Path

import pytest

from syslogbench.host import profiles, render
from syslogbench.model import messages, preprocess, scenarios
from syslogbench.model.ledger import Ledger
from syslogbench.model.messages import SenderId
from syslogbench.model.preprocess import Expectation
from syslogbench.rig import reconcile

SEED = 2014
NOW = calendar.timegm((2026, 11, 22, 10, 0, 0))
COUNT = 300
PER_SENDER = COUNT + 1
SENDERS = [SenderId(1, 1), SenderId(1, 2), SenderId(2, 1)]
KV_RE = re.compile(rb"h=(\d+) s=(\d+) q=(\d+) f=(\d+) v=(\d+) x=(\S+)")


def lines(sender: SenderId, payload: str = "text", count: int = COUNT, size: int = 100) -> list[bytes]:
    return list(messages.render_lines(SEED, sender, count, NOW, size=size, payload=payload))


def message_part(line: bytes) -> str:
    """What the daemon filters on: the MSG after the tag."""
    return line.split(b"]: ", 1)[1].rstrip(b"\n").decode()


# --- which sequence numbers must arrive ---------------------------------------------------------------------


@pytest.mark.parametrize("sender", SENDERS)
def test_regexp_subset_is_what_the_daemons_regexp_selects(sender: SenderId) -> None:
    """The reconciler's subset equals what FILTER_REGEXP (the one the configs carry) matches in the lines."""
    mask = preprocess.expected_mask("regexp", SEED, sender, PER_SENDER)
    pattern = re.compile(preprocess.FILTER_REGEXP)
    matched = [1 if pattern.search(message_part(line)) else 0 for line in lines(sender)]
    assert list(mask[1:]) == matched
    assert mask[0] == 0 and mask[PER_SENDER] == 1  # the DONE (q=301, odd) passes
    assert sum(mask) == COUNT // 2 + 1


def test_regexp_subset_is_the_even_sequence_numbers_and_the_done() -> None:
    mask = preprocess.expected_mask("regexp", SEED, SenderId(1, 1), 11)
    assert [seq for seq in range(12) if mask[seq]] == [2, 4, 6, 8, 10, 11]
    mask = preprocess.expected_mask("regexp", SEED, SenderId(1, 1), 10)
    assert [seq for seq in range(11) if mask[seq]] == [2, 4, 6, 8, 10]


@pytest.mark.parametrize("sender", SENDERS)
def test_facility_subset_follows_the_senders_seeded_draw(sender: SenderId) -> None:
    mask = preprocess.expected_mask("facility-filter", SEED, sender, PER_SENDER)
    drawn = [int(messages.BODY_RE.search(line).group(4)) for line in lines(sender)]
    kept = [1 if facility <= 11 else 0 for facility in drawn]
    kept[-1] = 1  # the DONE always passes
    assert list(mask[1:]) == kept
    # Roughly half the 24 facilities: a filter that keeps all or none would prove nothing.
    assert 0.35 * COUNT < sum(mask) < 0.65 * COUNT


def test_facility_subset_depends_on_the_seed() -> None:
    one = preprocess.expected_mask("facility-filter", 1, SenderId(1, 1), PER_SENDER)
    two = preprocess.expected_mask("facility-filter", 2, SenderId(1, 1), PER_SENDER)
    assert one != two


def test_kept_facilities_are_one_range_with_syslog_ng_names() -> None:
    """The rsyslog config tests a range, syslog-ng's lists names: both need a contiguous 0..11."""
    kept = list(preprocess.KEPT_FACILITIES)
    assert kept == list(range(kept[0], kept[-1] + 1))
    assert preprocess.daemon_params()["facility_names"][-1] == "ftp"  # facility 11
    assert preprocess.daemon_params()["facility_names"][10] == "authpriv"


@pytest.mark.parametrize("row", ["none", "hostname-rewrite", "json", "kv"])
def test_rows_without_a_filter_expect_everything(row: str) -> None:
    assert preprocess.expected_mask(row, SEED, SenderId(1, 1), PER_SENDER) is None


# --- payload forms ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("payload", ["json", "kv"])
@pytest.mark.parametrize("size", [100, 400])
def test_parsed_payloads_have_the_size_and_no_reconciler_key(payload: str, size: int) -> None:
    rendered = lines(SenderId(2, 3), payload, count=50, size=size)
    assert {len(line) for line in rendered[:-1]} == {size}
    assert all(b"syslogbench" not in line for line in rendered)  # only parsing can rebuild the key
    assert rendered[-1].count(b"DONE") == 1


def test_json_payload_carries_the_same_fields_as_text() -> None:
    sender = SenderId(2, 3)
    for text, data in zip(lines(sender), lines(sender, "json"), strict=True):
        h, s, q, f, v = (int(group) for group in messages.BODY_RE.search(text).group(1, 2, 3, 4, 5))
        parsed = json.loads(message_part(data))
        assert (parsed["h"], parsed["s"], parsed["q"], parsed["f"], parsed["v"]) == (h, s, q, f, v)
        assert parsed["x"] == ("DONE" if text.endswith(b" DONE\n") else "x" * len(parsed["x"]))
        assert data.split(b"]: ")[0] == text.split(b"]: ")[0]  # same PRI, stamp, host and tag


def test_kv_payload_carries_the_same_fields_as_text() -> None:
    sender = SenderId(1, 2)
    for text, data in zip(lines(sender), lines(sender, "kv"), strict=True):
        assert KV_RE.fullmatch(data.split(b"]: ", 1)[1].rstrip(b"\n"))
        assert KV_RE.search(data).group(1, 2, 3, 4, 5) == messages.BODY_RE.search(text).group(1, 2, 3, 4, 5)


def test_payload_per_row() -> None:
    assert [preprocess.payload(row) for row in ("none", "regexp", "json", "kv")] == [
        "text",
        "text",
        "json",
        "kv",
    ]


def test_text_payload_is_unchanged() -> None:
    line = messages.render_line(SenderId(3, 2), 1, 134, "Nov 22 10:00:00", 7, payload="text")
    assert line == messages.render_line(SenderId(3, 2), 1, 134, "Nov 22 10:00:00", 7)


# --- proofs -------------------------------------------------------------------------------------------------


def test_hostname_proof_needs_the_senders_own_host_rewritten() -> None:
    proof = Expectation(preprocess="hostname-rewrite").proof()
    good = b"2026-11-22T10:00:00+00:00 relay-host3 bench[2]: syslogbench h=3 s=2 q=0000001 f=1 v=2 xx\n"
    assert len(proof.findall(good)) == 1
    assert proof.findall(good.replace(b"relay-host3", b"host3")) == []
    assert proof.findall(good.replace(b"relay-host3", b"relay-host4")) == []
    assert proof.findall(good.replace(b"relay-host3", b"relay-host33")) == []


def test_raw_proof_needs_the_line_as_sent() -> None:
    proof = Expectation(receive="raw").proof()
    sent = lines(SenderId(1, 1), count=3)
    assert len(proof.findall(b"".join(sent))) == 4
    parsed = b"Nov 22 10:00:00 host1 bench[1]: " + sent[0].split(b"]: ", 1)[1]
    assert proof.findall(parsed) == []


def test_no_proof_without_a_row_that_shows_in_the_line() -> None:
    assert Expectation().proof() is None
    assert Expectation(preprocess="regexp").proof() is None


def test_expectation_of_a_scenario() -> None:
    # The format and message size too: the padding of a whole line follows from them.
    pre_facility = Expectation("facility-filter", "parsed", 7, "rfc3164", 400)
    assert Expectation.of(scenarios.load("pre-facility"), 7) == pre_facility
    assert Expectation.of(scenarios.load("rfc5424"), 7) == Expectation(seed=7, format="rfc5424")
    assert Expectation.of(scenarios.load("raw"), 7) == Expectation("none", "raw", 7)
    assert Expectation.of(None, 7) == Expectation(seed=7)


# --- reconciliation with a filter or a proof ----------------------------------------------------------------


def daemon_line(line: bytes, host_prefix: str = "") -> bytes:
    match = messages.BODY_RE.search(line)
    host, sender = int(match.group(1)), int(match.group(2))
    head = b"2026-11-22T10:00:00+00:00 %shost%d bench[%d]: " % (host_prefix.encode(), host, sender)
    return head + line[match.start() :]


def write_plain(log_dir: Path, written: list[bytes]) -> Path:
    log_dir.mkdir(exist_ok=True)
    (log_dir / "test.rsyslog.all.log").write_bytes(b"".join(written))
    (log_dir / "done.log").write_bytes(b"".join(line for line in written if line.endswith(b" DONE\n")))
    return log_dir


def ledgers() -> dict[str, Ledger]:
    return {s.name: Ledger(id=s.name, status="ok", messages=PER_SENDER, bytes=1) for s in SENDERS}


def filtered_output(row: str) -> tuple[list[bytes], list[bytes]]:
    """(what the daemon must write, what it must drop) for a filtering row."""
    kept, dropped = [], []
    for sender in SENDERS:
        mask = preprocess.expected_mask(row, SEED, sender, PER_SENDER)
        for seq, line in enumerate(lines(sender), start=1):
            (kept if mask[seq] else dropped).append(daemon_line(line))
    return kept, dropped


def run(log_dir: Path, expect: Expectation) -> reconcile.Reconciliation:
    return reconcile.reconcile(log_dir, ledgers(), SENDERS, PER_SENDER, expect)


@pytest.mark.parametrize("row", ["regexp", "facility-filter"])
def test_exact_subset_is_clean(tmp_path: Path, row: str) -> None:
    kept, dropped = filtered_output(row)
    result = run(write_plain(tmp_path / "logs", kept), Expectation(row, seed=SEED))
    assert result.clean, result
    assert result.expected == len(kept) == result.total("received")
    assert result.total("filtered") == len(dropped) == 3 * PER_SENDER - len(kept)
    assert (result.total("lost"), result.total("duplicated"), result.total("unexpected")) == (0, 0, 0)
    assert result.total("sent") == 3 * PER_SENDER


@pytest.mark.parametrize("row", ["regexp", "facility-filter"])
def test_a_filtered_out_message_that_arrives_is_an_error(tmp_path: Path, row: str) -> None:
    kept, dropped = filtered_output(row)
    result = run(write_plain(tmp_path / "logs", kept + dropped[5:7]), Expectation(row, seed=SEED))
    assert result.total("unexpected") == 2
    assert (result.total("lost"), result.total("duplicated")) == (0, 0)
    assert result.total("received") == len(kept)
    assert not result.clean


def test_a_kept_message_missing_is_lost_and_a_repeat_duplicated(tmp_path: Path) -> None:
    kept, _ = filtered_output("regexp")
    written = kept[:3] + kept[4:] + [kept[10]]
    result = run(write_plain(tmp_path / "logs", written), Expectation("regexp", seed=SEED))
    assert (result.total("lost"), result.total("duplicated"), result.total("unexpected")) == (1, 1, 0)
    assert not result.clean


def test_the_unfiltered_expectation_finds_the_filtered_run_lossy(tmp_path: Path) -> None:
    """The same files judged as if nothing were filtered: the dropped half counts as lost."""
    kept, dropped = filtered_output("regexp")
    result = run(write_plain(tmp_path / "logs", kept), Expectation(seed=SEED))
    assert result.total("lost") == len(dropped)
    assert not result.clean


def test_hostname_rewrite_counts_lines_not_rewritten(tmp_path: Path) -> None:
    written = [daemon_line(line, "relay-") for sender in SENDERS for line in lines(sender)]
    expect = Expectation("hostname-rewrite", seed=SEED)
    assert run(write_plain(tmp_path / "a", written), expect).clean
    written[7] = written[7].replace(b"relay-host", b"host")
    result = run(write_plain(tmp_path / "b", written), expect)
    assert result.unprocessed == 1 and result.total("lost") == 0
    assert not result.clean


def test_raw_receive_counts_lines_that_were_not_stored_raw(tmp_path: Path) -> None:
    written = [line for sender in SENDERS for line in lines(sender)]
    expect = Expectation(receive="raw", seed=SEED)
    assert run(write_plain(tmp_path / "a", written), expect).clean
    written[3] = daemon_line(written[3])
    result = run(write_plain(tmp_path / "b", written), expect)
    assert (result.unprocessed, result.total("lost")) == (1, 0)
    assert not result.clean


# --- scenarios and rendered configs -------------------------------------------------------------------------

ROWS = {
    "pre-none": [],
    "pre-regexp": ["pre-regexp"],
    "pre-facility": ["pre-facility-filter"],
    "pre-hostname": ["pre-hostname-rewrite"],
    "pre-json": ["pre-json"],
    "pre-kv": ["pre-kv"],
    "raw": ["raw-receive"],
}


@pytest.mark.parametrize(("scenario_id", "extra"), ROWS.items())
def test_row_scenarios_need_their_feature(scenario_id: str, extra: list[str]) -> None:
    assert scenarios.load(scenario_id).needs() == ["plain-file", *extra]


# The Debian-built versions; the seed's registry-based daemons declare none of these rows.
@pytest.mark.parametrize(
    "profile", [p for p in profiles.all_profiles() if p.daemon != "baseline" and not p.registry_image]
)
def test_every_daemon_version_declares_every_row(profile: profiles.Profile) -> None:
    for needs in ROWS.values():
        assert set(needs) <= set(profile.features), profile.profile


def test_configs_carry_the_reconcilers_values() -> None:
    rsyslog, syslog_ng = profiles.resolve("rsyslog-8.2504"), profiles.resolve("syslog-ng-4.8")
    for profile in (rsyslog, syslog_ng):
        assert preprocess.FILTER_REGEXP in render.render(profile, scenarios.load("pre-regexp"))
        assert "relay-" in render.render(profile, scenarios.load("pre-hostname"))
    assert "$syslogfacility >= 0 and $syslogfacility <= 11" in render.render(
        rsyslog, scenarios.load("pre-facility")
    )
    assert "facility(kern user mail daemon auth syslog lpr news uucp cron authpriv ftp)" in render.render(
        syslog_ng, scenarios.load("pre-facility")
    )
    assert "flags(no-parse)" in render.render(syslog_ng, scenarios.load("raw"))
    assert 'template="bench_out"' in render.render(rsyslog, scenarios.load("raw"))


def test_a_row_on_split_files_is_refused() -> None:
    split = dataclasses.replace(scenarios.load("pre-regexp"), destination="split")
    with pytest.raises(ValueError, match="destination plain only"):
        render.render(profiles.resolve("syslog-ng-4.8"), split)
