"""``fairness-audit design show FILE``: what a design asks before anything is generated: its axes, grid
and templates, its size (prompts x runs x models) against the limit, and its estimated cost from the
``generation_cost`` rows of earlier audits in the results database, where there are any."""

from __future__ import annotations

from typing import Optional

import pandas as pd

from resources.settings import ConfigError, load_settings

from ..core.reference.design import Design, DesignError, check_size


def estimated_cost(design: Design, costs: pd.DataFrame) -> pd.DataFrame:
    """Per model of the design: the wall and compute seconds a sample took in earlier audits
    (``generation_cost`` rows: sums over every partition and run), times the design's samples of that
    model; empty estimates for a model no earlier audit generated."""
    samples = design.size()["samples_per_model"]
    rows = []
    for model in design.models:
        mine = costs[costs["model"] == model] if len(costs) else costs
        n = float(mine["samples"].sum()) if len(mine) else 0.0
        wall = float(mine["wall_s"].sum()) / n if n else None
        compute = float(mine["compute_s"].sum()) / n if n else None
        rows.append(
            {
                "model": model,
                "samples": samples,
                "earlier_samples": int(n),
                "wall_s_per_sample": wall,
                "estimated_wall_h": None if wall is None else samples * wall / 3600,
                "estimated_compute_h": None if compute is None else samples * compute / 3600,
            }
        )
    return pd.DataFrame(rows)


def read_costs(database_url: str = "") -> pd.DataFrame:
    """The ``generation_cost`` rows of the results database (the configured one by default); empty
    where the database has none or cannot be read (the estimate then says so)."""
    from resources.database import ResultsDatabase
    from resources.database.schema import GenerationCost

    try:
        return ResultsDatabase(url=database_url or load_settings().database_url).read_rows(GenerationCost)
    except Exception:  # noqa: BLE001 - no database yet: no estimate, said in the output
        return pd.DataFrame(columns=["model", "samples", "wall_s", "compute_s"])


def _names_lines(design: Design) -> list[str]:
    """The design's names block: what a name signals, the source, and the cells without names (and why)."""
    from fairness_assets.core.reference.grid_rows import crossed_rows
    from fairness_assets.core.reference.names import coverage

    spec = design.names
    signals = [f"{spec.country_axis} (its country)"]
    if spec.list_axis:
        signals.append(f"{spec.list_axis} ({', '.join(f'{v}: {lst}' for v, lst in spec.given_lists)})")
    cov = coverage(spec, crossed_rows(design))
    none = cov[cov["names"] == 0]
    source = "faker's locales (data/names/faker_locales.csv)" if spec.source == "faker" else spec.source
    lines = [
        "",
        f"## Names: {{{spec.placeholder}}} signals {' and '.join(signals)}",
        "",
        f"From {source}, seed {spec.seed}: at least {spec.per_cell} distinct names a cell "
        f"({int(cov['names'].sum()):,} named profiles in {int((cov['names'] > 0).sum())} cells).",
    ]
    if len(none):
        why = none.groupby("why").size()
        lines.append(f"No names for {len(none)} cell(s): " + "; ".join(f"{reason} ({n})" for reason, n in why.items()))
    return lines


def describe(design: Design, costs: pd.DataFrame, max_prompts: int) -> str:
    """The design in Markdown: axes, grid, templates, size and estimated cost."""
    size = design.size()
    lines = [f"# Design {design.name}", "", f"File: {design.path}", ""]
    if design.description:
        lines += [design.description, ""]
    lines += ["## Axes", "", "| axis | position | values | placeholder |", "|---|---|---|---|"]
    for a in design.axes:
        shown = ", ".join(a.values[:6]) + (f", … ({len(a.values)} in all)" if len(a.values) > 6 else "")
        lines.append(f"| {a.name} | {a.position} | {shown} | {{{a.word}}} |")
    g = design.grid
    grid = f"{g.kind} over {', '.join(g.axes)}" if g.axes else "one axis at a time"
    if g.kind == "sample":
        grid += f" (size {g.size}, seed {g.seed}, every pair of values at least {g.pair_coverage} times)"
    if g.one_at_a_time and g.axes:
        grid += f"; one at a time: {', '.join(g.one_at_a_time)}"
    lines += [
        "",
        f"## Grid: {grid}",
        "",
        "| template | language | profile set | conversation | prompts | sha256 |",
        "|---|---|---|---|---|---|",
    ]
    for t in design.templates:
        conv = "system + %d turn(s)" % len(t.turns) if t.system else ("%d turn(s)" % len(t.turns) if t.turns else "no")
        lines.append(
            f"| {t.name} | {t.language} | {t.profile_set} | {conv} | {size['prompts_per_template'][t.name]:,} | "
            f"{t.sha256[:12]} |"
        )
    if design.comparisons:
        lines += ["", "Compared: " + "; ".join(f"{b} vs {o}" for b, o in design.comparisons)]
    if design.names is not None:
        lines += _names_lines(design)
    try:
        check_size(design, max_prompts)
        limit = f"within the limit of {max_prompts:,} prompts a model (FAIRNESS_MAX_PROMPTS)"
    except DesignError:
        limit = f"OVER the limit of {max_prompts:,} prompts a model: refused (raise FAIRNESS_MAX_PROMPTS)"
    lines += [
        "",
        f"## Size: {size['prompts_per_model']:,} prompts a model x {size['runs']} runs x {size['models']} model(s) "
        f"= {size['samples']:,} samples",
        "",
        limit,
        "",
        "## Estimated cost (from earlier audits' generation_cost)",
        "",
    ]
    est = estimated_cost(design, costs)
    for r in est.itertuples(index=False):
        if r.wall_s_per_sample is None:
            lines.append(f"- {r.model}: no earlier audit of this model in the database, no estimate")
        else:
            lines.append(
                f"- {r.model}: {r.samples:,} samples x {r.wall_s_per_sample:.3g} s a sample (from "
                f"{r.earlier_samples:,} earlier samples) = {r.estimated_wall_h:.2f} h wall, "
                f"{r.estimated_compute_h:.2f} h of compute"
            )
    return "\n".join(lines) + "\n"


def show_design(name_or_path: str, database_url: str = "", max_prompts: Optional[int] = None) -> str:
    """``fairness-audit design show``: the design validated (a bad one raises ConfigError naming file,
    line and field) and described."""
    from resources.settings import design_of

    settings = load_settings()
    design = design_of(name_or_path, settings.templates_dir)
    try:
        design.size()
    except DesignError as exc:
        raise ConfigError(str(exc)) from None
    return describe(design, read_costs(database_url), max_prompts or settings.max_prompts)
