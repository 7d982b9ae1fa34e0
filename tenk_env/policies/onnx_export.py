"""The ONNX form of a ``tenk train`` PPO actor (``tenk zoo export NAME --onnx``), played by
``onnx:PATH`` agents (:mod:`tenk_env.policies.onnx_agent`, which states the model contract).

Both policy heads are written as plain ONNX operators: the MLP, and the keep-aware head's
term with its scoring-table features as constant tables and its score features computed
from the observation, so the model needs nothing of tenk to run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from tenk_env.io import atomic_write_bytes
from tenk_env.obs import obs_size
from tenk_env.policies.onnx_agent import META_KEY
from tenk_env.policies.ppo import POW7, TABLE_FEATURES, NumpyActor
from tenk_env.rules_obs import RULES_OBS_SIZE, reads_rules

__all__ = ["export_actor", "OPSET"]

#: the ONNX operator set exported models use (Einsum needs 12; 17 is read by every current runtime)
OPSET = 17


class _Graph:
    """A small ONNX graph builder: nodes, constant tables, fresh names."""

    def __init__(self):
        # onnx takes half a second to import: on export, not at every `tenk` start
        from onnx import TensorProto, helper, numpy_helper

        self.helper, self.numpy_helper, self.FLOAT, self.INT64 = (
            helper,
            numpy_helper,
            TensorProto.FLOAT,
            TensorProto.INT64,
        )
        self.nodes: list = []
        self.inits: list = []
        self._n = 0

    def name(self, stem: str) -> str:
        self._n += 1
        return f"{stem}_{self._n}"

    def const(self, value: np.ndarray, stem: str = "c") -> str:
        n = self.name(stem)
        self.inits.append(self.numpy_helper.from_array(np.asarray(value), n))
        return n

    def op(self, kind: str, *inputs: str, **attrs: Any) -> str:
        out = self.name(kind.lower())
        self.nodes.append(self.helper.make_node(kind, list(inputs), [out], **attrs))
        return out

    def cols(self, x: str, start: int, end: int, step: int = 1) -> str:
        """x[:, start:end:step]."""
        return self.op(
            "Slice",
            x,
            self.const(np.array([start], np.int64)),
            self.const(np.array([end], np.int64)),
            self.const(np.array([1], np.int64)),
            self.const(np.array([step], np.int64)),
        )

    def f32(self, v: float) -> str:
        return self.const(np.array(v, np.float32))


def export_actor(actor: NumpyActor, meta: Mapping[str, Any], path: str | Path) -> Path:
    """Write ``actor`` (a ``tenk train`` PPO actor, either policy head) as an ONNX model at
    ``path``, with ``meta`` (its checkpoint metadata) as the ``tenk_meta`` property."""
    g = _Graph()
    helper = g.helper
    # the rules observation follows the env's where the policy reads it
    D = obs_size(int(meta["n_players"])) + (RULES_OBS_SIZE if reads_rules(meta) else 0)
    h = "obs"
    act = "Tanh" if actor.activation == "tanh" else "Relu"
    for w, b in actor.layers:  # stored transposed: (in, out)
        h = g.op(act, g.op("Add", g.op("MatMul", h, g.const(w, "w")), g.const(b, "b")))
    w, b = actor.head
    out = g.op("Add", g.op("MatMul", h, g.const(w, "w")), g.const(b, "b"))
    if actor.keep is not None:
        out = g.op("Add", out, _keep_term(g, actor, h, D))
    g.nodes.append(helper.make_node("Identity", [out], ["logits"]))
    A = actor.head[0].shape[1]
    graph = helper.make_graph(
        g.nodes,
        "tenk_actor",
        [helper.make_tensor_value_info("obs", g.FLOAT, ["batch", D])],
        [helper.make_tensor_value_info("logits", g.FLOAT, ["batch", A])],
        g.inits,
    )
    model = helper.make_model(graph, producer_name="tenk", opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8  # the oldest that opset 17 allows: runtimes of the last few years read it
    helper.set_model_props(model, {META_KEY: json.dumps(dict(meta), sort_keys=True)})
    from onnx.checker import check_model  # imported by _Graph already

    check_model(model)
    path = Path(path)
    atomic_write_bytes(path, model.SerializeToString())
    return path


def _keep_term(g: _Graph, actor: NumpyActor, h: str, D: int) -> str:
    """The keep-aware head's term (:class:`~tenk_env.policies.ppo.NumpyActor`): the scoring
    table's features of each action on the roll shown, the three score features, weighed by
    a linear layer of the hidden state."""
    nd, target = float(actor.num_dice), float(actor.target)
    counts = g.op("Round", g.op("Mul", g.cols("obs", 36, 42), g.f32(nd)))
    # the roll's key (< 7**6, exact in float32), its row of the table
    key = g.op("Cast", g.op("MatMul", counts, g.const(POW7.astype(np.float32), "pow7")), to=g.INT64)
    row = g.op("Gather", g.const(actor.key_to_row.astype(np.int64), "key_to_row"), key, axis=0)
    F = g.op("Gather", g.const(actor.table.astype(np.float32), "table"), row, axis=0)  # (B, A, 11)

    def feature(j: int) -> str:  # F[:, :, j]
        bounds = (g.const(np.array([v], np.int64)) for v in (j, j + 1, 2))
        return g.op("Squeeze", g.op("Slice", F, *bounds), g.const(np.array([2], np.int64)))

    bank, pts = feature(2), feature(1)
    total = g.op("Mul", g.op("Add", g.cols("obs", 56, 57), g.cols("obs", 43, 44)), g.f32(target))  # (B, 1)
    lead = g.op("Mul", g.op("ReduceMax", g.cols("obs", 61, D, 5), axes=[1], keepdims=1), g.f32(target))
    final = g.cols("obs", 55, 56)
    banked = g.op("Add", total, g.op("Mul", pts, g.f32(1000.0)))
    one = g.f32(1.0)
    ahead = g.op("Cast", g.op("Greater", banked, g.op("Add", lead, g.f32(0.5))), to=g.FLOAT)
    reach = g.op("Cast", g.op("Greater", banked, g.f32(target - 0.5)), to=g.FLOAT)
    f11 = g.op("Mul", bank, ahead)
    f12 = g.op("Mul", g.op("Mul", bank, reach), g.op("Sub", one, final))
    f13 = g.op("Mul", g.op("Mul", bank, final), g.op("Sub", one, ahead))
    axis2 = g.const(np.array([2], np.int64))
    S = g.op("Concat", *(g.op("Unsqueeze", f, axis2) for f in (f11, f12, f13)), axis=2)
    F2 = g.op("Concat", F, S, axis=2)  # (B, A, 14)
    kw, kb = actor.keep
    wgt = g.op("Add", g.op("MatMul", h, g.const(kw, "kw")), g.const(kb, "kb"))  # (B, 14)
    assert actor.table.shape[2] == TABLE_FEATURES
    return g.op("Einsum", F2, wgt, equation="baj,bj->ba")
