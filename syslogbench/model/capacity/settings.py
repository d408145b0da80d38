"""The capacity search's settings (docs/capacity.md): KEY=VALUE beside the run's, checked at once, what a
search takes of SEARCH_MAX and of the daemon's lifetime, and where each role runs (its cpuset).

A search offers the daemon one rate after another in trials against a daemon that stays up, and finds the
highest rate it holds with no message lost or late (NDR) and with at most PDR_TARGET of them (PDR). A message
counts against a trial if it never arrived, or arrived more than LATENCY_BOUND after its intended send time.
Stdlib only: the watcher, the generators and the host all import it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass

from syslogbench import contract
from syslogbench.model import settings

# The daemon's supervisor stops it this long after it starts (daemons/_common/supervise.sh).
MAX_LIFETIME_S = int(contract.SUPERVISOR_ENV["MAX_LIFETIME"] or 0)
# After the search, a trial at each of these fractions of the PDR measures its latency, as CSIT reports it.
PDR_FRACTIONS = (0.1, 0.5, 0.9)
LATENCY_TRIALS = len(PDR_FRACTIONS)


class CapacityError(ValueError):
    """A capacity setting that cannot be used: the message says what to change."""


@dataclass(frozen=True)
class CapacitySettings:
    """The search's own settings, given as KEY=VALUE beside the run's (docs/capacity.md). Rates are msg/s
    summed over every sender."""

    latency_bound_s: float = contract.DEFAULT_LATENCY_BOUND_S  # LATENCY_BOUND (contract.CapacityEnv)
    pdr_target: float = 0.005  # PDR_TARGET: the loss ratio the PDR may have (CSIT's 0.5%)
    rate_min: float = 100.0  # RATE_MIN
    rate_max: float = 100_000.0  # RATE_MAX
    relative_width: float = 0.05  # SEARCH_WIDTH: the search stops when upper/lower bound is within this
    initial_trial_s: float = 1.0  # TRIAL_INITIAL
    final_trial_s: float = 10.0  # TRIAL_FINAL
    # SEARCH_MAX: a whole search, trials and pauses, its confirmation and latency trials included: 10 minutes
    # (docs/capacity.md, "Defaults").
    search_max_s: float = 600.0
    pause_s: float = 2.0  # TRIAL_PAUSE: between trials, so queues drain
    # DAEMON_CORES: N >= 1 gives the daemon the host's last N cores and the senders, the watcher and the
    # last hop the others (cpusets), as the 2014 remote hosts were apart; 0 runs every role on any core.
    # None: half the host's cores (default_daemon_cores), decided by the search's plan and recorded as the
    # number in force. With the rig on the daemon's cores two searches in a row published rates 12.6% (rsyslog)
    # and 23% (syslog-ng) apart; with the daemon on a core of its own, three searches of each published one
    # rate (docs/findings/capacity-daemon-own-core.md).
    daemon_cores: float | None = None
    # Repeated final trials, as CSIT runs them on noisy systems: a rate is decided once its final trials add
    # up to TRIAL_SUM seconds (0: one trial of TRIAL_FINAL), and it holds if the trials that lost more than
    # the goal allows make up at most EXCEED_RATIO of that time (CSIT's 0.5). With 30 s and 0.5, a trial
    # shorter than TRIAL_FINAL can never alone make a rate an upper bound: MLRsearch would need more than
    # 15 s of excess, and every short trial is under 10 s (docs/capacity.md, "Defaults"). With 0, one 1 s
    # trial that lost 128 datagrams set both bounds of a UDP search (issue 27).
    trial_sum_s: float = 30.0  # TRIAL_SUM
    exceed_ratio: float = 0.5  # EXCEED_RATIO
    # CONFIRM_S: after the search, the NDR and the PDR are each held this long before they are published
    # (RFC 2544's 60 s); 0: no confirmation, the search's lower bounds are published as they are.
    confirm_s: float = 60.0
    # NDR_REPEATS: after the confirmation and the latency trials, this many trials of TRIAL_FINAL at the
    # published NDR, while SEARCH_MAX allows: their spread gives the NDR's interval for the next search
    # (model/capacity/interval.py); 0: none. A comparison's searches run none: its rounds are its repeats.
    ndr_repeats: float = 5.0

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


# What a search ran with before its result recorded these settings: one final trial per rate (TRIAL_SUM and
# EXCEED_RATIO came in 4194329), and no confirmation (CONFIRM_S came after).
BEFORE_THE_KEY = {"trial_sum_s": 0.0, "exceed_ratio": 0.0, "confirm_s": 0.0}

# KEY=VALUE name -> field; each a number of its own unit (seconds, msg/s, or a ratio).
KEYS = {
    "LATENCY_BOUND": "latency_bound_s",
    "PDR_TARGET": "pdr_target",
    "RATE_MIN": "rate_min",
    "RATE_MAX": "rate_max",
    "SEARCH_WIDTH": "relative_width",
    "TRIAL_INITIAL": "initial_trial_s",
    "TRIAL_FINAL": "final_trial_s",
    "SEARCH_MAX": "search_max_s",
    "TRIAL_PAUSE": "pause_s",
    "DAEMON_CORES": "daemon_cores",
    "TRIAL_SUM": "trial_sum_s",
    "EXCEED_RATIO": "exceed_ratio",
    "CONFIRM_S": "confirm_s",
    "NDR_REPEATS": "ndr_repeats",
}
# Seconds a trial costs beyond its own length and TRIAL_PAUSE: the drain, the common start, compose exec
# (committed TRIAL_SUM=30 searches took 5.4 to 5.7 s per trial beyond their lengths, the pause and compose
# up and down included).
TRIAL_OVERHEAD_S = 5.0
# The daemon and the senders up, a trial's templates rendered (rig/trialsender.py): the senders make the messages
# as they send, so the wait does not grow with a trial's messages.
READY_WAIT_S = 120.0


def split(overrides: Mapping[str, str]) -> tuple[CapacitySettings, dict[str, str]]:
    """The capacity settings among the overrides (validated), and the rest (the run's own settings)."""
    values: dict[str, float] = {}
    for key in sorted(set(overrides) & set(KEYS)):
        try:
            values[KEYS[key]] = settings.decimal(key, overrides[key])
        except settings.SettingsError as error:
            raise CapacityError(str(error)) from None
    cap = CapacitySettings(**values)
    refuse_invalid(cap)
    return cap, {k: v for k, v in overrides.items() if k not in KEYS}


def refuse_invalid(cap: CapacitySettings) -> None:
    """Every rule at once would hide which one to fix first: the first broken one, with the fix."""
    if not 0 <= cap.pdr_target < 1:
        raise CapacityError(f"PDR_TARGET={cap.pdr_target:.12g} is outside [0, 1): 0.005 is CSIT's 0.5%")
    if cap.latency_bound_s <= 0:
        raise CapacityError(
            f"LATENCY_BOUND={cap.latency_bound_s:.12g}: every message would be late; give seconds above 0 (default 1)"
        )
    if cap.rate_min <= 0:
        raise CapacityError(f"RATE_MIN={cap.rate_min:.12g}: give a rate above 0 msg/s")
    if cap.rate_max <= cap.rate_min:
        raise CapacityError(
            f"the rate range RATE_MIN={cap.rate_min:.12g} to RATE_MAX={cap.rate_max:.12g} is empty: make RATE_MAX larger"
        )
    if not 0 < cap.relative_width < 1:
        raise CapacityError(f"SEARCH_WIDTH={cap.relative_width:.12g}: give a ratio in (0, 1), e.g. 0.05")
    if not 0 < cap.initial_trial_s <= cap.final_trial_s:
        raise CapacityError(
            f"TRIAL_INITIAL={cap.initial_trial_s:.12g} s, TRIAL_FINAL={cap.final_trial_s:.12g} s: "
            "both above 0, the first no longer than the second"
        )
    if cap.daemon_cores is not None and (cap.daemon_cores < 0 or cap.daemon_cores != int(cap.daemon_cores)):
        raise CapacityError(
            f"DAEMON_CORES={cap.daemon_cores:.12g}: give a whole number of cores (0: every role on any core)"
        )
    if not 0 <= cap.exceed_ratio < 1:
        raise CapacityError(
            f"EXCEED_RATIO={cap.exceed_ratio:.12g} is outside [0, 1): the share of a rate's final trials that may "
            "lose more than the goal (0: none; CSIT's 0.5)"
        )
    if cap.trial_sum_s and cap.trial_sum_s < cap.final_trial_s:
        raise CapacityError(
            f"TRIAL_SUM={cap.trial_sum_s:.12g} s is shorter than one final trial (TRIAL_FINAL={cap.final_trial_s:.12g} "
            "s): give 0 for one trial per rate, or a multiple of TRIAL_FINAL"
        )
    if cap.search_max_s < cap.final_trial_s or cap.pause_s < 0:
        raise CapacityError(
            f"SEARCH_MAX={cap.search_max_s:.12g} s must hold one final trial ({cap.final_trial_s:.12g} s), "
            f"and TRIAL_PAUSE={cap.pause_s:.12g} s cannot be negative"
        )
    check_lifetime(cap)
    if cap.ndr_repeats != int(cap.ndr_repeats) or cap.ndr_repeats < 0 or cap.ndr_repeats == 1:
        raise CapacityError(
            f"NDR_REPEATS={cap.ndr_repeats:.12g}: give 0 for none, or a whole number from 2 (one repeat has no "
            "spread; 5 by default)"
        )
    if cap.confirm_s < 0 or (cap.confirm_s and cap.confirm_s < cap.final_trial_s):
        raise CapacityError(
            f"CONFIRM_S={cap.confirm_s:.12g} s: give 0 for no confirmation, or at least TRIAL_FINAL="
            f"{cap.final_trial_s:.12g} s (RFC 2544's 60 s by default)"
        )
    if cap.search_max_s < cap.final_trial_s + reserve_s(cap):
        raise CapacityError(
            f"SEARCH_MAX={cap.search_max_s:.12g} s cannot hold a final trial and, after the search, the "
            f"confirmation and latency trials ({reserve_s(cap):.0f} s): give at least "
            f"{cap.final_trial_s + reserve_s(cap):.0f}, or a shorter CONFIRM_S"
        )


def trial_cost_s(cap: CapacitySettings, seconds: float) -> float:
    """What one trial of `seconds` takes of SEARCH_MAX: its length, the pause before it, and the overhead."""
    return seconds + cap.pause_s + TRIAL_OVERHEAD_S


def reserve_s(cap: CapacitySettings) -> float:
    """What SEARCH_MAX keeps for after the search: one confirmation each of the NDR and the PDR, and the
    latency trials. MLRsearch gets the rest."""
    confirm = 2 * trial_cost_s(cap, cap.confirm_s) if cap.confirm_s else 0.0
    return confirm + len(PDR_FRACTIONS) * trial_cost_s(cap, cap.final_trial_s)


# Beyond SEARCH_MAX (which holds the confirmation and the latency trials): their drains and a last trial.
def beyond_s(cap: CapacitySettings) -> float:
    return 2 * (cap.confirm_s + cap.final_trial_s) + 120


def lifetime_s(cap: CapacitySettings) -> float:
    """How long the rig serves a search: SEARCH_MAX, and beyond it the last trials' drains (host/capacity/command.py)."""
    return cap.search_max_s + beyond_s(cap)


def check_lifetime(cap: CapacitySettings) -> None:
    """The daemon's supervisor stops it MAX_LIFETIME after it starts, whatever runs: a search must end
    before, with the rig's start (settings.START_ALLOWANCE_S) on top. A pause or a latency bound longer than
    the whole search could never be waited for."""
    if cap.pause_s > cap.search_max_s or cap.latency_bound_s > cap.search_max_s:
        raise CapacityError(
            f"TRIAL_PAUSE={cap.pause_s:.12g} s and LATENCY_BOUND={cap.latency_bound_s:.12g} s must each be at most "
            f"SEARCH_MAX={cap.search_max_s:.12g} s: a wait longer than the whole search never ends in it"
        )
    room = MAX_LIFETIME_S - settings.START_ALLOWANCE_S
    if lifetime_s(cap) > room:
        most = room - beyond_s(cap)
        raise CapacityError(
            f"SEARCH_MAX={cap.search_max_s:.12g} s with what follows its trials (CONFIRM_S={cap.confirm_s:.12g} s, "
            f"TRIAL_FINAL={cap.final_trial_s:.12g} s) runs {lifetime_s(cap):,.0f} s, but the "
            f"daemon's supervisor stops it MAX_LIFETIME={MAX_LIFETIME_S} s after it starts, {settings.START_ALLOWANCE_S} s "
            f"of which may go to starting: use SEARCH_MAX={max(most, 0):.0f} or less"
        )


def default_daemon_cores(host_cores: int) -> int:
    """One host's default DAEMON_CORES: half its cores for the daemon, the rest for the rig; 0 (any core)
    on a one-core host, where no core is left to keep apart."""
    return host_cores // 2


def placement(daemon_cores: int, host_cores: int) -> dict[str, str]:
    """The cpuset of each role (Docker's syntax, e.g. "1" or "2-3"; "any": no cpuset): the daemon on the
    host's last daemon_cores cores, the rest of the rig on the others. CapacityError when no core is left."""
    if daemon_cores == 0:
        return {"daemon": "any", "senders": "any", "watcher": "any"}
    if daemon_cores >= host_cores:
        raise CapacityError(
            f"DAEMON_CORES={daemon_cores} leaves no core for the senders and the watcher on this "
            f"{host_cores}-core host: give at most {host_cores - 1}, or 0 for any core"
        )
    daemon = _cores(host_cores - daemon_cores, host_cores - 1)
    rig = _cores(0, host_cores - daemon_cores - 1)
    return {"daemon": daemon, "senders": rig, "watcher": rig}


def _cores(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}-{last}"
