"""The continuous-batching engine (resources/llm/engine.py, issue 24): finished rows leave the
batch, waiting prompts take their place, and every sample is the one it would be alone."""

import random

import pytest

torch = pytest.importorskip("torch", reason="the llm extra (torch, transformers) is not installed")

from resources.llm import engine as E  # noqa: E402
from resources.llm.base import SamplingParams  # noqa: E402
from resources.llm.sampling import CounterSampler  # noqa: E402
from resources.llm.transformers_backend import TransformersClient  # noqa: E402
from tests.helpers.tiny_model import build_tiny_model  # noqa: E402


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")
    tok = AutoTokenizer.from_pretrained(folder)
    return folder, AutoModelForCausalLM.from_pretrained(folder).eval(), tok


def _prompts(tok, n=24, seed=0):
    """Token-id prompts of various lengths (the tiny tokenizer knows too few words for text)."""
    rng = random.Random(seed)
    return [[2] + [rng.randrange(4, len(tok)) for _ in range(2 + (i * 7) % 13)] for i in range(n)]


def _alone(model, tok, ids, seed, max_new, temperature=0.8, top_p=0.9):
    """The reference: the sample generated alone by model.generate with the project's sampler."""
    enc = torch.tensor([ids])
    kwargs = dict(
        max_new_tokens=max_new, do_sample=False, pad_token_id=tok.pad_token_id, temperature=None, top_p=None, top_k=None
    )
    if temperature > 0:
        from transformers import LogitsProcessorList

        kwargs["logits_processor"] = LogitsProcessorList([CounterSampler([seed], temperature, top_p, enc.shape[1])])
    with torch.inference_mode():
        out = model.generate(input_ids=enc, attention_mask=torch.ones_like(enc), **kwargs)[0, enc.shape[1] :].tolist()
    eos = E.eos_ids(model, tok)
    cut = next((k for k, t in enumerate(out) if t in eos), len(out))
    return out[:cut]


@pytest.mark.parametrize("batch, refill_at", [(1, None), (4, 1), (6, None), (32, None)])
def test_every_sample_equals_the_sample_generated_alone(tiny, batch, refill_at):
    _, model, tok = tiny
    prompts, seeds = _prompts(tok), [100 + i for i in range(24)]
    out, stats = E.generate(
        model, tok, prompts, seeds, max_new_tokens=30, temperature=0.8, top_p=0.9, batch_size=batch, refill_at=refill_at
    )
    assert [f.index for f in out] == list(range(24))
    for f, p, s in zip(out, prompts, seeds, strict=False):
        assert f.tokens == _alone(model, tok, p, s, 30), (batch, f.index)
        assert f.prompt_tokens == len(p) and f.stop in ("eos", "length")
        assert (f.stop == "length") == (len(f.tokens) == 30)
    lengths = {len(f.tokens) for f in out}
    assert len(lengths) > 3, "the answers have various lengths: rows leave at different steps"
    if 1 < batch < 24:
        assert stats.prefills > 24 // batch, "finished rows were replaced by waiting prompts"
    assert stats.peak_rows <= batch
    # every computed row-step produced a token of a sample (no row is computed after its EOS)
    assert stats.useful_tokens == stats.row_steps + stats.prefill_rows


def test_greedy_decoding_too(tiny):
    _, model, tok = tiny
    prompts = _prompts(tok, 10, seed=3)
    out, _ = E.generate(
        model, tok, prompts, [0] * 10, max_new_tokens=12, temperature=0.0, top_p=1.0, do_sample=False, batch_size=3
    )
    assert [f.tokens for f in out] == [_alone(model, tok, p, 0, 12, temperature=0.0) for p in prompts]


def test_the_cache_keeps_only_the_columns_rows_attend_to(tiny):
    """Compaction trims left padding no remaining row needs: the cache never grows past the
    longest prompt in the batch plus the tokens generated since."""
    _, model, tok = tiny
    prompts = _prompts(tok, 24)
    _, stats = E.generate(
        model, tok, prompts, list(range(24)), max_new_tokens=30, temperature=0.8, top_p=0.9, batch_size=4
    )
    assert max(stats.widths) <= max(len(p) for p in prompts) + 30
    assert any(b < a for a, b in zip(stats.widths, stats.widths[1:], strict=False)), "the cache shrank when rows left"


def test_bad_requests_are_refused_by_name(tiny):
    _, model, tok = tiny
    engine = E.ContinuousEngine(model, pad_token_id=tok.pad_token_id, eos_token_ids={3}, batch_size=2)
    with pytest.raises(ValueError, match="prompt"):
        list(engine.run([[2], []], [1, 2], max_new_tokens=4))
    with pytest.raises(ValueError, match="2 prompts but 1 seeds"):
        list(engine.run([[2], [2]], [1], max_new_tokens=4))
    with pytest.raises(ValueError, match="batch_size"):
        E.ContinuousEngine(model, pad_token_id=0, eos_token_ids=set(), batch_size=0)


def test_the_client_uses_the_engine_and_matches_static_batches(tiny):
    folder, _, _ = tiny
    params = SamplingParams(temperature=0.9, top_p=0.95, max_new_tokens=16)
    prompts, seeds = [f"p{i}" for i in range(9)], [7 * i + 1 for i in range(9)]
    engine = TransformersClient.load(folder, device="cpu", batch_size=4)
    static = TransformersClient.load(folder, device="cpu", batch_size=4, continuous_batching=False)
    a, b = engine.generate_samples(prompts, seeds, params), static.generate_samples(prompts, seeds, params)
    assert engine.continuous_batching and engine.streams_requests and not static.streams_requests
    assert [s.text for s in a] == [s.text for s in b]
    # static batches count the tokens that are neither pad nor EOS; the engine counts every token
    # before EOS (the tiny model's pad token, <|endoftext|>, can be drawn mid-answer)
    assert all(x.output_tokens >= y.output_tokens for x, y in zip(a, b, strict=False))
    assert any(x.output_tokens == y.output_tokens for x, y in zip(a, b, strict=False))
    streamed = [pair for chunk in engine.stream_samples(prompts, seeds, params) for pair in chunk]
    assert sorted(i for i, _ in streamed) == list(range(9))  # each sample once, as it finishes
    assert {i: s.text for i, s in streamed} == {i: s.text for i, s in enumerate(a)}


def test_a_model_the_engine_cannot_run_falls_back_to_static_batches_and_says_why(tiny):
    folder, _, _ = tiny
    logs = []
    client = TransformersClient.load(folder, device="cpu", batch_size=2, log=logs.append)
    client.model.generation_config.repetition_penalty = 1.1  # a logits processor the engine does not apply
    samples = client.generate_samples(["a", "b", "c"], [1, 2, 3], SamplingParams(max_new_tokens=4))
    assert len(samples) == 3 and not client.continuous_batching
    assert any("repetition_penalty" in m and "static batches" in m for m in logs), logs


def test_out_of_memory_halves_the_batch_and_finishes_only_the_unfinished(tiny, monkeypatch):
    folder, _, _ = tiny
    params = SamplingParams(temperature=0.9, top_p=0.95, max_new_tokens=10)
    prompts, seeds = [f"p{i}" for i in range(8)], list(range(8))
    reference = [
        s.text
        for s in TransformersClient.load(folder, device="cpu", batch_size=8).generate_samples(prompts, seeds, params)
    ]
    real = E.ContinuousEngine.run
    calls = []

    def failing(self, *args, **kwargs):
        calls.append(self.batch_size)
        for k, f in enumerate(real(self, *args, **kwargs)):
            if len(calls) == 1 and k == 3:
                raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
            yield f

    monkeypatch.setattr(E.ContinuousEngine, "run", failing)
    logs = []
    client = TransformersClient.load(folder, device="cpu", batch_size=8, log=logs.append)
    streamed = [pair for chunk in client.stream_samples(prompts, seeds, params) for pair in chunk]
    assert calls == [8, 4] and client.batch_size == 4
    assert sorted(i for i, _ in streamed) == list(range(8))  # none twice, none lost
    assert [dict(streamed)[i].text for i in range(8)] == reference
    assert any("5 sample(s) continue with batch 4" in m for m in logs), logs


@pytest.mark.slow
def test_with_the_built_in_model_a_refilled_batch_gives_the_samples_generated_alone():
    """The built-in model (real weights): 5 prompts with token budgets of various sizes through a batch of 2,
    so rows leave at different steps and waiting prompts are merged into a running batch; each sample
    against the same sample generated alone (model.generate, a batch of one, the project's sampler). The
    property on every batch size and refill point is the tiny model's (above); this one keeps the real
    weights' numerics, at the smallest size that still refills (it took 7.7 minutes of the suite at 8 prompts
    and budgets up to 40 tokens)."""
    from fairness_assets.core.reference import profiles, prompts
    from resources.llm.resource import LLMResource
    from resources.settings import shipped_design

    demo = shipped_design("demo")
    grid = profiles.full_set(demo)
    texts = prompts.render_prompts([demo.template("base")], grid.head(5))["prompt"].tolist()
    seeds = [11 * i + 5 for i in range(5)]
    budgets = [16, 28, 8, 20, 12]
    client = LLMResource(device="cpu", batch_size=2).client("qwen2.5-0.5b-demo")
    assert client.continuous_batching, "the built-in model runs on the engine"
    ids = [client.tokenizer(client.render(t), add_special_tokens=False).input_ids for t in texts]
    out, stats = E.generate(
        client.model, client.tokenizer, ids, seeds, max_new_tokens=budgets, temperature=0.75, top_p=0.95, batch_size=2
    )
    assert stats.prefills >= 3 and stats.peak_rows == 2
    same = sum(
        f.tokens == _alone(client.model, client.tokenizer, p, s, b, temperature=0.75, top_p=0.95)
        for f, p, s, b in zip(out, ids, seeds, budgets, strict=False)
    )
    # identical up to the floating-point noise of padded batches (docs/generation.md): a near-tied token may differ
    assert same >= len(texts) - 1, same
