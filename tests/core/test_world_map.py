"""The world map per partition (issue 23.2): shading against an independent computation, read back
from the drawn pixels; the distinct fills; Natural Earth's ISO3 quirks; skips; drawn offline."""

from __future__ import annotations

import io
import socket
from collections import Counter
from fractions import Fraction

import matplotlib.image as mpimg
import numpy as np
import pandas as pd
import pytest
from matplotlib import colormaps
from matplotlib.colors import Normalize, to_rgba

from fairness_assets.core.reporting import figures as F
from fairness_assets.core.reporting import world_shapes as W

# recommendations per country (None: an item without a country) and corpus universities per country
RECS = {"USA": 1, "GBR": 6, "FRA": 4, "NOR": 3, "BRA": 2, "AUS": 1, "MNG": 2, None: 3}
CORPUS = {"USA": 40, "GBR": 6, "FRA": 12, "NOR": 2, "BRA": 8, "AUS": 14, "CAN": 18}
NAMES = {
    "USA": "United States",
    "GBR": "United Kingdom",
    "FRA": "France",
    "NOR": "Norway",
    "BRA": "Brazil",
    "AUS": "Australia",
    "MNG": "Mongolia",
    "CAN": "Canada",
}


def synthetic_items(students: dict | None = None) -> pd.DataFrame:
    rows = []
    for iso, n in RECS.items():
        rows += [
            {"iso3": iso, "country": NAMES.get(iso), "university_text": f"University {i} of {iso}"} for i in range(n)
        ]
    items = pd.DataFrame(rows).assign(model="m1", template="base")
    if students:  # nationality -> ISO3, as drs_items carries them
        nats = list(students)
        items["nationality"] = [nats[i % len(nats)] for i in range(len(items))]
        items["student_iso3"] = items["nationality"].map(students)
    return items


def synthetic_grs() -> pd.DataFrame:
    total = sum(CORPUS.values())
    return pd.DataFrame(
        {
            "iso3": list(CORPUS),
            "country": [NAMES[c] for c in CORPUS],
            "total_unis": list(CORPUS.values()),
            "avail": [n / total for n in CORPUS.values()],
        }
    )


def expected_ratios() -> dict[str, Fraction]:
    """rec share / corpus share, by hand: located items only, corpus share = n_c / N."""
    located = sum(n for iso, n in RECS.items() if iso)
    total = sum(CORPUS.values())
    return {iso: Fraction(RECS.get(iso, 0), located) / Fraction(n, total) for iso, n in CORPUS.items()}


def rgba_at(img: np.ndarray, ax, xy, fig_height_px: int, half: int = 2) -> tuple:
    """The most frequent colour of the (2*half+1)^2 pixels around data point ``xy``."""
    px, py = ax.transData.transform(xy)
    col, row = int(round(px)), int(round(fig_height_px - py))
    window = img[row - half : row + half + 1, col - half : col + half + 1, :3]
    colours = Counter(tuple(np.round(c, 2)) for c in window.reshape(-1, 3))
    return colours.most_common(1)[0][0], colours


def render(fig) -> np.ndarray:
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba(), dtype=float) / 255.0


def test_share_ratios_equal_an_independent_computation():
    table = F.country_share_ratios(synthetic_items(), synthetic_grs()).set_index("iso3")
    assert set(table.index) == set(CORPUS) | {"MNG"}
    for iso, ratio in expected_ratios().items():
        assert table.loc[iso, "ratio"] == pytest.approx(float(ratio)), iso
    located = sum(n for iso, n in RECS.items() if iso)
    assert table["recommendations"].sum() == located  # items without a country are not counted
    assert table.loc["GBR", "log2_ratio"] > 2 and table.loc["GBR", "shade"] == F.WORLD_MAP_BOUND  # clipped at 4x
    assert table.loc["USA", "log2_ratio"] < -2 and table.loc["USA", "shade"] == -F.WORLD_MAP_BOUND
    assert table.loc["FRA", "shade"] == pytest.approx(np.log2(float(expected_ratios()["FRA"])))
    assert table.loc["CAN", "status"] == "not recommended" and table.loc["CAN", "ratio"] == 0
    assert np.isnan(table.loc["CAN", "shade"])
    assert table.loc["MNG", "status"] == "no corpus university" and np.isnan(table.loc["MNG", "ratio"])
    assert table.loc["MNG", "rec_share"] == pytest.approx(2 / located)
    assert (table.drop(["CAN", "MNG"])["status"] == "recommended").all()


def test_share_ratios_name_a_missing_table():
    with pytest.raises(ValueError, match="grs_by_country"):
        F.country_share_ratios(synthetic_items(), pd.DataFrame({"iso3": ["USA"]}))
    with pytest.raises(ValueError, match="iso3"):
        F.country_share_ratios(pd.DataFrame({"university_text": ["x"]}), synthetic_grs())


def test_drawn_colours_are_the_ratios():
    """The pixel colour inside each country is the colour scale at its independently computed ratio;
    the never-recommended corpus country is dark grey with white hatching, the recommended country
    without corpus universities light grey with purple dots, a country of neither light grey."""
    shapes = W.world_shapes()
    table = F.country_share_ratios(synthetic_items(), synthetic_grs())
    fig, drawn = F._world_map_figure(table, [], "t", shapes)
    img = render(fig)
    h = img.shape[0]
    cmap, norm = colormaps[F.WORLD_MAP_CMAP], Normalize(-F.WORLD_MAP_BOUND, F.WORLD_MAP_BOUND)
    for iso, ratio in expected_ratios().items():
        if iso == "CAN":
            continue
        shade = float(np.clip(np.log2(float(ratio)), -F.WORLD_MAP_BOUND, F.WORLD_MAP_BOUND))
        want = np.array(cmap(norm(shade))[:3])
        got, _ = rgba_at(img, drawn["axes"], shapes.countries[iso].anchor, h)
        assert np.abs(np.array(got) - want).max() < 0.02, (iso, got, want)
    grey, white = np.array(to_rgba(F.NOT_RECOMMENDED)[:3]), np.ones(3)
    _, around_canada = rgba_at(img, drawn["axes"], shapes.countries["CAN"].anchor, h, half=6)
    near = lambda c, ref: np.abs(np.array(c) - ref).max() < 0.05  # noqa: E731
    assert sum(n for c, n in around_canada.items() if near(c, grey)) > 60  # mostly dark grey ...
    assert sum(n for c, n in around_canada.items() if near(c, white)) > 5  # ... hatched in white
    light, purple = np.array(to_rgba(F.NO_CORPUS)[:3]), np.array(to_rgba(F.NO_CORPUS_HATCH)[:3])
    _, around_mongolia = rgba_at(img, drawn["axes"], shapes.countries["MNG"].anchor, h, half=6)
    assert sum(n for c, n in around_mongolia.items() if near(c, light)) > 60
    assert sum(n for c, n in around_mongolia.items() if np.abs(np.array(c) - purple).max() < 0.3) > 3
    got, _ = rgba_at(img, drawn["axes"], shapes.countries["DZA"].anchor, h)  # Algeria: neither
    assert near(got, light)
    colours = F.world_map_colors(table).set_index("iso3")
    assert colours.loc["CAN", "hatch"] and colours.loc["MNG", "hatch"] and not colours.loc["FRA", "hatch"]


def test_natural_earth_iso3_quirks():
    """France and Norway carry ISO_A3 -99 in Natural Earth: they are keyed by ISO_A3_EH and drawn;
    Kosovo (no ISO code) takes the region table's XKX; tiny countries keep a point for their dot."""
    assert W._iso3({"ISO_A3": "-99", "ISO_A3_EH": "FRA", "ADM0_A3": "FRA"}) == "FRA"
    assert W._iso3({"ISO_A3": "-99", "ISO_A3_EH": "-99", "ADM0_A3": "KOS"}) == "XKX"
    countries = W.world_shapes().countries
    for iso in ("FRA", "NOR", "XKX", "SGP", "HKG", "PSE", "SSD", "TWN", "HUN", "SRB"):
        assert iso in countries, iso
    assert "-99" not in countries and "ATA" not in countries
    for iso in ("FRA", "NOR"):
        assert countries[iso].path is not None and countries[iso].path.contains_point(countries[iso].anchor)
    # Norway's anchor lies in Norway although the centroid of its outline lies in Sweden
    assert not countries["SWE"].path.contains_point(countries["NOR"].anchor)
    assert countries["VNM"].path.contains_point(countries["VNM"].anchor)  # its centroid lies in Laos
    assert countries["FRA"].area > countries["NOR"].area > countries["SGP"].area > 0
    assert countries["MCO"].path is None  # smaller than the grid: drawn as a dot only


def test_small_countries_are_dots_and_students_are_marked():
    items = synthetic_items({"Singapore": "SGP", "Brazil": "BRA", "Atlantis": None})
    grs = pd.concat(
        [synthetic_grs(), pd.DataFrame({"iso3": ["SGP"], "country": ["Singapore"], "total_unis": [3], "avail": [0.02]})]
    )
    fig = F.world_map(items, grs)
    assert not fig.skipped
    assert "Triangles: the 2 countries of the students' nationalities" in fig.caption
    assert "Nationalities that name no country: Atlantis" in fig.caption
    assert "Dots: countries too small to see (Singapore)" in fig.caption
    table = F.country_share_ratios(items, grs)
    shapes = W.world_shapes()
    mpl_fig, drawn = F._world_map_figure(table, ["SGP", "BRA"], "t", shapes)
    assert drawn["dots"] == ["SGP"] and drawn["students"] == ["SGP", "BRA"]
    img = render(mpl_fig)
    got, _ = rgba_at(img, drawn["axes"], shapes.countries["BRA"].anchor, img.shape[0], half=0)
    assert got == (1.0, 1.0, 1.0)  # the white triangle covers Brazil's colour at its anchor
    labels = [t.get_text() for t in mpl_fig.legends[0].get_texts()]
    assert any(t.startswith("students' nationality (2") for t in labels)
    assert any(t.startswith("corpus universities, not recommended (2)") for t in labels)
    assert any(t.startswith("small country") for t in labels)


def test_students_countries_from_names_when_items_carry_no_iso3():
    """The report draws from the stored recommendations (nationality names, no student_iso3)."""
    items = synthetic_items({"Kenya": "KEN", "South Korea": "KOR", "Atlantis": None})
    assert F._student_countries(items) == (["KEN", "KOR"], ["Atlantis"])
    assert F._student_countries(items.drop(columns="student_iso3")) == (["KEN", "KOR"], ["Atlantis"])
    assert F._student_countries(synthetic_items()) == ([], [])


def test_the_figure_title_caption_and_numbers():
    fig = F.world_map(synthetic_items(), synthetic_grs())
    assert fig.name == "world_map" and fig.model == "m1" and fig.template == "base"
    assert fig.title == "Recommended against corpus universities, by country \u2014 m1 \u00b7 base template"
    located = sum(n for iso, n in RECS.items() if iso)
    assert f"the {located} recommendations located in a country" in fig.caption
    assert "6 of the 7 corpus countries were recommended; 1 corpus country got no recommendation" in fig.caption
    assert "1 recommended country has no corpus university (dotted: Mongolia)" in fig.caption
    ratios = expected_ratios()
    assert (
        f"Most over-represented: Norway {float(ratios['NOR']):.1f}\u00d7, United Kingdom "
        f"{float(ratios['GBR']):.1f}\u00d7, France {float(ratios['FRA']):.1f}\u00d7."
    ) in fig.caption
    assert f"among the recommended: United States {float(ratios['USA']):.2f}\u00d7, Australia" in fig.caption
    assert "clipped at 4\u00d7" in fig.caption and "clipped at 4\u00d7" in fig.caption
    assert "Natural Earth" in fig.caption and "profiles of this template state no nationality" in fig.caption
    img = mpimg.imread(io.BytesIO(fig.png), format="png")
    assert img.shape[1] == 1100 and img.shape[0] == 600 and float(img[..., :3].std()) > 0.05
    assert F.world_map(synthetic_items().sample(frac=1.0, random_state=3), synthetic_grs()).png == fig.png


def test_skipped_with_a_reason_when_nothing_can_be_drawn():
    no_country = synthetic_items().assign(iso3=None)
    cases = [
        (F.world_map(synthetic_items().iloc[:0], synthetic_grs()), "no recommended items"),
        (F.world_map(no_country, synthetic_grs()), "no recommended item is located in a country"),
        (F.world_map(synthetic_items(), None), "grs_by_country"),
        (F.world_map(synthetic_items().assign(iso3="ZZZ"), synthetic_grs().assign(iso3="ZZY")), "has a shape"),
    ]
    for fig, reason in cases:
        assert fig.skipped and fig.png is None and reason in fig.skipped_reason, fig.skipped_reason
        assert fig.caption.startswith("Not drawn:")


def test_part_of_every_partition_and_of_the_report():
    from fairness_assets.core.reporting import report as R

    assert "world_map" in F.FIGURE_NAMES
    figures = F.all_partition_figures({"drs_items": synthetic_items(), "grs_by_country": synthetic_grs()})
    world = next(f for f in figures if f.name == "world_map")
    assert not world.skipped and world.slug.startswith("m1__base__world_map-")
    html, md = R.render_report(R.ReportContent(figures=[world]))
    assert R._esc(world.caption) in html and R._esc(world.title) in html
    assert f"figures/{world.slug}.png" in md and R._md(world.caption) in md


def test_drawn_offline(monkeypatch):
    """The shapes are read from the installed package and the PNG drawn with every socket refused."""
    attempts = []

    def refuse(self, address, *a, **k):
        attempts.append(address)
        raise OSError(f"network disabled in this test: {address}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    W.world_shapes.cache_clear()
    try:
        fig = F.world_map(synthetic_items({"Kenya": "KEN"}), synthetic_grs())
    finally:
        W.world_shapes.cache_clear()
    assert not fig.skipped and fig.png[:8] == b"\x89PNG\r\n\x1a\n"
    assert attempts == []


def test_a_missing_shapes_package_is_named(monkeypatch):
    monkeypatch.setattr(W.importlib.util, "find_spec", lambda name: None)
    W.world_shapes.cache_clear()
    try:
        fig = F.world_map(synthetic_items(), synthetic_grs())
    finally:
        monkeypatch.undo()
        W.world_shapes.cache_clear()
    assert fig.skipped and W.SHAPES_DISTRIBUTION in fig.skipped_reason
