"""The HTML/PDF report: self-contained, no broken images, the published numbers in its tables,
the CLI, and a screenshot in headless Chromium when it is installed."""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from html import unescape as html_unescape
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from fastrisk.cli import main  # noqa: E402
from fastrisk.cli.report import write_demo_report  # noqa: E402
from fastrisk.data.matrix import ScoreMatrix  # noqa: E402
from fastrisk.errors import InputError  # noqa: E402
from fastrisk.viz.report import write_report  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.imgs, self.svgs, self.h2, self.links, self.scripts = [], 0, [], [], 0
        self._in_h2 = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.imgs.append(a)
        elif tag == "svg":
            self.svgs += 1
        elif tag == "h2":
            self._in_h2 = True
            self.h2.append("")
        elif tag in ("link", "script", "iframe"):
            self.links.append((tag, a))
        elif tag == "image":  # raster images inside SVG (imshow) must be inline too
            self.imgs.append({"src": a.get("xlink:href") or a.get("href")})

    def handle_endtag(self, tag):
        if tag == "h2":
            self._in_h2 = False

    def handle_data(self, data):
        if self._in_h2:
            self.h2[-1] += data


def _parse(path: Path) -> tuple[str, _Page]:
    text = path.read_text(encoding="utf-8")
    page = _Page()
    page.feed(text)
    return text, page


def _assert_self_contained(page: _Page):
    """Every image is an inline SVG or a data: URI that decodes to its declared format."""
    assert not page.links, f"the report loads external resources: {page.links}"
    for img in page.imgs:
        src = img.get("src") or ""
        m = re.fullmatch(r"data:image/(png|jpeg|svg\+xml);base64,([A-Za-z0-9+/=\s]+)", src)
        assert m, f"image is not an inline data URI: {src[:80]!r}"
        data = base64.b64decode(m.group(2), validate=False)
        if m.group(1) == "png":
            assert data.startswith(PNG), "a PNG data URI does not decode to a PNG"
        assert len(data) > 100


@pytest.fixture(scope="module")
def demo_html(tmp_path_factory):
    return write_demo_report(tmp_path_factory.mktemp("report") / "demo.html")


def test_demo_report_is_self_contained_with_published_numbers(demo_html):
    text, page = _parse(demo_html)
    assert text.startswith("<!DOCTYPE html>")
    _assert_self_contained(page)
    # TRisk vs alpha, 3 per-topic bar charts, 2 distribution figures (+ the heat map if available)
    assert page.svgs >= 6
    assert page.h2[0] == "TRisk of the highlighted systems"
    assert [h for h in page.h2 if h.startswith("Per-topic risk of")] == [
        "Per-topic risk of uogTrA44xi", "Per-topic risk of srchvrs12c09", "Per-topic risk of qutwb"]
    # Dinçer, Macdonald & Ounis (SIGIR 2014), Tables 1-2
    for number in ("2.2440", "0.0528", "−1.6512", "2.3034", "−2.7295", "0.0088"):
        assert number in text
    # parameters and provenance at the top, before the first section
    head = text[:text.index("<section>")]
    for item in ("indriCASP", "ERR@20", "α = 0, 1, 5, 10", "t(0.025, 49) = 2.0096", "SHA-256"):
        assert item in head
    sha = hashlib.sha256(Path(__file__).resolve().parent.parent.joinpath(
        "bench_data/trec-matrices/web2012_err20.csv").read_bytes()).hexdigest()
    assert sha in head


@pytest.mark.slow
def test_png_report_images_decode(tmp_path):
    out = write_demo_report(tmp_path / "demo.html", image_format="png")
    _, page = _parse(out)
    pngs = [i for i in page.imgs if i["src"].startswith("data:image/png")]
    assert len(pngs) >= 6 and all(i.get("alt") for i in pngs)
    _assert_self_contained(page)


@pytest.mark.slow
def test_pdf_report(tmp_path):
    out = write_demo_report(tmp_path / "demo.pdf")
    data = out.read_bytes()
    assert data.startswith(b"%PDF")
    pages = len(re.findall(rb"/Type\s*/Page\b", data))
    assert pages >= 7  # the parameter page and one page per figure


def test_report_of_a_user_matrix_and_errors(tmp_path):
    rng = np.random.default_rng(3)
    m = ScoreMatrix(rng.uniform(size=(4, 12)), ["a", "b", "c", "d"], [f"q{i}" for i in range(12)], "P@10")
    out = write_report(tmp_path / "r.html", m, "a", alpha=[0, 2], systems=["b", "c"], convention="minus")
    text, page = _parse(out)
    _assert_self_contained(page)
    assert "TRisk⁻" in page.h2[0] and "Per-topic risk of b" in page.h2 and "Per-topic risk of d" not in page.h2
    with pytest.raises(InputError, match="`image_format` must be 'svg' or 'png'"):
        write_report(tmp_path / "r.html", m, "a", image_format="gif")
    with pytest.raises(InputError, match="`format` must be 'html' or 'pdf'"):
        write_report(tmp_path / "r.html", m, "a", format="docx")
    with pytest.raises(InputError, match="`systems`: unknown system 'zz'"):
        write_report(tmp_path / "r.html", m, "a", systems=["zz"])
    with pytest.raises(InputError, match="`significance` must be a level"):
        write_report(tmp_path / "r.html", m, "a", significance=2)


def test_cli_report(tmp_path, bench_data, capsys):
    out = tmp_path / "cli.html"
    matrix = bench_data / "trec-matrices/web2012_err20.csv"
    base = bench_data / "trec2012-web/baseline-indriCASP.csv"
    status = main(["report", str(matrix), "--topics", "151-200", "--baseline", str(base),
                   "--baseline-column", "err20", "--alpha", "0,10", "--systems", "run24,run21", "--out", str(out)])
    assert status == 0 and "wrote" in capsys.readouterr().err
    text, page = _parse(out)
    _assert_self_contained(page)
    assert "Per-topic risk of run24" in page.h2 and "α = 0, 10" in text
    assert hashlib.sha256(base.read_bytes()).hexdigest() in text
    assert "−2.7295" in text  # qutwb (run21) at alpha = 10
    assert main(["report", str(matrix), "--baseline", "nope", "--out", str(out)]) == 2
    assert "unknown baseline 'nope'" in capsys.readouterr().err


def _chromium():
    for name in (os.environ.get("FASTRISK_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def test_report_screenshot_in_headless_chromium(demo_html, tmp_path):
    browser = _chromium()
    if browser is None:
        pytest.skip("headless Chromium is not installed (apt-get install chromium, or set FASTRISK_CHROMIUM)")
    shot = tmp_path / "report.png"
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
             "--hide-scrollbars", "--window-size=1300,2400", f"--screenshot={shot}", demo_html.resolve().as_uri()],
            capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert shot.read_bytes().startswith(PNG)
    from matplotlib import image

    pixels = image.imread(shot)
    assert pixels.shape[:2] == (2400, 1300)
    # not a blank page: the figures put dark and coloured pixels on the white background
    rgb = pixels[..., :3]
    assert (rgb.min(axis=-1) < 0.3).mean() > 0.005
    colourful = (rgb.max(axis=-1) - rgb.min(axis=-1)) > 0.3
    assert colourful.mean() > 0.002
    keep = os.environ.get("FASTRISK_SCREENSHOT_DIR")
    if keep:
        shutil.copy(shot, Path(keep) / "report.png")


def test_default_highlight_spreads_the_risk_distribution_without_duplicates(tmp_path):
    from fastrisk.viz.report import build_report

    rng = np.random.default_rng(5)
    x = rng.uniform(size=(9, 30))
    x[3] = x[2] + 1e-7  # a near-duplicate
    x[4] = x[2]  # an exact duplicate
    names = [f"s{k}" for k in range(9)]
    m = ScoreMatrix(x, names, [f"q{i}" for i in range(30)], "P@10")
    sections, params, _ = build_report(m, "s0", alpha=[0, 3])
    why = dict(params)["highlighted"]
    chosen = why.split(" (chosen as ")[0].split(", ")
    assert "quartiles and maximum of TRisk at α = 3" in why and "near-duplicates" in why
    assert len(chosen) == 5 and "s0" not in chosen and len(set(chosen) & {"s2", "s3", "s4"}) <= 1
    rows = [names.index(s) for s in chosen]
    for i, a in enumerate(rows):  # no two highlighted panels are the same
        for b in rows[:i]:
            assert np.abs(x[a] - x[b]).max() > 1e-5
    # the extremes of the risk distribution are always shown
    from fastrisk import risk

    t = risk(m, "s0", alpha=3).trisk[0]
    t[0] = np.nan
    assert names[int(np.nanargmax(t))] == chosen[0] and names[int(np.nanargmin(t))] == chosen[-1]
    assert "highlighted: " + ", ".join(chosen) in sections[0].caption
    _, params, _ = build_report(m, "s0", alpha=[0, 3], systems=["s5"])
    assert dict(params)["highlighted"].startswith("s5 (chosen by the caller")


def _tool(name):
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed")
    return path


def _chromium_run(browser, *args, timeout=180):
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}", *args],
            capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.mark.slow
def test_no_table_is_clipped_in_print_or_at_1280px(demo_html, tmp_path):
    """Printed at A4 every system of the 48-system table is on paper and no word runs off the
    page; at 1280 px no table is wider than its box or the window (nothing hidden to scroll)."""
    browser = _chromium()
    if browser is None:
        pytest.skip("headless Chromium is not installed (apt-get install chromium, or set FASTRISK_CHROMIUM)")
    pdftotext = _tool("pdftotext")
    text, _ = _parse(demo_html)
    systems = sorted(set(re.findall(r"<tr><td>([^<]+)</td><td class=\"num\">", text[text.index("All 48 systems"):])))
    assert len(systems) == 48
    pdf = tmp_path / "report.pdf"
    _chromium_run(browser, "--no-pdf-header-footer", f"--print-to-pdf={pdf}", demo_html.resolve().as_uri())
    bbox = subprocess.run([pdftotext, "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    pages = re.findall(r'<page width="([\d.]+)" height="([\d.]+)">(.*?)</page>', bbox, re.S)
    assert pages and all(abs(float(w) - 595) < 2 and abs(float(h) - 842) < 2 for w, h, _ in pages)  # A4
    words = []
    for w, _, body in pages:
        for xmin, xmax, word in re.findall(r'<word xMin="([\d.]+)" yMin="[\d.]+" xMax="([\d.]+)" yMax="[\d.]+">'
                                           r"([^<]*)</word>", body):
            assert float(xmin) >= 0 and float(xmax) <= float(w), f"{word!r} runs off the A4 page"
            words.append(word)
    table = words[max(i for i in range(len(words) - 2) if words[i:i + 3] == ["All", "48", "systems"]):]
    assert set(systems) <= set(table)
    assert table.count("0.1607") >= 1  # the last column (p at α = 10) of the first row is printed
    # at 1280 px: measure every table against its box and the window, in the browser
    probe = tmp_path / "probe.html"
    probe.write_text(text.replace("</body>", "<script>document.title=JSON.stringify({page:document.documentElement"
                                  ".scrollWidth,win:innerWidth,over:[...document.querySelectorAll('table')].filter("
                                  "t=>t.scrollWidth>t.parentElement.clientWidth+1||t.getBoundingClientRect().right>"
                                  "innerWidth).length,clipped:[...document.querySelectorAll('*')].filter(e=>"
                                  "getComputedStyle(e).overflow!='visible'&&e.scrollHeight>e.clientHeight+1&&"
                                  "e.querySelector('table')).length})</script></body>"), encoding="utf-8")
    dom = _chromium_run(browser, "--window-size=1280,2000", "--dump-dom", probe.resolve().as_uri())
    import json

    got = json.loads(html_unescape(re.search(r"<title>(.*?)</title>", dom, re.S).group(1)))
    assert got["win"] == 1280 and got["page"] <= 1280
    assert got["over"] == 0 and got["clipped"] == 0, got
