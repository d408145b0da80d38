"""One run's result, typed: what the watcher writes to results/<run_id>.json and what the report reads.

results/schema.json describes the same document; tests/unit/test_schema.py checks that the two agree. Every
result already in results/ loads through `Result.from_dict`, older ones upgraded in `upgrade()`: the one
place that knows what an older document lacked. Stdlib only: the watcher imports this in its container.

One module per part: plain (plain data and back), scenario (what ran), fingerprint and host (the machine),
counts (messages and senders), udp, usage (CPU, memory, rates, samples), relay, harness (its own cost),
config (the `config` block of a `run --config`) and document (Result, its versions, reader and writer).
Every public name is here too, so `result.Result` and `from syslogbench.model.result import Result` read as
they did.

    python -m syslogbench.model.result FILE...   checks that each file loads into the model
"""

from syslogbench.model.result.config import ConfigFile, OutputFile, UserConfig
from syslogbench.model.result.counts import Messages, Sender, Tls
from syslogbench.model.result.document import (
    SCHEMA_VERSION,
    VERDICTS,
    Matrix,
    Result,
    main,
    not_applicable,
    nothing_received,
    read,
    run_id,
    upgrade,
    utc,
)
from syslogbench.model.result.fingerprint import UNSTEADY_COV, Figure, Fingerprint, cov
from syslogbench.model.result.harness import (
    GeneratorReport,
    Harness,
    HarnessContainer,
    HarnessCpu,
    LastHopCpu,
    LastHopCpuAt,
    cpu_share,
)
from syslogbench.model.result.host import Host, Limit, Limits, Node, Topology, readable
from syslogbench.model.result.plain import OMIT_IF_NONE, ResultError, load, optional, plain
from syslogbench.model.result.relay import LastHop, Queue, Relay, Restart, Tail
from syslogbench.model.result.scenario import (
    RESULT_AXES,
    SEED_SHAPE,
    Daemon,
    RunShape,
    Scenario,
    Shape,
    shape_variant,
    variant_of,
)
from syslogbench.model.result.udp import Udp, UdpBuffers, UdpKernel, udp_buffers
from syslogbench.model.result.usage import (
    SAMPLE_COLUMNS,
    Cpu,
    End,
    Generators,
    Io,
    Memory,
    Rate,
    Samples,
    SenderBound,
    Spread,
    Throughput,
    rate_of,
    time_line,
)

__all__ = [
    "ConfigFile",
    "Cpu",
    "Daemon",
    "End",
    "Figure",
    "Fingerprint",
    "GeneratorReport",
    "Generators",
    "Harness",
    "HarnessContainer",
    "HarnessCpu",
    "Host",
    "Io",
    "LastHop",
    "LastHopCpu",
    "LastHopCpuAt",
    "Limit",
    "Limits",
    "Matrix",
    "Memory",
    "Messages",
    "Node",
    "OMIT_IF_NONE",
    "OutputFile",
    "Queue",
    "RESULT_AXES",
    "Rate",
    "Relay",
    "Restart",
    "Result",
    "ResultError",
    "RunShape",
    "SAMPLE_COLUMNS",
    "SCHEMA_VERSION",
    "SEED_SHAPE",
    "Samples",
    "Scenario",
    "Sender",
    "SenderBound",
    "Shape",
    "Spread",
    "Tail",
    "Throughput",
    "Tls",
    "Topology",
    "UNSTEADY_COV",
    "Udp",
    "UdpBuffers",
    "UdpKernel",
    "UserConfig",
    "VERDICTS",
    "cov",
    "cpu_share",
    "load",
    "main",
    "not_applicable",
    "nothing_received",
    "optional",
    "plain",
    "rate_of",
    "read",
    "readable",
    "run_id",
    "shape_variant",
    "time_line",
    "udp_buffers",
    "upgrade",
    "utc",
    "variant_of",
]
