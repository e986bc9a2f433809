#!/usr/bin/env python3
"""Self-checks of the reference against itself and the spec:  /usr/bin/python3 reference/self_test.py

Formats (tables, RNE ties, saturation, brute-force nearest-value checks), safetensors round trips,
KDA chunked form (spec §2.4) == recurrent form, absorbed MLA (spec §3.1) == naive MLA, the RoPE pair
convention against the HF rotate_half layout, router / AttnRes hand examples, and every family
generated, run, causal and deterministic.  Prints a summary; exits 1 on any failure.
"""
import hashlib
import json
import math
import os
import sys
import tempfile
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import formats as F  # noqa: E402
import ops  # noqa: E402
import safetensors_io as st  # noqa: E402
import make_checkpoint as mc  # noqa: E402
import kimi_ref  # noqa: E402

RESULTS = []


def check(name):
    def deco(fn):
        try:
            fn()
            RESULTS.append((name, None))
        except Exception:  # noqa: BLE001 - report every failure, keep going
            RESULTS.append((name, traceback.format_exc()))
        return fn
    return deco


def nearest_ok(x, got, grid):
    """got must be a value of grid nearest to x (brute force over the whole grid)."""
    d_best = np.abs(x[..., None] - grid).min(axis=-1)
    assert np.all(np.abs(x - got) <= d_best * (1 + 1e-12) + 1e-300), "not a nearest grid value"


@check("bf16: RNE ties, NaN, overflow, all 65536 patterns round-trip")
def _():
    one = 1.0
    cases = [(one + 2 ** -8, 0x3F80), (one + 3 * 2 ** -8, 0x3F82), (one + 2 ** -8 + 2 ** -20, 0x3F81),
             (-(one + 2 ** -8), 0xBF80), (3.4028234663852886e38, 0x7F80), (0.0, 0x0000), (-0.0, 0x8000)]
    for v, bits in cases:
        assert int(F.f32_to_bf16_bits(np.float32(v))) == bits, (v, hex(int(F.f32_to_bf16_bits(np.float32(v)))))
    assert np.isnan(F.bf16_bits_to_f64(F.f32_to_bf16_bits(np.float32("nan"))))
    b = np.arange(65536, dtype=np.uint16)
    f = (b.astype(np.uint32) << 16).view(np.float32)
    keep = ~np.isnan(f)
    assert np.array_equal(F.f32_to_bf16_bits(f)[keep], b[keep])


@check("E4M3: all 256 codes from bit fields, encode/decode, ties to even, saturation")
def _():
    for c in range(256):
        s, e, m = c >> 7, (c >> 3) & 15, c & 7
        want = math.nan if (e == 15 and m == 7) else (-1) ** s * (math.ldexp(m, -9) if e == 0 else math.ldexp(8 + m, e - 10))
        got = F.E4M3_TABLE[c]
        assert (math.isnan(want) and math.isnan(got)) or got == want, (c, got, want)
    assert F.E4M3_TABLE[0x7E] == 448 and F.E4M3_TABLE[0x01] == 2 ** -9 and F.E4M3_TABLE[0x38] == 1.0
    codes = np.array([c for c in range(256) if c not in (0x7F, 0xFF)])
    assert np.array_equal(F.e4m3_encode(F.e4m3_decode(codes)), codes)
    pos = F.E4M3_POSITIVE
    mid = (pos[:-1] + pos[1:]) / 2
    lo = np.arange(126)
    assert np.array_equal(F.e4m3_encode(mid), np.where(lo % 2 == 0, lo, lo + 1))  # tie -> even code
    assert np.array_equal(F.e4m3_encode(np.nextafter(mid, np.inf)), lo + 1)
    sat = F.e4m3_encode(np.array([448, 460, 480, 1e9, np.inf, -np.inf, np.nan, -1e9]))
    assert sat.tolist() == [0x7E, 0x7E, 0x7E, 0x7E, 0x7E, 0xFE, 0x7F, 0xFE]
    x = np.random.default_rng(0).standard_normal(5000) * 30
    nearest_ok(x, F.e4m3_decode(F.e4m3_encode(x)), np.concatenate([pos, -pos]))


@check("E8M0 and E2M1 tables")
def _():
    assert F.e8m0_decode(np.array([127, 0, 254, 128])).tolist() == [1.0, 2.0 ** -127, 2.0 ** 127, 2.0]
    assert np.isnan(F.e8m0_decode(np.array([255]))[0])
    assert F.E2M1_LUT.tolist() == [0, .5, 1, 1.5, 2, 3, 4, 6, 0, -.5, -1, -1.5, -2, -3, -4, -6]
    assert np.signbit(F.E2M1_LUT[8])


@check("MXFP4: nibble order, scale rule, RNE/saturation, exact round trip, nearest values")
def _():
    row = np.zeros((1, 32))
    row[0, :4] = [0.5, 1.0, -6.0, 3.0]
    p, s = F.mxfp4_quantize(row)
    assert p.shape == (1, 16) and s.shape == (1, 1) and s[0, 0] == 127  # amax 6: floor(log2 6) - 2 = 0
    assert p[0, 0] == (0x1 | 0x2 << 4) and p[0, 1] == (0xF | 0x5 << 4)  # low nibble = even element
    t = np.zeros((1, 32))
    t[0, :6] = [7.9, 0.25, 0.75, 1.25, 2.5, 5.0]   # amax 7.9 -> scale 1; ties go to even codes
    assert F.mxfp4_dequantize(*F.mxfp4_quantize(t))[0, :6].tolist() == [6.0, 0.0, 1.0, 1.0, 2.0, 4.0]
    rng = np.random.default_rng(1)
    nib = rng.integers(0, 16, (8, 64))
    nib[:, ::32] = rng.choice([6, 7, 14, 15], (8, 2))  # each group reaches magnitude 4 or 6
    packed = (nib[:, 0::2] | nib[:, 1::2] << 4).astype(np.uint8)
    scale = rng.integers(100, 150, (8, 2)).astype(np.uint8)
    p2, s2 = F.mxfp4_quantize(F.mxfp4_dequantize(packed, scale))
    assert np.array_equal(p2, packed) and np.array_equal(s2, scale)
    w = rng.standard_normal((16, 96)) * 0.1
    p, s = F.mxfp4_quantize(w)
    amax = np.abs(w.reshape(16, 3, 32)).max(-1)
    assert np.array_equal(s.astype(int) - 127, np.floor(np.log2(amax)).astype(int) - 2)
    dq = F.mxfp4_dequantize(p, s).reshape(16, 3, 32)
    for i in range(16):
        for j in range(3):
            sc = 2.0 ** (int(s[i, j]) - 127)
            nearest_ok(w.reshape(16, 3, 32)[i, j], dq[i, j], F.E2M1_LUT * sc)


@check("FP8 block quantisation: partial tiles, scale = amax/448, nearest E4M3 values")
def _():
    rng = np.random.default_rng(2)
    w = rng.standard_normal((80, 100)) * 0.05
    codes, sinv = F.fp8_block_quantize(w, 32)
    assert codes.dtype == np.uint8 and sinv.dtype == np.float32 and sinv.shape == (3, 4)
    dq = F.fp8_block_dequantize(codes, sinv, 32)
    for bi in range(3):
        for bj in range(4):
            tile = w[bi * 32:(bi + 1) * 32, bj * 32:(bj + 1) * 32]
            assert sinv[bi, bj] == np.float32(np.abs(tile).max() / 448)
            sc = float(sinv[bi, bj])
            nearest_ok(tile / sc, dq[bi * 32:(bi + 1) * 32, bj * 32:(bj + 1) * 32] / sc,
                       F.E4M3_TABLE[np.isfinite(F.E4M3_TABLE)])


@check("MXFP8 activation emulation: zero blocks, scale rule, saturation, nearest values")
def _():
    x = np.zeros((2, 64))
    x[1, :32] = np.random.default_rng(3).standard_normal(32)
    x[1, 32] = 511.0 / 256  # amax 511/256: scale 2^(0-8); 511 saturates to 448
    q = F.mxfp8_emulate(x)
    assert np.all(q[0] == 0) and q[1, 32] == 448 / 256 and np.all(q[1, 33:] == 0)
    sc = 2.0 ** (math.floor(math.log2(np.abs(x[1, :32]).max())) - 8)
    nearest_ok(x[1, :32] / sc, q[1, :32] / sc, F.E4M3_TABLE[np.isfinite(F.E4M3_TABLE)])
    y = np.random.default_rng(4).standard_normal((3, 40))  # partial last block
    qy = F.mxfp8_emulate(y)
    assert qy.shape == y.shape
    grid = F.E4M3_TABLE[np.isfinite(F.E4M3_TABLE)]
    for r in range(3):
        for blk in (slice(0, 32), slice(32, 40)):  # values above 448*scale saturate (floor-rounded scale)
            sc = 2.0 ** (math.floor(math.log2(np.abs(y[r, blk]).max())) - 8)
            nearest_ok(y[r, blk] / sc, qy[r, blk] / sc, grid)


@check("safetensors: header layout, dtypes, exact read-back, sharded folder")
def _():
    rng = np.random.default_rng(5)
    t = {"a.bf16": ("BF16", F.f32_to_bf16_bits(rng.standard_normal((3, 5)))),
         "b.f32": ("F32", rng.standard_normal((7,)).astype(np.float32)),
         "c.u8": ("U8", rng.integers(0, 256, (4, 2, 3)).astype(np.uint8)),
         "d.fp8": ("F8_E4M3", rng.integers(0, 256, (2, 9)).astype(np.uint8)),
         "e.i64": ("I64", np.arange(5, dtype=np.int64)), "f.f16": ("F16", np.ones(3, np.float16))}
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "x.safetensors")
        st.write_file(path, t)
        n, header = st.read_header(path)
        assert (8 + n) % 8 == 0 and header["__metadata__"] == {"format": "pt"}
        back = st.read_file(path)
        for k, (dt, a) in t.items():
            assert back[k][0] == dt and np.array_equal(back[k][1], a) and back[k][1].shape == a.shape
        specs = [st.Spec(k, dt, a.shape, a) for k, (dt, a) in t.items()]
        files = st.write_sharded(d, specs, max_shard_bytes=1 << 30)
        assert len(files) >= 2
        index = json.load(open(os.path.join(d, "model.safetensors.index.json")))
        assert index["metadata"]["total_size"] == sum(s.nbytes for s in specs)
        back = st.read_folder(d)
        assert set(back) == set(t) and all(np.array_equal(back[k][1], t[k][1]) for k in t)


def kda_chunked(q, k, v, g, beta, chunk, state):
    """Spec §2.4 chunked (WY/UT) form, written independently of ops.kda_recurrent."""
    t_len, h, dk = k.shape
    s_all, o = state.copy(), np.zeros((t_len, h, v.shape[-1]))
    for hh in range(h):
        s = s_all[hh]
        for c0 in range(0, t_len, chunk):
            sl = slice(c0, min(c0 + chunk, t_len))
            qc, kc, vc, b = q[sl, hh], k[sl, hh], v[sl, hh], beta[sl, hh]
            gc = np.cumsum(g[sl, hh], axis=0)
            n = kc.shape[0]
            dec = np.exp(gc[:, None, :] - gc[None, :, :])                 # [r, i, d] = exp(G_r - G_i)
            a = np.tril(b[:, None] * np.einsum("rd,rid,id->ri", kc, dec, kc), -1)
            tm = np.linalg.solve(np.eye(n) + a, np.diag(b))
            w, u = tm @ (np.exp(gc) * kc), tm @ vc
            aqk = np.tril(np.einsum("rd,rjd,jd->rj", qc, dec, kc))
            vn = u - w @ s
            o[sl, hh] = (qc * np.exp(gc)) @ s + aqk @ vn
            s = np.exp(gc[-1])[:, None] * s + (np.exp(gc[-1][None, :] - gc) * kc).T @ vn
        s_all[hh] = s
    return o, s_all


@check("KDA: chunked form (C=16) == recurrent form to 1e-10; decay indexed by key channel")
def _():
    rng = np.random.default_rng(6)
    t, h, dk, dv = 37, 3, 8, 6
    q = ops.l2norm(rng.standard_normal((t, h, dk))) * dk ** -0.5
    k = ops.l2norm(rng.standard_normal((t, h, dk)))
    v = rng.standard_normal((t, h, dv))
    g = -5 * ops.sigmoid(rng.standard_normal((t, h, dk)) * 2)
    beta = ops.sigmoid(rng.standard_normal((t, h)))
    s0 = rng.standard_normal((h, dk, dv)) * 0.3
    o1, s1 = ops.kda_recurrent(q, k, v, g, beta, s0)
    o2, s2 = kda_chunked(q, k, v, g, beta, 16, s0)
    assert np.max(np.abs(o1 - o2)) < 1e-10 and np.max(np.abs(s1 - s2)) < 1e-10, np.max(np.abs(o1 - o2))
    s0 = np.ones((1, 2, 2))
    gg = np.array([[[-np.log(4.0), 0.0]]])   # decay only key channel 0
    o, s = ops.kda_recurrent(np.ones((1, 1, 2)), np.zeros((1, 1, 2)), np.zeros((1, 1, 2)), gg, np.zeros((1, 1)), s0)
    assert np.allclose(s[0], [[0.25, 0.25], [1.0, 1.0]]) and np.allclose(o[0, 0], [1.25, 1.25])


@check("MLA: absorbed form == naive form to 1e-10")
def _():
    rng = np.random.default_rng(7)
    t, h, dn, dr, dv, r = 9, 3, 8, 4, 5, 12
    ckv, k_pe = rng.standard_normal((t, r)), rng.standard_normal((t, dr))
    wkv_b = rng.standard_normal((h * (dn + dv), r)) * 0.3
    q_nope, q_pe = rng.standard_normal((t, h, dn)), rng.standard_normal((t, h, dr))
    kvb = (ckv @ wkv_b.T).reshape(t, h, dn + dv)
    naive = ops.mla_naive(q_nope, q_pe, kvb[..., :dn], k_pe, kvb[..., dn:], 0.3)
    wb = wkv_b.reshape(h, dn + dv, r)
    qt = np.einsum("thd,hdr->thr", q_nope, wb[:, :dn])                 # q~ = q_nope W_UK
    s = (np.einsum("thr,sr->hts", qt, ckv) + np.einsum("thd,sd->hts", q_pe, k_pe)) * 0.3
    s = np.where(np.tril(np.ones((t, t), bool))[None], s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    absorbed = np.einsum("thr,hvr->thv", np.einsum("hts,sr->thr", p, ckv), wb[:, dn:])
    assert np.max(np.abs(naive - absorbed)) < 1e-10


@check("RoPE: adjacent-pair rotation, == HF permuted rotate_half scores, YaRN ramp")
def _():
    x = np.array([[[1.0, 2.0, 3.0, 4.0]]])
    inv = np.array([0.5, 0.25])
    y = ops.rope_adjacent(x, np.array([2.0]), inv)[0, 0]
    c1, s1, c2, s2 = math.cos(1.0), math.sin(1.0), math.cos(0.5), math.sin(0.5)
    assert np.allclose(y, [1 * c1 - 2 * s1, 1 * s1 + 2 * c1, 3 * c2 - 4 * s2, 3 * s2 + 4 * c2])
    rng = np.random.default_rng(8)
    d, t = 16, 11
    inv = ops.yarn_inv_freq(d, 50000.0, mc.K2["rope_scaling"])
    qa, ka = rng.standard_normal((t, d)), rng.standard_normal((t, d))
    pos = np.arange(t, dtype=float)
    ours = ops.rope_adjacent(qa, pos, inv) @ ops.rope_adjacent(ka, pos, inv).T

    def hf(xx):  # modeling_deepseek: de-interleave, then x*cos + rotate_half(x)*sin
        xx = xx.reshape(t, d // 2, 2).transpose(0, 2, 1).reshape(t, d)
        ang = np.concatenate([np.outer(pos, inv)] * 2, axis=1)
        rot = np.concatenate([-xx[:, d // 2:], xx[:, :d // 2]], axis=1)
        return xx * np.cos(ang) + rot * np.sin(ang)
    assert np.max(np.abs(ours - hf(qa) @ hf(ka).T)) < 1e-12
    base = 1.0 / 50000.0 ** (np.arange(0, d, 2) / d)   # d=16, L=64, beta 1/1: low=1, high=2
    assert np.allclose(inv, np.concatenate([base[:2], base[2:] / 32.0]), rtol=1e-15)
    assert np.allclose(ops.yarn_inv_freq(d, 50000.0, None), base)


@check("router: bias selects only, grouped top-k by top-2 group sums, renorm + scaling")
def _():
    # 8 experts, 4 groups of 2; expert 0 is the single best but its group (0,1) sums low.
    s_target = np.array([0.95, 0.05, 0.7, 0.6, 0.8, 0.55, 0.1, 0.1])
    logits = np.log(s_target / (1 - s_target))
    bias = np.zeros(8)
    idx, w, gap = ops.route(logits[None], np.eye(8), bias, 2, 4, 2, True, 2.0)
    assert sorted(idx[0].tolist()) == [2, 4]                      # groups (2,3)=1.3, (4,5)=1.35 kept
    assert np.allclose(w[0][np.argsort(idx[0])], np.array([0.7, 0.8]) / 1.5 * 2.0)
    assert np.isclose(gap[0], min(1.3 - 1.0, 0.7 - 0.6))
    bias[3] = 0.2                                                   # lifts expert 3 over 2 for selection
    idx, w, _ = ops.route(logits[None], np.eye(8), bias, 2, 4, 2, False, 1.0)
    assert sorted(idx[0].tolist()) == [3, 4] and np.allclose(sorted(w[0]), [0.6, 0.8])  # unbiased weights


@check("AttnRes: empty-weight -> mean of sources; softmax over RMS-normalised keys")
def _():
    rng = np.random.default_rng(9)
    bank, prefix = [rng.standard_normal((3, 8)), rng.standard_normal((3, 8))], rng.standard_normal((3, 8))
    out = ops.attn_res(prefix, bank, np.ones(8), np.zeros((1, 8)), 1e-5)
    assert np.allclose(out, (bank[0] + bank[1] + prefix) / 3)
    wv = rng.standard_normal(8)
    sc = [(b / np.sqrt((b * b).mean(-1, keepdims=True) + 1e-5)) @ wv for b in bank + [prefix]]
    p = np.exp(np.stack(sc, 1))
    p /= p.sum(1, keepdims=True)
    assert np.allclose(ops.attn_res(prefix, bank, wv, np.ones((1, 8)), 1e-5),
                       sum(p[:, i:i + 1] * src for i, src in enumerate(bank + [prefix])))


def folder_hash(d):
    h = hashlib.sha256()
    for f in sorted(os.listdir(d)):
        h.update(open(os.path.join(d, f), "rb").read())
    return h.hexdigest()


def make(family, seed, out, override=None):
    top, text = mc.build_k25_config(override) if family == "k25" else mc.build_config(family, override)
    os.makedirs(out, exist_ok=True)
    json.dump(top, open(os.path.join(out, "config.json"), "w"))
    st.write_sharded(out, mc.build_specs(family, text, seed))


def family_check(family, expect):
    @check(f"{family}: generate, layout, run, causal, deterministic, MXFP8 path")
    def _():
        with tempfile.TemporaryDirectory() as d:
            a, b, c = (os.path.join(d, n) for n in "abc")
            make(family, 11, a)
            make(family, 11, b)
            make(family, 12, c)
            assert folder_hash(a) == folder_hash(b) != folder_hash(c)
            raw = st.read_folder(a)
            expect(raw)
            m = kimi_ref.Model(a)
            ids = [1, 5, 9, 13, 100, 200, 300, 400, 17, 33, 65, 129, 257, 511, 3, 4]
            logits, gaps = m.forward(ids)
            assert logits.shape == (16, 512) and np.all(np.isfinite(logits)) and np.all(gaps > 0)
            assert not m.w.unused(), m.w.unused()[:5]
            part, _ = m.forward(ids[:7])
            assert np.max(np.abs(part - logits[:7])) < 1e-12, "future tokens leak into the past"
            pre, _, dec, gen, _ = kimi_ref.generate(m, ids, 3)
            assert np.array_equal(dec[0], logits[-1]) and gen[0] == int(np.argmax(logits[-1]))
            mx = kimi_ref.Model(a, mxfp8_experts=True).forward(ids)[0]
            diff = np.median(np.abs(mx - logits))  # E4M3 activations: ~0.1 on these tiny models
            assert 1e-6 < diff < 1.0, diff
    return _


def expect_k3(raw):
    p = "language_model.model.layers."
    assert raw[p + "0.self_attn.A_log"][0] == "F32" and raw[p + "0.self_attn.A_log"][1].shape == (32,)
    assert np.all(raw[p + "0.self_attn.A_log"][1][4:] == 0)
    assert raw[p + "0.self_attn.q_conv1d.weight"][1].shape == (128, 1, 4)
    assert raw[p + "2.self_attn.q_b_proj.weight"][1].shape == (4 * 48, 64)
    assert raw[p + "2.self_attn.g_proj.weight"][1].shape == (128, 128)
    assert raw[p + "1.block_sparse_moe.experts.15.w2.weight_packed"][1].shape == (64, 32)
    assert raw[p + "1.block_sparse_moe.experts.15.w1.weight_scale"][1].shape == (64, 2)
    assert "language_model.lm_head.weight" in raw and "language_model.model.output_attn_res_proj.weight" in raw
    assert sum(n.endswith("weight_packed") for n in raw) == 5 * 16 * 3


def expect_kimi_linear(raw):
    p = "model.layers."
    assert raw[p + "0.self_attn.A_log"][1].shape == (1, 1, 4, 1)
    assert raw[p + "0.self_attn.g_b_proj.weight"][1].shape == (128, 32)
    assert raw[p + "3.self_attn.q_proj.weight"][1].shape == (4 * 48, 128)
    assert raw[p + "1.block_sparse_moe.experts.0.w1.weight"][0] == "BF16"
    assert not any("attn_res" in n or n.startswith("language_model") for n in raw)


def expect_k2(raw):
    lin = [n for n in raw if n.endswith(".weight") and raw[n][0] == "F8_E4M3"]
    assert all(n[:-len("weight")] + "weight_scale_inv" in raw for n in lin)
    assert raw["model.layers.1.self_attn.kv_a_proj_with_mqa.weight_scale_inv"][1].shape == (3, 4)
    assert raw["model.layers.1.mlp.gate.weight"][0] == "BF16" and raw["lm_head.weight"][0] == "BF16"
    assert raw["model.layers.1.mlp.experts.7.down_proj.weight"][0] == "F8_E4M3"
    assert len(lin) == 4 * 5 + 3 + 3 * (3 * 16 + 3)


def expect_k25(raw):
    p = "language_model.model.layers."
    packed = [n for n in raw if n.endswith("weight_packed")]
    assert len(packed) == 3 * 16 * 3 and all(raw[n][0] == "I32" for n in packed)
    e = p + "1.mlp.experts.7.down_proj."
    assert raw[e + "weight_packed"][1].shape == (128, 8) and raw[e + "weight_scale"][0] == "BF16"
    assert raw[e + "weight_scale"][1].shape == (128, 2)
    assert list(raw[e + "weight_shape"][1]) == [128, 64] and raw[e + "weight_shape"][0] == "I32"
    assert raw[p + "1.self_attn.kv_a_proj_with_mqa.weight"][0] == "BF16"
    assert raw[p + "1.mlp.shared_experts.up_proj.weight"][0] == "BF16"
    assert "language_model.lm_head.weight" in raw and not any(n.startswith("model.") for n in raw)
    nibbles = np.concatenate([(raw[n][1].view(np.uint32)[..., None] >> np.arange(0, 32, 4, dtype=np.uint32)) & 15
                              for n in packed], axis=None)
    assert set(np.unique(nibbles)) == set(range(16)), "every nibble, -8 included, must occur"


family_check("k3", expect_k3)
family_check("kimi_linear", expect_kimi_linear)
family_check("k2", expect_k2)
family_check("k25", expect_k25)


@check("INT4 pack-quantized: the worked example of checkpoints.md A1.4, round trip, every nibble")
def _():
    word = np.array([[0x9A7F0818, 0, 0, 0]], dtype=np.uint32).view(np.int32)
    got = F.int4_dequantize(word, np.array([[0x3C00]], dtype=np.uint16))
    want = [0, -0.0546875, 0, -0.0625, 0.0546875, -0.0078125, 0.015625, 0.0078125]
    assert np.array_equal(got[0, :8], want), got[0, :8]
    assert np.all(got[0, 8:] == -0.0625)  # zero words: nibble 0 is -8
    assert bytes(word.tobytes()[:4]) == bytes([0x18, 0x08, 0x7F, 0x9A])
    rng = np.random.default_rng(5)
    for scale_exp in (-20, -7, 0, 9):
        w = rng.standard_normal((6, 64)) * 2.0 ** scale_exp
        packed, bits = F.int4_quantize(w)
        back = F.int4_dequantize(packed, bits)
        s = np.repeat(F.bf16_bits_to_f64(bits), 32, axis=1)
        # rounding, and the +7 clip after the scale's BF16 rounding (relative 2^-8): 0.5 + 7.5 * 2^-8
        assert np.all(np.abs(back - w) <= 0.53 * s), scale_exp
    words = np.array([[sum(((i + j) % 16) << (4 * j) for j in range(8)) for i in range(16)]], dtype=np.uint32)
    vals = F.int4_dequantize(words.view(np.int32).reshape(1, 16), np.ones((1, 4), np.uint16) * 0x3F80)
    assert np.array_equal(vals.reshape(16, 8), [[((i + j) % 16) - 8 for j in range(8)] for i in range(16)])


@check("--override: larger dims generate and run")
def _():
    with tempfile.TemporaryDirectory() as d:
        make("k3", 3, d, {"hidden_size": 96, "num_experts": 8, "routed_expert_hidden_size": 96,
                          "linear_attn_config": {"num_heads": 2}})
        assert np.all(np.isfinite(kimi_ref.Model(d).forward([1, 2, 3])[0]))


if __name__ == "__main__":
    for name, err in RESULTS:
        print(("PASS  " if err is None else "FAIL  ") + name)
        if err:
            print(err)
    bad = sum(err is not None for _, err in RESULTS)
    print(f"{len(RESULTS) - bad}/{len(RESULTS)} checks passed")
    sys.exit(1 if bad else 0)
