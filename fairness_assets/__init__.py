"""The Dagster code location `fairness-audit`: the audit of LLMs acting as academic advisors for bias.

Importing the package (or ``fairness_assets.core``, the framework-free part) has no side effect:
the code location is ``fairness_assets.definitions``.
"""
