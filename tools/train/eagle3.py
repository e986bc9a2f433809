"""An EAGLE-3 draft head over the demo target's hidden states (spec checkpoints.md A2.2), in the
published Llama layout that SGLang and vLLM load (`LlamaForCausalLMEagle3`):

  fc.weight                                   [D, 3D]   fuses three target hidden states
  midlayer.{input_layernorm,hidden_norm,post_attention_layernorm}.weight   [D]
  midlayer.self_attn.{q,k,v}_proj.weight      [H*hd, 2D] (input: concat(norm(embed), norm(hidden)))
  midlayer.self_attn.o_proj.weight            [D, H*hd]
  midlayer.mlp.{gate,up,down}_proj.weight     SiLU GLU
  norm.weight [D], lm_head.weight [draft_vocab, D]
  d2t [draft_vocab] I64 (target id = i + d2t[i]), t2d [vocab] BOOL

The token embeddings are the target's (not in the file).  One draft step for a row:
  residual = hidden;  x = concat(rms(embed(token)) * input_ln, rms(hidden) * hidden_norm)
  h = residual + o_proj(attn(q, k, v of x, RoPE))          (causal over the draft's cache)
  out = h + mlp(rms(h) * post_ln);  logits = lm_head(rms(out) * norm)
The first step's hidden is fc(target features); each later step's is the previous step's `out`.

Target features (`capture`): the inputs of target layers AUX_LAYERS, where an input is the AttnRes
mix the layer reads and "layer 6" (num_hidden_layers) is the final mix before model.norm: low, mid
and high as EAGLE-3 takes them.  vLLM uses configured ids as layer inputs as they are; SGLang adds 1
(treats them as outputs) -- the config says which convention these ids follow.
"""
import json
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import k3io
from model import Norm, linear, rms_norm

AUX_LAYERS = (2, 4, 6)  # inputs of 0-based target layers 2, 4 and the final hidden (6 layers)


def head_config(target_text, draft_vocab, heads=4, head_dim=64, intermediate=768, aux=AUX_LAYERS):
    """The head's config.json (Llama EAGLE-3 fields) for a target text config."""
    d = target_text["hidden_size"]
    return {
        "architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama", "hidden_size": d,
        "num_hidden_layers": 1, "num_attention_heads": heads, "num_key_value_heads": heads, "head_dim": head_dim,
        "intermediate_size": intermediate, "hidden_act": "silu", "rms_norm_eps": target_text["rms_norm_eps"],
        "rope_theta": 10000.0, "max_position_embeddings": target_text["max_position_embeddings"],
        "vocab_size": target_text["vocab_size"], "draft_vocab_size": draft_vocab, "tie_word_embeddings": False,
        "target_hidden_size": d, "target_num_hidden_layers": target_text["num_hidden_layers"],
        "eagle_config": {"use_aux_hidden_state": True, "eagle_aux_hidden_state_layer_ids": list(aux),
                         "aux_layer_ids_are": "layer inputs (vLLM convention); the last id is the final hidden"},
        "torch_dtype": "bfloat16",
    }


def rope(x, pos, theta):
    """x [B,H,T,hd], pos [T] or [B,1,T] -> x rotated (Llama's rotate-half form)."""
    half = x.shape[-1] // 2
    freq = theta ** (-torch.arange(half, dtype=x.dtype) / half)
    ang = pos.to(x.dtype)[..., None] * freq
    cos, sin = torch.cos(ang), torch.sin(ang)
    a, b = x[..., :half], x[..., half:]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], -1)


class Eagle3Head(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        d, h, hd, im = cfg["hidden_size"], cfg["num_attention_heads"], cfg["head_dim"], cfg["intermediate_size"]
        n_aux = len(cfg["eagle_config"]["eagle_aux_hidden_state_layer_ids"])
        self.h, self.hd, self.eps, self.theta = h, hd, cfg["rms_norm_eps"], cfg["rope_theta"]
        self.fc = linear(n_aux * d, d)
        m = self.midlayer = nn.Module()
        m.input_layernorm, m.hidden_norm, m.post_attention_layernorm = Norm(d), Norm(d), Norm(d)
        m.self_attn = nn.Module()
        for name in ("q_proj", "k_proj", "v_proj"):
            setattr(m.self_attn, name, linear(2 * d, h * hd))
        m.self_attn.o_proj = linear(h * hd, d)
        m.mlp = nn.Module()
        m.mlp.gate_proj, m.mlp.up_proj, m.mlp.down_proj = linear(d, im), linear(d, im), linear(im, d)
        self.norm = Norm(d)
        self.lm_head = linear(d, cfg["draft_vocab_size"])
        self.register_buffer("d2t", torch.zeros(cfg["draft_vocab_size"], dtype=torch.long))
        self.register_buffer("t2d", torch.zeros(cfg["vocab_size"], dtype=torch.bool))

    def set_vocab(self, hot):
        """hot: the target ids the draft can propose, in draft-id order."""
        hot = torch.as_tensor(hot, dtype=torch.long)
        self.d2t.copy_(hot - torch.arange(len(hot)))
        self.t2d.zero_()
        self.t2d[hot] = True

    def hot(self):
        return self.d2t + torch.arange(len(self.d2t))

    def qkv(self, emb, hid, pos):
        """-> q, k, v [B,H,T,hd] for the rows' tokens (embedded) and hidden states at positions pos."""
        m, a = self.midlayer, self.midlayer.self_attn
        x = torch.cat([rms_norm(emb, m.input_layernorm.weight, self.eps), rms_norm(hid, m.hidden_norm.weight, self.eps)],
                      -1)
        split = lambda y: y.reshape(*y.shape[:2], self.h, self.hd).transpose(1, 2)
        q, k, v = split(a.q_proj(x)), split(a.k_proj(x)), split(a.v_proj(x))
        return rope(q, pos, self.theta), rope(k, pos, self.theta), v

    def finish(self, hid, attn):
        """attn [B,H,T,hd] -> the step's output hidden [B,T,D] (pre-norm: the next step's input)."""
        m = self.midlayer
        h = hid + m.self_attn.o_proj(attn.transpose(1, 2).reshape(*hid.shape[:2], -1))
        g = rms_norm(h, m.post_attention_layernorm.weight, self.eps)
        return h + m.mlp.down_proj(F.silu(m.mlp.gate_proj(g)) * m.mlp.up_proj(g))

    def logits(self, out):
        return self.lm_head(rms_norm(out, self.norm.weight, self.eps))

    def unroll(self, embed, feats, ids, steps, rows):
        """Training-time test: `steps` chained draft passes for the anchors `rows` [B,R] at once.
        The chain anchored at row t follows the target's token ids[t+1]: at step k its token is
        ids[t+1+k] (the accepted guess), its hidden the previous step's output (step 0: fc(feats[t])),
        its position t+1+k; it attends to the draft's cache of committed tokens -- step-0 entries of
        every row s <= t (token ids[s+1], hidden fc(feats[s])) -- and to its own entries of steps
        1..k: what a chain draft computes at inference while its guesses are being accepted.  Step
        k's logits for anchor t guess ids[t+2+k].  Only the anchors' queries are computed (cost R x T
        per step, not T x T).  -> list of `steps` logits [B,R,draft_vocab]."""
        b, t = ids.shape
        take = lambda x, idx: x.gather(1, idx.clamp(max=t - 1).reshape(b, -1, *[1] * (x.dim() - 2))
                                       .expand(-1, -1, *x.shape[2:]))
        fused = self.fc(feats)
        next_tok = torch.cat([ids[:, 1:], ids[:, -1:]], 1)
        _, k0, v0 = self.qkv(embed(next_tok), fused, torch.arange(t) + 1)  # the cache: every row
        seen = torch.arange(t)[None, None, None, :] <= rows[:, None, :, None]  # [B,1,R,T]
        hid, keys, vals, outs = take(fused, rows), [k0], [v0], []
        for k in range(steps):
            tok = take(ids, rows + 1 + k)
            q, kk, v = self.qkv(embed(tok), hid, (rows + 1 + k)[:, None, :])
            if k > 0:
                keys.append(kk)
                vals.append(v)
            hid = self.finish(hid, self.attend(q, keys, vals, seen))
            outs.append(self.logits(hid))
        return outs

    def attend(self, q, keys, vals, seen):
        """Softmax over the cache keys[0] (where `seen`) and the chain's own keys[1:] (same row)."""
        q = q * self.hd ** -0.5
        s0 = (q @ keys[0].transpose(-1, -2)).masked_fill(~seen, float("-inf"))
        diag = [(q * kj).sum(-1, keepdim=True) for kj in keys[1:]]
        p = torch.softmax(torch.cat([s0] + diag, -1), -1)
        t = s0.shape[-1]
        out = p[..., :t] @ vals[0]
        for j, vj in enumerate(vals[1:]):
            out = out + p[..., t + j:t + j + 1] * vj
        return out


def capture(target, ids, layers=AUX_LAYERS):
    """-> (target logits [B,T,V], features [B,T,len(layers)*D]) without gradients."""
    with torch.no_grad():
        logits, seen = target(ids, torch.ones_like(ids, dtype=torch.bool), capture=tuple(layers))
    return logits, torch.cat(seen, -1)


def export(head, folder):
    """Writes config.json and model.safetensors (BF16 weights, I64 d2t, BOOL t2d)."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(head.cfg, f, indent=2)
        f.write("\n")
    tensors = {}
    for name, value in head.state_dict().items():
        if name == "d2t":
            tensors[name] = ("I64", value.numpy().astype(np.int64))
        elif name == "t2d":
            tensors[name] = ("BOOL", value.numpy().astype(bool))
        else:
            tensors[name] = ("BF16", k3io.to_bf16_bits(value))
    k3io.write_safetensors(os.path.join(folder, "model.safetensors"), tensors)
    return tensors


def load(folder, dtype=torch.float32):
    """An Eagle3Head holding the file's values exactly."""
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    head = Eagle3Head(cfg)
    raw = k3io.read_safetensors(folder)
    assert set(raw) == set(head.state_dict()), f"tensors differ: {sorted(set(raw) ^ set(head.state_dict()))[:4]}"
    state = {}
    for name, value in head.state_dict().items():
        dt, a = raw[name]
        state[name] = torch.from_numpy(np.array(a)) if dt in ("I64", "BOOL") else k3io.to_float(dt, a).to(dtype)
    head.load_state_dict(state)
    return head.to(dtype)
