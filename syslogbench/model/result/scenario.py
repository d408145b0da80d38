"""What ran: the scenario's axes and the load's shape as they were in force, and the daemon."""

from __future__ import annotations

from dataclasses import dataclass, field, make_dataclass
from typing import TYPE_CHECKING, Any, Protocol

from syslogbench.contract import CENTRAL_PORT
from syslogbench.model import scenarios
from syslogbench.model.result.plain import optional
from syslogbench.model.settings import DEFAULT_VARIANT, variant_name

if TYPE_CHECKING:
    from syslogbench.model.scenarios import Scenario as ScenarioFile
    from syslogbench.model.settings import Settings


# hosts, senders per host, messages per sender: the load every scenario had before a scenario held its own.
SEED_SHAPE = (5, 4, 300_000)


class Shape(Protocol):
    hosts: int
    senders_per_host: int
    messages_per_sender: int


def shape_variant(hosts: int, senders_per_host: int, messages_per_sender: int) -> str:
    """ "default" for the seed's shape, else "<hosts>x<senders_per_host>x<messages_per_sender>"."""
    if (hosts, senders_per_host, messages_per_sender) == SEED_SHAPE:
        return DEFAULT_VARIANT
    return variant_name(hosts, senders_per_host, messages_per_sender)


def variant_of(cfg: Shape) -> str:
    """The run's variant: the one its settings name, else the one its shape gives."""
    named = getattr(cfg, "variant", None)
    return (
        named
        if isinstance(named, str) and named
        else shape_variant(cfg.hosts, cfg.senders_per_host, cfg.messages_per_sender)
    )


@dataclass
class RunShape:
    """The scenario's id and the load's shape as they were in force; the scenario file's axes follow it."""

    id: str
    variant: str
    hosts: int
    senders_per_host: int
    messages_per_sender: int
    done_threshold: int
    done_window_s: int
    run_timeout_s: int
    seed: int
    framing: str | None = optional()
    port: int | None = optional()
    connections: int | None = optional()

    @classmethod
    def of(cls, cfg: Settings, scenario: ScenarioFile | None) -> Scenario:
        """The scenario's axes (from its file) and the load's shape, as they were in force."""
        axes = scenario.as_dict() if scenario else {"id": cfg.scenario}
        shape = dict(
            variant=variant_of(cfg),
            framing=scenario.framing if scenario else "unknown",
            port=CENTRAL_PORT,
            hosts=cfg.hosts,
            senders_per_host=cfg.senders_per_host,
            # The senders really connected: the axis in the file is 0 where the shape decides.
            connections=cfg.senders,
            messages_per_sender=cfg.messages_per_sender,
            done_threshold=cfg.done_threshold,
            done_window_s=cfg.done_window,
            run_timeout_s=cfg.run_timeout,
            seed=cfg.seed,
        )
        return Scenario(**(axes | shape))

    @property
    def messages_total(self) -> int:
        return self.hosts * self.senders_per_host * self.messages_per_sender


# The result's scenario: the run's shape, then each axis of the scenario file (model/scenarios.py FIELDS) that
# the shape does not record itself, in the file's order. A result written before an axis existed lacks it.
RESULT_AXES = tuple(
    axis for axis in scenarios.FIELDS if not axis.load and axis.name not in RunShape.__dataclass_fields__
)
Scenario = make_dataclass(
    "Scenario",
    [(axis.name, axis.kind | None, optional()) for axis in RESULT_AXES],
    bases=(RunShape,),
    namespace={"__module__": __name__},
)


@dataclass
class Daemon:
    profile: str = "unknown"
    name: str = "unknown"
    version: str = "unknown"
    package: str = "unknown"
    image: str = "unknown"
    base: str = "unknown"
    settings: dict[str, Any] = field(default_factory=dict)  # what departs from the daemon's defaults
    stopped: bool = False
    exit_code: int | None = None
    # TUNING: "default" (the package's defaults), "tuned" (its maintainers' recommended settings), "custom"
    # (a step of `knobs`) or "user" (run --config); and each knob the config set, with its parameter, value,
    # the daemon's own default and the documentation that recommends it. None in results older than these.
    tuning: str | None = optional()
    knobs: dict[str, Any] | None = optional()
