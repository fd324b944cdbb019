"""Make every screenshot in docs/screenshots/ that README.md and docs/operations.md show, from the
current UI: the new user's journey (issue 23 item 7) and the other pages the docs describe.

    .venv/bin/python docs/make_screenshots.py [--out DIR]

In a temporary DAGSTER_HOME and FAIRNESS_HOME (an empty instance) it writes a responses file holding
the demo model's example answers (data/examples/demo_responses.jsonl) under two templates, base and
regional, starts ``fairness-audit ui`` with it (FAIRNESS_RESPONSES; the report server on a free
FAIRNESS_REPORT_PORT) in its own process group and drives headless Chromium (Debian's chromium and
chromedriver, through selenium) along the new user's journey, the same steps and checks as
tests/e2e/test_new_user_journey.py (tests/helpers/journey.py):

- ui_lineage.png: *Lineage* (left menu), every group expanded, with **Materialize all…**;
- ui_models_listed.png: its dialog's model picker, which lists the file's model already;
- ui_lineage_dialog.png: the dialog (19 assets) with the model ticked and template **All**; it then
  clicks **Launch backfill** and waits for the backfill to end (partial success);
- ui_run_missing_templates.png: the partitioned run's page, the errors of ``generations`` naming the
  four templates missing from the file;
- ui_partition_missing.png: generations' Partitions tab, a missing template's partition selected
  (its ``partition_outcome``);
- ui_report_link.png: audit_report's page (``report_url``, scorecard, summary); report.png and
  report_figures.png: the report opened from that link (the scorecard at the top; its Figures);
- ui_world_map.png: audit_figures' page, the base partition's world map.

Then, on the same UI: ui_asset_graph.png (audit_drift's Lineage tab, upstream),
ui_materialize_dialog.png (generations → **Materialize…**, the model ticked, template **All**,
cancelled), ui_lineage_materialize_all.png (generations' Lineage tab, Downstream, All),
ui_checks.png (recommendations' Checks tab, parse_rate opened) and ui_figure.png (a figure opened from its metadata
row). Every PNG is reduced to a 256-colour palette (about a third of the size). It checks that
every ``screenshots/*.png`` that README.md and docs/operations.md reference is made, and names any
PNG of the folder it did not make. Takes about 4 minutes on 2 cores; needs the dev extra (selenium)
and ``apt-get install chromium chromium-driver``. The tests write their screenshots to a temporary
folder, never here.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers import journey, ui  # noqa: E402

HELD = ("base", "regional")  # the templates of the responses file; the four others are missing from it
DOCS = (ROOT / "README.md", ROOT / "docs" / "operations.md")


def referenced() -> set[str]:
    """The screenshots/*.png names that the docs reference."""
    return {m for doc in DOCS for m in re.findall(r"screenshots/([\w.-]+\.png)", doc.read_text(encoding="utf-8"))}


def shrink(path: Path) -> int:
    """Reduce ``path`` to a 256-colour palette PNG (no dithering: text stays crisp) when that is
    smaller; returns its size in bytes."""
    from PIL import Image

    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    before = path.stat().st_size
    reduced = path.with_suffix(".small.png")
    small.save(reduced, optimize=True)
    if reduced.stat().st_size < before:
        reduced.replace(path)
    else:
        reduced.unlink()
    return path.stat().st_size


def journey_shots(driver, base: str, env: dict, out: Path) -> list[Path]:
    """The new user's journey, one screenshot per step into ``out``."""
    model, missing = ui.DEMO_MODEL, [t for t in ui.TEMPLATES if t not in HELD]
    report_port = int(env["FAIRNESS_REPORT_PORT"])
    shots = [journey.lineage(driver, base, out / "ui_lineage.png")]
    journey.materialize_all(driver, base, model, out / "ui_models_listed.png", out / "ui_lineage_dialog.png")
    shots += [out / "ui_models_listed.png", out / "ui_lineage_dialog.png"]
    print("[make_screenshots] backfill launched; waiting for it to end", flush=True)
    backfill, runs = journey.wait_for_backfill(env["DAGSTER_HOME"])
    print(
        f"[make_screenshots] backfill {backfill.backfill_id}: {backfill.status.value}, {len(runs)} run(s)", flush=True
    )
    by_key = journey.partition_runs(runs)
    first = f"{model}|{missing[0]}"
    held = len(HELD)
    journey.missing_on_run_page(
        driver, base, by_key[first].run_id, model, missing[0], list(HELD), out / "ui_run_missing_templates.png"
    )
    journey.backfill_page(
        driver, base, backfill.backfill_id, journey.PARTITIONED, held, len(missing), out / "ui_backfill.png"
    )
    journey.missing_on_partition_page(
        driver,
        base,
        "recommendations",
        first,
        by_key[first].run_id,
        held,
        len(missing),
        out / "ui_partition_missing.png",
    )
    journey.catalog_states(driver, base, journey.PARTITIONED, held, len(missing), out / "ui_catalog.png")
    held_keys = [f"{model}|{t}" for t in HELD]
    journey.check_partitions(driver, base, "parse_rate", held_keys, len(missing), out / "ui_checks.png")
    print("[make_screenshots] waiting for the backfill's report run (backfill_report sensor)", flush=True)
    journey.wait_for_report_run(env["DAGSTER_HOME"], backfill.backfill_id)
    journey.report_from_asset_page(
        driver,
        base,
        report_port,
        model,
        list(HELD),
        out / "ui_report_link.png",
        out / "report.png",
        out / "report_figures.png",
    )
    journey.world_map(driver, base, report_port, f"{model}|base", out / "ui_world_map.png")
    return shots + [
        out / name
        for name in (
            "ui_run_missing_templates.png",
            "ui_backfill.png",
            "ui_partition_missing.png",
            "ui_catalog.png",
            "ui_checks.png",
            "ui_report_link.png",
            "report.png",
            "report_figures.png",
            "ui_world_map.png",
        )
    ]


def other_pages(driver, base: str, out: Path) -> list[Path]:
    """The pages the docs show beside the journey (launch dialogs opened and cancelled)."""
    shots = [ui.asset_graph(driver, base, out / "ui_asset_graph.png")]
    ui.launch_registered_model(driver, base, ui.DEMO_MODEL, out / "ui_materialize_dialog.png")
    shots.append(out / "ui_materialize_dialog.png")
    shots += ui.lineage_materialize_all(driver, base, out / "ui_lineage_materialize_all.png")
    shots.append(ui.figure(driver, base, out / "ui_figure.png"))
    return shots


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, default=ROOT / "docs" / "screenshots", help="folder of the PNGs (default: docs/screenshots)"
    )
    args = parser.parse_args(argv)
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="fairness-screenshots-") as tmp:
        tmp = Path(tmp)
        responses = journey.partial_responses(tmp / "answers.jsonl", HELD)
        env = journey.journey_env(tmp / "home", responses)
        print(
            f"[make_screenshots] fairness-audit ui on an empty instance, FAIRNESS_RESPONSES={responses} "
            f"(templates {', '.join(HELD)})",
            flush=True,
        )
        with journey.fairness_ui(env, tmp / "ui.log") as base, ui.chromium_driver(tmp / "chromium-profile") as driver:
            print(f"[make_screenshots] UI at {base}; driving headless Chromium", flush=True)
            shots = journey_shots(driver, base, env, args.out)
            shots += other_pages(driver, base, args.out)
    made = {shot.name for shot in shots}
    for shot in shots:
        size = shrink(shot)
        shown = shot.relative_to(ROOT) if shot.is_relative_to(ROOT) else shot
        print(f"[make_screenshots] wrote {shown} ({size // 1024} KiB)")
    if args.out.resolve() == (ROOT / "docs" / "screenshots").resolve():
        absent = sorted(referenced() - made)
        if absent:
            print(
                f"[make_screenshots] error: the docs reference {absent}, which this command does not make",
                file=sys.stderr,
            )
            return 1
        for stale in sorted({p.name for p in args.out.glob("*.png")} - made):
            print(f"[make_screenshots] {args.out.name}/{stale} is not made any more (no doc should show it)")
    print(f"[make_screenshots] done in {time.time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
