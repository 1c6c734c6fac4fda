"""The tests of the simulation battery: one record per test (or family of tests) in `BATTERY`.

A record holds everything that names, computes, schedules, tabulates and draws a test of
`fastrisk.simulate.battery`: its name (a family such as ``trisk`` gives one test ``trisk@A`` per
alpha of ``trisk_alpha``), the hypothesis it tests, the scale of its statistic, the columns of
the kernel's arrays it reads (`fastrisk._kernels.battery`: ``stats`` slots such as ``MEAN``,
``counts`` slots such as ``BOOT_GE``, the ``risk`` rows ``URISK``/``TRISK``, by name), the rule
that forms its three tails' p-values (`PVALUE_RULES`), the kernel passes it needs (resampling),
the null its rates must be measured under (`fastrisk.simulate.nulls`), its short code in the
study's CSV columns, its figure style and the paper or code it follows. The battery, the studies
(`fastrisk.simulate.studies`), the grid and the planning (`fastrisk.simulate.grid`,
`fastrisk.simulate.planning`), the figures (`fastrisk.viz.figures`) and the CLI read it; no
other module names a test or indexes one by position.

Why here, in the foundation: the figures (``viz``) sit below ``simulate`` in the layers, and the
CLI builds its help from it before anything heavy is imported; so the registry is plain data
(no numpy, no numba, no kernel import: kernel slots are named by string and resolved by
`fastrisk.simulate.battery`, which checks every name at import).

Adding a test is one record here, its slots in the kernel (``_battery_one`` of
`fastrisk._kernels.battery`) and a plain reference in ``tests/reference/`` (CONTRIBUTING.md);
a new way of forming p-values is one function in ``fastrisk.simulate.battery.PVALUES``.
"""

from __future__ import annotations

from dataclasses import dataclass

#: How a record's three tails (two-sided, 'less': y worse, 'greater': y better) are formed from its
#: slots (the functions are `fastrisk.simulate.battery.PVALUES`).
PVALUE_RULES = {
    "mean_t": "Student t = mean / (sd / sqrt(c)) (the one variance floor), df = c - 1; two-sided 2 min(tails)",
    "student_t": "a t statistic computed by the kernel, df = c - 1; two-sided 2 min(tails)",
    "wilcoxon": "the exact signed-rank distribution (n <= 50 untied non-zero d) or the tie-corrected normal",
    "sign": "exact binomial(n, 1/2) of the count of positive among the non-tied differences",
    "bootstrap": "(count + 1) / (B + 1) of [|.| >=, <=, >=] of the shift-to-null replicates (urbano2019: count / B "
                 "of the replicates centred by their own mean, no 'less')",
    "flip": "(count + 1) / (B + 1) of [<=, >=] (exact enumeration: count / 2^c), two-sided min(1, 2 min) (urbano2019: "
            "count / B, two-sided from |.| >=, no 'less')",
    "inference": "fastrisk.core.inference.pvalues of the record's `inference` on x = d + A min(d, 0), one call a tail "
                 "(alternative 'two-sided', 'less', 'greater'); a resampling inference with the battery's B and seed, "
                 "pair k on the streams of its key (row0)",
}
#: The kernel passes a record may need (`fastrisk._kernels.battery.battery_batch`'s switches):
#: the bootstrap of d, the sign flips, the ZRisk/GeoRisk sums on the flips (only with
#: ``risk_tests``), the bootstrap of URisk_A.
PASSES = ("bootstrap", "flips", "risk_flips", "risk_bootstrap", "inference")
#: ``inference`` is not a pass of the battery kernel: the resamples or orderings a resampling
#: inference of `fastrisk.core.inference` draws in its own kernel (NaN with ``replicates=0``).
#: The risk nulls a record may need (`fastrisk.simulate.nulls.RiskNull` families).
NULLS = ("urisk", "smooth")


@dataclass(frozen=True)
class BatteryTest:
    """One test of the battery (``family``: one test ``name@A`` per alpha A of ``trisk_alpha``).

    Attributes
    ----------
    name : str
        The test's name (a family's stem: its tests are ``name@A``).
    hypothesis : str
        What it tests (its null), in the battery's terms (d = y - x; ``A``: the family's alpha).
    statistic : str
        What ``BatteryResult.statistic`` reports for it, on which scale.
    pvalues : str
        The rule forming its three tails (a key of `PVALUE_RULES`).
    stats : tuple of str
        The kernel's ``stats`` columns it reads (`fastrisk._kernels.battery` constant names).
    risk : str or None
        A family's row of the kernel's ``risk`` array (``URISK`` or ``TRISK``), read at its alpha.
    counts : tuple of str
        The kernel's ``counts`` columns of its tail counts ([>=, <=, |.| >=] or [>=, <=]); a
        family's are those of its first alpha, the next alpha ``BOOT_RISK_STRIDE`` further.
    urbano_counts : tuple of str
        The counts of ``protocol="urbano2019"`` ([>=, |.| >=], as the study's R/test.cpp), if it
        differs there.
    passes : tuple of str
        The kernel passes it needs (`PASSES`); none: no resampling (p-values with 0 replicates).
    null : str or None
        The risk null its rates are measured under (`NULLS`; a ``urisk`` family at A = 0 is on the
        study's own pairs, URisk_0 being the mean difference); None: the study's pairs.
    same_at_zero : str or None
        A family whose test at A = 0 *is* another test: that test's numbers are reported there.
    paper : bool
        One of the paper's own battery (Urbano, Lima & Hanjalic 2019, ``R/ir_tests.R``).
    code : str or None
        Its code in the study's tables (``t1``, ``w2``: code and tail); None: the column is named
        by the test and its hypothesis.
    color, label, linestyle : str or None
        Its line in the figures; ``color`` None: the next colour of the risk palette, dotted.
    reference : str
        The paper and code it follows.
    inference : str or None
        For the rule ``inference``: the name of its risk inference in
        `fastrisk.core.inference.INFERENCES` (a string: this registry imports nothing; the battery
        checks it at import).
    opt_in : bool
        Not in the default battery: its tests run (and are listed) only when named in ``tests``
        (the default test set, and so the published studies' outputs, stay as they are).
    """

    name: str
    hypothesis: str
    statistic: str
    pvalues: str
    stats: tuple = ()
    risk: str | None = None
    counts: tuple = ()
    urbano_counts: tuple = ()
    passes: tuple = ()
    null: str | None = None
    family: bool = False
    same_at_zero: str | None = None
    paper: bool = False
    code: str | None = None
    color: str | None = None
    label: str | None = None
    linestyle: str = "-"
    reference: str = ""
    inference: str | None = None
    opt_in: bool = False

    def __post_init__(self):
        if self.pvalues not in PVALUE_RULES:
            raise ValueError(f"battery test {self.name!r}: unknown p-value rule {self.pvalues!r}")
        if not set(self.passes) <= set(PASSES):
            raise ValueError(f"battery test {self.name!r}: unknown kernel pass in {self.passes!r}")
        if self.null not in (None, *NULLS):
            raise ValueError(f"battery test {self.name!r}: unknown null {self.null!r}")
        if (self.risk is not None) != self.family:
            raise ValueError(f"battery test {self.name!r}: a family (and only a family) reads a `risk` row")
        if (self.pvalues == "inference") != (self.inference is not None) or (self.inference and not self.family):
            raise ValueError(f"battery test {self.name!r}: the rule 'inference' (and only it) names an `inference`, "
                             "on a family's x = d + A min(d, 0)")

    @property
    def resampled(self) -> bool:
        """Whether its p-values need resamples (NaN with ``replicates=0``)."""
        return bool(self.passes)


_URBANO = "Urbano, Lima & Hanjalic, SIGIR 2019 (R/ir_tests.R, R/test.cpp)"

#: The registry, in the battery's order: name -> record.
BATTERY: dict[str, BatteryTest] = {b.name: b for b in (
    BatteryTest("t", "E[d] = 0", "Student t of d (mean over its standard error)", "mean_t", stats=("MEAN", "SD"),
                paper=True, code="t", color="#e41a1c", label="t-test",
                reference="Student's paired t (scipy.stats.ttest_rel); " + _URBANO),
    BatteryTest("wilcoxon", "d symmetric about 0", "W+, the sum of the ranks of the positive d", "wilcoxon",
                stats=("WPLUS", "WN", "WTIES", "WZERO"), paper=True, code="w", color="#377eb8", label="Wilcoxon",
                reference="R's wilcox.test, scipy.stats.wilcoxon(zero_method='wilcox'); " + _URBANO),
    BatteryTest("sign", "P(d > 0) = P(d < 0)", "#(d > min_diff), the positive among the non-tied", "sign",
                stats=("SPOS", "SNEG"), paper=True, code="s", color="#4daf4a", label="Sign",
                reference="scipy.stats.binomtest(k, n, 0.5); " + _URBANO + " (min_d = 0.01)"),
    BatteryTest("bootstrap", "E[d] = 0", "mean(d), on the measure's scale", "bootstrap", stats=("MEAN",),
                counts=("BOOT_GE", "BOOT_LE", "BOOT_ABS"), urbano_counts=("RBOOT_GE", "RBOOT_ABS"),
                passes=("bootstrap",), paper=True, code="b", color="#984ea3", label="Bootstrap",
                reference="Efron & Tibshirani 1993 (shift to the null); " + _URBANO),
    BatteryTest("permutation", "d symmetric about 0 (sign flips)", "mean(d), on the measure's scale", "flip",
                stats=("MEAN",), counts=("PERM_GE", "PERM_LE"), urbano_counts=("RPERM_GE", "RPERM_ABS"),
                passes=("flips",), paper=True, code="p", color="#ff7f00", label="Permutation", linestyle="--",
                reference="scipy.stats.permutation_test(permutation_type='samples'); " + _URBANO),
    BatteryTest("trisk", "URisk_A = 0", "TRisk_A, Student t of URisk_A", "student_t", risk="TRISK", family=True,
                null="urisk", same_at_zero="t",
                reference="Dinçer, Macdonald & Ounis, SIGIR 2014 (TRisk)"),
    BatteryTest("zrisk", "ZRisk(y) = ZRisk(x) under sign flips", "ZRisk(y) - ZRisk(x) at alpha 0", "flip",
                stats=("ZOBS",), counts=("ZRISK_GE", "ZRISK_LE"), passes=("risk_flips",),
                reference="Dinçer, Macdonald & Ounis, SIGIR 2016 (ZRisk), alpha = 0"),
    BatteryTest("georisk", "GeoRisk(y) = GeoRisk(x) under sign flips", "GeoRisk(y) - GeoRisk(x) at alpha 0", "flip",
                stats=("GOBS",), counts=("GEO_GE", "GEO_LE"), passes=("risk_flips",),
                reference="Dinçer, Macdonald & Ounis, SIGIR 2016 (GeoRisk), alpha = 0"),
    BatteryTest("trisk_smooth", "E[s(d)] = 0", "Student t of s(d), the smooth value function", "student_t",
                stats=("TSMOOTH",), null="smooth",
                reference="Benham, Moffat & Culpepper 2019 (s(d) = 1.38426 d^3 - 0.51659 d^2 + 0.11578 d)"),
    BatteryTest("bootstrap_risk", "URisk_A = 0", "URisk_A, on the measure's scale", "bootstrap", risk="URISK",
                counts=("BOOT_RISK_GE", "BOOT_RISK_LE", "BOOT_RISK_ABS"), passes=("risk_bootstrap",), family=True,
                null="urisk", reference="fastrisk.bootstrap(test='shift') of URisk_A (Efron & Tibshirani 1993)"),
    # The risk inferences of fastrisk.core.inference (issue #37), each a family under the URisk_A null; opt-in, so
    # that the default battery and the published studies' numbers do not change. Cost per trial and alpha, its three
    # tails (CPU, one thread, 25 topics, B = 10,000, measured on a shared 2-core machine): edgeworth, johnson, hall,
    # el-bartlett 0.03-0.05 ms (trisk@A's own: 0.04 ms); bootstrap-t-symmetric about 4 ms; exact about 15 ms (then a
    # kernel call a tail; since, one call gives the three). bootstrap-t-double draws B²·c numbers a trial (its second
    # level resamples each of its B resamples B times): about 7 ns each (25 topics, B = 499: 45 ms a trial, load 6),
    # so name it only with a small B (99: about 2 ms a trial; the battery's default 10,000: about 20 s).
    *(BatteryTest(f"trisk-{name}", "URisk_A = 0", f"TRisk_A; its p-values by the {name} inference", "inference",
                  risk="TRISK", family=True, null="urisk", inference=name, opt_in=True,
                  passes=("inference",) if resampled else (), reference=ref)
      for name, resampled, ref in (
          ("edgeworth", False, "two-term Edgeworth-corrected t: Hall (1992), The Bootstrap and Edgeworth Expansion, §2.6"),
          ("johnson", False, "Johnson (1978), JASA 73, 536-544"),
          ("hall", False, "Hall (1992), JRSS B 54, 221-228"),
          ("el-bartlett", False, "Owen (1988); DiCiccio, Hall & Romano (1991), Ann. Statist. 19, 1053-1061"),
          ("bootstrap-t-symmetric", True, "Hall (1988), Ann. Statist. 16, 927-953"),
          ("exact", True, "Waudby-Smith & Ramdas (JRSS B 2024), betting; scores within [0, 1]"),
          ("bootstrap-t-double", True, "Beran (1988), JASA 83, 687-697; Davison & Hinkley (1997), §4.5: the "
                                       "symmetric bootstrap-t p-value calibrated by a second level"))),
)}


def registry(tests=None) -> dict:
    """The registry in use: ``tests`` or `BATTERY` (read at call time, so a copy with one more
    record, swapped in, flows through every reader)."""
    return BATTERY if tests is None else tests


def test_names(trisk_alpha, tests=None, opt_in=None) -> tuple:
    """The battery's test names in order, each family expanded at every alpha of ``trisk_alpha``
    (floats) as ``name@A``; an ``opt_in`` record's tests only those named in ``opt_in`` (names),
    or every one with ``opt_in=True``."""
    out = []
    for b in registry(tests).values():
        names = [f"{b.name}@{float(a):g}" for a in trisk_alpha] if b.family else [b.name]
        if b.opt_in and opt_in is not True:
            wanted = () if opt_in is None else {opt_in} if isinstance(opt_in, str) else set(opt_in)
            names = [t for t in names if t in wanted]
        out.extend(names)
    return tuple(out)


def lookup(test: str, tests=None) -> tuple[BatteryTest, float | None]:
    """(record, alpha) of a test name (alpha None outside a family); KeyError if none."""
    name, at, a = test.partition("@")
    b = registry(tests)[name]
    if bool(at) != b.family:
        raise KeyError(test)
    return b, (float(a) if at else None)


def null_of(test: str, tests=None) -> tuple[str, float] | None:
    """(null family, alpha) of the risk null a test's rates are measured under, or None (the
    study's own pairs). A ``urisk`` family at A = 0 is on the study's pairs: URisk_0 is E[d]."""
    b, a = lookup(test, tests)
    if b.null is None or (b.null == "urisk" and not a):
        return None
    return (b.null, float(a)) if b.null == "urisk" else (b.null, 0.0)


def paper_tests(tests=None) -> tuple:
    """The paper's own battery (Urbano, Lima & Hanjalic 2019, ``R/ir_tests.R``)."""
    return tuple(b.name for b in registry(tests).values() if b.paper)


def codes(tests=None) -> dict:
    """Test name -> its code in the study's tables, for the tests that have one."""
    return {b.name: b.code for b in registry(tests).values() if b.code is not None}
