"""Issue 21: first contact. Each mistake a new user made with the README in hand gets a message
that says what the input is and what to type instead, checked through the CLI verbatim.
Also: sizes bounded before allocating, and nothing silently accepted."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pytest

import fastrisk
from fastrisk.cli import main
from fastrisk.errors import InputError

DATA = Path(fastrisk.__file__).resolve().parent / "bench_data"
MATRIX = DATA / "trec-matrices" / "web2012_err20.csv"
WEB = DATA / "trec2012-web"
QRELS = WEB / "qrels.adhoc.txt"
RUNS = WEB / "runs"


def _error(capsys, *argv) -> str:
    try:
        status = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse's own errors
        status = exc.code
    assert status == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


def test_a_run_directory_without_qrels_says_runs_need_qrels(capsys):
    assert _error(capsys, "risk", RUNS, "--baseline", "mean") == (
        f"fastrisk risk: error: {RUNS} is a directory, not a score matrix file: if it holds TREC runs, runs need "
        "--qrels (the relevance judgments) and --measure to be scored (qrels=, measure= in the API)")


@pytest.mark.parametrize("argv", [["risk", "{d}", "--baseline", "mean"], ["table", "{d}"],
                                  ["evaluate", "{d}", "--qrels", str(QRELS)]])
def test_an_empty_directory_holds_no_files_everywhere(capsys, tmp_path, argv):
    err = _error(capsys, *[a.format(d=tmp_path) for a in argv])
    assert err.endswith(f"directory {str(tmp_path)!r} holds no files"), err


def test_qrels_given_as_a_score_matrix_are_named_as_qrels(capsys):
    assert _error(capsys, "risk", QRELS, "--baseline", "mean") == (
        f"fastrisk risk: error: {QRELS} looks like qrels (topic 0 docid grade), not a score matrix: pass it as "
        f"--qrels with the runs, e.g. fastrisk evaluate RUNS --qrels {QRELS} --measure AP")


def test_a_run_file_given_as_a_matrix_points_to_qrels_and_input_format(capsys):
    run = sorted(RUNS.iterdir())[0]
    assert _error(capsys, "risk", run, "--baseline", "mean") == (
        f"fastrisk risk: error: {run} looks like a TREC run (topic Q0 docid rank score tag), not a score matrix: "
        "runs are scored against qrels, pass --qrels FILE and --measure (e.g. AP, nDCG@20); a score matrix is "
        "CSV, Parquet or trec_eval output (--input-format)")


def test_an_unknown_format_names_the_cli_option(capsys, tmp_path):
    odd = tmp_path / "scores"
    odd.write_text("run1 0.5\nrun2 0.25\n")
    err = _error(capsys, "risk", odd, "--baseline", "mean")
    assert err.endswith("cannot tell the format from its first lines; pass --input-format (format= in the API), "
                        "one of csv, csv-long, csv-wide, parquet, ipc, trec_eval, ir_measures"), err


@pytest.mark.parametrize("command", ["risk", "table"])
def test_alpha_values_separated_by_spaces_say_they_are_comma_separated(capsys, command):
    extra = ["--baseline", "run1"] if command == "risk" else []
    assert _error(capsys, command, MATRIX, *extra, "--alpha", "0", "1", "5") == (
        "fastrisk: error: unrecognized arguments: 1 5 (an option's values are comma-separated: --alpha 0,1,5)")


def test_did_you_mean_for_commands_options_and_measures(capsys):
    assert _error(capsys, "rsik", MATRIX).endswith("invalid choice: 'rsik' (choose from 'risk', 'info', 'demo', "
                                                   "'table', 'pca', 'zrisk', 'bootstrap', 'test', 'evaluate', "
                                                   "'compare', 'pool-bias', 'agree', 'report', 'sweep', 'simulate', 'ltr', "
                                                   "'warmup', 'meta'); "
                                                   "did you mean 'risk'?")
    assert _error(capsys, "risk", MATRIX, "--baseline", "run1", "--alhpa", "1") == (
        "fastrisk: error: unrecognized arguments: --alhpa 1; did you mean --alpha?")
    assert _error(capsys, "evaluate", RUNS, "--qrels", QRELS, "--measure", "nDGC@20") == (
        "fastrisk evaluate: error: unknown measure 'nDGC@20' (did you mean 'nDCG@20'): expected an ir_measures "
        "name (P@k, R@k, AP, RR, Rprec, nDCG, ERR@k, RBP, Judged, Bpref, infAP, Success@k, SetP, SetR, SetF, SetAP, "
        "IPrec@r, NumRet, NumRel, NumQ, with parameters such as P(rel=2)@10, RBP(rel=1,p=0.8)@10, "
        "nDCG(dcg='exp-log2')@20, SetF(beta=0.5), AP(judged_only=True)) or a trec_eval name (map, P_10, "
        "ndcg_cut_20, recip_rank, Rprec, recall_100, bpref, infAP, success_10, set_F, iprec_at_recall_0.50, "
        "num_rel_ret)")
    with pytest.raises(InputError, match=r"unknown measure 'Judgd@10' \(did you mean 'Judged@10'\)"):
        fastrisk.measures.metrics.parse_measure("Judgd@10")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_a_fifo_not_a_missing_file(capsys, tmp_path):
    fifo = tmp_path / "scores"
    os.mkfifo(fifo)
    why = f"{fifo} is a FIFO (named pipe): fastrisk reads its inputs more than once; write the stream to a file first"
    assert _error(capsys, "risk", fifo, "--baseline", "mean") == f"fastrisk risk: error: {why}"
    assert _error(capsys, "evaluate", fifo, "--qrels", QRELS) == f"fastrisk evaluate: error: {why}"
    assert _error(capsys, "evaluate", RUNS, "--qrels", fifo) == f"fastrisk evaluate: error: {why}"


# ---------------------------------------------------------------------- sizes bounded before allocating
def test_a_cutoff_beyond_every_ranking_gives_the_scores_of_the_deepest_one():
    runs = fastrisk.read_runs(sorted(RUNS.iterdir())[:3])
    qrels = fastrisk.read_qrels(QRELS)
    deep = fastrisk.evaluate(runs, qrels, ["nDCG@1000000000", "P@1000000000", "AP@1000000000"])
    depth = fastrisk.evaluate(runs, qrels, [f"nDCG@{runs.depth}", f"P@{runs.depth}", f"AP@{runs.depth}"])
    assert np.array_equal(deep.values[0], depth.values[0]) and np.array_equal(deep.values[2], depth.values[2])
    np.testing.assert_allclose(deep.values[1] * 1e9, depth.values[1] * runs.depth, rtol=1e-12)  # P@k divides by k


def _letor(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_a_letor_feature_id_beyond_the_limit_is_refused_with_the_way_out(capsys, tmp_path):
    f = _letor(tmp_path / "train.txt", ["1 qid:1 1:0.5 3:0.2", "0 qid:1 1:0.1 200000:1"])
    assert _error(capsys, "ltr", f, f) == (
        f"fastrisk ltr: error: {f}, line 2: feature id 200000 is beyond the limit of 10,000 features (they are "
        "stored densely: each document would take 1.5 MiB); if the id is right, raise the limit with "
        "--max-features 200000 (max_features= in the API)")
    assert fastrisk.ltr.read_letor(f, max_features=200000).n_features == 200000


def test_a_letor_feature_twice_on_a_line_is_refused(capsys, tmp_path):
    f = _letor(tmp_path / "train.txt", ["1 qid:1 1:0.5 1:0.2", "0 qid:1 1:0.1"])
    assert _error(capsys, "ltr", f, f) == f"fastrisk ltr: error: {f}, line 1: feature 1 appears twice on the line"


def test_test_features_beyond_the_training_width_are_warned(tmp_path, monkeypatch):
    train = _letor(tmp_path / "train.txt", ["1 qid:1 1:0.5 2:0.2", "0 qid:1 1:0.1 2:0.3"])
    test = _letor(tmp_path / "test.txt", ["1 qid:2 1:0.5 7:0.2", "0 qid:2 1:0.1 2:0.3"])
    from fastrisk.cli import ltr as cli_ltr

    monkeypatch.setattr(cli_ltr, "ltr_experiment", lambda *a, **k: (_ for _ in ()).throw(InputError("stop")))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert main(["ltr", str(train), str(test)]) == 2
    assert [str(w.message) for w in seen] == [
        f"{test} uses feature ids up to 7, beyond the 2 of {train}: those features were 0 in every training "
        "document, so the models ignore them"]


# ---------------------------------------------------------------------- truncated lists say so
def test_a_topic_mismatch_warning_that_lists_part_of_the_topics_says_so(tmp_path):
    from fastrisk._runtime.validation import listing

    assert listing(range(21), 20) == ", ".join(map(str, range(20))) + ", … (21 in all)"
    assert listing(range(20), 20) == ", ".join(map(str, range(20)))
    run = tmp_path / "r.run"
    run.write_text("".join(f"{t} Q0 d{t} 1 1.0 r\n" for t in range(1, 23)))
    qrels = tmp_path / "q.txt"
    qrels.write_text("1 0 d1 1\n")
    with pytest.warns(fastrisk.errors.TopicMismatchWarning, match=r"21 only in the runs \['10', '11', .*, '8', … "
                                                                  r"\(21 in all\)\]"):
        fastrisk.evaluate(fastrisk.read_runs([run]), fastrisk.read_qrels(qrels), ["AP"])
