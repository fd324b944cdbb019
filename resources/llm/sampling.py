"""Vectorised, batch-independent nucleus sampling on the device (torch only).

Every sample carries its own seed (METHOD.md §1). The draw of token ``t`` of a sample depends
only on that sample's seed, ``t`` and its own logits, never on which other samples share the
batch, and no step needs a host round-trip or a per-row Python loop:

- **Counter-based noise.** A uniform number is an integer hash (murmur3's ``fmix32``, chained)
  of ``(seed, step, round)``, computed with plain int64 tensor ops on whatever device the logits
  live on. The same key gives the same number on the CPU and on a GPU (integer arithmetic is
  exact), and no generator state is carried between steps or shared between rows.
- **Exact top-p by rejection, without a sort.** Sorting a 128-150k vocabulary for every row at
  every step is what makes top-p expensive. A token ``j`` belongs to the nucleus when the mass of
  the tokens strictly more probable than ``j`` is below ``top_p`` (the usual definition: keep a
  token while the cumulative mass before it is below ``top_p``). Each round draws ``j`` by inverse
  CDF over the current candidate set (one ``cumsum`` and one ``searchsorted`` per row, all rows at
  once) and accepts it if it is in the nucleus; otherwise the candidate set shrinks to the tokens
  more probable than ``j``, which still holds the whole nucleus, and the next round redraws. A
  draw is accepted with probability of at least ``top_p`` in every round, and the accepted token
  follows the nucleus distribution exactly (each round samples proportionally to ``p`` over a
  superset of the nucleus). After ``rounds`` rounds (chosen so that a row is still unaccepted with
  probability below ``1e-6``: 5 rounds at top_p = 0.95) a row takes its most likely token, which
  is always in the nucleus.
  On the CPU the loop stops as soon as every row is accepted (free there); on a GPU it runs its
  fixed number of rounds so that the host never waits for the device.

This module imports only torch, so the GPU benchmark can use it on a machine without the
project's other dependencies.
"""

from __future__ import annotations

import math

import torch

_M32 = 0xFFFFFFFF
# rows still unaccepted after the last round take their most likely token; the number of rounds
# keeps that probability below this bound (each round accepts with probability >= top_p)
UNACCEPTED_BOUND = 1e-6
MAX_ROUNDS = 64


def _fmix32(h: torch.Tensor) -> torch.Tensor:
    """murmur3's 32-bit finaliser on int64 tensors holding values in [0, 2**32)."""
    h = h & _M32
    h = h ^ (h >> 16)
    h = (h * 0x85EBCA6B) & _M32  # the product may wrap in int64; its low 32 bits are exact
    h = h ^ (h >> 13)
    h = (h * 0xC2B2AE35) & _M32
    return h ^ (h >> 16)


def counter_uniform(seeds: torch.Tensor, steps: torch.Tensor | int, round_: int | torch.Tensor = 0) -> torch.Tensor:
    """Uniform numbers in [0, 1) (float64, 53 random bits) keyed by (seed, step, round).

    ``seeds``: int64 tensor [B]; ``steps``: int64 tensor [B] or one int for every row;
    ``round_``: one int (result [B]) or an int64 tensor [R] of rounds (result [B, R]).
    """
    seeds = seeds.to(torch.int64)
    if not torch.is_tensor(steps):
        steps = torch.full_like(seeds, int(steps))
    steps = steps.to(device=seeds.device, dtype=torch.int64)
    key = _fmix32(_fmix32(seeds + 0x9E3779B9) ^ (steps & _M32))
    if torch.is_tensor(round_):
        key = key.unsqueeze(1)
        round_ = round_.to(device=seeds.device, dtype=torch.int64)
    key = _fmix32(key ^ ((round_ * 0x632BE5AB + 0x27D4EB2F) & _M32))
    hi = _fmix32(key ^ 0x1B873593) >> 5  # 27 bits
    lo = _fmix32(key ^ 0xCC9E2D51) >> 6  # 26 bits
    return (hi * (1 << 26) + lo).to(torch.float64) / float(1 << 53)


def rounds_for(top_p: float, bound: float = UNACCEPTED_BOUND) -> int:
    """Rounds after which a row is unaccepted with probability below ``bound``."""
    if top_p >= 1.0:
        return 1
    if top_p <= 0.0:
        return 1  # the nucleus is the most likely token alone; see sample_top_p
    return max(1, min(MAX_ROUNDS, math.ceil(math.log(bound) / math.log(1.0 - top_p))))


def _inverse_cdf(weights: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """One index per row drawn proportionally to ``weights`` (non-negative, [B, V]) with ``u`` [B]."""
    c = torch.cumsum(weights, dim=-1)
    target = (u * c[:, -1].to(torch.float64)).to(c.dtype).unsqueeze(1)
    idx = torch.searchsorted(c, target, right=True).squeeze(1)
    return idx.clamp_(max=weights.shape[-1] - 1)


def sample_top_p(
    logits: torch.Tensor,
    seeds: torch.Tensor,
    steps: torch.Tensor | int,
    temperature: float,
    top_p: float,
    rounds: int | None = None,
    early_exit: bool | None = None,
) -> torch.Tensor:
    """One token per row ([B] int64) from ``softmax(logits / temperature)`` truncated to top-p.

    ``seeds`` [B] and ``steps`` [B] (or an int) key each row's noise; nothing else does. With
    ``temperature <= 0`` the most likely token is taken. ``early_exit`` (default: on the CPU only)
    stops the rounds once every row is accepted, which reads a flag back from the device.
    """
    if temperature <= 0:
        return logits.argmax(dim=-1)
    seeds = seeds.to(device=logits.device, dtype=torch.int64)
    probs = torch.softmax(logits.float() / float(temperature), dim=-1)
    if top_p >= 1.0:
        return _inverse_cdf(probs, counter_uniform(seeds, steps, 0))
    best = probs.argmax(dim=-1)
    if top_p <= 0.0:
        return best
    if early_exit is None:
        early_exit = probs.device.type == "cpu"
    rounds = rounds or rounds_for(top_p)
    token = best.clone()
    accepted = torch.zeros_like(best, dtype=torch.bool)
    candidates = probs
    noise = counter_uniform(seeds, steps, torch.arange(rounds, device=probs.device))  # [B, rounds], one hash pass
    for r in range(rounds):
        j = _inverse_cdf(candidates, noise[:, r])
        pj = probs.gather(1, j.unsqueeze(1))
        more_likely = torch.where(probs > pj, probs, 0.0)  # the tokens strictly more probable than j
        take = (more_likely.sum(dim=-1) < top_p) & ~accepted
        token = torch.where(take, j, token)
        accepted |= take
        if early_exit and bool(accepted.all()):
            break
        candidates = more_likely  # an accepted row's later draws are ignored, so no per-row select
    return token


def one_hot_scores(scores: torch.Tensor, token: torch.Tensor) -> torch.Tensor:
    """Scores that make greedy decoding pick ``token`` in every row (0 there, -inf elsewhere)."""
    out = torch.full_like(scores, float("-inf"))
    return out.scatter_(1, token.unsqueeze(1).to(scores.device), 0.0)


class CounterSampler:
    """A transformers ``LogitsProcessor`` (duck-typed: it only needs ``__call__``) that samples
    every row with :func:`sample_top_p` and hands greedy decoding a one-hot choice.

    ``prompt_width``: the padded prompt length, so that ``step`` counts generated tokens (left
    padding makes it the same for every row of a static batch).
    """

    def __init__(self, seeds, temperature: float, top_p: float, prompt_width: int, device=None):
        self.seeds = torch.as_tensor(
            list(seeds) if not torch.is_tensor(seeds) else seeds, dtype=torch.int64, device=device
        )
        self.temperature = float(temperature)
        self.top_p = float(top_p)
        self.prompt_width = int(prompt_width)
        self.rounds = rounds_for(self.top_p)

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        if self.seeds.device != scores.device:
            self.seeds = self.seeds.to(scores.device)
        step = int(input_ids.shape[1]) - self.prompt_width
        token = sample_top_p(scores, self.seeds, step, self.temperature, self.top_p, rounds=self.rounds)
        return one_hot_scores(scores, token)
