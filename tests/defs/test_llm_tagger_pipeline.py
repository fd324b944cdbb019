"""FAIRNESS_TAGGER=llm end to end: the demo partition's recommendations and subject tags tagged by
the built-in model (qwen2.5-0.5b-demo, from PyPI parts) through the `llm` resource, the model
loaded once per run and released, the tags cached (a second run loads no model), and the tagger's
name (with its model) in the assets' metadata and the report's provenance."""

import json

import dagster as dg
import pytest

from fairness_assets.core.understanding import tags as T
from fairness_assets.defs.generation import assets as gen
from fairness_assets.defs.partitions import MODEL_PARTITIONS
from fairness_assets.defs.reference import assets as ref
from fairness_assets.defs.services import software_provenance
from fairness_assets.defs.understanding import assets as und
from resources import database as D
from resources.tagger import SubjectTaggerResource
from tests.helpers.pipeline import DEMO_KEY, DEMO_MODEL, DEMO_RESPONSES, resources

pytestmark = pytest.mark.slow

TAGGER = f"llm-fewshot-1:{DEMO_MODEL}"


def _run(instance, database, llm):
    tagger = SubjectTaggerResource(method="llm", llm_model=DEMO_MODEL, overrides_path="")  # the LLM tags every program
    result = dg.materialize(
        [ref.qs_corpus, ref.profiles, ref.prompts, gen.generations, und.recommendations, und.subject_tags],
        instance=instance,
        partition_key=DEMO_KEY,
        raise_on_error=False,
        resources=resources(database, DEMO_RESPONSES, subject_tagger=tagger, llm=llm),
    )
    assert result.success
    messages = [e.user_message for e in instance.all_logs(result.run_id)]
    meta = {e.asset_key.to_user_string(): e.materialization.metadata for e in result.get_asset_materialization_events()}
    return messages, meta


def _sources(md) -> set[str]:
    """The sources named in a ``tag_sources`` Markdown table."""
    rows = [line.split("|")[1].strip() for line in md.value.splitlines()[2:] if line.startswith("|")]
    return set(rows)


def test_llm_tagger_on_the_demo_grid(tmp_path):
    pytest.importorskip("torch", reason="the llm extra (torch, transformers) is not installed")
    from resources.llm.resource import LLMResource

    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(MODEL_PARTITIONS.name, [DEMO_MODEL])
    database = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'r.db'}")
    llm = LLMResource(device="cpu", batch_size=16)

    # first run: the model is loaded once (in recommendations), tags every program, and is released
    messages, meta = _run(instance, database, llm)
    loads = [m for m in messages if m.startswith(f"loading model {DEMO_MODEL}")]
    releases = [m for m in messages if m == f"released model {DEMO_MODEL}"]
    assert len(loads) == 1 and len(releases) == 1, [m for m in messages if "model" in m]
    assert messages.index(releases[0]) > messages.index(loads[0])
    assert meta["recommendations"]["tagger"].value == TAGGER == meta["subject_tags"]["tagger"].value
    assert "llm" in _sources(meta["recommendations"]["tag_sources"]) <= {"llm", "llm-fallback-rules"}  # fresh answers

    recs = database.read_rows(D.Recommendation, [DEMO_KEY])
    tags = database.read_rows(D.SubjectTag, [DEMO_KEY])
    norms = set(recs["program_norm"].dropna())
    assert set(tags["program_norm"]) == norms and len(norms) >= 10
    # in the same run subject_tags reads what recommendations cached: the model's answers, or its
    # rules fallback, marked as such (a fallback carries the rules' tags)
    assert set(tags["source"]) <= {"cache:llm", "cache:llm-fallback-rules"}
    assert (tags["source"] == "cache:llm").sum() >= len(norms) // 2, tags
    for norm, tag_json, source in tags[["program_norm", "tags", "source"]].itertuples(index=False):
        areas = tuple(json.loads(tag_json))
        assert set(areas) <= set(T.QS_AREAS)
        if source == "cache:llm-fallback-rules":
            assert areas == T.tag_rules(norm)
        else:
            assert areas  # the model named at least one area
    answered = database.read_tag_cache(TAGGER, sorted(norms))
    fallback = database.read_tag_cache(f"{TAGGER}+fallback-rules", sorted(norms))
    assert set(answered) | set(fallback) == norms and not set(answered) & set(fallback)
    stored = {r.program_norm: r.tags for r in recs.dropna(subset=["program_norm"]).itertuples()}
    assert all(tuple(json.loads(stored[n])) == (answered | fallback)[n] for n in norms)

    # second run: everything comes from the cache, no model is loaded or released
    messages, meta = _run(instance, database, llm)
    assert not [m for m in messages if DEMO_MODEL in m and ("loading model" in m or "released model" in m)]
    assert "cache:llm" in _sources(meta["recommendations"]["tag_sources"]) <= {"cache:llm", "cache:llm-fallback-rules"}
    assert set(database.read_rows(D.SubjectTag, [DEMO_KEY])["source"]) == set(tags["source"])

    # the report's provenance names the tagger with its model
    tagger = SubjectTaggerResource(method="llm", llm_model=DEMO_MODEL)
    assert software_provenance(tagger.tagger_name(), {}, {})["subject tagger"] == TAGGER


def test_score_command_with_the_llm_tagger(tmp_path):
    """`fairness-audit score --tagger llm`: the same assets with the LLM tagger; the report's
    provenance and the stored tag sources name it."""
    pytest.importorskip("torch", reason="the llm extra (torch, transformers) is not installed")
    from fairness_assets.local import score_responses
    from resources.settings import DEMO_CORPUS

    out = tmp_path / "out"
    written = score_responses(str(DEMO_RESPONSES), str(DEMO_CORPUS), str(out), tagger="llm", log=lambda *_: None)
    assert len(written["recommendations"]) > 0
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "llm-fewshot-1:" in report  # the subject tagger, with its model, in the provenance
