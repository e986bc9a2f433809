"""Kimi K3 in PyTorch for training (spec model.md §1-6), as `k3::model` and reference/kimi_ref.py run
it: KDA (safe gate, full-rank output gate) and gated NoPE MLA layers, Attention Residuals, a dense
first layer, latent MoE with SiTU experts and the sigmoid noaux_tc router.

Module names are the checkpoint's tensor names without the "language_model." prefix, except the
routed experts, kept stacked for speed: block_sparse_moe.experts_{w1,w3,w2} [E, out, in] stand for
experts.E.{w1,w3,w2}.weight (checkpoint.py converts, MXFP4 at export).  Activations are batch-first
[B, T, ...]; sequences are right-padded (every block is causal, so padding never reaches a real
position).  The same code runs in float32 (training) and float64 (parity with the reference).
"""
import torch
import torch.nn.functional as F
from torch import nn

from k3io import mxfp4_fake_quant
from kda import kda_chunked, kda_recurrent


def rms_norm(x, w, eps):
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return y if w is None else y * w


def situ(g, u, beta=4.0, linear_beta=25.0):
    """SiTU(g, u) = [b tanh(g/b) sigmoid(g)] * [bl tanh(u/bl)] (spec §4.3)."""
    return beta * torch.tanh(g / beta) * torch.sigmoid(g) * (linear_beta * torch.tanh(u / linear_beta))


class Norm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))


class Tensor(nn.Module):
    """A bare `.weight` (conv kernels)."""

    def __init__(self, *shape):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(*shape))


def linear(d_in, d_out):
    return nn.Linear(d_in, d_out, bias=False)


class Kda(nn.Module):
    """K3 KDA layer (spec §2.3): safe gate g = lb * sigmoid(exp(A_log) (f_b f_a x + dt_bias)),
    full-rank g_proj, per-head o_norm."""

    def __init__(self, c):
        super().__init__()
        la = c["linear_attn_config"]
        d, self.h, self.hd = c["hidden_size"], la["num_heads"], la["head_dim"]
        p, kk = self.h * self.hd, la["short_conv_kernel_size"]
        self.lb, self.eps = la["gate_lower_bound"], c["rms_norm_eps"]
        for n in "qkv":
            setattr(self, n + "_proj", linear(d, p))
            setattr(self, n + "_conv1d", Tensor(p, 1, kk))
        self.f_a_proj, self.f_b_proj, self.b_proj = linear(d, self.hd), linear(self.hd, p), linear(d, self.h)
        self.A_log = nn.Parameter(torch.zeros(self.hd))  # K3 stores [head_dim]; the first H are used
        self.dt_bias = nn.Parameter(torch.zeros(p))
        self.g_proj, self.o_norm, self.o_proj = linear(d, p), Norm(self.hd), linear(p, d)
        self.mode, self.chunk = "chunked", 16

    def conv(self, x, n):
        w = getattr(self, n + "_conv1d").weight                           # [P, 1, K]
        y = F.conv1d(F.pad(x.transpose(1, 2), (w.shape[-1] - 1, 0)), w, groups=w.shape[0])
        return F.silu(y.transpose(1, 2))

    def forward(self, x):
        b, t, _ = x.shape
        shape = (b, t, self.h, self.hd)
        q, k, v = (self.conv(getattr(self, n + "_proj")(x), n).reshape(shape) for n in "qkv")
        graw = (self.f_b_proj(self.f_a_proj(x)) + self.dt_bias).reshape(shape)
        g = self.lb * torch.sigmoid(torch.exp(self.A_log[:self.h])[:, None] * graw)
        beta = torch.sigmoid(self.b_proj(x))
        q = q * torch.rsqrt(q.pow(2).sum(-1, keepdim=True) + 1e-6) * self.hd ** -0.5
        k = k * torch.rsqrt(k.pow(2).sum(-1, keepdim=True) + 1e-6)
        if self.mode == "recurrent":
            o = kda_recurrent(q, k, v, g, beta)
        else:
            o = kda_chunked(q, k, v, g, beta, self.chunk)
        o = rms_norm(o, self.o_norm.weight, self.eps) * torch.sigmoid(self.g_proj(x).reshape(shape))
        return self.o_proj(o.reshape(b, t, -1))


class Mla(nn.Module):
    """K3 MLA (spec §3.2): q_a -> norm -> q_b, NoPE (the rope dims stay un-rotated, k_pe shared by
    the heads), scale (nope+rope)^-0.5, output gate sigmoid(g_proj x) before o_proj."""

    def __init__(self, c):
        super().__init__()
        d, self.h = c["hidden_size"], c["num_attention_heads"]
        self.dn, self.dr, self.dv, self.r = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"], c["kv_lora_rank"]
        self.eps, rq = c["rms_norm_eps"], c["q_lora_rank"]
        self.q_a_proj, self.q_a_layernorm = linear(d, rq), Norm(rq)
        self.q_b_proj = linear(rq, self.h * (self.dn + self.dr))
        self.kv_a_proj_with_mqa, self.kv_a_layernorm = linear(d, self.r + self.dr), Norm(self.r)
        self.kv_b_proj = linear(self.r, self.h * (self.dn + self.dv))
        self.g_proj, self.o_proj = linear(d, self.h * self.dv), linear(self.h * self.dv, d)

    def forward(self, x):
        b, t, _ = x.shape
        q = self.q_b_proj(rms_norm(self.q_a_proj(x), self.q_a_layernorm.weight, self.eps))
        q = q.reshape(b, t, self.h, self.dn + self.dr).transpose(1, 2)      # [B,H,T,dn+dr]
        kv = self.kv_a_proj_with_mqa(x)
        ckv, k_pe = rms_norm(kv[..., :self.r], self.kv_a_layernorm.weight, self.eps), kv[..., self.r:]
        kvb = self.kv_b_proj(ckv).reshape(b, t, self.h, self.dn + self.dv).transpose(1, 2)
        k = torch.cat([kvb[..., :self.dn], k_pe[:, None].expand(b, self.h, t, self.dr)], -1)
        s = (q @ k.transpose(-1, -2)) * (self.dn + self.dr) ** -0.5
        mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        p = torch.softmax(s.masked_fill(~mask, float("-inf")), -1)
        o = (p @ kvb[..., self.dn:]).transpose(1, 2).reshape(b, t, -1)
        return self.o_proj(o * torch.sigmoid(self.g_proj(x)))


class Glu(nn.Module):
    """SiTU GLU: down(situ(gate x, up x)) (dense layer 0 and the shared experts)."""

    def __init__(self, d, inter):
        super().__init__()
        self.gate_proj, self.up_proj, self.down_proj = linear(d, inter), linear(d, inter), linear(inter, d)

    def forward(self, x):
        return self.down_proj(situ(self.gate_proj(x), self.up_proj(x)))


class Router(nn.Module):
    def __init__(self, e, d):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(e, d))
        self.register_buffer("e_score_correction_bias", torch.zeros(e))  # selection only (noaux_tc)


class LatentMoe(nn.Module):
    """K3 MoE (spec §4.3): sigmoid router on the full-width x, top-k on s + bias, weights the
    unbiased s renormalised x routed_scaling_factor; experts in the latent z = down(x); RMSNorm of
    the weighted sum; up; plus the shared SiTU MLP on x."""

    def __init__(self, c):
        super().__init__()
        d, e, im, lat = c["hidden_size"], c["num_experts"], c["moe_intermediate_size"], c["routed_expert_hidden_size"]
        assert c.get("num_expert_group", 1) == 1 and c.get("topk_group", 1) == 1, "grouped top-k not used"
        self.top_k, self.scale, self.eps = c["num_experts_per_token"], c["routed_scaling_factor"], c["rms_norm_eps"]
        self.renorm = c.get("moe_renormalize", True)
        self.gate = Router(e, d)
        self.routed_expert_down_proj, self.routed_expert_up_proj = linear(d, lat), linear(lat, d)
        self.routed_expert_norm = Norm(lat)
        self.experts_w1 = nn.Parameter(torch.zeros(e, im, lat))
        self.experts_w3 = nn.Parameter(torch.zeros(e, im, lat))
        self.experts_w2 = nn.Parameter(torch.zeros(e, lat, im))
        self.shared_experts = Glu(d, im * c["num_shared_experts"])
        self.qat, self.load = False, None  # load: tokens per expert of the last forward [E]

    def route(self, x):
        s = torch.sigmoid(x @ self.gate.weight.t())
        idx = torch.topk(s + self.gate.e_score_correction_bias, self.top_k, -1).indices
        w = s.gather(-1, idx)
        if self.renorm:
            w = w / (w.sum(-1, keepdim=True) + 1e-20)
        return idx, w * self.scale, s

    def forward(self, x, valid=None):
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        idx, w, s = self.route(x)
        z = self.routed_expert_down_proj(x)
        w1, w3, w2 = self.experts_w1, self.experts_w3, self.experts_w2
        if self.qat:
            w1, w3, w2 = mxfp4_fake_quant(w1), mxfp4_fake_quant(w3), mxfp4_fake_quant(w2)
        y = torch.zeros_like(z)
        for e in range(w1.shape[0]):
            rows, slot = torch.nonzero(idx == e, as_tuple=True)
            if rows.numel():
                ze = z[rows]
                ye = situ(ze @ w1[e].t(), ze @ w3[e].t()) @ w2[e].t()
                y = y.index_add(0, rows, ye * w[rows, slot, None])
        keep = torch.ones(x.shape[0], dtype=torch.bool, device=x.device) if valid is None else valid.reshape(-1)
        self.load = torch.bincount(idx[keep].reshape(-1), minlength=w1.shape[0]).to(x.dtype)
        self.mean_score = (s / s.sum(-1, keepdim=True))[keep].mean(0)  # P_e of a balance loss
        y = self.routed_expert_up_proj(rms_norm(y, self.routed_expert_norm.weight, self.eps))
        return (y + self.shared_experts(x)).reshape(shape)


class Layer(nn.Module):
    def __init__(self, c, i):
        super().__init__()
        d = c["hidden_size"]
        self.is_kda = (i + 1) in c["linear_attn_config"]["kda_layers"]  # 1-based lists (spec §1)
        self.is_moe = i >= c["first_k_dense_replace"] and i % c.get("moe_layer_freq", 1) == 0
        self.input_layernorm, self.post_attention_layernorm = Norm(d), Norm(d)
        for site in ("self_attention_res", "mlp_res"):
            setattr(self, site + "_norm", Norm(d))
            setattr(self, site + "_proj", linear(d, 1))
        self.self_attn = Kda(c) if self.is_kda else Mla(c)
        if self.is_moe:
            self.block_sparse_moe = LatentMoe(c)
        else:
            self.mlp = Glu(d, c["intermediate_size"])


def attn_res(prefix, bank, norm, proj, eps):
    """Softmax over depth (spec §5.2): keys RMS-normed without weight, scored by norm.w * proj.w;
    the output is the weighted sum of the raw sources.  prefix [B,T,D], bank list of [B,T,D]."""
    v = torch.stack(list(bank) + [prefix], -2)                            # [B,T,n,D]
    p = torch.softmax(rms_norm(v, None, eps) @ (norm.weight * proj.weight[0]), -1)
    return (p[..., None] * v).sum(-2)


class K3Model(nn.Module):
    """config: the text_config dict of a kimi_k3 config.json."""

    def __init__(self, config):
        super().__init__()
        c = self.config = config
        assert c["hidden_act"] == "situ" and c.get("mla_use_nope") and c.get("mla_use_output_gate")
        assert c["linear_attn_config"].get("use_full_rank_gate") and c.get("latent_moe_use_norm", True)
        self.eps, self.block = c["rms_norm_eps"], c["attn_res_block_size"]
        d = c["hidden_size"]
        self.model = nn.Module()
        self.model.embed_tokens = nn.Embedding(c["vocab_size"], d)
        self.model.layers = nn.ModuleList(Layer(c, i) for i in range(c["num_hidden_layers"]))
        self.model.norm = Norm(d)
        self.model.output_attn_res_norm, self.model.output_attn_res_proj = Norm(d), linear(d, 1)
        self.lm_head = linear(d, c["vocab_size"])

    def set_kda(self, mode="chunked", chunk=16):
        for layer in self.model.layers:
            if layer.is_kda:
                layer.self_attn.mode, layer.self_attn.chunk = mode, chunk

    def moe_layers(self):
        return [layer.block_sparse_moe for layer in self.model.layers if layer.is_moe]

    def forward(self, ids, valid=None, capture=()):
        """ids [B,T] -> logits [B,T,vocab].  valid [B,T] bool marks real tokens (router stats).
        capture: layer ids whose input (the AttnRes mix the layer reads; id num_hidden_layers = the
        final mix before model.norm) is returned too, in order: -> (logits, [[B,T,D], ...])."""
        m, eps = self.model, self.eps
        prefix, bank, seen = m.embed_tokens(ids), [], {}
        for i, layer in enumerate(m.layers):
            h = attn_res(prefix, bank, layer.self_attention_res_norm, layer.self_attention_res_proj, eps) \
                if bank else prefix
            seen[i] = h
            if i % self.block == 0:
                bank.append(prefix)  # snapshot the raw prefix, restart the block
                prefix = None
            h = layer.self_attn(rms_norm(h, layer.input_layernorm.weight, eps))
            prefix = h if prefix is None else prefix + h
            h = attn_res(prefix, bank, layer.mlp_res_norm, layer.mlp_res_proj, eps)
            h = rms_norm(h, layer.post_attention_layernorm.weight, eps)
            h = layer.block_sparse_moe(h, valid) if layer.is_moe else layer.mlp(h)
            prefix = prefix + h
        x = seen[len(m.layers)] = attn_res(prefix, bank, m.output_attn_res_norm, m.output_attn_res_proj, eps)
        logits = self.lm_head(rms_norm(x, m.norm.weight, eps))
        return (logits, [seen[i] for i in capture]) if capture else logits


OUT_PROJ = ("o_proj.weight", "down_proj.weight", "routed_expert_up_proj.weight", "experts_w2")


@torch.no_grad()
def init_weights(model, seed, parity=False):
    """Seeded initialisation.  Training: N(0, 1/fan_in) weights with output projections scaled by
    1/sqrt(2 layers), AttnRes pseudo-queries zero (uniform mixing over depth, as the paper starts),
    KDA decay rates spread over (1e-3, 1) per step.  parity=True: larger gains and non-zero
    pseudo-queries, so a random model has well-separated logits and routes (parity tests)."""
    gen = torch.Generator().manual_seed(seed)
    normal = lambda p, std: p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64) * std)
    uniform = lambda p, lo, hi: p.copy_(torch.rand(p.shape, generator=gen, dtype=torch.float64) * (hi - lo) + lo)
    depth = (2.0 * model.config["num_hidden_layers"]) ** -0.5
    big = 2.0 if parity else 1.0
    for name, p in model.named_parameters():
        if name.endswith("norm.weight"):
            p.fill_(1.0) if not parity else uniform(p, 0.8, 1.2)
        elif name.endswith("_res_proj.weight"):
            p.zero_() if not parity else normal(p, 1.5 / p.shape[-1] ** 0.5)
        elif "conv1d" in name:
            normal(p, 0.5)
        elif name.endswith("A_log"):
            p.zero_()
        elif name.endswith("dt_bias"):
            uniform(p, -7.0, 0.0)
        elif name.endswith("embed_tokens.weight"):
            normal(p, 1.0)
        elif name.endswith("gate.weight"):
            normal(p, big / p.shape[-1] ** 0.5)
        else:
            scale = depth if (name.endswith(OUT_PROJ) and not parity) else 1.0
            normal(p, big * scale / p.shape[-1] ** 0.5)
