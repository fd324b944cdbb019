"""What the audit measures against and whom it asks for: the ranking corpus, countries and distances, regions, the
axes of a student, profiles, prompt templates and the QS subject areas. Open it to change who the students are
(axes.py, profiles.py) or what they are asked (prompts.py)."""
