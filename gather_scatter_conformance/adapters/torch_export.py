"""``torch.export``'s table of decomposable operators, walked once per operator registry instead of once per program
(issue #38: compile once).

``ExportedProgram.run_decompositions`` (which ExecuTorch's ``to_edge_transform_and_lower`` calls twice a program, and
``torch.onnx.export(dynamo=True)`` once) first collects every CompositeImplicitAutograd operator of every namespace:
``torch._export.utils._collect_all_valid_cia_ops``, about 0.17 s a call here (torch 2.13.0), half of lowering a
one-node program. Its result changes only when an operator is registered, which is why torch does not cache it; here
it is cached under a key that changes with the registry (the namespaces and the dispatcher's CompositeImplicitAutograd
registrations, about a millisecond to read), so a registration made by a case, or by ExecuTorch's first lowering,
makes the next call walk again. The programs are byte for byte the same (tests/test_adapter_executorch.py).
"""

from __future__ import annotations

from typing import Any

_installed = False
_memo: dict[tuple[Any, ...], frozenset[Any]] = {}


def _registry_key() -> tuple[Any, ...]:
    import torch

    cia = torch._C._dispatch_get_registrations_for_dispatch_key("CompositeImplicitAutograd")
    return tuple(sorted(torch.ops._dir)), len(cia), hash(tuple(cia))


def reuse_op_tables() -> None:
    """Make torch.export reuse its operator table while the operator registry is unchanged. Idempotent; where
    torch's internals have moved (another release), it does nothing and torch walks as before."""
    global _installed
    if _installed:
        return
    _installed = True
    try:
        import torch._export.utils as export_utils
        import torch.export.decomp_utils as decomp_utils
        import torch.export.exported_program as exported_program
    except ImportError:
        return
    walk = getattr(export_utils, "_collect_all_valid_cia_ops", None)
    users = [m for m in (exported_program, decomp_utils) if getattr(m, "_collect_all_valid_cia_ops", None) is walk]
    if walk is None or not users:
        return

    def collect() -> frozenset[Any]:
        # torch's own note: "the output of this function should never be modified"; a frozenset makes sure.
        key = _registry_key()
        if key not in _memo:
            _memo.clear()
            _memo[key] = frozenset(walk())
        return _memo[key]

    for module in users:
        module._collect_all_valid_cia_ops = collect
