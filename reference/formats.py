"""Narrow number formats used by Kimi checkpoints, written from their definitions (spec §7.1-7.2).

Every encoder rounds to nearest, ties to even, and saturates (no inf); decoders return float64.
Codes are kept as unsigned integers (bf16 -> uint16 bits, e4m3/e2m1/e8m0 -> uint8 codes).

  bf16   : top 16 bits of IEEE float32; RNE from float32; NaN -> quiet NaN.
  E4M3   : S.EEEE.MMM, bias 7, subnormals, max 448, no inf, NaN = S.1111.111 (0x7F / 0xFF).
  E8M0   : unsigned exponent, value 2^(e-127); 0xFF = NaN.
  E2M1   : S.EE.M, magnitudes {0, .5, 1, 1.5, 2, 3, 4, 6}; nibble = sign<<3 | magnitude code.
  MXFP4  : (weights, spec §7.2) groups of 32 along the input dim, one E8M0 scale per group,
           scale exponent = floor(log2(amax)) - 2 (OCP MX: emax(E2M1) = 2); byte i of a row holds
           element 2i in its LOW nibble and element 2i+1 in its HIGH nibble.
           weight_packed U8 [out, in/2], weight_scale U8 [out, in/32].
  FP8 block (DeepSeek-V3/K2 style): per BxB tile scale = amax/448 (float32), stored weight =
           E4M3(w / scale) with dtype F8_E4M3, weight_scale_inv = scale, F32 [ceil(out/B), ceil(in/B)];
           dequant = e4m3 * weight_scale_inv.
  MXFP8 activation emulation (spec §7.1, §13.7): blocks of 32 along the last dim, scale
           2^(floor(log2 amax) - 8) (emax(E4M3) = 8, floor rounding of the scale), elements RNE to
           E4M3 with saturation; an all-zero block stays zero.
"""
import numpy as np

E2M1_VALUES = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])
E2M1_LUT = np.concatenate([E2M1_VALUES, -E2M1_VALUES])  # nibble -> value (nibble 8 is -0)


# ---------------------------------------------------------------- bf16
def f32_to_bf16_bits(x):
    """float32 (or anything castable) -> uint16 bf16 bits, round to nearest even."""
    f = np.ascontiguousarray(x, dtype=np.float32)
    b = f.view(np.uint32).astype(np.uint64)
    rounded = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF
    nan = np.isnan(f)
    quiet = ((b >> 16) & 0x8000) | 0x7FC0
    return np.where(nan, quiet, rounded).astype(np.uint16)


def bf16_bits_to_f64(bits):
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def bf16_round(x):
    """Value of x after a float32 -> bf16 round trip (float64 result)."""
    return bf16_bits_to_f64(f32_to_bf16_bits(x))


# ---------------------------------------------------------------- E4M3
def _e4m3_table():
    c = np.arange(256)
    s, e, m = c >> 7, (c >> 3) & 0xF, c & 7
    mag = np.where(e == 0, m / 8.0 * 2.0 ** -6, (1 + m / 8.0) * 2.0 ** (e - 7.0))
    val = np.where(s == 1, -mag, mag)
    val[(e == 15) & (m == 7)] = np.nan
    return val


E4M3_TABLE = _e4m3_table()          # code -> value (float64); 0x7F and 0xFF are NaN
E4M3_POSITIVE = E4M3_TABLE[:127]    # codes 0..126: 0 .. 448, strictly increasing
E4M3_MAX = 448.0


def _round_to_grid(a, grid):
    """a >= 0 (float64) -> index into the increasing grid; nearest, ties to the even index,
    saturating at the last entry.  For E4M3/E2M1 the index is the magnitude code and an even
    index is an even mantissa, so this is IEEE round-to-nearest-even."""
    a = np.minimum(a, grid[-1])
    hi = np.clip(np.searchsorted(grid, a, side="left"), 0, len(grid) - 1)
    lo = np.maximum(hi - 1, 0)
    d_lo, d_hi = a - grid[lo], grid[hi] - a
    take_hi = (d_hi < d_lo) | ((d_hi == d_lo) & (hi % 2 == 0))
    return np.where(take_hi, hi, lo)


def e4m3_encode(x):
    """float -> E4M3 code (uint8): RNE, saturate to +-448 (inf too), NaN -> 0x7F; sign kept on zero."""
    x = np.asarray(x, dtype=np.float64)
    nan = np.isnan(x)
    a = np.where(nan, 0.0, np.abs(x))
    code = _round_to_grid(a, E4M3_POSITIVE) | (np.signbit(x).astype(np.int64) << 7)
    return np.where(nan, 0x7F, code).astype(np.uint8)


def e4m3_decode(codes):
    return E4M3_TABLE[np.asarray(codes, dtype=np.uint8)]


# ---------------------------------------------------------------- E8M0
def e8m0_decode(e):
    e = np.asarray(e, dtype=np.uint8)
    return np.where(e == 0xFF, np.nan, np.ldexp(1.0, e.astype(np.int64) - 127))


def _floor_log2(a):
    """floor(log2(a)) exactly, for a > 0 (frexp: a = m * 2^ex with m in [0.5, 1))."""
    _, ex = np.frexp(np.asarray(a, dtype=np.float64))
    return ex.astype(np.int64) - 1


# ---------------------------------------------------------------- MXFP4 weights
def mxfp4_quantize(w):
    """w [out, in] (in % 32 == 0) -> (weight_packed U8 [out, in/2], weight_scale U8 [out, in/32])."""
    w = np.asarray(w, dtype=np.float64)
    out, n = w.shape
    assert n % 32 == 0, "MXFP4 input dim must be a multiple of 32"
    g = w.reshape(out, n // 32, 32)
    amax = np.abs(g).max(axis=-1)
    e = np.clip(np.where(amax > 0, _floor_log2(np.where(amax > 0, amax, 1.0)) - 2, 0) + 127, 0, 254)
    r = g / np.ldexp(1.0, e - 127)[..., None]
    nib = _round_to_grid(np.abs(r), E2M1_VALUES) | (np.signbit(r).astype(np.int64) << 3)
    nib = nib.reshape(out, n)
    packed = (nib[:, 0::2] | (nib[:, 1::2] << 4)).astype(np.uint8)
    return packed, e.astype(np.uint8)


def mxfp4_dequantize(packed, scale):
    """(U8 [out, in/2], U8 [out, in/32]) -> float64 [out, in]; exact."""
    packed = np.asarray(packed, dtype=np.uint8)
    out, half = packed.shape
    vals = np.empty((out, 2 * half))
    vals[:, 0::2] = E2M1_LUT[packed & 0xF]
    vals[:, 1::2] = E2M1_LUT[packed >> 4]
    s = e8m0_decode(scale)
    assert s.shape == (out, 2 * half // 32), "weight_scale shape does not match weight_packed"
    return (vals.reshape(out, -1, 32) * s[..., None]).reshape(out, 2 * half)


# ---------------------------------------------------------------- INT4 pack-quantized weights
def int4_quantize(w):
    """w [out, in] (in % 32 == 0) -> compressed-tensors pack-quantized INT4 (checkpoints.md A1):
    (weight_packed I32 [out, in/8], weight_scale BF16 bits [out, in/32]).  Symmetric minmax
    observer: scale = bf16(amax / 7.5), q = clip(round(w / scale), -8, 7), nibble u = q + 8, element i
    of a row at bit offset 4*i (8 per little-endian int32 word, element 0 in bits 0-3)."""
    w = np.asarray(w, dtype=np.float64)
    out, n = w.shape
    assert n % 32 == 0, "INT4 group-32 input dim must be a multiple of 32"
    g = w.reshape(out, n // 32, 32)
    scale_bits = f32_to_bf16_bits((np.abs(g).max(axis=-1) / 7.5).astype(np.float32))
    scale = bf16_bits_to_f64(scale_bits)
    safe = np.where(scale > 0, scale, 1.0)[..., None]
    q = np.clip(np.round(g / safe), -8, 7).astype(np.int64).reshape(out, n)
    u = (q + 8).astype(np.uint64).reshape(out, n // 8, 8)
    words = np.zeros((out, n // 8), dtype=np.uint64)
    for i in range(8):
        words |= u[:, :, i] << np.uint64(4 * i)
    return words.astype(np.uint32).view(np.int32), scale_bits


def int4_dequantize(packed, scale_bits):
    """(I32 [out, in/8], BF16 bits [out, in/32]) -> float64 [out, in], from the definition: element
    8*j + i of a row is ((word_j >> 4i) & 0xF) - 8, times its group's scale.  Exact."""
    words = np.asarray(packed, dtype=np.int32).view(np.uint32).astype(np.uint64)
    out, nw = words.shape
    q = np.empty((out, nw, 8), dtype=np.int64)
    for i in range(8):
        q[:, :, i] = ((words >> np.uint64(4 * i)) & np.uint64(0xF)).astype(np.int64) - 8
    s = bf16_bits_to_f64(np.asarray(scale_bits, dtype=np.uint16))
    assert s.shape == (out, nw * 8 // 32), "weight_scale shape does not match weight_packed"
    return (q.reshape(out, -1, 32) * s[..., None]).reshape(out, nw * 8)


# ---------------------------------------------------------------- FP8 block weights
def _tiles(shape, b):
    return -(-shape[0] // b), -(-shape[1] // b)


def fp8_block_quantize(w, b):
    """w [out, in] -> (E4M3 codes U8 [out, in], weight_scale_inv F32 [ceil(out/b), ceil(in/b)])."""
    w = np.asarray(w, dtype=np.float64)
    ro, co = _tiles(w.shape, b)
    pad = np.zeros((ro * b, co * b))
    pad[:w.shape[0], :w.shape[1]] = w
    amax = np.abs(pad.reshape(ro, b, co, b)).max(axis=(1, 3))
    scale = (amax / E4M3_MAX).astype(np.float32)
    scale[scale == 0] = 1.0  # all-zero tile: any scale reproduces zeros
    full = np.repeat(np.repeat(scale.astype(np.float64), b, 0), b, 1)[:w.shape[0], :w.shape[1]]
    return e4m3_encode(w / full), scale


def fp8_block_dequantize(codes, scale_inv, b):
    codes = np.asarray(codes, dtype=np.uint8)
    ro, co = _tiles(codes.shape, b)
    s = np.asarray(scale_inv, dtype=np.float64)
    assert s.shape == (ro, co), f"weight_scale_inv shape {s.shape} != {(ro, co)} for block {b}"
    full = np.repeat(np.repeat(s, b, 0), b, 1)[:codes.shape[0], :codes.shape[1]]
    return e4m3_decode(codes) * full


# ---------------------------------------------------------------- MXFP8 activation emulation
def mxfp8_emulate(x, block=32):
    """Quantize-dequantize x along its last dim in blocks of 32 (a partial last block is padded
    with zeros for the amax).  Returns float64 of the same shape."""
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[-1]
    nb = -(-n // block)
    pad = np.zeros(x.shape[:-1] + (nb * block,))
    pad[..., :n] = x
    g = pad.reshape(x.shape[:-1] + (nb, block))
    amax = np.abs(g).max(axis=-1, keepdims=True)
    nz = amax > 0
    e = np.clip(np.where(nz, _floor_log2(np.where(nz, amax, 1.0)) - 8, 0), -127, 127)
    scale = np.ldexp(1.0, e)
    q = e4m3_decode(e4m3_encode(g / scale)) * scale
    q = np.where(nz, q, 0.0)
    return q.reshape(pad.shape)[..., :n]
