"""What a reader sees: the sentences, figures, world map, scorecard and the HTML report. Open it to change wording,
a figure or the report's sections."""
