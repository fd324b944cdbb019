"""The subject tagger resource: rules, overrides, cache, and the LLM few-shot path."""

import pytest

from fairness_assets.core.understanding import tags as T
from resources import database as D
from resources.tagger import SubjectTaggerResource, llm_tags


class ScriptedClient:
    """Answers the few-shot prompt as a well-behaved LLM would, for known programs."""

    name = "scripted"

    def __init__(self, answers):
        self.answers = answers
        self.prompts = []

    def generate_texts(self, prompts, *, max_new_tokens=32, temperature=0.0, top_p=1.0, seed=None):
        self.prompts += prompts
        return [self.answers.get(p[-1]["content"], "no idea") for p in prompts]


def test_rules_tagger_with_overrides_and_cache(tmp_path):
    db = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'r.db'}")
    tagger = SubjectTaggerResource()
    first = tagger.tag(
        ["MSc Computer Science", "MSc in Computer Science", "Food Technology", None, "Quantum Widgets"], db
    )
    assert dict(zip(first["program_norm"], first["source"], strict=False)) == {
        "computer science": "rules-3",
        "food technology": "override",
        "quantum widgets": "rules-3",
    }
    again = tagger.tag(["Master of Science (Computer Science)"], db)
    assert list(again["source"]) == ["cache"] and list(again["tags"]) == [(T.ENG,)]


def test_llm_tagger_parses_answers_and_falls_back(tmp_path):
    client = ScriptedClient(
        {
            "robotics": '["Engineering & Technology"]',
            "global health policy": '["Life Sciences & Medicine", "Social Sciences & Management"]',
        }
    )
    db = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'r.db'}")
    tagger = SubjectTaggerResource(method="llm", llm_model="scripted")
    out = tagger.tag(["MSc Robotics", "Global Health Policy", "MA History"], db, client=client)
    got = {n: (t, s) for n, t, s in out.itertuples(index=False)}
    assert got["robotics"] == ((T.ENG,), "llm")
    assert got["global health policy"] == ((T.LIFE, T.SOC), "llm")
    assert got["history"] == ((T.ARTS,), "llm-fallback-rules")  # the client had no answer
    assert all(p[0]["role"] == "system" and "QS broad subject areas" in p[0]["content"] for p in client.prompts)
    # LLM answers are cached under the tagger's own name; fallbacks apart, and marked as such when read
    assert db.read_tag_cache("llm-fewshot-1:scripted", ["robotics", "history"]) == {"robotics": (T.ENG,)}
    assert db.read_tag_cache("llm-fewshot-1:scripted+fallback-rules", ["robotics", "history"]) == {"history": (T.ARTS,)}
    n_prompts = len(client.prompts)
    again = tagger.tag(["MSc Robotics", "MA History"], db, client=lambda: pytest.fail("loaded a model"))
    assert dict(zip(again["program_norm"], again["source"], strict=False)) == {
        "robotics": "cache:llm",
        "history": "cache:llm-fallback-rules",
    }
    assert len(client.prompts) == n_prompts


class CountingLLM:
    """Stands in for LLMResource: counts loads and releases."""

    def __init__(self, client):
        self._client, self.loads, self.releases = client, [], []

    def client(self, name, log=None):
        self.loads.append(name)
        return self._client

    def release(self, name, log=None):
        self.releases.append(name)


def test_session_loads_the_model_once_on_demand_and_releases_it(tmp_path):
    db = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'r.db'}")
    llm = CountingLLM(ScriptedClient({"robotics": '["Engineering & Technology"]'}))
    tagger = SubjectTaggerResource(method="llm", overrides_path="")
    assert tagger.tagger_name() == "llm-fewshot-1:qwen2.5-0.5b-demo"  # the built-in model by default
    with tagger.session(db, llm) as tag_fn:
        tag_fn(["MSc Robotics"])
        tag_fn(["MA History", "MSc Robotics"])
        assert llm.loads == ["qwen2.5-0.5b-demo"] and llm.releases == []
    assert llm.releases == ["qwen2.5-0.5b-demo"]
    with tagger.session(db, llm) as tag_fn:  # everything cached: no load, nothing to release
        assert set(tag_fn(["MSc Robotics", "MA History"])["source"]) == {"cache:llm", "cache:llm-fallback-rules"}
    assert len(llm.loads) == 1 and len(llm.releases) == 1
    with pytest.raises(RuntimeError), tagger.session(db, llm) as tag_fn:  # released on error too
        tag_fn(["MSc Physics"])
        raise RuntimeError("boom")
    assert len(llm.loads) == 2 and len(llm.releases) == 2
    with SubjectTaggerResource().session(db, None) as tag_fn:  # rules: no LLM at all
        assert list(tag_fn(["MSc Physics"])["source"]) == ["rules-3"]


def test_llm_method_needs_a_client():
    with pytest.raises(ValueError, match="needs an LLM client"):
        SubjectTaggerResource(method="llm", llm_model="x").tag(["MSc Robotics"])
    with pytest.raises(ValueError, match="unknown method"):
        SubjectTaggerResource(method="magic").tagger_name()


def test_llm_tagger_through_a_real_transformers_model(tmp_path):
    """A tiny random Qwen2 through the transformers client: real tokenizer, chat template,
    batching and decoding; its text is noise, so every tag falls back to the rules."""
    pytest.importorskip("torch", reason="the llm extra (torch, transformers) is not installed")
    from resources.llm.transformers_backend import TransformersClient
    from tests.helpers.tiny_model import build_tiny_model

    client = TransformersClient.load(build_tiny_model(tmp_path / "tiny"), device="cpu", batch_size=2)
    answers = client.generate_texts(
        [T.few_shot_prompt("MSc Robotics"), T.few_shot_prompt("MBA"), "hi"], max_new_tokens=5
    )
    assert len(answers) == 3 and all(isinstance(a, str) for a in answers)
    results = llm_tags(["robotics", "mba"], client, batch_size=2)
    for (tags, source), expected in zip(results, [(T.ENG,), (T.SOC,)], strict=False):
        assert source in ("llm", "llm-fallback-rules")
        if source == "llm-fallback-rules":
            assert tags == expected


@pytest.mark.slow
def test_llm_tagger_with_the_built_in_model(tmp_path):
    """The few-shot tagger with the real built-in CPU model (Qwen2.5-Coder-0.5B-Instruct from PyPI)."""
    pytest.importorskip("torch", reason="the llm extra (torch, transformers) is not installed")
    from resources.llm.resource import LLMResource

    client = LLMResource(device="cpu", batch_size=8).client("qwen2.5-0.5b-demo")
    db = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'r.db'}")
    tagger = SubjectTaggerResource(method="llm", llm_model="qwen2.5-0.5b-demo", overrides_path="")
    programs = [
        "MSc Computer Science",
        "Master of Public Health",
        "MA History",
        "MSc Physics",
        "MEng Mechanical Engineering",
    ]
    out = tagger.tag(programs, db, client=client).set_index("program_norm")
    assert (out["source"] == "llm").sum() >= 4  # the model answered with area names
    agree = sum(tuple(out.loc[T.normalize_program(p), "tags"]) == T.tag_rules(p) for p in programs)
    assert agree >= 4, out
    assert all(set(t) <= set(T.QS_AREAS) and t for t in out["tags"])
