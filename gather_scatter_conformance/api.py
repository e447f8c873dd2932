"""The public adapter API: everything a third-party adapter needs, and nothing else (docs/adapter-api.md).

Write an adapter against this module only::

    from gather_scatter_conformance.api import Adapter, Call, CaseData, Unsupported

and register it in the entry-point group :data:`ENTRY_POINT_GROUP` of your distribution. What is exported here
follows :data:`API_VERSION`; everything else in the package may change without notice. Importing this module
imports NumPy and the adapter base, never a framework, the harness or pytest.
"""

from __future__ import annotations

# "name as name": the explicit re-export of a typed package (PEP 484), so type checkers see each as public here.
from gather_scatter_conformance.adapters.base import API_VERSION as API_VERSION
from gather_scatter_conformance.adapters.base import ENTRY_POINT_GROUP as ENTRY_POINT_GROUP
from gather_scatter_conformance.adapters.base import Adapter as Adapter
from gather_scatter_conformance.adapters.base import Call as Call
from gather_scatter_conformance.adapters.base import CaseData as CaseData
from gather_scatter_conformance.adapters.base import NativeCrash as NativeCrash
from gather_scatter_conformance.adapters.base import NoDevice as NoDevice
from gather_scatter_conformance.adapters.base import ReleaseRules as ReleaseRules
from gather_scatter_conformance.adapters.base import Unsupported as Unsupported
from gather_scatter_conformance.adapters.base import delegation as delegation
from gather_scatter_conformance.adapters.base import fmt_attrs as fmt_attrs
from gather_scatter_conformance.adapters.base import importing as importing
from gather_scatter_conformance.adapters.base import lacks_converter as lacks_converter

__all__ = [
    "API_VERSION",
    "ENTRY_POINT_GROUP",
    "Adapter",
    "Call",
    "CaseData",
    "NativeCrash",
    "NoDevice",
    "ReleaseRules",
    "Unsupported",
    "delegation",
    "fmt_attrs",
    "importing",
    "lacks_converter",
]
