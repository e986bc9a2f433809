"""The shapes of the demo model and its draft (a few million parameters).  The vocabulary size
and special ids come from the tokenizer the data was rendered with."""


def tiny_sizes():
    """K3's layer pattern at toy width: 6 layers (1-based 4 and 6 MLA, the rest KDA, as K3 ends
    on two MLA layers), a dense first layer, 8 routed experts top-2 in a 96-wide latent (MXFP4
    needs multiples of 32 on expert inputs), 1 shared expert, AttnRes blocks of 2 layers."""
    return dict(hidden=192, layers=6, kda_heads=6, head_dim=32, mla_heads=4, q_lora=96, kv_lora=64,
                nope=32, rope=16, v_dim=32, dense_inter=512, experts=8, top_k=2, moe_inter=128,
                latent=96, shared=1, attn_res_block=2)


def wide_sizes():
    """The shipped demo model since stop 31 (trained on a GPU, README "GPU runs"): tiny_sizes()
    widened to hidden 256 with 8 KDA heads, 8 MLA heads over a 128-wide latent and 128-wide
    query latent, a 768-wide dense layer and a 128-wide expert latent: 5.95 M parameters."""
    return dict(tiny_sizes(), hidden=256, kda_heads=8, mla_heads=8, q_lora=128, kv_lora=128, dense_inter=768,
                latent=128)


def draft_sizes():
    """The draft of the demo model (distilled from it, same tokenizer): K3's pattern at 3 layers
    (KDA, KDA, MLA; the first dense), hidden 128, 4 routed experts top-2: 0.77 M parameters with
    the demo vocabulary, a fifth of the target's (0.51 M against 3.38 M outside the embeddings)."""
    return dict(tiny_sizes(), hidden=128, layers=3, kda_heads=4, mla_heads=2, q_lora=64, kv_lora=32,
                dense_inter=256, experts=4, moe_inter=64, latent=64)
