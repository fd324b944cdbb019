"""What the audit is measured against and whom it asks for: the ranking corpus, geography, regions, profiles and
prompts."""
