//! The errors the core reports. Each names what was wrong and what is accepted.

use thiserror::Error;

/// Everything that can go wrong while building a model or estimating.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Error {
    /// A value is not one of a fixed set of choices.
    #[error("invalid {field} '{value}': expected one of {accepted}")]
    InvalidChoice {
        /// The field or flag name.
        field: &'static str,
        /// What was given.
        value: String,
        /// The accepted values, `|`-separated.
        accepted: String,
    },
    /// A number is outside its accepted range.
    #[error("{field} = {value} is out of range: expected {min}..={max}")]
    OutOfRange {
        /// The field or flag name.
        field: &'static str,
        /// What was given.
        value: String,
        /// Smallest accepted value.
        min: u64,
        /// Largest accepted value.
        max: u64,
    },
    /// No model preset has this id.
    #[error(
        "unknown model '{0}': run `vramfit presets` for the list, or pass a Hugging Face config.json"
    )]
    UnknownModel(String),
    /// No GPU preset has this id.
    #[error(
        "unknown GPU '{0}': run `vramfit presets` for the list, or give custom-<GiB> for a GPU by its memory (1 to 4096 GiB)"
    )]
    UnknownGpu(String),
    /// A Hugging Face `config.json` could not be parsed as JSON.
    #[error("config.json is not valid JSON: {0}")]
    ConfigJson(String),
    /// A Hugging Face `config.json` has a `model_type` no family reads and
    /// cannot be read as a Llama-style decoder.
    #[error("unsupported model_type '{model_type}': {why}; supported are {supported}")]
    UnsupportedModelType {
        /// The `model_type` found.
        model_type: String,
        /// Why it is not read as a Llama-style decoder.
        why: NotLlamaStyle,
        /// The supported types, comma-separated.
        supported: String,
    },
    /// A Hugging Face `config.json` nests its language model in a sub-config
    /// (vision–language and other multimodal models).
    #[error(
        "config.json (model_type '{model_type}') nests its language model in '{part}', as vision–language models do, and vramfit reads no family of that language model's model_type; to estimate it as a Llama-style decoder, import the '{part}' object by itself"
    )]
    NestedConfig {
        /// The outer `model_type`.
        model_type: String,
        /// The sub-config's key (`text_config`).
        part: &'static str,
    },
    /// A Hugging Face `config.json` lacks a field the model needs.
    #[error("config.json (model_type '{model_type}') is missing required field '{field}'")]
    MissingField {
        /// The `model_type` of the config.
        model_type: String,
        /// The missing field.
        field: &'static str,
    },
    /// A model's dimensions are inconsistent (e.g. heads do not divide hidden).
    #[error("invalid model: {0}")]
    InvalidModel(String),
    /// The input does not apply to this model or layout (e.g. a sequence
    /// longer than the model's positions).
    #[error("{0}")]
    NotApplicable(Inapplicable),
    /// A size the model and configuration imply (a tensor, a parameter, a
    /// count of layers) is beyond a limit that keeps every byte count exact in
    /// 64 bits and every estimate fast. The limits are far beyond any GPU.
    #[error("{what} is too large: {value} is more than the limit of {limit}")]
    TooLarge {
        /// What was too large, e.g. "attention scores per sample (heads × seq × seq)".
        what: String,
        /// Its size (or "more than 2^64" when it overflows).
        value: String,
        /// The limit, e.g. "2^56 elements".
        limit: String,
    },
    /// A `PYTORCH_CUDA_ALLOC_CONF` string the model cannot read.
    #[error("allocator-conf (PYTORCH_CUDA_ALLOC_CONF): {0}")]
    AllocatorConf(String),
    /// An inference engine cannot run this setting (`engines`).
    #[error("{0}")]
    Serve(ServeFault),
}

/// Why an inference engine cannot run a setting, with its ids and numbers
/// (the engines, weight formats and KV-cache types are named by their ids:
/// this module sits below the one that defines them).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ServeFault {
    /// The engine does not load weights in this format (llama.cpp reads GGUF
    /// files only; the others are modelled with their native formats).
    #[error("{engine} does not run {weights} weights: it takes {accepted}")]
    Weights {
        /// The engine's id.
        engine: &'static str,
        /// The weight format's id.
        weights: &'static str,
        /// What it takes.
        accepted: &'static str,
    },
    /// The engine has no KV cache of this type.
    #[error("{engine} has no {kv} KV cache: it takes --kv-dtype {accepted}")]
    KvDtype {
        /// The engine's id.
        engine: &'static str,
        /// The KV type's id.
        kv: &'static str,
        /// What it takes, `|`-separated.
        accepted: &'static str,
    },
    /// fp8 (weights or KV cache) on a GPU without fp8 arithmetic.
    #[error(
        "{gpu} has no fp8: fp8 weights and KV caches need an Ada, Hopper or Blackwell GPU (or an AMD MI300)"
    )]
    NoFp8 {
        /// The GPU's name.
        gpu: String,
    },
    /// The engines are modelled for Llama-style decoders only.
    #[error(
        "the inference engines are modelled for Llama-style decoders (Llama, Mistral, Qwen, Gemma, OLMo 2, their mixtures of experts, DeepSeek, gpt-oss); this model is not one"
    )]
    NotADecoder,
    /// llama.cpp has no GGUF conversion for this model's architecture
    /// (`convert_hf_to_gguf.py` registers no class for it), so it cannot
    /// load it.
    #[error(
        "llama.cpp cannot load {model}: its GGUF converter (convert_hf_to_gguf.py) has no {model}; serve it with vLLM, SGLang or transformers"
    )]
    NoGguf {
        /// The architecture's name.
        model: &'static str,
    },
    /// vLLM's and SGLang's budgets are shares of a GPU's memory.
    #[error("{engine} sizes its KV cache from the GPU's memory: give --gpu")]
    NeedsGpu {
        /// The engine's id.
        engine: &'static str,
    },
    /// The engines serve a model: they are for `--mode inference`.
    #[error("--engine {engine} is for --mode inference, not {mode}")]
    NeedsInference {
        /// The engine's id.
        engine: &'static str,
        /// The mode's id.
        mode: &'static str,
    },
    /// A setting of another engine (`--gpu-layers` is llama.cpp's `-ngl`).
    #[error("{flag} does not apply to --engine {engine}: it is {owner}")]
    NotForEngine {
        /// The flag.
        flag: &'static str,
        /// The engine's id.
        engine: &'static str,
        /// Whose setting it is, in words.
        owner: &'static str,
    },
    /// llama.cpp quantizes the V cache only inside its flash-attention kernel
    /// (`src/llama-context.cpp`: "V cache quantization requires flash_attn").
    #[error("llama.cpp's {kv} V cache needs flash attention: add --attention flash (-fa on)")]
    KvNeedsFlash {
        /// The KV type's id.
        kv: &'static str,
    },
    /// More layers offloaded than the model has (its count plus one, the
    /// output layer, offloads everything).
    #[error(
        "--gpu-layers {gpu_layers} is more than the model's {layers} layers and its output layer ({most} at most; leave it out to offload everything)"
    )]
    GpuLayers {
        /// The layers asked for.
        gpu_layers: u64,
        /// The model's repeating layers.
        layers: u64,
        /// The most accepted: `layers + 1`.
        most: u64,
    },
    /// vLLM and SGLang refuse a context above the one the model's
    /// `config.json` allows (vLLM's `_get_and_verify_max_len`, SGLang's
    /// `ModelConfig`), unless an environment variable overrides the check.
    #[error(
        "{engine} refuses a context of {context} tokens: the model's config.json allows {limit} ({override_var}=1 overrides the check, at the cost of degraded output)"
    )]
    ContextAboveLimit {
        /// The engine's id.
        engine: &'static str,
        /// The context asked for.
        context: u64,
        /// The model's limit.
        limit: u64,
        /// The environment variable that lifts the check.
        override_var: &'static str,
    },
    /// Tensor parallelism must split the key/value heads evenly or, in
    /// vLLM and SGLang, be a multiple of them (each GPU then holds a copy
    /// of one head).
    #[error(
        "--tp {tp} neither divides the model's {kv_heads} key/value heads nor, in vLLM and SGLang, is a multiple of them"
    )]
    KvHeadsSplit {
        /// Key/value heads.
        kv_heads: u64,
        /// Tensor-parallel degree.
        tp: u64,
    },
    /// Tensor parallelism must split the attention heads evenly (vLLM's
    /// `verify_with_parallel_config`, SGLang's and `transformers`' shards).
    #[error("--tp {tp} does not divide the model's {heads} attention heads")]
    HeadsSplit {
        /// Attention (query) heads.
        heads: u64,
        /// Tensor-parallel degree.
        tp: u64,
    },
}

/// Llama-style decoder.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NotLlamaStyle {
    /// It lacks these decoder fields.
    #[error("it lacks {}, which a Llama-style decoder is read from", .0.join(", "))]
    Missing(Vec<&'static str>),
    /// It describes a mixture of experts (the field that says so).
    #[error("it is a mixture of experts ('{0}'), which vramfit does not model yet")]
    Experts(&'static str),
    /// It describes latent attention (`kv_lora_rank`).
    #[error("it uses latent attention ('kv_lora_rank'), which vramfit does not model yet")]
    LatentAttention,
    /// It has layers other than attention (linear attention, state-space
    /// layers): `layer_types: <the kind>`, or the field that sizes them,
    /// words that read the same in every language.
    #[error("it has layers other than attention ({0}), which vramfit does not model yet")]
    OtherLayers(String),
    /// Its MLP is not gated: `hidden_act` (the value) is one that only
    /// ungated MLPs use (Apertus's `xielu`), where the Llama-style reading
    /// would count a gate projection that is not there.
    #[error(
        "its MLP is not gated (hidden_act '{0}': up and down projections only), which the Llama-style reading does not model"
    )]
    UngatedMlp(String),
    /// It is an encoder (DeBERTa, ELECTRA, ALBERT, ModernBERT, ...), not a
    /// decoder: what says so, a field only encoders have
    /// (`type_vocab_size`) or an encoder's head among its `architectures`.
    #[error(
        "it is an encoder ({0}), not a decoder; of the encoders vramfit reads BERT, DistilBERT and RoBERTa"
    )]
    Encoder(String),
    /// Its decoder fields contradict each other (what the check found).
    #[error("read as a Llama-style decoder, its fields contradict each other: {0}")]
    Contradictory(String),
}

/// What does not apply, with its numbers: data for the front ends to word,
/// with an English [`std::fmt::Display`] (the CLI's). Settings are named by
/// their ids (this module sits below the ones that define them).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Inapplicable {
    /// Training a model whose weights are stored quantized (the format's id).
    #[error("{format} weights are frozen: use --mode finetune-lora, finetune-qlora or inference")]
    FrozenWeights {
        /// The weight format's id (`int8`, `int4`, ...).
        format: &'static str,
    },
    /// Attention-head or MLP pruning asked of a CNN.
    #[error("this CNN has no attention heads or MLP blocks to prune: use keep-conv")]
    PruneCnn,
    /// Pruning asked of a CNN whose pruned shape vramfit does not model
    /// (MobileNetV3, EfficientNet, ConvNeXt, RegNet).
    #[error(
        "pruning is not modelled for {model}: leave keep-attention, keep-mlp and keep-conv at 1"
    )]
    PruneNotModelled {
        /// The CNN family.
        model: &'static str,
    },
    /// Convolution-channel pruning asked of a model that is not a CNN.
    #[error("keep-conv prunes convolution channels of CNNs (ResNet, VGG, MobileNetV2)")]
    PruneConvNotCnn,
    /// Tensor parallelism over a dimension that `tp` does not divide.
    #[error("tensor parallelism needs {dimension} ({size}) divisible by tp = {tp}")]
    TensorParallel {
        /// The `config.json` name of the dimension (`num_attention_heads`, ...).
        dimension: &'static str,
        /// Its size.
        size: u64,
        /// The tensor-parallel size.
        tp: u64,
    },
    /// Sequence parallelism on an encoder, or with a sequence `tp` does not divide.
    #[error("sequence parallelism needs a decoder and a sequence length divisible by tp = {tp}")]
    SequenceParallel {
        /// The tensor-parallel size.
        tp: u64,
    },
    /// A sequence longer than the model's learned positions.
    #[error("sequence length {seq} exceeds this model's {positions} learned positions")]
    SequenceTooLong {
        /// The sequence length asked for.
        seq: u64,
        /// The model's learned positions.
        positions: u64,
    },
    /// A ViT at an image size other than its position embedding's.
    #[error("this ViT's position embedding is fixed to {fixed}×{fixed} images; got {image}")]
    VitImage {
        /// The side the position embedding is made for, pixels.
        fixed: u64,
        /// The side asked for.
        image: u64,
    },
    /// An image so small that a CNN's feature map shrinks to zero.
    #[error("the image is too small for {model}: a feature map shrinks to zero")]
    ImageTooSmall {
        /// The CNN family (`ResNet`, `VGG`, `MobileNetV2`).
        model: &'static str,
    },
    /// Tensor × pipeline parallelism that does not divide the GPUs.
    #[error("tp × pp = {tp_pp} must divide the {gpus} GPUs (gpus-per-node × nodes)")]
    ModelParallelGpus {
        /// tp × pp.
        tp_pp: u64,
        /// GPUs per node × nodes.
        gpus: u64,
    },
    /// Expert tensor × expert × pipeline parallelism that does not divide
    /// the GPUs (Megatron-Core's expert groups must tile the world).
    #[error(
        "etp × ep × pp = {etp_ep_pp} must divide the {gpus} GPUs (gpus-per-node × nodes; etp is --tp unless --etp is given)"
    )]
    ExpertParallelGpus {
        /// etp × ep × pp ([`crate::parallel::Parallel::expert_model_parallel`]).
        etp_ep_pp: u64,
        /// GPUs per node × nodes.
        gpus: u64,
    },
    /// Expert parallelism asked of a model without routed experts.
    #[error(
        "expert parallelism (ep = {ep}) needs a model with experts (a mixture of experts): use --ep 1"
    )]
    ExpertParallelNoExperts {
        /// The expert-parallel size asked for.
        ep: u64,
    },
    /// Expert parallelism whose size does not divide the routed experts.
    #[error("expert parallelism needs the {experts} experts divisible by ep = {ep}")]
    ExpertParallelExperts {
        /// Routed experts per sparse layer.
        experts: u64,
        /// The expert-parallel size.
        ep: u64,
    },
    /// Expert tensor parallelism asked of a model without routed experts.
    #[error(
        "expert tensor parallelism (etp = {etp}) needs a model with experts (a mixture of experts): leave --etp unset"
    )]
    ExpertTensorParallelNoExperts {
        /// The expert-tensor-parallel size asked for.
        etp: u64,
    },
    /// Expert tensor parallelism whose size does not divide the routed
    /// experts' feed-forward width.
    #[error(
        "expert tensor parallelism needs each routed expert's width ({size} neurons) divisible by etp = {etp}"
    )]
    ExpertTensorParallel {
        /// The routed experts' intermediate size.
        size: u64,
        /// The expert-tensor-parallel size.
        etp: u64,
    },
    /// Simulating a step of a model with DeepSeek Sparse Attention
    /// (DeepSeek-V3.2, GLM-5): its indexer's activations are not modelled
    /// yet; the serving engines' memory is.
    #[error(
        "the sparse-attention indexer of this model is not simulated yet: estimate it with --mode inference --engine vllm, sglang or llama.cpp"
    )]
    SparseAttentionIndexer,
    /// Pipeline parallelism asked of an encoder-decoder (T5), whose stages
    /// vramfit does not split.
    #[error(
        "pipeline parallelism (pp = {pp}) is not modelled for encoder-decoders (T5): use --pp 1"
    )]
    PipelineEncoderDecoder {
        /// The pipeline-parallel size.
        pp: u64,
    },
    /// Sequence parallelism without tensor parallelism.
    #[error("sequence parallelism needs tensor parallelism (--tp > 1)")]
    SequenceParallelNeedsTp,
    /// An offload the strategy does not support.
    #[error(
        "offload '{}' needs a sharded strategy ({}), not '{strategy}'",
        offload_id(.params),
        sharded_strategies(.params)
    )]
    Offload {
        /// Whether the parameters are offloaded too (else the optimizer state only).
        params: bool,
        /// The strategy's id.
        strategy: &'static str,
    },
}

/// The offload's id in [`Inapplicable::Offload`].
fn offload_id(params: &bool) -> &'static str {
    if *params {
        "optimizer+params"
    } else {
        "optimizer"
    }
}

/// The strategies that support an offload, in [`Inapplicable::Offload`].
fn sharded_strategies(params: &bool) -> &'static str {
    if *params {
        "zero3, fsdp-full or fsdp-hybrid"
    } else {
        "zero1-3 or fsdp"
    }
}

/// Checks `min <= value <= max` for the named field.
///
/// # Errors
/// [`Error::OutOfRange`] when it is not.
pub fn check_range(field: &'static str, value: u64, min: u64, max: u64) -> Result<(), Error> {
    if value < min || value > max {
        return Err(Error::OutOfRange {
            field,
            value: value.to_string(),
            min,
            max,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inapplicable_settings_read_as_the_cli_always_printed_them() {
        for (x, words) in [
            (
                Inapplicable::FrozenWeights { format: "int4" },
                "int4 weights are frozen: use --mode finetune-lora, finetune-qlora or inference",
            ),
            (
                Inapplicable::PruneCnn,
                "this CNN has no attention heads or MLP blocks to prune: use keep-conv",
            ),
            (
                Inapplicable::PruneNotModelled { model: "ConvNeXt" },
                "pruning is not modelled for ConvNeXt: leave keep-attention, keep-mlp and keep-conv at 1",
            ),
            (
                Inapplicable::PruneConvNotCnn,
                "keep-conv prunes convolution channels of CNNs (ResNet, VGG, MobileNetV2)",
            ),
            (
                Inapplicable::TensorParallel {
                    dimension: "num_attention_heads",
                    size: 12,
                    tp: 5,
                },
                "tensor parallelism needs num_attention_heads (12) divisible by tp = 5",
            ),
            (
                Inapplicable::SequenceParallel { tp: 3 },
                "sequence parallelism needs a decoder and a sequence length divisible by tp = 3",
            ),
            (
                Inapplicable::SequenceTooLong {
                    seq: 4096,
                    positions: 1024,
                },
                "sequence length 4096 exceeds this model's 1024 learned positions",
            ),
            (
                Inapplicable::VitImage {
                    fixed: 224,
                    image: 256,
                },
                "this ViT's position embedding is fixed to 224×224 images; got 256",
            ),
            (
                Inapplicable::ImageTooSmall { model: "VGG" },
                "the image is too small for VGG: a feature map shrinks to zero",
            ),
            (
                Inapplicable::ModelParallelGpus { tp_pp: 4, gpus: 6 },
                "tp × pp = 4 must divide the 6 GPUs (gpus-per-node × nodes)",
            ),
            (
                Inapplicable::ExpertParallelGpus {
                    etp_ep_pp: 16,
                    gpus: 8,
                },
                "etp × ep × pp = 16 must divide the 8 GPUs (gpus-per-node × nodes; etp is --tp unless --etp is given)",
            ),
            (
                Inapplicable::ExpertParallelNoExperts { ep: 2 },
                "expert parallelism (ep = 2) needs a model with experts (a mixture of experts): use --ep 1",
            ),
            (
                Inapplicable::ExpertParallelExperts { experts: 60, ep: 8 },
                "expert parallelism needs the 60 experts divisible by ep = 8",
            ),
            (
                Inapplicable::ExpertTensorParallelNoExperts { etp: 2 },
                "expert tensor parallelism (etp = 2) needs a model with experts (a mixture of experts): leave --etp unset",
            ),
            (
                Inapplicable::ExpertTensorParallel { size: 1408, etp: 3 },
                "expert tensor parallelism needs each routed expert's width (1408 neurons) divisible by etp = 3",
            ),
            (
                Inapplicable::PipelineEncoderDecoder { pp: 2 },
                "pipeline parallelism (pp = 2) is not modelled for encoder-decoders (T5): use --pp 1",
            ),
            (
                Inapplicable::SequenceParallelNeedsTp,
                "sequence parallelism needs tensor parallelism (--tp > 1)",
            ),
            (
                Inapplicable::Offload {
                    params: false,
                    strategy: "ddp",
                },
                "offload 'optimizer' needs a sharded strategy (zero1-3 or fsdp), not 'ddp'",
            ),
            (
                Inapplicable::Offload {
                    params: true,
                    strategy: "zero2",
                },
                "offload 'optimizer+params' needs a sharded strategy (zero3, fsdp-full or fsdp-hybrid), not 'zero2'",
            ),
        ] {
            assert_eq!(Error::NotApplicable(x).to_string(), words);
        }
    }
}
