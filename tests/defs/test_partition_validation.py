"""Model partitions are validated at the start of the run that generates or imports them: a model
missing from the registry or from the responses file, or a name with '|', fails with one message
that names the model and says what to do (issue 11 item 11)."""

import dagster as dg

from fairness_assets.defs.partitions import MODEL_PARTITIONS, unusable_models
from resources import database as D
from resources.settings import GenerationSourceResource
from tests.helpers.pipeline import ASSETS, DEMO_RESPONSES, resources

REFERENCE_AND_GENERATIONS = [
    "qs_corpus",
    "country_geography",
    "capital_distances",
    "profiles",
    "prompts",
    "generations",
]


def _run(tmp_path, model: str, responses=DEMO_RESPONSES, **overrides):
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(MODEL_PARTITIONS.name, [model])
    db = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'r.db'}")
    result = dg.materialize(
        ASSETS,
        selection=REFERENCE_AND_GENERATIONS,
        instance=instance,
        partition_key=dg.MultiPartitionKey({"model": model, "template": "base"}),
        raise_on_error=False,
        resources=resources(db, responses, **overrides),
    )
    failures = [ev.step_failure_data.error for ev in result.all_events if ev.is_step_failure]
    messages = []
    for err in failures:
        while err is not None:
            messages.append(err.message)
            err = err.cause
    return result, " ".join(messages)


def test_a_model_missing_from_the_responses_file_is_named(tmp_path):
    result, message = _run(tmp_path, "not-a-model")
    assert not result.success
    assert "model(s) ['not-a-model'] are not in the responses file" in message
    assert "qwen2.5-0.5b-demo" in message and "delete_dynamic_partition" in message


def test_a_model_missing_from_the_registry_is_named_before_any_generation(tmp_path):
    result, message = _run(tmp_path, "not-a-model", generation_source=GenerationSourceResource())
    assert not result.success
    assert "are not in the model registry" in message and "not-a-model" in message and "Add the model to" in message


def test_a_model_name_with_a_pipe_is_refused():
    """Dagster itself cannot address such a partition (its key would be 'bad|name|base'); the
    check names it wherever a run reaches the generations asset with one."""
    message = unusable_models([("bad|name", "base"), ("ok", "base")], {"ok", "bad|name"}, "the model registry r.yaml")
    assert "['bad|name'] contain '|'" in message and "'ok'" not in message.split(".")[0]
    assert unusable_models([("ok", "base")], {"ok"}, "x") is None
