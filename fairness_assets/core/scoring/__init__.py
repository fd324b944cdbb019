"""Each answer scored: DRS and its parts, GRS, the analysis tables (METHOD.md sections 4-6) and the drift between
two audits. Open it to change a score's formula or its parameters (ScoringParams)."""
