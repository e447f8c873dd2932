"""gather-scatter-conformance: a cross-framework conformance harness for tensor indexing operators."""

__version__ = "0.1.0"
