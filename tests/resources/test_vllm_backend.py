"""The vLLM backend honours the registry's ``system_role`` (issue 19, item 8): the system text goes to
the chat template's system role when the registry says ``system_role: true`` and is folded into the
first user turn only when it says ``false``. vLLM itself needs a GPU machine, so a fake ``vllm``
module (injected into ``sys.modules``) records the conversations the backend hands to ``LLM.chat``."""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass

import pytest

from resources.llm.base import ModelUnavailableError, SamplingParams
from resources.llm.vllm_backend import VLLMClient

SYSTEM = "You are an academic advisor."
FEW_SHOT = [
    {"role": "system", "content": SYSTEM},
    {"role": "user", "content": "MBA"},
    {"role": "assistant", "content": '["Social Sciences & Management"]'},
    {"role": "user", "content": "MSc Physics"},
]


@dataclass
class _Out:
    text: str
    token_ids: list


@dataclass
class _RequestOutput:
    prompt_token_ids: list
    outputs: list


class FakeVLLM:
    """What the backend uses of vllm: ``LLM(model=..., revision=..., **kw)``, ``get_tokenizer()`` (its
    ``apply_chat_template``), ``chat(conversations, sampling_params, use_tqdm=...)`` and ``SamplingParams``.
    ``chat`` records each call; with ``reject_system`` the chat template raises on a system role, like
    gemma's."""

    def __init__(self, reject_system: bool = False):
        self.calls: list[list[list[dict]]] = []
        self.engine_kwargs: dict = {}
        self.reject_system = reject_system
        fake = self

        class LLM:
            def __init__(self, model, revision=None, **kwargs):
                fake.engine_kwargs = {"model": model, "revision": revision, **kwargs}

            def get_tokenizer(self):
                return Tokenizer()

            def chat(self, messages, sampling_params, use_tqdm=True):
                fake.calls.append(messages)
                for conversation in messages:
                    Tokenizer().apply_chat_template(conversation, tokenize=False)
                return [_RequestOutput([0] * 5, [_Out(f"answer {i}", [1, 2, 3])]) for i, _ in enumerate(messages)]

        class Tokenizer:
            def apply_chat_template(self, conversation, tokenize=True, add_generation_prompt=False):
                if fake.reject_system and any(m["role"] == "system" for m in conversation):
                    raise ValueError("System role not supported")  # jinja2's TemplateError in the real thing
                return "".join(f"<{m['role']}>{m['content']}" for m in conversation)

        class VSamplingParams:
            def __init__(self, **kwargs):
                self.kwargs = kwargs

        self.module = types.ModuleType("vllm")
        self.module.LLM = LLM
        self.module.SamplingParams = VSamplingParams


@pytest.fixture
def fake_vllm(monkeypatch):
    fake = FakeVLLM()
    monkeypatch.setitem(sys.modules, "vllm", fake.module)
    return fake


PARAMS = SamplingParams(max_new_tokens=20)


def test_system_role_true_uses_the_templates_system_role(fake_vllm):
    client = VLLMClient("org/model", name="m", system_prompt=SYSTEM, system_role=True)
    out = client.generate_samples(["Which university?"], [7], PARAMS)
    assert fake_vllm.calls == [
        [[{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Which university?"}]]
    ]
    assert out[0].text == "answer 0" and out[0].prompt_tokens == 5 and out[0].output_tokens == 3
    assert "system_role" not in fake_vllm.engine_kwargs  # not handed to the engine as an engine argument


def test_system_role_false_folds_the_system_text_into_the_user_turn(fake_vllm):
    client = VLLMClient("org/model", name="m", system_prompt=SYSTEM, system_role=False)
    client.generate_samples(["Which university?"], [7], PARAMS)
    assert fake_vllm.calls == [[[{"role": "user", "content": f"{SYSTEM}\n\nWhich university?"}]]]


@pytest.mark.parametrize("system_role", [True, False])
def test_chat_prompts_keep_or_fold_their_system_message(fake_vllm, system_role):
    """The LLM tagger's few-shot chats (a list of messages, system first) reach the engine as chats."""
    client = VLLMClient("org/model", name="m", system_role=system_role)
    assert client.generate_texts([FEW_SHOT], max_new_tokens=8) == ["answer 0"]
    sent = fake_vllm.calls[0][0]
    if system_role:
        assert sent == FEW_SHOT
    else:
        assert sent[0] == {"role": "user", "content": f"{SYSTEM}\n\nMBA"} and sent[1:] == FEW_SHOT[2:]
        assert all(m["role"] != "system" for m in sent)


def test_a_template_that_rejects_the_system_role_is_folded_and_logged(monkeypatch):
    fake = FakeVLLM(reject_system=True)
    monkeypatch.setitem(sys.modules, "vllm", fake.module)
    logs: list[str] = []
    client = VLLMClient("google/gemma-7b-it", name="gemma", system_prompt=SYSTEM, system_role=True, log=logs.append)
    out = client.generate_samples(["a", "b"], [1, 2], PARAMS)
    assert [s.text for s in out] == ["answer 0", "answer 1"]
    assert len(fake.calls) == 1 and fake.calls[-1] == [
        [{"role": "user", "content": f"{SYSTEM}\n\na"}],
        [{"role": "user", "content": f"{SYSTEM}\n\nb"}],
    ]
    assert len(logs) == 1 and "gemma" in logs[0] and "system_role: false" in logs[0]
    client.generate_samples(["c"], [3], PARAMS)  # checked once: folded from now on, said once
    assert fake.calls[-1] == [[{"role": "user", "content": f"{SYSTEM}\n\nc"}]] and len(logs) == 1


def test_without_vllm_the_error_names_the_model(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm raises ImportError
    with pytest.raises(ModelUnavailableError, match="my-model: backend vllm requested but vllm is not installed"):
        VLLMClient("org/model", name="my-model")


def test_the_llm_resource_passes_the_registrys_system_role_to_the_vllm_client(fake_vllm, tmp_path):
    """The registry's ``system_role`` reaches the client that LLMResource builds (an explicit
    ``false``, as for mistral, folds; ``true`` keeps the system role)."""
    from resources.llm.resource import LLMResource

    registry = tmp_path / "models.yaml"
    registry.write_text(
        "models:\n"
        "  keeps:\n    source: org/keeps\n    backend: vllm\n    system_role: true\n"
        "  folds:\n    source: org/folds\n    backend: vllm\n    system_role: false\n"
    )
    llm = LLMResource(registry_path=str(registry))
    assert llm.client("keeps").system_role is True
    assert llm.client("folds").system_role is False
