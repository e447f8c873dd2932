"""``torch.export``'s table of decomposable operators, walked once per operator registry instead of once per program
(issue #38: compile once).

``ExportedProgram.run_decompositions`` (which ExecuTorch's ``to_edge_transform_and_lower`` calls twice a program, and
``torch.onnx.export(dynamo=True)`` once) first collects every CompositeImplicitAutograd operator of every namespace:
``torch._export.utils._collect_all_valid_cia_ops``, about 0.17 s a call here (torch 2.13.0), half of lowering a
one-node program. Its result changes only when an operator is registered, which is why torch does not cache it; here
it is cached under a key that changes with the registry (the namespaces and the dispatcher's CompositeImplicitAutograd
registrations, about a millisecond to read), so a registration made by a case, or by ExecuTorch's first lowering,
makes the next call walk again.

The same lowering then spends as long again registering kernels: ``_override_composite_implicit_decomp`` calls
``OperatorBase.py_impl`` about 12,000 times (six dispatch keys for each of some 2,000 operators), and each call
defines an inner function whose annotations, ``Callable[_P, _T]``, torch evaluates at every definition (torch/_ops.py
has no ``from __future__ import annotations``): two generic aliases built per call, about a quarter of lowering a
one-node program here (torch 2.13.0). ``py_impl`` is compiled again from its own source with annotations postponed:
the same statements, annotations kept as strings, nothing else.

The programs are byte for byte the same with both (tests/test_adapter_executorch.py).
"""

from __future__ import annotations
import __future__

import ast
import inspect
import textwrap
from typing import Any

_installed = False
_memo: dict[tuple[Any, ...], frozenset[Any]] = {}


def _registry_key() -> tuple[Any, ...]:
    import torch

    cia = torch._C._dispatch_get_registrations_for_dispatch_key("CompositeImplicitAutograd")
    return tuple(sorted(torch.ops._dir)), len(cia), hash(tuple(cia))


def reuse_op_tables() -> None:
    """Make torch.export reuse its operator table while the operator registry is unchanged, and ``py_impl`` leave
    its annotations unevaluated. Idempotent; where torch's internals have moved (another release), each part does
    nothing and torch works as before."""
    global _installed
    if _installed:
        return
    _installed = True
    import torch._ops

    with_postponed_annotations(torch._ops.OperatorBase, "py_impl")
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


def with_postponed_annotations(cls: type, name: str) -> bool:
    """Replace the method ``cls.name`` by the same source compiled with ``from __future__ import annotations`` in its
    module's namespace, so that the annotations of the functions it defines are not evaluated at each call. The
    statements, line numbers and file name are the method's own. Returns whether it was replaced: not when its source
    cannot be read, when it needs a closure (``super()``'s ``__class__``), or when it was already."""
    old = cls.__dict__.get(name)
    if not inspect.isfunction(old) or old.__code__.co_freevars or getattr(old, "_gsc_postponed", False):
        return False
    try:
        lines, first = inspect.getsourcelines(old)
        filename = inspect.getsourcefile(old) or old.__code__.co_filename
    except (OSError, TypeError):
        return False
    tree = ast.parse(textwrap.dedent("".join(lines)))
    ast.increment_lineno(tree, first - 1)
    code = compile(tree, filename, "exec", flags=__future__.annotations.compiler_flag, dont_inherit=True)
    scope: dict[str, Any] = {}
    exec(code, old.__globals__, scope)  # defines the function only: the source is one ``def``
    new = scope[name]
    new.__qualname__, new.__module__, new.__doc__ = old.__qualname__, old.__module__, old.__doc__
    new._gsc_postponed = True
    setattr(cls, name, new)
    return True
