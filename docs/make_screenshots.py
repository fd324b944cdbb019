"""Make the screenshots in docs/screenshots/ that README.md and docs/operations.md show: the UI (ui_*.png)
and the demo's report (report.png, report_figures.png).

    .venv/bin/python docs/make_screenshots.py [--out DIR]

Runs the demo audit on the example answers (FAIRNESS_RESPONSES=data/examples/demo_responses.jsonl
fairness-audit demo) with a temporary DAGSTER_HOME and FAIRNESS_HOME, starts
``dagster-webserver -m fairness_assets.definitions`` on a free port, opens the UI in headless
Chromium (Debian's chromium and chromedriver, driven by selenium) and clicks through the pages the
docs describe, checking that each control they name is there. It opens launch dialogs and cancels
them: it never launches a run. Then it opens the report.html the demo wrote (the path it prints) in
the same browser, checks that every section renders and every figure loads, and saves the top of the
report (report.png) and its Figures section (report_figures.png). Takes about a minute after the
demo; needs the dev extra (selenium) and ``apt-get install chromium chromium-driver``. The tests make
the same pages (tests/e2e/test_ui_browser.py, tests/e2e/test_report_browser.py; the page code is
tests/helpers/ui.py) but write their screenshots to a temporary folder, never here.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers import ui  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots",
                        help="folder of the PNGs (default: docs/screenshots)")
    args = parser.parse_args(argv)
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="fairness-screenshots-") as tmp:
        tmp = Path(tmp)
        env = ui.demo_env(tmp)
        print("[make_screenshots] demo audit on data/examples/demo_responses.jsonl ...", flush=True)
        demo_stdout = ui.run_demo(env)
        report_html = ui.demo_report(demo_stdout, env)
        with ui.webserver(env) as base:
            print(f"[make_screenshots] dagster-webserver at {base}; driving headless Chromium", flush=True)
            with ui.chromium_driver(tmp / "chromium-profile") as driver:
                shots = ui.capture_all(driver, base, args.out)
                print(f"[make_screenshots] report {report_html}", flush=True)
                shots += ui.report(driver, report_html, args.out / "report.png", args.out / "report_figures.png")
    for shot in shots:
        print(f"[make_screenshots] wrote {shot.relative_to(ROOT) if shot.is_relative_to(ROOT) else shot}")
    print(f"[make_screenshots] done in {time.time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
