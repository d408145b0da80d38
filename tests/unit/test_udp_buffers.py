"""UDP_RCVBUF (issue 27): validated with the other settings, rendered into both families' UDP listeners,
passed to the daemon's container in bytes, refused with a user config, and recorded in every UDP result
beside the daemon namespace's rmem_default and rmem_max."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from syslogbench import contract
from syslogbench.host import environment as host_environment
from syslogbench.host import onehost, ownconfig
from syslogbench.host.capacity import command as capacity_command
from syslogbench.host.capacity import record as capacity_record
from syslogbench.host.capacity import search, searchplan
from syslogbench.model import capacity, result, settings
from syslogbench.rig import snmp
from tests.unit.conftest import env

pytestmark = pytest.mark.usefixtures("host_env")  # .env, Docker and the shell isolated (conftest)

ROOT = Path(__file__).resolve().parents[2]
FAMILIES = {"rsyslog": "rcvbufSize=`echo $UDP_RCVBUF`", "syslog-ng": "so-rcvbuf(`UDP_RCVBUF`)"}


@pytest.mark.parametrize("profile", ["rsyslog-8.2102", "rsyslog-8.2302", "rsyslog-8.2504", "rsyslog-8.2610",
                                     "syslog-ng-3.28", "syslog-ng-3.38", "syslog-ng-4.8", "syslog-ng-4.12"])  # fmt: skip
def test_every_udp_config_asks_for_udp_rcvbuf_from_the_container_s_environment(profile: str) -> None:
    family = "rsyslog" if profile.startswith("rsyslog") else "syslog-ng"
    for scenario in ("udp", "udp-allout"):
        text = (ROOT / "daemons" / profile / "scenarios" / f"{scenario}.conf").read_text()
        assert text.count(FAMILIES[family]) == 1, f"{profile} {scenario}"


def test_the_daemon_gets_udp_rcvbuf_with_0_for_the_kernel_s_default() -> None:
    compose = yaml.safe_load((ROOT / "compose.daemons.yaml").read_text())
    assert compose["x-daemon"]["environment"]["UDP_RCVBUF"] == "${UDP_RCVBUF:-0}"
    # A config check without compose (docker run) reads a number too: 0 sets no buffer in either family.
    assert "ENV UDP_RCVBUF=0" in (ROOT / "daemons" / "Dockerfile").read_text()


def test_udp_rcvbuf_reaches_compose_in_bytes() -> None:
    cfg, environment = host_environment.run_env({"UDP_RCVBUF": "4m"})
    assert cfg.udp_rcvbuf == 4 * 1024**2 and environment["UDP_RCVBUF"] == "4194304"
    cfg, environment = host_environment.run_env({})
    assert cfg.udp_rcvbuf is None and environment["UDP_RCVBUF"] == ""


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("lots", "UDP_RCVBUF='lots' is not a size: use bytes, or a number with k, m or g, e.g. 4m"),
        (
            "0",
            "UDP_RCVBUF=0 is outside 4096 bytes to 1g: use e.g. 4m, or leave it unset for the kernel's default",
        ),
        ("2g", "UDP_RCVBUF=2g is outside 4096 bytes to 1g"),
    ],
)
def test_a_bad_udp_rcvbuf_is_one_line(value: str, said: str) -> None:
    with pytest.raises(settings.SettingsError) as error:
        settings.from_env(env(UDP_RCVBUF=value))
    assert str(error.value).startswith(said) and "\n" not in str(error.value)


def test_udp_rcvbuf_with_a_user_config_is_refused_in_one_line(tmp_path: Path) -> None:
    mine = ownconfig.UserConfig(tmp_path, tmp_path / "syslog-ng.conf", "syslog-ng")
    with pytest.raises(ownconfig.UserConfigError) as error:
        ownconfig.refuse_udp_rcvbuf(mine, 4194304)
    # Where the user's config sets it comes from the family's record (daemons/_families/syslog-ng.yaml).
    assert str(error.value) == (
        "UDP_RCVBUF=4194304 sets the profile's own config; with --config set the buffer in your config "
        f"({mine.record.udp_buffer}) and leave UDP_RCVBUF unset"
    )
    assert "so-rcvbuf()" in mine.record.udp_buffer
    ownconfig.refuse_udp_rcvbuf(None, 4194304)
    ownconfig.refuse_udp_rcvbuf(mine, None)


def test_the_supervisor_s_buffers_file_reads_as_the_sysctls(tmp_path: Path) -> None:
    path = tmp_path / "buffers"
    path.write_text("rmem_default 212992\nrmem_max 4194304\n")
    assert snmp.read_buffers(path) == {"rmem_default": "212992", "rmem_max": "4194304"}
    assert snmp.read_buffers(tmp_path / "missing") == {}


def test_the_buffer_in_force_is_twice_the_request_capped_at_twice_rmem_max() -> None:
    """Linux doubles SO_RCVBUF and caps it at rmem_max (checked here with getsockopt: 4 MiB asked gave 8 MiB,
    32 MiB asked gave 8 MiB with rmem_max 4 MiB); unset, a socket has rmem_default."""
    seen = {"rmem_default": "212992", "rmem_max": "4194304"}
    assert result.udp_buffers(4 * 1024**2, seen).socket_bytes == 8 * 1024**2
    assert result.udp_buffers(32 * 1024**2, seen).socket_bytes == 8 * 1024**2
    kernel = result.udp_buffers(None, seen)
    assert (kernel.requested_bytes, kernel.socket_bytes, kernel.rmem_max) == (None, 212992, 4194304)


def test_a_udp_capacity_result_records_udp_rcvbuf_the_sysctls_and_the_load(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(host_environment, "docker_version", lambda: "test")
    chosen = searchplan.plan("syslog-ng-4.8", {"SCENARIO": "udp", "UDP_RCVBUF": "4m", "HOSTS": "1",
                                           "SENDERS_PER_HOST": "2", "REMOTE_MEM": "1g"}, onehost.OneHost())  # fmt: skip
    found = search.Found(capacity.Bound(0.0, 1000.0, 1100.0), capacity.Bound(0.005, 1000.0, 1100.0))
    central = {contract.UDP_BUFFERS_KEY: {"rmem_default": "212992", "rmem_max": "4194304"}}
    data = capacity_record.build(chosen, [], found, {}, datetime.now(UTC), None, central)
    assert data.udp_buffers == result.UdpBuffers(
        4 * 1024**2, 212992, 4194304, 8 * 1024**2,
        "the kernel's rule: 2 x min(UDP_RCVBUF, rmem_max); SO_RCVBUFFORCE needs CAP_NET_ADMIN",
    )  # fmt: skip
    assert data.load == capacity.Load(hosts=1, senders_per_host=2, remote_mem_bytes=1024**3, remote_cpus=2)
    assert data.settings["confirm_s"] == 60.0
    # Written and read back through the strict reader.
    again = capacity.result_from_dict(data.to_dict())
    assert again.udp_buffers == data.udp_buffers and again.load == data.load


def test_the_capacity_reader_refuses_unknown_keys_and_reads_old_results() -> None:
    old = next((ROOT / "results" / "capacity").glob("*-c834-udp.json"))
    data = capacity.read(old)
    assert data.udp_buffers is None and data.load is None and data.commit is None
    assert data.ndr.confirmed is None and data.ndr.published() == data.ndr_msgs_per_s
    with pytest.raises(capacity.CapacityResultError, match="unknown key"):
        capacity.result_from_dict({**data.to_dict(), "surprise": 1})


def test_the_commit_is_git_s_or_unknown_and_why(tmp_path: Path) -> None:
    assert len(capacity_command.project_commit().split()[0]) == 40
    assert capacity_command.project_commit(tmp_path).startswith("unknown (not a git checkout: ")


def test_the_socket_s_own_buffer_is_recorded_beside_the_rule_s() -> None:
    """The supervisor appends `socket_rcvbuf N` (ss -m's rb) once the daemon listens; "unread" when it
    could not (an image without ss): then only the rule's figure is there."""
    seen = {"rmem_default": "212992", "rmem_max": "4194304", "socket_rcvbuf": "8388608"}
    asked = result.udp_buffers(4 * 1024**2, seen)
    assert (asked.socket_bytes, asked.socket_read_bytes) == (8 * 1024**2, 8 * 1024**2)
    unread = result.udp_buffers(None, {**seen, "socket_rcvbuf": "unread"})
    assert (unread.socket_bytes, unread.socket_read_bytes) == (212992, None)
