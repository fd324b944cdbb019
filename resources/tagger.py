"""The subject tagger resource: program names -> QS areas, with overrides and a cache.

Implementations (``method``):

- ``rules``  the deterministic keyword tagger of ``fairness_assets.core.understanding.tags`` (CPU, instant)
- ``llm``    a few-shot prompt to a registered model (``llm_model``; default the built-in
             ``qwen2.5-0.5b-demo``) through an LLM client (an object with
             ``generate_texts(prompts, max_new_tokens=..., temperature=...) -> list[str]``,
             the interface of ``resources.llm``); an answer that names no area falls back to
             the rules and says so in ``source`` (``llm-fallback-rules``)

The reviewed overrides file always wins. Results are cached in the results database by
normalised program name and tagger name (``llm-fewshot-1:<model>`` for the LLM tagger; its rules
fallbacks under ``llm-fewshot-1:<model>+fallback-rules``, decoding being greedy), so a program is
tagged once per tagger. In the assets, :meth:`SubjectTaggerResource.session` gives the tag
function of one step: the model is loaded from ``LLMResource`` only when some program is not
cached, at most once, and released when the step's tagging is done.

``source`` of a tagged program: ``override``; ``rules-2`` (rules, fresh); ``llm`` or
``llm-fallback-rules`` (LLM, fresh); ``cache`` (rules, cached); ``cache:llm`` or
``cache:llm-fallback-rules`` (LLM, cached).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterable, Iterator, Optional, Protocol, Union

import pandas as pd
from dagster import ConfigurableResource
from pydantic import Field

from fairness_assets.core.understanding import tags as tags_core

from .database import ResultsDatabase
from .settings import DATA_DIR

OVERRIDES_FILE = DATA_DIR / "tag_overrides" / "programs.csv"
DEFAULT_LLM_MODEL = "qwen2.5-0.5b-demo"  # the built-in CPU model of the registry
LLM_TAGGER_VERSION = "llm-fewshot-1"
FALLBACK = "llm-fallback-rules"


class TextGenerator(Protocol):
    def generate_texts(
        self, prompts: list[str], *, max_new_tokens: int = 32, temperature: float = 0.0
    ) -> list[str]: ...


def llm_tags(programs: list[str], client: TextGenerator, batch_size: int = 32) -> list[tuple[tuple[str, ...], str]]:
    """Few-shot LLM tags for each program; (tags, source) with a rules fallback."""
    out = []
    for start in range(0, len(programs), batch_size):
        chunk = programs[start : start + batch_size]
        answers = client.generate_texts(
            [tags_core.few_shot_prompt(p) for p in chunk], max_new_tokens=32, temperature=0.0
        )
        for program, answer in zip(chunk, answers, strict=False):
            parsed = tags_core.parse_llm_tags(answer)
            out.append((parsed, "llm") if parsed else (tags_core.tag_rules(program), FALLBACK))
    return out


class SubjectTaggerResource(ConfigurableResource):
    """Tags programs with QS broad subject areas (METHOD.md §7)."""

    method: str = Field(default="rules", description="rules (deterministic) or llm (few-shot, any registered model).")
    llm_model: str = Field(
        default="",
        description="Registered model for method=llm (empty: the built-in "
        f"{DEFAULT_LLM_MODEL}); loaded through the `llm` resource.",
    )
    overrides_path: str = Field(default=str(OVERRIDES_FILE), description="Reviewed overrides CSV; always wins.")

    def tagger_name(self) -> str:
        if self.method == "rules":
            return tags_core.RULES_VERSION
        if self.method == "llm":
            return f"{LLM_TAGGER_VERSION}:{self.model_name()}"
        raise ValueError(f"SubjectTaggerResource: unknown method {self.method!r}; use 'rules' or 'llm'")

    def model_name(self) -> str:
        """The registered model of the LLM tagger."""
        return self.llm_model or DEFAULT_LLM_MODEL

    def overrides(self) -> dict[str, tuple[str, ...]]:
        return tags_core.load_overrides(self.overrides_path) if self.overrides_path else {}

    def tag(
        self,
        programs: Iterable[Optional[str]],
        database: Optional[ResultsDatabase] = None,
        client: Union[TextGenerator, Callable[[], TextGenerator], None] = None,
    ) -> pd.DataFrame:
        """``program_norm``, ``tags``, ``source`` for every distinct program name.

        ``client`` (method=llm): the LLM client, or a function returning it, called only when
        some program is neither overridden nor cached (so a cached run loads no model).
        """
        name = self.tagger_name()
        llm = self.method == "llm"
        distinct = pd.unique(pd.Series(list(programs), dtype=object).dropna())
        norms = [n for n in dict.fromkeys(tags_core.normalize_program(p) for p in distinct) if n]
        overrides = self.overrides()
        cached: dict[str, tuple[tuple[str, ...], str]] = {}
        if database is not None:
            todo = [n for n in norms if n not in overrides]
            if llm:
                fallback = database.read_tag_cache(f"{name}+fallback-rules", todo)
                cached = {n: (t, f"cache:{FALLBACK}") for n, t in fallback.items()}
                cached |= {n: (t, "cache:llm") for n, t in database.read_tag_cache(name, todo).items()}
            else:
                cached = {n: (t, "cache") for n, t in database.read_tag_cache(name, todo).items()}
        todo = [n for n in norms if n not in overrides and n not in cached]
        fresh: dict[str, tuple[tuple[str, ...], str]] = {}
        if todo:
            if llm:
                if client is None:
                    raise ValueError(f"tagger {name} needs an LLM client for {len(todo)} untagged program(s)")
                if not hasattr(client, "generate_texts"):
                    client = client()
                fresh = dict(zip(todo, llm_tags(todo, client), strict=False))
            else:
                fresh = {n: (tags_core.tag_rules(n), name) for n in todo}
            if database is not None:
                database.write_tag_cache(name, {n: t for n, (t, src) in fresh.items() if src != FALLBACK})
                if llm:  # greedy decoding: the same model answers the same way; kept apart, marked
                    database.write_tag_cache(
                        f"{name}+fallback-rules", {n: t for n, (t, src) in fresh.items() if src == FALLBACK}
                    )
        rows = []
        for n in norms:
            if n in overrides:
                rows.append((n, overrides[n], "override"))
            else:
                rows.append((n, *(cached.get(n) or fresh[n])))
        return pd.DataFrame(rows, columns=["program_norm", "tags", "source"])

    @contextmanager
    def session(self, database: Optional[ResultsDatabase], llm=None, log=None) -> Iterator[Callable]:
        """The tag function of one step (``programs -> frame``, as :meth:`tag`).

        method=llm: the model ``model_name()`` comes from ``llm`` (an ``LLMResource``), loaded only
        when a program is not cached, at most once, and released when the block ends (also on error).
        """
        if self.method != "llm":
            yield lambda programs: self.tag(programs, database)
            return
        name = self.model_name()
        state: dict = {}

        def client():
            if "client" not in state:
                if llm is None:
                    raise ValueError(f"tagger {self.tagger_name()} needs the `llm` resource to load {name}")
                state["client"] = llm.client(name, log=log)
            return state["client"]

        try:
            yield lambda programs: self.tag(programs, database, client=client)
        finally:
            if "client" in state:
                state.clear()
                llm.release(name, log=log)
