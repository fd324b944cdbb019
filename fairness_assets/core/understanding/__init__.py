"""From answer text to recommendations: parsing the lists, matching universities to the corpus, subject tags, parse
quality and the ranks of a second ranking. Open it when answers are misread, a university is not found, or a
program is mis-tagged."""
