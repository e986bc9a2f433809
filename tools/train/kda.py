"""Kimi Delta Attention in torch: the token-by-token recurrence and the chunked form (spec model.md
§2.1, §2.4), both differentiable.  Layout: batch-first [B, T, H, D].

Per head, with state S [K, V] (decay along the KEY channel):
    S <- diag(exp(g_t)) S;   S <- S + beta_t k_t (v_t - S^T k_t)^T;   o_t = S^T q_t   (q pre-scaled)

Chunked form (chunk C, G_r = cumsum of g inside the chunk):
    A[r,i]   = beta_r sum_d k_r[d] exp(G_r[d]-G_i[d]) k_i[d]   (i < r)
    [W | U]  = (I + A)^-1 [beta (exp(G) k) | beta v]           (unit lower-triangular solve)
    Aqk[r,j] = sum_d q_r[d] exp(G_r[d]-G_j[d]) k_j[d]           (j <= r)
    Vn = U - W S;   O = (q exp(G)) S + Aqk Vn;   S' = diag(exp(G_C)) S + (exp(G_C - G) k)^T Vn
The pairwise decay exp(G_r - G_i) is factored as exp(G_r) * exp(-G_i), so A and Aqk are plain
matrix products.  K3's safe gate keeps g >= gate_lower_bound = -5, so |G| <= 80 inside a 16-token
chunk and exp(+-G) stays inside float32 range (e^88); hence chunks of at most 16 in float32 (FLA
uses 16-token sub-chunks for the same reason).  float64 takes any chunk size.
"""
import torch


def kda_recurrent(q, k, v, g, beta):
    """q, k [B,T,H,K] (q scaled), v [B,T,H,V], g [B,T,H,K] (log decay <= 0), beta [B,T,H].
    Returns o [B,T,H,V]."""
    b, t_len, h, dk = k.shape
    s = q.new_zeros(b, h, dk, v.shape[-1])
    outs = []
    for t in range(t_len):
        s = s * torch.exp(g[:, t])[..., None]
        kt = k[:, t]
        ks = torch.einsum("bhk,bhkv->bhv", kt, s)
        s = s + (beta[:, t, :, None] * kt)[..., None] * (v[:, t] - ks)[:, :, None, :]
        outs.append(torch.einsum("bhk,bhkv->bhv", q[:, t], s))
    return torch.stack(outs, 1)


def _chunks(x, n, c):
    """[B, n*c, H, D] -> [B, H, n, c, D]."""
    b, _, h, d = x.shape
    return x.reshape(b, n, c, h, d).permute(0, 3, 1, 2, 4)


def kda_chunked(q, k, v, g, beta, chunk=16):
    """Same contract as kda_recurrent; the sequence is cut into chunks of `chunk` tokens
    (zero-padded at the end: g = 0, beta = 0 leaves the state unchanged)."""
    b, t_len, h, dk = k.shape
    dv = v.shape[-1]
    pad = (-t_len) % chunk
    if pad:
        q, k, v, g = (torch.nn.functional.pad(x, (0, 0, 0, 0, 0, pad)) for x in (q, k, v, g))
        beta = torch.nn.functional.pad(beta, (0, 0, 0, pad))
    assert q.dtype == torch.float64 or chunk <= 16, "exp(-G) leaves float32 range past 16 tokens"
    n = (t_len + pad) // chunk
    q, k, v, g = (_chunks(x, n, chunk) for x in (q, k, v, g))       # [B,H,n,C,D]
    beta = beta.reshape(b, n, chunk, h).permute(0, 3, 1, 2)           # [B,H,n,C]
    big_g = g.cumsum(-2)
    eg = torch.exp(big_g)
    kn = k * torch.exp(-big_g)
    ones = torch.ones(chunk, chunk, dtype=q.dtype, device=q.device)
    a = ((k * eg) @ kn.transpose(-1, -2)) * beta[..., None] * ones.tril(-1)   # strictly lower
    aqk = ((q * eg) @ kn.transpose(-1, -2)) * ones.tril()
    rhs = torch.cat([beta[..., None] * eg * k, beta[..., None] * v], -1)
    eye = torch.eye(chunk, dtype=a.dtype, device=a.device)
    sol = torch.linalg.solve_triangular(eye + a, rhs, upper=False, unitriangular=True)
    w, u = sol[..., :dk], sol[..., dk:]
    k_dec = torch.exp(big_g[..., -1:, :] - big_g) * k                  # [B,H,n,C,K]
    eg_last = eg[..., -1, :]                                          # [B,H,n,K]
    # Only the state recursion is sequential. unbind (not indexing) so that backward gathers the
    # per-chunk gradients once instead of writing each into a zero tensor of the full size.
    s = q.new_zeros(b, h, dk, dv)
    outs = []
    for u_c, w_c, qg_c, aqk_c, kd_c, el_c in zip(u.unbind(2), w.unbind(2), (q * eg).unbind(2), aqk.unbind(2),
                                                  k_dec.transpose(-1, -2).unbind(2), eg_last.unbind(2)):
        vn = u_c - w_c @ s
        outs.append(qg_c @ s + aqk_c @ vn)
        s = el_c[..., None] * s + kd_c @ vn
    o = torch.stack(outs, 2)                                          # [B,H,n,C,V]
    return o.permute(0, 2, 3, 1, 4).reshape(b, n * chunk, h, dv)[:, :t_len]
