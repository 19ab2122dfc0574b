"""The object model, codec, YAML/JSON I/O, quantities and object keys of dralab.

The lowest layer: it imports no other part of dralab (validation, which needs
CEL, is ``dralab.validation``)."""
