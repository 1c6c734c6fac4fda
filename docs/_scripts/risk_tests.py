"""Render the type I tables of docs/risk-tests.md from a grid's long table.

    fastrisk simulate grid --studies type1 --trisk-alpha 0,1,5 --trials 10000 --replicates 2000 \
        --seed 1 --processes 2 --tables DIR
    python docs/_scripts/risk_tests.py DIR/type_1.parquet [LEVEL]

Prints one Markdown table: per measure and test, the rejection rate ± its Monte-Carlo SE at
the significance level LEVEL (default 0.05), two-sided and one-tailed, at each topic-set size.
"""

from __future__ import annotations

import sys

import pyarrow.parquet as pq

TESTS = ("t", "trisk@1", "bootstrap_risk@1", "trisk@5", "bootstrap_risk@5", "trisk_smooth")
MEASURES = {"ap": "AP", "p10": "P@10", "rr": "RR", "ndcg20": "nDCG@20", "err20": "ERR@20"}


def main(path: str, level: float = 0.05) -> None:
    df = pq.read_table(path).to_pandas()
    df = df[(df.alpha - level).abs() < 1e-12]
    sizes = sorted(df.topics.unique())
    head = ["measure", "test", "hypothesis"] + [f"{t} n={n}" for t in ("2-tail", "1-tail") for n in sizes]
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join([":--"] * 3 + ["--:"] * (len(head) - 3)) + "|")
    for m, label in MEASURES.items():
        for test in TESTS:
            rows = df[(df.measure == m) & (df.test == test)]
            if rows.empty:
                continue
            cells = []
            for tails in ("two-sided", "one-tailed"):
                for n in sizes:
                    r = rows[(rows.tails == tails) & (rows.topics == n)]
                    cells.append(f"{r.rate.iloc[0]:.3f} ± {r.se.iloc[0]:.3f}" if len(r) else "")
            print(f"| {label} | {test} | {rows.hypothesis.iloc[0]} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 0.05)
