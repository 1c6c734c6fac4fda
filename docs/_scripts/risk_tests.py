"""Render the tables of docs/risk-tests.md from a grid's long tables.

    fastrisk simulate grid --studies type1 --trisk-alpha 0,1,5 --trials 10000 --replicates 2000 \
        --seed 1 --processes 2 --tables DIR
    python docs/_scripts/risk_tests.py DIR/type_1.parquet [LEVEL]

    fastrisk simulate grid --studies power,type3 --trisk-alpha 0,1,5 --delta 0.05 --trials 10000 \
        --replicates 2000 --seed 1 --processes 2 --tables DIR
    python docs/_scripts/risk_tests.py DIR/type_2.parquet [LEVEL] [FIGURE.svg]   # power and type III

Prints one Markdown table at the significance level LEVEL (default 0.05). Type I: per measure
and test, the rejection rate ± its Monte-Carlo SE, two-sided and one-tailed, at each topic-set
size. Power (type_2.parquet, with type_3.parquet beside it): per measure and test, two-sided
power ± SE and the type III rate at each size and effect size; with FIGURE, also power against
topics, one panel a measure.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow.parquet as pq

TESTS = ("t", "trisk@1", "bootstrap_risk@1", "trisk@5", "bootstrap_risk@5", "trisk_smooth")
MEASURES = {"ap": "AP", "p10": "P@10", "rr": "RR", "ndcg20": "nDCG@20", "err20": "ERR@20"}


def _table(head, rows) -> None:
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join([":--"] * 3 + ["--:"] * (len(head) - 3)) + "|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


def _at(df, level):
    levels = df.significance if "significance" in df else df.alpha  # the level's column (alpha before #41)
    return df[(levels - level).abs() < 1e-12]


def type_1(path: str, level: float) -> None:
    df = _at(pq.read_table(path).to_pandas(), level)
    sizes = sorted(df.topics.unique())
    head = ["measure", "test", "hypothesis"] + [f"{t} n={n}" for t in ("2-tail", "1-tail") for n in sizes]
    rows = []
    for m, label in MEASURES.items():
        for test in TESTS:
            sel = df[(df.measure == m) & (df.test == test)]
            if sel.empty:
                continue
            cells = []
            for tails in ("two-sided", "one-tailed"):
                for n in sizes:
                    r = sel[(sel.tails == tails) & (sel.topics == n)]
                    cells.append(f"{r.rate.iloc[0]:.3f} ± {r.se.iloc[0]:.3f}" if len(r) else "")
            rows.append([label, test, sel.hypothesis.iloc[0], *cells])
    _table(head, rows)


def power(path: str, level: float) -> None:
    two = _at(pq.read_table(path).to_pandas(), level)
    two = two[two.tails == "two-sided"]
    three = _at(pq.read_table(Path(path).with_name("type_3.parquet")).to_pandas(), level)
    three = three[three.tails == "two-sided"]
    sizes = sorted(two.topics.unique())
    multi = two.delta.nunique() > 1
    head = ["measure", "test", "hypothesis"] + [f"power n={n}" for n in sizes] + [f"type III n={n}" for n in sizes]
    rows = []
    for m, label in MEASURES.items():
        for test in TESTS:
            for delta in sorted(two.delta.unique()):
                sel = two[(two.measure == m) & (two.test == test) & (two.delta == delta)]
                if sel.empty:
                    continue
                sel3 = three[(three.measure == m) & (three.test == test) & (three.delta == delta)]
                cells = []
                for n in sizes:
                    r = sel[sel.topics == n]
                    cells.append(f"{r.rate.iloc[0]:.3f} ± {r.se.iloc[0]:.3f}" if len(r) else "")
                for n in sizes:
                    r = sel3[sel3.topics == n]
                    cells.append(f"{r.rate.iloc[0]:.4f}" if len(r) else "")
                hyp = sel.hypothesis.iloc[0] + (f" (δ = {delta:g})" if multi else "")
                rows.append([label, test, hyp, *cells])
    _table(head, rows)


def power_figure(path: str, level: float, out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    df = _at(pq.read_table(path).to_pandas(), level)
    df = df[df.tails == "two-sided"]
    fig, axes = plt.subplots(1, len(MEASURES), figsize=(3.2 * len(MEASURES), 3.2), sharey=True)
    for ax, (m, label) in zip(axes, MEASURES.items()):
        for test in TESTS:
            sel = df[(df.measure == m) & (df.test == test)].sort_values("topics")
            if not sel.empty:
                ax.errorbar(sel.topics, sel.rate, yerr=2 * sel.se, marker="o", ms=3, capsize=2, label=test)
        ax.set_xscale("log")
        ax.minorticks_off()
        ax.set_xticks(sorted(df.topics.unique()), [str(n) for n in sorted(df.topics.unique())])
        ax.set_title(label)
        ax.set_xlabel("topics")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"power at level {level:g}, two-sided (± 2 SE)")
    axes[-1].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(out, metadata={"Date": None})


def main(path: str, level: float = 0.05, figure: str | None = None) -> None:
    (power if Path(path).name.startswith("type_2") else type_1)(path, level)
    if figure:
        power_figure(path, level, figure)


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 0.05, sys.argv[3] if len(sys.argv) > 3 else None)
