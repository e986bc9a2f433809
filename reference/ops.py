"""float64 building blocks of the Kimi forward pass, each in its simplest form (spec model.md §2-5).

Conventions: activations are [T, ...] float64 arrays for one sequence; torch Linear weights are
[out, in] and applied as x @ W.T.
"""
import math

import numpy as np


def sigmoid(x):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def silu(x):
    return x * sigmoid(x)


def softplus(x):
    return np.logaddexp(0.0, x)


def rms_norm(x, w, eps):
    """x * rsqrt(mean(x^2) + eps) * w over the last dim (w=None: no weight)."""
    y = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    return y if w is None else y * w


def glu_act(act, situ_beta=4.0, situ_linear_beta=25.0):
    """Returns f(gate, up) for hidden_act: silu -> silu(g)*u; situ (spec §4.3) ->
    [b*tanh(g/b)*sigmoid(g)] * [bl*tanh(u/bl)]."""
    if act == "silu":
        return lambda g, u: silu(g) * u
    if act == "situ":
        b, bl = situ_beta, situ_linear_beta
        return lambda g, u: (b * np.tanh(g / b) * sigmoid(g)) * (bl * np.tanh(u / bl))
    raise ValueError(f"unsupported hidden_act {act}")


# ---------------------------------------------------------------- KDA (spec §2)
def causal_conv(x, w):
    """Depthwise causal conv, no bias: y_t[c] = sum_i w[c,0,i] * x_{t-K+1+i}[c] (zero history).
    x [T, P], w [P, 1, K]."""
    t, kk = x.shape[0], w.shape[-1]
    xp = np.concatenate([np.zeros((kk - 1, x.shape[1])), x], axis=0)
    return sum(w[:, 0, i] * xp[i:i + t] for i in range(kk))


def l2norm(x, eps=1e-6):
    """FLA l2norm: x * rsqrt(sum(x^2) + 1e-6) over the last dim (spec §2.1, §13.3)."""
    return x / np.sqrt(np.sum(x * x, axis=-1, keepdims=True) + eps)


def kda_recurrent(q, k, v, g, beta, state=None):
    """Token-by-token KDA (FLA naive_recurrent_kda, spec §2.1).
    q, k [T, H, K] (q already scaled), v [T, H, V], g [T, H, K] log-decay, beta [T, H] in (0,1).
    State S[h] is [K, V]; the decay multiplies rows (key channel).  Returns (o [T,H,V], S)."""
    t_len, h, dk = k.shape
    s = np.zeros((h, dk, v.shape[-1])) if state is None else state.copy()
    o = np.empty((t_len, h, v.shape[-1]))
    for t in range(t_len):
        s *= np.exp(g[t])[:, :, None]                                   # S[k][v] *= exp(g[k])
        ks = np.einsum("hk,hkv->hv", k[t], s)                          # S^T k
        s += (beta[t][:, None] * k[t])[:, :, None] * (v[t] - ks)[:, None, :]
        o[t] = np.einsum("hk,hkv->hv", q[t], s)                        # updated state
    return o, s


# ---------------------------------------------------------------- MLA (spec §3)
def yarn_inv_freq(dim, base, rope_scaling):
    """Inverse frequencies for the rope dims (DeepSeek-V3 precompute_freqs_cis, spec §3.1).
    rope_scaling None -> plain RoPE."""
    freqs = 1.0 / base ** (np.arange(0, dim, 2, dtype=np.float64) / dim)
    if not rope_scaling:
        return freqs
    assert rope_scaling.get("type", rope_scaling.get("rope_type")) == "yarn"
    factor = float(rope_scaling["factor"])
    orig = float(rope_scaling["original_max_position_embeddings"])

    def corr_dim(n_rot):
        return dim * math.log(orig / (n_rot * 2 * math.pi)) / (2 * math.log(base))

    low = max(math.floor(corr_dim(float(rope_scaling["beta_fast"]))), 0)
    high = min(math.ceil(corr_dim(float(rope_scaling["beta_slow"]))), dim - 1)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(dim // 2, dtype=np.float64) - low) / (high - low), 0.0, 1.0)
    smooth = 1.0 - ramp
    return freqs / factor * (1.0 - smooth) + freqs * smooth


def yarn_mscale(factor, m):
    return 1.0 if factor <= 1 else 0.1 * m * math.log(factor) + 1.0


def rope_adjacent(x, positions, inv_freq, amplitude=1.0):
    """Rotate adjacent pairs (x[2i], x[2i+1]) by angle pos*inv_freq[i] (complex-view convention of
    DeepSeek-V3 inference/model.py apply_rotary_emb).  x [T, ..., d], positions [T]."""
    ang = np.outer(positions, inv_freq)                                 # [T, d/2]
    shape = (x.shape[0],) + (1,) * (x.ndim - 2) + (ang.shape[1],)
    c, s = (np.cos(ang) * amplitude).reshape(shape), (np.sin(ang) * amplitude).reshape(shape)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = x0 * c - x1 * s
    out[..., 1::2] = x0 * s + x1 * c
    return out


def mla_naive(q_nope, q_pe, k_nope, k_pe, v, scale):
    """Causal MLA attention, naive form.  q_nope/k_nope [T,H,dn], q_pe [T,H,dr], k_pe [T,dr]
    (shared by all heads), v [T,H,dv].  Returns [T,H,dv]."""
    t = q_nope.shape[0]
    s = np.einsum("thd,shd->hts", q_nope, k_nope) + np.einsum("thd,sd->hts", q_pe, k_pe)
    s = s * scale
    s = np.where(np.tril(np.ones((t, t), dtype=bool))[None], s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    return np.einsum("hts,shd->thd", p, v)


# ---------------------------------------------------------------- MoE router (spec §4.1)
def route(x, w_gate, bias, top_k, n_group, topk_group, renormalize, scaling):
    """noaux_tc sigmoid router.  x [T,D].  Returns (idx [T,k], weights [T,k], gap [T]) where gap
    is the selection margin: min(k-th minus (k+1)-th biased score among the kept groups, and with
    n_group > 1 the topk_group-th minus the next group score)."""
    t, e = x.shape[0], w_gate.shape[0]
    s = sigmoid(x @ w_gate.T)
    sb = s + bias[None, :]
    gap = np.full(t, np.inf)
    if n_group > 1:
        grp = sb.reshape(t, n_group, e // n_group)
        gscore = np.sort(grp, axis=-1)[..., -2:].sum(axis=-1)               # sum of top-2 per group
        order = np.argsort(-gscore, axis=-1, kind="stable")
        keep = np.zeros((t, n_group), dtype=bool)
        np.put_along_axis(keep, order[:, :topk_group], True, axis=-1)
        gs = np.sort(gscore, axis=-1)[:, ::-1]
        if topk_group < n_group:
            gap = gs[:, topk_group - 1] - gs[:, topk_group]
        sb = np.where(np.repeat(keep, e // n_group, axis=1), sb, -np.inf)
    idx = np.argsort(-sb, axis=-1, kind="stable")[:, :top_k]
    srt = np.sort(sb, axis=-1)[:, ::-1]
    if top_k < e:
        gap = np.minimum(gap, srt[:, top_k - 1] - srt[:, top_k])
    w = np.take_along_axis(s, idx, axis=-1)                                # UNBIASED scores
    if renormalize:
        w = w / (w.sum(axis=-1, keepdims=True) + 1e-20)
    return idx, w * scaling, gap


# ---------------------------------------------------------------- AttnRes (spec §5.2)
def attn_res(prefix, bank, norm_w, proj_w, eps):
    """Softmax over depth: sources = bank + [prefix] (each [T,D]); keys are RMS-normalised
    without weight, scored by norm_w * proj_w; output is the weighted sum of the RAW sources."""
    v = np.stack(list(bank) + [prefix], axis=1)                           # [T, n, D]
    k = rms_norm(v, None, eps)
    score = k @ (norm_w * proj_w.reshape(-1))                             # [T, n]
    p = np.exp(score - score.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    return np.einsum("tn,tnd->td", p, v)
