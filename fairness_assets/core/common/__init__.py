"""Shared by every stage: partition keys, file naming, progress lines, the long-table format, the catalogue of
result tables, text folding and the catalogue of metrics. Open it to add a metric (metric_catalogue.py: one
entry) or a result table (result_tables.py)."""
