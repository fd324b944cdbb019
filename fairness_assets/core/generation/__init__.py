"""The model's answers: sample ids and seeds, and the reading, checking and conversion of answers files."""
