# SPDX-License-Identifier: MIT
"""Fold a network's first layer for OpenCV's ``dnn`` (see :mod:`vision.stem`), and split the
1 x 1 convolutions that follow an upsampling in a decoder.

A 3 x 3 convolution of stride 2 and padding 1, on the network's input, becomes a 2 x 2
convolution of stride 1 on the input's 2 x 2 cells (:func:`vision.stem.space_to_depth`), padded
by one cell before the first row and column. Output ``(i, j)`` of the first sums input rows
``2i - 1, 2i, 2i + 1``: row ``2i - 1`` is the second row of cell ``i - 1``, rows ``2i`` and
``2i + 1`` the two rows of cell ``i`` (and the same across). Needs the ``onnx`` package (the
``train`` extra), as exporting from torch does::

    python -m tools.stem FILE.onnx [...]
    python -m tools.stem --upsampled FILE.onnx [...]

A decoder that doubles a coarse map (nearest neighbour), joins it to a finer one and mixes
the two by a 1 x 1 convolution spends most of that convolution's sums on the doubled map's
copies of each value. The convolution is linear and acts on each pixel alone, so it is the
sum of one convolution of the coarse map's channels and one of the fine map's: the first is
taken on the coarse map, then doubled (:func:`split_upsampled`). The same outputs, the sums on
the coarse channels a quarter as many: the dice detector 12% quicker.

A network over tall, narrow inputs (the point network's strips, 48 cells by 10) runs faster
with its inputs lying down: OpenCV's ``dnn`` works along the rows, and rows of 10 or 5 leave
its depthwise convolutions and pools little to work on (OpenCV 4.11 took 6.4 ms for 26 strips
standing, 3.3 lying; 5.0 2.7 and 2.4). :func:`transpose_spatial` turns every convolution's
and pool's kernel, strides and padding a quarter turn and reorders the first fully connected
layer's weights to suit: the same outputs for the input's rows and columns swapped::

    python -m tools.stem --transpose FILE.onnx [...]
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

#: For each of the 3 x 3 kernel's rows (and columns): the 2 x 2 kernel's row and the row in
#: the cell it reads.
_TAPS = ((0, 1), (1, 0), (1, 1))


def folded_weights(weights: np.ndarray) -> np.ndarray:
    """``(o, c, 3, 3)`` stride-2 weights as the equivalent ``(o, 4c, 2, 2)`` on cells."""
    if weights.ndim != 4 or weights.shape[2:] != (3, 3):
        raise ValueError(f"expected 3 x 3 weights (o, c, 3, 3), got shape {weights.shape}")
    o, c = weights.shape[:2]
    folded = np.zeros((o, c, 2, 2, 2, 2), weights.dtype)  # out, channel, dy, dx, row, column
    for ky, (row, dy) in enumerate(_TAPS):
        for kx, (column, dx) in enumerate(_TAPS):
            folded[:, :, dy, dx, row, column] = weights[:, :, ky, kx]
    return folded.reshape(o, 4 * c, 2, 2)


def unfolded_weights(folded: np.ndarray) -> np.ndarray:
    """The ``(o, c, 3, 3)`` stride-2 weights that :func:`folded_weights` made ``(o, 4c, 2, 2)``
    (to train a shipped network further)."""
    if folded.ndim != 4 or folded.shape[2:] != (2, 2) or folded.shape[1] % 4:
        raise ValueError(f"expected folded weights (o, 4c, 2, 2), got shape {folded.shape}")
    o, c = folded.shape[0], folded.shape[1] // 4
    cells = folded.reshape(o, c, 2, 2, 2, 2)
    weights = np.zeros((o, c, 3, 3), folded.dtype)
    for ky, (row, dy) in enumerate(_TAPS):
        for kx, (column, dx) in enumerate(_TAPS):
            weights[:, :, ky, kx] = cells[:, :, dy, dx, row, column]
    return weights


def fold_stem(path: Path) -> None:
    """Rewrite the ONNX network at ``path``: its first layer folded, its input on cells.

    :raises ValueError: if the network does not begin with a 3 x 3, stride 2, padding 1
        convolution of its input (as one already folded does not).
    """
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(path))
    graph = model.graph
    node, source = graph.node[0], graph.input[0]
    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    plain = {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}
    if node.op_type != "Conv" or node.input[0] != source.name or any(attributes.get(k) != v for k, v in plain.items()):
        raise ValueError(f"{path}: the first layer is not a 3 x 3 convolution of stride 2 on the input")
    if attributes.get("group", 1) != 1 or attributes.get("dilations", [1, 1]) != [1, 1]:
        raise ValueError(f"{path}: the first layer is grouped or dilated")
    weights = next(i for i in graph.initializer if i.name == node.input[1])
    weights.CopyFrom(numpy_helper.from_array(folded_weights(numpy_helper.to_array(weights)), weights.name))
    del node.attribute[:]
    node.attribute.extend(
        [
            helper.make_attribute("kernel_shape", [2, 2]),
            helper.make_attribute("strides", [1, 1]),
            helper.make_attribute("pads", [1, 1, 0, 0]),
            helper.make_attribute("dilations", [1, 1]),
            helper.make_attribute("group", 1),
        ]
    )
    dims = source.type.tensor_type.shape.dim
    dims[1].dim_value *= 4
    for dim in dims[2:]:
        if dim.HasField("dim_value"):
            dim.dim_value //= 2
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


#: The input height and width declared in a network whose joins are split (see
#: :func:`split_upsampled`): the cells of a 64 x 64 image.
DECLARED_SIDE = 32


def _inferred_shapes(model: Any) -> dict[str, list[int]]:
    """The shape ONNX's inference gives each of a model's inputs and inner values (0 where a
    size is left open)."""
    import onnx

    graph = onnx.shape_inference.infer_shapes(model).graph
    return {
        value.name: [dim.dim_value for dim in value.type.tensor_type.shape.dim]
        for value in (*graph.value_info, *graph.input)
    }


def split_weights(weights: np.ndarray, coarse: int) -> tuple[np.ndarray, np.ndarray]:
    """A 1 x 1 convolution's ``(o, c, 1, 1)`` weights over joined channels (the first ``coarse``
    of them the doubled coarse map's) as the weights over each part."""
    if weights.ndim != 4 or weights.shape[2:] != (1, 1) or not 0 < coarse < weights.shape[1]:
        raise ValueError(f"expected 1 x 1 weights (o, c, 1, 1) over more than {coarse} channels, got {weights.shape}")
    return weights[:, :coarse].copy(), weights[:, coarse:].copy()


def split_upsampled(path: Path) -> int:
    """Rewrite the ONNX network at ``path``: each 1 x 1 convolution of a coarse map doubled by
    nearest neighbour and joined to a finer one (``Resize``, ``Concat``, ``Conv``) becomes a
    convolution of the coarse map, doubled, added to one of the fine map. Returns how many
    were split (none in a network already split)."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(path))
    graph = model.graph
    channels = {name: shape[1] for name, shape in _inferred_shapes(model).items() if len(shape) == 4}
    initial = {tensor.name: tensor for tensor in graph.initializer}
    made = {output: node for node in graph.node for output in node.output}
    users: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            users.setdefault(name, []).append(node)
    dropped: set[int] = set()
    replaced: dict[int, list[onnx.NodeProto]] = {}
    for join in graph.node:
        if join.op_type != "Concat" or len(join.input) != 2:
            continue
        resize, conv = made.get(join.input[0]), users.get(join.output[0], [])
        if resize is None or resize.op_type != "Resize" or len(conv) != 1 or conv[0].op_type != "Conv":
            continue
        mode = {a.name: helper.get_attribute_value(a) for a in resize.attribute}.get("mode", b"nearest")
        conv_node = conv[0]
        attributes = {a.name: helper.get_attribute_value(a) for a in conv_node.attribute}
        coarse = channels.get(resize.input[0], 0)
        if mode != b"nearest" or attributes.get("kernel_shape") != [1, 1] or len(users[resize.output[0]]) != 1:
            continue
        if attributes.get("group", 1) != 1 or len(conv_node.input) != 3 or not coarse:
            continue
        tag = conv_node.output[0] + "/split"
        first, second = split_weights(numpy_helper.to_array(initial[conv_node.input[1]]), coarse)
        graph.initializer.extend(
            [numpy_helper.from_array(first, tag + "/coarse_w"), numpy_helper.from_array(second, tag + "/fine_w")]
        )
        one = {"kernel_shape": [1, 1], "pads": [0, 0, 0, 0], "strides": [1, 1]}
        doubled = helper.make_node("Resize", [tag + "/coarse", *resize.input[1:]], [tag + "/doubled"])
        doubled.attribute.extend(resize.attribute)
        replaced[id(join)] = [
            helper.make_node("Conv", [resize.input[0], tag + "/coarse_w"], [tag + "/coarse"], **one),
            doubled,
            helper.make_node("Conv", [join.input[1], tag + "/fine_w", conv_node.input[2]], [tag + "/fine"], **one),
            helper.make_node("Sum", [tag + "/doubled", tag + "/fine"], [conv_node.output[0]]),
        ]
        dropped |= {id(resize), id(conv_node)}
    nodes = []
    for node in graph.node:
        if id(node) in replaced:
            nodes.extend(replaced[id(node)])
        elif id(node) not in dropped:
            nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)
    # The joined convolutions' weights are no longer used (nor, in a network split before
    # this was done, shipped for nothing).
    used = {name for node in graph.node for name in node.input}
    unused = [tensor for tensor in graph.initializer if tensor.name not in used]
    for tensor in unused:
        graph.initializer.remove(tensor)
    if replaced:
        # OpenCV 4's importer works out every layer's shape once, from the input's declared
        # one: with its height and width left open, it takes the doubled map and the fine one
        # for different sizes and refuses their sum. Declared, the network still runs at any
        # size it is given (the same outputs, on OpenCV 4.11 and 5.0).
        for dim in graph.input[0].type.tensor_type.shape.dim[2:]:
            if not dim.HasField("dim_value"):
                dim.dim_value = DECLARED_SIDE
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return len(replaced)


#: The operations :func:`transpose_spatial` knows to leave as they are.
_POINTWISE = {"Relu", "Constant", "Div", "Mul", "Add", "Sigmoid", "Softmax"}


def transpose_spatial(path: Path) -> None:
    """Rewrite the ONNX network at ``path`` to take its input with rows and columns swapped
    (``(n, c, w, h)`` for ``(n, c, h, w)``), giving the same outputs.

    :raises ValueError: if the network holds an operation it does not know how to turn, or
        its input's height and width are not fixed (the fully connected layer after
        ``Flatten`` depends on them).
    """
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(path))
    graph = model.graph
    dims = graph.input[0].type.tensor_type.shape.dim
    if len(dims) != 4 or not all(dim.HasField("dim_value") for dim in dims[2:]):
        raise ValueError(f"{path}: the input's height and width are not fixed")
    shape_of = _inferred_shapes(model)
    initial = {tensor.name: tensor for tensor in graph.initializer}

    def turned(values: list[int]) -> list[int]:
        return [values[1], values[0], *([values[3], values[2]] if len(values) == 4 else [])]

    flattened: dict[str, list[int]] = {}
    for node in graph.node:
        if node.op_type in ("Conv", "MaxPool", "AveragePool"):
            attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
            del node.attribute[:]
            for name, value in attributes.items():
                if name in ("kernel_shape", "strides", "pads", "dilations"):
                    value = turned(list(value))
                node.attribute.append(helper.make_attribute(name, value))
            if node.op_type == "Conv":
                weights = initial[node.input[1]]
                array = numpy_helper.to_array(weights).transpose(0, 1, 3, 2)
                weights.CopyFrom(numpy_helper.from_array(np.ascontiguousarray(array), weights.name))
        elif node.op_type == "Flatten":
            flattened[node.output[0]] = shape_of[node.input[0]]
        elif node.op_type == "Gemm" and node.input[0] in flattened:
            _, c, h, w = flattened[node.input[0]]
            transposed_b = any(a.name == "transB" and helper.get_attribute_value(a) for a in node.attribute)
            weights = initial[node.input[1]]
            array = numpy_helper.to_array(weights)
            rows = array if transposed_b else array.T
            # Flattened lying down, the feature at (c, y, x) comes at c*w*h + x*h + y.
            rows = rows.reshape(len(rows), c, h, w).transpose(0, 1, 3, 2).reshape(len(rows), -1)
            array = np.ascontiguousarray(rows if transposed_b else rows.T)
            weights.CopyFrom(numpy_helper.from_array(array, weights.name))
        elif node.op_type not in _POINTWISE and node.op_type != "Gemm":
            raise ValueError(f"{path}: cannot turn a {node.op_type} node ({node.name})")
    dims[2].dim_value, dims[3].dim_value = dims[3].dim_value, dims[2].dim_value
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def main(argv: list[str] | None = None) -> int:
    """Fold the first layer of each ONNX file named, or (``--upsampled``) split its decoder's
    joins, or (``--transpose``) turn it to take its input lying down."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--upsampled", action="store_true", help="split the 1 x 1 convolutions after upsampling")
    parser.add_argument("--transpose", action="store_true", help="take the input with rows and columns swapped")
    parser.add_argument("files", type=Path, nargs="+")
    args = parser.parse_args(argv)
    for path in args.files:
        if args.upsampled:
            print(f"{path}: {split_upsampled(path)} joins split")
        elif args.transpose:
            transpose_spatial(path)
            print(f"{path}: turned to take its input lying down")
        else:
            fold_stem(path)
            print(f"{path}: first layer folded")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
