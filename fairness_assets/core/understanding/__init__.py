"""From answer text to recommendations: parsing, matching to the corpus, subject tags, parse quality and second
rankings."""
