"""The models `memory_truth.py` trains, built from configurations in code
(no download, no network): torchvision's ResNet-50 and MobileNetV2 when
torchvision imports, else the same architectures built here; BERT, GPT-2, a
small Llama and a small Mixtral from `transformers` configs.

Each builder returns (model, vramfit model id, inputs maker, loss function).
The vramfit id is a preset id, or `configs/<name>.json`: the config.json this
module writes beside the CSV so vramfit imports exactly the model trained.
"""

import json
import os

import torch
from torch import nn

# Published parameter counts of torchvision's models (the model cards of
# torchvision.models): a hand-built stand-in must match them exactly.
TORCHVISION_PARAMS = {"resnet50": 25_557_032, "mobilenet_v2": 3_504_872}


def conv_bn(cin, cout, k, stride=1, groups=1, act=None):
    layers = [
        nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False),
        nn.BatchNorm2d(cout),
    ]
    if act is not None:
        layers.append(act(inplace=True))
    return nn.Sequential(*layers)


class Bottleneck(nn.Module):
    """ResNet v1.5 bottleneck: the stride sits on the 3x3 convolution."""

    def __init__(self, cin, width, stride):
        super().__init__()
        cout = width * 4
        self.body = nn.Sequential(
            conv_bn(cin, width, 1, act=nn.ReLU),
            conv_bn(width, width, 3, stride, act=nn.ReLU),
            conv_bn(width, cout, 1),
        )
        self.down = (
            conv_bn(cin, cout, 1, stride) if stride != 1 or cin != cout else nn.Identity()
        )
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.relu(self.body(x) + self.down(x))


def resnet50_by_hand():
    layers = [
        nn.Conv2d(3, 64, 7, 2, 3, bias=False),
        nn.BatchNorm2d(64),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(3, 2, 1),
    ]
    cin = 64
    for width, blocks, stride in [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]:
        for i in range(blocks):
            layers.append(Bottleneck(cin, width, stride if i == 0 else 1))
            cin = width * 4
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 1000)]
    return nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        layers = [] if expand == 1 else [conv_bn(cin, hidden, 1, act=nn.ReLU6)]
        layers += [
            conv_bn(hidden, hidden, 3, stride, groups=hidden, act=nn.ReLU6),
            conv_bn(hidden, cout, 1),
        ]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.body(x) if self.residual else self.body(x)


def mobilenet_v2_by_hand():
    layers = [conv_bn(3, 32, 3, 2, act=nn.ReLU6)]
    cin = 32
    # (expansion, output channels, repeats, first stride): MobileNetV2 paper, table 2.
    for t, c, n, s in [
        (1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
        (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1),
    ]:
        for i in range(n):
            layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
            cin = c
    layers += [
        conv_bn(cin, 1280, 1, act=nn.ReLU6),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Dropout(0.2),
        nn.Linear(1280, 1000),
    ]
    return nn.Sequential(*layers)


def cnn(name):
    try:
        import torchvision

        model = getattr(torchvision.models, name)()
        source = "torchvision " + torchvision.__version__
    except ImportError:
        model = {"resnet50": resnet50_by_hand, "mobilenet_v2": mobilenet_v2_by_hand}[name]()
        source = "built by hand (torchvision absent)"
    count = sum(p.numel() for p in model.parameters())
    if count != TORCHVISION_PARAMS[name]:
        raise RuntimeError(f"{name}: {count} parameters, torchvision has {TORCHVISION_PARAMS[name]}")
    return model, source


def cnn_task(name):
    def build(cfg, device, configs_dir):
        model, source = cnn(name)

        def inputs():
            x = torch.randn(cfg["batch"], 3, cfg["image"], cfg["image"], device=device)
            y = torch.randint(0, 1000, (cfg["batch"],), device=device)
            return (x,), y

        def loss(model, batch):
            args, y = batch
            return nn.functional.cross_entropy(model(*args), y)

        return model, name, inputs, loss, source

    return build


def hf_config(name):
    """The transformers config of each text model (defaults = the published models)."""
    import transformers as tf

    if name == "bert-base":
        return tf.BertConfig(num_labels=2), tf.BertForSequenceClassification
    if name == "bert-large":
        return (
            tf.BertConfig(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                          intermediate_size=4096, num_labels=2),
            tf.BertForSequenceClassification,
        )
    if name == "gpt2":
        return tf.GPT2Config(), tf.GPT2LMHeadModel
    if name == "llama-small":
        return (
            tf.LlamaConfig(vocab_size=32000, hidden_size=1024, intermediate_size=2816,
                           num_hidden_layers=8, num_attention_heads=16, num_key_value_heads=8,
                           max_position_embeddings=4096, tie_word_embeddings=False,
                           architectures=["LlamaForCausalLM"]),
            tf.LlamaForCausalLM,
        )
    if name == "mixtral-small":
        return (
            tf.MixtralConfig(vocab_size=32000, hidden_size=1024, intermediate_size=1792,
                             num_hidden_layers=4, num_attention_heads=16, num_key_value_heads=8,
                             num_local_experts=8, num_experts_per_tok=2,
                             max_position_embeddings=4096, architectures=["MixtralForCausalLM"]),
            tf.MixtralForCausalLM,
        )
    if name == "neox-small":
        # GPT-NeoX (Pythia's layout): one fused query_key_value projection,
        # a partial rotary embedding, a parallel residual.
        return (
            tf.GPTNeoXConfig(vocab_size=50304, hidden_size=1024, intermediate_size=4096,
                             num_hidden_layers=8, num_attention_heads=16, rotary_pct=0.25,
                             max_position_embeddings=2048, use_parallel_residual=True,
                             tie_word_embeddings=False, architectures=["GPTNeoXForCausalLM"]),
            tf.GPTNeoXForCausalLM,
        )
    if name == "phi3-small":
        # Phi-3's layout: one fused qkv_proj sliced into q, k and v.
        return (
            tf.Phi3Config(vocab_size=32064, hidden_size=1024, intermediate_size=2816,
                          num_hidden_layers=8, num_attention_heads=16, num_key_value_heads=8,
                          max_position_embeddings=4096, tie_word_embeddings=False,
                          architectures=["Phi3ForCausalLM"]),
            tf.Phi3ForCausalLM,
        )
    # The 2026 layouts the importer reads (#11, #12), sized like llama-small:
    # each row is a check on a model family measured after it was modelled.
    if name == "qwen3-small":
        # Qwen3: RMS norms on each head's query and key, tied embeddings,
        # a 151936-token vocabulary (the loss dominates the peak).
        return (
            tf.Qwen3Config(vocab_size=151936, hidden_size=1024, intermediate_size=3072,
                           num_hidden_layers=8, num_attention_heads=16, num_key_value_heads=8,
                           head_dim=128, max_position_embeddings=4096, tie_word_embeddings=True,
                           architectures=["Qwen3ForCausalLM"]),
            tf.Qwen3ForCausalLM,
        )
    if name == "gemma3-small":
        # Gemma 3: five sliding-window layers to one global, query and key
        # norms, 256-wide heads, a 262144-token vocabulary.
        return (
            tf.Gemma3TextConfig(vocab_size=262144, hidden_size=1024, intermediate_size=4096,
                                num_hidden_layers=6, num_attention_heads=8,
                                num_key_value_heads=4, head_dim=256, sliding_window=512,
                                max_position_embeddings=4096, architectures=["Gemma3ForCausalLM"]),
            tf.Gemma3ForCausalLM,
        )
    if name == "olmo2-small":
        # OLMo 2: norms after each block and on the whole query and key.
        return (
            tf.Olmo2Config(vocab_size=100352, hidden_size=1024, intermediate_size=2816,
                           num_hidden_layers=8, num_attention_heads=16, num_key_value_heads=16,
                           max_position_embeddings=4096, tie_word_embeddings=False,
                           architectures=["Olmo2ForCausalLM"]),
            tf.Olmo2ForCausalLM,
        )
    if name == "qwen3moe-small":
        # Qwen3-MoE: 16 experts, 4 routed per token, no shared expert.
        return (
            tf.Qwen3MoeConfig(vocab_size=32000, hidden_size=1024, intermediate_size=3072,
                              moe_intermediate_size=768, num_hidden_layers=6,
                              num_attention_heads=16, num_key_value_heads=4, head_dim=128,
                              num_experts=16, num_experts_per_tok=4, max_position_embeddings=4096,
                              tie_word_embeddings=False, architectures=["Qwen3MoeForCausalLM"]),
            tf.Qwen3MoeForCausalLM,
        )
    if name == "deepseekv3-small":
        # DeepSeek-V3: latent attention (low-rank query and key-value
        # projections, a split rotary part), a dense first layer, then 16
        # routed experts (group-limited top 4) and a shared one.
        return (
            tf.DeepseekV3Config(vocab_size=32000, hidden_size=1024, intermediate_size=2816,
                                moe_intermediate_size=512, num_hidden_layers=6,
                                num_attention_heads=16, num_key_value_heads=16, q_lora_rank=384,
                                kv_lora_rank=256, qk_rope_head_dim=32, qk_nope_head_dim=64,
                                v_head_dim=64, n_routed_experts=16, num_experts_per_tok=4,
                                n_shared_experts=1, first_k_dense_replace=1, n_group=4,
                                topk_group=2, max_position_embeddings=4096,
                                tie_word_embeddings=False, architectures=["DeepseekV3ForCausalLM"]),
            tf.DeepseekV3ForCausalLM,
        )
    raise KeyError(name)


PRESETS = {"bert-base": "bert-base", "bert-large": "bert-large", "gpt2": "gpt2"}


def text_task(name):
    def build(cfg, device, configs_dir):
        import transformers

        config, cls = hf_config(name)
        if cfg.get("use_cache") is False:
            config.use_cache = False
        model = cls(config)
        vramfit_id = PRESETS.get(name)
        if vramfit_id is None:
            os.makedirs(configs_dir, exist_ok=True)
            with open(os.path.join(configs_dir, f"{name}.json"), "w") as f:
                json.dump(config.to_dict(), f, indent=1, sort_keys=True, default=str)
            vramfit_id = f"configs/{name}.json"
        classify = name.startswith("bert")

        def inputs():
            ids = torch.randint(0, config.vocab_size, (cfg["batch"], cfg["seq"]), device=device)
            if classify:
                return ids, torch.randint(0, 2, (cfg["batch"],), device=device)
            return ids, ids

        def loss(model, batch):
            ids, labels = batch
            if cfg.get("padded"):
                # One padded position: transformers then builds a 4-D mask,
                # and its SDPA path expands grouped key-value heads with
                # repeat_kv instead of passing enable_gqa=True.
                mask = torch.ones_like(ids)
                mask[0, 0] = 0
                return model(input_ids=ids, labels=labels, attention_mask=mask).loss
            return model(input_ids=ids, labels=labels).loss

        return model, vramfit_id, inputs, loss, "transformers " + transformers.__version__

    return build


BUILDERS = {
    "resnet50": cnn_task("resnet50"),
    "mobilenet_v2": cnn_task("mobilenet_v2"),
    **{n: text_task(n) for n in ["bert-base", "bert-large", "gpt2", "llama-small", "mixtral-small",
                                 "neox-small", "phi3-small", "qwen3-small", "gemma3-small",
                                 "olmo2-small", "qwen3moe-small", "deepseekv3-small"]},
}


def attention_of(model):
    """vramfit's name for the attention kernel the model runs ("none" for CNNs)."""
    impl = getattr(getattr(model, "config", None), "_attn_implementation", None)
    return {None: "none", "eager": "eager", "sdpa": "sdpa", "flash_attention_2": "flash"}.get(
        impl, str(impl)
    )
