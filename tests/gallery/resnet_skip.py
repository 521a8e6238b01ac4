"""A ResNet-18 stem and stages as the torch importer builds them (weights as annotated
parameters, batch_norm's field 0): block layer2.0 widens 8 to 16 channels and strides by 2, but
its skip path has no downsample, so the residual add meets 16 and 8 channels."""
import symshape as ss

b, h, w = ss.dims("b h w")
x = ss.var("x", ss.Tensor((b, 3, h, w), "float32"))
params = [x]


def weight(name: str, shape: tuple[int, ...]) -> ss.Var:
    v = ss.var(name, ss.Tensor(shape, "float32"))
    params.append(v)
    return v


def conv_bn(name: str, y: ss.Expr, cin: int, cout: int, k: int, stride: int) -> ss.Expr:
    wt = weight(f"{name}.conv.weight", (cout, cin, k, k))
    y = ss.ops.conv2d(y, wt, strides=(stride, stride), padding=(k // 2, k // 2))
    g, be = weight(f"{name}.bn.weight", (cout,)), weight(f"{name}.bn.bias", (cout,))
    m, v = weight(f"{name}.bn.running_mean", (cout,)), weight(f"{name}.bn.running_var", (cout,))
    return ss.ops.batch_norm(y, g, be, m, v, axis=1)[0]


def block(name: str, y: ss.Expr, cin: int, cout: int, stride: int) -> ss.Expr:
    out = ss.ops.relu(conv_bn(f"{name}.1", y, cin, cout, 3, stride))
    out = conv_bn(f"{name}.2", out, cout, cout, 3, 1)
    out = ss.ops.add(out, y)  # the skip path never downsamples
    return ss.ops.relu(out)


y = ss.ops.relu(conv_bn("stem", x, 3, 8, 7, 2))
y = ss.ops.max_pool2d(y, pool_size=(3, 3), strides=(2, 2), padding=(1, 1))
y = block("layer1.0", y, 8, 8, 1)
y = block("layer1.1", y, 8, 8, 1)
y = block("layer2.0", y, 8, 16, 2)
model = ss.Function(params, y)
