"""The flags of one capacity search, each from its result alone, that say how far its figures can be
trusted (docs/capacity.md); report/capacity_rows.py pools them over the searches of a row.

- "at least (rig-limited)": the search found no rate the daemon failed at, because the senders or the
  watcher could go no faster (its rig_limit_msgs_per_s); "at least (RATE_MAX)": it reached its own ceiling.
- "contradicted": a believed trial after the search's decision, at or below the published NDR (or PDR),
  lost more than that goal allows (typically the latency trial at 90% of the PDR).
- "unconfirmed": the result's own `confirmed` verdict says the rate did not hold again (results that
  carry one; older ones do not, and are not flagged).
- "test config": the search ran a user's config (capacity --config), not the profile's own.
- "other settings": a setting that changes what is measured differs from the search's defaults.
- "rig-heavy": a believed trial says the rig took more than 5% of the daemon's CPU, or saw the output too
  coarsely for its latency (its `rig.flags`, model.capacity.rig_cost); results from before the compiled rig
  record no rig cost and are not flagged.
- "stolen": in a believed trial of a search that gave the daemon cores of its own (DAEMON_CORES), the
  hypervisor took more than STOLEN_MAX of those cores' time (steal, from its host's /proc/stat; results from
  before record none and are not flagged). What else ran there (their busy time less the daemon's CPU) is
  recorded but not flagged: busy time is sampled at the kernel's tick, within a few percent of a core.
- "fingerprints differ": the row pools searches whose machines' cpu fingerprints (loops per CPU second) differ
  by more than FINGERPRINT_SPREAD_MAX: machines that the Machines table names alike (the same CPU, cores and
  kernel) but that did not do the same work per CPU second, so the row's range is partly the machines'.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from syslogbench.model import capacity as model

# Where a search looks (its rate range and time budget), and what it adds after its NDR is published (the
# repeats for its interval), not what it measures: never "other settings".
RANGE_KEYS = frozenset({"rate_min", "rate_max", "search_max_s", "initial_trial_s", "pause_s", "ndr_repeats"})
SETTING_NAMES = {name: key for key, name in model.KEYS.items()}
DEFAULTS = model.CapacitySettings().as_dict()
# The trials a search relies on; warm-up and repeated ones it does not.
BELIEVED = ("search", "confirm", "latency")

RIG_LIMITED = "at least (rig-limited)"
AT_RATE_MAX = "at least (RATE_MAX)"
CONTRADICTED = "contradicted"
UNCONFIRMED = "unconfirmed"
TEST_CONFIG = "test config"
OTHER_SETTINGS = "other settings"
RIG_HEAVY = "rig-heavy"
STOLEN = "stolen"
# As the rig's own share (model.capacity.RIG_SHARE_MAX): past a twentieth of its cores' time taken by the
# hypervisor, a daemon bound by its core is measured on a slower core than the fingerprint saw.
STOLEN_MAX = 0.05
FINGERPRINTS_DIFFER = "fingerprints differ"
# Per CPU second the cpu fingerprint repeats within a few percent on one quiet machine
# (docs/findings/fingerprint-spread.md); machines of one label here did 8.4M to 14.3M loops (docs/capacity.md).
FINGERPRINT_SPREAD_MAX = 0.25


def setting_text(name: str, value: object) -> str:
    key = SETTING_NAMES.get(name, name.upper())
    return f"{key}={value:g}" if isinstance(value, int | float) else f"{key}={value}"


def other_settings(data: Mapping) -> list[str]:
    """The settings that change what is measured and differ from today's defaults, as KEY=VALUE. A key an
    older result lacks counts as the value its search ran with (model.capacity.BEFORE_THE_KEY); a key the
    defaults do not know (a newer result's) is listed whatever its value."""
    settings = {**model.BEFORE_THE_KEY, **(data.get("settings") or {})}
    found = [
        setting_text(name, value)
        for name, value in sorted(settings.items())
        if name not in RANGE_KEYS and default_of(name, data) != value
    ]
    return found + udp_buffer_setting(data)


def default_of(name: str, data: Mapping) -> object:
    """The default a search's setting is compared with. DAEMON_CORES's is the machine's own: half its cores
    on one host (model.capacity.default_daemon_cores), 0 on a swarm, where the daemon has a node."""
    if name != "daemon_cores":
        return DEFAULTS.get(name)
    if data.get("nodes"):
        return 0.0
    return float(model.default_daemon_cores(int((data.get("machine") or {}).get("cores") or 0)))


def udp_buffer_setting(data: Mapping) -> list[str]:
    """UDP_RCVBUF where a UDP search asked for a buffer (the kernel's default is the default): a search at
    another buffer measures another thing, and is never pooled with one at the default."""
    requested = (data.get("udp_buffers") or {}).get("requested_bytes")
    if requested is None:
        return []
    mib, rest = divmod(int(requested), 1024**2)
    return [f"UDP_RCVBUF={mib}m" if mib and not rest else f"UDP_RCVBUF={requested}"]


def published(bound: Mapping) -> float | None:
    """The rate a result gives for a goal (model Bound.published): the confirmed one where a confirmation
    was asked (none where it failed), else the search's lower bound."""
    if bound.get("confirmed") is None:
        return bound.get("lower_msgs_per_s")
    return bound.get("confirmed_msgs_per_s") if bound["confirmed"] else None


def at_least(data: Mapping) -> str | None:
    """Why the NDR is a floor, or None: the search found a rate above it that was not held. A search
    "unconfirmed" only at its PDR still found its NDR, confirmed."""
    ndr_held = data["outcome"] == "unconfirmed" and data["ndr"].get("confirmed") is True
    if data["outcome"] != "found" and not ndr_held:
        return f"at least ({data['outcome']})"
    if data["ndr"].get("upper_msgs_per_s") is not None:
        return None
    if data.get("rig_limit_msgs_per_s") is not None:
        return RIG_LIMITED
    # A confirmation that broke at RATE_MAX found the limit below it: the rate published then is the daemon's.
    rate = published(data["ndr"])
    return AT_RATE_MAX if rate is None or rate >= data["settings"]["rate_max"] else None


def believed(data: Mapping) -> list[Mapping]:
    return [t for t in data["trials"] if t.get("purpose", "search") in BELIEVED and not t.get("sender_bound")]


def contradictions(data: Mapping) -> list[str]:
    """Believed trials after the decision at a goal's published rate, at or below that rate, that broke the
    goal: "NDR: trial 19 lost 40.72% at 58,597 msg/s"."""
    found = []
    trials = believed(data)
    for goal in ("ndr", "pdr"):
        bound, confirmed = data[goal], data[goal].get("confirmed")
        if confirmed is False:  # unconfirmed: it publishes no rate
            continue
        # The published rate: the confirmed one (the failed confirmations above it were its steps down), or
        # the search's lower bound in results from before confirmation.
        rate = bound.get("confirmed_msgs_per_s") if confirmed else bound.get("lower_msgs_per_s")
        target = float(bound.get("loss_ratio") or 0)
        if rate is None:
            continue
        decided = max((t["number"] for t in trials if abs(t["offered_msgs_per_s"] - rate) < 0.5), default=0)
        for t in trials:
            if t["number"] > decided and t["offered_msgs_per_s"] <= rate + 0.5 and t["loss_ratio"] > target:
                found.append(
                    f"{goal.upper()}: trial {t['number']} lost {t['loss_ratio']:.2%} at "
                    f"{model.rate_text(t['offered_msgs_per_s'])} msg/s"
                )
                break
    return found


def rig_heavy(data: Mapping) -> list[str]:
    """What the believed trials say made their figures the rig's ("trial 7: the rig took 6.1% ...")."""
    return [
        f"trial {t['number']}: {flag}"
        for t in believed(data)
        for flag in (t.get("rig") or {}).get("flags", [])
    ]


def stolen_share(trial: Mapping) -> float | None:
    """The share of the daemon's cores' time over a trial that the hypervisor took (steal); None where the
    trial recorded no cores."""
    busy, idle, steal = (trial.get(f"daemon_cores_{name}_s") for name in ("busy", "idle", "steal"))
    if busy is None or idle is None or steal is None or busy + idle + steal <= 0:
        return None
    return steal / (busy + idle + steal)


def stolen(data: Mapping) -> list[str]:
    """Believed trials whose daemon's own cores lost over STOLEN_MAX of their time to steal ("trial 7: 6.0%
    of core 1's time stolen"); none where the daemon had no cores of its own."""
    if not (data.get("settings") or {}).get("daemon_cores"):
        return []
    return [
        f"trial {t['number']}: {share:.1%} of core {t['daemon_cores']}'s time stolen"
        for t in believed(data)
        if (share := stolen_share(t)) is not None and share > STOLEN_MAX
    ]


def confirmation(data: Mapping) -> bool | None:
    """The result's own verdict on whether its NDR and PDR held again (each bound's `confirmed`, model
    Bound): False if either did not, None where neither was asked (CONFIRM_S=0, or an older result)."""
    verdicts = [data[goal].get("confirmed") for goal in ("ndr", "pdr")]
    if False in verdicts:
        return False
    return True if True in verdicts else None


def flags(data: Mapping) -> list[str]:
    """The flags of one search, in the order the summary shows them."""
    found = []
    if limit := at_least(data):
        found.append(limit)
    if confirmation(data) is False:
        found.append(UNCONFIRMED)
    if contradictions(data):
        found.append(CONTRADICTED)
    if rig_heavy(data):
        found.append(RIG_HEAVY)
    if stolen(data):
        found.append(STOLEN)
    if (data.get("config") or {}).get("sha256"):
        found.append(TEST_CONFIG)
    if others := other_settings(data):
        found.append(f"{OTHER_SETTINGS} ({', '.join(others)})")
    return found


def fingerprint_per_cpu_s(search: Mapping, name: str) -> float | None:
    """One fingerprint figure (cpu, file_churn, loopback_tcp) per CPU second of the search's machine, if it
    recorded one."""
    figure = ((search.get("machine") or {}).get("fingerprint") or {}).get(name)
    if isinstance(figure, Mapping) and figure.get("per_cpu_s") is not None:
        return float(figure["per_cpu_s"])
    return None


def fingerprint_spread(searches: Sequence[Mapping]) -> str | None:
    """The flag when the searches' cpu fingerprints (per CPU second) differ by more than
    FINGERPRINT_SPREAD_MAX, with their range; None when they agree or fewer than two have one."""
    values = [value for search in searches if (value := fingerprint_per_cpu_s(search, "cpu"))]
    if len(values) < 2 or max(values) <= min(values) * (1 + FINGERPRINT_SPREAD_MAX):
        return None
    return f"{FINGERPRINTS_DIFFER} (cpu {min(values) / 1e6:.1f}M-{max(values) / 1e6:.1f}M loops per CPU s)"
