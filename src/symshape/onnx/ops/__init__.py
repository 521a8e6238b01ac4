"""The converters, one module per operator family; importing this package registers them all.

==============  ===================================================================================
module          operators
==============  ===================================================================================
elementwise     unary and broadcasting binary operators, comparisons, ``Where``, ``Cast``
shape           ``Reshape``, ``Squeeze``, ``Concat``, ``Split``, ``Tile``, ...
slice           ``Slice``
pad             ``Pad``
nn              ``Conv``, pooling, ``Dropout``
conv_transpose  ``ConvTranspose``, ``MaxUnpool``
norm            batch/instance/layer/group normalization, ``Softmax``
reduce          ``Reduce*``, ``ArgMax``, ``ArgMin``
index           ``Gather*``, ``Scatter*``, ``TopK``, ``OneHot``, ``Compress``
linalg          ``MatMul``, ``Gemm``, ``Det``, ``Einsum``
image           ``Resize``, ``GridSample``, ``Col2Im``, RoI pooling, ``DFT``, ``STFT``
decode          ``ImageDecoder`` (sizes in the encoded bytes: fresh)
rnn             ``RNN``, ``GRU``, ``LSTM``
attention       ``Attention``, ``LinearAttention``, ``ai.onnx.preview.FlexAttention``
control         ``If``, ``Scan``, ``Loop``, ``SequenceMap``
misc            quantization, random generators, windows, losses, newer fused operators,
                ``ai.onnx.preview.training`` optimizers
ml              ``ai.onnx.ml``: ``Binarizer``, ``LabelEncoder``, ``ArrayFeatureExtractor``,
                ``TreeEnsemble``
strings         ``StringConcat``, ``StringSplit``, ``StringNormalizer``, ``RegexFullMatch``,
                ``TfIdfVectorizer`` (string tensors have an unknown dtype)
sequence        ``SequenceConstruct``/``At``/``Insert``/``Erase``/``Length``/``Empty``,
                ``SplitToSequence``, ``ConcatFromSequence`` (sequences of known length as tuples,
                others ``Sequence[E]``: sequence_types), ``Optional``, ``OptionalGetElement``,
                ``OptionalHasElement``
contrib         onnxruntime's ``com.microsoft`` operators of transformer graphs (``Attention``, ...)
==============  ===================================================================================
"""

from symshape.onnx.ops import (
    attention,
    contrib,
    control,
    conv_transpose,
    decode,
    elementwise,
    image,
    index,
    linalg,
    misc,
    ml,
    nn,
    norm,
    pad,
    reduce,
    rnn,
    sequence,
    shape,
    slice,
    strings,
)

__all__ = [
    "attention", "contrib", "control", "conv_transpose", "decode", "elementwise", "image", "index", "linalg",
    "misc", "ml", "nn", "norm", "pad", "reduce", "rnn", "sequence", "shape", "slice", "strings",
]  # fmt: skip
