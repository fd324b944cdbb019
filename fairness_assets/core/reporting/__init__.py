"""What a reader sees: figures, the world map, the scorecard and the HTML report."""
