"""The catalog: every asset has kinds that say what it is made with, owners and tags (issue 23.6)."""

import pytest

from fairness_assets.defs import catalog


def _nodes():
    from fairness_assets.definitions import defs

    return {n.key.to_user_string(): n for n in defs().resolve_asset_graph().asset_nodes}


def test_every_asset_is_catalogued_with_owners_stage_and_partitioning():
    nodes = _nodes()
    assert set(nodes) == set(catalog.CATALOG)  # no asset without an entry, no entry without an asset
    for key, node in nodes.items():
        entry = catalog.CATALOG[key]
        assert set(node.kinds) == set(entry.kinds), key
        assert node.owners == ["team:fairness-audit"], key
        assert node.tags["stage"] == entry.stage, key
        assert node.tags["partitioning"] == entry.partitioning.replace(" ", "_")
        partitioned = node.partitions_def is not None
        assert partitioned == (entry.partitioning == catalog.M_T), key  # the tag says what the definition does
        assert node.metadata["method"] == entry.method
        reads = key == "generations"  # the default tagger (rules) reads no model
        assert node.tags["reads_model"] == ("yes" if reads else "no"), key
        assert node.tags["cost"] == ("gpu_or_endpoint" if reads else "cpu"), key


def test_kinds_tell_the_assets_apart():
    kinds = {key: frozenset(n.kinds) for key, n in _nodes().items()}
    assert len(set(kinds.values())) >= 8
    assert "great_expectations" in kinds["recommendations"] and "matplotlib" in kinds["audit_figures"]
    assert "html" in kinds["audit_report"] and "huggingface" in kinds["generations"]


def test_blocking_checks_are_tagged_where_they_are():
    from fairness_assets.definitions import defs

    with_checks = {k.asset_key.to_user_string() for k in defs().resolve_asset_graph().asset_check_keys}
    tagged = {k for k, n in _nodes().items() if n.tags.get("blocking_checks") == "yes"}
    assert tagged == with_checks == {"recommendations"}  # no gate file: no release gate checks, no tag
    from fairness_assets.definitions import load_definitions
    from resources.settings import load_settings

    gated = load_definitions(load_settings(gate_file="gate.yaml")).resolve_asset_graph()
    with_checks = {k.asset_key.to_user_string() for k in gated.asset_check_keys}
    tagged = {n.key.to_user_string() for n in gated.asset_nodes if n.tags.get("blocking_checks") == "yes"}
    assert tagged == with_checks == {"recommendations", "model_comparison", "sensitivity"}


@pytest.mark.parametrize(
    "value, ok", [("team:audit", True), ("ana@example.org", True), ("ana", False), ("team:", False)]
)
def test_owners_come_from_the_setting_and_a_bad_one_is_named(monkeypatch, value, ok):
    monkeypatch.setenv("FAIRNESS_ASSET_OWNERS", value)
    if ok:
        assert catalog.owners() == [value]
    else:
        with pytest.raises(ValueError, match="FAIRNESS_ASSET_OWNERS"):
            catalog.owners()


def test_the_llm_tagger_makes_subject_tags_read_a_model():
    """The catalog's settings are passed in (the definitions' own), not read again: with
    FAIRNESS_TAGGER=llm subject_tags reads a model and costs GPU or endpoint time, the rest is unchanged."""
    from fairness_assets.defs.understanding import assets as understanding
    from resources.settings import load_settings

    def tags(settings):
        (asset,) = catalog.catalogued([understanding.subject_tags], settings)
        return dict(asset.specs_by_key[asset.key].tags)

    assert {k: tags(load_settings(tagger="llm"))[k] for k in ("reads_model", "cost")} == {
        "reads_model": "yes",
        "cost": "gpu_or_endpoint",
    }
    assert {k: tags(load_settings(tagger="rules"))[k] for k in ("reads_model", "cost")} == {
        "reads_model": "no",
        "cost": "cpu",
    }
    (recs,) = catalog.catalogued([understanding.recommendations], load_settings(tagger="llm"))
    assert recs.specs_by_key[recs.key].tags["cost"] == "cpu"


def test_decorators_say_no_kinds_the_catalog_would_replace():
    """Kinds come from the catalog alone: no decorator of the stage folders gives kinds (the catalog
    replaced them anyway), so what the UI shows is what defs/catalog.py says."""
    from fairness_assets.defs.generation import assets as generation
    from fairness_assets.defs.reporting import assets as reporting
    from fairness_assets.defs.scoring import assets as scoring

    for asset in (generation.generations, scoring.scores, reporting.audit_report_file):
        assert all(not spec.kinds for spec in asset.specs), asset.keys
    assert generation.generations.partitions_def is not None and generation.generations.backfill_policy is None
