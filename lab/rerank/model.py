"""The cross-encoder in torch, for fitting: BERT, the mean of its last hidden states over the pair's tokens, and
a linear head to one logit. ``lab.rerank.encoder.CrossEncoder`` computes the same in NumPy.

The mean, not the ``[CLS]`` state: all-MiniLM-L6-v2 was trained to mean-pool, so its mean state already tells
passages apart on the first step, where its ``[CLS]`` state is nearly the same for every input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from transformers import BertConfig, BertModel


class PairScorer(torch.nn.Module):
    """``forward(input_ids, token_type_ids, attention_mask)`` → one logit per pair."""

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.bert = BertModel(config, add_pooling_layer=False)
        self.classifier = torch.nn.Linear(config.hidden_size, 1)
        torch.nn.init.zeros_(self.classifier.weight)  # every pair alike at first: the fit starts from no preference
        torch.nn.init.zeros_(self.classifier.bias)

    @classmethod
    def from_base(cls, base: Path, layers: int) -> PairScorer:
        """The first ``layers`` layers of the BERT model at ``base`` with a new head."""
        config = BertConfig.from_pretrained(base, num_hidden_layers=layers)
        model = cls(config)
        model.bert = BertModel.from_pretrained(base, config=config, add_pooling_layer=False)
        return model

    def forward(self, input_ids: Any, token_type_ids: Any, attention_mask: Any) -> Any:
        hidden = self.bert(input_ids=input_ids, token_type_ids=token_type_ids,
                           attention_mask=attention_mask).last_hidden_state
        mask = attention_mask[..., None].to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1)
        return self.classifier(pooled)[:, 0]
