"""Jobs, the re-audit schedule and its drift table, alert sensors, GPU pool and Kubernetes tags."""

from __future__ import annotations

import datetime as dt
import json

import dagster as dg
import pytest

from fairness_assets.defs.generation.assets import generations
from fairness_assets.defs.operations import schedules
from fairness_assets.defs.operations.sensors import parse_quality_alert, run_failure_alert
from fairness_assets.defs.partitions import AUDIT_ROUND_TAG, MODEL_PARTITIONS
from resources import database as D
from resources.alerts import AlertResource
from resources.settings import AuditGridResource, GenerationSourceResource, load_settings
from tests.helpers.pipeline import DEMO_KEY, DEMO_RESPONSES, altered_responses, audit
from tests.helpers.servers import Receiver, smtp_server


@pytest.fixture
def db(tmp_path):
    return D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'results.db'}")


def test_code_location_has_the_jobs_schedule_and_sensors():
    from fairness_assets.definitions import defs

    loaded = defs()
    for name in ("demo_audit", "study_audit", "reaudit", "reference_data"):
        assert loaded.resolve_job_def(name) is not None
    (study_audit,) = [job for job in loaded.jobs if job.name == "study_audit"]

    assert study_audit.config["resources"]["audit_grid"]["config"]["design"] == "study"
    assert loaded.resolve_schedule_def("reaudit_schedule").cron_schedule == schedules.DEFAULT_CRON
    for sensor in (
        "parse_quality_alert",
        "run_failure_alert",
        "invalid_partition_alert",
        "failed_tick_alert",
        "model_partitions_sync",
    ):
        assert loaded.resolve_sensor_def(sensor) is not None
    assert "alerts" in loaded.resources
    for asset in ("audit_drift", "generations", "recommendations", "drs_scores"):
        assert loaded.resolve_assets_def(asset) is not None


def test_generation_runs_in_the_gpu_pool_with_kubernetes_gpu_requests():
    spec = generations.specs_by_key[dg.AssetKey("generations")]
    node = generations.node_def
    assert node.pool == "gpu"
    k8s = node.tags["dagster-k8s/config"]
    k8s = json.loads(k8s) if isinstance(k8s, str) else k8s
    assert k8s["container_config"]["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert k8s["pod_spec_config"]["node_selector"]
    assert spec.partitions_def is not None
    # no backfill policy: a backfill is one run per partition, tagged with its key (defs/partitions.PER_PARTITION)
    assert generations.backfill_policy is None


def test_reaudit_schedule_requests_every_registered_model_and_template(tmp_path):
    (tmp_path / "instance").mkdir()
    instance = dg.DagsterInstance.local_temp(str(tmp_path / "instance"))
    registry = tmp_path / "models.yaml"
    registry.write_text(
        "models:\n" + "".join(f"  {m}:\n    source: org/{m}\n" for m in ("qwen2.5-0.5b-demo", "model-a", "model-b"))
    )
    grid = AuditGridResource(design="demo", templates=["base", "regional"], model_registry_path=str(registry))
    resources = {"audit_grid": grid, "generation_source": GenerationSourceResource()}
    tick = dt.datetime(2026, 11, 30, 6, 0, tzinfo=dt.timezone.utc)
    with dg.build_schedule_context(instance=instance, scheduled_execution_time=tick, resources=resources) as ctx:
        skipped = schedules.reaudit_tick(ctx, **resources)
    assert isinstance(skipped, dg.SkipReason) and "no model is registered" in skipped.skip_message

    instance.add_dynamic_partitions(MODEL_PARTITIONS.name, ["model-a", "model-b"])
    with dg.build_schedule_context(instance=instance, scheduled_execution_time=tick, resources=resources) as ctx:
        requests = schedules.reaudit_tick(ctx, **resources)
    keys = sorted(str(r.partition_key) for r in requests)
    assert keys == ["model-a|base", "model-a|regional", "model-b|base", "model-b|regional"]
    assert {r.tags[AUDIT_ROUND_TAG] for r in requests} == {"20261130T0600"}
    assert len({r.run_key for r in requests}) == 4
    assert not any(schedules.SKIPPED_TAG in r.tags for r in requests)  # nothing skipped, nothing said


def test_reaudit_cron_is_configurable_and_validated(monkeypatch):
    monkeypatch.setenv("FAIRNESS_REAUDIT_CRON", "0 2 1 * *")
    assert schedules.reaudit_schedule_for(load_settings()).cron_schedule == "0 2 1 * *"
    monkeypatch.setenv("FAIRNESS_REAUDIT_CRON", "every monday")
    with pytest.raises(ValueError, match="FAIRNESS_REAUDIT_CRON='every monday'"):
        load_settings()


@pytest.mark.slow
def test_reaudit_rounds_store_a_drift_table(tmp_path, db):
    instance = dg.DagsterInstance.ephemeral()
    first = audit(instance, db, DEMO_RESPONSES, tags={AUDIT_ROUND_TAG: "r1"})
    assert first.success
    assert db.read_rows(D.DriftRow).empty  # the first audit has nothing to compare with
    meta = first.asset_materializations_for_node("audit_drift")[0].metadata
    assert "first audit" in meta[f"drift {DEMO_KEY}"].value

    # the same answers again: a new audit round, and nothing changed
    same = audit(instance, db, DEMO_RESPONSES, tags={AUDIT_ROUND_TAG: "r2"})
    assert same.success
    drift = db.read_rows(D.DriftRow)
    assert len(drift) and set(drift["status"]) <= {"unchanged", "undefined"}
    assert drift["audit_id"].str.endswith("-r2").all() and drift["previous_audit_id"].str.endswith("-r1").all()

    # the "model" now sends everyone to Nigerian universities instead of MIT and Stanford
    changed = altered_responses(
        tmp_path,
        {"Massachusetts Institute of Technology": "University of Lagos", "Stanford University": "University of Ibadan"},
    )
    third = audit(instance, db, changed, tags={AUDIT_ROUND_TAG: "r3"})
    assert third.success
    drift = db.read_rows(D.DriftRow)
    assert drift["previous_audit_id"].str.endswith("-r2").all()
    nga = drift[(drift["scope"] == "country") & (drift["group"] == "NGA") & (drift["metric"] == "n_recommendations")]
    usa = drift[(drift["scope"] == "country") & (drift["group"] == "USA") & (drift["metric"] == "n_recommendations")]
    assert float(nga["change"].iloc[0]) > 0 and float(usa["change"].iloc[0]) < 0
    assert float(nga["change"].iloc[0]) == -float(usa["change"].iloc[0])  # the moved recommendations
    overall = drift[(drift["scope"] == "group") & (drift["group"] == "all") & (drift["metric"] == "drs")]
    assert len(overall) == 1 and overall["status"].iloc[0] == "changed"
    assert len(db.audit_history(DEMO_KEY)["audit_id"].unique()) == 3
    shown = third.asset_materializations_for_node("audit_drift")[0].metadata[f"drift {DEMO_KEY}"].value
    assert "vs import-" in shown and "data:image/png;base64," in shown  # table and figure in the UI


def _check_sensor_context(instance, alerts, cursor=None):
    """A context for parse_quality_alert: it reads the checks of its code location (definitions)."""
    from fairness_assets.definitions import defs

    return dg.build_sensor_context(instance=instance, cursor=cursor, definitions=defs(), resources={"alerts": alerts})


def _failed_checks_alert(instance, alerts):
    # contexts are used in `with`: they enter the instance, and leaving it resets Dagster's
    # context-global state (else a later test's run finds a collected instance)
    with _check_sensor_context(instance, alerts) as ctx:
        result = parse_quality_alert(ctx)
    return ctx, result


def test_parse_quality_sensor_alerts_on_non_blocking_check_failures(tmp_path, db):
    instance = dg.DagsterInstance.ephemeral()
    run = audit(instance, db, DEMO_RESPONSES)
    assert run.success  # the demo answers leave a non-blocking group-gap finding: the run stays green
    failed = [c.check_name for c in run.get_asset_check_evaluations() if not c.passed]
    assert failed and all(not c.blocking for c in run.get_asset_check_evaluations() if not c.passed)
    with Receiver() as hook:
        ctx, result = _failed_checks_alert(instance, AlertResource(channels="webhook", webhook_url=hook.url))
        assert sorted(p["json"]["check"] for p in hook.posts) == sorted(failed)
        assert all(p["json"]["partition"] == DEMO_KEY and p["json"]["run_id"] == run.run_id for p in hook.posts)
        # the cursor moved past them: a second tick sends nothing
        with _check_sensor_context(
            instance, AlertResource(channels="webhook", webhook_url=hook.url), cursor=ctx.cursor
        ) as ctx2:
            assert isinstance(parse_quality_alert(ctx2), dg.SkipReason)
        assert len(hook.posts) == len(failed)


def test_blocking_check_failure_alerts_twice_check_and_run(tmp_path, db):
    rows = [json.loads(line) for line in DEMO_RESPONSES.read_text().splitlines() if line.strip()]
    for row in rows:
        row["response"] = "I'm sorry, I cannot help with that."  # every answer a refusal: parse rate 0
    bad = tmp_path / "refusals.jsonl"
    bad.write_text("\n".join(json.dumps(r) for r in rows))
    instance = dg.DagsterInstance.ephemeral()
    run = audit(instance, db, bad)
    assert not run.success
    assert any(not c.passed and c.blocking for c in run.get_asset_check_evaluations())

    with smtp_server() as (port, mails):
        alerts = AlertResource(channels="email", smtp_host="127.0.0.1", smtp_port=port, email_to="ops@example.org")
        _failed_checks_alert(instance, alerts)
        assert any("parse_rate" in str(m["Subject"]) for m in mails)
        n_check_mails = len(mails)

        dagster_run = instance.get_run_by_id(run.run_id)
        failure = next(
            e
            for e in instance.all_logs(run.run_id)
            if e.dagster_event and e.dagster_event.event_type_value == "PIPELINE_FAILURE"
        ).dagster_event
        with dg.build_run_status_sensor_context(
            sensor_name="run_failure_alert",
            dagster_instance=instance,
            dagster_run=dagster_run,
            dagster_event=failure,
            resources={"alerts": alerts},
        ) as status_ctx:
            run_failure_alert(status_ctx.for_run_failure())
        assert len(mails) == n_check_mails + 1
        body = mails[-1].get_payload()
        assert f"run: {run.run_id}" in body and "failed steps:" in body and "run of" in str(mails[-1]["Subject"])
        # the cause, not only the step's name: the blocking checks that failed
        assert "Step 'recommendations' failed: " in body and "parse_rate" in body


def test_kubernetes_files_agree_with_the_code():
    import tomllib

    import yaml

    from fairness_assets.defs.operations.kubernetes import K8S_GPU_CONFIG
    from resources.settings import load_model_registry
    from tests.helpers.pipeline import ROOT

    module = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["dagster"]["module_name"]
    values = yaml.safe_load((ROOT / "deploy" / "k8s" / "values.yaml").read_text())
    deployment = values["dagster-user-deployments"]["deployments"][0]
    assert deployment["dagsterApiGrpcArgs"] == ["-m", module]
    assert values["runLauncher"]["type"] == "K8sRunLauncher"
    registry = load_model_registry(ROOT / "deploy" / "k8s" / "models.yaml")
    spec = registry["llama-3.1-8b-instruct"]
    assert spec.backend == "openai"
    server = [
        d for d in yaml.safe_load_all((ROOT / "deploy" / "k8s" / "vllm.yaml").read_text()) if d["kind"] == "Deployment"
    ][0]
    container = server["spec"]["template"]["spec"]["containers"][0]
    args = container["args"]
    assert args[args.index("--served-model-name") + 1] == spec.source
    service_url = f"http://{server['metadata']['name']}.{server['metadata']['namespace']}.svc:8000/v1"
    assert spec.base_url == service_url
    # the vLLM pod and the generation step ask for GPUs the same way
    assert (
        container["resources"]["limits"]["nvidia.com/gpu"]
        == K8S_GPU_CONFIG["dagster-k8s/config"]["container_config"]["resources"]["limits"]["nvidia.com/gpu"]
    )
    assert (
        server["spec"]["template"]["spec"]["nodeSelector"]
        == K8S_GPU_CONFIG["dagster-k8s/config"]["pod_spec_config"]["node_selector"]
    )


def test_executor_is_chosen_by_environment(monkeypatch):
    from fairness_assets.defs.operations import executors

    monkeypatch.delenv("FAIRNESS_EXECUTOR", raising=False)
    assert executors.executor_for(load_settings()).name == "in_process"  # the default: no process per step
    monkeypatch.setenv("FAIRNESS_EXECUTOR", "multiprocess")
    assert executors.executor_for(load_settings()).name == "multiprocess"
    monkeypatch.setenv("FAIRNESS_EXECUTOR", "in_process")
    assert executors.executor_for(load_settings()).name == "in_process"
    monkeypatch.setenv("FAIRNESS_EXECUTOR", "celery")
    monkeypatch.setenv("FAIRNESS_CELERY_BROKER", "redis://127.0.0.1:6379/3")
    celery = executors.executor_for(load_settings())
    assert celery.name == "celery" and executors.celery_config(load_settings())["broker"] == "redis://127.0.0.1:6379/3"
    monkeypatch.setenv("FAIRNESS_EXECUTOR", "spark")
    with pytest.raises(ValueError, match="FAIRNESS_EXECUTOR='spark'"):
        load_settings()


def test_a_run_of_one_models_templates_loads_the_weights_once(tmp_path):
    """A run of a range of a model's templates (a box of `fairness-audit score`): every partition
    generated, and the model loaded once (not once per partition)."""
    pytest.importorskip("torch", reason="the llm extra (torch, transformers) is not installed")
    from fairness_assets.defs.generation import assets as gen
    from fairness_assets.defs.reference import assets as ref
    from resources.llm.resource import LLMResource
    from resources.settings import GenerationSourceResource, ReferenceDataResource
    from tests.helpers.engine import write_registry
    from tests.helpers.tiny_model import build_tiny_model

    registry = write_registry(tmp_path, build_tiny_model(tmp_path / "tiny"))
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(MODEL_PARTITIONS.name, ["tiny"])
    database = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'r.db'}")
    templates = ["base", "class_only", "gender_only"]  # a contiguous range of the template dimension
    result = dg.materialize(
        [ref.profiles, ref.prompts, gen.generations],
        instance=instance,
        raise_on_error=False,
        tags={
            "dagster/asset_partition_range_start": "tiny|base",
            "dagster/asset_partition_range_end": "tiny|gender_only",
        },
        resources={
            "database": database,
            "results_io": D.SQLResultsIOManager(database=database),
            "reference": ReferenceDataResource(),
            "audit_grid": AuditGridResource(
                design="demo", models=["tiny"], runs=1, templates=templates, model_registry_path=str(registry)
            ),
            "generation_source": GenerationSourceResource(max_new_tokens=4),
            "llm": LLMResource(registry_path=str(registry), device="cpu", batch_size=8),
        },
    )
    assert result.success, [e.message for e in result.all_events if e.is_failure]
    stored = database.read_rows(D.Generation)
    assert sorted(stored["partition_key"].unique()) == [f"tiny|{t}" for t in templates]
    logs = [entry.user_message for entry in instance.all_logs(result.run_id)]
    assert len([m for m in logs if m.startswith("loading model tiny")]) == 1
    assert sum("already stored" in m and "to generate" in m for m in logs) == len(templates)


def test_a_run_over_two_models_holds_one_model_at_a_time(tmp_path):
    """A range that crosses from one model to the next: the first model is released before the
    second loads, each loads once."""
    pytest.importorskip("torch", reason="the llm extra (torch, transformers) is not installed")
    from fairness_assets.defs.generation import assets as gen
    from fairness_assets.defs.reference import assets as ref
    from resources.llm.resource import LLMResource
    from resources.settings import GenerationSourceResource, ReferenceDataResource
    from tests.helpers.engine import write_registry
    from tests.helpers.tiny_model import build_tiny_model

    model_dir = build_tiny_model(tmp_path / "tiny")
    registry = write_registry(tmp_path, model_dir, {"tiny2": {"source": str(model_dir), "backend": "transformers"}})
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(MODEL_PARTITIONS.name, ["tiny", "tiny2"])
    database = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'r.db'}")
    result = dg.materialize(
        [ref.profiles, ref.prompts, gen.generations],
        instance=instance,
        raise_on_error=False,
        # a multi-partition range is a box: models tiny..tiny2 x templates base..base
        tags={"dagster/asset_partition_range_start": "tiny|base", "dagster/asset_partition_range_end": "tiny2|base"},
        resources={
            "database": database,
            "results_io": D.SQLResultsIOManager(database=database),
            "reference": ReferenceDataResource(),
            "audit_grid": AuditGridResource(
                design="demo",
                models=["tiny", "tiny2"],
                runs=1,
                templates=["base"],
                values={"gender": ["female"], "economic_class": ["low"], "nationality": ["Nigeria"]},
                model_registry_path=str(registry),
            ),
            "generation_source": GenerationSourceResource(max_new_tokens=2),
            "llm": LLMResource(registry_path=str(registry), device="cpu", batch_size=8),
        },
    )
    assert result.success, [e.message for e in result.all_events if e.is_failure]
    assert sorted(database.read_rows(D.Generation)["partition_key"].unique()) == ["tiny2|base", "tiny|base"]
    logs = [entry.user_message for entry in instance.all_logs(result.run_id)]
    events = [m.split(" (")[0] for m in logs if m.startswith(("loading model", "released model"))]
    assert events == ["loading model tiny", "released model tiny", "loading model tiny2"]


@pytest.mark.slow
def test_drift_skips_audits_that_are_not_comparable(tmp_path, db):
    """An earlier audit of another grid or decoding (another audit base) is not compared."""
    from fairness_assets.core.scoring import drift as drift_core

    instance = dg.DagsterInstance.ephemeral()
    first = audit(instance, db, DEMO_RESPONSES, tags={AUDIT_ROUND_TAG: "r1"})
    assert first.success
    headline = db.audit_history(DEMO_KEY)[drift_core.HEADLINE_COLUMNS]
    db.archive_audit(
        DEMO_KEY, "study-0123abcd-r9", headline.assign(value=headline["value"] * 0.5), audit_base="study-0123abcd"
    )
    again = audit(instance, db, DEMO_RESPONSES, tags={AUDIT_ROUND_TAG: "r2"})
    drift = db.read_rows(D.DriftRow)
    assert set(drift["previous_audit_id"]) == {first.run_id and drift["previous_audit_id"].iloc[0]}
    assert drift["previous_audit_id"].str.endswith("-r1").all()  # the import audit, not the study one
    assert set(drift["status"]) <= {"unchanged", "undefined"}
    assert again.success


@pytest.mark.slow
def test_alert_delivered_on_one_channel_is_not_sent_again(tmp_path, db):
    instance = dg.DagsterInstance.ephemeral()
    run = audit(instance, db, DEMO_RESPONSES)
    failed = [c.check_name for c in run.get_asset_check_evaluations() if not c.passed]
    from tests.helpers.servers import free_port

    with Receiver() as hook:
        alerts = AlertResource(
            channels="webhook,email",
            webhook_url=hook.url,
            smtp_host="127.0.0.1",
            smtp_port=free_port(),
            email_to="ops@example.org",
            timeout_s=2,
        )
        ctx, result = _failed_checks_alert(instance, alerts)  # e-mail is down, the webhook is up
        assert len(hook.posts) == len(failed)
        with _check_sensor_context(instance, alerts, cursor=ctx.cursor) as ctx2:
            assert isinstance(parse_quality_alert(ctx2), dg.SkipReason)
        assert len(hook.posts) == len(failed)  # not re-sent because the e-mail channel failed

    # no channel at all: the tick fails (the daemon then keeps the old cursor), so the next tick retries
    dead = AlertResource(channels="webhook", webhook_url=f"http://127.0.0.1:{free_port()}/x", timeout_s=2)
    with _check_sensor_context(instance, dead) as ctx3:
        with pytest.raises(Exception, match="not delivered on webhook"):
            parse_quality_alert(ctx3)


@pytest.mark.slow
def test_report_of_a_reaudit_round_follows_its_runs(tmp_path, db):
    from fairness_assets.defs.operations.sensors import reaudit_report

    instance = dg.DagsterInstance.ephemeral()
    with dg.build_sensor_context(instance=instance) as ctx:
        assert isinstance(reaudit_report(ctx), dg.SkipReason)
    run = audit(instance, db, DEMO_RESPONSES, tags={AUDIT_ROUND_TAG: "20261130T0600", "fairness/job": "reaudit"})
    assert run.success
    with dg.build_sensor_context(instance=instance) as ctx:
        requests = reaudit_report(ctx)
    assert [r.run_key for r in requests] == ["reaudit-report-20261130T0600"]


def test_study_audit_keeps_the_configured_model_registry(monkeypatch):
    from fairness_assets.defs.operations.jobs import grid_config

    monkeypatch.setenv("FAIRNESS_MODEL_REGISTRY", "/etc/fairness/models.yaml")
    config = grid_config("study", load_settings())["resources"]["audit_grid"]["config"]
    assert config == {"design": "study", "model_registry_path": {"env": "FAIRNESS_MODEL_REGISTRY"}}


@pytest.mark.slow
def test_half_finished_generation_round_is_not_scored_as_one_audit(tmp_path, db):
    from fairness_assets.defs.understanding import assets as und
    from tests.helpers.pipeline import ASSETS, resources

    instance = dg.DagsterInstance.ephemeral()
    assert audit(instance, db, DEMO_RESPONSES, tags={AUDIT_ROUND_TAG: "r1"}).success
    stored = db.read_rows(D.Generation).drop(columns=["id"])
    db.append_rows(D.Generation, stored.head(3).assign(audit_id="demo-feedbeef-r2"))  # a round that crashed
    result = dg.materialize(
        ASSETS,
        selection=[und.recommendations],
        instance=instance,
        partition_key=DEMO_KEY,
        raise_on_error=False,
        resources=resources(db, DEMO_RESPONSES),
    )
    assert not result.success
    message = " ".join(str(getattr(e.event_specific_data, "error", "")) for e in result.all_events if e.is_failure)
    assert "hold rows of 2 audits" in message and "demo-feedbeef-r2" in message


def test_model_names_with_the_key_separator_are_refused(tmp_path):
    from resources.settings import ConfigError, load_model_registry

    path = tmp_path / "models.yaml"
    path.write_text("models:\n  'org|model':\n    source: org/model\n")
    with pytest.raises(ConfigError, match="contains '\\|'"):
        load_model_registry(path)


def test_generation_gpu_request_can_be_switched_off_for_vllm():
    import subprocess
    import sys

    code = "from fairness_assets.defs.generation.assets import generations as g; print(sorted(g.node_def.tags))"
    env = {**__import__("os").environ, "FAIRNESS_GENERATION_GPU": "0"}
    off = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert off.returncode == 0, off.stderr[-1000:]
    assert "dagster-k8s/config" not in off.stdout


def test_k8s_executor_without_its_extra_names_the_extra(monkeypatch):
    from fairness_assets.defs.operations import executors

    try:
        import dagster_k8s  # noqa: F401

        pytest.skip("dagster-k8s is installed here: the missing-extra message cannot be shown")
    except ImportError:
        pass
    monkeypatch.setenv("FAIRNESS_EXECUTOR", "k8s")
    with pytest.raises(ImportError, match=r"FAIRNESS_EXECUTOR=k8s needs dagster-k8s: pip install -e \"\.\[k8s\]\""):
        executors.executor_for(load_settings())


def test_an_empty_partition_range_fails_instead_of_generating_nothing(tmp_path, db):
    from tests.helpers.pipeline import ASSETS, resources

    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(MODEL_PARTITIONS.name, ["m1", "m2"])
    result = dg.materialize(
        ASSETS,
        selection=[generations],
        instance=instance,
        raise_on_error=False,
        tags={"dagster/asset_partition_range_start": "m1|regional", "dagster/asset_partition_range_end": "m2|academic"},
        resources=resources(db, DEMO_RESPONSES),
    )
    assert not result.success
    message = " ".join(str(getattr(e.event_specific_data, "error", "")) for e in result.all_events if e.is_failure)
    assert "selects no model x template partition" in message


def test_ui_tables_escape_the_partition_key_separator():
    import pandas as pd

    from fairness_assets.defs.metadata import table_md

    text = table_md(pd.DataFrame({"partition_key": ["m1|base"], "rows": [3]})).value
    assert "m1\\|base" in text and text.splitlines()[2].count(" | ") == 1  # two columns, not three
