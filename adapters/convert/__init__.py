"""Converter paths: a source framework's API, a converter, and the runtime that runs the converted model.

Each path is an adapter (adapters.REGISTRY, named ``<source>~<converter>~<target>``) built on
:class:`adapters.convert.path.ConversionPath`; docs/conversion.md lists them.
"""
