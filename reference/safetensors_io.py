"""Minimal safetensors reader/writer using only numpy (independent of the `safetensors` package).

File layout (https://github.com/huggingface/safetensors, "Format"):
  bytes [0, 8)        little-endian u64 N = header length
  bytes [8, 8+N)      UTF-8 JSON: {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}
                      padded with spaces so that 8+N is a multiple of 8
  bytes [8+N, ...)    tensor data; data_offsets are relative to the start of this region

Tensors are handled in their *storage* form: a numpy array whose dtype has the item size of the
safetensors dtype (BF16 -> uint16 bits, F8_E4M3 -> uint8 bits, ...) and whose shape is the logical
shape.  Decoding narrow formats to numbers is formats.py's job.

Sharded folders follow the Hugging Face convention: model-0000i-of-0000K.safetensors plus
model.safetensors.index.json {"metadata": {"total_size": bytes}, "weight_map": {name: file}}.
"""
import json
import math
import os

import numpy as np

# safetensors dtype -> numpy storage dtype (little-endian).
STORAGE = {
    "F64": np.dtype("<f8"), "F32": np.dtype("<f4"), "F16": np.dtype("<f2"), "BF16": np.dtype("<u2"),
    "I64": np.dtype("<i8"), "I32": np.dtype("<i4"), "I16": np.dtype("<i2"), "I8": np.dtype("i1"),
    "U64": np.dtype("<u8"), "U32": np.dtype("<u4"), "U16": np.dtype("<u2"), "U8": np.dtype("u1"),
    "BOOL": np.dtype("u1"), "F8_E4M3": np.dtype("u1"), "F8_E5M2": np.dtype("u1"), "F8_E8M0": np.dtype("u1"),
}


class Spec:
    """A tensor to write: name, safetensors dtype, logical shape and either the array or a
    zero-argument callable producing it (so large checkpoints are generated one tensor at a time)."""

    def __init__(self, name, dtype, shape, data):
        self.name, self.dtype, self.shape, self.data = name, dtype, [int(s) for s in shape], data

    @property
    def nbytes(self):
        return int(math.prod(self.shape)) * STORAGE[self.dtype].itemsize

    def array(self):
        a = self.data() if callable(self.data) else self.data
        if np.asarray(a).dtype.newbyteorder("<") != STORAGE[self.dtype]:  # no silent numeric casts
            raise TypeError(f"{self.name}: array dtype {np.asarray(a).dtype} is not storage of {self.dtype}")
        a = np.ascontiguousarray(a, dtype=STORAGE[self.dtype])
        if list(a.shape) != self.shape:
            raise ValueError(f"{self.name}: produced shape {list(a.shape)}, declared {self.shape}")
        return a


def _header_bytes(specs, metadata):
    header, off = {}, 0
    for s in specs:
        header[s.name] = {"dtype": s.dtype, "shape": s.shape, "data_offsets": [off, off + s.nbytes]}
        off += s.nbytes
    header["__metadata__"] = dict(metadata or {"format": "pt"})
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * ((-(8 + len(raw))) % 8)  # 8 + N is a multiple of 8
    return raw


def write_file(path, specs, metadata=None):
    """Write one .safetensors file from a list of Spec (or a dict name -> (dtype, array))."""
    if isinstance(specs, dict):
        specs = [Spec(n, dt, np.shape(a), a) for n, (dt, a) in specs.items()]
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise ValueError("duplicate tensor names")
    raw = _header_bytes(specs, metadata)
    with open(path, "wb") as f:
        f.write(np.uint64(len(raw)).astype("<u8").tobytes())
        f.write(raw)
        for s in specs:
            f.write(s.array().tobytes())


def write_sharded(folder, specs, max_shard_bytes=1 << 30, min_shards=2):
    """Split specs (in order) over K >= min_shards files of roughly equal size and write the index.
    Returns the list of shard file names."""
    total = sum(s.nbytes for s in specs)
    k = max(min_shards, math.ceil(total / max_shard_bytes))
    target = max(total / k, 1)
    groups = [[] for _ in range(k)]
    acc = 0
    for s in specs:  # a tensor goes to the shard holding its midpoint in the byte stream
        groups[min(k - 1, int((acc + s.nbytes / 2) // target))].append(s)
        acc += s.nbytes
    groups = [g for g in groups if g]
    if len(groups) < min_shards <= len(specs):  # degenerate sizes: move tail tensors out
        flat = [s for g in groups for s in g]
        groups = [flat[:len(flat) - min_shards + 1]] + [[s] for s in flat[len(flat) - min_shards + 1:]]
    k = len(groups)
    files, weight_map = [], {}
    for i, g in enumerate(groups):
        fname = f"model-{i + 1:05d}-of-{k:05d}.safetensors"
        write_file(os.path.join(folder, fname), g)
        files.append(fname)
        for s in g:
            weight_map[s.name] = fname
    index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
        json.dump(index, f, indent=2)
        f.write("\n")
    return files


def read_header(path):
    with open(path, "rb") as f:
        n = int(np.frombuffer(f.read(8), "<u8")[0])
        header = json.loads(f.read(n).decode("utf-8"))
    return n, header


def read_file(path):
    """Return {name: (dtype, storage array)}; arrays are read-only views of a memory map."""
    n, header = read_header(path)
    size = os.path.getsize(path)
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + n, shape=(size - 8 - n,))
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dt, shape = info["dtype"], [int(x) for x in info["shape"]]
        b, e = info["data_offsets"]
        want = int(math.prod(shape)) * STORAGE[dt].itemsize
        if not (0 <= b <= e <= data.shape[0]) or e - b != want:
            raise ValueError(f"{path}: bad data_offsets for {name}")
        out[name] = (dt, data[b:e].view(STORAGE[dt]).reshape(shape))
    return out


def read_folder(folder):
    """All tensors of a checkpoint folder (index + shards, or a single model.safetensors)."""
    index = os.path.join(folder, "model.safetensors.index.json")
    if not os.path.exists(index):
        return read_file(os.path.join(folder, "model.safetensors"))
    with open(index) as f:
        weight_map = json.load(f)["weight_map"]
    out = {}
    for fname in sorted(set(weight_map.values())):
        for name, t in read_file(os.path.join(folder, fname)).items():
            if weight_map.get(name) != fname:
                raise ValueError(f"{fname}: tensor {name} not mapped to this shard by the index")
            out[name] = t
    missing = set(weight_map) - set(out)
    if missing:
        raise ValueError(f"index names tensors absent from the shards: {sorted(missing)[:5]}")
    return out
