"""Coverage of onnx's node test cases: ``python -m tests.onnx.coverage [-v] [--op OP] [--json F]``.

Prints cases passed / total, operator types covered / total, and every miss grouped by cause
(an operator without converter, a node that needs shape values, a new core operator, control flow,
an unsupported dtype or sequence type) and the BUGs (wrong shape or dtype, an error or unresolved
type on a case that runs, a crash), which must be zero. See ``node_oracle`` for the rules.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from node_oracle import BUG_CATEGORIES, collect_cases, run_all, summarize


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("-v", "--verbose", action="store_true", help="list every missed case")
    ap.add_argument("--json", help="write the verdicts to this file")
    ap.add_argument(
        "--symbolic",
        action="store_true",
        help="make every input dimension a symbol; check outputs and guards after substitution",
    )
    args = ap.parse_args(argv)
    collect_cases()
    t0 = time.perf_counter()
    verdicts = run_all(args.symbolic)
    dt = time.perf_counter() - t0
    s = summarize(verdicts)
    print(f"cases passed: {s['passed']} / {s['cases']} ({100 * s['passed'] / s['cases']:.1f} %)")
    print(f"op types covered (>= 1 case passes): {s['ops_covered']} / {s['ops']}")
    print(f"op types fully covered (every case passes): {s['ops_fully_covered']} / {s['ops']}")
    print(f"time: {dt:.1f} s for {s['cases']} cases")
    for cat, vs in s["misses"].items():
        bug = "  <-- BUG" if cat in BUG_CATEGORIES else ""
        ops = s["miss_ops"][cat]
        print(f"\n{cat}: {len(vs)} cases, {len(ops)} op types{bug}")
        print("  " + ", ".join(f"{o} ({k})" for o, k in sorted(ops.items())))
        if args.verbose or cat in BUG_CATEGORIES:
            for v in vs:
                print(f"    {v.name}: {v.detail[:300]}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump([v.__dict__ for v in verdicts], f, indent=1)
    return 1 if any(c in s["misses"] for c in BUG_CATEGORIES) else 0


if __name__ == "__main__":
    sys.exit(main())
