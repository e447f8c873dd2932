"""The public adapter API: everything a third-party adapter needs, and nothing else (docs/adapter-api.md).

Write an adapter against this module only::

    from gather_scatter_conformance.api import Adapter, Call, CaseData, Unsupported

and register it in the entry-point group :data:`ENTRY_POINT_GROUP` of your distribution. What is exported here
follows :data:`API_VERSION`; everything else in the package may change without notice. Importing this module
imports NumPy and the adapter base, never a framework, the harness or pytest.
"""

from __future__ import annotations

from gather_scatter_conformance.adapters.base import (
    API_VERSION,
    ENTRY_POINT_GROUP,
    Adapter,
    Call,
    CaseData,
    NoDevice,
    ReleaseRules,
    Unsupported,
    fmt_attrs,
)

__all__ = [
    "API_VERSION",
    "ENTRY_POINT_GROUP",
    "Adapter",
    "Call",
    "CaseData",
    "NoDevice",
    "ReleaseRules",
    "Unsupported",
    "fmt_attrs",
]
