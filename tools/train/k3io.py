"""Checkpoint bytes for the training code: safetensors read/write, BF16 and MXFP4 (spec model.md §7).

Written from the formats' definitions with torch and numpy only, apart from reference/ (which
checks it: test_parity.py loads what this writes in the float64 reference and in `k3 generate`).

  safetensors : u64 LE header length N, JSON header (padded with spaces to 8 + N = 0 mod 8),
                data; data_offsets relative to the data start.
  BF16        : float32 rounded to nearest even (torch's own float32 -> bfloat16 cast).
  MXFP4       : groups of 32 along the input dim share an E8M0 scale 2^(floor(log2 amax) - 2);
                elements are E2M1 {0,.5,1,1.5,2,3,4,6} rounded to nearest, ties to the even code,
                saturating at 6; nibble = sign<<3 | code; byte i of a row = element 2i (low nibble)
                | element 2i+1 (high nibble).  weight_packed U8 [out, in/2], weight_scale U8
                [out, in/32].
"""
import json
import math
import os

import numpy as np
import torch

_NP = {"F64": "<f8", "F32": "<f4", "BF16": "<u2", "U8": "u1", "I32": "<i4", "I64": "<i8", "BOOL": "?"}
E2M1 = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


# ---------------------------------------------------------------- safetensors
def write_safetensors(path, tensors):
    """tensors: {name: (dtype, numpy array in storage form)}, written in the given order."""
    header, off = {}, 0
    for name, (dt, a) in tensors.items():
        n = a.size * np.dtype(_NP[dt]).itemsize
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [off, off + n]}
        off += n
    header["__metadata__"] = {"format": "pt"}
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * ((-(8 + len(raw))) % 8)
    with open(path, "wb") as f:
        f.write(len(raw).to_bytes(8, "little"))
        f.write(raw)
        for dt, a in tensors.values():
            f.write(np.ascontiguousarray(a, dtype=_NP[dt]).tobytes())


def read_safetensors(folder):
    """{name: (dtype, numpy storage array)} from model.safetensors or an index + shards."""
    index = os.path.join(folder, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = ["model.safetensors"]
    out = {}
    for fname in files:
        with open(os.path.join(folder, fname), "rb") as f:
            n = int.from_bytes(f.read(8), "little")
            header = json.loads(f.read(n))
            data = f.read()
        for name, info in header.items():
            if name == "__metadata__":
                continue
            b, e = info["data_offsets"]
            shape = [int(s) for s in info["shape"]]
            out[name] = (info["dtype"], np.frombuffer(data[b:e], _NP[info["dtype"]]).reshape(shape))
    return out


# ---------------------------------------------------------------- BF16
def to_bf16_bits(t):
    """float tensor -> uint16 numpy bits (round to nearest even)."""
    return t.detach().to(torch.float32).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)


def from_bf16_bits(a):
    return torch.from_numpy(a.astype(np.int32) << 16).view(torch.float32)


def to_float(dt, a):
    """A stored BF16/F32/F64 tensor as a float64 torch tensor (exact)."""
    if dt == "BF16":
        return from_bf16_bits(a).double()
    return torch.from_numpy(np.array(a, dtype=_NP[dt])).double()


# ---------------------------------------------------------------- MXFP4
def _e2m1_code(a):
    """|value| / scale (>= 0) -> E2M1 magnitude code 0..7, nearest, ties to even, saturating."""
    up = [(0.25, False), (0.75, True), (1.25, False), (1.75, True), (2.5, False), (3.5, True), (5.0, False)]
    code = torch.zeros_like(a, dtype=torch.int64)
    for t, inclusive in up:  # a tie rounds to the neighbour with the even code
        code += (a >= t) if inclusive else (a > t)
    return code


def mxfp4_scale_exponent(w):
    """w [..., in] -> unbiased E8M0 exponent per group of 32 [..., in/32] (floor(log2 amax) - 2)."""
    g = w.reshape(*w.shape[:-1], w.shape[-1] // 32, 32)
    amax = g.abs().amax(-1)
    _, ex = torch.frexp(torch.where(amax > 0, amax, torch.ones_like(amax)))
    e = torch.where(amax > 0, ex.to(torch.int64) - 1 - 2, torch.zeros_like(ex, dtype=torch.int64))
    return e.clamp(-127, 127)


def mxfp4_fake_quant(w):
    """The value w takes after MXFP4 quantisation (same shape), differentiable as the identity
    (straight-through), for quantisation-aware training."""
    assert w.shape[-1] % 32 == 0, "MXFP4 input dim must be a multiple of 32"
    with torch.no_grad():
        scale = torch.pow(2.0, mxfp4_scale_exponent(w).to(w.dtype))
        g = w.reshape(*w.shape[:-1], w.shape[-1] // 32, 32) / scale[..., None]
        q = E2M1.to(w.device, w.dtype)[_e2m1_code(g.abs())] * torch.sign(g) * scale[..., None]
        q = q.reshape(w.shape)
    return w + (q - w).detach()


def mxfp4_pack(w):
    """w [out, in] float -> (weight_packed uint8 [out, in/2], weight_scale uint8 [out, in/32])."""
    w = w.detach().double()
    out, n = w.shape
    e = mxfp4_scale_exponent(w)
    g = w.reshape(out, n // 32, 32) / torch.pow(2.0, e.double())[..., None]
    nib = (_e2m1_code(g.abs()) | (torch.signbit(g).to(torch.int64) << 3)).reshape(out, n)
    packed = (nib[:, 0::2] | (nib[:, 1::2] << 4)).to(torch.uint8).numpy()
    return packed, (e + 127).to(torch.uint8).numpy()


def mxfp4_unpack(packed, scale):
    """(uint8 [out, in/2], uint8 [out, in/32]) -> float64 tensor [out, in]; exact."""
    p = torch.from_numpy(np.array(packed, dtype=np.uint8)).to(torch.int64)
    lut = torch.cat([E2M1, -E2M1]).double()
    out, half = p.shape
    vals = torch.empty(out, 2 * half, dtype=torch.float64)
    vals[:, 0::2], vals[:, 1::2] = lut[p & 15], lut[p >> 4]
    s = torch.pow(2.0, torch.from_numpy(np.array(scale, dtype=np.int64)).double() - 127)
    return (vals.reshape(out, -1, 32) * s[..., None]).reshape(out, 2 * half)


def num_params(tensors):
    return sum(math.prod(a.shape) for _, a in tensors.values())
