"""Inference on the scores: paired tests, decomposition, geography, model comparison, sensitivity and the
deployment gate."""
