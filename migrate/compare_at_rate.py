"""One-off: capacity comparisons written before each side's search paired its CPU per message at the
comparison's fixed rate (host/compare.py, cpu_rate) gain that figure's ratios, each "no ratio" (their
searches ran no such trial), so that every capacity comparison holds the same figures (model.compare.fields).
Nothing else in the file changes; each is read back through the strict reader before it is written. Run on
2026-12-07 over every committed capacity comparison:

    PYTHONPATH=. .venv/bin/python migrate/compare_at_rate.py results/compare/*-capacity.json
"""

from __future__ import annotations

import sys
from pathlib import Path

from syslogbench.model import codec
from syslogbench.model import compare as model


def migrate(paths: list[str]) -> int:
    for name in paths:
        path = Path(name)
        found = codec.load_kind(model.CompareResult, codec.read_json(path), "compare result", model.KIND)
        if found.measure not in model.AT_RATE:
            print(f"{path.name}: a {found.measure} comparison, left as it was")
            continue
        model.judge_again(found)
        path.write_text(model.text(found))
        print(f"{path.name}: {len(found.ratios)} sides' ratios of {', '.join(model.fields(found.measure))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(migrate(sys.argv[1:]))
