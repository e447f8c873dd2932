"""Converter paths: a source framework's API, a converter, and the runtime that runs the converted model.

Each path is an adapter (registered, named ``<source>~<converter>~<target>``) built on
:class:`gather_scatter_conformance.adapters.convert.path.ConversionPath`; docs/conversion.md lists them.
"""
