"""Each recommendation and answer scored: the metrics of METHOD.md section 4 and drift between audits."""
