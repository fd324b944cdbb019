"""Shared by every stage: partition keys, file naming, progress, table formats, the result-table catalogue, text
folding and the metric catalogue."""
