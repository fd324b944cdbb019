"""Make the UI screenshots in docs/screenshots/ (ui_*.png) that README.md and docs/operations.md show.

    .venv/bin/python docs/make_screenshots.py [--out DIR]

Runs the demo audit on the example answers (FAIRNESS_RESPONSES=data/examples/demo_responses.jsonl
fairness-audit demo) with a temporary DAGSTER_HOME and FAIRNESS_HOME, starts
``dagster-webserver -m fairness_assets.definitions`` on a free port, opens the UI in headless
Chromium (Debian's chromium and chromedriver, driven by selenium) and clicks through the pages the
docs describe, checking that each control they name is there. It opens launch dialogs and cancels
them: it never launches a run. Takes about a minute after the demo; needs the dev extra (selenium)
and ``apt-get install chromium chromium-driver``. The tests make the same pages
(tests/e2e/test_ui_browser.py) but write their screenshots to a temporary folder, never here.
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
        ui.run_demo(env)
        with ui.webserver(env) as base:
            print(f"[make_screenshots] dagster-webserver at {base}; driving headless Chromium", flush=True)
            with ui.chromium_driver(tmp / "chromium-profile") as driver:
                shots = ui.capture_all(driver, base, args.out)
    for shot in shots:
        print(f"[make_screenshots] wrote {shot.relative_to(ROOT) if shot.is_relative_to(ROOT) else shot}")
    print(f"[make_screenshots] done in {time.time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
