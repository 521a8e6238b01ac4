"""``python -m tests.fuzz --count N --seed S [--max-ops K] [--show M]``: run the differential
fuzzer and print the figures and the first findings (exit status 1 when there are findings)."""

from __future__ import annotations

import argparse
import sys

from .check import Stats, run_fuzz


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    p.add_argument("--count", type=int, default=1000, help="programs to generate (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="the run's seed (default 0)")
    p.add_argument("--max-ops", type=int, default=6, help="operators per program (default 6)")
    p.add_argument("--extra", type=int, default=3, help="random valuations besides the hidden one")
    p.add_argument("--show", type=int, default=5, help="findings to print in full (default 5)")
    args = p.parse_args(argv)

    def progress(i: int, stats: Stats) -> None:
        if (i + 1) % 500 == 0:
            print(f"... {i + 1} programs, {len(stats.findings)} findings", file=sys.stderr, flush=True)

    stats = run_fuzz(args.count, args.seed, max_ops=args.max_ops, extra=args.extra, progress=progress)
    print(stats.summary())
    for f in stats.findings[: args.show]:
        print()
        print(f)
    return 1 if stats.findings else 0


if __name__ == "__main__":
    sys.exit(main())
