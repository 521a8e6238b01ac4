"""Converter families, one module each; importing this package registers them all.

============  ==================================================================================
module        what
============  ==================================================================================
python        Python values: ``x.shape``, ``x.size(i)``, ``x.dim()``, ``x.dtype``, ``math.*``
promotion     torch's type promotion (``torch.result_type``) as an operator of the importer's own
elementwise   arithmetic with scalars and broadcasting, comparisons, unary math, activations,
              dtype conversions, pass-through calls
entry_ops     operators of the importer's own for calls computing new entries (values, ranges)
entry_calls   ``flip``/``roll``/``sort``/``cumsum``/``fill_``/``&``/``|``/``^``/``~``/random fills
selection     ``where``/``masked_fill``/``clamp`` (by numbers, tensors or sizes)
axes          ``transpose``/``movedim`` of any rank: operators of the importer's own
reduce        ``sum``/``mean``/``max``/... over dims, ``softmax`` and friends
shape         ``view``/``reshape``/``flatten``/``permute``/``transpose``/``squeeze``/``expand``,
              ``cat``/``stack``/``split``/``chunk``/``unbind``, ``select``
indexing      ``x[...]`` (ints, slices, ``None``, ``...``, one tensor), ``narrow``, ``index_select``
factories     ``zeros``/``ones``/``full``/``new_zeros``/``arange``/``torch.tensor``/``eye``
gather        indexing by several tensors, ``torch.gather``, ``torch.diff``
scatter       writes: ``copy_`` and ``aten.slice_scatter`` (``x[:, :3] = y`` in exported programs)
linalg        ``matmul``/``@``/``bmm``/``mm``, ``F.linear``
conv          convolutions, plain and transposed (modules, functions, aten), read in one place
empty         torch's rules for empty axes (convolutions, pooling, recurrent layers): an operator
nn            functional layers: pooling, normalization, embedding, attention
padding       ``F.pad`` in every mode; the copying modes state torch's conditions on the sizes
resize        ``F.interpolate``/``nn.Upsample``/``aten.upsample_*``: the shape as a shape value
modules       leaf ``nn.Module`` classes, typed from their parameters and attributes
aten          the aten overloads of exported programs (mostly onto the converters above)
============  ==================================================================================
"""

from symshape.torch.convert import (  # noqa: F401  (import registers)
    aten,
    axes,
    conv,
    elementwise,
    empty,
    entry_calls,
    entry_ops,
    factories,
    gather,
    indexing,
    linalg,
    modules,
    nn,
    padding,
    promotion,
    python,
    reduce,
    resize,
    scatter,
    selection,
    shape,
)

__all__: list[str] = []
