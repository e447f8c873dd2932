"""The toy runtime's adapter: written against gather_scatter_conformance.api only, registered by its entry point.

It maps Gather and GatherElements; every other operator is left undeclared, so the harness records its cases as
unsupported ("not mapped"). The runtime is imported inside the methods: collecting cases imports no runtime.
"""

from __future__ import annotations

from typing import ClassVar

from gather_scatter_conformance.api import Adapter, Call, CaseData, Unsupported, fmt_attrs


class ToyAdapter(Adapter):
    name = "toy"
    requires = ("toy_runtime",)
    # Operator -> its API variants, the default first: here one each, named after the runtime's function.
    VARIANTS: ClassVar[dict[str, tuple[str, ...]]] = {"Gather": ("gather",), "GatherElements": ("gather_elements",)}

    def version(self) -> str:
        import toy_runtime

        return toy_runtime.__version__

    def prepare(self, case: CaseData, variant: str) -> Call:
        import toy_runtime

        self.check_variant(case.op, variant)
        if case.attrs.get("batch_dims") and "batch_dims" not in case.omit:
            raise Unsupported("toy_runtime.gather has no batch_dims")
        data, indices = case.inputs["data"], case.inputs["indices"]
        function = getattr(toy_runtime, variant)
        # An omitted axis is left out of the call, so the runtime's own default (0) applies.
        kwargs = {} if "axis" in case.omit else {"axis": int(case.attrs["axis"])}
        api = f"toy_runtime.{variant}(data, indices{', ' if kwargs else ''}{fmt_attrs(**kwargs)})"
        return Call(api, lambda: function(data, indices, **kwargs),
                    source=f"import toy_runtime\nresult = np.asarray({api})")


ADAPTER = ToyAdapter()
