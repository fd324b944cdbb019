"""generations -> recommendations -> subject_tags, with the GX checks, on SQLite."""

import json

import dagster as dg
import pytest

from fairness_assets.core.common.partition import PartitionKey
from fairness_assets.defs.generation import assets as gen
from fairness_assets.defs.partitions import MODEL_PARTITIONS
from fairness_assets.defs.reference import assets as ref
from fairness_assets.defs.understanding import assets as und
from resources import database as D
from resources.llm.resource import LLMResource
from resources.settings import AuditGridResource, GenerationSourceResource, ParseQualityResource, ReferenceDataResource
from resources.tagger import SubjectTaggerResource

GOOD = json.dumps(
    [
        {"university": "MIT", "program": "MSc Computer Science", "country": "USA"},
        {"university": "University of Lagos", "program": "MBA", "country": "Nigeria"},
        {"university": "UCL", "program": "MSc Public Health", "country": "UK"},
    ]
)


def responses_file(tmp_path, texts, model="m1", template="base"):
    rows = []
    genders, classes = ["male", "female", "transgender"], ["high", "low"]
    for i, text in enumerate(texts):
        rows.append(
            {
                "model": model,
                "template": template,
                "gender": genders[i % 3],
                "economic_class": classes[(i // 3) % 2],
                "nationality": ["Nigeria", "India"][(i // 6) % 2],
                "run": i // 12,
                "response": text,
            }
        )
    p = tmp_path / "responses.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows))
    return p


def run(tmp_path, path, key="m1|base", **quality):
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(MODEL_PARTITIONS.name, [PartitionKey.parse(key).model])
    database = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'r.db'}")
    result = dg.materialize(
        [ref.qs_corpus, ref.profiles, ref.prompts, gen.generations, und.recommendations, und.subject_tags],
        instance=instance,
        partition_key=key,
        raise_on_error=False,
        resources={
            "database": database,
            "results_io": D.SQLResultsIOManager(database=database),
            "reference": ReferenceDataResource(),
            "audit_grid": AuditGridResource(),
            "generation_source": GenerationSourceResource(responses_path=str(path)),
            "subject_tagger": SubjectTaggerResource(),
            "parse_quality": ParseQualityResource(**quality),
            "llm": LLMResource(),
        },
    )
    checks = {c.check_name: c for c in result.get_asset_check_evaluations()}
    mats = {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()}
    return result, checks, mats, database


def test_good_partition_passes_and_stores_rows(tmp_path):
    result, checks, mats, db = run(tmp_path, responses_file(tmp_path, [GOOD] * 12))
    assert result.success and {"generations", "recommendations", "subject_tags"} <= mats
    assert all(c.passed for c in checks.values()) and len(checks) == 7
    recs = db.read_rows(D.Recommendation, ["m1|base"])
    assert len(recs) == 36 and recs["university_id"].notna().all()
    assert set(recs["matched_name"]) == {"Massachusetts Institute of Technology (MIT)", "University of Lagos", "UCL"}
    assert json.loads(recs.loc[recs["program_text"] == "MBA", "tags"].iloc[0]) == ["Social Sciences & Management"]
    tags = db.read_rows(D.SubjectTag, ["m1|base"])
    assert set(tags["program_norm"]) == {"computer science", "mba", "public health"}
    assert db.read_tag_cache("rules-3", ["mba"]) == {"mba": ("Social Sciences & Management",)}


def test_low_parse_rate_blocks_downstream(tmp_path):
    texts = [GOOD] * 3 + ["lorem ipsum dolor"] * 9
    result, checks, mats, db = run(tmp_path, responses_file(tmp_path, texts))
    assert not result.success  # a blocking check with severity ERROR fails the run
    assert checks["parse_rate"].passed is False
    assert checks["parse_rate"].severity == dg.AssetCheckSeverity.ERROR
    assert checks["parse_rate"].metadata["observed"].value == pytest.approx(0.25)
    assert "recommendations" in mats and "subject_tags" not in mats
    # the failing partition's rows are still stored for inspection; every response kept
    recs = db.read_rows(D.Recommendation, ["m1|base"])
    assert recs["response_id"].nunique() == 12
    assert (recs.drop_duplicates("response_id")["parse_status"] == "unparseable").sum() == 9


def test_threshold_is_configurable(tmp_path):
    texts = [GOOD] * 3 + ["lorem ipsum dolor"] * 9
    result, checks, mats, _ = run(tmp_path, responses_file(tmp_path, texts), min_parse_rate=0.2, max_group_gap=1.0)
    assert checks["parse_rate"].passed and "subject_tags" in mats


def test_group_gap_is_reported_as_a_finding(tmp_path):
    # every transgender student's answer is a refusal: a gap between genders
    texts = [GOOD if i % 3 != 2 else "I'm sorry, I can't help with that." for i in range(12)]
    result, checks, mats, _ = run(tmp_path, responses_file(tmp_path, texts), min_parse_rate=0.5)
    gap = checks["group_parse_gap"]
    assert gap.passed is False and gap.severity == dg.AssetCheckSeverity.WARN
    assert gap.metadata["observed"].value == pytest.approx(1.0)
    assert result.success and "subject_tags" in mats  # a finding, not a blocker


def test_partition_without_responses_fails_with_a_clear_message(tmp_path):
    result, checks, mats, _ = run(tmp_path, responses_file(tmp_path, [GOOD] * 3), key="m1|regional")
    assert not result.success
    failure = [e for e in result.all_events if e.is_step_failure][0]
    message = str(failure.event_specific_data.error.message)
    assert "no partition of the run could be produced: m1|regional failed" in message
    assert (
        "has no usable row for model 'm1' with template 'regional' (for this model it has template(s) ['base'])"
        in message
    )


def test_every_stored_match_explains_itself(tmp_path):
    """Issue 21.3: each matched item stores its rule family, score and (completion / fuzzy) runner-up;
    the asset's metadata counts the rules and lists the most frequent non-exact matches."""
    answer = json.dumps(
        [
            {"university": "MIT", "program": "MSc Computer Science", "country": "USA"},
            {"university": "University of Lagos", "program": "MBA", "country": "Nigeria"},
            {"university": "Massachusets Institute of Technolgy", "program": "MBA", "country": "USA"},
        ]
    )
    result, _, _, db = run(tmp_path, responses_file(tmp_path, [answer] * 12))
    recs = db.read_rows(D.Recommendation, ["m1|base"])
    rule = dict(zip(recs["university_text"], recs["match_rule"], strict=False))
    assert rule["MIT"] == "alias" and rule["University of Lagos"] == "exact"
    fuzzy = recs[recs["university_text"] == "Massachusets Institute of Technolgy"]
    # an exact repeat of MIT in one answer is one item (METHOD.md §9): the fuzzy one is dropped as a duplicate
    # when it lands on MIT; where it is kept, it says how it was matched
    assert fuzzy.empty or set(fuzzy["match_rule"]) == {"fuzzy"}
    assert recs.loc[recs["university_id"].notna(), "match_rule"].notna().all()
    assert recs["match_score"].notna().all()
    mat = next(
        e for e in result.get_asset_materialization_events() if e.asset_key.to_user_string() == "recommendations"
    ).materialization
    assert "alias" in mat.metadata["match_rule"].value and "exact" in mat.metadata["match_rule"].value
    assert "MIT" in mat.metadata["non_exact_matches"].value
