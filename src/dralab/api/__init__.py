"""The object model, YAML/JSON I/O, quantities and validation of dralab."""
