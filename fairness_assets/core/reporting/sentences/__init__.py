"""Plain-language sentences of the report, one module per analysis: the prose that the statistics modules used
to hold."""
