"""The subject tagger resource: program names -> QS areas, with overrides and a cache.

Implementations (``method``):

- ``rules``  the deterministic keyword tagger of ``fairness_assets.core.tags`` (CPU, instant)
- ``llm``    a few-shot prompt to any registered model through an LLM client (an object with
             ``generate_texts(prompts, max_new_tokens=..., temperature=...) -> list[str]``,
             the interface of ``resources.llm``); an answer that names no area falls back to
             the rules and says so in ``source``

The reviewed overrides file always wins. Results are cached in the results database by
normalised program name and tagger version, so a program is tagged once per tagger.
"""

from __future__ import annotations

from typing import Iterable, Optional, Protocol

import pandas as pd
from dagster import ConfigurableResource
from pydantic import Field

from fairness_assets.core import tags as tags_core

from .database import ResultsDatabase
from .settings import DATA_DIR

OVERRIDES_FILE = DATA_DIR / "tag_overrides" / "programs.csv"


class TextGenerator(Protocol):
    def generate_texts(self, prompts: list[str], *, max_new_tokens: int = 32, temperature: float = 0.0) -> list[str]:
        ...


def llm_tags(programs: list[str], client: TextGenerator, batch_size: int = 32) -> list[tuple[tuple[str, ...], str]]:
    """Few-shot LLM tags for each program; (tags, source) with a rules fallback."""
    out = []
    for start in range(0, len(programs), batch_size):
        chunk = programs[start : start + batch_size]
        answers = client.generate_texts([tags_core.few_shot_prompt(p) for p in chunk], max_new_tokens=32, temperature=0.0)
        for program, answer in zip(chunk, answers):
            parsed = tags_core.parse_llm_tags(answer)
            out.append((parsed, "llm") if parsed else (tags_core.tag_rules(program), "llm-fallback-rules"))
    return out


class SubjectTaggerResource(ConfigurableResource):
    """Tags programs with QS broad subject areas (METHOD.md §7)."""

    method: str = Field(default="rules", description="rules (deterministic) or llm (few-shot, any registered model).")
    llm_model: str = Field(default="", description="Registered model for method=llm.")
    overrides_path: str = Field(default=str(OVERRIDES_FILE), description="Reviewed overrides CSV; always wins.")

    def tagger_name(self) -> str:
        if self.method == "rules":
            return tags_core.RULES_VERSION
        if self.method == "llm":
            if not self.llm_model:
                raise ValueError("SubjectTaggerResource: method=llm needs llm_model (a registered model name)")
            return f"llm-fewshot-1:{self.llm_model}"
        raise ValueError(f"SubjectTaggerResource: unknown method {self.method!r}; use 'rules' or 'llm'")

    def overrides(self) -> dict[str, tuple[str, ...]]:
        return tags_core.load_overrides(self.overrides_path) if self.overrides_path else {}

    def tag(
        self,
        programs: Iterable[Optional[str]],
        database: Optional[ResultsDatabase] = None,
        client: Optional[TextGenerator] = None,
    ) -> pd.DataFrame:
        """``program_norm``, ``tags``, ``source`` for every distinct program name."""
        name = self.tagger_name()
        distinct = pd.unique(pd.Series(list(programs), dtype=object).dropna())
        norms = [n for n in dict.fromkeys(tags_core.normalize_program(p) for p in distinct) if n]
        overrides = self.overrides()
        cached = database.read_tag_cache(name, norms) if database is not None else {}
        todo = [n for n in norms if n not in overrides and n not in cached]
        fresh: dict[str, tuple[tuple[str, ...], str]] = {}
        if todo:
            if self.method == "llm":
                if client is None:
                    raise ValueError(f"tagger {name} needs an LLM client for {len(todo)} untagged program(s)")
                fresh = dict(zip(todo, llm_tags(todo, client)))
            else:
                fresh = {n: (tags_core.tag_rules(n), name) for n in todo}
            if database is not None:
                database.write_tag_cache(name, {n: t for n, (t, src) in fresh.items() if src != "llm-fallback-rules"})
        rows = []
        for n in norms:
            if n in overrides:
                rows.append((n, overrides[n], "override"))
            elif n in cached:
                rows.append((n, cached[n], "cache"))
            else:
                rows.append((n, fresh[n][0], fresh[n][1]))
        return pd.DataFrame(rows, columns=["program_norm", "tags", "source"])
