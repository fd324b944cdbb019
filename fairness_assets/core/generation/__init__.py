"""The model's answers as data: sample ids and seeds, and bring-your-own answers files read, checked, converted and
staged. Open it to accept a new answers-file format or column."""
