"""The 2014 reference figures: three `/usr/bin/time` runs per daemon, as published.

Transcribed by hand from the seed document (shared/seeds/000_c0a1f4aba303bdb8.txt). Only the
fields of the first `/usr/bin/time` line are kept: user s, system s, elapsed, %CPU, maxresident kB.
Elapsed is kept as printed ("m:ss.ss") so the transcription can be checked against the text.
"""

from __future__ import annotations

from statistics import median
from typing import NamedTuple

HARDWARE = (
    "Intel E5-2620, 8 CPU cores and 2 GB RAM on the central server, VMware ESXi 5.5 host; "
    "5 remote hosts with 2 CPU cores and 512 MB RAM each"
)
HOSTS = 5
SENDERS_PER_HOST = 4
MESSAGES_PER_SENDER = 300_000
# 20 senders x 300,000 messages, plus one DONE message from each sender.
MESSAGES_TOTAL = HOSTS * SENDERS_PER_HOST * (MESSAGES_PER_SENDER + 1)
KIB_PER_MIB = 1024


class Run(NamedTuple):
    """One `/usr/bin/time` line: `<user>user <system>system <elapsed>elapsed <cpu>%CPU ... <rss>maxresident`."""

    user_s: float
    system_s: float
    elapsed: str
    cpu_percent: int
    maxresident_kb: int

    @property
    def elapsed_s(self) -> float:
        return parse_elapsed(self.elapsed)


class Medians(NamedTuple):
    """Per-column medians of the three runs (each column on its own, not the figures of one run)."""

    user_s: float
    system_s: float
    elapsed_s: float
    cpu_percent: float
    max_rss_mib: float
    # Derived here as MESSAGES_TOTAL / median elapsed; the 2014 post did not publish a rate.
    msgs_per_s: float


RUNS: dict[str, tuple[Run, Run, Run]] = {
    "NXLog": (
        Run(832.65, 188.51, "6:07.43", 277, 205344),
        Run(826.07, 187.29, "6:04.07", 278, 252496),
        Run(835.78, 193.34, "6:07.30", 280, 239680),
    ),
    "Rsyslog5": (
        Run(38.83, 43.88, "1:22.16", 100, 25552),
        Run(41.09, 48.08, "1:27.56", 101, 25504),
        Run(41.21, 47.17, "1:26.94", 101, 25504),
    ),
    "Rsyslog7": (
        Run(37.97, 68.44, "1:22.71", 128, 207600),
        Run(38.13, 68.35, "1:23.13", 128, 204528),
        Run(37.82, 67.20, "1:21.58", 128, 212992),
    ),
    "Rsyslog8": (
        Run(29.01, 48.50, "1:08.24", 113, 210112),
        Run(29.85, 49.77, "1:10.52", 112, 212736),
        Run(34.53, 66.80, "1:30.88", 111, 207856),
    ),
    "Syslog-ng 3.3": (
        Run(64.85, 47.24, "0:21.30", 526, 32048),
        Run(65.88, 48.08, "0:21.72", 524, 31120),
        Run(65.48, 46.43, "0:21.94", 510, 31920),
    ),
    "Syslog-ng 3.5": (
        Run(62.21, 46.75, "0:20.56", 529, 29872),
        Run(62.92, 42.39, "0:21.86", 481, 30640),
        Run(61.46, 45.53, "0:19.82", 539, 29472),
    ),
}


def parse_elapsed(text: str) -> float:
    """Seconds from `/usr/bin/time`'s elapsed field: "[h:]m:ss.ss"."""
    seconds = 0.0
    for part in text.split(":"):
        seconds = seconds * 60 + float(part)
    return round(seconds, 2)


def daemon_medians(runs: tuple[Run, ...]) -> Medians:
    elapsed = median(run.elapsed_s for run in runs)
    return Medians(
        user_s=median(run.user_s for run in runs),
        system_s=median(run.system_s for run in runs),
        elapsed_s=elapsed,
        cpu_percent=median(run.cpu_percent for run in runs),
        max_rss_mib=median(run.maxresident_kb for run in runs) / KIB_PER_MIB,
        msgs_per_s=MESSAGES_TOTAL / elapsed,
    )


def medians() -> dict[str, Medians]:
    """Per daemon, in the seed's order, the medians of its three runs."""
    return {daemon: daemon_medians(runs) for daemon, runs in RUNS.items()}
