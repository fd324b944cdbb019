"""Models ready without clicks (issue 23 item 5): the model_partitions_sync sensor adds every model
of the source the audit uses (the registry; the responses file when FAIRNESS_RESPONSES is set) to
the 'models' partitions, is idempotent, never deletes, reports partitions neither source has with
how to delete them, reports (and alerts once on) names no partition can hold, and names a
responses file or registry it cannot read. ``prepare_model_partitions`` does the same before
`fairness-audit ui` starts.

The sensor is evaluated with ``build_sensor_context`` on an ephemeral instance, its partition
requests applied as the daemon applies them; the slow test has Dagster's sensor daemon tick it on
a real instance folder, from the code location of workspace.yaml.
"""

from __future__ import annotations

import json

import dagster as dg
import pytest

from fairness_assets.defs import partitions as P
from fairness_assets.defs.operations.sensors import model_partitions_sync
from fairness_assets.local import OFFLINE_INSTANCE_YAML
from resources.alerts import AlertResource
from resources.settings import AuditGridResource, GenerationSourceResource
from tests.helpers.pipeline import DEMO_MODEL, DEMO_RESPONSES, ROOT
from tests.helpers.servers import Receiver

MODELS = P.MODEL_PARTITIONS.name


def write_registry(path, *models):
    path.write_text("models:\n" + "".join(f"  {m}:\n    source: org/{m}\n" for m in models), encoding="utf-8")
    return path


def write_responses(path, *models):
    """The demo answers, once per model."""
    rows = [json.loads(line) for line in DEMO_RESPONSES.read_text().splitlines() if line.strip()]
    path.write_text("".join(json.dumps({**r, "model": m}) + "\n" for m in models for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def instance():
    with dg.DagsterInstance.ephemeral() as inst:
        yield inst


@pytest.fixture
def webhook():
    with Receiver() as receiver:
        yield receiver


class Sensor:
    """Ticks of model_partitions_sync with a cursor kept between them; each tick's partition
    requests applied to the instance as the sensor daemon applies them (adds only)."""

    def __init__(self, instance, registry, responses="", hook=None):
        self.instance, self.cursor = instance, None
        self.registry, self.responses, self.hook = registry, responses, hook

    def tick(self) -> dg.SensorResult:
        alerts = AlertResource(channels="webhook", webhook_url=self.hook.url) if self.hook else AlertResource()
        resources = {
            "audit_grid": AuditGridResource(model_registry_path=str(self.registry)),
            "generation_source": GenerationSourceResource(responses_path=str(self.responses or "")),
            "alerts": alerts,
        }
        with dg.build_sensor_context(instance=self.instance, cursor=self.cursor, resources=resources) as ctx:
            result = model_partitions_sync(ctx)
        assert isinstance(result, dg.SensorResult)
        for request in result.dynamic_partitions_requests:
            assert isinstance(request, dg.AddDynamicPartitionsRequest), request  # it never deletes
            assert request.partitions_def_name == MODELS
            self.instance.add_dynamic_partitions(MODELS, list(request.partition_keys))
        self.cursor = result.cursor
        return result


def added(result) -> list[str]:
    return [k for r in result.dynamic_partitions_requests for k in r.partition_keys]


def test_the_registrys_models_become_partitions_once(instance, tmp_path):
    registry = write_registry(tmp_path / "models.yaml", DEMO_MODEL, "model-b")
    sensor = Sensor(instance, registry)
    first = sensor.tick()
    assert added(first) == ["model-b", DEMO_MODEL]
    assert sorted(instance.get_dynamic_partitions(MODELS)) == ["model-b", DEMO_MODEL]
    assert first.skip_reason.skip_message.startswith(
        f"added 2 model(s) of the model registry {registry} to the 'models' partitions: 'model-b', '{DEMO_MODEL}'"
    )
    for _ in range(2):  # idempotent: nothing more to add, nothing removed
        again = sensor.tick()
        assert not again.dynamic_partitions_requests
        assert (
            again.skip_reason.skip_message == f"every model of the model registry {registry} is a 'models' "
            "partition (2)."
        )
    assert sorted(instance.get_dynamic_partitions(MODELS)) == ["model-b", DEMO_MODEL]
    # a model registered later is added on the next tick, the others are left as they are
    write_registry(registry, DEMO_MODEL, "model-b", "model-c")
    assert added(sensor.tick()) == ["model-c"]
    assert sorted(instance.get_dynamic_partitions(MODELS)) == ["model-b", "model-c", DEMO_MODEL]


def test_with_a_responses_file_its_models_become_partitions(instance, tmp_path):
    registry = write_registry(tmp_path / "models.yaml", DEMO_MODEL, "registered-only")
    responses = write_responses(tmp_path / "answers.jsonl", DEMO_MODEL, "file-model")
    instance.add_dynamic_partitions(MODELS, ["registered-only"])  # e.g. added before the file was configured
    sensor = Sensor(instance, registry, responses)
    first = sensor.tick()
    # the audit imports from the file only (partitions.KnownModels): the file's models are added
    assert added(first) == ["file-model", DEMO_MODEL]
    text = first.skip_reason.skip_message
    assert text.startswith(
        f"added 2 model(s) of the responses file {responses} (FAIRNESS_RESPONSES) to the "
        "'models' partitions: 'file-model', "
    )
    # a registered model the file lacks is kept and named, not deleted
    assert "1 partition(s) of registered models that the responses file" in text and "'registered-only'" in text
    assert sorted(instance.get_dynamic_partitions(MODELS)) == ["file-model", DEMO_MODEL, "registered-only"]
    assert not sensor.tick().dynamic_partitions_requests
    # a new model in the file (the file changed: read again) is added on the next tick
    write_responses(responses, DEMO_MODEL, "file-model", "newer-model")
    assert added(sensor.tick()) == ["newer-model"]


def test_partitions_that_left_both_sources_are_reported_with_how_to_delete_them_never_deleted(instance, tmp_path):
    registry = write_registry(tmp_path / "models.yaml", DEMO_MODEL, "retired")
    responses = write_responses(tmp_path / "answers.jsonl", DEMO_MODEL, "from-file")
    sensor = Sensor(instance, registry, responses)
    sensor.tick()
    instance.add_dynamic_partitions(MODELS, ["retired", "typo-by-hand"])
    text = sensor.tick().skip_reason.skip_message  # 'retired' is registered: kept, named as idle, not vanished
    assert (
        "1 partition(s) that neither the model registry nor the responses file has, kept (never deleted here): "
        "'typo-by-hand'."
        in text
        and "lacks (kept; runs of them fail while the file is configured): 'retired'" in text
    )
    write_registry(registry, DEMO_MODEL)  # 'retired' leaves the registry,
    write_responses(responses, DEMO_MODEL)  # 'from-file' leaves the file
    for _ in range(2):
        result = sensor.tick()
        assert not result.dynamic_partitions_requests
        text = result.skip_reason.skip_message
        assert (
            "3 partition(s) that neither the model registry nor the responses file has, kept (never deleted "
            "here): 'from-file', 'retired', 'typo-by-hand'"
        ) in text
        assert "Materialize… (top right) and choose Delete partitions" in text
        for name in ("from-file", "retired", "typo-by-hand"):
            assert f"delete_dynamic_partition('models', '{name}')" in text
    assert json.loads(sensor.cursor)["vanished"] == ["from-file", "retired", "typo-by-hand"]
    assert sorted(instance.get_dynamic_partitions(MODELS)) == ["from-file", DEMO_MODEL, "retired", "typo-by-hand"]
    # deleted as the message says, the partition is gone and not added again
    instance.delete_dynamic_partition(MODELS, "typo-by-hand")
    result = sensor.tick()
    assert "'typo-by-hand'" not in result.skip_reason.skip_message and not result.dynamic_partitions_requests
    assert json.loads(sensor.cursor)["vanished"] == ["from-file", "retired"]


def test_without_a_responses_file_a_partition_the_registry_lacks_is_reported(instance, tmp_path):
    registry = write_registry(tmp_path / "models.yaml", DEMO_MODEL)
    instance.add_dynamic_partitions(MODELS, ["ghost", "bad|name"])
    result = Sensor(instance, registry).tick()
    assert added(result) == [DEMO_MODEL]
    text = result.skip_reason.skip_message
    assert (
        "2 partition(s) that the model registry does not have, kept (never deleted here): 'bad|name', 'ghost'" in text
    )
    assert "delete_dynamic_partition('models', 'bad|name')" in text
    assert sorted(instance.get_dynamic_partitions(MODELS)) == ["bad|name", "ghost", DEMO_MODEL]


def test_names_no_partition_can_hold_are_reported_and_alerted_once_not_added(instance, tmp_path, webhook):
    registry = write_registry(tmp_path / "models.yaml", DEMO_MODEL)
    responses = write_responses(tmp_path / "answers.jsonl", DEMO_MODEL, "org|model", "v1...v2")
    sensor = Sensor(instance, registry, responses, webhook)
    result = sensor.tick()
    assert added(result) == [DEMO_MODEL]
    assert instance.get_dynamic_partitions(MODELS) == [DEMO_MODEL]
    text = result.skip_reason.skip_message
    assert (
        "not added (no partition can hold the name; rename it in its source): 'org|model': the name contains "
        "'|', which separates model and template" in text
    )
    assert "'v1...v2': the name contains '...', which Dagster does not allow in partition keys" in text
    posts = [p["json"] for p in webhook.posts]
    assert sorted(p["partition"] for p in posts) == ["org|model", "v1...v2"]
    assert all(p["kind"] == "unusable_model" and str(responses) in p["summary"] for p in posts)
    assert posts[0]["title"].endswith("cannot be a partition")
    for _ in range(2):  # reported every tick, alerted once
        assert "'org|model'" in sensor.tick().skip_reason.skip_message
    assert len(webhook.posts) == 2
    write_responses(responses, DEMO_MODEL)  # renamed in the file: forgotten; back again, alerted again
    sensor.tick()
    assert json.loads(sensor.cursor)["alerted"] == []
    write_responses(responses, DEMO_MODEL, "org|model")
    sensor.tick()
    assert [p["json"]["partition"] for p in webhook.posts][-1] == "org|model" and len(webhook.posts) == 3


def test_an_undeliverable_alert_is_retried_and_the_models_are_still_added(instance, tmp_path):
    registry = write_registry(tmp_path / "models.yaml", DEMO_MODEL)
    responses = write_responses(tmp_path / "answers.jsonl", DEMO_MODEL, "org|model")
    with Receiver(status=500) as down:
        sensor = Sensor(instance, registry, responses, down)
        result = sensor.tick()
        assert added(result) == [DEMO_MODEL]
        assert "ALERT DELIVERY FAILED: alert \"model 'org|model'" in result.skip_reason.skip_message
        assert "HTTP 500" in result.skip_reason.skip_message
    with Receiver() as hook:
        sensor.hook = hook
        sensor.tick()
        assert [p["json"]["partition"] for p in hook.posts] == ["org|model"]


def test_a_responses_file_that_cannot_be_read_is_named_with_its_error(instance, tmp_path):
    registry = write_registry(tmp_path / "models.yaml", DEMO_MODEL)
    missing = tmp_path / "nope.jsonl"
    result = Sensor(instance, registry, missing).tick()
    assert not result.dynamic_partitions_requests
    assert (
        f"not read: {missing}: responses file not found (FAIRNESS_RESPONSES): No such file or directory"
        in result.skip_reason.skip_message
    )
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"model": "m", "template": "base"\nnot json at all\n', encoding="utf-8")
    instance.add_dynamic_partitions(MODELS, ["old"])
    result = Sensor(instance, registry, broken).tick()
    text = result.skip_reason.skip_message
    assert not result.dynamic_partitions_requests and f"not read: {broken}" in text and "line 1" in text, text
    # with a source unread no partition is said to have left both: 'old' is not reported as vanished
    assert "'old'" not in text and "not looked for until every source can be read" in text
    assert instance.get_dynamic_partitions(MODELS) == ["old"]


def test_a_broken_registry_is_named_and_the_files_models_are_still_added(instance, tmp_path):
    registry = tmp_path / "models.yaml"
    registry.write_text("models: [unclosed\n", encoding="utf-8")
    responses = write_responses(tmp_path / "answers.jsonl", DEMO_MODEL)
    result = Sensor(instance, registry, responses).tick()
    assert added(result) == [DEMO_MODEL]
    assert f"not read: model registry {registry}, line 2, column 1: not valid YAML" in result.skip_reason.skip_message
    result = Sensor(instance, registry).tick()  # without a file, nothing to add: the tick says why
    assert not result.dynamic_partitions_requests
    assert result.skip_reason.skip_message.startswith(f"not read: model registry {registry}, line 2")


def test_the_ui_start_adds_the_models_before_the_ui_starts(tmp_path, monkeypatch):
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text(OFFLINE_INSTANCE_YAML)
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    registry = write_registry(tmp_path / "models.yaml", DEMO_MODEL, "model-b")
    monkeypatch.setenv("FAIRNESS_MODEL_REGISTRY", str(registry))
    monkeypatch.delenv("FAIRNESS_RESPONSES", raising=False)
    line = P.prepare_model_partitions()
    assert line.startswith(f"added 2 model(s) of the model registry {registry}"), line
    with dg.DagsterInstance.from_config(str(home)) as instance:  # the instance the UI then opens
        assert sorted(instance.get_dynamic_partitions(MODELS)) == ["model-b", DEMO_MODEL]
    assert P.prepare_model_partitions() == f"every model of the model registry {registry} is a 'models' partition (2)."

    responses = write_responses(tmp_path / "answers.jsonl", "file-model")
    monkeypatch.setenv("FAIRNESS_RESPONSES", str(responses))
    monkeypatch.setattr(P, "UI_START_FILE_BYTES", 100)  # a big file is left to the sensor: the UI starts at once
    line = P.prepare_model_partitions()
    assert (
        f"the responses file {responses} is 0 MiB (over 0 MiB): its models are added by the "
        "model_partitions_sync sensor's first tick" in line
    ), line
    monkeypatch.setattr(P, "UI_START_FILE_BYTES", 200 * 2**20)
    assert P.prepare_model_partitions().startswith("added 1 model(s) of the responses file")
    monkeypatch.setenv("FAIRNESS_MAX_ITEMS", "many")  # settings that do not load: a line, the UI starts anyway
    line = P.prepare_model_partitions()
    assert "the models were not added before the UI starts" in line and "FAIRNESS_MAX_ITEMS" in line, line


def test_the_sensor_is_in_the_code_location_running_every_30_seconds():
    from fairness_assets.definitions import defs

    sensor = defs().resolve_sensor_def("model_partitions_sync")
    assert sensor.default_status == dg.DefaultSensorStatus.RUNNING
    assert sensor.minimum_interval_seconds == P.SYNC_INTERVAL_S == 30
    assert {"audit_grid", "generation_source", "alerts"} <= sensor.required_resource_keys


@pytest.mark.slow
def test_ticked_by_the_sensor_daemon_the_models_are_partitions(tmp_path, monkeypatch):
    """As `dagster dev` runs it: the code location of workspace.yaml in a gRPC code server, the
    sensor ticked by Dagster's sensor daemon on an instance folder (SQLite storage), which applies
    the tick's partition requests."""
    from dagster._core.scheduler.instigation import TickStatus
    from dagster._core.test_utils import create_test_daemon_workspace_context
    from dagster._core.workspace.load_target import WorkspaceFileTarget

    from tests.defs.test_alert_sensors import tick

    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text(OFFLINE_INSTANCE_YAML)
    registry = write_registry(tmp_path / "models.yaml", DEMO_MODEL, "model-b")
    for var, value in {
        "DAGSTER_HOME": str(home),
        "FAIRNESS_MODEL_REGISTRY": str(registry),
        "FAIRNESS_HOME": str(tmp_path / "fairness_home"),
    }.items():
        monkeypatch.setenv(var, value)  # the code server reads them when it starts
    for var in ("FAIRNESS_RESPONSES", "FAIRNESS_DESIGN", "FAIRNESS_DATABASE_URL", "FAIRNESS_ALERT_CHANNELS"):
        monkeypatch.delenv(var, raising=False)
    with (
        dg.DagsterInstance.from_config(str(home)) as instance,
        create_test_daemon_workspace_context(WorkspaceFileTarget([str(ROOT / "workspace.yaml")]), instance) as daemon,
    ):
        instance.add_dynamic_partitions(MODELS, ["ghost"])
        first = tick(daemon, instance, "model_partitions_sync")
        assert first.status == TickStatus.SKIPPED, first.error
        assert sorted(instance.get_dynamic_partitions(MODELS)) == ["ghost", "model-b", DEMO_MODEL]
        assert first.skip_reason.startswith(f"added 2 model(s) of the model registry {registry}")
        assert "'ghost'" in first.skip_reason and "delete_dynamic_partition('models', 'ghost')" in first.skip_reason
        assert sorted(first.tick_data.dynamic_partitions_request_results[0].added_partitions) == ["model-b", DEMO_MODEL]
        second = tick(daemon, instance, "model_partitions_sync")
        assert second.status == TickStatus.SKIPPED and second.tick_id != first.tick_id, second.error
        assert second.skip_reason.startswith(f"every model of the model registry {registry} is a 'models' partition")
        assert sorted(instance.get_dynamic_partitions(MODELS)) == ["ghost", "model-b", DEMO_MODEL]
