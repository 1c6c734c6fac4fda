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
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from fastrisk.cli import main  # noqa: E402
from fastrisk.cli.report import write_demo_report  # noqa: E402
from fastrisk.errors import InputError  # noqa: E402
from fastrisk.matrix import ScoreMatrix  # noqa: E402
from fastrisk.report import write_report  # noqa: E402

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
