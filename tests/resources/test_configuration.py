"""One configuration: the settings model, build_resources(), the generated docs/configuration.md,
and R_max reaching every table that uses it."""

from __future__ import annotations

import re
from pathlib import Path

import dagster as dg
import pytest

from resources import database as D
from resources.settings import ConfigError, FairnessSettings, field_specs, load_settings
from tests.helpers.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
REGENERATE = ".venv/bin/python docs/build_configuration.py"


@pytest.fixture
def clean_env(monkeypatch):
    """No FAIRNESS_* variable of the model set (the test sets what it needs)."""
    for spec in field_specs().values():
        monkeypatch.delenv(spec.env, raising=False)
    return monkeypatch


def _generator():
    module = load_script("docs/build_configuration.py", "build_configuration")
    return module


def test_configuration_doc_is_current():
    committed = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert committed == _generator().render(), f"docs/configuration.md is stale: run `{REGENERATE}` and commit it"


def test_doc_names_every_variable_with_default_and_read_time():
    doc = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    for spec in field_specs().values():
        row = next((line for line in doc.splitlines() if line.startswith(f"| `{spec.env}` |")), None)
        assert row is not None, spec.env
        assert spec.used_by and spec.description
    assert "code location load" in doc and "run time" in doc


def test_every_fairness_variable_in_the_code_is_in_the_model():
    """A FAIRNESS_* name read anywhere in the code location, resources or deploy files is defined
    in the settings model (names ending in '_' are prefixes in prose, FAIRNESS_TEST_* are the tests')."""
    known = {s.env for s in field_specs().values()}
    found = set()
    for folder in ("fairness_assets", "resources", "deploy", "expectations"):
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and path.suffix in (".py", ".yaml", ".yml", ".sh", ".toml", ".cfg", ""):
                found |= set(
                    re.findall(r"FAIRNESS_[A-Z0-9_]*[A-Z0-9]\b", path.read_text(encoding="utf-8", errors="replace"))
                )
    unknown = sorted(n for n in found - known if not n.startswith("FAIRNESS_TEST_"))
    assert not unknown, f"variables read but not in resources/settings/model.py: {unknown}"


def test_every_target_is_a_field_of_its_resource_and_defaults_agree():
    from fairness_assets.definitions import RESOURCE_CLASSES

    for spec in field_specs().values():
        for key, attr in spec.targets:
            fields = RESOURCE_CLASSES[key].model_fields
            assert attr in fields, f"{spec.env} sets {key}.{attr}, which {RESOURCE_CLASSES[key].__name__} lacks"
            # a resource built without arguments (tests, the command line) agrees with the variable's default
            assert fields[attr].default == spec.default, (spec.env, key, attr)


def test_one_definition_of_the_method_defaults():
    from fairness_assets.core.reference import corpus
    from fairness_assets.core.scoring import metrics
    from resources.settings import ReferenceDataResource, ScoringResource

    assert metrics.ScoringParams().r_max == corpus.RepParams().r_max == load_settings().rep_r_max
    assert metrics.ScoringParams().lambdas == metrics.DEFAULT_LAMBDAS
    assert ScoringResource().params({}).as_dict() == metrics.ScoringParams().as_dict()
    assert "r_max" not in ScoringResource.model_fields  # the scale lives in ReferenceDataResource only
    assert ReferenceDataResource().rep_params() == corpus.RepParams()


def test_build_resources_takes_the_settings_read_at_call_time(clean_env, tmp_path):
    from fairness_assets.definitions import build_resources

    clean_env.setenv("FAIRNESS_QS_CORPUS", str(tmp_path / "a.csv"))
    clean_env.setenv("FAIRNESS_REP_R_MAX", "600")
    clean_env.setenv("FAIRNESS_LAMBDA_LOW", "0.002")
    first = build_resources(load_settings())
    with dg.build_resources({"reference": first["reference"]}) as built:  # EnvVars resolved as in a run
        assert built.reference.corpus_path == str(tmp_path / "a.csv")
    assert first["reference"].rep_r_max == 600 and first["scoring"].lambda_low == 0.002

    clean_env.setenv("FAIRNESS_QS_CORPUS", str(tmp_path / "b.csv"))
    clean_env.setenv("FAIRNESS_REP_R_MAX", "800")
    clean_env.delenv("FAIRNESS_LAMBDA_LOW")
    second = build_resources(load_settings())
    with dg.build_resources({"reference": second["reference"]}) as built:
        assert built.reference.corpus_path == str(tmp_path / "b.csv")
    assert second["reference"].rep_r_max == 800 and second["scoring"].lambda_low == field_specs()["lambda_low"].default


def test_secrets_reach_the_resources_as_env_vars_only(clean_env):
    from fairness_assets.definitions import build_resources

    clean_env.setenv("FAIRNESS_DATABASE_URL", "postgresql://audit:hunter2@db/audit")
    clean_env.setenv("FAIRNESS_LLM_API_KEY", "sk-secret")
    clean_env.setenv("FAIRNESS_SMTP_PASSWORD", "mailpass")
    built = build_resources(load_settings())
    config = repr({k: getattr(r, "_get_non_default_public_field_values", dict)() for k, r in built.items()})
    for secret in ("hunter2", "sk-secret", "mailpass"):
        assert secret not in config
    assert "hunter2" not in repr(load_settings()) and "sk-secret" not in repr(load_settings())
    assert [s.env for s in field_specs().values() if s.secret] == [
        "FAIRNESS_DATABASE_URL",
        "FAIRNESS_LLM_API_KEY",
        "FAIRNESS_ALERT_WEBHOOK_URL",
        "FAIRNESS_SMTP_PASSWORD",
    ]


def test_bad_values_name_the_variable(clean_env):
    clean_env.setenv("FAIRNESS_REP_R_MAX", "twelve hundred")
    with pytest.raises(ConfigError, match="FAIRNESS_REP_R_MAX='twelve hundred'"):
        load_settings()
    clean_env.setenv("FAIRNESS_REP_R_MAX", "0.5")
    with pytest.raises(ConfigError, match=r"FAIRNESS_REP_R_MAX \(0.5\) must be greater than FAIRNESS_REP_R_MIN"):
        load_settings()
    clean_env.delenv("FAIRNESS_REP_R_MAX")
    clean_env.setenv("FAIRNESS_SMTP_PORT", "twenty-five")
    with pytest.raises(ConfigError, match="FAIRNESS_SMTP_PORT='twenty-five'"):
        load_settings()
    clean_env.delenv("FAIRNESS_SMTP_PORT")
    clean_env.setenv("FAIRNESS_GENERATION_GPU", "0")
    clean_env.setenv("FAIRNESS_SMTP_STARTTLS", "yes")
    clean_env.setenv("FAIRNESS_EXECUTOR", " Multiprocess ")
    s = load_settings()
    assert s.generation_gpu is False and s.smtp_starttls is True and s.executor == "multiprocess"
    assert isinstance(s, FairnessSettings)


def test_settings_built_in_process_take_the_place_of_the_environment_without_changing_it(clean_env, tmp_path):
    """load_settings(**values): a command line's arguments over the environment, validated and named
    like variables; resource_config(env_vars=False): the values themselves, no EnvVar (a run reads
    nothing from the environment), secrets included."""
    import os

    clean_env.setenv("FAIRNESS_QS_CORPUS", str(tmp_path / "env.csv"))
    clean_env.setenv("FAIRNESS_DESIGN", "study")
    before = {k: v for k, v in os.environ.items() if k.startswith("FAIRNESS_")}
    mine = load_settings(qs_corpus=str(tmp_path / "mine.csv"), database_url="postgresql://u:pw@db/audit", max_items=5)
    assert {k: v for k, v in os.environ.items() if k.startswith("FAIRNESS_")} == before
    assert mine.qs_corpus == str(tmp_path / "mine.csv") and mine.design == "study" and mine.max_items == 5
    assert load_settings().qs_corpus == str(tmp_path / "env.csv")  # the environment's settings are untouched
    assert mine.resource_config("reference", env_vars=False)["corpus_path"] == str(tmp_path / "mine.csv")
    assert mine.resource_config("database", env_vars=False) == {"url": "postgresql://u:pw@db/audit"}
    assert mine.resource_config("audit_grid", env_vars=False)["design"] == "study"
    assert isinstance(mine.resource_config("reference")["corpus_path"], dg.EnvVar)  # the code location's way
    with pytest.raises(ConfigError, match="FAIRNESS_MAX_ITEMS=0"):
        load_settings(max_items=0)
    with pytest.raises(ConfigError, match=r"FAIRNESS_DATABASE_URL='\*\*\*'"):
        load_settings(database_url=12)
    with pytest.raises(ConfigError, match=r"unknown setting\(s\) \['corpus'\]"):
        load_settings(corpus="x.csv")


def _score(tmp_path, name: str):
    """Reference data, generations (the demo responses), recommendations and scores of one
    partition, with every resource built by build_resources() from the environment's settings."""
    from fairness_assets.definitions import build_resources
    from fairness_assets.defs.partitions import MODEL_PARTITIONS
    from tests.helpers.pipeline import ASSETS, DEMO_KEY, DEMO_MODEL

    url = f"sqlite:///{tmp_path / name}.db"
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(MODEL_PARTITIONS.name, [DEMO_MODEL])
    with pytest.MonkeyPatch.context() as env:
        env.setenv("FAIRNESS_DATABASE_URL", url)
        result = dg.materialize(
            ASSETS,
            selection=dg.AssetSelection.assets("drs_scores", "grs_by_country", "analysis_tables").upstream(),
            instance=instance,
            partition_key=DEMO_KEY,
            resources=build_resources(load_settings()),
        )
    assert result.success
    db = D.ResultsDatabase(url=url)
    key = [DEMO_KEY]
    return {
        "corpus": db.read_rows(D.CorpusUniversity).sort_values("university_id").reset_index(drop=True),
        "items": db.read_rows(D.DRSItem, key).sort_values(["response_id", "item_index"]).reset_index(drop=True),
        "grs": db.read_rows(D.GRSCountry, key).sort_values("iso3").reset_index(drop=True),
        "metrics": db.read_rows(D.MetricRow, key),
    }


@pytest.mark.slow
def test_changing_r_max_changes_every_table_that_uses_it(clean_env, tmp_path):
    from tests.helpers.pipeline import DEMO_RESPONSES

    clean_env.setenv("FAIRNESS_HOME", str(tmp_path / "home"))
    clean_env.setenv("FAIRNESS_RESPONSES", str(DEMO_RESPONSES))
    default = _score(tmp_path, "default")
    clean_env.setenv("FAIRNESS_REP_R_MAX", "150")
    changed = _score(tmp_path, "rmax150")

    # qs_corpus: rep on the new scale, 0 beyond R_max
    rank = default["corpus"]["rank"].astype(float)
    assert (default["corpus"]["rep"] - ((1200 - rank) / 1199).where(rank <= 1200, 0.0)).abs().max() < 1e-9
    assert (changed["corpus"]["rep"] - ((150 - rank) / 149).where(rank <= 150, 0.0)).abs().max() < 1e-9
    assert (rank > 150).any()
    # drs_scores: Rep and DRS of the items follow
    item_rank = changed["items"]["rank"].astype(float)
    expected = ((150 - item_rank) / 149).where(item_rank <= 150, 0.0).fillna(0.0)
    assert (changed["items"]["rep"].fillna(0.0) - expected).abs().max() < 1e-9
    assert not changed["items"]["drs"].round(12).equals(default["items"]["drs"].round(12))
    assert set(changed["items"]["params_hash"]) != set(default["items"]["params_hash"])

    # the analysis tables (mean DRS and Rep by group) follow
    def mean_drs(t):
        m = t["metrics"]
        return m[m["table_name"] == "drs_summary"] if "table_name" in m.columns else m

    assert not mean_drs(changed).equals(mean_drs(default))
    # GRS uses the within-country rank scale (METHOD.md §6), not R_max: same values, new parameters recorded
    cols = ["iso3", "recs", "avail", "repr", "scaled_repr", "rep_covg", "grs"]
    assert changed["grs"][cols].equals(default["grs"][cols])
    assert set(changed["grs"]["params_hash"]) != set(default["grs"]["params_hash"])
