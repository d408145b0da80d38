"""syslogbench.rig.outcome: verdicts, figures and the result document, from hand-built observations."""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import jsonschema
import pytest

from syslogbench.model import result as model
from syslogbench.model import scenarios
from syslogbench.model.result import Cpu, plain
from syslogbench.model.settings import Settings, from_env
from syslogbench.rig import outcome as result
from syslogbench.rig.cgroup import Snapshot
from syslogbench.rig.outcome import Observed
from syslogbench.rig.reconcile import Reconciliation
from tests.unit.conftest import env

ROOT = Path(__file__).resolve().parents[2]
VALIDATOR = jsonschema.Draft202012Validator(json.loads((ROOT / "results" / "schema.json").read_text()))
GIB = 2**30
KIB = 1024
STARTED = datetime(2026, 11, 22, 10, 0, 0, tzinfo=UTC)
FINISHED = datetime(2026, 11, 22, 10, 1, 30, tzinfo=UTC)

# Every key of .env, with the seed scenario's values.
ENV = env()
PER_SENDER = 300_001  # 300000 messages and the DONE
RSS = 210_112 * KIB


def settings(**overrides: str) -> Settings:
    return from_env({**ENV, **overrides})


def host(cores: int = 2, memory: int = 24 * GIB) -> model.Host:
    return model.Host(
        cpu_model="Test CPU",
        cores=cores,
        memory_bytes=memory,
        kernel="6.1.0-test",
        docker_version="27.0.0",
        cgroup_version=2,
    )


def daemon() -> model.Daemon:
    return model.Daemon(
        profile="rsyslog8",
        name="rsyslog",
        version="rsyslogd 8.2504.0 (aka 2025.04)",
        package="rsyslog=8.2504.0-1",
        image="syslogbench/rsyslog8:local",
        base="pull debian:trixie-slim@sha256:3a39",
        settings={"queue.type": "LinkedList"},
    )


def snapshot(
    user: float | None,
    system: float | None,
    *,
    time: float = 1_000.0,
    version: int = 2,
    cpu_limit: float | None = 8.0,
    memory_limit: int | None = 2 * GIB,
    rss: int | None = RSS,
) -> Snapshot:
    return Snapshot(
        version=version,
        time=time,
        cpu_user_s=user,
        cpu_system_s=system,
        memory_peak_bytes=300 * 2**20,
        memory_peak_source="memory.peak",
        memory_current_bytes=250 * 2**20,
        memory_limit_bytes=memory_limit,
        cpu_limit=cpu_limit,
        io_write_bytes=600_000_000,
        max_rss_bytes=rss,
    )


START = snapshot(100.0, 50.0, time=1_000.0)
END = snapshot(129.01, 98.1, time=1_070.0)


def sender(host_no: int, sender_no: int, lost: int = 0, done: bool = True) -> model.Sender:
    """One sender's counts as the reconciliation gives them (rig/reconcile.py: sender_count)."""
    return model.Sender(
        id=f"host{host_no}-s{sender_no}",
        status="ok",
        sent=PER_SENDER,
        received=PER_SENDER - lost,
        lost=lost,
        duplicated=0,
        done_seen=done,
        bytes=PER_SENDER * 100,
        send_s=60.0,
        cpu_s=3.0,
        expected=PER_SENDER,
        filtered=0,
        unexpected=0,
        truncated=0,
    )


def reconciliation(lost_by_first: int = 0, done_seen: int = 20) -> Reconciliation:
    senders = [sender(h, s) for h in range(1, 6) for s in range(1, 5)]
    senders[0] = sender(1, 1, lost=lost_by_first)
    for index in range(done_seen, len(senders)):
        senders[index].done_seen = False
    return Reconciliation(
        senders=senders,
        expected=20 * PER_SENDER,
        split_files=192,
        output_bytes=700_000_000,
        done_log_lines=done_seen,
    )


def observed(**fields: object) -> Observed:
    base: dict[str, object] = {
        "cfg": settings(),
        "host": host(),
        "daemon": daemon(),
        "started": STARTED,
        "finished": FINISHED,
        "elapsed_s": 68.24,
        "end_trigger": "sec",
        "sec_fired_s": 68.3,
        "done_spread_s": 1.5,
        "start": START,
        "end": END,
        "daemon_exit": 0,
        "counts": reconciliation(),
    }
    return Observed(**{**base, **fields})  # type: ignore[arg-type]


def document_of(obs: Observed) -> dict:
    """The result of obs as Result.write() puts it in the file, which results/schema.json describes."""
    return json.loads(result.result(obs).to_json())


def schema_errors(document: dict) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in VALIDATOR.iter_errors(document)]


# --- verdict ------------------------------------------------------------------------------------------------


def test_verdict_pass_for_a_clean_reconciliation() -> None:
    obs = observed()
    assert obs.counts is not None and obs.counts.clean
    assert result.verdict(obs) == "pass"


def test_verdict_loss_when_a_sender_lost_messages() -> None:
    assert result.verdict(observed(counts=reconciliation(lost_by_first=5))) == "loss"


def test_verdict_loss_when_a_done_never_arrived() -> None:
    assert result.verdict(observed(counts=reconciliation(done_seen=19))) == "loss"


def test_verdict_timeout_when_timed_out_even_with_errors() -> None:
    obs = observed(timed_out=True, end_trigger="timeout", errors=["DONE never came"])
    assert result.verdict(obs) == "timeout"


def test_verdict_timeout_when_timed_out_without_counts() -> None:
    assert result.verdict(observed(timed_out=True, counts=None)) == "timeout"


def test_verdict_error_when_errors_and_not_timed_out() -> None:
    assert result.verdict(observed(errors=["the daemon exited before the DONE threshold fired"])) == "error"


def test_verdict_error_when_counts_is_none() -> None:
    assert result.verdict(observed(counts=None)) == "error"


# --- cpu ----------------------------------------------------------------------------------------------------


def test_cpu_figures_are_end_minus_start_and_percent_over_elapsed() -> None:
    figures = plain(result.cpu_figures(observed()))
    assert figures == {"user_s": 29.01, "system_s": 48.1, "total_s": None, "percent": 113.0}


def test_cpu_percent_is_100_times_user_plus_system_over_elapsed() -> None:
    obs = observed(
        start=snapshot(0.0, 0.0), end=snapshot(30.0, 10.0), elapsed_s=20.0
    )  # 40 CPU seconds in 20 s
    assert plain(result.cpu_figures(obs)) == {
        "user_s": 30.0,
        "system_s": 10.0,
        "total_s": None,
        "percent": 200.0,
    }


def test_cpu_figures_none_without_an_end_snapshot() -> None:
    assert plain(result.cpu_figures(observed(end=None))) == {
        "user_s": None,
        "system_s": None,
        "total_s": None,
        "percent": None,
    }


def test_cpu_percent_none_without_elapsed() -> None:
    assert plain(result.cpu_figures(observed(elapsed_s=None))) == {
        "user_s": 29.01,
        "system_s": 48.1,
        "total_s": None,
        "percent": None,
    }


def test_cpu_figures_none_across_cgroup_versions() -> None:
    obs = observed(start=snapshot(1.0, 1.0, version=1), end=snapshot(2.0, 2.0, version=2))
    assert plain(result.cpu_figures(obs)) == {
        "user_s": None,
        "system_s": None,
        "total_s": None,
        "percent": None,
    }


# --- limits -------------------------------------------------------------------------------------------------


def test_limits_cpu_effective_is_what_the_host_has() -> None:
    table = plain(result.limits(observed()))
    assert table["central_cpus"] == {"requested": 8, "configured": 8.0, "effective": 2}
    assert table["remote_cpus"] == {"requested": 2, "configured": None, "effective": 2}


def test_limits_memory_within_host() -> None:
    table = plain(result.limits(observed()))
    assert table["central_memory_bytes"] == {
        "requested": 2 * GIB,
        "configured": 2 * GIB,
        "effective": 2 * GIB,
    }
    assert table["remote_memory_bytes"] == {"requested": GIB // 2, "configured": None, "effective": GIB // 2}


def test_limits_fall_back_to_the_start_snapshot_then_to_requested() -> None:
    assert plain(result.limits(observed(end=None)))["central_cpus"]["configured"] == 8.0
    nothing = plain(result.limits(observed(start=None, end=None)))
    assert nothing["central_cpus"] == {"requested": 8, "configured": None, "effective": 2}
    assert nothing["central_memory_bytes"] == {"requested": 2 * GIB, "configured": None, "effective": 2 * GIB}


def test_limit_notes_name_only_central_cpus() -> None:
    notes = result.limits(observed()).notes()
    assert notes == [
        "central_cpus: 8 requested, but the host can give only 2; the effective value is recorded"
    ]


def test_limit_notes_empty_when_the_host_gives_everything() -> None:
    assert result.limits(observed(host=host(cores=16))).notes() == []


# --- time line and throughput -------------------------------------------------------------------------------


def test_time_line_exact() -> None:
    cpu = {"user_s": 29.01, "system_s": 48.5, "percent": 113.0}
    line = result.time_line(Cpu(**cpu), 68.24, 210_112 * KIB, 87_925.3)
    assert line == (
        "29.01user 48.50system 1:08.24elapsed 113%CPU (0avgtext+0avgdata 210112maxresident)k 87,925 msg/s"
    )


def test_time_line_question_marks_where_unknown() -> None:
    cpu = {"user_s": None, "system_s": None, "percent": None}
    assert result.time_line(Cpu(**cpu), None, None, None) == (
        "?user ?system ?elapsed ?%CPU (0avgtext+0avgdata ?maxresident)k ? msg/s"
    )


def test_time_line_under_a_minute() -> None:
    cpu = {"user_s": 1.0, "system_s": 0.5, "percent": 50.0}
    assert result.time_line(Cpu(**cpu), 3.0, 1024 * KIB, 1000.0) == (
        "1.00user 0.50system 0:03.00elapsed 50%CPU (0avgtext+0avgdata 1024maxresident)k 1,000 msg/s"
    )


@pytest.mark.parametrize(
    ("elapsed", "clock"), [(59.999, "0:59.99"), (119.996, "1:59.99"), (68.24, "1:08.24")]
)
def test_time_line_truncates_like_gnu_time(elapsed: float, clock: str) -> None:
    cpu = {"user_s": 1.0, "system_s": 1.0, "percent": 113.58}
    fields = result.time_line(Cpu(**cpu), elapsed, None, None).split()
    assert fields[2] == f"{clock}elapsed"
    assert fields[3] == "113%CPU"


def test_throughput_is_received_over_elapsed() -> None:
    obs = observed()
    assert plain(result.throughput(obs, 6_000_020)) == {"msgs_per_s": 87_925.3, "mb_per_s": 8.793}


def test_throughput_scales_wire_bytes_by_the_received_share() -> None:
    obs = observed(elapsed_s=10.0)
    # half the sent messages received: half of the 600,002,000 bytes sent
    assert plain(result.throughput(obs, 3_000_010)) == {"msgs_per_s": 300_001.0, "mb_per_s": 30.0}


def test_throughput_none_without_elapsed_or_counts() -> None:
    empty = {"msgs_per_s": None, "mb_per_s": None}
    assert plain(result.throughput(observed(elapsed_s=None), 100)) == empty
    assert plain(result.throughput(observed(counts=None), 0)) == empty


def test_build_summary_matches_the_measured_figures() -> None:
    document = document_of(observed())
    assert document["summary"] == (
        "29.01user 48.10system 1:08.24elapsed 113%CPU (0avgtext+0avgdata 210112maxresident)k 87,925 msg/s"
    )


# --- the whole document -------------------------------------------------------------------------------------


def test_build_pass_validates_and_holds_the_figures() -> None:
    document = document_of(observed())
    assert schema_errors(document) == []
    assert document["verdict"] == "pass"
    assert re.fullmatch(r"20261122T100000\.000Z-rsyslog8-[0-9a-f]{4}", document["run_id"]), document["run_id"]
    assert document["started_utc"] == "2026-11-22T10:00:00Z"
    assert document["finished_utc"] == "2026-11-22T10:01:30Z"
    assert document["elapsed_s"] == 68.24
    assert document["cpu"] == {"user_s": 29.01, "system_s": 48.1, "total_s": None, "percent": 113.0}
    assert document["throughput"] == {"msgs_per_s": 87_925.3, "mb_per_s": 8.793}
    assert document["messages"] == {
        "expected": 6_000_020,
        "sent": 6_000_020,
        "received": 6_000_020,
        "lost": 0,
        "duplicated": 0,
        "misfiled": 0,
        "unknown": 0,
        "done_expected": 20,
        "done_received": 20,
        "done_log_lines": 20,
        "done_log_extra": 0,
        "filtered": 0,
        "unexpected": 0,
        "unprocessed": 0,
        "truncated": 0,
    }
    assert document["memory"] == {
        "peak_bytes": 300 * 2**20,
        "peak_source": "memory.peak",
        "max_rss_bytes": RSS,
    }
    assert document["io"] == {"write_bytes": 600_000_000, "output_bytes": 700_000_000}
    assert document["daemon"]["stopped"] is True
    assert document["daemon"]["exit_code"] == 0
    assert document["end"] == {"trigger": "sec", "sec_fired_s": 68.3, "done_spread_s": 1.5}
    assert document["generators"] == {
        "send_s_max": 60.0,
        "cpu_s_total": 60.0,
        "cpu_share_of_send": 0.05,
        "container_cpu_s": None,
    }
    assert document["notes"] == [
        "central_cpus: 8 requested, but the host can give only 2; the effective value is recorded"
    ]
    assert len(document["senders"]) == 20


def test_build_loss_validates() -> None:
    document = document_of(observed(counts=reconciliation(lost_by_first=5)))
    assert schema_errors(document) == []
    assert document["verdict"] == "loss"
    assert document["messages"]["lost"] == 5
    assert document["messages"]["received"] == 6_000_015


def cut(counts: Reconciliation, lines: int) -> Reconciliation:
    """The first sender's last `lines` messages arrived cut: truncated, and lost for want of a whole copy."""
    first = counts.senders[0]
    first.truncated, first.received, first.lost = lines, first.received - lines, first.lost + lines
    return counts


def test_build_truncated_is_loss_and_counted() -> None:
    counts = cut(reconciliation(), 7)
    assert counts.total("lost") == 7 and not counts.clean
    document = document_of(observed(counts=counts))
    assert schema_errors(document) == []
    assert document["verdict"] == "loss"
    assert document["messages"]["truncated"] == 7
    assert (document["messages"]["received"], document["messages"]["lost"]) == (6_000_013, 7)
    assert [s["truncated"] for s in document["senders"]] == [7] + [0] * 19


def test_a_cut_copy_beside_a_whole_one_is_still_loss() -> None:
    """Nothing lost, since a whole copy of each arrived: the cut lines alone make the verdict loss."""
    counts = reconciliation()
    counts.senders[3].truncated = 2
    assert counts.total("lost") == 0
    assert result.verdict(observed(counts=counts)) == "loss"


def test_verdict_udp_with_a_cut_datagram_is_loss() -> None:
    """Over UDP a lost datagram is the figure, not a failure; a cut one is a failure."""
    assert result.verdict(udp_observed(counts=cut(reconciliation(), 1))) == "loss"


def test_build_timeout_with_counts_validates() -> None:
    obs = observed(
        timed_out=True,
        end_trigger="timeout",
        elapsed_s=None,
        sec_fired_s=None,
        counts=reconciliation(done_seen=18),
        errors=["the DONE threshold (20 in 60 s) did not fire within RUN_TIMEOUT=900 s"],
    )
    document = document_of(obs)
    assert schema_errors(document) == []
    assert document["verdict"] == "timeout"
    assert document["elapsed_s"] is None
    assert document["cpu"] == {"user_s": 29.01, "system_s": 48.1, "total_s": None, "percent": None}
    assert document["throughput"] == {"msgs_per_s": None, "mb_per_s": None}
    assert document["messages"]["done_received"] == 18
    assert document["summary"] == (
        "29.01user 48.10system ?elapsed ?%CPU (0avgtext+0avgdata 210112maxresident)k ? msg/s"
    )


def test_build_error_with_nothing_measured_validates() -> None:
    obs = Observed(
        cfg=settings(),
        host=host(),
        daemon=model.Daemon(),
        started=STARTED,
        finished=STARTED,
        errors=["gave up after 300 s waiting for the daemon to listen on port 514"],
    )
    document = document_of(obs)
    assert schema_errors(document) == []
    assert document["verdict"] == "error"
    assert re.fullmatch(r"20261122T100000\.000Z-unknown-[0-9a-f]{4}", document["run_id"]), document["run_id"]
    assert document["end"] == {"trigger": "not-started", "sec_fired_s": None, "done_spread_s": None}
    assert document["daemon"]["stopped"] is False
    assert document["daemon"]["exit_code"] is None
    assert document["cpu"] == {"user_s": None, "system_s": None, "total_s": None, "percent": None}
    assert document["memory"] == {"peak_bytes": None, "peak_source": "none", "max_rss_bytes": None}
    assert document["io"] == {"write_bytes": None, "output_bytes": None}
    assert document["senders"] == []
    assert document["messages"] == {
        "expected": 6_000_020,
        "sent": 0,
        "received": 0,
        "lost": 0,
        "duplicated": 0,
        "misfiled": 0,
        "unknown": 0,
        "done_expected": 20,
        "done_received": 0,
        "done_log_lines": 0,
        "done_log_extra": 0,
    }
    assert document["summary"] == "?user ?system ?elapsed ?%CPU (0avgtext+0avgdata ?maxresident)k ? msg/s"


# --- run id -------------------------------------------------------------------------------------------------


def test_run_id_is_utc_compact_time_milliseconds_profile_and_suffix() -> None:
    started = STARTED.replace(microsecond=7_999)
    assert result.run_id(started, "rsyslog8", "3f9a") == "20261122T100000.007Z-rsyslog8-3f9a"


def test_run_id_converts_to_utc() -> None:
    started = datetime(2026, 11, 22, 11, 30, 5, tzinfo=timezone(timedelta(hours=1, minutes=30)))
    run = result.run_id(started, "syslog-ng-4.8")
    assert run.startswith("20261122T100005.000Z-syslog-ng-4.8-"), run
    assert re.fullmatch(r"[0-9]{8}T[0-9]{6}\.[0-9]{3}Z-[A-Za-z0-9._-]+-[0-9a-f]{4}", run), run


def test_run_ids_of_one_millisecond_differ() -> None:
    # Two projects starting a run in the same millisecond: 200 draws of 65,536 suffixes, a repeat is 26%
    # likely; 20 draws, 0.3%. The check is that the suffix is drawn, not fixed.
    ids = {result.run_id(STARTED, "rsyslog8") for _ in range(20)}
    assert len(ids) >= 19, sorted(ids)


def test_run_ids_sort_by_time_and_old_ids_sort_among_them() -> None:
    old = "20261122T100000Z-rsyslog8"  # one-second ids of earlier results
    earlier = result.run_id(STARTED.replace(microsecond=999_000), "zz", "ffff")
    later = result.run_id(STARTED + timedelta(seconds=1), "aa", "0000")
    assert sorted([later, old, earlier]) == [earlier, old, later]


def test_results_with_old_run_ids_still_load() -> None:
    # A stored result of the one-second format reads as before: the id is kept, not parsed.
    stored = sorted((Path(__file__).parents[2] / "results").glob("2026*Z-*.json"))
    assert stored, "no stored result of the old id format in results/"
    loaded = model.read(stored[0])
    assert loaded.run_id == stored[0].stem


# --- UDP: loss is the figure; fixed rates -----------------------------------------------------------------------

UDP_COUNTERS = {"InDatagrams": 1_000, "NoPorts": 0, "InErrors": 0, "RcvbufErrors": 0}


def udp_observed(lost_by_first: int = 0, done_seen: int = 20, **fields: object) -> Observed:
    """A UDP run: the first sender lost `lost_by_first`, the kernel dropped as many for a full buffer."""
    counts = reconciliation(lost_by_first=lost_by_first, done_seen=done_seen)
    for count in counts.senders:
        count.rate_target, count.rate_achieved = 1000, 990.0
    received = counts.total("received")
    start = replace(START, udp=UDP_COUNTERS)
    end = replace(
        END,
        udp={
            "InDatagrams": 1_000 + received,
            "NoPorts": 0,
            "InErrors": lost_by_first,
            "RcvbufErrors": lost_by_first,
        },
    )
    base = {"scenario": scenarios.load("udp"), "counts": counts, "start": start, "end": end}
    return observed(**{**base, **fields})


def test_verdict_udp_with_loss_is_loss_as_over_tcp() -> None:
    """pass means one thing everywhere (contract.MEANINGS): a dropped datagram is loss, the drop rate the figure."""
    obs = udp_observed(lost_by_first=1_234, done_seen=19)
    assert result.verdict(obs) == "loss"
    assert result.verdict(udp_observed(lost_by_first=1_234, scenario=scenarios.load("tcp-rate"))) == "loss"


def test_verdict_udp_with_nothing_lost_is_pass() -> None:
    assert result.verdict(udp_observed()) == "pass"


def test_verdict_udp_with_a_duplicate_is_loss() -> None:
    obs = udp_observed(lost_by_first=10)
    assert obs.counts is not None
    obs.counts.senders[1].duplicated = 1
    assert result.verdict(obs) == "loss"


def test_verdict_udp_with_misfiled_or_stray_done_lines_is_loss() -> None:
    assert result.verdict(udp_observed(counts=replace(reconciliation(), misfiled=1))) == "loss"
    assert result.verdict(udp_observed(counts=replace(reconciliation(), done_log_lines=21))) == "loss"


def test_verdict_udp_with_an_error_is_error() -> None:
    assert result.verdict(udp_observed(errors=["no UDP datagram reached the output files"])) == "error"


def test_udp_block_from_sequence_numbers_and_kernel_counters() -> None:
    document = document_of(udp_observed(lost_by_first=60_000, done_seen=19))
    assert schema_errors(document) == []
    assert document["verdict"] == "loss"  # the drop rate is the figure, and any drop is loss
    udp = dict(document["udp"])
    # No supervisor wrote daemon/buffers here: the sysctls are unknown, and UDP_RCVBUF was not set.
    assert udp.pop("buffers") == {
        "requested_bytes": None, "rmem_default": None, "rmem_max": None, "socket_bytes": None,
        "how": "the kernel's default (rmem_default): UDP_RCVBUF not set",
    }  # fmt: skip
    assert udp == {
        "sent": 6_000_020,
        "received": 5_940_020,
        "lost": 60_000,
        "drop_rate": 0.01,
        "kernel": {
            "in_datagrams": 5_940_020,
            "in_errors": 60_000,
            "rcvbuf_errors": 60_000,
            "no_ports": 0,
            "drop_rate": 0.01,
        },
    }


def test_udp_block_kernel_none_without_snmp_in_a_snapshot() -> None:
    document = document_of(udp_observed(lost_by_first=5, end=END))
    assert schema_errors(document) == []
    assert document["udp"]["kernel"] is None and document["udp"]["lost"] == 5


def test_udp_block_null_for_tcp() -> None:
    document = document_of(observed())
    assert schema_errors(document) == []
    assert document["udp"] is None


def test_rate_block_target_and_achieved() -> None:
    obs = udp_observed()
    assert obs.counts is not None
    obs.counts.senders[0].rate_achieved = 900.0
    obs.counts.senders[1].rate_achieved = 1100.0
    document = document_of(obs)
    assert schema_errors(document) == []
    assert document["rate"] == {
        "target_per_sender": 1000,  # scenarios/udp.yaml
        "target_total": 20_000,
        "achieved_per_sender": {"min": 900.0, "median": 990.0, "max": 1100.0},
        "achieved_total": 900.0 + 1100.0 + 18 * 990.0,
    }


def test_rate_block_all_out_and_unmeasured() -> None:
    document = document_of(observed(counts=None, errors=["no counts"]))
    assert schema_errors(document) == []
    assert document["rate"] == {
        "target_per_sender": 0,
        "target_total": 0,
        "achieved_per_sender": {"min": None, "median": None, "max": None},
        "achieved_total": None,
    }


# --- the typed model: n/a from the host, the load shape's variant -------------------------------------------


def test_not_applicable_from_the_model_is_what_the_watcher_would_write() -> None:
    """The host's n/a result (built from the model alone) and the watcher's build of the same run agree."""
    scenario = scenarios.load("udp")
    reason = "rsyslog8 cannot run scenario udp: needs udp"
    obs = Observed(cfg=settings(), host=host(), daemon=daemon(), started=STARTED, finished=STARTED,
                   scenario=scenario, unsupported=reason, errors=[f"n/a: {reason}"])  # fmt: skip
    direct = model.not_applicable(settings(), scenario, daemon(), host(), reason, STARTED).to_dict()
    built = document_of(obs)
    # The ids differ in their random suffix alone; the rest is the same document.
    assert direct["run_id"][:-4] == built["run_id"][:-4]
    assert direct == {**built, "run_id": direct["run_id"]}
    assert schema_errors(direct) == []
    assert (
        direct["verdict"] == "n/a" and direct["udp"]["sent"] == 0 and direct["rate"]["target_total"] == 20_000
    )


def test_variant_default_for_the_seed_shape_else_hosts_senders_messages() -> None:
    assert document_of(observed())["scenario"]["variant"] == "default"
    cfg = settings(HOSTS="5", SENDERS_PER_HOST="10", MESSAGES_PER_SENDER="20000")
    assert document_of(observed(cfg=cfg))["scenario"]["variant"] == "5x10x20000"


def test_variant_named_by_the_settings_wins() -> None:
    @dataclasses.dataclass(frozen=True)
    class Named:
        hosts: int = 5
        senders_per_host: int = 4
        messages_per_sender: int = 300_000
        variant: str = "2x2x2000"

    assert model.variant_of(Named()) == "2x2x2000"
    assert model.variant_of(Named(variant="")) == "default"


def test_build_round_trips_through_the_model() -> None:
    for obs in (observed(), udp_observed(lost_by_first=7), observed(counts=None, start=None, end=None)):
        document = document_of(obs)
        assert model.Result.from_dict(document).to_dict() == document


# --- harness: what the harness itself cost -----------------------------------------------------------------

WATCHER = model.HarnessContainer(
    peak_memory_bytes=97 * 2**20,
    peak_memory_source="memory.max_usage_in_bytes",
    memory_limit_bytes=384 * 2**20,
)


def test_build_records_the_watchers_memory_and_the_reconciliation_time() -> None:
    harness = model.Harness(watcher=WATCHER, reconcile_s=3.25, reconcile_cpu_s=2.5)
    document = document_of(observed(harness=harness))
    assert schema_errors(document) == []
    assert without_cpu(document["harness"]) == {
        "watcher": {
            "peak_memory_bytes": 97 * 2**20,
            "peak_memory_source": "memory.max_usage_in_bytes",
            "memory_limit_bytes": 384 * 2**20,
        },
        "reconcile_s": 3.25,
        "reconcile_cpu_s": 2.5,
    }
    loaded = model.Result.from_dict(document).harness
    assert (loaded.watcher, loaded.reconcile_s, loaded.reconcile_cpu_s) == (WATCHER, 3.25, 2.5)


def without_cpu(harness: dict) -> dict:
    """The block without the harness's CPU in the window (tests/unit/test_harness.py has those)."""
    return {key: value for key, value in harness.items() if key not in ("cpu", "cpu_share_of_daemon")}


def test_a_run_that_measured_nothing_of_the_harness_writes_nulls() -> None:
    document = document_of(observed(counts=None, start=None, end=None))
    assert schema_errors(document) == []
    watcher = {"peak_memory_bytes": None, "peak_memory_source": None, "memory_limit_bytes": None}
    assert without_cpu(document["harness"]) == {
        "watcher": watcher,
        "reconcile_s": None,
        "reconcile_cpu_s": None,
    }
    assert document["harness"]["cpu_share_of_daemon"] is None


def test_a_result_from_before_the_harness_block_loads_with_nothing_measured() -> None:
    document = document_of(observed(harness=model.Harness(watcher=WATCHER, reconcile_s=1.5)))
    del document["harness"]
    loaded = model.Result.from_dict(document)
    assert loaded.harness == model.Harness()
    assert loaded.harness.watcher.peak_memory_bytes is None and loaded.harness.reconcile_s is None
    assert schema_errors(loaded.to_dict()) == []


@pytest.mark.parametrize(
    ("block", "key"),
    [({"colour": "blue"}, "colour"), ({"watcher": {"peak_memory_bytes": 1, "rss": 2}}, "rss")],
)
def test_an_unknown_harness_key_is_refused(block: dict, key: str) -> None:
    document = document_of(observed()) | {"harness": block}
    assert schema_errors(document) != []
    with pytest.raises(model.ResultError, match=f"unknown key '{key}'"):
        model.Result.from_dict(document)
