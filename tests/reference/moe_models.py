"""Mixture-of-experts models (and Gemma 4, and dense layouts read from a config.json only) for
param_counts.py and memory_reference.py.

Each preset is the `config.json` of the checkpoint on the Hugging Face Hub,
written out as config-class keyword arguments (fields equal to the config
class's default are left out); nothing is downloaded.
"""

from __future__ import annotations

import transformers
from transformers import (
    ArceeConfig,
    BambaConfig,
    BambaForCausalLM,
    ArceeForCausalLM,
    Llama4ForCausalLM,
    Llama4TextConfig,
    Glm4Config,
    Glm4ForCausalLM,
    GlmConfig,
    GlmForCausalLM,
    CohereConfig,
    CohereForCausalLM,
    Cohere2Config,
    Cohere2ForCausalLM,
    GPTBigCodeConfig,
    GPTBigCodeForCausalLM,
    NemotronConfig,
    NemotronForCausalLM,
    OPTConfig,
    OPTForCausalLM,
    PhiConfig,
    PhiForCausalLM,
    GraniteConfig,
    GraniteMoeConfig,
    GraniteMoeForCausalLM,
    GraniteMoeHybridConfig,
    NemotronHConfig,
    LlamaConfig,
    LlamaForCausalLM,
    MinistralConfig,
    Dots1Config,
    Dots1ForCausalLM,
    Olmo2Config,
    Olmo2ForCausalLM,
    Qwen3Config,
    Qwen3ForCausalLM,
    HunYuanMoEV1Config,
    HunYuanMoEV1ForCausalLM,
    HunYuanDenseV1Config,
    HunYuanDenseV1ForCausalLM,
    SeedOssConfig,
    SeedOssForCausalLM,
    MinistralForCausalLM,
    Ministral3Config,
    Ministral3ForCausalLM,
    NemotronHForCausalLM,
    GraniteMoeHybridForCausalLM,
    GraniteMoeSharedConfig,
    GraniteMoeSharedForCausalLM,
    GraniteForCausalLM,
    StableLmConfig,
    StableLmForCausalLM,
    DeepseekV2Config,
    DeepseekV2ForCausalLM,
    DeepseekV3Config,
    DeepseekV3ForCausalLM,
    Ernie4_5_MoeConfig,
    Ernie4_5_MoeForCausalLM,
    Glm4MoeConfig,
    Glm4MoeForCausalLM,
    Glm4MoeLiteConfig,
    Glm4MoeLiteForCausalLM,
    GptOssConfig,
    GptOssForCausalLM,
    MiniMaxM2Config,
    MiniMaxM2ForCausalLM,
    MixtralConfig,
    MixtralForCausalLM,
    OlmoeConfig,
    OlmoeForCausalLM,
    Qwen2MoeConfig,
    Qwen2MoeForCausalLM,
    Qwen3MoeConfig,
    Qwen3MoeForCausalLM,
    Qwen3NextConfig,
    Qwen3NextForCausalLM,
    Qwen3_5MoeForCausalLM,
    Qwen3_5MoeTextConfig,
    Gemma4ForCausalLM,
    Gemma4TextConfig,
    DeepseekV32Config,
    DeepseekV32ForCausalLM,
    GlmMoeDsaConfig,
    GlmMoeDsaForCausalLM,
)

TF = f"transformers {transformers.__version__}"

CLASSES = {
    "mixtral": (MixtralConfig, MixtralForCausalLM),
    "qwen2_moe": (Qwen2MoeConfig, Qwen2MoeForCausalLM),
    "qwen3_moe": (Qwen3MoeConfig, Qwen3MoeForCausalLM),
    "olmoe": (OlmoeConfig, OlmoeForCausalLM),
    "deepseek_v2": (DeepseekV2Config, DeepseekV2ForCausalLM),
    "deepseek_v3": (DeepseekV3Config, DeepseekV3ForCausalLM),
    "gpt_oss": (GptOssConfig, GptOssForCausalLM),
    "glm4_moe": (Glm4MoeConfig, Glm4MoeForCausalLM),
    "ernie4_5_moe": (Ernie4_5_MoeConfig, Ernie4_5_MoeForCausalLM),
    "glm4_moe_lite": (Glm4MoeLiteConfig, Glm4MoeLiteForCausalLM),
    "minimax_m2": (MiniMaxM2Config, MiniMaxM2ForCausalLM),
    "qwen3_next": (Qwen3NextConfig, Qwen3NextForCausalLM),
    "qwen3_5_moe_text": (Qwen3_5MoeTextConfig, Qwen3_5MoeForCausalLM),
    "gemma4_text": (Gemma4TextConfig, Gemma4ForCausalLM),
    "deepseek_v32": (DeepseekV32Config, DeepseekV32ForCausalLM),
    "glm_moe_dsa": (GlmMoeDsaConfig, GlmMoeDsaForCausalLM),
    "arcee": (ArceeConfig, ArceeForCausalLM),
    "nemotron": (NemotronConfig, NemotronForCausalLM),
    "gpt_bigcode": (GPTBigCodeConfig, GPTBigCodeForCausalLM),
    "llama4_text": (Llama4TextConfig, Llama4ForCausalLM),
    "glm4": (Glm4Config, Glm4ForCausalLM),
    "phi": (PhiConfig, PhiForCausalLM),
    "opt": (OPTConfig, OPTForCausalLM),
    "granite": (GraniteConfig, GraniteForCausalLM),
    "bamba": (BambaConfig, BambaForCausalLM),
    "granitemoe": (GraniteMoeConfig, GraniteMoeForCausalLM),
    "granitemoeshared": (GraniteMoeSharedConfig, GraniteMoeSharedForCausalLM),
    "granitemoehybrid": (GraniteMoeHybridConfig, GraniteMoeHybridForCausalLM),
    "nemotron_h": (NemotronHConfig, NemotronHForCausalLM),
    "llama": (LlamaConfig, LlamaForCausalLM),
    "ministral": (MinistralConfig, MinistralForCausalLM),
    "ministral3": (Ministral3Config, Ministral3ForCausalLM),
    "hunyuan_v1_dense": (HunYuanDenseV1Config, HunYuanDenseV1ForCausalLM),
    "dots1": (Dots1Config, Dots1ForCausalLM),
    "hunyuan_v1_moe": (HunYuanMoEV1Config, HunYuanMoEV1ForCausalLM),
    "qwen3": (Qwen3Config, Qwen3ForCausalLM),
    "olmo2": (Olmo2Config, Olmo2ForCausalLM),
    "seed_oss": (SeedOssConfig, SeedOssForCausalLM),
    "stablelm": (StableLmConfig, StableLmForCausalLM),
    "glm": (GlmConfig, GlmForCausalLM),
    "cohere": (CohereConfig, CohereForCausalLM),
    "cohere2": (Cohere2Config, Cohere2ForCausalLM),
}


def _every_nth_full(layers: int, n: int) -> list:
    """Gemma 4's layer_types: n - 1 sliding layers, then a full one."""
    return ["full_attention" if (i + 1) % n == 0 else "sliding_attention" for i in range(layers)]

# id -> (model_type, config.json fields). Sources: mistralai/Mixtral-8x7B-v0.1,
# mistralai/Mixtral-8x22B-v0.1, Qwen/Qwen1.5-MoE-A2.7B, Qwen/Qwen3-30B-A3B,
# Qwen/Qwen3-235B-A22B, allenai/OLMoE-1B-7B-0924, deepseek-ai/DeepSeek-V2-Lite,
# deepseek-ai/DeepSeek-V3 (DeepSeek-R1 has the same shapes), openai/gpt-oss-20b,
# openai/gpt-oss-120b, zai-org/GLM-4.5-Air, zai-org/GLM-4.5, zai-org/GLM-4.6 (GLM-4.7 has its
# shapes; 4.5 and 4.6 differ only in max_position_embeddings, which sizes no tensor),
# MiniMaxAI/MiniMax-M2 (M2.7 has its shapes and a longer max_position_embeddings),
# zai-org/GLM-4.7-Flash, baidu/ERNIE-4.5-21B-A3B-PT, baidu/ERNIE-4.5-300B-A47B-PT,
# Qwen/Qwen3-Next-80B-A3B-Instruct, and the text_config of Qwen/Qwen3.5-35B-A3B, -122B-A10B and
# -397B-A17B (class defaults: head_dim 256, a quarter of it rotated, 16 linear key heads of 128,
# full attention every fourth layer), and the text_config of google/gemma-4-E2B, -E4B, -26B-A4B and
# -31B as transformers' convert_gemma4_weights.py (_VARIANTS) writes them and copies of the released
# files show them (vocabulary 262144, heads of 256 sliding and 512 full, logits capped at 30), and the
# text_config of meta-llama/Llama-4-Scout-17B-16E-Instruct and -Maverick-17B-128E-Instruct (Scout: 16
# experts in every layer, q/k norms; Maverick: 128 in every second layer, none; both every fourth layer
# without rotary embedding and chunks of 8192; moe_layers and no_rope_layers as the class derives them).
PRESETS = {
    "mixtral-8x7b": ("mixtral", dict(
        vocab_size=32000, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
        num_attention_heads=32, num_key_value_heads=8, num_local_experts=8, num_experts_per_tok=2,
        sliding_window=None, tie_word_embeddings=False)),
    "mixtral-8x22b": ("mixtral", dict(
        vocab_size=32768, hidden_size=6144, intermediate_size=16384, num_hidden_layers=56,
        num_attention_heads=48, num_key_value_heads=8, num_local_experts=8, num_experts_per_tok=2,
        sliding_window=None, tie_word_embeddings=False)),
    "qwen1.5-moe-a2.7b": ("qwen2_moe", dict(
        vocab_size=151936, hidden_size=2048, intermediate_size=5632, num_hidden_layers=24,
        num_attention_heads=16, num_key_value_heads=16, moe_intermediate_size=1408,
        shared_expert_intermediate_size=5632, num_experts=60, num_experts_per_tok=4,
        norm_topk_prob=False, decoder_sparse_step=1, tie_word_embeddings=False)),
    "qwen3-30b-a3b": ("qwen3_moe", dict(
        vocab_size=151936, hidden_size=2048, intermediate_size=6144, num_hidden_layers=48,
        num_attention_heads=32, num_key_value_heads=4, head_dim=128, moe_intermediate_size=768,
        num_experts=128, num_experts_per_tok=8, norm_topk_prob=True, decoder_sparse_step=1,
        mlp_only_layers=[], tie_word_embeddings=False)),
    "qwen3-235b-a22b": ("qwen3_moe", dict(
        vocab_size=151936, hidden_size=4096, intermediate_size=12288, num_hidden_layers=94,
        num_attention_heads=64, num_key_value_heads=4, head_dim=128, moe_intermediate_size=1536,
        num_experts=128, num_experts_per_tok=8, norm_topk_prob=True, decoder_sparse_step=1,
        mlp_only_layers=[], tie_word_embeddings=False)),
    "olmoe-1b-7b": ("olmoe", dict(
        vocab_size=50304, hidden_size=2048, intermediate_size=1024, num_hidden_layers=16,
        num_attention_heads=16, num_key_value_heads=16, num_experts=64, num_experts_per_tok=8,
        norm_topk_prob=False, clip_qkv=None, tie_word_embeddings=False)),
    "deepseek-v2-lite": ("deepseek_v2", dict(
        vocab_size=102400, hidden_size=2048, intermediate_size=10944, num_hidden_layers=27,
        num_attention_heads=16, num_key_value_heads=16, moe_intermediate_size=1408,
        n_routed_experts=64, n_shared_experts=2, num_experts_per_tok=6, first_k_dense_replace=1,
        q_lora_rank=None, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64,
        v_head_dim=128, topk_method="greedy", n_group=1, topk_group=1, routed_scaling_factor=1.0,
        norm_topk_prob=False, tie_word_embeddings=False)),
    "deepseek-v3": ("deepseek_v3", dict(
        vocab_size=129280, hidden_size=7168, intermediate_size=18432, num_hidden_layers=61,
        num_attention_heads=128, num_key_value_heads=128, moe_intermediate_size=2048,
        n_routed_experts=256, n_shared_experts=1, num_experts_per_tok=8, first_k_dense_replace=3,
        q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64,
        v_head_dim=128, n_group=8, topk_group=4, routed_scaling_factor=2.5, norm_topk_prob=True,
        tie_word_embeddings=False)),
    # deepseek-ai/DeepSeek-V3.2's config.json (model_type deepseek_v32): DeepSeek-V3's shapes and a
    # sparse-attention indexer in every layer (64 heads of 128, top 2048 keys).
    "deepseek-v3.2": ("deepseek_v32", dict(
        vocab_size=129280, hidden_size=7168, intermediate_size=18432, num_hidden_layers=61,
        num_attention_heads=128, num_key_value_heads=128, moe_intermediate_size=2048,
        n_routed_experts=256, n_shared_experts=1, num_experts_per_tok=8, first_k_dense_replace=3,
        q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64,
        v_head_dim=128, n_group=8, topk_group=4, routed_scaling_factor=2.5, norm_topk_prob=True,
        index_n_heads=64, index_head_dim=128, index_topk=2048, max_position_embeddings=163840,
        tie_word_embeddings=False)),
    # zai-org/GLM-5's config.json (model_type glm_moe_dsa): latent attention with heads of 192 + 64
    # and values of 256, 256 experts in one group, an indexer of 32 heads in every layer.
    "glm-5": ("glm_moe_dsa", dict(
        vocab_size=154880, hidden_size=6144, intermediate_size=12288, num_hidden_layers=78,
        num_attention_heads=64, num_key_value_heads=64, moe_intermediate_size=2048,
        n_routed_experts=256, n_shared_experts=1, num_experts_per_tok=8, first_k_dense_replace=3,
        q_lora_rank=2048, kv_lora_rank=512, qk_nope_head_dim=192, qk_rope_head_dim=64,
        v_head_dim=256, n_group=1, topk_group=1, routed_scaling_factor=2.5, norm_topk_prob=True,
        index_n_heads=32, index_head_dim=128, index_topk=2048, max_position_embeddings=202752,
        rms_norm_eps=1e-05, tie_word_embeddings=False)),
    # moonshotai/Kimi-K2-Thinking's config.json (model_type kimi_k2, DeepseekV3ForCausalLM; K2-Instruct-0905
    # and K2.5's text_config have its shapes): DeepSeek-V3 with 384 experts in one group, 64 heads,
    # one dense layer.
    "kimi-k2": ("deepseek_v3", dict(
        vocab_size=163840, hidden_size=7168, intermediate_size=18432, num_hidden_layers=61,
        num_attention_heads=64, num_key_value_heads=64, moe_intermediate_size=2048,
        n_routed_experts=384, n_shared_experts=1, num_experts_per_tok=8, first_k_dense_replace=1,
        q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64,
        v_head_dim=128, n_group=1, topk_group=1, routed_scaling_factor=2.827, norm_topk_prob=True,
        max_position_embeddings=262144, tie_word_embeddings=False)),
    "gpt-oss-20b": ("gpt_oss", dict(
        vocab_size=201088, hidden_size=2880, intermediate_size=2880, num_hidden_layers=24,
        num_attention_heads=64, num_key_value_heads=8, head_dim=64, num_local_experts=32,
        num_experts_per_tok=4, sliding_window=128, attention_bias=True, tie_word_embeddings=False)),
    "gpt-oss-120b": ("gpt_oss", dict(
        vocab_size=201088, hidden_size=2880, intermediate_size=2880, num_hidden_layers=36,
        num_attention_heads=64, num_key_value_heads=8, head_dim=64, num_local_experts=128,
        num_experts_per_tok=4, sliding_window=128, attention_bias=True, tie_word_embeddings=False)),
    "glm-4.5-air": ("glm4_moe", dict(
        vocab_size=151552, hidden_size=4096, intermediate_size=10944, num_hidden_layers=46,
        num_attention_heads=96, num_key_value_heads=8, head_dim=128, partial_rotary_factor=0.5,
        moe_intermediate_size=1408, n_routed_experts=128, n_shared_experts=1, num_experts_per_tok=8,
        first_k_dense_replace=1, n_group=1, topk_group=1, routed_scaling_factor=1.0,
        norm_topk_prob=True, attention_bias=True, use_qk_norm=False, tie_word_embeddings=False)),
    "glm-4.6": ("glm4_moe", dict(
        vocab_size=151552, hidden_size=5120, intermediate_size=12288, num_hidden_layers=92,
        num_attention_heads=96, num_key_value_heads=8, head_dim=128, partial_rotary_factor=0.5,
        moe_intermediate_size=1536, n_routed_experts=160, n_shared_experts=1, num_experts_per_tok=8,
        first_k_dense_replace=3, n_group=1, topk_group=1, routed_scaling_factor=2.5,
        norm_topk_prob=True, attention_bias=True, use_qk_norm=True, tie_word_embeddings=False)),
    "minimax-m2": ("minimax_m2", dict(
        vocab_size=200064, hidden_size=3072, intermediate_size=1536, num_hidden_layers=62,
        num_attention_heads=48, num_key_value_heads=8, head_dim=128, rotary_dim=64,
        num_local_experts=256, num_experts_per_tok=8, tie_word_embeddings=False)),
    "glm-4.7-flash": ("glm4_moe_lite", dict(
        vocab_size=154880, hidden_size=2048, intermediate_size=10240, num_hidden_layers=47,
        num_attention_heads=20, num_key_value_heads=20, moe_intermediate_size=1536,
        n_routed_experts=64, n_shared_experts=1, num_experts_per_tok=4, q_lora_rank=768,
        kv_lora_rank=512, qk_nope_head_dim=192, qk_rope_head_dim=64, v_head_dim=256, n_group=1,
        topk_group=1, routed_scaling_factor=1.8, norm_topk_prob=True, tie_word_embeddings=False)),
    "ernie-4.5-21b-a3b": ("ernie4_5_moe", dict(
        vocab_size=103424, hidden_size=2560, intermediate_size=12288, num_hidden_layers=28,
        num_attention_heads=20, num_key_value_heads=4, moe_intermediate_size=1536, moe_num_experts=64,
        moe_k=6, moe_num_shared_experts=2, moe_layer_start_index=1, moe_layer_end_index=27,
        moe_layer_interval=1, use_bias=False, tie_word_embeddings=True)),
    "ernie-4.5-300b-a47b": ("ernie4_5_moe", dict(
        vocab_size=103424, hidden_size=8192, intermediate_size=28672, num_hidden_layers=54,
        num_attention_heads=64, num_key_value_heads=8, moe_intermediate_size=3584, moe_num_experts=64,
        moe_k=8, moe_num_shared_experts=0, moe_layer_start_index=3, moe_layer_end_index=53,
        moe_layer_interval=1, use_bias=False, tie_word_embeddings=True)),
    "qwen3-next-80b-a3b": ("qwen3_next", dict(
        vocab_size=151936, hidden_size=2048, intermediate_size=5120, num_hidden_layers=48,
        num_attention_heads=16, num_key_value_heads=2, linear_num_value_heads=32,
        num_experts=512, num_experts_per_tok=10, moe_intermediate_size=512,
        shared_expert_intermediate_size=512, norm_topk_prob=True, tie_word_embeddings=False)),
    "qwen3.5-35b-a3b": ("qwen3_5_moe_text", dict(
        vocab_size=248320, hidden_size=2048, num_hidden_layers=40, num_attention_heads=16,
        num_key_value_heads=2, linear_num_value_heads=32, num_experts=256, num_experts_per_tok=8,
        moe_intermediate_size=512, shared_expert_intermediate_size=512, tie_word_embeddings=False)),
    "qwen3.5-122b-a10b": ("qwen3_5_moe_text", dict(
        vocab_size=248320, hidden_size=3072, num_hidden_layers=48, num_attention_heads=32,
        num_key_value_heads=2, linear_num_value_heads=64, num_experts=256, num_experts_per_tok=8,
        moe_intermediate_size=1024, shared_expert_intermediate_size=1024, tie_word_embeddings=False)),
    "qwen3.5-397b-a17b": ("qwen3_5_moe_text", dict(
        vocab_size=248320, hidden_size=4096, num_hidden_layers=60, num_attention_heads=32,
        num_key_value_heads=2, linear_num_value_heads=64, num_experts=512, num_experts_per_tok=10,
        moe_intermediate_size=1024, shared_expert_intermediate_size=1024, tie_word_embeddings=False)),
    "gemma-4-e2b": ("gemma4_text", dict(
        hidden_size=1536, intermediate_size=6144, num_hidden_layers=35, num_attention_heads=8,
        num_key_value_heads=1, layer_types=_every_nth_full(35, 5), hidden_size_per_layer_input=256,
        num_kv_shared_layers=20, use_double_wide_mlp=True, final_logit_softcapping=30.0)),
    "gemma-4-e4b": ("gemma4_text", dict(
        hidden_size=2560, intermediate_size=10240, num_hidden_layers=42, num_attention_heads=8,
        num_key_value_heads=2, hidden_size_per_layer_input=256, num_kv_shared_layers=18,
        final_logit_softcapping=30.0)),
    "gemma-4-26b-a4b": ("gemma4_text", dict(
        hidden_size=2816, intermediate_size=2112, num_hidden_layers=30, num_attention_heads=16,
        num_key_value_heads=8, num_global_key_value_heads=2, attention_k_eq_v=True,
        sliding_window=1024, hidden_size_per_layer_input=0, enable_moe_block=True, num_experts=128,
        top_k_experts=8, moe_intermediate_size=704, final_logit_softcapping=30.0)),
    "gemma-4-31b": ("gemma4_text", dict(
        hidden_size=5376, intermediate_size=21504, num_hidden_layers=60, num_attention_heads=32,
        num_key_value_heads=16, num_global_key_value_heads=4, attention_k_eq_v=True,
        sliding_window=1024, hidden_size_per_layer_input=0, final_logit_softcapping=30.0)),
}


# Reference variants for memory_reference.py: each model type with its real
# expert count and top-k but a 512-wide hidden state, so that activations,
# not the expert banks' optimizer state, decide the peak. Their config.json
# (`moe/<id>.json`, written by `write_variant_configs`) is what the Rust
# test imports.
VARIANTS = {
    "mixtral-h512": ("mixtral", dict(
        vocab_size=32000, hidden_size=512, intermediate_size=1792, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=2, num_local_experts=8, num_experts_per_tok=2,
        sliding_window=None, tie_word_embeddings=False)),
    "qwen1.5-moe-h512": ("qwen2_moe", dict(
        vocab_size=151936, hidden_size=512, intermediate_size=1408, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=8, moe_intermediate_size=352,
        shared_expert_intermediate_size=1408, num_experts=60, num_experts_per_tok=4,
        norm_topk_prob=False, tie_word_embeddings=False)),
    "qwen3-moe-h512": ("qwen3_moe", dict(
        vocab_size=151936, hidden_size=512, intermediate_size=1536, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=2, head_dim=64, moe_intermediate_size=192,
        num_experts=128, num_experts_per_tok=8, norm_topk_prob=True, mlp_only_layers=[0],
        tie_word_embeddings=False)),
    "olmoe-h512": ("olmoe", dict(
        vocab_size=50304, hidden_size=512, intermediate_size=256, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=8, num_experts=64, num_experts_per_tok=8,
        norm_topk_prob=False, tie_word_embeddings=False)),
    # OLMoE's variant with `output_router_logits` on: the forward adds
    # `load_balancing_loss_func`'s auxiliary loss (off in every released config).
    "olmoe-h512-aux": ("olmoe", dict(
        vocab_size=50304, hidden_size=512, intermediate_size=256, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=8, num_experts=64, num_experts_per_tok=8,
        norm_topk_prob=False, tie_word_embeddings=False, output_router_logits=True)),
    "deepseek-v2-h512": ("deepseek_v2", dict(
        vocab_size=102400, hidden_size=512, intermediate_size=1024, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=8, moe_intermediate_size=128,
        n_routed_experts=64, n_shared_experts=2, num_experts_per_tok=6, first_k_dense_replace=1,
        q_lora_rank=None, kv_lora_rank=128, qk_nope_head_dim=64, qk_rope_head_dim=32,
        v_head_dim=64, topk_method="greedy", n_group=1, topk_group=1, tie_word_embeddings=False)),
    "deepseek-v3-h512": ("deepseek_v3", dict(
        vocab_size=129280, hidden_size=512, intermediate_size=1024, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=8, moe_intermediate_size=128,
        n_routed_experts=256, n_shared_experts=1, num_experts_per_tok=8, first_k_dense_replace=1,
        q_lora_rank=192, kv_lora_rank=128, qk_nope_head_dim=64, qk_rope_head_dim=32,
        v_head_dim=64, n_group=8, topk_group=4, routed_scaling_factor=2.5, norm_topk_prob=True,
        tie_word_embeddings=False)),
    "gpt-oss-h512": ("gpt_oss", dict(
        vocab_size=201088, hidden_size=512, intermediate_size=512, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=2, head_dim=64, num_local_experts=32,
        num_experts_per_tok=4, sliding_window=128, attention_bias=True, tie_word_embeddings=False)),
    # GLM-4.6's layout (q/k biases and norms, half of each head rotated, the first layer dense).
    "glm4-moe-h512": ("glm4_moe", dict(
        vocab_size=151552, hidden_size=512, intermediate_size=1024, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=2, head_dim=64, partial_rotary_factor=0.5,
        moe_intermediate_size=128, n_routed_experts=160, n_shared_experts=1, num_experts_per_tok=8,
        first_k_dense_replace=1, n_group=1, topk_group=1, routed_scaling_factor=2.5,
        norm_topk_prob=True, attention_bias=True, use_qk_norm=True, tie_word_embeddings=False)),
    # MiniMax-M2's layout (q and k normalized whole, 64 of each head's 128 features rotated, 256
    # experts chosen by bias-corrected sigmoid scores, 8 per token, every layer sparse).
    "minimax-m2-h512": ("minimax_m2", dict(
        vocab_size=200064, hidden_size=512, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=2, head_dim=128, rotary_dim=64,
        num_local_experts=256, num_experts_per_tok=8, tie_word_embeddings=False)),
    # GLM-4.7-Flash's layout: DeepSeek-V3's latent attention (value heads wider than the query/key
    # ones' unrotated part) over GLM-4.5's sparse block, dense layers as mlp_layer_types lists them.
    "glm4-moe-lite-h512": ("glm4_moe_lite", dict(
        vocab_size=154880, hidden_size=512, intermediate_size=1024, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=8, moe_intermediate_size=128,
        n_routed_experts=64, n_shared_experts=1, num_experts_per_tok=4, q_lora_rank=192,
        kv_lora_rank=128, qk_nope_head_dim=96, qk_rope_head_dim=32, v_head_dim=128, n_group=1,
        topk_group=1, routed_scaling_factor=1.8, norm_topk_prob=True,
        mlp_layer_types=["dense", "sparse"], tie_word_embeddings=False)),
    # ERNIE-4.5-21B-A3B's layout: the interleaved fp32 rotary embedding, 2 shared experts run before
    # 64 routed ones (top-6) chosen by the fp32 router, layer 0 dense.
    "ernie-4.5-moe-h512": ("ernie4_5_moe", dict(
        vocab_size=103424, hidden_size=512, intermediate_size=1536, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=2, moe_intermediate_size=192, moe_num_experts=64,
        moe_k=6, moe_num_shared_experts=2, moe_layer_start_index=1, moe_layer_end_index=1,
        moe_layer_interval=1, use_bias=False, tie_word_embeddings=True)),
    # Qwen3-Next's layout: Gated DeltaNet with the grouped projections (each of 4 key heads serving
    # 2 value heads) in three layers of four, gated attention in the fourth, 512 experts (top-10)
    # and a gated shared expert in every layer.
    "qwen3-next-h512": ("qwen3_next", dict(
        vocab_size=151936, hidden_size=512, intermediate_size=1024, num_hidden_layers=4,
        num_attention_heads=4, num_key_value_heads=2, linear_num_key_heads=4,
        linear_num_value_heads=8, num_experts=512, num_experts_per_tok=10,
        moe_intermediate_size=128, shared_expert_intermediate_size=128, norm_topk_prob=True,
        tie_word_embeddings=False)),
    # Qwen3.5-35B-A3B's layout at a small hidden size: four plain projections into Gated DeltaNet.
    "qwen3.5-moe-h512": ("qwen3_5_moe_text", dict(
        vocab_size=248320, hidden_size=512, num_hidden_layers=4, num_attention_heads=4,
        num_key_value_heads=2, linear_num_key_heads=4, linear_num_value_heads=8, num_experts=256,
        num_experts_per_tok=8, moe_intermediate_size=128, shared_expert_intermediate_size=128,
        tie_word_embeddings=False)),
    # Gemma-4-E2B's layout at a 32768-token vocabulary (both tables), ten layers: four sliding and
    # a full one, twice; the last four reuse the keys and values of layers 4 (full) and 5
    # (sliding) with double-wide MLPs; per-layer embeddings of 256.
    "gemma-4-e2b-v32k": ("gemma4_text", dict(
        vocab_size=32768, vocab_size_per_layer_input=32768, hidden_size=1536, intermediate_size=6144,
        num_hidden_layers=10, num_attention_heads=8, num_key_value_heads=1,
        layer_types=_every_nth_full(10, 5), hidden_size_per_layer_input=256, num_kv_shared_layers=4,
        use_double_wide_mlp=True, final_logit_softcapping=30.0)),
    # Gemma-4-26B-A4B's layout at a 512-wide hidden state and a 32768-token vocabulary: keys as
    # values and 2 global key-value heads in the full layer, 128 experts (top-8) beside a dense MLP.
    "gemma-4-26b-h512": ("gemma4_text", dict(
        vocab_size=32768, hidden_size=512, intermediate_size=2112, num_hidden_layers=6,
        num_attention_heads=16, num_key_value_heads=8, num_global_key_value_heads=2,
        attention_k_eq_v=True, sliding_window=1024, hidden_size_per_layer_input=0,
        enable_moe_block=True, num_experts=128, top_k_experts=8, moe_intermediate_size=704,
        final_logit_softcapping=30.0)),
    # Dense decoders whose MLP is not gated, down_proj(relu2(up_proj(x))): Arcee's AFM layout
    # (Llama's block otherwise) and Nemotron's (LayerNorm1P, which runs in half precision under
    # autocast, and half of each head rotated).
    "arcee-h512": ("arcee", dict(
        vocab_size=32000, hidden_size=512, intermediate_size=2048, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=2, tie_word_embeddings=False)),
    # Phi's layout with what the released checkpoints leave off: a LayerNorm per head on q and k
    # (qk_layernorm), grouped key/value heads, a head tied to the embeddings (its bias its own).
    "phi-qkln-h512": ("phi", dict(
        vocab_size=32000, hidden_size=512, intermediate_size=2048, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=4, qk_layernorm=True, resid_pdrop=0.1,
        tie_word_embeddings=True)),
    # StableLM 2's layout (LayerNorms with biases, a quarter of each head rotated, q/k/v biases)
    # and StableLM-2-12B's parallel attention and MLP on one norm (its per-head q/k norms left off).
    "stablelm-2-h512": ("stablelm", dict(
        vocab_size=32000, hidden_size=512, intermediate_size=1408, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=8, use_qkv_bias=True, tie_word_embeddings=False)),
    "stablelm-par-h512": ("stablelm", dict(
        vocab_size=32000, hidden_size=512, intermediate_size=1408, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=2, use_parallel_residual=True,
        tie_word_embeddings=False)),
    # GLM-4-9B's layout as transformers converts it (model_type glm): GLM-4's block with two norms.
    "glm-h512": ("glm", dict(
        vocab_size=32000, hidden_size=512, intermediate_size=1408, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=2, head_dim=64, tie_word_embeddings=False,
        pad_token_id=0)),
    # Cohere's layout (Command R+: q/k norms) and Cohere 2's (Command R7B, Command A: three sliding
    # layers, then a full one without rotary embedding), at a 512-wide hidden state.
    "cohere-h512": ("cohere", dict(
        vocab_size=32000, hidden_size=512, intermediate_size=1408, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=2, use_qk_norm=True, pad_token_id=0,
        bos_token_id=1, eos_token_id=2)),
    "cohere2-h512": ("cohere2", dict(
        vocab_size=32000, hidden_size=512, intermediate_size=1408, num_hidden_layers=4,
        num_attention_heads=8, num_key_value_heads=2, sliding_window=512, pad_token_id=0,
        bos_token_id=1, eos_token_id=2)),
    # StarCoder's layout (model_type gpt_bigcode: GPT-2's block with one key-value head,
    # multi_query) and its multi-head form, at a 512-wide hidden state; no attention dropout (with
    # it the CPU's SDPA takes its math path, where CUDA runs a fused kernel).
    "gpt-bigcode-h512": ("gpt_bigcode", dict(
        vocab_size=32000, n_embd=512, n_inner=2048, n_layer=2, n_head=8, n_positions=2048,
        multi_query=True, attn_pdrop=0.0)),
    "gpt-bigcode-mha-h512": ("gpt_bigcode", dict(
        vocab_size=32000, n_embd=512, n_inner=2048, n_layer=2, n_head=8, n_positions=2048,
        multi_query=False, attn_pdrop=0.0)),
    "nemotron-h512": ("nemotron", dict(
        vocab_size=32000, hidden_size=512, intermediate_size=2048, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=2, tie_word_embeddings=False)),
}

# microsoft/phi-1_5 and microsoft/phi-2 (config.json): attention and MLP in parallel on one
# LayerNorm, biases everywhere (the LM head's too), part of each head rotated, gelu_new.
PRESETS.update({
    "phi-1.5": ("phi", dict(
        vocab_size=51200, hidden_size=2048, intermediate_size=8192, num_hidden_layers=24,
        num_attention_heads=32, num_key_value_heads=32, partial_rotary_factor=0.5, resid_pdrop=0.0,
        embd_pdrop=0.0, tie_word_embeddings=False)),
    "phi-2": ("phi", dict(
        vocab_size=51200, hidden_size=2560, intermediate_size=10240, num_hidden_layers=32,
        num_attention_heads=32, num_key_value_heads=32, partial_rotary_factor=0.4, resid_pdrop=0.1,
        embd_pdrop=0.0, tie_word_embeddings=False)),
})

# facebook/opt-125m, opt-1.3b and opt-6.7b (config.json): learned positions shifted by 2,
# LayerNorm before attention and the MLP, biases everywhere, relu, dropout 0.1, the head tied.
PRESETS.update({
    "opt-125m": ("opt", dict(
        vocab_size=50272, hidden_size=768, ffn_dim=3072, num_hidden_layers=12,
        num_attention_heads=12, max_position_embeddings=2048, dropout=0.1, attention_dropout=0.0,
        word_embed_proj_dim=768, do_layer_norm_before=True, tie_word_embeddings=True)),
    "opt-1.3b": ("opt", dict(
        vocab_size=50272, hidden_size=2048, ffn_dim=8192, num_hidden_layers=24,
        num_attention_heads=32, max_position_embeddings=2048, dropout=0.1, attention_dropout=0.0,
        word_embed_proj_dim=2048, do_layer_norm_before=True, tie_word_embeddings=True)),
    "opt-6.7b": ("opt", dict(
        vocab_size=50272, hidden_size=4096, ffn_dim=16384, num_hidden_layers=32,
        num_attention_heads=32, max_position_embeddings=2048, dropout=0.1, attention_dropout=0.0,
        word_embed_proj_dim=4096, do_layer_norm_before=True, tie_word_embeddings=True)),
})

# ibm-granite/granite-3.3-2b-instruct and -8b-instruct (config.json): Llama's layout with the
# embedding, residual and logits multipliers, the head tied.
PRESETS.update({
    "granite-3.3-2b": ("granite", dict(
        vocab_size=49159, hidden_size=2048, intermediate_size=8192, num_hidden_layers=40,
        num_attention_heads=32, num_key_value_heads=8, embedding_multiplier=12.0,
        residual_multiplier=0.22, attention_multiplier=0.015625, logits_scaling=8.0,
        max_position_embeddings=131072, tie_word_embeddings=True)),
    "granite-3.3-8b": ("granite", dict(
        vocab_size=49159, hidden_size=4096, intermediate_size=12800, num_hidden_layers=40,
        num_attention_heads=32, num_key_value_heads=8, embedding_multiplier=12.0,
        residual_multiplier=0.22, attention_multiplier=0.0078125, logits_scaling=16.0,
        max_position_embeddings=131072, tie_word_embeddings=True)),
})

PRESETS.update({
    "llama-4-scout-17b-16e": ("llama4_text", dict(
        vocab_size=202048, hidden_size=5120, intermediate_size=8192, intermediate_size_mlp=16384,
        num_hidden_layers=48, num_attention_heads=40, num_key_value_heads=8, head_dim=128,
        num_local_experts=16, num_experts_per_tok=1, interleave_moe_layer_step=1, use_qk_norm=True,
        attention_chunk_size=8192, max_position_embeddings=10485760, tie_word_embeddings=False)),
    "llama-4-maverick-17b-128e": ("llama4_text", dict(
        vocab_size=202048, hidden_size=5120, intermediate_size=8192, intermediate_size_mlp=16384,
        num_hidden_layers=48, num_attention_heads=40, num_key_value_heads=8, head_dim=128,
        num_local_experts=128, num_experts_per_tok=1, interleave_moe_layer_step=2, use_qk_norm=False,
        attention_chunk_size=8192, max_position_embeddings=1048576, tie_word_embeddings=False)),
})

VARIANTS.update({
    # Llama 4 Scout's layout at a 512-wide hidden state, four layers (the fourth without rotary
    # embedding, its queries scaled by position; the others attend within chunks of 512): 16 experts
    # in every layer, every token through all of them by bmm, a shared expert after them.
    "llama4-scout-h512": ("llama4_text", dict(
        vocab_size=32000, hidden_size=512, intermediate_size=256, intermediate_size_mlp=1024,
        num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=2, head_dim=64,
        num_local_experts=16, num_experts_per_tok=1, interleave_moe_layer_step=1, use_qk_norm=True,
        attention_chunk_size=512, tie_word_embeddings=False)),
    # GLM-4-0414's layout (four norms a block, q/k/v biases, one gate_up_proj, half of each head
    # rotated in interleaved pairs) at a 512-wide hidden state.
    "glm4-h512": ("glm4", dict(
        vocab_size=32000, hidden_size=512, intermediate_size=1536, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=2, head_dim=64, pad_token_id=0,
        tie_word_embeddings=False)),
    # Maverick's: 128 experts in every second layer (dense MLPs between), no q/k norms.
    "llama4-maverick-h512": ("llama4_text", dict(
        vocab_size=32000, hidden_size=512, intermediate_size=128, intermediate_size_mlp=1024,
        num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=2, head_dim=64,
        num_local_experts=128, num_experts_per_tok=1, interleave_moe_layer_step=2, use_qk_norm=False,
        attention_chunk_size=512, tie_word_embeddings=False)),
    # Granite's mixtures of experts at a 512-wide hidden state: Granite 3.0's (`granitemoe`: 32
    # experts, 8 per token, routed by top-k of the fp32 logits then a softmax over the k), Granite
    # 4.0's attention layers (`granitemoehybrid`: the same experts, then a shared MLP whose gate and
    # up are one projection; no rotary embedding unless position_embedding_type is "rope"), and
    # Granite 4.0 without experts (Granite-4.0-Micro's layout: only the shared MLP, rotary).
    "granitemoe-h512": ("granitemoe", dict(
        vocab_size=32000, hidden_size=512, intermediate_size=256, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=8, num_local_experts=32, num_experts_per_tok=8,
        embedding_multiplier=12.0, residual_multiplier=0.22, attention_multiplier=0.0078125,
        logits_scaling=6.0, tie_word_embeddings=False)),
    "granite-4-moe-h512": ("granitemoehybrid", dict(
        vocab_size=32000, hidden_size=512, intermediate_size=256, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=2, num_local_experts=16, num_experts_per_tok=4,
        shared_intermediate_size=1024, layer_types=["attention", "attention"],
        position_embedding_type=None, embedding_multiplier=12.0, residual_multiplier=0.22,
        attention_multiplier=0.0078125, logits_scaling=6.0, tie_word_embeddings=False)),
    "granite-4-micro-h512": ("granitemoehybrid", dict(
        vocab_size=32000, hidden_size=512, intermediate_size=1536, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=2, num_local_experts=0,
        shared_intermediate_size=1536, layer_types=["attention", "attention"],
        position_embedding_type="rope", embedding_multiplier=12.0, residual_multiplier=0.22,
        attention_multiplier=0.0078125, logits_scaling=6.0, tie_word_embeddings=False)),
    # Granite 4.0's H layout (Granite-4.0-H-Tiny's and -Small's: Mamba-2 layers with one attention
    # layer among them, 16 heads of 64 over twice the hidden size, a state of 128, one group of B
    # and C, chunks of 256, no rotary embedding) with the experts above; and a dense one with two
    # groups, biased projections, an unbiased convolution and rotary attention.
    "granite-4-h-h512": ("granitemoehybrid", dict(
        vocab_size=32000, hidden_size=512, intermediate_size=256, num_hidden_layers=4,
        num_attention_heads=8, num_key_value_heads=2, num_local_experts=16, num_experts_per_tok=4,
        shared_intermediate_size=1024, layer_types=["mamba", "mamba", "attention", "mamba"],
        mamba_n_heads=16, mamba_d_state=128, mamba_n_groups=1, mamba_d_conv=4, mamba_expand=2,
        mamba_chunk_size=256, position_embedding_type=None, embedding_multiplier=12.0,
        residual_multiplier=0.22, attention_multiplier=0.0078125, logits_scaling=6.0,
        tie_word_embeddings=False)),
    "granite-4-h-dense-h512": ("granitemoehybrid", dict(
        vocab_size=32000, hidden_size=512, intermediate_size=1536, num_hidden_layers=3,
        num_attention_heads=8, num_key_value_heads=2, num_local_experts=0,
        shared_intermediate_size=1536, layer_types=["mamba", "attention", "mamba"],
        mamba_n_heads=16, mamba_d_state=64, mamba_n_groups=2, mamba_d_conv=4, mamba_expand=2,
        mamba_chunk_size=256, mamba_proj_bias=True, mamba_conv_bias=False,
        position_embedding_type="rope", tie_word_embeddings=False)),
    # Bamba's layout (Llama's decoder, Mamba-2 in every layer attn_layer_indices does not name,
    # half of each attention head rotated) at a 512-wide hidden state, the middle of three layers
    # attention.
    "bamba-h512": ("bamba", dict(
        vocab_size=32000, hidden_size=512, intermediate_size=1536, num_hidden_layers=3,
        num_attention_heads=8, num_key_value_heads=2, attn_layer_indices=[1], mamba_n_heads=16,
        mamba_d_state=128, mamba_n_groups=1, mamba_d_conv=4, mamba_expand=2,
        mamba_chunk_size=256, tie_word_embeddings=False)),
    # Nemotron-H's layout (Nemotron-H, Nemotron Nano 2: each layer one mixer, Mamba-2 "M",
    # attention without position embeddings "*", a ReLU² MLP "-"; eight groups of B and C, chunks
    # of 128) at a 512-wide hidden state; Nemotron 3 Nano's, with DeepSeek-V3's sigmoid router
    # over ungated ReLU² experts and a shared one ("E"); and the same with the experts in a
    # 256-wide latent space and grouped routing.
    "nemotron-h-h512": ("nemotron_h", dict(
        vocab_size=32000, hidden_size=512, num_attention_heads=8, num_key_value_heads=2,
        head_dim=64, intermediate_size=1536, hybrid_override_pattern="M-M*-",
        mamba_num_heads=16, mamba_head_dim=64, ssm_state_size=128, n_groups=8, conv_kernel=4,
        chunk_size=128)),
    "nemotron-3-nano-h512": ("nemotron_h", dict(
        vocab_size=32000, hidden_size=512, num_attention_heads=8, num_key_value_heads=2,
        head_dim=64, intermediate_size=1536, hybrid_override_pattern="MEM*E",
        mamba_num_heads=16, mamba_head_dim=64, ssm_state_size=128, n_groups=8, conv_kernel=4,
        chunk_size=128, n_routed_experts=16, num_experts_per_tok=4, moe_intermediate_size=256,
        moe_shared_expert_intermediate_size=512, routed_scaling_factor=2.5, n_group=1,
        topk_group=1)),
    "nemotron-h-latent-h512": ("nemotron_h", dict(
        vocab_size=32000, hidden_size=512, num_attention_heads=8, num_key_value_heads=2,
        head_dim=64, intermediate_size=1536, hybrid_override_pattern="ME*E",
        mamba_num_heads=16, mamba_head_dim=64, ssm_state_size=64, n_groups=4, conv_kernel=4,
        chunk_size=128, n_routed_experts=16, num_experts_per_tok=4, moe_intermediate_size=256,
        moe_shared_expert_intermediate_size=512, moe_latent_size=256, n_group=4,
        topk_group=2)),
    # Ministral 3's decoder (Mistral's, its rotated queries scaled by position in every layer,
    # llama_4_scaling_beta) and Ministral-8B's (sliding layers named by layer_types, every fourth
    # full, past the window at 2048 tokens) at a 512-wide hidden state; Llama with attention_bias
    # (biases on q, k, v and o).
    "ministral3-h512": ("ministral3", dict(
        vocab_size=32000, hidden_size=512, intermediate_size=1536, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=2, head_dim=64,
        rope_parameters={"rope_type": "yarn", "rope_theta": 1000000.0, "factor": 16.0,
                         "original_max_position_embeddings": 16384, "llama_4_scaling_beta": 0.1,
                         "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0},
        max_position_embeddings=262144, tie_word_embeddings=False)),
    "ministral-h512": ("ministral", dict(
        vocab_size=32000, hidden_size=512, intermediate_size=1536, num_hidden_layers=4,
        num_attention_heads=8, num_key_value_heads=2, head_dim=64, sliding_window=1024,
        layer_types=["sliding_attention", "sliding_attention", "sliding_attention",
                     "full_attention"], tie_word_embeddings=False)),
    "llama-bias-h512": ("llama", dict(
        vocab_size=32000, hidden_size=512, intermediate_size=1536, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=2, attention_bias=True,
        tie_word_embeddings=False)),
    # Hunyuan's dense decoder (per-head q and k norms after the rotary embedding, biases on q, k, v
    # and o) and Seed-OSS's (q/k/v biases, attention and residual dropout 0.1) at a 512-wide
    # hidden state.
    "hunyuan-dense-h512": ("hunyuan_v1_dense", dict(
        vocab_size=32000, hidden_size=512, intermediate_size=1536, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=2, head_dim=64, attention_bias=True,
        tie_word_embeddings=True)),
    "seed-oss-h512": ("seed_oss", dict(
        vocab_size=32000, hidden_size=512, intermediate_size=1536, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=2, head_dim=64, tie_word_embeddings=False)),
    # dots.llm1's layout (Qwen3's attention over GLM-4.5's sparse block: 128 experts, 6 per token,
    # 2 shared ones, the first layer dense) at a 512-wide hidden state.
    "dots1-h512": ("dots1", dict(
        vocab_size=152064, hidden_size=512, intermediate_size=1536, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=8, moe_intermediate_size=128,
        n_routed_experts=128, n_shared_experts=2, num_experts_per_tok=6, first_k_dense_replace=1,
        n_group=1, topk_group=1, norm_topk_prob=True, routed_scaling_factor=2.5,
        sliding_window=None, tie_word_embeddings=False)),
    # Hunyuan-A13B's layout (Hunyuan's attention; a shared MLP first, then 64 experts as wide, 8 per
    # token, chosen by an fp32 gate fed an fp32 copy of the hidden states) at a 512-wide hidden state.
    "hunyuan-moe-h512": ("hunyuan_v1_moe", dict(
        vocab_size=32000, hidden_size=512, intermediate_size=256, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=2, head_dim=64, num_experts=64,
        moe_topk=[8, 8], use_qk_norm=True, tie_word_embeddings=True)),
    # Qwen3's and OLMo 2's attention_bias, which biases o as well as q, k and v.
    "qwen3-bias-h512": ("qwen3", dict(
        vocab_size=151936, hidden_size=512, intermediate_size=1536, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=2, head_dim=64, attention_bias=True,
        tie_word_embeddings=False)),
    "olmo2-bias-h512": ("olmo2", dict(
        vocab_size=100352, hidden_size=512, intermediate_size=1536, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=8, attention_bias=True,
        tie_word_embeddings=False)),
})

ALL = {**PRESETS, **VARIANTS}


def write_variant_configs(directory: str) -> None:
    """Write each variant's config.json (as `PretrainedConfig.to_dict` gives it) to `directory`."""
    import json
    import os

    os.makedirs(directory, exist_ok=True)
    for model_id in VARIANTS:
        d = config(model_id).to_dict()
        with open(os.path.join(directory, f"{model_id}.json"), "w") as f:
            json.dump(d, f, indent=1, sort_keys=True, default=str)
            f.write("\n")


def config(model_id: str, layers: int | None = None):
    kind, fields = ALL[model_id]
    config_class, _ = CLASSES[kind]
    fields = dict(fields)
    if layers is not None:
        fields["num_hidden_layers"] = layers
        if "layer_types" in fields:
            fields["layer_types"] = fields["layer_types"][:layers]
    return config_class(**fields)


def shown_field(cfg, key: str, given=None):
    """A config field as the model reads it: an attribute, or (`partial_rotary_factor` in
    transformers 5) an entry of `rope_parameters`."""
    if key in ("num_key_value_heads", "head_dim") and getattr(cfg, "per_layer_config", None):
        # Gemma 4: a per-layer attribute; the config's own (sliding layers') value.
        return cfg.to_dict()[key]
    if hasattr(cfg, key):
        return getattr(cfg, key)
    rope = getattr(cfg, "rope_parameters", None) or {}
    if key in rope:
        return rope[key]
    # Gemma 4's global_head_dim and num_global_key_value_heads go into per_layer_config.
    return given


def build(model_id: str, attn: str = "eager", layers: int | None = None):
    """The model (on the current default device) and its source string."""
    kind, fields = ALL[model_id]
    cfg = config(model_id, layers)
    cfg._attn_implementation = attn
    model_class = CLASSES[kind][1]
    shown = ",".join(f"{k}={shown_field(cfg, k, v)}" for k, v in fields.items())
    return model_class(cfg), f"{TF} {model_class.__name__}({type(cfg).__name__}({shown}))"


def experts_of(model) -> list:
    """The routed-expert modules (`*Experts`) of every sparse layer."""
    return [m for name, m in model.named_modules() if type(m).__name__.endswith("Experts")]


def active_params(model, model_id: str) -> int:
    """Parameters one token reads: all but the routed experts it is not sent to,
    (E - k) / E of each sparse layer's expert bank (weights and biases)."""
    cfg = model.config
    e = cfg.num_local_experts if hasattr(cfg, "num_local_experts") else cfg.num_experts
    k = getattr(cfg, "num_experts_per_tok", None) or cfg.top_k_experts
    total = sum(p.numel() for p in model.parameters())
    idle = 0
    for ex in experts_of(model):
        bank = sum(p.numel() for p in ex.parameters())
        assert bank % e == 0
        idle += bank // e * (e - k)
    return total - idle
