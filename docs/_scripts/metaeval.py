"""Render the tables and figures of docs/meta-evaluation.md from the study's sweep.

    fastrisk sweep docs/_scripts/metaeval.toml --out meta.parquet
    python docs/_scripts/metaeval.py meta.parquet [IMG_DIR]

Prints the Markdown tables: discriminative power (% of pairs with ASL < 0.05) of every collection
and statistic, the overall swap rate at the largest topic-set size, and the two published
checks (Sakai 2006: AP more discriminative than P@10 on TREC 5-8 ad hoc; Voorhees & Buckley
2002: the swap rate falls as the difference and the topic-set size grow). With IMG_DIR, also
draws meta-asl-adhoc8.svg (ASL curves of AP, P@10 and RR and of the risk statistics on AP, TREC-8
ad hoc; B = 1000, seed 2006) and meta-swap-adhoc8-ap.svg (swap rate against difference).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

COLUMNS = [("mean", 0), ("urisk", 1), ("urisk", 5), ("trisk", 1), ("trisk", 5), ("zrisk", 1), ("zrisk", 5),
           ("georisk", 1), ("georisk", 5)]
HEAD = ["mean", "URisk α=1", "URisk α=5", "TRisk α=1", "TRisk α=5", "ZRisk α=1", "ZRisk α=5", "GeoRisk α=1",
        "GeoRisk α=5"]
MEASURE = {"ap": "AP", "p10": "P@10", "rr": "RR", "err20": "ERR@20", "ndcg20": "nDCG@20"}


def _name(data: str) -> str:
    coll, meas = data.split(":", 1)[1].rsplit("_", 1)
    return f"{coll} {MEASURE.get(meas, meas)}"


def _table(head, rows) -> None:
    print("| " + " | ".join(head) + " |")
    print("|:--|" + "|".join(["--:"] * (len(head) - 1)) + "|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print()


def _key(df):
    stat = df["param_statistic"].fillna("mean")
    alpha = df["param_alpha"].fillna(0).astype(int)
    return stat, alpha


def main(path: str, img: str | None = None) -> None:
    df = pq.read_table(path).to_pandas()
    bad = df[df.status != "ok"]
    if len(bad):
        print(f"<!-- {len(bad)} failed jobs: {sorted(set(bad.error))} -->")
    power = df[df.kind == "discriminative_power"].copy()
    power["stat"], power["a"] = _key(power)
    swap = df[df.kind == "swap_rates"].copy()
    swap["stat"], swap["a"] = _key(swap)
    order = sorted(set(power.data), key=lambda d: (not d.startswith("trec:adhoc"), d))

    print("**Discriminative power** (% of pairs with ASL < 0.05; B = 1000; the estimated difference "
          "required for the mean in brackets):\n")
    rows = []
    for d in order:
        sub = power[power.data == d]
        cells = []
        for stat, a in COLUMNS:
            v = sub[(sub.stat == stat) & (sub.a == a)]
            cell = f"{100 * v.discriminative_power.iloc[0]:.1f}" if len(v) else "–"
            if stat == "mean" and len(v):
                cell += f" ({v.estimated_difference.iloc[0]:.3f})"
            cells.append(cell)
        rows.append([_name(d)] + cells)
    means = []
    for stat, a in COLUMNS:
        v = power[(power.stat == stat) & (power.a == a)].discriminative_power
        means.append(f"**{100 * v.mean():.1f}**")
    rows.append(["mean of the 20"] + means)
    _table(["collection"] + HEAD, rows)

    print("**Swap rate** (% of pairs whose sign differs between two disjoint halves of the largest size "
          "n = c/2, all differences together; mean: 1,000 splits, risk statistics: 200):\n")
    rows = []
    for d in order:
        sub = swap[swap.data == d]
        cells = []
        for stat, a in COLUMNS:
            v = sub[(sub.stat == stat) & (sub.a == a)]
            if not len(v):
                cells.append("–")
                continue
            top = v[v["size"] == v["size"].max()]
            cells.append(f"{100 * top.swaps.sum() / top.total.sum():.1f}")
        rows.append([_name(d)] + cells)
    _table(["collection"] + HEAD, rows)

    print("**Sakai (2006): AP against P@10** (discriminative power of the mean, %):\n")
    rows, wins = [], 0
    for y in (5, 6, 7, 8):
        ap = power[(power.data == f"trec:adhoc{y}_ap") & (power.stat == "mean")].discriminative_power.iloc[0]
        p10 = power[(power.data == f"trec:adhoc{y}_p10") & (power.stat == "mean")].discriminative_power.iloc[0]
        wins += ap > p10
        rows.append([f"TREC-{y} ad hoc", f"{100 * ap:.1f}", f"{100 * p10:.1f}", "yes" if ap > p10 else "no"])
    _table(["collection", "AP", "P@10", "AP > P@10"], rows)
    print(f"AP is the more discriminative in {wins} of 4 collections.\n")

    print("**Voorhees & Buckley (2002): the swap rate against the difference and the topic-set size** "
          "(mean of AP, TREC 5-8 ad hoc; bins of 0.01 with at least 100 pairs):\n")
    rows = []
    for y in (5, 6, 7, 8):
        v = swap[(swap.data == f"trec:adhoc{y}_ap") & (swap.stat == "mean")]
        sizes = sorted(set(v["size"]))
        R = np.array([[r.rate if r.total >= 100 else np.nan for r in v[v["size"] == n].sort_values("bin")
                       .itertuples()] for n in sizes])
        by_diff = np.diff(R, axis=1)
        by_size = np.diff(R, axis=0)
        f_diff = np.mean(by_diff[np.isfinite(by_diff)] < 0)
        f_size = np.mean(by_size[np.isfinite(by_size)] < 0)
        b1 = v[(v["size"] == sizes[-1]) & (np.isclose(v.bin, 0.05))]
        ext = np.exp(b1.fit_intercept.iloc[0] + b1.fit_slope.iloc[0] * 50) if len(b1) else np.nan
        rows.append([f"TREC-{y} ad hoc", ", ".join(str(int(n)) for n in sizes), f"{100 * f_diff:.0f}%",
                     f"{100 * f_size:.0f}%", f"{100 * R[0, 5]:.1f} → {100 * R[-1, 5]:.1f}", f"{100 * ext:.2f}"])
    _table(["collection", "sizes n", "rate falls with the difference", "rate falls with n",
            "rate at 0.05–0.06, smallest → largest n (%)", "fitted rate at n = 50 (%)"], rows)

    if img:
        figures(swap, Path(img))


def figures(swap, img: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import fastrisk
    from fastrisk.data.datasets import trec_matrix
    from fastrisk.viz.metaeval import asl_curves, swap_rate_curves

    img.mkdir(parents=True, exist_ok=True)
    res = {}
    for meas, label in (("ap", "AP"), ("p10", "P@10"), ("rr", "RR")):
        res[label] = fastrisk.discriminative_power(trec_matrix(f"adhoc8_{meas}"), replicates=1000, rng=2006)
    ap = trec_matrix("adhoc8_ap")
    for stat in ("urisk", "trisk", "georisk"):
        res[f"AP {stat} α=5"] = fastrisk.discriminative_power(ap, statistic=stat, alpha=5.0, replicates=1000,
                                                             rng=2006)
    ax = asl_curves(res)
    ax.set_title("TREC-8 ad hoc: Sakai's ASL curves")
    ax.figure.savefig(img / "meta-asl-adhoc8.svg")
    r = fastrisk.swap_rates(ap, trials=1000, rng=2006)
    ax = swap_rate_curves(r)
    ax.set_title("TREC-8 ad hoc AP: swap rate (Voorhees & Buckley)")
    ax.figure.savefig(img / "meta-swap-adhoc8-ap.svg")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
