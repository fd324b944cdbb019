"""The students' axes in the results database (issue 34; resources/database/attributes.py): the tables of
students, answers and items, and the typed result table ``drs_responses``, store the axis columns of a
frame as one JSON column ``attributes`` and give them back as one column per axis, where they were,
so that a frame read back is the frame written: for the study's three axes and for a design with a
fourth, on SQLite and on PostgreSQL."""

import json

import numpy as np
import pandas as pd
import pytest
import sqlalchemy as sa

from fairness_assets.core.common import tables as tables_core
from fairness_assets.core.reference import axes
from resources import database as D
from resources.database.attributes import pack, unpack
from resources.result_store import ResultTypeError

STUDY = axes.names()  # the study's axes, in its order
VALUES = [["male", None, "female"], [None, None, "low"], ["Côte d'Ivoire", "India", None]]
FOURTH = axes.Axis("disability", "disability", "disability", "none", "disability_only", ("none", "visual"))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db(request, tmp_path):
    url = f"sqlite:///{tmp_path / 'r.db'}" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    database = D.ResultsDatabase(url=url)
    yield database
    database.dispose()


@pytest.fixture
def four_axes():
    """A design with a fourth axis after the study's three, active for the test."""
    with axes.use(axes.Catalogue(axes.current().axes + (FOURTH,))):
        yield axes.names()


def _frame(model, names=STUDY, n=3) -> pd.DataFrame:
    """A frame of ``model``'s table as read_rows gives it (without ``id``): every column, the axis
    columns where ``attributes`` is, with the dtypes ``pd.read_sql`` makes (int64, float64, bool, object)."""
    values = dict(zip(STUDY, VALUES, strict=True)) | {"disability": ["visual", None, "none"]}
    out: dict = {}
    for c in model.__table__.columns:
        if c.name == "id":
            continue
        if c.name == "attributes":
            out.update({a: pd.Series(values[a], dtype=object) for a in names})
        elif c.name == "partition_key":
            out[c.name] = ["" if model is D.Profile else "m|base"] * n
        elif isinstance(c.type, sa.Boolean):
            out[c.name] = np.array([True, False, True])
        elif isinstance(c.type, sa.Integer):
            out[c.name] = np.arange(n, dtype=np.int64) + 1
        elif isinstance(c.type, sa.Float):
            out[c.name] = [0.5, np.nan if c.nullable else 1.0, 1.5]
        elif c.nullable and c.name != "provenance_id":
            out[c.name] = pd.Series([f"{c.name[:2]}{i}" if i != 1 else None for i in range(n)], dtype=object)
        else:
            out[c.name] = [f"{c.name[:2]}{i}" for i in range(n)]
    return pd.DataFrame(out)


def _stored_attributes(db, table: str) -> list[str]:
    with db.engine().connect() as conn:
        return [r[0] for r in conn.execute(sa.text(f"SELECT attributes FROM {table} ORDER BY id"))]


TABLES = [D.Profile, D.Generation, D.Recommendation, D.DRSItem]


@pytest.mark.parametrize("model", TABLES, ids=lambda m: m.__tablename__)
def test_the_study_axes_round_trip_identically(db, model):
    frame = _frame(model)
    keys = [""] if model is D.Profile else ["m|base"]
    assert db.replace_rows(model, frame, keys) == 3
    back = db.read_rows(model, keys)
    pd.testing.assert_frame_equal(back.drop(columns=["id"]), frame)
    at = list(back.columns).index(STUDY[0])
    assert list(back.columns)[at : at + 3] == list(STUDY)  # where the axis columns were
    assert _stored_attributes(db, model.__tablename__) == [
        json.dumps(dict(zip(STUDY, row, strict=True)), ensure_ascii=False, separators=(",", ":"))
        for row in zip(*VALUES, strict=True)
    ]
    empty = db.read_rows(model, ["nothing stored"])  # no rows: the active design's axes, where they were
    assert empty.empty and list(empty.columns) == ["id", *frame.columns]
    assert all(empty[a].dtype == object for a in STUDY)


@pytest.mark.parametrize("model", TABLES, ids=lambda m: m.__tablename__)
def test_a_fourth_axis_round_trips_identically(db, model, four_axes):
    frame = _frame(model, four_axes)
    keys = [""] if model is D.Profile else ["m|base"]
    db.replace_rows(model, frame, keys)
    back = db.read_rows(model, keys)
    pd.testing.assert_frame_equal(back.drop(columns=["id"]), frame)
    assert list(json.loads(_stored_attributes(db, model.__tablename__)[0])) == list(four_axes)


def test_an_axis_the_frame_lacks_is_stored_null_and_read_back_empty(db, four_axes):
    frame = _frame(D.Profile)  # the study's three: no disability column
    db.replace_rows(D.Profile, frame)
    assert json.loads(_stored_attributes(db, "profile")[0]) == {
        "gender": "male",
        "economic_class": None,
        "nationality": "Côte d'Ivoire",
        "disability": None,
    }
    back = db.read_rows(D.Profile)
    assert list(back["disability"]) == [None] * 3 and back["disability"].dtype == object
    pd.testing.assert_frame_equal(back.drop(columns=["id", "disability"]), frame)


def test_appended_rows_are_packed_and_read_back(db):
    frame = _frame(D.Generation)
    assert db.append_rows(D.Generation, frame) == 3
    pd.testing.assert_frame_equal(db.read_rows(D.Generation).drop(columns=["id"]), frame)


def test_distinct_and_existing_values_read_an_axis_from_attributes(db):
    db.replace_rows(D.Generation, _frame(D.Generation), ["m|base"])
    found = db.distinct(D.Generation, ["partition_key", STUDY[0]])
    assert list(found.columns) == ["partition_key", STUDY[0]]
    assert sorted(found[STUDY[0]], key=str) == sorted(VALUES[0], key=str)
    assert db.existing_values(D.Generation, STUDY[2], ["m|base"]) == set(VALUES[2])
    assert db.existing_values(D.Generation, "response_id", ["m|base"], **{STUDY[0]: "female"}) == {"re2"}
    with pytest.raises(KeyError, match="table 'generation' has no column 'nope'"):
        db.distinct(D.Generation, ["nope"])


def test_the_text_of_a_value_is_made_storable(db, caplog):
    frame = _frame(D.Profile)
    frame[STUDY[2]] = ["Bad\x00Land", "India", None]
    db.replace_rows(D.Profile, frame)
    assert list(db.read_rows(D.Profile)[STUDY[2]]) == ["BadLand", "India", None]
    assert f"the value(s) of {STUDY[2]}" in caplog.text


def test_a_frame_with_both_packed_and_axis_columns_is_refused():
    frame = _frame(D.Profile).assign(attributes="{}")
    with pytest.raises(ValueError, match=r"profile: has both a packed 'attributes' column and the axis column"):
        pack(frame, "profile")


def test_unpack_takes_the_union_of_keys_in_first_seen_order():
    df = pd.DataFrame({"a": [1, 2, 3], "attributes": ['{"x":"1"}', '{"y":null,"x":"2"}', None], "b": 0})
    out = unpack(df)
    assert list(out.columns) == ["a", "x", "y", "b"]
    assert list(out["x"]) == ["1", "2", None] and list(out["y"]) == [None, None, None]
    with pytest.raises(ValueError, match=r"stored 'attributes' value '\[1\]' is not a JSON object"):
        unpack(df.assign(attributes="[1]"))


def _responses(names) -> pd.DataFrame:
    values = dict(zip(STUDY, VALUES, strict=True)) | {"disability": ["visual", None, "none"]}
    return pd.DataFrame(
        {
            "response_id": ["r0", "r1", "r2"],
            "model": "m",
            "template": "base",
            "profile_id": ["p0", "p1", "p2"],
            **{a: values[a] for a in names},
            "run": np.array([1, 2, 3], dtype=np.int64),
            "parse_status": "ok",
            "n_items": np.array([3, 0, 2], dtype=np.int64),
            "acc": [0.5, np.nan, 1.0],
            "rep": [0.1, 0.2, 0.3],
            "acad": [np.nan] * 3,
            "drs": [0.2, np.nan, 0.4],
            "n_matched": np.array([1, 0, 2], dtype=np.int64),
        }
    )


def _write_responses(db, table: pd.DataFrame) -> None:
    long = tables_core.to_long({"drs_responses": table}).assign(
        partition_key="m|base", audit_id="a1", provenance_id="p", params_hash="h"
    )
    db.replace_result_tables("analysis_tables", long, ["m|base"])


@pytest.mark.parametrize("fourth", [False, True], ids=["study axes", "a fourth axis"])
def test_drs_responses_stores_the_axes_packed_and_gives_them_back(db, fourth):
    with axes.using(axes.Catalogue(axes.current().axes + (FOURTH,)) if fourth else None):
        names = axes.names()
        table = _responses(names)
        _write_responses(db, table)
        back = db.partition_tables(D.MetricRow, "m|base")["drs_responses"]
        pd.testing.assert_frame_equal(back, table)
        with db.engine().connect() as conn:
            stored = [r[0] for r in conn.execute(sa.text("SELECT attributes FROM drs_responses ORDER BY row_index"))]
            columns = [c["name"] for c in sa.inspect(conn).get_columns("drs_responses")]
        assert [list(json.loads(s)) for s in stored] == [list(names)] * 3
        assert not set(STUDY) & set(columns)  # no axis has a column of its own
        pd.testing.assert_frame_equal(
            tables_core.from_long(db.read_rows(D.MetricRow, ["m|base"]))["drs_responses"], table
        )


def test_drs_responses_refuses_an_axis_the_design_does_not_declare(db):
    table = _responses(STUDY).assign(disability="visual")  # the study's design has no such axis
    with pytest.raises(ResultTypeError, match=r"column\(s\) \['disability'\] that core/common/result_tables.py"):
        _write_responses(db, table)
