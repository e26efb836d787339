# SPDX-License-Identifier: MIT
"""Fold a network's first layer for OpenCV's ``dnn``: see :mod:`vision.stem`.

A 3 x 3 convolution of stride 2 and padding 1, on the network's input, becomes a 2 x 2
convolution of stride 1 on the input's 2 x 2 cells (:func:`vision.stem.space_to_depth`), padded
by one cell before the first row and column. Output ``(i, j)`` of the first sums input rows
``2i - 1, 2i, 2i + 1``: row ``2i - 1`` is the second row of cell ``i - 1``, rows ``2i`` and
``2i + 1`` the two rows of cell ``i`` (and the same across). Needs the ``onnx`` package (the
``train`` extra), as exporting from torch does::

    python -m tools.stem FILE.onnx [...]
"""

from __future__ import annotations

import argparse
from pathlib import Path

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


def main(argv: list[str] | None = None) -> int:
    """Fold the first layer of each ONNX file named."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("files", type=Path, nargs="+")
    for path in parser.parse_args(argv).files:
        fold_stem(path)
        print(f"{path}: first layer folded")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
