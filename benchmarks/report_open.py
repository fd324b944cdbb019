"""Benchmark: how long a report takes to open in a browser, one self-contained file against an index and pages.

Issue 36 item 2: the report of 162 partitions must open in a browser in under 3 s. For each report folder given
(``report.html`` and, for a report written as pages, ``models/*.html`` and ``figures/``; ``pipeline_scale.py
--keep-reports`` keeps those of its sizes), this opens in headless Chromium (Debian's, driven by selenium, as
the browser tests do), each ``--repeats`` times from the plain folder (``file://``):

- ``report.html`` as written (the index of a report written as pages);
- the largest model page, when there are pages;
- the same report as one self-contained file, made from the pages: the index with every model page's
  content after it and every figure embedded as a ``data:`` URI, as ``FAIRNESS_REPORT_LAYOUT=single`` writes it
  (the same bytes of text and figures; a report written as one file is opened as it is).

"Open" is the navigation's load event (``performance.getEntriesByType("navigation")[0].loadEventEnd``: the
HTML parsed, laid out and every image that is not lazy decoded), and the wall time of ``driver.get``; the
median of the repeats is reported, with each page's size. Each measurement starts from ``about:blank`` in a
browser already started (a reader's browser is open).

    .venv/bin/python benchmarks/report_open.py FOLDER [FOLDER ...] [--repeats 3] [--no-write]
"""

from __future__ import annotations

import argparse
import base64
import os
import platform
import re
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]  # statistics.py shadows stdlib
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "benchmarks"))


def _embedded(html: str, folder: Path) -> str:
    """``html`` with every ``<img src="file">`` replaced by the file's bytes as a ``data:`` URI."""

    def inline(m: re.Match) -> str:
        path = (folder / m.group(2)).resolve()
        data = base64.b64encode(path.read_bytes()).decode("ascii") if path.is_file() else ""
        return f'{m.group(1)}src="data:image/png;base64,{data}"'

    return re.sub(r'(<img[^>]*?)(?:loading="lazy" )?src="([^"]+\.png)"', inline, html).replace(' loading="lazy"', "")


def as_one_file(folder: Path) -> str:
    """The report of ``folder`` as one self-contained file: itself when it was written so, else the index
    and every model page's body after it, every figure embedded."""
    index = (folder / "report.html").read_text(encoding="utf-8")
    pages = sorted((folder / "models").glob("*.html")) if (folder / "models").is_dir() else []
    if not pages:
        return index
    bodies = []
    for page in pages:
        html = page.read_text(encoding="utf-8")
        body = html.split("<body>", 1)[1].rsplit("</body>", 1)[0]
        bodies.append(_embedded(body, page.parent))
    head, tail = index.rsplit("</body>", 1)
    return _embedded(head, folder) + "\n".join(bodies) + "</body>" + tail


def _median(values: list[float]) -> float:
    v = sorted(values)
    return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2


def time_open(driver, path: Path, repeats: int) -> dict:
    loads, walls = [], []
    for _ in range(repeats):
        driver.get("about:blank")
        t0 = time.perf_counter()
        driver.get(path.resolve().as_uri())
        walls.append(time.perf_counter() - t0)
        loads.append(
            driver.execute_script('return performance.getEntriesByType("navigation")[0].loadEventEnd') / 1000.0
        )
    return {
        "page": str(path),
        "mb": path.stat().st_size / 1e6,
        "load_s": _median(loads),
        "wall_s": _median(walls),
    }


def measure(folders: list[Path], repeats: int) -> list[dict]:
    from tests.helpers.ui import chromium_driver

    rows = []
    with tempfile.TemporaryDirectory() as tmp, chromium_driver(Path(tmp) / "profile") as driver:
        driver.set_page_load_timeout(600)
        for folder in folders:
            partitions = _partitions(folder)
            pages = sorted((folder / "models").glob("*.html")) if (folder / "models").is_dir() else []
            kind = "index" if pages else "one file"
            rows.append(
                {
                    "folder": folder.name,
                    "partitions": partitions,
                    "kind": kind,
                    **time_open(driver, folder / "report.html", repeats),
                }
            )
            if pages:
                largest = max(pages, key=lambda p: p.stat().st_size)
                rows.append(
                    {
                        "folder": folder.name,
                        "partitions": partitions,
                        "kind": "largest model page",
                        **time_open(driver, largest, repeats),
                    }
                )
                one = Path(tmp) / f"{folder.name}-one-file.html"
                one.write_text(as_one_file(folder), encoding="utf-8")
                # the one file beside the folder's figures is not needed: every figure is embedded
                rows.append(
                    {
                        "folder": folder.name,
                        "partitions": partitions,
                        "kind": "the same as one file",
                        **time_open(driver, one, repeats),
                    }
                )
            for r in rows[-(3 if pages else 1) :]:
                print(
                    f"{r['partitions']:>4} partitions, {r['kind']:<22} {r['mb']:8.1f} MB  load {r['load_s']:6.2f} s  "
                    f"wall {r['wall_s']:6.2f} s",
                    flush=True,
                )
    return rows


def _partitions(folder: Path) -> str:
    """The report's partitions: from the folder's name (``<N>-partitions``, as ``pipeline_scale.py
    --keep-reports`` names it), else the ``model|template`` keys in its Markdown's provenance."""
    m = re.match(r"(\d+)-partitions", folder.name)
    if m:
        return m.group(1)
    md = (folder / "report.md").read_text(encoding="utf-8")
    row = re.search(r"^\| partitions \| (.*?) \|$", md, flags=re.M)
    return str(row.group(1).count("|")) if row else "?"


def write_doc(rows: list[dict], repeats: int, load: float) -> None:
    from _doc import write_section

    lines = [
        "| partitions | page | size (MB) | load event (s) | `driver.get` wall (s) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(f"| {r['partitions']} | {r['kind']} | {r['mb']:.1f} | {r['load_s']:.2f} | {r['wall_s']:.2f} |")
    body = "\n".join(
        [
            f"Measured {date.today().isoformat()} on {platform.node() or 'this machine'} ({os.cpu_count()} cores, "
            f"{platform.processor() or platform.machine()}), load at the start {load:.2f}; headless "
            f"Chromium from the plain folder (`file://`), the median of {repeats} opening(s) after `about:blank`, "
            '`benchmarks/report_open.py` on the reports `pipeline_scale.py --keep-reports` kept. "The same as one '
            'file" is the index with every model page after it and every figure embedded, as '
            "`FAIRNESS_REPORT_LAYOUT=single` writes it.",
            "",
            *lines,
        ]
    )
    write_section("Opening the report", body)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    rows = measure([Path(f) for f in args.folders], args.repeats)
    if not args.no_write:
        write_doc(rows, args.repeats, load)


if __name__ == "__main__":
    main()
