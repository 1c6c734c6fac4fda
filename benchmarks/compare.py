"""Re-run the benchmarks and list every side-by-side ratio that fell by more than 20 %.

The benchmarks are timed side by side with a peer in the same run (``benchmark.group`` per
workload), so the ratio peer / fastrisk of their medians survives a busy machine where absolute
times do not. ``benchmarks/recorded/<group>.json`` keeps the last recorded ratios of each
group, with the machine, its load average during the run, the commit and the date.

Usage (from the repository root)::

    python benchmarks/compare.py                      # every bench_*.py file, compare
    python benchmarks/compare.py bench_tables.py -k synthetic-200x10000
    python benchmarks/compare.py --json run.json      # compare a pytest-benchmark JSON already made
    python benchmarks/compare.py bench_small.py --record   # store this run's ratios as the reference

Exit status 1 when a ratio fell by more than ``--threshold`` (default 0.2) from its record.
A group's ratio is peer median / fastrisk median: the ``ratio_peer_over_fastrisk`` that
``conftest.side_by_side`` measured in alternating blocks where there is one, else the medians
of the group's benchmarks (the one whose name says ``fastrisk`` against each other one).
Not a test: timings do not belong in CI (CONTRIBUTING.md, "Tests and benchmarks").
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
RECORDED = HERE / "recorded"
THRESHOLD = 0.2


def machine() -> dict:
    """CPU model, core count and platform (what a ratio was measured on)."""
    model = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": model, "cores": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version()}


def commit() -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(HERE), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return out + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return None


def _peer_name(name: str) -> str:
    """``test_table_numpy_sums[synthetic-200x10000]`` -> ``table_numpy_sums``."""
    return re.sub(r"^test_", "", name.split("[", 1)[0])


def group_ratios(report: dict) -> dict:
    """{group: {"ratios": {peer: ratio}, "medians": {name: seconds}, "loadavg": [...]}} of a
    pytest-benchmark JSON report."""
    groups: dict = {}
    for b in report.get("benchmarks", []):
        g = groups.setdefault(b.get("group") or b["name"], {"benches": []})
        g["benches"].append(b)
    out = {}
    for name, g in sorted(groups.items()):
        ratios, medians, loads = {}, {}, []
        for b in g["benches"]:
            info = b.get("extra_info", {})
            medians[_peer_name(b["name"])] = b["stats"]["median"]
            for key in ("loadavg", "loadavg_before", "loadavg_after"):
                if info.get(key):
                    loads.append(info[key][0])
            for peer, r in (info.get("ratio_peer_over_fastrisk") or {}).items():
                ratios[peer] = r  # measured in alternating blocks (side_by_side)
        ours = [k for k in medians if "fastrisk" in k]
        if not ratios and len(ours) == 1:
            for peer, m in medians.items():
                if peer != ours[0] and medians[ours[0]] > 0:
                    ratios[peer] = m / medians[ours[0]]
        if ratios:
            out[name] = {"ratios": ratios, "medians": medians,
                         "loadavg_1min": [min(loads), max(loads)] if loads else None}
    return out


def _file_name(group: str) -> Path:
    return RECORDED / (re.sub(r"[^A-Za-z0-9_.-]+", "_", group) + ".json")


def record(groups: dict, meta: dict) -> list[Path]:
    RECORDED.mkdir(exist_ok=True)
    written = []
    for group, g in groups.items():
        path = _file_name(group)
        path.write_text(json.dumps({"group": group, **g, **meta}, indent=1, sort_keys=True) + "\n")
        written.append(path)
    return written


def compare(groups: dict, threshold: float = THRESHOLD) -> tuple[list[str], list[str]]:
    """(lines of every ratio compared, lines of those that fell by more than ``threshold``)."""
    lines, fell = [], []
    for group, g in groups.items():
        path = _file_name(group)
        old = json.loads(path.read_text()) if path.exists() else None
        for peer, r in sorted(g["ratios"].items()):
            before = (old or {}).get("ratios", {}).get(peer)
            if before is None:
                lines.append(f"{group:40s} {peer:34s} {r:9.2f}x   (no record)")
                continue
            change = r / before - 1.0
            line = (f"{group:40s} {peer:34s} {r:9.2f}x   recorded {before:9.2f}x ({change:+.0%}; "
                    f"then load {old.get('loadavg_1min')}, commit {old.get('commit')}, {old.get('date', '')[:10]})")
            lines.append(line)
            if change < -threshold:
                fell.append(line)
    return lines, fell


def run_benchmarks(files: list[str], extra: list[str], json_path: Path) -> int:
    cmd = [sys.executable, "-m", "pytest", *files, "-q", "-p", "no:cacheprovider", "--benchmark-only",
           f"--benchmark-json={json_path}", "--benchmark-min-rounds=3", "--benchmark-columns=median,rounds", *extra]
    return subprocess.run(cmd, cwd=HERE).returncode


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="*", help="benchmark files (default: every bench_*.py)")
    p.add_argument("--json", type=Path, help="compare this pytest-benchmark JSON instead of running")
    p.add_argument("--record", action="store_true", help="store this run's ratios as the new reference")
    p.add_argument("--threshold", type=float, default=THRESHOLD, help="report ratios that fell by more (0.2)")
    p.add_argument("-k", dest="k", help="pytest -k expression")
    args = p.parse_args(argv)
    load_before = os.getloadavg()
    if args.json:
        report = json.loads(args.json.read_text())
    else:
        files = args.files or sorted(f.name for f in HERE.glob("bench_*.py"))
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "run.json"
            code = run_benchmarks(files, ["-k", args.k] if args.k else [], out)
            if not out.exists():
                print(f"the benchmarks did not run (pytest exit {code})", file=sys.stderr)
                return 2
            report = json.loads(out.read_text())
    groups = group_ratios(report)
    meta = {"machine": machine(), "commit": commit(),
            "date": report.get("datetime") or _dt.datetime.now(_dt.timezone.utc).isoformat(),
            "loadavg_run": [round(x, 2) for x in load_before] + [round(x, 2) for x in os.getloadavg()]}
    lines, fell = compare(groups, args.threshold)
    print(f"machine {meta['machine']['cpu']} ({meta['machine']['cores']} cores), load 1/5/15 min before and "
          f"after: {meta['loadavg_run']}, commit {meta['commit']}")
    print("\n".join(lines))
    if args.record:
        for path in record(groups, meta):
            print(f"recorded {path.relative_to(HERE.parent)}")
        return 0
    if fell:
        print(f"\n{len(fell)} ratio(s) fell by more than {args.threshold:.0%}:")
        print("\n".join(fell))
        return 1
    print(f"\nno ratio fell by more than {args.threshold:.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
