"""The Dagster code location of the LLM academic-advisor fairness audit."""

from ._signals import restore_inherited_signals

restore_inherited_signals()
