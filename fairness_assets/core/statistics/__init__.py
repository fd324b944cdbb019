"""Inference on the scores: paired counterfactual tests, behaviour and needs, geography, model comparison,
sensitivity and the release gate. Open it to change a test, an interval or a family of corrections."""
