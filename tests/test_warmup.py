"""``fastrisk warmup``: the groups it runs, its errors, and one group end to end (slow)."""

from __future__ import annotations

import pytest

from fastrisk import InputError
from fastrisk._warmup import GROUPS, warmup


def test_an_unknown_group_is_refused_by_name():
    with pytest.raises(InputError, match="unknown warm-up group.*'?nope'?.*the groups are"):
        warmup(groups=["nope"])


def test_the_cli_offers_every_group(capsys):
    from fastrisk.cli import main

    with pytest.raises(SystemExit):
        main(["warmup", "--help"])
    out = capsys.readouterr().out
    assert all(g in out for g in GROUPS)


@pytest.mark.slow
def test_one_group_runs_in_a_subprocess_and_reports(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    seen = []
    out = warmup(1, groups=["runs"], report=lambda g, s, ok: seen.append((g, ok)))
    assert seen == [("runs", True)] and out["runs"] > 0
    assert any(tmp_path.rglob("*.nbi"))  # the kernels went to the (empty) cache given
