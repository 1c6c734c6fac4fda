"""Wrong or broken outputs (issue #29, item 6): a stack's baseline against itself is no test in
every procedure; a line break in a name cannot break a Markdown or LaTeX table; compressed
matrices are read (never binary in an error); ``evaluate --per-topic --format csv --header``
reads back; a baseline with part of the topics is one clear error."""

from __future__ import annotations

import bz2
import gzip
import lzma
import re
import warnings

import numpy as np
import pyarrow as pa
import pytest

import fastrisk
from fastrisk import ScoreMatrix, read_matrix
from fastrisk.cli import main
from fastrisk.data.publication import arrow_to_latex, arrow_to_markdown
from fastrisk.errors import InputError
from fastrisk.inference.multiple import adjust_pvalues


@pytest.fixture(scope="module")
def stack():
    return np.random.default_rng(3).uniform(0, 1, (2, 4, 25))


@pytest.mark.parametrize("procedure", ["bootstrap", "permutation_test", "t_test"])
def test_a_stack_baseline_against_itself_is_nan_in_every_procedure(stack, procedure):
    kw = {} if procedure == "t_test" else {"replicates": 199, "rng": 1}
    res = getattr(fastrisk, procedure)(stack, 1, **kw)
    p = np.asarray(res.pvalue)
    assert np.isnan(p[:, :, 1]).all() and np.isfinite(np.delete(p, 1, axis=2)).all()
    holm = adjust_pvalues(p[0, 0], "holm")
    assert holm.m == 3
    others = np.delete(p[0, 0], 1)
    expect = np.minimum(1, np.maximum.accumulate(np.sort(others) * np.arange(len(others), 0, -1)))
    np.testing.assert_allclose(np.sort(np.delete(np.asarray(holm), 1)), expect)  # m = 3, the self-comparison not counted


def _table(name):
    return pa.table({"system": [name, "plain"], "urisk": [0.5, -0.25]})


@pytest.mark.parametrize("name", ["two\nlines", "cr\r\nlf", "tab\there", "pipe|and\\"])
def test_a_line_break_in_a_name_cannot_break_a_markdown_or_latex_table(name):
    md = arrow_to_markdown(_table(name)).strip().splitlines()
    assert len(md) == 4 and all(line.startswith("|") and line.endswith("|") for line in md)
    assert all(len(re.findall(r"(?<!\\)\|", line)) == 3 for line in md)  # two columns: three borders, none extra
    tex = arrow_to_latex(_table(name))
    body = tex[tex.index(r"\begin{tabular}"):tex.index(r"\end{tabular}")]
    assert "\n\n" not in body and "\r" not in body and "\t" not in body
    assert len([line for line in body.splitlines() if line.rstrip().endswith(r"\\")]) == 3


TEXT = b"system,topic,score\na,1,0.5\na,2,0.25\nb,1,0.75\nb,2,0.5\n"


@pytest.mark.parametrize("suffix,compress", [
    ("csv.xz", lzma.compress), ("csv.bz2", bz2.compress), ("csv.GZ", gzip.compress), ("csv.gz", gzip.compress),
    ("csv.zst", lambda b: pa.compress(b, "zstd", asbytes=True)), ("csv", lambda b: b),
    ("tsv.xz", lambda b: lzma.compress(b.replace(b",", b"\t")))])
def test_compressed_matrices_are_read(tmp_path, suffix, compress):
    p = tmp_path / f"m.{suffix}"
    p.write_bytes(compress(TEXT))
    m = read_matrix(p)
    assert m.systems == ("a", "b") or list(m.systems) == ["a", "b"]
    np.testing.assert_array_equal(m.values, [[0.5, 0.25], [0.75, 0.5]])


def test_errors_never_print_binary(tmp_path):
    p = tmp_path / "m.csv.GZ"
    p.write_bytes(gzip.compress(b"system,topic,score\na,1,\x00\xff\xfe\x01\n"))
    with pytest.raises(InputError) as err:
        read_matrix(p)
    assert str(p) in str(err.value) and str(err.value).isprintable()
    q = tmp_path / "truncated.csv.xz"
    q.write_bytes(lzma.compress(TEXT)[:20])
    with pytest.raises(InputError) as err:
        read_matrix(q)
    assert str(q) in str(err.value) and str(err.value).isprintable()


def test_per_topic_csv_with_a_header_reads_back_into_risk(tmp_path, capsys):
    (tmp_path / "a.run").write_text("1 Q0 dA 1 2.0 alpha\n1 Q0 dB 2 1.0 alpha\n2 Q0 dZ 1 1.0 alpha\n")
    (tmp_path / "b.run").write_text("1 Q0 dB 1 9.0 beta\n2 Q0 dZ 1 3.0 beta\n")
    (tmp_path / "q.txt").write_text("1 0 dA 1\n1 0 dB 1\n2 0 dZ 1\n")
    out = tmp_path / "pt.csv"
    assert main(["evaluate", str(tmp_path / "a.run"), str(tmp_path / "b.run"), "--qrels", str(tmp_path / "q.txt"),
                 "--measure", "AP", "--per-topic", "--format", "csv", "--header", "--out", str(out)]) == 0
    assert out.read_text().startswith("# ")
    (tmp_path / "pt").write_bytes(out.read_bytes())
    for path in (out, tmp_path / "pt"):  # also without the suffix (the format is sniffed)
        m = read_matrix(path)
        np.testing.assert_array_equal(m.values, [[1.0, 1.0], [0.5, 1.0]])
        capsys.readouterr()
        assert main(["risk", str(path), "--baseline", "alpha", "--alpha", "0", "--format", "csv"]) == 0
        assert "beta,0,1,-0.25" in capsys.readouterr().out


def test_a_baseline_with_part_of_the_topics_is_one_error_without_a_warning():
    m = ScoreMatrix(np.random.default_rng(1).random((2, 4)), ["a", "b"], ["1", "2", "3", "4"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError, match=r"lacks topic\(s\) '3', '4' .*'9' the matrix lacks.*--missing drop"):
            fastrisk.risk(m, {"1": 0.5, "2": 0.25, "9": 0.1}, alpha=0)
    with pytest.warns(fastrisk.TopicMismatchWarning, match="scored 0"):
        r = fastrisk.risk(m, {"1": 0.5, "2": 0.25, "9": 0.1}, alpha=0, missing="zero")
    assert r.n_topics == 4
