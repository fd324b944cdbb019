"""The batch-independent, vectorised sampler (resources/llm/sampling.py): exact nucleus
distribution, independence from batch companions and from the early exit, counter-based noise."""

import pytest

torch = pytest.importorskip("torch", reason="the llm extra (torch, transformers) is not installed")

from resources.llm.sampling import CounterSampler, counter_uniform, rounds_for, sample_top_p  # noqa: E402


def _nucleus(logits, temperature, top_p):
    """The reference: sort, keep a token while the mass before it is below top_p, renormalise."""
    probs = torch.softmax(logits.double() / temperature, -1)
    v, i = torch.sort(probs, descending=True)
    keep = (torch.cumsum(v, 0) - v) < top_p
    target = torch.zeros_like(probs)
    target[i[keep]] = v[keep]
    return target / target.sum()


@pytest.mark.parametrize("top_p,scale", [(0.95, 0.8), (0.5, 0.8), (0.9, 3.0), (1.0, 1.0)])
def test_frequencies_follow_the_exact_nucleus(top_p, scale):
    torch.manual_seed(1)
    logits = torch.randn(40) * scale
    target = _nucleus(logits, 0.75, top_p)
    n = 100_000
    tokens = sample_top_p(logits.repeat(n, 1), torch.arange(n), 3, 0.75, top_p)
    freq = torch.bincount(tokens, minlength=40).double() / n
    assert freq[target == 0].sum().item() == 0.0  # nothing outside the nucleus
    se = torch.sqrt(target * (1 - target) / n)
    assert ((freq - target).abs() <= 5 * se + 1e-9).all(), (freq - target).abs().max()


def test_a_row_does_not_depend_on_its_batch_companions_or_the_early_exit():
    torch.manual_seed(0)
    rows = torch.randn(6, 300)
    seeds = torch.tensor([11, 12, 13, 14, 15, 16])
    together = sample_top_p(rows, seeds, 5, 0.8, 0.95)
    fixed_rounds = sample_top_p(rows, seeds, 5, 0.8, 0.95, early_exit=False)
    alone = torch.stack([sample_top_p(rows[i : i + 1], seeds[i : i + 1], 5, 0.8, 0.95)[0] for i in range(6)])
    shuffled = sample_top_p(rows.flip(0), seeds.flip(0), 5, 0.8, 0.95).flip(0)
    assert together.tolist() == alone.tolist() == shuffled.tolist() == fixed_rounds.tolist()


def test_noise_is_keyed_by_seed_step_and_round_only():
    seeds = torch.tensor([1, 2, 3])
    a = counter_uniform(seeds, 4, torch.arange(3))
    assert a.shape == (3, 3) and (a >= 0).all() and (a < 1).all()
    assert torch.equal(a[:, 1], counter_uniform(seeds, 4, 1))  # the vectorised rounds = one round at a time
    assert torch.equal(counter_uniform(seeds[1:2], 4, 0), counter_uniform(seeds, 4, 0)[1:2])
    assert not torch.equal(counter_uniform(seeds, 4, 0), counter_uniform(seeds, 5, 0))
    u = counter_uniform(torch.arange(200_000), 9, 0)
    assert abs(u.mean().item() - 0.5) < 0.005 and len(torch.unique(u)) == 200_000


def test_rounds_bound_the_unaccepted_probability():
    for p in (0.5, 0.9, 0.95, 0.99):
        r = rounds_for(p)
        assert (1 - p) ** r <= 1e-6 * (1 + 1e-9) < (1 - p) ** (r - 1)
    assert rounds_for(1.0) == 1


def test_greedy_when_temperature_is_zero_and_one_hot_for_generate():
    logits = torch.tensor([[0.1, 2.0, 0.3], [5.0, 0.0, 0.0]])
    assert sample_top_p(logits, torch.tensor([1, 2]), 0, 0.0, 0.95).tolist() == [1, 0]
    sampler = CounterSampler([1, 2], 0.7, 0.9, prompt_width=4)
    scores = sampler(torch.zeros(2, 6, dtype=torch.long), logits)
    assert torch.isinf(scores).sum().item() == 4 and (scores.argmax(-1) == scores.max(-1).indices).all()


def test_top_p_keeps_the_nucleus_only():
    logits = torch.log(torch.tensor([[0.6, 0.3, 0.05, 0.05]]))
    picks = {sample_top_p(logits, torch.tensor([s]), 0, 1.0, 0.8).item() for s in range(300)}
    assert picks == {0, 1}
