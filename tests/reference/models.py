"""Model definitions shared by param_counts.py and memory_reference.py.

Every model is built from a config object in code (no hub downloads).
Each builder returns (model, source) where `source` is a human-readable
description of the class and the config used.
"""

from __future__ import annotations

import contextlib

import torch
import torch.nn as nn
import torchvision
import transformers
from transformers import (
    RobertaConfig,
    RobertaForSequenceClassification,
    BertConfig,
    BertForMaskedLM,
    BertForSequenceClassification,
    BertModel,
    DistilBertConfig,
    DistilBertForMaskedLM,
    DistilBertForSequenceClassification,
    Ernie4_5Config,
    Ernie4_5ForCausalLM,
    Exaone4Config,
    Exaone4ForCausalLM,
    GPTNeoXConfig,
    GPTNeoXForCausalLM,
    Gemma2Config,
    Gemma2ForCausalLM,
    Gemma3ForCausalLM,
    Gemma3TextConfig,
    GemmaConfig,
    GemmaForCausalLM,
    GPT2Config,
    GPT2LMHeadModel,
    LlamaConfig,
    LlamaForCausalLM,
    MistralConfig,
    MistralForCausalLM,
    Olmo2Config,
    Olmo2ForCausalLM,
    Olmo3Config,
    Olmo3ForCausalLM,
    Phi3Config,
    Phi3ForCausalLM,
    Qwen2Config,
    Qwen2ForCausalLM,
    Qwen3Config,
    Qwen3ForCausalLM,
    Qwen3_5ForCausalLM,
    Qwen3_5TextConfig,
    SmolLM3Config,
    SmolLM3ForCausalLM,
    Starcoder2Config,
    Starcoder2ForCausalLM,
    T5Config,
    T5ForConditionalGeneration,
    ViTConfig,
    ViTForImageClassification,
)

import moe_models  # noqa: E402  (mixtures of experts: their own module)

TV = f"torchvision {torchvision.__version__.split('+')[0]}"
TF = f"transformers {transformers.__version__}"
TORCH = f"torch {torch.__version__.split('+')[0]}"


# --------------------------------------------------------------------------
# Custom models
# --------------------------------------------------------------------------

MLP_SMALL_IN = 1024
MLP_SMALL_HIDDEN = 4096
MLP_SMALL_BLOCKS = 4
MLP_SMALL_CLASSES = 1000


def mlp_small() -> nn.Sequential:
    """mlp-small: 4 x [Linear(1024,4096), GELU(), Linear(4096,1024)] then Linear(1024,1000).

    A flat nn.Sequential of 13 modules (indices 0..12):
      0 Linear(1024,4096)  1 GELU()  2 Linear(4096,1024)   # block 0
      3 Linear(1024,4096)  4 GELU()  5 Linear(4096,1024)   # block 1
      6 Linear(1024,4096)  7 GELU()  8 Linear(4096,1024)   # block 2
      9 Linear(1024,4096) 10 GELU() 11 Linear(4096,1024)   # block 3
     12 Linear(1024,1000)                                  # head
    All Linear layers have bias=True; GELU is exact (approximate='none').
    No residuals, no normalisation, no dropout.
    Input float32 [b,1024]; loss = nn.functional.cross_entropy(logits [b,1000], labels int64 [b]).
    """
    layers: list[nn.Module] = []
    for _ in range(MLP_SMALL_BLOCKS):
        layers += [
            nn.Linear(MLP_SMALL_IN, MLP_SMALL_HIDDEN),
            nn.GELU(),
            nn.Linear(MLP_SMALL_HIDDEN, MLP_SMALL_IN),
        ]
    layers.append(nn.Linear(MLP_SMALL_IN, MLP_SMALL_CLASSES))
    return nn.Sequential(*layers)


def llama_tiny_config() -> LlamaConfig:
    return LlamaConfig(
        vocab_size=32000,
        hidden_size=512,
        intermediate_size=1376,
        num_hidden_layers=4,
        num_attention_heads=8,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        tie_word_embeddings=False,
        attention_bias=False,
        mlp_bias=False,
    )


# --------------------------------------------------------------------------
# HF configs (official config.json values)
# --------------------------------------------------------------------------

# vramfit's BERT presets by the suffix of their id: the class and how its
# description ends (classification with 2 labels, masked LM, bare with pooler).
BERT_HEADS = {
    "": (BertForSequenceClassification, ",num_labels=2))"),
    "mlm": (BertForMaskedLM, "))"),
    "encoder": (BertModel, "),add_pooling_layer=True)"),
}
BERT_IDS = {f"bert-{size}{'-' + head if head else ''}" for size in ("base", "large") for head in BERT_HEADS}
BERT_KEYS = ["vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
             "intermediate_size", "max_position_embeddings", "type_vocab_size"]


def bert_config(size: str) -> BertConfig:
    if size == "base":
        h, L, a, i = 768, 12, 12, 3072
    elif size == "large":
        h, L, a, i = 1024, 24, 16, 4096
    else:
        raise ValueError(size)
    return BertConfig(
        vocab_size=30522,
        hidden_size=h,
        num_hidden_layers=L,
        num_attention_heads=a,
        intermediate_size=i,
        max_position_embeddings=512,
        type_vocab_size=2,
        num_labels=2,
    )


# vramfit's DistilBERT presets: distilbert/distilbert-base-uncased's config.json (DistilBertConfig's
# defaults: dim 768, 6 layers, 12 heads, hidden_dim 3072, 512 positions, the MLM head tied), with
# the classification head (2 labels) or the masked-LM head.
DISTILBERT_HEADS = {
    "distilbert-base": (DistilBertForSequenceClassification, ",num_labels=2))"),
    "distilbert-base-mlm": (DistilBertForMaskedLM, "))"),
}
DISTILBERT_KEYS = ["vocab_size", "dim", "n_layers", "n_heads", "hidden_dim", "max_position_embeddings"]


def distilbert_config() -> DistilBertConfig:
    return DistilBertConfig(vocab_size=30522, dim=768, n_layers=6, n_heads=12, hidden_dim=3072,
                            max_position_embeddings=512, num_labels=2)


# vramfit's RoBERTa presets (classification, 2 labels): FacebookAI/roberta-base, -large,
# FacebookAI/xlm-roberta-base, -large (vocab, hidden, layers, heads, intermediate); 514 positions
# and one token type, as their config.json files say.
ROBERTA_CONFIGS = {
    "roberta-base": (50265, 768, 12, 12, 3072),
    "roberta-large": (50265, 1024, 24, 16, 4096),
    "xlm-roberta-base": (250002, 768, 12, 12, 3072),
    "xlm-roberta-large": (250002, 1024, 24, 16, 4096),
}


def roberta_config(model_id: str) -> RobertaConfig:
    v, h, L, a, i = ROBERTA_CONFIGS[model_id]
    return RobertaConfig(vocab_size=v, hidden_size=h, num_hidden_layers=L, num_attention_heads=a,
                         intermediate_size=i, max_position_embeddings=514, type_vocab_size=1, num_labels=2)


GPT2_SIZES = {
    "gpt2": (768, 12, 12),
    "gpt2-medium": (1024, 24, 16),
    "gpt2-large": (1280, 36, 20),
    "gpt2-xl": (1600, 48, 25),
}


def gpt2_config(name: str) -> GPT2Config:
    e, L, h = GPT2_SIZES[name]
    return GPT2Config(vocab_size=50257, n_positions=1024, n_embd=e, n_layer=L, n_head=h)


LLAMA_CONFIGS = {
    # id: (vocab, hidden, layers, heads, kv_heads, intermediate, max_pos, rope_theta)
    "llama-2-7b": (32000, 4096, 32, 32, 32, 11008, 4096, 10000.0),
    "llama-2-13b": (32000, 5120, 40, 40, 40, 13824, 4096, 10000.0),
    "llama-2-70b": (32000, 8192, 80, 64, 8, 28672, 4096, 10000.0),
    "llama-3-8b": (128256, 4096, 32, 32, 8, 14336, 8192, 500000.0),
    "llama-3-70b": (128256, 8192, 80, 64, 8, 28672, 8192, 500000.0),
}


def llama_config(name: str) -> LlamaConfig:
    v, h, L, a, kv, i, mp, theta = LLAMA_CONFIGS[name]
    return LlamaConfig(
        vocab_size=v,
        hidden_size=h,
        num_hidden_layers=L,
        num_attention_heads=a,
        num_key_value_heads=kv,
        intermediate_size=i,
        max_position_embeddings=mp,
        rope_theta=theta,
        tie_word_embeddings=False,
        attention_bias=False,
        mlp_bias=False,
    )


def mistral_config() -> MistralConfig:
    return MistralConfig(
        vocab_size=32000,
        hidden_size=4096,
        num_hidden_layers=32,
        num_attention_heads=32,
        num_key_value_heads=8,
        intermediate_size=14336,
        max_position_embeddings=32768,
        sliding_window=4096,
        tie_word_embeddings=False,
    )


def qwen25_7b_config() -> Qwen2Config:
    # Qwen2 always uses bias on q/k/v projections and none on o_proj / MLP.
    return Qwen2Config(
        vocab_size=152064,
        hidden_size=3584,
        num_hidden_layers=28,
        num_attention_heads=28,
        num_key_value_heads=4,
        intermediate_size=18944,
        max_position_embeddings=32768,
        tie_word_embeddings=False,
    )


# Qwen3 dense models: their config.json on the Hugging Face Hub (Qwen/Qwen3-*):
# (hidden_size, num_hidden_layers, num_attention_heads, intermediate_size, tie_word_embeddings);
# every one has vocab_size 151936, num_key_value_heads 8, head_dim 128.
QWEN3_CONFIGS = {
    "qwen3-0.6b": (1024, 28, 16, 3072, True),
    "qwen3-1.7b": (2048, 28, 16, 6144, True),
    "qwen3-4b": (2560, 36, 32, 9728, True),
    "qwen3-8b": (4096, 36, 32, 12288, False),
    "qwen3-14b": (5120, 40, 40, 17408, False),
    "qwen3-32b": (5120, 64, 64, 25600, False),
}


def qwen3_config(name: str, layers: int | None = None) -> Qwen3Config:
    hidden, n_layers, heads, inter, tie = QWEN3_CONFIGS[name]
    return Qwen3Config(
        vocab_size=151936,
        hidden_size=hidden,
        num_hidden_layers=layers or n_layers,
        num_attention_heads=heads,
        num_key_value_heads=8,
        head_dim=128,
        intermediate_size=inter,
        max_position_embeddings=40960,
        tie_word_embeddings=tie,
    )


# More presets of the Llama layout, from each model's config.json on the Hugging Face Hub:
# id -> (config class, model class, vocab, hidden, layers, heads, kv heads, intermediate, tie, head_dim or None).
LLAMA_LAYOUT_PRESETS = {
    "llama-3.1-8b": ("llama", 128256, 4096, 32, 32, 8, 14336, False, None),
    "llama-3.1-70b": ("llama", 128256, 8192, 80, 64, 8, 28672, False, None),
    "llama-3.1-405b": ("llama", 128256, 16384, 126, 128, 8, 53248, False, None),
    "llama-3.2-1b": ("llama", 128256, 2048, 16, 32, 8, 8192, True, None),
    "llama-3.2-3b": ("llama", 128256, 3072, 28, 24, 8, 8192, True, None),
    "llama-3.3-70b": ("llama", 128256, 8192, 80, 64, 8, 28672, False, None),
    "mistral-nemo-12b": ("mistral", 131072, 5120, 40, 32, 8, 14336, False, 128),
    "mistral-small-24b": ("mistral", 131072, 5120, 40, 32, 8, 32768, False, 128),
    "qwen2.5-0.5b": ("qwen2", 151936, 896, 24, 14, 2, 4864, True, None),
    "qwen2.5-1.5b": ("qwen2", 151936, 1536, 28, 12, 2, 8960, True, None),
    "qwen2.5-3b": ("qwen2", 151936, 2048, 36, 16, 2, 11008, True, None),
    "qwen2.5-14b": ("qwen2", 152064, 5120, 48, 40, 8, 13824, False, None),
    "qwen2.5-32b": ("qwen2", 152064, 5120, 64, 40, 8, 27648, False, None),
    "qwen2.5-72b": ("qwen2", 152064, 8192, 80, 64, 8, 29568, False, None),
    "smollm2-135m": ("llama", 49152, 576, 30, 9, 3, 1536, True, None),
    "smollm2-360m": ("llama", 49152, 960, 32, 15, 5, 2560, True, None),
    "smollm2-1.7b": ("llama", 49152, 2048, 24, 32, 32, 8192, True, None),
}
_LLAMA_LAYOUT_CLASSES = {
    "llama": (LlamaConfig, LlamaForCausalLM),
    "mistral": (MistralConfig, MistralForCausalLM),
    "qwen2": (Qwen2Config, Qwen2ForCausalLM),
}


# OLMo 2: their config.json on the Hugging Face Hub (allenai/OLMo-2-*):
# (hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads, intermediate_size);
# every one has vocab_size 100352 and an untied head.
OLMO2_CONFIGS = {
    "olmo-2-1b": (2048, 16, 16, 16, 8192),
    "olmo-2-7b": (4096, 32, 32, 32, 11008),
    "olmo-2-13b": (5120, 40, 40, 40, 13824),
    "olmo-2-32b": (5120, 64, 40, 8, 27648),
}


def olmo2_config(name: str, layers: int | None = None) -> Olmo2Config:
    hidden, n_layers, heads, kv, inter = OLMO2_CONFIGS[name]
    return Olmo2Config(
        vocab_size=100352,
        hidden_size=hidden,
        num_hidden_layers=layers or n_layers,
        num_attention_heads=heads,
        num_key_value_heads=kv,
        intermediate_size=inter,
        max_position_embeddings=4096,
        tie_word_embeddings=False,
    )


# OLMo 3: their config.json on the Hugging Face Hub (allenai/Olmo-3-1025-7B, allenai/Olmo-3-1125-32B;
# the 32B's shape as tt-metal's port assessment quotes it): OLMo 2's block with a 4096-token window on
# three layers of four; (hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads,
# intermediate_size); vocabulary 100278, untied head. Their YaRN rope scaling sizes no tensor.
OLMO3_CONFIGS = {
    "olmo-3-7b": (4096, 32, 32, 32, 11008),
    "olmo-3-32b": (5120, 64, 40, 8, 27648),
}


def olmo3_config(name: str, layers: int | None = None) -> Olmo3Config:
    hidden, n_layers, heads, kv, inter = OLMO3_CONFIGS[name]
    return Olmo3Config(
        vocab_size=100278,
        hidden_size=hidden,
        num_hidden_layers=layers or n_layers,
        num_attention_heads=heads,
        num_key_value_heads=kv,
        intermediate_size=inter,
        max_position_embeddings=65536,
        sliding_window=4096,
        tie_word_embeddings=False,
    )


# ERNIE 4.5 (dense): baidu/ERNIE-4.5-0.3B-PT's config.json: (hidden_size, num_hidden_layers,
# num_attention_heads, num_key_value_heads, intermediate_size); vocabulary 103424, head_dim 128, tied
# head, no biases.
ERNIE45_CONFIGS = {
    "ernie-4.5-0.3b": (1024, 18, 16, 2, 3072),
}


def ernie45_config(name: str, layers: int | None = None) -> Ernie4_5Config:
    hidden, n_layers, heads, kv, inter = ERNIE45_CONFIGS[name]
    return Ernie4_5Config(
        vocab_size=103424,
        hidden_size=hidden,
        num_hidden_layers=layers or n_layers,
        num_attention_heads=heads,
        num_key_value_heads=kv,
        intermediate_size=inter,
        head_dim=128,
        max_position_embeddings=131072,
        use_bias=False,
        tie_word_embeddings=True,
    )


# SmolLM3: HuggingFaceTB/SmolLM3-3B's config.json: (hidden_size, num_hidden_layers,
# num_attention_heads, num_key_value_heads, intermediate_size); vocabulary 128256, tied head, every
# fourth layer without rotary embedding (no_rope_layers).
SMOLLM3_CONFIGS = {
    "smollm3-3b": (2048, 36, 16, 4, 11008),
}


def smollm3_config(name: str, layers: int | None = None) -> SmolLM3Config:
    hidden, n_layers, heads, kv, inter = SMOLLM3_CONFIGS[name]
    n = layers or n_layers
    return SmolLM3Config(
        vocab_size=128256,
        hidden_size=hidden,
        num_hidden_layers=n,
        num_attention_heads=heads,
        num_key_value_heads=kv,
        intermediate_size=inter,
        max_position_embeddings=65536,
        no_rope_layers=[int((i + 1) % 4 != 0) for i in range(n)],
        tie_word_embeddings=True,
    )


# EXAONE 4.0: LGAI-EXAONE/EXAONE-4.0-1.2B's and -32B's config.json: (hidden_size, num_hidden_layers,
# num_attention_heads, num_key_value_heads, head_dim, intermediate_size, sliding_window, tied head);
# vocabulary 102400. The 32B slides a 4096-token window on three layers of four (the fourth full,
# without rotary embedding); the 1.2B's layers are all full, with it.
EXAONE4_CONFIGS = {
    "exaone-4.0-1.2b": (2048, 30, 32, 8, 64, 4096, None, True),
    "exaone-4.0-32b": (5120, 64, 40, 8, 128, 27392, 4096, False),
}


# Qwen3.5's language models: the `text_config` of Qwen/Qwen3.5-0.8B's, -2B's, -4B's, -9B's and
# -27B's config.json (hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads,
# intermediate_size, linear_num_value_heads, tied head); vocabulary 248320, head_dim 256, 16
# linear key heads of 128 and value heads of 128, full attention every fourth layer, a quarter of
# each head rotated (the class defaults).
QWEN3_5_CONFIGS = {
    "qwen3.5-0.8b": (1024, 24, 8, 2, 3584, 16, True),
    "qwen3.5-2b": (2048, 24, 8, 2, 6144, 16, True),
    "qwen3.5-4b": (2560, 32, 16, 4, 9216, 32, True),
    "qwen3.5-9b": (4096, 32, 16, 4, 12288, 32, False),
    "qwen3.5-27b": (5120, 64, 24, 4, 17408, 48, False),
}


def qwen3_5_config(name: str, layers: int | None = None) -> Qwen3_5TextConfig:
    hidden, n_layers, heads, kv, inter, value_heads, tie = QWEN3_5_CONFIGS[name]
    return Qwen3_5TextConfig(
        vocab_size=248320,
        hidden_size=hidden,
        num_hidden_layers=layers or n_layers,
        num_attention_heads=heads,
        num_key_value_heads=kv,
        intermediate_size=inter,
        linear_num_value_heads=value_heads,
        tie_word_embeddings=tie,
    )


def exaone4_config(name: str, layers: int | None = None) -> Exaone4Config:
    hidden, n_layers, heads, kv, head_dim, inter, window, tie = EXAONE4_CONFIGS[name]
    n = layers or n_layers
    types = ["full_attention" if window is None or (i + 1) % 4 == 0 else "sliding_attention"
             for i in range(n)]
    return Exaone4Config(
        vocab_size=102400,
        hidden_size=hidden,
        num_hidden_layers=n,
        num_attention_heads=heads,
        num_key_value_heads=kv,
        head_dim=head_dim,
        intermediate_size=inter,
        sliding_window=window,
        layer_types=types,
        tie_word_embeddings=tie,
    )


# Gemma (first generation): their config.json on the Hugging Face Hub (google/gemma-2b, -7b):
# (hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads, intermediate_size);
# vocabulary 256000, head_dim 256, tied head, gelu_pytorch_tanh.
GEMMA_CONFIGS = {
    "gemma-2b": (2048, 18, 8, 1, 16384),
    "gemma-7b": (3072, 28, 16, 16, 24576),
}


def gemma_config(name: str, layers: int | None = None) -> GemmaConfig:
    hidden, n_layers, heads, kv, inter = GEMMA_CONFIGS[name]
    return GemmaConfig(
        vocab_size=256000,
        hidden_size=hidden,
        num_hidden_layers=layers or n_layers,
        num_attention_heads=heads,
        num_key_value_heads=kv,
        head_dim=256,
        intermediate_size=inter,
        hidden_act="gelu_pytorch_tanh",
        max_position_embeddings=8192,
        tie_word_embeddings=True,
    )


# Gemma 2 and Gemma 3 (text): their config.json on the Hugging Face Hub (google/gemma-2-*,
# google/gemma-3-1b-pt; the text_config of google/gemma-3-{4b,12b,27b}-pt):
# (vocab_size, hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads,
#  head_dim, intermediate_size, sliding_window); tied head, gelu_pytorch_tanh; the config
# classes' default layer_types (Gemma 2: every 2nd layer full, Gemma 3: every 6th) and
# soft-capping (Gemma 2: scores 50, logits 30; Gemma 3: none).
GEMMA2_CONFIGS = {
    "gemma-2-2b": (256000, 2304, 26, 8, 4, 256, 9216, 4096),
    "gemma-2-9b": (256000, 3584, 42, 16, 8, 256, 14336, 4096),
    "gemma-2-27b": (256000, 4608, 46, 32, 16, 128, 36864, 4096),
}
GEMMA3_CONFIGS = {
    "gemma-3-1b": (262144, 1152, 26, 4, 1, 256, 6912, 512),
    "gemma-3-4b": (262208, 2560, 34, 8, 4, 256, 10240, 1024),
    "gemma-3-12b": (262208, 3840, 48, 16, 8, 256, 15360, 1024),
    "gemma-3-27b": (262208, 5376, 62, 32, 16, 128, 21504, 1024),
}


def gemma23_config(name: str, layers: int | None = None):
    gemma2 = name in GEMMA2_CONFIGS
    vocab, hidden, n_layers, heads, kv, head_dim, inter, window = (
        GEMMA2_CONFIGS if gemma2 else GEMMA3_CONFIGS)[name]
    config_class = Gemma2Config if gemma2 else Gemma3TextConfig
    return config_class(
        vocab_size=vocab,
        hidden_size=hidden,
        num_hidden_layers=layers or n_layers,
        num_attention_heads=heads,
        num_key_value_heads=kv,
        head_dim=head_dim,
        intermediate_size=inter,
        hidden_activation="gelu_pytorch_tanh",
        sliding_window=window,
        tie_word_embeddings=True,
    )


# Pythia (GPT-NeoX): their config.json on the Hugging Face Hub (EleutherAI/pythia-*):
# (vocab_size, hidden_size, num_hidden_layers, num_attention_heads); intermediate_size 4 x hidden,
# rotary_pct 0.25, use_parallel_residual, untied head, max_position_embeddings 2048.
PYTHIA_CONFIGS = {
    "pythia-70m": (50304, 512, 6, 8),
    "pythia-160m": (50304, 768, 12, 12),
    "pythia-410m": (50304, 1024, 24, 16),
    "pythia-1b": (50304, 2048, 16, 8),
    "pythia-1.4b": (50304, 2048, 24, 16),
    "pythia-2.8b": (50304, 2560, 32, 32),
    "pythia-6.9b": (50432, 4096, 32, 32),
    "pythia-12b": (50688, 5120, 36, 40),
}


def pythia_config(name: str, layers: int | None = None) -> GPTNeoXConfig:
    vocab, hidden, n_layers, heads = PYTHIA_CONFIGS[name]
    return GPTNeoXConfig(
        vocab_size=vocab,
        hidden_size=hidden,
        num_hidden_layers=layers or n_layers,
        num_attention_heads=heads,
        intermediate_size=4 * hidden,
        hidden_act="gelu",
        rotary_pct=0.25,
        rotary_emb_base=10000,
        max_position_embeddings=2048,
        use_parallel_residual=True,
        tie_word_embeddings=False,
        attention_dropout=0.0,
        hidden_dropout=0.0,
    )


# Phi-3 / Phi-4: their config.json on the Hugging Face Hub (microsoft/Phi-3-mini-4k-instruct,
# Phi-3-medium-4k-instruct, Phi-4-mini-instruct, phi-4):
# (vocab_size, hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads,
#  intermediate_size, partial_rotary_factor, tie_word_embeddings).
PHI3_CONFIGS = {
    "phi-3-mini": (32064, 3072, 32, 32, 32, 8192, 1.0, False),
    "phi-3-medium": (32064, 5120, 40, 40, 10, 17920, 1.0, False),
    "phi-4-mini": (200064, 3072, 32, 24, 8, 8192, 0.75, True),
    "phi-4": (100352, 5120, 40, 40, 10, 17920, 1.0, False),
}


def phi3_config(name: str, layers: int | None = None) -> Phi3Config:
    vocab, hidden, n_layers, heads, kv, inter, rotary, tie = PHI3_CONFIGS[name]
    return Phi3Config(
        vocab_size=vocab,
        hidden_size=hidden,
        num_hidden_layers=layers or n_layers,
        num_attention_heads=heads,
        num_key_value_heads=kv,
        intermediate_size=inter,
        partial_rotary_factor=rotary,
        max_position_embeddings=4096,
        tie_word_embeddings=tie,
    )


# T5: their config.json on the Hugging Face Hub (google-t5/t5-small, -base, -large; google/flan-t5-xl):
# (d_model, d_ff, d_kv, num_layers (= num_decoder_layers), num_heads, feed_forward_proj, tie_word_embeddings);
# vocabulary 32128, 32 relative-attention buckets, dropout_rate 0.1.
T5_CONFIGS = {
    "t5-small": (512, 2048, 64, 6, 8, "relu", True),
    "t5-base": (768, 3072, 64, 12, 12, "relu", True),
    "t5-large": (1024, 4096, 64, 24, 16, "relu", True),
    "flan-t5-xl": (2048, 5120, 64, 24, 32, "gated-gelu", False),
}
T5_KEYS = ["vocab_size", "d_model", "d_ff", "d_kv", "num_layers", "num_decoder_layers", "num_heads",
           "feed_forward_proj", "relative_attention_num_buckets", "dropout_rate", "scale_decoder_outputs"]


def t5_config(name: str, layers: int | None = None) -> T5Config:
    d_model, d_ff, d_kv, n_layers, heads, ff, tie = T5_CONFIGS[name]
    return T5Config(
        vocab_size=32128,
        d_model=d_model,
        d_ff=d_ff,
        d_kv=d_kv,
        num_layers=layers or n_layers,
        num_decoder_layers=layers or n_layers,
        num_heads=heads,
        feed_forward_proj=ff,
        tie_word_embeddings=tie,
        decoder_start_token_id=0,
    )


def t5_model(cfg: T5Config) -> T5ForConditionalGeneration:
    """T5ForConditionalGeneration as from_pretrained leaves it: transformers 5.24's T5Config always sets
    tie_word_embeddings=True (the config.json flag only survives as scale_decoder_outputs), so the
    constructor ties lm_head to shared; from_pretrained unties them when the checkpoint holds a
    different lm_head.weight (T5 v1.1, Flan-T5: tie_word_embeddings=false). Untie the same way."""
    m = T5ForConditionalGeneration(cfg)
    if not cfg.scale_decoder_outputs:
        m.lm_head.weight = nn.Parameter(torch.empty_like(m.shared.weight))
    return m


# Hugging Face ViT (ViTForImageClassification, google/vit-*-patch16-224 on the Hub):
# (hidden_size, num_hidden_layers, num_attention_heads, intermediate_size); image 224, patch 16,
# 1000 labels (the ImageNet checkpoints' id2label), qkv_bias, dropout 0.
HF_VIT_CONFIGS = {
    "vit-base-patch16-224": (768, 12, 12, 3072),
    "vit-large-patch16-224": (1024, 24, 16, 4096),
}


def hf_vit_config(name: str) -> ViTConfig:
    hidden, layers, heads, inter = HF_VIT_CONFIGS[name]
    return ViTConfig(hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                     intermediate_size=inter, image_size=224, patch_size=16, num_labels=1000)


# StarCoder2: their config.json on the Hugging Face Hub (bigcode/starcoder2-3b, -7b, -15b):
# (hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads, tie_word_embeddings);
# vocabulary 49152, intermediate_size 4 x hidden, use_bias, gelu_pytorch_tanh, sliding_window 4096.
STARCODER2_CONFIGS = {
    "starcoder2-3b": (3072, 30, 24, 2, True),
    "starcoder2-7b": (4608, 32, 36, 4, True),
    "starcoder2-15b": (6144, 40, 48, 4, False),
}


def starcoder2_config(name: str, layers: int | None = None) -> Starcoder2Config:
    hidden, n_layers, heads, kv, tie = STARCODER2_CONFIGS[name]
    return Starcoder2Config(
        vocab_size=49152,
        hidden_size=hidden,
        num_hidden_layers=layers or n_layers,
        num_attention_heads=heads,
        num_key_value_heads=kv,
        intermediate_size=4 * hidden,
        hidden_act="gelu_pytorch_tanh",
        use_bias=True,
        sliding_window=4096,
        tie_word_embeddings=tie,
        residual_dropout=0.0,
        embedding_dropout=0.0,
        attention_dropout=0.0,
    )


def _cfg_str(cfg, keys) -> str:
    d = cfg.to_dict()
    return ",".join(f"{k}={d[k]}" for k in keys)


LLAMA_KEYS = [
    "vocab_size",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "intermediate_size",
    "tie_word_embeddings",
]


# --------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------

TORCHVISION_IDS = [
    "resnet18",
    "resnet34",
    "resnet50",
    "resnet101",
    "resnet152",
    "vgg16",
    "mobilenet_v2",
    "mobilenet_v3_small",
    "mobilenet_v3_large",
    "efficientnet_b0",
    "convnext_tiny",
    "convnext_large",
    "regnet_x_400mf",
    "regnet_y_400mf",
    "regnet_y_128gf",
    "vit_b_16",
]


@contextlib.contextmanager
def _real_regnet_block_params():
    """torchvision's `BlockParams.from_init_params` computes RegNet's stage widths with real
    tensors (`torch.arange`, `.tolist()`), which the meta device and FakeTensorMode cannot
    evaluate; while building, it runs on real CPU tensors outside any dispatch mode. The
    widths it returns are plain Python ints, as in a normal build."""
    from torch.utils._python_dispatch import _disable_current_modes
    from torchvision.models import regnet

    orig = regnet.BlockParams.__dict__["from_init_params"]

    def real(cls, *args, **kwargs):
        with _disable_current_modes(), torch.device("cpu"):
            return orig.__func__(cls, *args, **kwargs)

    regnet.BlockParams.from_init_params = classmethod(real)
    try:
        yield
    finally:
        regnet.BlockParams.from_init_params = orig


def build(model_id: str, attn: str = "eager", layers: int | None = None):
    """Build model `model_id` on the current default device (a transformer
    with a Qwen3, OLMo 2, Gemma or T5 config cut to its first `layers` blocks, each of T5's two
    stacks, when given).

    Returns (model, source_string).
    """
    if model_id in TORCHVISION_IDS:
        with _real_regnet_block_params():
            m = getattr(torchvision.models, model_id)(weights=None)
        return m, f"{TV} torchvision.models.{model_id}(weights=None) [num_classes=1000]"
    if model_id == "mlp-small":
        return mlp_small(), (
            f"{TORCH} nn.Sequential(4x[Linear(1024,4096),GELU(),Linear(4096,1024)],Linear(1024,1000))"
        )
    if model_id in BERT_IDS:
        size, _, head = model_id[len("bert-"):].partition("-")
        cls, tail = BERT_HEADS[head]
        cfg = bert_config(size)
        cfg._attn_implementation = attn
        return cls(cfg), f"{TF} {cls.__name__}(BertConfig({_cfg_str(cfg, BERT_KEYS)}{tail}"
    if model_id in DISTILBERT_HEADS:
        cls, tail = DISTILBERT_HEADS[model_id]
        cfg = distilbert_config()
        cfg._attn_implementation = attn
        return cls(cfg), f"{TF} {cls.__name__}(DistilBertConfig({_cfg_str(cfg, DISTILBERT_KEYS)}{tail}"
    if model_id in ROBERTA_CONFIGS:
        cfg = roberta_config(model_id)
        cfg._attn_implementation = attn
        return RobertaForSequenceClassification(cfg), (
            f"{TF} RobertaForSequenceClassification(RobertaConfig({_cfg_str(cfg, BERT_KEYS)},num_labels=2))"
        )
    if model_id in GPT2_SIZES:
        cfg = gpt2_config(model_id)
        cfg._attn_implementation = attn
        m = GPT2LMHeadModel(cfg)
        keys = ["vocab_size", "n_positions", "n_embd", "n_layer", "n_head", "tie_word_embeddings"]
        return m, f"{TF} GPT2LMHeadModel(GPT2Config({_cfg_str(cfg, keys)}))"
    if model_id in LLAMA_CONFIGS:
        cfg = llama_config(model_id)
        cfg._attn_implementation = attn
        return LlamaForCausalLM(cfg), f"{TF} LlamaForCausalLM(LlamaConfig({_cfg_str(cfg, LLAMA_KEYS)}))"
    if model_id == "llama-tiny":
        cfg = llama_tiny_config()
        cfg._attn_implementation = attn
        return LlamaForCausalLM(cfg), (
            f"{TF} LlamaForCausalLM(LlamaConfig({_cfg_str(cfg, LLAMA_KEYS + ['max_position_embeddings'])}))"
        )
    if model_id == "mistral-7b":
        cfg = mistral_config()
        cfg._attn_implementation = attn
        return MistralForCausalLM(cfg), f"{TF} MistralForCausalLM(MistralConfig({_cfg_str(cfg, LLAMA_KEYS)}))"
    if model_id == "qwen2.5-7b":
        cfg = qwen25_7b_config()
        cfg._attn_implementation = attn
        return Qwen2ForCausalLM(cfg), (
            f"{TF} Qwen2ForCausalLM(Qwen2Config({_cfg_str(cfg, LLAMA_KEYS)}) [qkv bias])"
        )
    if model_id in LLAMA_LAYOUT_PRESETS:
        kind, vocab, hidden, layers, heads, kv, inter, tie, head_dim = LLAMA_LAYOUT_PRESETS[model_id]
        config_class, model_class = _LLAMA_LAYOUT_CLASSES[kind]
        extra = {"head_dim": head_dim} if head_dim else {}
        cfg = config_class(vocab_size=vocab, hidden_size=hidden, num_hidden_layers=layers,
                           num_attention_heads=heads, num_key_value_heads=kv, intermediate_size=inter,
                           tie_word_embeddings=tie, **extra)
        cfg._attn_implementation = attn
        keys = LLAMA_KEYS + (["head_dim"] if head_dim else [])
        return model_class(cfg), f"{TF} {model_class.__name__}({config_class.__name__}({_cfg_str(cfg, keys)}))"
    if model_id in GEMMA_CONFIGS:
        cfg = gemma_config(model_id, layers)
        cfg._attn_implementation = attn
        return GemmaForCausalLM(cfg), (
            f"{TF} GemmaForCausalLM(GemmaConfig({_cfg_str(cfg, LLAMA_KEYS + ['head_dim', 'hidden_act'])}))"
        )
    if model_id in GEMMA2_CONFIGS or model_id in GEMMA3_CONFIGS:
        cfg = gemma23_config(model_id, layers)
        cfg._attn_implementation = attn
        model_class = Gemma2ForCausalLM if model_id in GEMMA2_CONFIGS else Gemma3ForCausalLM
        keys = LLAMA_KEYS + ["head_dim", "sliding_window", "attn_logit_softcapping",
                             "final_logit_softcapping"]
        return model_class(cfg), (
            f"{TF} {model_class.__name__}({type(cfg).__name__}({_cfg_str(cfg, keys)}))"
        )
    if model_id in PYTHIA_CONFIGS:
        cfg = pythia_config(model_id, layers)
        cfg._attn_implementation = attn
        keys = ["vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                "use_parallel_residual", "tie_word_embeddings"]
        return GPTNeoXForCausalLM(cfg), (
            f"{TF} GPTNeoXForCausalLM(GPTNeoXConfig({_cfg_str(cfg, keys)},"
            f"partial_rotary_factor={cfg.rope_parameters['partial_rotary_factor']}))"
        )
    if model_id in PHI3_CONFIGS:
        cfg = phi3_config(model_id, layers)
        cfg._attn_implementation = attn
        return Phi3ForCausalLM(cfg), (
            f"{TF} Phi3ForCausalLM(Phi3Config({_cfg_str(cfg, LLAMA_KEYS)},"
            f"partial_rotary_factor={cfg.rope_parameters['partial_rotary_factor']}))"
        )
    if model_id in STARCODER2_CONFIGS:
        cfg = starcoder2_config(model_id, layers)
        cfg._attn_implementation = attn
        keys = LLAMA_KEYS + ["use_bias", "sliding_window"]
        return Starcoder2ForCausalLM(cfg), (
            f"{TF} Starcoder2ForCausalLM(Starcoder2Config({_cfg_str(cfg, keys)}))"
        )
    if model_id in OLMO2_CONFIGS:
        cfg = olmo2_config(model_id, layers)
        cfg._attn_implementation = attn
        return Olmo2ForCausalLM(cfg), f"{TF} Olmo2ForCausalLM(Olmo2Config({_cfg_str(cfg, LLAMA_KEYS)}))"
    if model_id in OLMO3_CONFIGS:
        cfg = olmo3_config(model_id, layers)
        cfg._attn_implementation = attn
        keys = LLAMA_KEYS + ["sliding_window"]
        return Olmo3ForCausalLM(cfg), f"{TF} Olmo3ForCausalLM(Olmo3Config({_cfg_str(cfg, keys)}))"
    if model_id in SMOLLM3_CONFIGS:
        cfg = smollm3_config(model_id, layers)
        cfg._attn_implementation = attn
        keys = LLAMA_KEYS + ["no_rope_layers"]
        return SmolLM3ForCausalLM(cfg), f"{TF} SmolLM3ForCausalLM(SmolLM3Config({_cfg_str(cfg, keys)}))"
    if model_id in QWEN3_5_CONFIGS:
        cfg = qwen3_5_config(model_id, layers)
        cfg._attn_implementation = attn
        keys = LLAMA_KEYS + ["head_dim", "linear_num_value_heads"]
        return Qwen3_5ForCausalLM(cfg), f"{TF} Qwen3_5ForCausalLM(Qwen3_5TextConfig({_cfg_str(cfg, keys)}))"
    if model_id in EXAONE4_CONFIGS:
        cfg = exaone4_config(model_id, layers)
        cfg._attn_implementation = attn
        keys = LLAMA_KEYS + ["head_dim", "sliding_window", "layer_types"]
        return Exaone4ForCausalLM(cfg), f"{TF} Exaone4ForCausalLM(Exaone4Config({_cfg_str(cfg, keys)}))"
    if model_id in ERNIE45_CONFIGS:
        cfg = ernie45_config(model_id, layers)
        cfg._attn_implementation = attn
        keys = LLAMA_KEYS + ["head_dim"]
        return Ernie4_5ForCausalLM(cfg), f"{TF} Ernie4_5ForCausalLM(Ernie4_5Config({_cfg_str(cfg, keys)}))"
    if model_id in T5_CONFIGS:
        cfg = t5_config(model_id, layers)
        cfg._attn_implementation = attn
        return t5_model(cfg), f"{TF} T5ForConditionalGeneration(T5Config({_cfg_str(cfg, T5_KEYS)}))"
    if model_id in HF_VIT_CONFIGS:
        cfg = hf_vit_config(model_id)
        cfg._attn_implementation = attn
        keys = ["hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "image_size",
                "patch_size", "qkv_bias"]
        return ViTForImageClassification(cfg), (
            f"{TF} ViTForImageClassification(ViTConfig({_cfg_str(cfg, keys)},num_labels={cfg.num_labels}))"
        )
    if model_id in moe_models.ALL:
        return moe_models.build(model_id, attn, layers)
    if model_id in QWEN3_CONFIGS:
        cfg = qwen3_config(model_id, layers)
        cfg._attn_implementation = attn
        return Qwen3ForCausalLM(cfg), (
            f"{TF} Qwen3ForCausalLM(Qwen3Config({_cfg_str(cfg, LLAMA_KEYS + ['head_dim'])}))"
        )
    raise KeyError(model_id)


PARAM_COUNT_IDS = TORCHVISION_IDS + [
    "bert-base",
    "bert-large",
    "bert-base-encoder",
    "bert-large-encoder",
    "bert-base-mlm",
    "bert-large-mlm",
    *ROBERTA_CONFIGS,
    *DISTILBERT_HEADS,
    "gpt2",
    "gpt2-medium",
    "gpt2-large",
    "gpt2-xl",
    "llama-2-7b",
    "llama-2-13b",
    "llama-2-70b",
    "llama-3-8b",
    "llama-3-70b",
    "mistral-7b",
    "qwen2.5-7b",
    "mlp-small",
    "llama-tiny",
] + list(QWEN3_CONFIGS) + list(LLAMA_LAYOUT_PRESETS) + list(OLMO2_CONFIGS) + list(OLMO3_CONFIGS) + list(ERNIE45_CONFIGS) + list(EXAONE4_CONFIGS) + list(QWEN3_5_CONFIGS) + list(SMOLLM3_CONFIGS) + list(GEMMA_CONFIGS) + (
    list(GEMMA2_CONFIGS) + list(GEMMA3_CONFIGS) + list(PYTHIA_CONFIGS) + list(PHI3_CONFIGS)
    + list(STARCODER2_CONFIGS) + list(T5_CONFIGS) + list(HF_VIT_CONFIGS) + list(moe_models.PRESETS))
