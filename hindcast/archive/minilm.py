"""all-MiniLM-L6-v2 computed with torch and `tokenizers` alone: the bits sentence-transformers
computes, without importing it (or transformers, scikit-learn, scipy) — 5 s of CPU less for
every process that embeds a query.

`MiniLM(folder).encode(texts, batch_size)` does what sentence-transformers 6.3's
`SentenceTransformer(folder).encode(texts, batch_size=…, normalize_embeddings=True)` does with
this model's three modules (BertModel, mean pooling, Normalize), step for step, so that every
float operation is the same one on the same numbers:

- texts are ordered longest first by characters (`np.argsort` of the negated lengths) and
  embedded batch by batch in that order, each batch padded to its longest text (the padding
  changes the shapes of the products, and with them their last bits);
- tokens: the model's own `tokenizer.json`, truncated to 256 tokens (`max_seq_length`);
- BERT: embeddings (word + token type, then + position) and LayerNorm; in each of the 6 layers
  the query/key/value projections, `scaled_dot_product_attention` (a boolean padding mask only
  when the batch has padding, as transformers builds it), output projection + residual +
  LayerNorm, GELU feed-forward + residual + LayerNorm;
- mean pooling over the attention mask accumulated in float32, clamped at 1e-9; normalised twice
  (the Normalize module, then `normalize_embeddings`), back in the texts' order.

Under `torch.autocast("cpu", dtype=torch.bfloat16)` the same calls are autocast the same way.
tests/archive/test_minilm.py checks the bytes against sentence-transformers itself (a dev
dependency) on real headlines and awkward texts, in fp32 and bf16 and at two batch sizes.
"""

from __future__ import annotations

import json
from pathlib import Path

MAX_TOKENS = 256  # the model's sentence_bert_config.json max_seq_length


class MiniLM:
    """The model's weights and tokenizer, read from its folder (safetensors, tokenizer.json)."""

    def __init__(self, folder: Path):
        import torch
        from safetensors.torch import load_file
        from tokenizers import Tokenizer

        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        self.heads, self.layers = config["num_attention_heads"], config["num_hidden_layers"]
        self.eps = config["layer_norm_eps"]
        self.weights = load_file(str(folder / "model.safetensors"))
        self.positions = torch.arange(config["max_position_embeddings"]).expand((1, -1))
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS, strategy="longest_first")
        self.tokenizer.enable_padding(pad_id=0, pad_type_id=0, pad_token="[PAD]")

    def encode(self, texts: list[str], batch_size: int = 32):
        """Unit float32 rows (a numpy array), one per text, in the texts' order."""
        import numpy as np
        import torch

        if not texts:
            width = self.weights["embeddings.word_embeddings.weight"].shape[1]
            return np.zeros((0, width), dtype=np.float32)
        order = np.argsort([-len(text) for text in texts])
        rows: list = []
        with torch.inference_mode():
            for start in range(0, len(texts), batch_size):
                rows.extend(self._batch([texts[i] for i in order[start : start + batch_size]]))
        stacked = torch.stack([rows[i] for i in np.argsort(order)])
        return (stacked.float() if stacked.dtype == torch.bfloat16 else stacked).numpy()

    def _batch(self, texts: list[str]):
        import torch
        import torch.nn.functional as F

        encodings = self.tokenizer.encode_batch(texts)
        ids, types, mask = (
            torch.tensor([getattr(e, field) for e in encodings], dtype=torch.int64)
            for field in ("ids", "type_ids", "attention_mask")
        )
        tokens = self._bert(ids, types, mask)
        weights = mask.unsqueeze(-1).to(tokens.dtype)
        total = (tokens * weights).sum(dim=1, dtype=torch.float32)
        count = torch.clamp(weights.sum(dim=1, dtype=torch.float32), min=1e-9)
        pooled = F.normalize((total / count).to(tokens.dtype), p=2, dim=-1)
        return F.normalize(pooled, p=2, dim=1).cpu()

    def _bert(self, ids, types, mask):
        import torch.nn.functional as F

        w, (batch, length) = self.weights, ids.shape
        x = F.embedding(ids, w["embeddings.word_embeddings.weight"], 0)
        x = x + F.embedding(types, w["embeddings.token_type_embeddings.weight"])
        x = x + F.embedding(self.positions[:, :length], w["embeddings.position_embeddings.weight"])
        x = self._norm(x, "embeddings.LayerNorm")
        padding = None
        if not bool(mask.all()):
            padding = mask.bool()[:, None, None, :].expand(batch, 1, length, length).contiguous()
        for layer in range(self.layers):
            x = self._layer(x, padding, f"encoder.layer.{layer}.")
        return x

    def _layer(self, x, padding, p: str):
        import torch.nn.functional as F

        batch, length, width = x.shape
        head = width // self.heads
        q, k, v = (
            self._linear(x, p + "attention.self." + name)
            .view(batch, length, -1, head)
            .transpose(1, 2)
            for name in ("query", "key", "value")
        )
        attended = F.scaled_dot_product_attention(
            q, k, v, attn_mask=padding, dropout_p=0.0, scale=head**-0.5, is_causal=False
        )
        attended = attended.reshape(batch, -1, length, head).transpose(1, 2).contiguous()
        attended = attended.reshape(batch, length, -1).contiguous()
        x = self._norm(
            self._linear(attended, p + "attention.output.dense") + x,
            p + "attention.output.LayerNorm",
        )
        hidden = F.gelu(self._linear(x, p + "intermediate.dense"))
        return self._norm(self._linear(hidden, p + "output.dense") + x, p + "output.LayerNorm")

    def _linear(self, x, name: str):
        import torch.nn.functional as F

        return F.linear(x, self.weights[name + ".weight"], self.weights[name + ".bias"])

    def _norm(self, x, name: str):
        import torch.nn.functional as F

        w = self.weights
        return F.layer_norm(x, (x.shape[-1],), w[name + ".weight"], w[name + ".bias"], self.eps)
