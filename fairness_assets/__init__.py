"""The Dagster code location of the LLM academic-advisor fairness audit.

Importing the package (or ``fairness_assets.core``, the framework-free part) has no side effect:
the code location is ``fairness_assets.definitions``.
"""
