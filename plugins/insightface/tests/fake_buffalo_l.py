"""Tiny stand-ins for the buffalo_l pack, generated with ``onnx.helper`` (no torch).

- :func:`fake_recognizer`: input ``N x 3 x 112 x 112`` -> 4x4 average pool -> flatten ->
  fixed random ``2352 x 512`` matrix. insightface routes it to ``ArcFaceONNX``. Its output
  depends on channel order, so it can show whether the network saw RGB.
- :func:`fake_detector`: an SCRFD-shaped graph with a dynamic ``1 x 3 x H x W`` input and
  9 outputs: scores, box distances and keypoint distances for strides 8, 16 and 32, with 2
  anchors per location. insightface routes it to ``SCRFD`` with keypoints, including the
  static-shape session rewrite it applies to the real dynamic det_10g. Every anchor of
  slot ``a`` (0 or 1) decodes to the same box and keypoints ``faces[a]``, given as fractions
  of the detector input width and height, so NMS leaves one face per distinct slot.
  The score of slot ``a`` is ``faces[a].score`` times a gate. The gate is 1 when the image
  has any contrast and 0 for a uniform image, so a blank image has no face.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
STRIDES = (8, 16, 32)

#: The ArcFace 5-point template in a 112 x 112 chip (insightface.utils.face_align.arcface_dst).
ARCFACE_TEMPLATE = np.array(
    [[38.2946, 51.6963], [73.5318, 51.5014], [56.0252, 71.7366], [41.5493, 92.3655], [70.7299, 92.2041]],
    dtype=np.float32,
)


@dataclass(frozen=True)
class FakeFace:
    """A face in fractions of the detector input: box (x1, y1, x2, y2) and 5 keypoints (x, y)."""

    box: tuple[float, float, float, float]
    kps: tuple[tuple[float, float], ...]
    score: float = 0.9


#: A face filling a square image the way an aligned 112 x 112 crop does (keypoints = template).
ALIGNED_CROP = FakeFace(
    box=(0.1, 0.1, 0.9, 0.95),
    kps=tuple((float(x) / 112, float(y) / 112) for x, y in ARCFACE_TEMPLATE),
)


def fake_recognizer(path: Path, seed: int = 0) -> Path:
    weight = np.random.default_rng(seed).normal(0, 1 / np.sqrt(2352), size=(2352, 512)).astype(np.float32)
    nodes = [
        helper.make_node(
            "AveragePool", ["data"], ["pooled"], name="pool", kernel_shape=[4, 4], strides=[4, 4]
        ),
        helper.make_node("Flatten", ["pooled"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "fc_weight", "fc_bias"], ["fc1"], name="fc"),
    ]
    graph = helper.make_graph(
        nodes,
        "fake_arcface",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, ["batch", 3, 112, 112])],
        [helper.make_tensor_value_info("fc1", TensorProto.FLOAT, ["batch", 512])],
        initializer=[
            numpy_helper.from_array(weight, "fc_weight"),
            numpy_helper.from_array(np.zeros(512, np.float32), "fc_bias"),
        ],
    )
    return _save(graph, path)


def fake_detector(path: Path, faces: tuple[FakeFace, FakeFace] = (ALIGNED_CROP, ALIGNED_CROP)) -> Path:
    g = _Graph()
    x = "input.1"
    # gate: 1 when the image has contrast, 0 for a uniform one. insightface letterboxes the image
    # into a black canvas, so black pixels (-0.996 after its normalisation) are left out of the
    # minimum: the padding around a uniform grey image is not contrast.
    not_black = g.op("Where", [g.op("Less", [x, g.const(-0.99)]), g.const(10.0), x])
    spread = g.op("Sub", [g.op("ReduceMax", [x], keepdims=0), g.op("ReduceMin", [not_black], keepdims=0)])
    gate = g.op("Clip", [g.op("Mul", [spread, g.const(100.0)]), g.const(0.0), g.const(1.0)])
    shape = g.op("Shape", [x])
    height = g.op("Cast", [g.op("Gather", [shape, g.const(2, np.int64)], axis=0)], to=TensorProto.FLOAT)
    width = g.op("Cast", [g.op("Gather", [shape, g.const(3, np.int64)], axis=0)], to=TensorProto.FLOAT)

    outputs: dict[str, list[str]] = {"score": [], "bbox": [], "kps": []}
    for s in STRIDES:
        score, bbox, kps = _stride_outputs(g, x, s, width, height, gate, faces)
        outputs["score"].append(g.op("Identity", [score], out=f"score_{s}"))
        outputs["bbox"].append(g.op("Concat", bbox, axis=1, out=f"bbox_{s}"))
        outputs["kps"].append(g.op("Concat", kps, axis=1, out=f"kps_{s}"))

    width_of = {"score": 1, "bbox": 4, "kps": 10}
    graph_outputs = [
        helper.make_tensor_value_info(name, TensorProto.FLOAT, [f"n{s}", width_of[kind]])
        for kind in ("score", "bbox", "kps")
        for name, s in zip(outputs[kind], STRIDES)
    ]
    graph = helper.make_graph(
        g.nodes,
        "fake_scrfd",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 3, "height", "width"])],
        graph_outputs,
        initializer=g.initializers,
    )
    return _save(graph, path)


def _stride_outputs(
    g: _Graph, x: str, s: int, width: str, height: str, gate: str, faces: tuple[FakeFace, FakeFace]
) -> tuple[str, list[str], list[str]]:
    """Scores (N, 1), 4 box-distance columns and 10 keypoint-distance columns for stride ``s``."""
    pooled = g.op("AveragePool", [x], kernel_shape=[s, s], strides=[s, s])
    grid = g.op("ReduceMean", [pooled], axes=[1], keepdims=1)
    ones = g.op("Add", [g.op("Mul", [grid, g.const(0.0)]), g.const(1.0)])  # 1 x 1 x h x w

    def centres(axis: int) -> str:
        """Anchor-centre coordinate along ``axis`` (3: x, 2: y): (cumsum of ones - 1) * s."""
        index = g.op("Sub", [g.op("CumSum", [ones, g.const(axis, np.int64)]), g.const(1.0)])
        return g.op("Mul", [index, g.const(float(s))])

    cx, cy = centres(3), centres(2)

    def per_anchor(slot0: str, slot1: str) -> str:
        """(1,1,h,w) maps for anchors 0 and 1 -> (h*w*2, 1), in SCRFD's anchor order."""
        both = g.op("Concat", [slot0, slot1], axis=1)
        nhwc = g.op("Transpose", [both], perm=[0, 2, 3, 1])
        return g.op("Reshape", [nhwc, g.const(np.array([-1, 1]), np.int64)])

    def distance(fraction: float, size: str, centre: str, sign: float) -> str:
        """(target - centre) / s * sign: the distance SCRFD multiplies by the stride."""
        target = g.op("Mul", [size, g.const(fraction)])
        return g.op("Mul", [g.op("Sub", [target, centre]), g.const(sign / s)])

    def columns(face: FakeFace) -> list[str]:
        x1, y1, x2, y2 = face.box
        box = [
            distance(x1, width, cx, -1),
            distance(y1, height, cy, -1),
            distance(x2, width, cx, 1),
            distance(y2, height, cy, 1),
        ]
        kps_x = [distance(kx, width, cx, 1) for kx, _ in face.kps]
        kps_y = [distance(ky, height, cy, 1) for _, ky in face.kps]
        return box + [d for pair in zip(kps_x, kps_y) for d in pair]  # x0, y0, x1, y1, ...

    score = per_anchor(*(g.op("Mul", [ones, g.op("Mul", [gate, g.const(f.score)])]) for f in faces))
    dists = [per_anchor(a, b) for a, b in zip(*(columns(f) for f in faces))]
    return score, dists[:4], dists[4:]


def make_pack(directory: Path, faces: tuple[FakeFace, FakeFace] = (ALIGNED_CROP, ALIGNED_CROP)) -> Path:
    """A folder laid out like buffalo_l with the two files FSS needs."""
    directory.mkdir(parents=True, exist_ok=True)
    fake_detector(directory / "det_10g.onnx", faces)
    fake_recognizer(directory / "w600k_r50.onnx")
    return directory


class _Graph:
    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._n = 0

    def _name(self, prefix: str) -> str:
        self._n += 1
        return f"{prefix}_{self._n}"

    def const(self, value: float | int | np.ndarray, dtype: type = np.float32) -> str:
        name = self._name("c")
        self.initializers.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def op(self, op_type: str, inputs: list[str], out: str | None = None, **attrs: object) -> str:
        output = out or self._name(op_type.lower())
        # Node names avoid "Sub"/"Mul" prefixes: insightface reads those as an mxnet model.
        name = self._name(f"node_{op_type.lower()}")
        self.nodes.append(helper.make_node(op_type, inputs, [output], name=name, **attrs))
        return output


def _save(graph: onnx.GraphProto, path: Path) -> Path:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=8)
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(path))
    return path
