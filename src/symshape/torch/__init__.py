"""The PyTorch importer: check an ``nn.Module`` for all sizes, with errors in the model's source.

>>> import symshape as ss, symshape.torch as sst          # doctest: +SKIP
>>> b, h, w = ss.dims("b h w")                            # doctest: +SKIP
>>> res = sst.infer(model, {"x": ss.Tensor((b, 3, h, w), "float32")})   # doctest: +SKIP
>>> res.type_of("fc")                                     # doctest: +SKIP

``infer(model, inputs, strict=False, timeout_ms=2000, dynamic=None, concrete_args=None)`` takes an
``nn.Module`` (traced with ``torch.fx``), a ``torch.fx.GraphModule`` or a
``torch.export.ExportedProgram``; ``inputs`` maps forward-argument names to symshape types, or is
a tuple of example tensors with ``dynamic={"x": {0: "batch"}}``. ``from_fx(graph_module, inputs)``
returns the symshape program. torch is imported when these are called (extra ``torch``).

Layout: :mod:`~symshape.torch.api` (entry points, tracing), :mod:`~symshape.torch.importer` (the
graph walker), :mod:`~symshape.torch.registry` (the dispatch table),
:mod:`~symshape.torch.context` (what converters see), :mod:`~symshape.torch.convert` (converter
families), :mod:`~symshape.torch.spans` (source locations), :mod:`~symshape.torch.values`,
:mod:`~symshape.torch.inputs`, :mod:`~symshape.torch.result`.
"""

from symshape.torch.api import from_fx, infer
from symshape.torch.values import UNSUPPORTED_OP

__all__ = ["UNSUPPORTED_OP", "from_fx", "infer"]
