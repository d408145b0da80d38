"""Real containers: real rsyslog, syslog-ng and SEC, at small scale."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from syslogbench.contract import FINGERPRINT_ENV
from syslogbench.host import configrun, environment, fingerprintcontainer, images, ownconfig, profiles, setup
from syslogbench.host.compose import Compose
from syslogbench.model.compare import MIN_EFFECT
from syslogbench.model.result import Fingerprint

ROOT = Path(__file__).resolve().parents[2]
# Separate names let two checkouts run their integration tests on one machine at once, and each worker of
# `pytest -n 2` (make test) its own runs: two runs never share a project's containers or volumes.
WORKER = os.environ.get("PYTEST_XDIST_WORKER")
PROJECT = os.environ.get("TEST_PROJECT", "syslogbench-test") + (f"-{WORKER}" if WORKER else "")
SMALL = {"HOSTS": "2", "SENDERS_PER_HOST": "2", "MESSAGES_PER_SENDER": "2000", "RUN_TIMEOUT": "120"}
COMPOSE_TIMEOUT_S = 600


# CI of 2026-12-07: one compose stop never ended (a TLS run that had passed), and from then on every compose
# command on the machine waited without a word, each test to its own timeout: 78 minutes of timeouts. After a
# failed test, one `docker ps` tells whether the engine still answers; once it did not, every integration test
# still to run on this worker fails at once, saying so.
ENGINE_ANSWER_S = 30
ENGINE_STUCK: list[str] = []  # the test after which the engine stopped answering


def engine_answers() -> bool:
    try:
        subprocess.run(["docker", "ps", "-q"], capture_output=True, timeout=ENGINE_ANSWER_S)
    except subprocess.TimeoutExpired:
        return False
    except OSError:  # no docker at all: the tests skip or fail on their own
        return True
    return True


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.failed and not ENGINE_STUCK and not engine_answers():
        ENGINE_STUCK.append(item.nodeid)
        report.sections.append(
            ("docker", f"`docker ps` did not answer in {ENGINE_ANSWER_S} s after this test")
        )
    return report


def pytest_runtest_setup(item: pytest.Item) -> None:
    if ENGINE_STUCK:
        pytest.fail(
            f"Docker stopped answering (`docker ps` waited over {ENGINE_ANSWER_S} s) after {ENGINE_STUCK[0]}: "
            "restart the engine (systemctl restart docker) and run the tests again; not run"
        )


def assert_control_judged(ratio: dict, erratic: bool) -> None:
    """The A/A control is judged by the rule, against MIN_EFFECT: how far this machine puts a side from itself
    is the run's floor, not the test's to decide (CI's duet of 2026-12-06: 0.941 over 3 windows, "differs")."""
    apart = ratio["low"] is not None and (ratio["high"] < 1.0 or ratio["low"] > 1.0)
    far = ratio["value"] is not None and abs(ratio["value"] - 1.0) >= MIN_EFFECT
    expected = ("no ratio" if ratio["value"] is None else "erratic" if erratic
                else "differs" if apart and far else "not told apart")  # fmt: skip
    assert ratio["verdict"] == expected, ratio


@dataclass
class Run:
    code: int
    result: dict
    output: str
    containers: list[dict]
    logs: dict[str, bytes]


def registry_unreachable(profile: profiles.Profile) -> str | None:
    """Why a registry-based profile cannot be built here (the skip reason), or None when it can.

    Asked once per image and session (images caches the answer); a refused pull fails in under a second."""
    ref = profile.registry_image
    if ref is None or images.registry_image_available(ref):
        return None
    return f"registry unreachable: {profile.profile} needs Docker Hub to pull {ref}"


def daemon_params(wanted: Callable[[profiles.Profile], bool] = lambda p: True) -> list:
    """Every profile as a test parameter; registry-based ones skip, saying so, when no registry answers."""
    params = []
    for profile in filter(wanted, profiles.all_profiles()):
        reason = registry_unreachable(profile)
        marks = [pytest.mark.skip(reason=reason)] if reason else []
        params.append(pytest.param(profile.profile, marks=marks, id=profile.profile))
    return params


@pytest.fixture(scope="session")
def built() -> None:
    """Bases and images for every profile that can be built here (registry-based ones need a registry);
    cached builds make this quick after the first time."""
    setup.setup([p.profile for p in profiles.all_profiles()], skip_unreachable=True)


@pytest.fixture(scope="session")
def machine_fingerprint(built: None) -> Fingerprint | None:
    """The machine's fingerprint, measured once for the session as `syslogbench run` measures it. A run
    measures one before the senders may start: 3 s on a quiet 2-core machine, 17 to 30 s with a load of 20 on
    it. The tests' runs take this one instead; none of them reads it. The watcher's own measurement is
    test_fingerprint_run.py's, `syslogbench run`'s test_matrix_and_calibration.py's. None: it failed, and
    each run measures its own."""
    cfg, _ = environment.run_env(dict(SMALL))
    found, _ = fingerprintcontainer.take(cfg)
    return found


@pytest.fixture(scope="module")
def fingerprint_once(machine_fingerprint: Fingerprint | None) -> Iterator[None]:
    """`syslogbench run` and `capacity` called in this process (benchmark.run, search.run) get the session's
    fingerprint from fingerprintcontainer.take instead of measuring one each."""
    why = "" if machine_fingerprint is not None else "the session's fingerprint failed"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fingerprintcontainer, "take", lambda cfg, image=None: (machine_fingerprint, why))
        yield


@pytest.fixture
def bench(built: None, machine_fingerprint: Fingerprint | None, tmp_path: Path) -> Callable[..., Run]:
    def run(
        profile: str,
        overrides: dict[str, str] | None = None,
        config: Path | None = None,
        abort_on_exit: bool = True,
        extra_compose: str | None = None,
        user_config: ownconfig.UserConfig | None = None,
    ) -> Run:
        results = tmp_path / "results"
        results.mkdir(exist_ok=True)
        extra: list[Path] = []
        if config is not None:
            service = profiles.resolve(profile)
            override = tmp_path / "override.yaml"
            # The supervisor links active.conf to the scenario's config, so replace that file.
            target = f"/etc/syslogbench/scenarios/{(overrides or {}).get('SCENARIO', 'seed2014')}.conf"
            override.write_text(
                f"services:\n  {service.profile}:\n    volumes:\n      - {config}:{target}:ro\n"
            )
            extra.append(override)
        if user_config is not None:  # run --config: the override `syslogbench run` writes
            service = profiles.resolve(profile).profile
            scenario = (overrides or {}).get("SCENARIO", "seed2014")
            (tmp_path / "user.yaml").write_text(configrun.override_text(user_config, service, scenario))
            extra.append(tmp_path / "user.yaml")
        if extra_compose is not None:
            # A test's own compose override, e.g. a generator that trusts another CA.
            (tmp_path / "extra.yaml").write_text(extra_compose)
            extra.append(tmp_path / "extra.yaml")
        env = {**os.environ, **SMALL, "KEEP_LOGS": "1", **(overrides or {}), "RESULTS_DIR": str(results)}
        if machine_fingerprint is not None:  # the watcher takes it instead of measuring its own
            env.setdefault(FINGERPRINT_ENV, json.dumps(machine_fingerprint.to_dict(), sort_keys=True))
        if "GENERATORS" not in (overrides or {}):  # as `syslogbench run` does: one generator per host
            env["GENERATORS"] = env["HOSTS"]
        runner = Compose(profile, PROJECT, tuple(extra))
        runner.down(env, stop_s=5, volumes=True, quiet=True)
        try:
            done = runner.up(env, COMPOSE_TIMEOUT_S, exit_from_watcher=abort_on_exit, capture=True)
            assert not done.timed_out, f"compose ran past {COMPOSE_TIMEOUT_S} s\n{done.output[-4000:]}"
            listing = runner.ps(env)
            logs = runner.logs_volume()
            if user_config is not None:  # what `syslogbench run` adds: the writes outside /var/log
                outside = configrun.daemon_writes(user_config, runner.states(env), service)
        finally:
            runner.down(env, stop_s=5, volumes=True, quiet=True)
        files = sorted(results.glob("*.json"))
        assert len(files) == 1, f"expected one result file, got {files}\n{done.output[-4000:]}"
        if user_config is not None:
            configrun.amend(files[0], outside)
        assert done.code is not None
        return Run(done.code, json.loads(files[0].read_text()), done.output, listing, logs)

    return run
