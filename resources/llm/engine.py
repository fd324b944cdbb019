"""Continuous batching for the in-process transformers path: finished rows leave the batch, new
prompts take their place, and every sample stays what it would be alone.

With static batches (``model.generate``) every row is computed until the longest row of its
batch ends: at real answer lengths (a few dozen to a few hundred tokens) most of the computed
row-steps are padding after EOS. This engine keeps a running batch instead:

- **compaction**: a row that produced EOS or reached its token budget leaves the batch at the
  next step; its key/value cache entries are dropped (batch index selection on every layer), and
  cache columns that no remaining row attends to (left padding) are trimmed away;
- **refill**: once enough rows have left (``refill_at`` free slots) and prompts are waiting, the
  next prompts are prefilled together (left padded, attention mask and position ids per row) and
  merged into the running batch: the shorter of the two caches is left padded with masked
  columns, then the two are concatenated along the batch;
- **reproducibility**: a row's token ``t`` is drawn by :func:`sampling.sample_top_p` from the
  counter noise keyed by (its seed, ``t``) and its own logits; which rows share its batch, when
  it joined and how much padding it carries change nothing but floating-point rounding in the
  model's kernels (the same as a static batch of a different size);
- the same stopping rule as ``generate``: the model's ``generation_config.eos_token_id`` (one or
  several ids), else the tokenizer's EOS, and ``max_new_tokens``.

Supported: decoder-only models whose cache is a :class:`transformers.DynamicCache` of full
(non-sliding) layers with ``[batch, heads, seq, dim]`` keys and values (Llama, Qwen2, Mistral
without a sliding window, Gemma-2 is not). :func:`supports` says whether a model qualifies; the
client falls back to static batches otherwise. This module imports only torch and transformers,
so the GPU benchmark can use it on a machine without the project's other dependencies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional, Sequence

import torch

from .sampling import rounds_for, sample_top_p


@dataclass
class Finished:
    """One finished sample: its index in the request, its generated token ids (EOS excluded),
    its prompt length in tokens and why it stopped (``eos`` or ``length``)."""

    index: int
    tokens: list[int]
    prompt_tokens: int
    stop: str


@dataclass
class EngineStats:
    """What the engine computed: useful tokens (generated, EOS included) against row-steps
    (rows in the batch at each decode step, prefill excluded), prefills and merges."""

    useful_tokens: int = 0
    row_steps: int = 0
    decode_steps: int = 0
    prefills: int = 0
    prefill_rows: int = 0
    peak_rows: int = 0
    widths: list[int] = field(default_factory=list)

    @property
    def utilisation(self) -> float:
        return self.useful_tokens / self.row_steps if self.row_steps else 0.0


def eos_ids(model, tokenizer) -> set[int]:
    """The ids that end a sample, as ``generate`` decides them."""
    ids = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    if ids is None:
        ids = tokenizer.eos_token_id
    if ids is None:
        return set()
    return {int(i) for i in (ids if isinstance(ids, (list, tuple, set)) else [ids])}


def supports(model) -> tuple[bool, str]:
    """Whether the engine can run ``model`` (a full-attention DynamicCache), and why not."""
    try:
        from transformers import DynamicCache
        from transformers.cache_utils import DynamicLayer
    except ImportError as exc:  # pragma: no cover - transformers is a dependency of this path
        return False, f"transformers has no DynamicCache ({exc})"
    config = getattr(model, "config", None)
    if config is None or not getattr(config, "is_decoder", True) or getattr(config, "is_encoder_decoder", False):
        return False, "not a decoder-only model"
    if (
        getattr(config, "sliding_window", None)
        and getattr(config, "use_sliding_window", True) is not False
        and any(t == "sliding_attention" for t in (getattr(config, "layer_types", None) or []))
    ):
        return False, "the model has sliding-window layers"
    try:
        cache = DynamicCache(config=config)
    except TypeError:
        cache = DynamicCache()
    layers = getattr(cache, "layers", None)
    if layers is None:
        return False, "this transformers' DynamicCache has no layers"
    if any(type(layer) is not DynamicLayer for layer in layers):
        return False, "the model's cache has layers other than full-attention DynamicLayer"
    gen = getattr(model, "generation_config", None)
    for name, neutral in (
        ("repetition_penalty", 1.0),
        ("no_repeat_ngram_size", 0),
        ("encoder_repetition_penalty", 1.0),
        ("min_new_tokens", None),
        ("min_length", 0),
    ):
        value = getattr(gen, name, None)
        if value not in (None, neutral):
            return False, f"generation_config.{name} = {value} (the engine applies no logits processor)"
    return True, ""


class _Batch:
    """The running batch: cache, attention mask [B, L], next position [B], last token [B], and per
    row its request index, seed, generated tokens and prompt length."""

    def __init__(self, cache, mask, position, last, index, seeds, generated, prompt_tokens, budgets):
        self.cache, self.mask, self.position, self.last = cache, mask, position, last
        self.index, self.seeds, self.generated, self.prompt_tokens = index, seeds, generated, prompt_tokens
        self.budgets = budgets

    def __len__(self) -> int:
        return len(self.index)

    # -- cache surgery (every layer: keys/values [B, H, L, D])
    def select(self, keep: torch.Tensor) -> None:
        for layer in self.cache.layers:
            if layer.is_initialized and layer.keys.numel():
                layer.keys = layer.keys.index_select(0, keep)
                layer.values = layer.values.index_select(0, keep)
        self.mask = self.mask.index_select(0, keep)
        self.position = self.position.index_select(0, keep)
        self.last = self.last.index_select(0, keep)
        rows = keep.tolist()
        self.index = [self.index[i] for i in rows]
        self.seeds = self.seeds.index_select(0, keep)
        self.generated = [self.generated[i] for i in rows]
        self.prompt_tokens = [self.prompt_tokens[i] for i in rows]
        self.budgets = [self.budgets[i] for i in rows]
        self.trim()

    def trim(self) -> None:
        """Drop the leading cache columns no row attends to (left padding of rows that left)."""
        used = self.mask.any(dim=0)
        if not bool(used.any()):
            return
        first = int(torch.nonzero(used, as_tuple=False)[0, 0])
        if first == 0:
            return
        for layer in self.cache.layers:
            if layer.is_initialized and layer.keys.numel():
                layer.keys = layer.keys[:, :, first:, :]
                layer.values = layer.values[:, :, first:, :]
        self.mask = self.mask[:, first:]

    def merge(self, other: "_Batch") -> None:
        """Append ``other``'s rows; the shorter cache is left padded with masked columns."""
        la, lb = self.mask.shape[1], other.mask.shape[1]
        width = max(la, lb)
        for mine, theirs in zip(self.cache.layers, other.cache.layers, strict=False):
            mk, mv = _left_pad(mine.keys, width), _left_pad(mine.values, width)
            tk, tv = _left_pad(theirs.keys, width), _left_pad(theirs.values, width)
            mine.keys, mine.values = torch.cat([mk, tk], dim=0), torch.cat([mv, tv], dim=0)
        self.mask = torch.cat([_left_pad_mask(self.mask, width), _left_pad_mask(other.mask, width)], dim=0)
        self.position = torch.cat([self.position, other.position])
        self.last = torch.cat([self.last, other.last])
        self.index += other.index
        self.seeds = torch.cat([self.seeds, other.seeds])
        self.generated += other.generated
        self.prompt_tokens += other.prompt_tokens
        self.budgets += other.budgets


def _left_pad(t: torch.Tensor, width: int) -> torch.Tensor:
    if t.shape[2] == width:
        return t
    pad = t.new_zeros((t.shape[0], t.shape[1], width - t.shape[2], t.shape[3]))
    return torch.cat([pad, t], dim=2)


def _left_pad_mask(m: torch.Tensor, width: int) -> torch.Tensor:
    if m.shape[1] == width:
        return m
    return torch.cat([m.new_zeros((m.shape[0], width - m.shape[1])), m], dim=1)


class ContinuousEngine:
    """Generates many prompts (token id lists) with a running batch of at most ``batch_size`` rows.

    ``refill_at``: how many free slots trigger a prefill of waiting prompts (default: a quarter of
    the batch, at least 1): fewer prefills of more rows each, against slots left idle meanwhile.
    """

    def __init__(
        self,
        model,
        *,
        pad_token_id: int,
        eos_token_ids: set[int],
        batch_size: int = 16,
        refill_at: Optional[int] = None,
    ):
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self.model = model
        self.pad = int(pad_token_id)
        self.eos = set(int(i) for i in eos_token_ids)
        self.batch_size = int(batch_size)
        self.refill_at = max(1, int(refill_at if refill_at is not None else batch_size // 4))
        self.stats = EngineStats()
        self.device = next(model.parameters()).device
        import inspect

        # transformers 5 renamed past_key_values to cache (the old name warns); older versions know only the old one
        self._cache_kw = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"

    def _forward(self, cache, **kwargs):
        out = self.model(**kwargs, **{self._cache_kw: cache}, use_cache=True)
        new = out["cache"] if "cache" in out else out["past_key_values"]
        return out.logits, new

    def _new_cache(self):
        from transformers import DynamicCache

        try:
            return DynamicCache(config=self.model.config)
        except TypeError:
            return DynamicCache()

    def _prefill(self, items: Sequence[tuple[int, list[int], int, int]], sample: Callable) -> _Batch:
        width = max(len(ids) for _, ids, _, _ in items)
        ids = torch.full((len(items), width), self.pad, dtype=torch.long)
        mask = torch.zeros((len(items), width), dtype=torch.long)
        for r, (_, toks, _, _) in enumerate(items):
            ids[r, width - len(toks) :] = torch.tensor(toks, dtype=torch.long)
            mask[r, width - len(toks) :] = 1
        ids, mask = ids.to(self.device), mask.to(self.device)
        position = (mask.cumsum(-1) - 1).clamp_(min=0)
        cache = self._new_cache()
        logits, cache = self._forward(
            cache, input_ids=ids, attention_mask=mask, position_ids=position, logits_to_keep=1
        )
        seeds = torch.tensor([s for _, _, s, _ in items], dtype=torch.int64, device=self.device)
        steps = torch.zeros(len(items), dtype=torch.int64, device=self.device)
        token = sample(logits[:, -1, :], seeds, steps)
        self.stats.prefills += 1
        self.stats.prefill_rows += len(items)
        return _Batch(
            cache,
            mask,
            position[:, -1] + 1,
            token,
            [i for i, _, _, _ in items],
            seeds,
            [[] for _ in items],
            [len(t) for _, t, _, _ in items],
            [b for _, _, _, b in items],
        )

    def _record(self, b: _Batch) -> tuple[Optional[_Batch], list[Finished]]:
        """Append each row's new token; finished rows leave (the batch is compacted), None when none is left."""
        done, keep = [], []
        for r, tok in enumerate(b.last.tolist()):
            gen = b.generated[r]
            gen.append(tok)
            if tok in self.eos:
                done.append(Finished(b.index[r], gen[:-1], b.prompt_tokens[r], "eos"))
            elif len(gen) >= b.budgets[r]:
                done.append(Finished(b.index[r], list(gen), b.prompt_tokens[r], "length"))
            else:
                keep.append(r)
        self.stats.useful_tokens += len(b)
        if not keep:
            return None, done
        if done:
            b.select(torch.tensor(keep, dtype=torch.long, device=self.device))
        return b, done

    def run(
        self,
        prompts: Sequence[Sequence[int]],
        seeds: Sequence[int],
        *,
        max_new_tokens: int | Sequence[int],
        temperature: float = 0.0,
        top_p: float = 1.0,
        do_sample: bool = True,
    ) -> Iterator[Finished]:
        """Yields every sample as it finishes (not in request order), each exactly once.
        ``max_new_tokens``: one budget for every prompt, or one per prompt."""
        budgets = _budgets(prompts, seeds, max_new_tokens)
        greedy = not do_sample or temperature <= 0
        rounds = rounds_for(top_p)

        def sample(logits, row_seeds, steps):
            if greedy:
                return logits.argmax(dim=-1)
            return sample_top_p(logits, row_seeds, steps, temperature, top_p, rounds=rounds)

        queue = [
            (i, list(map(int, p)), int(s), budgets[i]) for i, (p, s) in enumerate(zip(prompts, seeds, strict=False))
        ]
        queue.reverse()  # pop() takes the next prompt in request order
        batch: Optional[_Batch] = None
        with torch.inference_mode():
            while queue or batch is not None:
                free = self.batch_size - (len(batch) if batch is not None else 0)
                if queue and (batch is None or free >= min(self.refill_at, len(queue))):
                    new, finished = self._record(
                        self._prefill([queue.pop() for _ in range(min(free, len(queue)))], sample)
                    )
                    yield from finished
                    if new is not None:
                        if batch is None:
                            batch = new
                        else:
                            batch.merge(new)
                    if batch is not None:
                        self.stats.peak_rows = max(self.stats.peak_rows, len(batch))
                    continue  # a full batch again, or the queue is empty: decode
                # one decode step for every row
                batch.mask = torch.cat([batch.mask, batch.mask.new_ones((len(batch), 1))], dim=1)
                logits, batch.cache = self._forward(
                    batch.cache,
                    input_ids=batch.last.unsqueeze(1),
                    attention_mask=batch.mask,
                    position_ids=batch.position.unsqueeze(1),
                )
                steps = torch.tensor([len(g) for g in batch.generated], dtype=torch.int64, device=self.device)
                batch.last = sample(logits[:, -1, :], batch.seeds, steps)
                batch.position = batch.position + 1
                self.stats.decode_steps += 1
                self.stats.row_steps += len(batch)
                self.stats.widths.append(int(batch.mask.shape[1]))
                batch, finished = self._record(batch)
                yield from finished


def _budgets(prompts: Sequence[Sequence[int]], seeds: Sequence[int], max_new_tokens: int | Sequence[int]) -> list[int]:
    """Each prompt's token budget, the request checked: one seed and one budget (at least 1) per
    prompt, no empty prompt."""
    if len(prompts) != len(seeds):
        raise ValueError(f"{len(prompts)} prompts but {len(seeds)} seeds")
    budgets = (
        [int(max_new_tokens)] * len(prompts)
        if isinstance(max_new_tokens, (int, float))
        else [int(b) for b in max_new_tokens]
    )
    if len(budgets) != len(prompts):
        raise ValueError(f"{len(prompts)} prompts but {len(budgets)} token budgets")
    if budgets and min(budgets) < 1:
        raise ValueError(f"max_new_tokens must be at least 1, got {min(budgets)}")
    empty = [i for i, p in enumerate(prompts) if not len(p)]
    if empty:
        raise ValueError(f"prompt(s) {empty[:10]} have no tokens")
    return budgets


def generate(
    model,
    tokenizer,
    prompts: Sequence[Sequence[int]],
    seeds: Sequence[int],
    *,
    max_new_tokens: int | Sequence[int],
    temperature: float,
    top_p: float,
    do_sample: bool = True,
    batch_size: int = 16,
    refill_at: Optional[int] = None,
) -> tuple[list[Finished], EngineStats]:
    """Every sample in request order (a convenience for tests and benchmarks)."""
    engine = ContinuousEngine(
        model,
        pad_token_id=tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id,
        eos_token_ids=eos_ids(model, tokenizer),
        batch_size=batch_size,
        refill_at=refill_at,
    )
    out = sorted(
        engine.run(
            prompts, seeds, max_new_tokens=max_new_tokens, temperature=temperature, top_p=top_p, do_sample=do_sample
        ),
        key=lambda f: f.index,
    )
    return out, engine.stats
