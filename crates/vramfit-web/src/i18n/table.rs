//! The translation table: one line per string, English then Chinese.
//! `{0}`, `{1}` are values filled in by [`super::fill`].

/// Builds [`Key`] (documented by its English text), `Key::ALL` and the
/// lookup of both texts.
macro_rules! table {
    (neutral: [$($n:ident),* $(,)?]; $($key:ident => $en:literal, $zh:literal;)+) => {
        /// A string of the page; its documentation is its English text.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Key {
            $(#[doc = $en] $key),+
        }

        impl Key {
            /// Every key, in table order.
            pub const ALL: &'static [Key] = &[$(Key::$key),+];

            /// The English and the Chinese text.
            pub fn texts(self) -> (&'static str, &'static str) {
                match self {
                    $(Key::$key => ($en, $zh)),+
                }
            }

            /// Whether the text is the same in both languages on purpose
            /// (product names, symbols).
            pub fn is_neutral(self) -> bool {
                matches!(self, $(Key::$n)|*)
            }
        }
    };
}

table! {
    neutral: [Sgd, Adam, AdamW, Adafactor, Lion, Fp32, AttentionFlash, UnitsGiB, UnitsGB, UnitGib, ExportDeepSpeed, ExportHf, CustomRelu, CustomGelu, CustomLayoutLlama, CustomLayoutQwen3, CustomLayoutOlmo2, CustomLayoutGemma, CustomLayoutGemma2, CustomLayoutGemma3, CustomLayoutPhi3, CustomLayoutGptNeox, EngineHf, EngineVllm, EngineSglang, EngineLlamaCpp, WeightsFp8, WeightsAwq, WeightsGptq, WeightsNf4, ModeLoraShort, ModeQloraShort];

    // Page frame.
    PageTitle => "vramfit — GPU memory for neural-network training", "vramfit — 神经网络训练显存计算器";
    Tagline => "How much GPU memory does one training step need — and why?", "训练一步需要多少显存？为什么？";
    Footer => "Estimates replay two training steps op by op, as PyTorch's CUDA caching allocator would see them. Everything runs in your browser; your inputs are kept in the page's address, so its link reproduces this result.", "估算按算子逐个重放两个训练步，与 PyTorch 的 CUDA 缓存分配器所见一致。全部计算都在浏览器中完成；输入保存在本页地址中，分享该链接即可重现此结果。";
    Settings => "Display settings", "显示设置";
    Language => "Language", "语言";
    Units => "Units", "单位";
    UnitsGiB => "GiB", "GiB";
    UnitsGB => "GB", "GB";
    UnitsGiBHelp => "Binary units: 1 GiB = 1024³ bytes, as PyTorch and nvidia-smi count", "二进制单位：1 GiB = 1024³ 字节，与 PyTorch 和 nvidia-smi 一致";
    UnitsGBHelp => "Decimal units: 1 GB = 1000³ bytes, as disk makers count", "十进制单位：1 GB = 1000³ 字节，与硬盘厂商一致";
    DarkMode => "Dark mode", "深色模式";

    // The form.
    Configuration => "Configuration", "配置";
    Model => "Model", "模型";
    ImportedGroup => "Imported", "已导入";
    BatchSize => "Batch size", "批大小";
    BatchHint => "Samples per forward and backward pass", "每次前向和反向传播的样本数";
    SeqLength => "Sequence length", "序列长度";
    SeqHint => "Tokens per sample", "每个样本的词元数";
    UnitTokens => "tokens", "词元";
    ImageSize => "Image size", "图像尺寸";
    ImageHint => "Side of the square input image", "方形输入图像的边长";
    UnitPx => "px", "像素";
    GradAccum => "Gradient accumulation", "梯度累积";
    GradAccumHint => "Micro-batches per optimizer step", "每次优化器更新的微批数";
    UnitSteps => "steps", "步";
    EffectiveBatch => "Effective batch {0} = {1} × {2}", "有效批大小 {0} = {1} × {2}";
    EveryK => "Interval K", "间隔 K";
    EveryKHint => "Checkpoint one block in every K", "每 K 个块对其中一个做检查点";
    UnitBlocks => "blocks", "块";
    Precision => "Precision", "精度";
    Optimizer => "Optimizer", "优化器";
    Checkpointing => "Activation checkpointing", "激活检查点";
    Attention => "Attention", "注意力实现";
    AttentionHint => "Transformer text models only", "仅适用于 Transformer 文本模型";
    Gpu => "GPU", "显卡";
    GpuHint => "Marketed memory; the driver reports a little less", "标称显存，驱动报告的会略少";
    GpusGroup => "GPUs & strategy", "显卡数量与并行策略";
    GpusPerNode => "GPUs per node", "每节点显卡数";
    GpusHint => "Data-parallel GPUs on one node", "单个节点上的数据并行显卡数";
    UnitGpus => "GPUs", "张";
    GpuMemory => "GPU memory", "显存容量";
    GpuMemoryHint => "Any GPU by its memory; without its throughput the planner ranks by compute alone", "按显存容量指定任意显卡；没有算力数据时，规划器只按计算量排序";
    UnitGib => "GiB", "GiB";
    CustomGpuGroup => "Other", "其他";
    CustomGpuChoice => "Custom memory…", "自定义显存…";
    CustomGpuName => "GPU with {0} GiB", "{0} GiB 显存的显卡";
    PlanRelative => "{0}× the fastest", "最快方案的 {0} 倍";
    PlanUntimed => "This GPU is known only by its memory: plans are ranked by their compute, and times are relative to the fastest.", "这张显卡只知道显存容量：方案按计算量排序，时间为相对最快方案的倍数。";
    Strategy => "Strategy", "并行策略";
    Offload => "Offload", "卸载到内存";
    OffloadNone => "Nothing", "不卸载";
    OffloadOptimizer => "Optimizer state", "优化器状态";
    OffloadOptimizerParams => "Optimizer state and parameters", "优化器状态和参数";
    ModeLabel => "Mode", "模式";
    ModeTrain => "Training", "训练";
    ModeLora => "Fine-tuning (LoRA)", "微调（LoRA）";
    ModeQlora => "Fine-tuning (QLoRA)", "微调（QLoRA）";
    ModeInference => "Inference", "推理";
    ModeLoraShort => "LoRA", "LoRA";
    ModeQloraShort => "QLoRA", "QLoRA";
    LoraRank => "LoRA rank", "LoRA 秩";
    LoraRankHint => "Rank of the adapter matrices", "适配器矩阵的秩";
    ContextTokens => "Context", "上下文长度";
    ContextHint => "KV-cache length; 0 means the sequence length", "KV 缓存长度；0 表示与序列长度相同";
    ServingGroup => "Serving", "部署服务";
    Engine => "Engine", "推理引擎";
    EngineHint => "Hugging Face generate is simulated op by op; vLLM, SGLang and llama.cpp are sized as their source code allocates", "Hugging Face 按算子逐个模拟；vLLM、SGLang 和 llama.cpp 按其源代码的分配方式计算";
    EngineHf => "Hugging Face transformers", "Hugging Face transformers";
    EngineVllm => "vLLM", "vLLM";
    EngineSglang => "SGLang", "SGLang";
    EngineLlamaCpp => "llama.cpp / Ollama", "llama.cpp / Ollama";
    ServeWeights => "Weights", "权重格式";
    ServeWeightsHint => "A GGUF quantization for llama.cpp; a quantized checkpoint for vLLM and SGLang", "llama.cpp 使用 GGUF 量化；vLLM 和 SGLang 使用量化检查点";
    WeightsTorch16 => "16-bit (the checkpoint's)", "16 位（检查点原样）";
    WeightsGguf16 => "F16 / BF16 (as the precision)", "F16 / BF16（随精度）";
    WeightsFp8 => "FP8", "FP8";
    WeightsAwq => "AWQ int4", "AWQ int4";
    WeightsGptq => "GPTQ int4", "GPTQ int4";
    WeightsNf4 => "NF4 (bitsandbytes)", "NF4 (bitsandbytes)";
    KvDtype => "KV cache type", "KV 缓存类型";
    KvDtypeHint => "fp8 needs an Ada, Hopper or Blackwell GPU; llama.cpp's q8_0 and q4_0 need FlashAttention or SDPA", "fp8 需要 Ada、Hopper 或 Blackwell 显卡；llama.cpp 的 q8_0 和 q4_0 需要 FlashAttention 或 SDPA";
    Concurrency => "Concurrency", "并发数";
    ConcurrencyHint => "Sequences in flight, each of the context's length", "同时处理的序列数，每条长度为上下文长度";
    UnitSequences => "sequences", "条";
    Utilization => "GPU memory utilization", "显存利用率";
    UtilizationHint => "The share of the GPU that vLLM and SGLang take, weights and KV cache included", "vLLM 和 SGLang 占用的显存比例，含权重和 KV 缓存";
    GpuLayers => "GPU layers", "显卡层数";
    GpuLayersHint => "Layers llama.cpp puts on the GPU, the rest stays in host RAM; blank puts every layer there", "llama.cpp 放到显卡上的层数，其余留在主机内存；留空表示全部放到显卡";
    UnitLayers => "layers", "层";

    // Choices.
    Fp32 => "fp32", "fp32";
    Fp16Pure => "fp16 (pure)", "fp16（纯半精度）";
    Bf16Pure => "bf16 (pure)", "bf16（纯半精度）";
    AmpFp16 => "Mixed fp16", "混合精度 fp16";
    AmpBf16 => "Mixed bf16", "混合精度 bf16";
    Sgd => "SGD", "SGD";
    SgdMomentum => "SGD with momentum", "SGD（带动量）";
    Adam => "Adam", "Adam";
    AdamW => "AdamW", "AdamW";
    AdamW8bit => "AdamW 8-bit", "AdamW（8 位）";
    Adafactor => "Adafactor", "Adafactor";
    Lion => "Lion", "Lion";
    CheckpointNone => "None", "不使用";
    CheckpointFull => "Full (every block)", "完整（每个块）";
    CheckpointSelective => "Selective (attention only)", "选择性（仅注意力）";
    CheckpointEveryK => "Every K-th block", "每 K 个块一个";
    AttentionEager => "Eager (materialized scores)", "标准实现（保存注意力矩阵）";
    AttentionSdpa => "SDPA (memory-efficient)", "SDPA（省显存）";
    AttentionFlash => "FlashAttention-2", "FlashAttention-2";
    FamilyVit => "Vision Transformer", "视觉 Transformer";

    // Field messages.
    EmptyBatch => "Enter a batch size.", "请输入批大小。";
    EmptySeq => "Enter a sequence length.", "请输入序列长度。";
    EmptyImage => "Enter an image size.", "请输入图像尺寸。";
    EmptyAccum => "Enter the number of accumulation steps.", "请输入梯度累积步数。";
    EmptyEveryK => "Enter the interval K.", "请输入间隔 K。";
    EmptyGpus => "Enter the number of GPUs per node.", "请输入每节点显卡数。";
    EmptyGpuMemory => "Enter the GPU's memory in GiB.", "请输入显卡的显存容量（GiB）。";
    EmptyLoraRank => "Enter a LoRA rank.", "请输入 LoRA 秩。";
    EmptyContext => "Enter a context length.", "请输入上下文长度。";
    EmptyConcurrency => "Enter the number of sequences in flight.", "请输入并发序列数。";
    EmptyUtilization => "Enter the GPU memory utilization, like 0.9.", "请输入显存利用率，例如 0.9。";
    EmptyGpuLayers => "Leave GPU layers blank to put every layer on the GPU.", "显卡层数留空表示全部放到显卡。";
    NotFraction => "{0} must be a number above 0 and at most 1, like 0.9.", "{0}必须是大于 0 且不超过 1 的数，例如 0.9。";
    HostRam => "Host RAM per node for offloading: {0}", "每节点用于卸载的主机内存：{0}";
    DeepspeedEstimate => "DeepSpeed's own estimator: {0} per GPU, {1} CPU — model states only: it leaves out activations and temporaries", "DeepSpeed 自带估算器：每张显卡 {0}，CPU {1}——仅含模型状态，不计激活和临时张量";
    MaxContext => "Longest context that fits: {0} tokens", "可容纳的最长上下文：{0} 个词元";
    NoContextFits => "No context length fits: the model alone does not fit.", "任何长度的上下文都放不下：仅模型本身就放不下。";
    StrategySingle => "Single GPU", "单卡";
    StrategyDdp => "DDP (full copy per GPU)", "DDP（每张卡一份完整副本）";
    StrategyZero1 => "ZeRO-1 (optimizer states)", "ZeRO-1（切分优化器状态）";
    StrategyZero2 => "ZeRO-2 (+ gradients)", "ZeRO-2（再切分梯度）";
    StrategyZero3 => "ZeRO-3 (+ weights)", "ZeRO-3（再切分权重）";
    StrategyFsdpFull => "FSDP full shard", "FSDP 全切分";
    StrategyFsdpGradOp => "FSDP shard grad + optimizer", "FSDP 切分梯度与优化器状态";
    StrategyFsdpHybrid => "FSDP hybrid (shard per node)", "FSDP 混合切分（节点内）";
    StrategyFsdpNoShard => "FSDP no shard (like DDP)", "FSDP 不切分（同 DDP）";
    StrategyMegatron => "Megatron dist. optimizer", "Megatron 分布式优化器";
    RankNote => "Pipeline stage {0} of {1} (embeddings and layers 0–{2}), the largest: it keeps {3} micro-batches in flight under 1F1B", "流水线第 {0} 段（共 {1} 段，含嵌入层和第 0–{2} 层）占用最多：在 1F1B 调度下同时保留 {3} 个微批量";
    TooSmall => "{0} must be at least {1}.", "{0}不能小于 {1}。";
    TooLarge => "{0} must be at most {1}.", "{0}不能大于 {1}。";
    NotWhole => "{0} must be a whole number, like {1}.", "{0}必须是整数，例如 {1}。";
    NotApplicable => "Not possible with this model: {0}", "此模型不支持该设置：{0}";
    EstimatorRejected => "The estimator rejected this configuration: {0}", "估算器拒绝了此配置：{0}";
    CoreOutOfRange => "{0} = {1} is out of range: expected {2} to {3}.", "{0} = {1} 超出范围：应在 {2} 到 {3} 之间。";
    CoreInvalidChoice => "{0} '{1}' is not one of {2}.", "{0} '{1}' 不在可选值 {2} 之中。";
    NaFrozenWeights => "{0} weights are frozen: choose LoRA or QLoRA fine-tuning, or inference.", "{0} 权重是冻结的：请选择 LoRA 或 QLoRA 微调，或推理。";
    NaPruneCnn => "This CNN has no attention heads or MLP blocks to prune: prune its convolutions (keep-conv).", "此 CNN 没有可剪枝的注意力头或 MLP 块：请剪枝卷积通道（keep-conv）。";
    NaPruneConv => "Pruning convolution channels (keep-conv) applies to CNNs only (ResNet, VGG, MobileNetV2).", "剪枝卷积通道（keep-conv）只适用于 CNN（ResNet、VGG、MobileNetV2）。";
    NaTensorParallel => "Tensor parallelism needs {0} ({1}) divisible by tp = {2}.", "张量并行要求 {0}（{1}）能被 tp = {2} 整除。";
    NaSequenceParallel => "Sequence parallelism needs a decoder and a sequence length divisible by tp = {0}.", "序列并行需要解码器模型，且序列长度能被 tp = {0} 整除。";
    NaSequenceTooLong => "Sequence length {0} exceeds this model's {1} learned positions.", "序列长度 {0} 超过了此模型的 {1} 个位置编码。";
    NaVitImage => "This ViT's position embedding is fixed to {0}×{0} images; got {1}.", "此 ViT 的位置编码固定为 {0}×{0} 的图像，而输入为 {1}。";
    NaImageTooSmall => "The image is too small for {0}: a feature map shrinks to zero.", "图像对 {0} 来说太小：特征图会缩小到零。";
    NaModelParallelGpus => "tp × pp = {0} must divide the {1} GPUs (GPUs per node × nodes).", "tp × pp = {0} 必须能整除 GPU 总数 {1}（每节点 GPU 数 × 节点数）。";
    NaSpNeedsTp => "Sequence parallelism needs tensor parallelism (tp > 1).", "序列并行需要张量并行（tp > 1）。";
    NaPipelineEncoderDecoder => "Pipeline parallelism (pp = {0}) is not modelled for encoder-decoders (T5): use pp = 1.", "编码器-解码器模型（T5）不支持流水线并行（pp = {0}）的估算：请使用 pp = 1。";
    NaOffloadOptimizer => "Offloading the optimizer state needs a sharded strategy (ZeRO 1 to 3 or FSDP), not {0}.", "卸载优化器状态需要分片策略（ZeRO 1 到 3 或 FSDP），而不是 {0}。";
    NaOffloadParams => "Offloading the optimizer state and parameters needs ZeRO-3, FSDP full sharding or FSDP hybrid sharding, not {0}.", "卸载优化器状态和参数需要 ZeRO-3、FSDP 完全分片或 FSDP 混合分片，而不是 {0}。";
    UnknownModel => "Unknown model “{0}”: pick one from the list.", "未知模型“{0}”，请从列表中选择。";
    UnknownGpu => "Unknown GPU “{0}”: pick one from the list.", "未知显卡“{0}”，请从列表中选择。";
    NoImportedModel => "No config.json imported yet: paste one below the model list.", "尚未导入 config.json，请在模型列表下方粘贴。";
    StaleNotice => "Showing the last valid result. Fix the highlighted field to update it.", "当前显示的是上一个有效结果。修正标出的字段后即会更新。";
    FixFields => "Fix the highlighted fields to see an estimate.", "修正标出的字段即可看到估算结果。";

    // Hugging Face import.
    ImportTitle => "Paste or drop a Hugging Face config.json", "粘贴或拖入 Hugging Face 的 config.json";
    ImportLabel => "config.json contents", "config.json 内容";
    ImportHint => "Supported model types: {0}. You can also drop the file on this box.", "支持的模型类型：{0}。也可以把文件拖到此框中。";
    ImportChoose => "Choose file…", "选择文件…";
    ImportOk => "Imported {0}: {1} parameters.", "已导入 {0}：{1}参数。";
    ImportKept => "Still using the last valid import, {0}.", "仍在使用上一次有效的导入：{0}。";
    ImportNotJson => "This is not valid JSON: {0}", "这不是有效的 JSON：{0}";
    ImportUnsupported => "model_type “{0}” is not supported: {2}. Supported are {1}.", "不支持 model_type“{0}”：{2}。支持的类型：{1}。";
    NotLlamaMissing => "it lacks {0}, which a Llama-style decoder is read from", "缺少 {0}，无法按 Llama 式解码器读取";
    NotLlamaExperts => "it is a mixture of experts (“{0}”), which vramfit does not model yet", "这是混合专家模型（“{0}”），vramfit 暂不支持";
    NotLlamaLatent => "it uses latent attention (“kv_lora_rank”), which vramfit does not model yet", "它使用潜在注意力（“kv_lora_rank”），vramfit 暂不支持";
    NotLlamaContradictory => "read as a Llama-style decoder, its fields contradict each other ({0})", "按 Llama 式解码器读取时字段互相矛盾（{0}）";
    ImportNested => "This {0} config nests its language model in “{1}”, as vision–language models do; vramfit does not import those yet. To estimate the language model alone, paste the “{1}” object by itself.", "此 {0} 配置把语言模型嵌套在“{1}”中（视觉–语言模型的写法），vramfit 暂不导入此类配置。若只估算语言模型，请单独粘贴“{1}”对象。";
    ImportAssumed => "Read as a Llama-style decoder; check these assumptions: {0}.", "已按 Llama 式解码器读取，请核对以下假设：{0}。";
    AssumeLayout => "model_type “{0}” is not one vramfit knows, so RMSNorm before attention and the MLP, rotary positions, a gated MLP, and biases on q, k, v only with attention_bias", "vramfit 不认识 model_type“{0}”，因此假定注意力和 MLP 之前使用 RMSNorm、旋转位置编码、门控 MLP，且仅在 attention_bias 时 q、k、v 带偏置";
    AssumeHeadDim => "head_dim = hidden_size / num_attention_heads = {0}", "head_dim 取 hidden_size / num_attention_heads = {0}";
    AssumeKvHeads => "one key/value head per attention head ({0}, no grouped-query attention)", "每个注意力头各有一个键/值头（{0} 个，无分组查询注意力）";
    AssumeUntied => "a separate LM head (tie_word_embeddings is absent)", "独立的 LM 头（未给出 tie_word_embeddings）";
    AssumeIgnored => "fields not read: {0}", "未读取的字段：{0}";
    ImportMissing => "This {0} config lacks the required field “{1}”.", "此 {0} 配置缺少必需字段“{1}”。";
    ImportInvalid => "The model's dimensions do not fit together: {0}", "模型的维度不一致：{0}";
    ImportTooLarge => "That file is {0}; a config.json is a few kilobytes. Drop the config, not the weights.", "该文件大小为 {0}，而 config.json 只有几 KB。请拖入配置文件而不是权重。";
    ImportUnreadable => "The file could not be read as text.", "无法以文本方式读取该文件。";

    // Summary line.
    SummaryParams => "{0} parameters", "{0}参数";
    SummaryParamsActive => "{0} parameters ({1} active per token)", "{0}参数（每个词元激活 {1}）";
    SummaryBatch => "batch {0}", "批大小 {0}";
    SummaryTokens => "batch {0} × {1} tokens", "批大小 {0} × {1} 词元";
    SummaryImage => "batch {0} at {1}×{1} px", "批大小 {0}，{1}×{1} 像素";
    SummaryAccum => "accumulation ×{0} (effective {1})", "梯度累积 ×{0}（有效 {1}）";
    SummaryCheckpointing => "checkpointing: {0}", "激活检查点：{0}";
    SummaryEveryK => "every {0} blocks", "每 {0} 个块";

    // Verdict.
    FitsOn => "Fits on {0}", "可以放入 {0}";
    FitsOnGpus => "Fits on {0} × {1} ({2} per GPU)", "可以放入 {0} × {1}（每张 GPU {2}）";
    VerdictBarLabel => "Jump to the verdict", "跳到结论";
    ServeTitle => "What {0} allocates", "{0} 分配的显存";
    ServeSub => "{0} weights, {1} KV cache, {2}-token context, {3} in flight. Sizes as the engine's source code computes them.", "{0} 权重，{1} KV 缓存，{2} 个词元 × {3} 条序列。大小按引擎源代码的计算方式得出。";
    ServeWeightsTerm => "Weights", "权重";
    ServeWeightsNote => "The whole model, wherever its layers sit (GPU or host RAM).", "全部权重，含显卡和主机内存中的部分。";
    ServeKv => "KV cache", "KV 缓存";
    ServeKvNote => "Context × sequences, on the GPU for the offloaded layers.", "上下文长度 × 序列数，放到显卡的层在显卡上。";
    ServeKvPool => "KV cache pool", "KV 缓存池";
    ServeKvPoolNote => "What the budget leaves after weights and activations, in blocks of 16 tokens.", "预算扣除权重和激活后的剩余部分，按每块 16 个词元分配。";
    ServeCompute => "Compute buffer", "计算缓冲区";
    ServeComputeNote => "Working memory for one batch of tokens.", "处理一批词元所需的工作内存。";
    ServeComputePoolNote => "The activation peak of the engine's profiling run.", "引擎性能分析运行时的激活峰值。";
    ServeHost => "Host RAM", "主机内存";
    ServeHostNote => "Layers left off the GPU, and the token embedding.", "未放到显卡上的层及词嵌入。";
    ServeDeviceNote => "GPU buffers plus the CUDA context.", "显卡缓冲区加上 CUDA 上下文。";
    ServeDevicePoolNote => "The whole budget: the engine takes it at start.", "整个预算：引擎启动时即全部占用。";
    ServeMaxConcurrency => "The KV pool holds {0} tokens: {1} sequences of {2} tokens at once.", "KV 缓存池可容纳 {0} 个词元：可同时容纳 {1} 条 {2} 个词元的序列。";
    ServePoolFits => "Sequences in flight: {0} of {1} tokens each fit in the {2} budget ({3} of the GPU).", "{2} 的预算（显存的 {3}）可容纳 {0} 条 {1} 个词元的序列。";
    ServePoolNoFit => "The {2} budget holds {0} × {1} tokens, fewer sequences than the {3} asked for.", "{2} 的预算只能容纳 {0} 条 {1} 个词元的序列，少于所需的 {3} 条。";
    LaunchTitle => "Launch command", "启动命令";
    LaunchLabel => "The command that runs this setting in {0}", "在 {0} 中运行此配置的命令";
    ServeWeightsGguf => "{0} does not run {1} weights: llama.cpp reads GGUF files (Q4_K_M, Q8_0, …).", "{0} 无法运行 {1} 权重：llama.cpp 只读取 GGUF 文件（Q4_K_M、Q8_0 等）。";
    ServeWeightsTorch => "{0} does not run {1} weights: it loads 16-bit, FP8, AWQ, GPTQ or NF4 checkpoints.", "{0} 无法运行 {1} 权重：它加载 16 位、FP8、AWQ、GPTQ 或 NF4 检查点。";
    ServeWeightsHf => "{0} does not run {1} weights: its simulation takes the precision's weights, int8 or int4.", "{0} 无法运行 {1} 权重：其模拟只接受精度对应的权重、int8 或 int4。";
    ServeKvRefused => "{0} has no {1} KV cache: it takes {2}.", "{0} 没有 {1} 类型的 KV 缓存：可选 {2}。";
    ServeKvHf => "Hugging Face's KV cache follows the precision: it has no {0} cache.", "Hugging Face 的 KV 缓存随精度而定：没有 {0} 类型。";
    ServeNoFp8 => "{0} has no FP8: FP8 weights and KV caches need an Ada, Hopper or Blackwell GPU (or an AMD MI300).", "{0} 不支持 FP8：FP8 权重和 KV 缓存需要 Ada、Hopper 或 Blackwell 显卡（或 AMD MI300）。";
    ServeNotADecoder => "The engines are modelled for Llama-style decoders (Llama, Mistral, Qwen, Gemma, OLMo 2); this model is not one: pick Hugging Face transformers.", "推理引擎只对 Llama 式解码器（Llama、Mistral、Qwen、Gemma、OLMo 2）建模，此模型不属于此类：请选择 Hugging Face transformers。";
    ServeSparseOrLatent => "The engines are not modelled yet for mixtures of experts or latent attention, which this model has: pick Hugging Face transformers.", "推理引擎尚未对混合专家或潜在注意力建模，而此模型含有它们：请选择 Hugging Face transformers。";
    ServeNeedsGpu => "{0} sizes its KV cache from the GPU's memory: pick a GPU.", "{0} 根据显存大小分配 KV 缓存：请选择显卡。";
    ServeNeedsInference => "{0} serves a model: it runs in inference mode, not in {1}.", "{0} 用于部署模型：只适用于推理模式，不适用于{1}。";
    ServeNotFor => "{0} does not apply to {1}.", "{0}不适用于 {1}。";
    ServeHfConcurrency => "Hugging Face transformers runs one batch: its sequences are the batch size, not a concurrency.", "Hugging Face transformers 一次运行一个批次：序列数即批大小，而非并发数。";
    ServeTpLlama => "llama.cpp is modelled on one GPU: tensor parallelism is vLLM's and SGLang's.", "llama.cpp 按单张显卡建模：张量并行仅适用于 vLLM 和 SGLang。";
    ServeKvNeedsFlash => "llama.cpp's {0} V cache needs flash attention: pick FlashAttention or SDPA as the attention.", "llama.cpp 的 {0} V 缓存需要 FlashAttention：请将注意力实现设为 FlashAttention 或 SDPA。";
    ServeGpuLayers => "GPU layers {0} is more than the model's {1} layers and its output layer ({2} at most).", "显卡层数 {0} 超过了模型的 {1} 层加输出层（最多 {2}）。";
    ServeContextLimit => "{0} refuses a {1}-token context: the model's config.json allows {2} tokens. Setting {3}=1 lifts the check, and the output degrades.", "{0} 拒绝 {1} 个词元的上下文：模型的 config.json 最多允许 {2} 个词元。设置 {3}=1 可跳过该检查，但输出质量会下降。";
    BeyondTrained => "Above the model's trained context of {0} tokens: it runs, but its output degrades past the lengths it was trained on.", "超过模型训练时的上下文长度（{0} 个词元）：可以运行，但超出训练长度后输出质量会下降。";
    ServeDecode => "Decode ≈ {0} tokens/s — an estimate from the GPU's {1} GB/s memory bandwidth: {2} read per step, one token for each of the {3} in flight.", "解码约 {0} 词元/秒——按显卡 {1} GB/s 的显存带宽估算：每步读取 {2}，同时处理的 {3} 条序列各生成一个词元。";
    ServeAnswersTitle => "Limits of this setup", "此配置的上限";
    ServeAnswersSub => "Each answer changes one number and keeps the rest of the setting.", "每个答案只改变一个数值，其余设置不变。";
    ServeLongestContext => "Longest context with {0} in flight", "同时处理 {0} 条序列时的最长上下文";
    ServeMostSequences => "Most sequences of {0} tokens", "每条 {0} 个词元时的最多序列数";
    ServeFewestGpus => "Fewest GPUs (tensor parallel)", "所需最少显卡数（张量并行）";
    ServeNoneFits => "none fits", "无法容纳";
    ServeNoGpus => "more than {0}", "超过 {0} 张";
    ServeOneGpu => "llama.cpp is modelled on one GPU", "llama.cpp 按单张显卡建模";
    ServeAtLimit => "{0} tokens (the model's limit)", "{0} 个词元（模型上限）";
    ServeKvHeads => "Tensor parallelism {1} does not divide the model's {0} key/value heads.", "张量并行度 {1} 不能整除模型的 {0} 个键/值头。";
    TensorParallel => "Tensor parallelism", "张量并行";
    NoFitOn => "Does not fit on {0}", "无法放入 {0}";
    NoFitOnGpus => "Does not fit on {0} × {1} ({2} per GPU)", "无法放入 {0} × {1}（每张 GPU {2}）";
    FitsDetail => "{0} of {1} at the peak ({2}), {3} to spare.", "峰值占用 {0}，共 {1}（{2}），还剩 {3}。";
    NoFitDetail => "Needs {0}: {1} more than its {2}.", "需要 {0}，比其 {2} 多出 {1}。";
    MeterLabel => "GPU memory used at the peak", "峰值时已用的显存";
    LargestBatch => "Largest batch that fits:", "可容纳的最大批大小：";
    UseBatch => "Use {0}", "使用 {0}";
    UseBatchMargin => "Use {0} (keeps {1} free)", "使用 {0}（留出 {1} 余量）";
    UseBatchMarginLabel => "The largest batch that leaves {0} of the usable memory free, as the planner does: fragmentation and library versions move a real peak by a few percent.", "留出可用显存 {0} 余量时的最大批大小（与规划器相同）：内存碎片和库版本会让实际峰值浮动几个百分点。";
    NoBf16 => "This GPU has no bf16 matrix math (bf16 needs NVIDIA Ampere or later, or Apple M2 or later).", "这张显卡不支持 bf16 矩阵运算（bf16 需要 NVIDIA Ampere 及更新架构，或 Apple M2 及更新芯片）。";
    UsePrecision => "Use {0}", "改用 {0}";
    UnifiedMemoryLimit => "macOS lets the GPU use {0} of the unified memory by default ({1} of {2}); this raises it:", "macOS 默认只允许 GPU 使用统一内存的 {0}（{2} 中的 {1}）；可用以下命令调高：";
    NoBatchFits => "Even a batch of 1 does not fit on this GPU.", "即使批大小为 1 也无法放入这张显卡。";
    LongestSeqAt => "Longest sequence at batch {0}:", "批大小 {0} 时可容纳的最长序列：";
    LargestImageAt => "Largest image at batch {0}:", "批大小 {0} 时可容纳的最大图像：";
    FindInput => "Find", "查找";
    FindInputLabel => "Find the longest sequence or largest image that fits at this batch (simulates the model at each size it tries)", "查找此批大小下可容纳的最长序列或最大图像（对每个尝试的尺寸模拟一次模型）";
    InputTokens => "{0} tokens", "{0} 个 token";
    InputPixels => "{0} × {0} px", "{0} × {0} 像素";
    NoSeqFits => "No sequence length fits at batch {0}.", "批大小 {0} 时任何序列长度都放不下。";
    NoImageFits => "No image size fits at batch {0}.", "批大小 {0} 时任何图像尺寸都放不下。";

    // Peak numbers.
    PeaksTitle => "Peak memory, three ways", "峰值显存的三种口径";
    PeaksSub => "PyTorch and nvidia-smi count the same step differently.", "PyTorch 与 nvidia-smi 对同一训练步的统计方式不同。";
    PeaksSubInference => "PyTorch and nvidia-smi count the same forward pass differently.", "PyTorch 与 nvidia-smi 对同一次前向计算的统计方式不同。";
    Allocated => "Allocated", "已分配";
    AllocatedNote => "Live tensors at the worst moment of the step.", "训练步中最紧张时刻的存活张量。";
    AllocatedNoteInference => "Live tensors at the worst moment of the forward pass.", "前向计算中最紧张时刻的存活张量。";
    Reserved => "Reserved", "已保留";
    ReservedNote => "Held by PyTorch's caching allocator, free blocks included.", "PyTorch 缓存分配器持有的显存，包括空闲块。";
    DeviceUsed => "Device used", "设备占用";
    DeviceUsedNote => "Reserved plus the CUDA context and cuBLAS workspaces.", "已保留显存加上 CUDA 上下文和 cuBLAS 工作区。";

    // Breakdown.
    BreakdownTitle => "What fills memory at the peak", "峰值时显存的组成";
    BreakdownWhen => "During the {0} of step {1}, at", "发生在第 {1} 步的{0}，位于";
    CatParameters => "Parameters", "参数";
    CatParametersNote => "Model weights", "模型权重";
    CatGradients => "Gradients", "梯度";
    CatGradientsNote => "Accumulated during backward", "反向传播中累积";
    CatOptimizer => "Optimizer states", "优化器状态";
    CatOptimizerNote => "Moments, momentum buffers", "一阶、二阶矩等缓冲";
    CatActivations => "Activations", "激活值";
    CatActivationsNote => "Saved for backward", "为反向传播保存";
    CatActivationsNoteInference => "The forward's working set", "前向计算的工作集";
    CatTemporary => "Temporary", "临时张量";
    CatTemporaryNote => "Activation gradients, workspaces", "激活梯度与工作区";
    CatOther => "Other", "其他";
    CatOtherNote => "Inputs, buffers and cuBLAS workspaces", "输入、缓冲区与 cuBLAS 工作区";
    CatKvCache => "KV cache", "KV 缓存";
    CatKvCacheNote => "Keys and values kept for generation", "生成时保留的键和值";
    ColCategory => "Category", "类别";
    ColMemory => "Memory", "显存";
    ColShare => "Share", "占比";
    TotalAllocated => "Total (allocated)", "合计（已分配）";

    // Phases.
    PhaseForward => "forward pass", "前向传播";
    PhaseBackward => "backward pass", "反向传播";
    PhaseOptimizer => "optimizer step", "优化器更新";
    PhaseForwardShort => "Forward", "前向";
    PhaseBackwardShort => "Backward", "反向";
    PhaseOptimizerShort => "Optimizer", "优化器";
    StepN => "Step {0}", "第 {0} 步";

    // Batch chart.
    BatchChartTitle => "Memory vs batch size", "显存随批大小的变化";
    BatchChartSub => "Each point is a full simulation at that batch size. The dashed line is what the GPU can hold.", "每个点都是该批大小下的完整模拟。虚线是显卡可用的显存。";
    GpuLimit => "{0} usable", "{0} 可用";
    LargestMark => "largest {0}", "最大 {0}";
    CurrentMark => "current", "当前";
    PointLabel => "Batch {0}: {1} device used, {2} allocated", "批大小 {0}：设备占用 {1}，已分配 {2}";
    PointFits => "fits", "可放入";
    PointNoFit => "does not fit", "放不下";
    AxisBatch => "Batch size (log scale)", "批大小（对数刻度）";
    ColBatch => "Batch size", "批大小";
    ColFits => "Fits", "能否放入";
    Yes => "yes", "是";
    No => "no", "否";

    // Timeline chart.
    TimelineTitle => "One training step, op by op", "逐个算子的训练步";
    TimelineSub => "Allocated memory after each op of two steps; the second runs with the optimizer state in place.", "两个训练步中每个算子之后的已分配显存；第二步开始时优化器状态已经存在。";
    TimelineTitleInference => "One forward pass, op by op", "逐个算子的前向计算";
    TimelineSubInference => "Allocated memory after each op of the forward pass, without autograd: nothing is kept for a backward.", "前向计算中每个算子之后的已分配显存，不启用自动求导：不为反向保留任何张量。";
    TimelineScrub => "Step timeline: use the arrow keys to move through the ops", "训练步时间线：用方向键逐个查看算子";
    TimelineAt => "{0} · {1} · {2}: {3}", "{0} · {1} · {2}：{3}";
    PeakAt => "Peak {0} at {1}", "峰值 {0}，位于 {1}";
    AxisOps => "Ops in execution order", "按执行顺序排列的算子";
    Downsampled => "Showing {0} of {1} points; every peak is kept.", "显示 {1} 个点中的 {0} 个，所有峰值均保留。";
    ColStep => "Step", "步";
    ColPhase => "Phase", "阶段";
    ColOps => "Ops", "算子数";
    ColHighest => "Highest", "最高";
    ColAtEnd => "At the end", "结束时";

    // Layer table.
    LayersTitle => "Per layer", "逐层统计";
    LayersSub => "Parameters, bytes kept for backward at the end of the forward pass, and forward FLOPs, for one micro-batch.", "每层的参数量、前向结束时为反向保留的字节数，以及一个微批的前向 FLOPs。";
    LayersSubInference => "Parameters, bytes still held at the end of the forward pass, and forward FLOPs, for one batch.", "每层的参数量、前向结束时仍占用的字节数，以及一个批的前向 FLOPs。";
    ColLayer => "Layer", "层";
    ColParameters => "Parameters", "参数";
    ColSaved => "Saved for backward", "为反向保存";
    ColSavedInference => "Held after the forward", "前向结束后仍占用";
    ColFlops => "Forward FLOPs", "前向 FLOPs";
    SortBy => "Sort by {0}", "按{0}排序";
    ShowAllLayers => "Show all {0} layers", "显示全部 {0} 层";
    ShowFewerLayers => "Show fewer", "收起";

    // Comparison strip.
    TechTitle => "What would help", "哪些方法能省显存";
    TechSub => "The same configuration with one change, as device memory (nvidia-smi).", "只改动一项的同一配置，以设备占用（nvidia-smi）计。";
    TechAmp => "Mixed precision (bf16)", "混合精度（bf16）";
    TechCheckpointing => "Full activation checkpointing", "完整激活检查点";
    TechAccum => "Gradient accumulation ×4", "梯度累积 ×4";
    TechAccumDetail => "micro-batch {0}, same effective batch", "微批 {0}，有效批大小不变";
    TechEightBit => "8-bit AdamW", "8 位 AdamW";
    TechSaves => "saves {0} ({1})", "节省 {0}（{1}）";
    TechCosts => "costs {0} more", "多用 {0}";
    TechSame => "no change", "没有变化";
    TechApply => "Apply", "应用";
    TechApplyLabel => "Apply {0}", "应用{0}";
    TechNone => "Every technique here is already in use or does not apply.", "这里的方法都已启用或不适用。";

    // Share links and embedding.
    ShareTitle => "Share and embed", "分享与嵌入";
    ShareSub => "The link holds every input; the embed code shows a live widget with this configuration in any web page.", "链接包含全部输入；嵌入代码可在任意网页中显示此配置的实时小组件。";
    ShareLinkLabel => "Link to this result", "此结果的链接";
    CopyLink => "Copy link", "复制链接";
    EmbedLabel => "Embed code", "嵌入代码";
    CopyEmbed => "Copy embed code", "复制嵌入代码";
    Copied => "Copied.", "已复制。";
    CopyFailed => "Copying is blocked here: the text is selected, press Ctrl+C (⌘C) to copy it.", "此处无法自动复制：文本已选中，请按 Ctrl+C（⌘C）复制。";
    LinkWarningsTitle => "Parts of this link were ignored:", "链接中的部分参数已被忽略：";
    LinkUsing => "using", "改用";
    LinkChoice => "expected one of", "应为以下之一：";
    LinkCount => "expected a whole number from {0} to {1}", "应为 {0} 到 {1} 之间的整数";
    LinkFraction => "expected a number above 0 and at most 1", "应为大于 0 且不超过 1 的数";
    LinkSwitch => "expected 1 or 0", "应为 1 或 0";
    LinkUnknownModel => "no model has this id", "没有此 id 的模型";
    LinkUnknownGpu => "no GPU has this id", "没有此 id 的显卡";
    LinkConfigFormat => "the config.json in the link cannot be read: expected packed text starting with 1, or JSON", "无法读取链接中的 config.json：应为以 1 开头的压缩文本或 JSON";
    LinkConfigTooLong => "the config.json in the link cannot be read: it is longer than {0} bytes", "无法读取链接中的 config.json：超过 {0} 字节";
    LinkConfigBase64 => "the config.json in the link cannot be read: it is not base64url (A-Z a-z 0-9 - _)", "无法读取链接中的 config.json：不是 base64url 编码（A-Z a-z 0-9 - _）";
    LinkConfigEscape => "the config.json in the link cannot be read: it ends inside an escape", "无法读取链接中的 config.json：在转义序列中途结束";
    LinkConfigUtf8 => "the config.json in the link cannot be read: it is not UTF-8 text", "无法读取链接中的 config.json：不是 UTF-8 文本";
    LinkNoConfig => "the link carries no config.json", "链接中没有 config.json";
    LinkRepeated => "given more than once; the first value is used", "重复出现，使用第一个值";
    LinkNewer => "the link is from a newer vramfit; settings this version does not know are ignored", "此链接来自更新版本的 vramfit，本版本不认识的设置已被忽略";
    LinkTooLong => "the link is too long; its end was ignored", "链接过长，末尾部分已被忽略";
    Dismiss => "Dismiss", "关闭";
    ExtrasTitle => "Also set by the link:", "链接还设置了：";
    ExtrasClear => "Clear", "清除";
    OpenFull => "Open in vramfit", "在 vramfit 中打开";
    WidgetLabel => "vramfit GPU memory estimate", "vramfit 显存估算";

    // The planner panel.
    PlanTitle => "Make it fit: plans for a target batch", "让它装得下：按目标批量规划";
    PlanSub => "Every combination of micro-batch × accumulation, precision, checkpointing and optimizer (with several GPUs also ZeRO, FSDP and offload) that reaches the effective batch, checked against this GPU and ranked by estimated step time.", "遍历能达到该有效批量的所有组合：微批量 × 梯度累积、精度、激活检查点和优化器（多卡时还有 ZeRO、FSDP 和卸载），逐一检查能否装进这块 GPU，并按估计的每步时间排序。";
    PlanTarget => "Effective batch (all GPUs)", "有效批量（所有 GPU）";
    PlanTargetHelp => "Samples per optimizer step", "每次优化器更新的样本数";
    PlanFind => "Find plans", "查找方案";
    PlanTargetEmpty => "Enter an effective batch, e.g. 64.", "请输入有效批量，例如 64。";
    PlanTargetInvalid => "The effective batch must be a whole number from 1 to {0}.", "有效批量必须是 1 到 {0} 之间的整数。";
    PlanFound => "{0} configurations considered; the fastest that fit, with {1} per GPU per step:", "共考虑 {0} 种配置；以下是装得下的最快方案，每张 GPU 每步 {1} 个样本：";
    PlanNone => "Nothing reaches this batch on this GPU: try more GPUs, a smaller model or a shorter sequence.", "在这块 GPU 上没有方案能达到该批量：请尝试更多 GPU、更小的模型或更短的序列。";
    PlanUneven => "The effective batch {0} does not divide over {1} GPUs: each GPU takes {2}, {3} in all.", "有效批量 {0} 不能被 {1} 张 GPU 整除：每张 GPU 取 {2}，共 {3}。";
    PlanFailed => "The planner could not run: {0}", "无法运行规划器：{0}";
    PlanMicro => "micro-batch {0} × {1}", "微批量 {0} × {1}";
    PlanCheckpointing => "full checkpointing", "完整激活检查点";
    PlanOffload => "CPU offload", "CPU 卸载";
    PlanPerGpu => "{0} per GPU", "每张 GPU {0}";
    PlanStep => "≈ {0} per step", "每步约 {0}";
    PlanApplyLabel => "Apply plan: {0}", "应用方案：{0}";
    PlanCostNote => "Step time from a simple model: 6 × parameters × tokens FLOPs at the GPU's peak × 40 % utilization, a third more with full recompute, lower efficiency for small micro-batches, plus PCIe time when offloading.", "每步时间来自一个简单模型：6 × 参数量 × 词元数的浮点运算，按 GPU 峰值的 40% 利用率计算；完整重算多三分之一，小微批量效率更低，卸载时再加上 PCIe 传输时间。";
    PlanExportTitle => "Export a plan", "导出方案";
    PlanExportOf => "Export this plan", "导出此方案";
    PlanExportLabel => "Configuration for {0}", "{0} 的配置";
    PlanCopy => "Copy", "复制";
    ExportDeepSpeed => "DeepSpeed ds_config.json", "DeepSpeed ds_config.json";
    ExportHf => "Hugging Face TrainingArguments", "Hugging Face TrainingArguments";
    ExportAccelerate => "Accelerate (FSDP) config", "Accelerate（FSDP）配置";
    ExportPyTorch => "PyTorch training loop", "PyTorch 训练循环";
    UnitMs => "ms", "毫秒";
    UnitS => "s", "秒";
    UnitMin => "min", "分钟";
    ListSeparator => "; ", "；";
    TradeAccum => "micro-batch {0} × {1} accumulation steps: the same effective batch in smaller kernels", "微批量 {0} × {1} 步梯度累积：有效批量不变，但每次计算更小";
    TradeNoAccum => "micro-batch {0} without accumulation", "微批量 {0}，不做梯度累积";
    TradeFp32 => "fp32: no tensor-core speed-up", "fp32：用不上 Tensor Core 加速";
    TradeAmp => "AMP: tensor-core speed with fp32 master weights", "AMP：Tensor Core 的速度，保留 fp32 主权重";
    GpusTitle => "Which GPUs can run it?", "哪些显卡放得下？";
    GpusSub => "Every GPU preset, alone or as 2, 4 or 8 of them (with the chosen strategy, else FSDP), on which this configuration fits at batch {0}; least total memory first.", "列出所有显卡预设（单卡，或 2、4、8 张卡：使用所选策略，否则 FSDP）中能在批大小 {0} 下放下此配置的，按总显存从小到大排列。";
    GpusFind => "List GPUs", "列出显卡";
    GpusGpu => "GPU", "显卡";
    GpusMemory => "Memory per GPU", "每卡显存";
    GpusMaxBatch => "Largest batch", "最大批大小";
    GpusMaxBatchSub => "{0} · largest batch {1}", "{0} · 最大批大小 {1}";
    GpuMemoryOf => "{0} of {1}", "{0}（共 {1}）";
    GpusUseLabel => "Use {0}", "使用 {0}";
    GpusNone => "No GPU preset takes this batch, even eight of them: make it fit with the planner above.", "即使 8 张卡，也没有显卡预设能放下这个批大小：请用上方的规划器调整配置。";
    GpusMore => "{0} more GPU options fit only a smaller batch.", "另有 {0} 种显卡方案只能放下更小的批大小。";
    GpusFailed => "The GPUs could not be listed: {0}", "无法列出显卡：{0}";
    TradeAmpFp16 => "AMP in fp16 (this GPU has no bf16): tensor-core speed, fp32 master weights and a gradient scaler", "fp16 混合精度（此显卡不支持 bf16）：Tensor Core 的速度，保留 fp32 主权重并使用梯度缩放";
    TradeHalf => "pure half precision: least memory, no fp32 master copy", "纯半精度：显存最少，没有 fp32 主权重副本";
    TradeRecompute => "checkpointing re-runs each block's forward (about a third more compute)", "激活检查点会重算每个块的前向（计算量约多三分之一）";
    Trade8bit => "8-bit AdamW: a quarter of the optimizer memory", "8 位 AdamW：优化器状态只占四分之一显存";
    TradeStrategy => "{0} across GPUs", "多卡使用 {0}";
    TradeOffload => "offloading to the CPU costs PCIe traffic and CPU optimizer time", "卸载到 CPU 需要 PCIe 传输和 CPU 上的优化器时间";
    AdviceTitle => "Batch-size notes", "批量大小提示";
    AdviceLr => "Scale the learning rate with the effective batch: lr = base_lr × {0} / 256 (the linear scaling rule).", "学习率随有效批量缩放：lr = base_lr × {0} / 256（线性缩放规则）。";
    AdviceLrWarmup => "Scale the learning rate with the effective batch: lr = base_lr × {0} / 256 (the linear scaling rule), with a few epochs of warmup at this size.", "学习率随有效批量缩放：lr = base_lr × {0} / 256（线性缩放规则）；批量这么大时，先做几个 epoch 的预热。";
    AdviceLarge => "Above ~256 samples per step, models often generalize worse unless learning rate, warmup and regularization are retuned.", "每步超过约 256 个样本时，除非重新调整学习率、预热和正则化，模型的泛化往往会变差。";
    AdviceSmall => "Below ~32 samples per step, gradients are noisy: use gradient accumulation to raise the effective batch, or lower the learning rate.", "每步少于约 32 个样本时梯度噪声较大：用梯度累积提高有效批量，或降低学习率。";
    AdviceBatchNorm => "BatchNorm computes its statistics over the micro-batch ({0}), and accumulation does not change that: use SyncBatchNorm across GPUs, GroupNorm, or a larger micro-batch.", "BatchNorm 的统计量按微批量（{0}）计算，梯度累积改变不了这一点：请在多卡间使用 SyncBatchNorm、改用 GroupNorm，或增大微批量。";
    AdviceEval => "Evaluate under torch.no_grad() (or torch.inference_mode()): nothing is kept for backward, so evaluation fits much larger batches.", "评估时使用 torch.no_grad()（或 torch.inference_mode()）：不为反向保存任何张量，评估能装下大得多的批量。";
    AdvicePinMemory => "pin_memory=True in the DataLoader costs host RAM, not GPU memory.", "DataLoader 的 pin_memory=True 占用的是主机内存，而不是显存。";
    AdviceEmptyCache => "torch.cuda.empty_cache() returns cached blocks to the driver but does not lower the peak a step needs; it cannot fix an out-of-memory error.", "torch.cuda.empty_cache() 只把缓存块还给驱动，不会降低一步所需的峰值，解决不了显存不足。";
    CrashTitle => "The calculator hit an internal error.", "计算器遇到内部错误。";
    CrashBody => "Your configuration is kept in the page's address: reload to continue from it.", "你的配置保存在页面地址中：重新加载即可从它继续。";
    CrashReload => "Reload", "重新加载";
    // The Benchmark tab.
    TabCalculator => "Calculator", "计算器";
    TabBenchmark => "Benchmark", "基准测试";
    TabsLabel => "Page sections", "页面分区";
    BenchTitle => "Benchmark your GPU", "测试你的 GPU";
    BenchIntro => "Runs real network layers and kernels as WebGPU compute shaders on this device: how fast they are next to the GPU's peak, and how many bytes the layers really keep for backward next to vramfit's estimate. The measured speed prices your configuration's training step. Nothing leaves your browser.", "在本机用 WebGPU 计算着色器运行真实的网络层和算子：看它们与 GPU 峰值相比有多快，以及这些层为反向传播实际保留多少字节、与 vramfit 的估算相比如何。测得的速度用来估计你当前配置每个训练步的耗时。数据不会离开你的浏览器。";
    BenchDetecting => "Loading the benchmark and looking for a GPU…", "正在加载基准测试并查找 GPU…";
    BenchGpu => "GPU", "显卡";
    BenchSoftware => "software", "软件渲染";
    BenchYes => "yes", "支持";
    BenchNo => "no", "不支持";
    BenchLimitsLabel => "Limits", "限制";
    BenchLimitsValue => "buffer {0}, storage binding {1}, workgroup memory {2}, {3} threads per workgroup", "缓冲区 {0}，存储绑定 {1}，工作组内存 {2}，每个工作组 {3} 个线程";
    BenchPresetLabel => "GPU model for % of peak", "用于计算峰值百分比的 GPU 型号";
    BenchPresetNone => "Unknown: no % of peak", "未知：不计算峰值百分比";
    BenchPresetVendor => "Same vendor", "同一厂商";
    BenchPresetAll => "All GPUs", "所有 GPU";
    BenchPresetMatched => "Matched from the adapter's name: check that it is yours.", "根据适配器名称匹配：请确认型号无误。";
    BenchPresetChosen => "Percentages of peak use this model's datasheet figures.", "峰值百分比使用该型号的官方参数。";
    BenchPresetUnknown => "Browsers often hide the GPU's name. Pick your model to see % of peak; without one, no peak is claimed.", "浏览器常常隐藏 GPU 名称。选择你的型号即可显示峰值百分比；不选则不给出峰值。";
    BenchRunTitle => "Run", "运行";
    BenchTypes => "Number types", "数值类型";
    BenchNoF16 => "This GPU or browser lacks shader-f16, so only fp32 runs.", "此 GPU 或浏览器不支持 shader-f16，因此只运行 fp32。";
    BenchSize => "Problem sizes", "问题规模";
    BenchSizeSmall => "Small: safe on phones and integrated GPUs", "小：手机和集成显卡也能安全运行";
    BenchSizeDefault => "Medium: laptop and desktop GPUs", "中：笔记本和台式机显卡";
    BenchSizeLarge => "Large: data-centre GPUs", "大：数据中心 GPU";
    BenchKernels => "Kernels and layers", "算子和网络层";
    BenchLayersHint => "The transformer block and the ResNet bottleneck run forward and backward at your configuration's sizes (capped when small, scaled down to fit the GPU).", "Transformer 块和 ResNet 瓶颈块按你的配置尺寸运行前向和反向（小规模时有上限，超出 GPU 限制时自动缩小）。";
    BenchQuick => "Quick run (1 warm-up, 3 timed runs)", "快速运行（1 次预热，3 次计时）";
    BenchStart => "Start", "开始";
    BenchCancel => "Cancel", "取消";
    BenchProgress => "Benchmark progress", "基准测试进度";
    BenchProgressOf => "Step {0} of {1}:", "第 {0} 步，共 {1} 步：";
    BenchNoWebgpu => "This browser has no WebGPU.", "此浏览器不支持 WebGPU。";
    BenchNoWebgpuHelp => "Use a current Chrome, Edge or Safari (or Firefox with WebGPU turned on), or run vramfit bench from the command line. The calculator works without it.", "请使用新版 Chrome、Edge 或 Safari（或开启了 WebGPU 的 Firefox），或在命令行运行 vramfit bench。计算器不受影响。";
    BenchNoAdapter => "WebGPU found no usable GPU.", "WebGPU 没有找到可用的 GPU。";
    BenchNoDevice => "The GPU refused to open a device.", "GPU 拒绝创建设备。";
    BenchLimits => "This GPU's limits are too small for the kernels.", "此 GPU 的限制太小，无法运行这些算子。";
    BenchLimitsHelp => "Try another browser or GPU, or run vramfit bench from the command line.", "请换一个浏览器或 GPU，或在命令行运行 vramfit bench。";
    BenchOom => "The GPU ran out of memory for a buffer.", "GPU 显存不足，无法分配缓冲区。";
    BenchOomHelp => "Choose a smaller problem size and start again.", "请选择更小的问题规模后重新开始。";
    BenchShader => "A shader failed to compile on this GPU.", "有一个着色器在此 GPU 上编译失败。";
    BenchShaderHelp => "This is a browser or driver problem: untick that kernel to run the others, and please report it with the details below.", "这是浏览器或驱动的问题：取消勾选该算子即可运行其他项目，也请附上下面的详细信息反馈给我们。";
    BenchLost => "The GPU device was lost during the run.", "运行过程中 GPU 设备丢失。";
    BenchLostHelp => "The driver may have reset it, or the browser reclaimed it. A smaller problem size is gentler; start again.", "可能是驱动重置了 GPU，或浏览器回收了它。更小的问题规模负担更轻；请重新开始。";
    BenchCancelled => "Cancelled.", "已取消。";
    BenchCancelledHelp => "Start again whenever you like.", "随时可以重新开始。";
    BenchLoadFailed => "The benchmark could not be loaded.", "无法加载基准测试。";
    BenchLoadFailedHelp => "Check the connection and reload the page. The calculator keeps working.", "请检查网络连接并重新加载页面。计算器不受影响。";
    BenchCrashed => "The benchmark stopped after an internal error.", "基准测试因内部错误而停止。";
    BenchCrashedHelp => "Reload the page to run it again. The calculator keeps working.", "重新加载页面即可再次运行。计算器不受影响。";
    BenchFailed => "The benchmark failed.", "基准测试失败。";
    BenchFailedHelp => "Start again; if it happens again, please report it with the details below.", "请重新开始；如果再次出现，请附上下面的详细信息反馈给我们。";
    BenchResults => "Results", "结果";
    BenchResultsSub => "Median of the timed runs; problem sizes:", "取计时运行的中位数；问题规模：";
    BenchSpeedup => "Tuned matmul ({0}): {1}× faster than the naive kernel, {2} GFLOP/s", "优化后的矩阵乘法（{0}）：比朴素实现快 {1} 倍，{2} GFLOP/s";
    BenchThroughput => "Layers forward + backward: fp32 {0} GFLOP/s, fp16 {1} GFLOP/s", "网络层前向 + 反向：fp32 {0} GFLOP/s，fp16 {1} GFLOP/s";
    BenchThroughputF32 => "Layers forward + backward: fp32 {0} GFLOP/s", "网络层前向 + 反向：fp32 {0} GFLOP/s";
    BenchProjectionNoF16 => "Your configuration trains in half precision, which was not measured here: the fp32 rate stands in for it.", "你的配置使用半精度训练，但这里没有测量半精度：暂用 fp32 的速度代替。";
    BenchProjection => "Your configuration at this speed: about {0} per step ({1} GFLOP/s, {2})", "按此速度，你的配置每步约需 {0}（{1} GFLOP/s，{2}）";
    BenchNoProjection => "Include a layer to project your configuration's step time.", "勾选至少一个网络层，才能估计你的配置每步的耗时。";
    BenchKernelsTitle => "Kernels", "算子";
    BenchColKernel => "Kernel", "算子";
    BenchColType => "Type", "类型";
    BenchColSize => "Size", "规模";
    BenchColMedian => "Median ms", "中位数（毫秒）";
    BenchColRate => "Speed", "速度";
    BenchColPeak => "% of peak", "峰值占比";
    BenchColF16 => "fp16 vs fp32", "fp16 相对 fp32";
    BenchNoPeak => "Pick your GPU model above to see % of peak.", "在上方选择你的 GPU 型号即可查看峰值占比。";
    BenchLayersTitle => "Layers: kept for backward", "网络层：为反向保留的数据";
    BenchLayersSub => "Bytes of the real GPU buffers each layer keeps for backward, next to vramfit's estimate for the same layer; the rows below each layer explain the difference.", "每层为反向传播保留的真实 GPU 缓冲区字节数，与 vramfit 对同一层的估算并列；每层下方的行解释两者的差异。";
    BenchColLayer => "Layer", "网络层";
    BenchColMeasured => "Measured", "实测";
    BenchColEstimated => "Estimated", "估算";
    BenchColStep => "Forward + backward", "前向 + 反向";
    BenchExportJson => "Download JSON", "下载 JSON";
    BenchExportMd => "Download Markdown", "下载 Markdown";
    BenchShowMarkdown => "Report as Markdown", "Markdown 格式的报告";
    BenchWhyBlockIo => "block input vs output: the GPU block keeps its input x for ln_1; the estimator counts a tensor in the layer that made it, so this row holds the block's output (kept by the next block's ln_1) instead of its input: same size", "块的输入与输出：GPU 上的块为 ln_1 保留输入 x；估算器把张量计入产生它的层，所以这一行记的是本块的输出（由下一块的 ln_1 保留）而不是输入：大小相同";
    BenchWhyAttnDropout => "attention dropout (p = {0}): besides the softmax output, PyTorch keeps the dropped-out probabilities for the context bmm and a 1-byte mask (B·heads·S² × ({1} + 1) bytes); the GPU block has no dropout", "注意力 dropout（p = {0}）：除 softmax 输出外，PyTorch 还为上下文 bmm 保留 dropout 后的概率和一个 1 字节掩码（B·heads·S² × ({1} + 1) 字节）；GPU 上的块没有 dropout";
    BenchWhyResidDropout => "residual dropouts (p = {0}): two 1-byte masks of B·S·h", "残差 dropout（p = {0}）：两个 B·S·h 的 1 字节掩码";
    BenchWhyGeluNew => "gelu_new as eager ops: tanh's output and both factors of the final product (0.5·x, 1 + tanh) are saved, 3 × B·S·4h; the GPU GELU backward recomputes them from the saved input", "gelu_new 按单个算子执行：tanh 的输出和最后乘积的两个因子（0.5·x、1 + tanh）都被保存，共 3 × B·S·4h；GPU 上的 GELU 反向由保存的输入重新算出它们";
    BenchWhyResnetInput => "block input: the GPU block lists x, which conv1 keeps; the estimator counts x in the previous block's row (as its output) and this block's output here, as the GPU list does", "块输入：GPU 上的块列出了 conv1 保留的 x；估算器把 x 计入上一块的行（作为它的输出），本块的输出则与 GPU 列表一样计在这里";
    BenchWhyFp16Resnet => "the estimator keeps a pure-fp16 ResNet's activations in fp32: 2 extra bytes per element of the six activations besides x", "估算器把纯 fp16 ResNet 的激活按 fp32 保存：除 x 外的六个激活每个元素多 2 字节";
    BenchWhyRounding => "allocator rounding (512 B blocks)", "分配器取整（512 B 的块）";
    BenchNoteScaled => "scaled {0}: the largest tensor ({1} elements of {2}) must fit the adapter's {3}-byte buffer binding", "已缩小 {0}：最大的张量（{1} 个 {2} 元素）必须放进适配器 {3} 字节的缓冲区绑定";
    BenchNoteNoEstimate => "no estimate: {0}", "无估算：{0}";
    BenchNoteNoStage => "no estimate: no ResNet-50 stage has these channels", "无估算：ResNet-50 没有哪一级是这个通道数";
    SearchModels => "Search models", "搜索模型";
    SearchModelsHint => "Search, e.g. llama 70b", "搜索，例如 llama 70b";
    SearchGpus => "Search GPUs", "搜索 GPU";
    SearchGpusHint => "Search, e.g. 4090 or H100", "搜索，例如 4090 或 H100";
    SearchNone => "Nothing matches “{0}”.", "没有与“{0}”匹配的项。";
    CustomTitle => "Or describe a model by its dimensions", "或按尺寸描述一个模型";
    CustomFamily => "Architecture", "架构";
    CustomGpt2 => "Decoder, GPT-2 style (GELU)", "解码器，GPT-2 式（GELU）";
    CustomLlama => "Decoder, Llama style (SwiGLU)", "解码器，Llama 式（SwiGLU）";
    CustomBert => "Encoder, BERT style", "编码器，BERT 式";
    CustomLayers => "Layers", "层数";
    CustomHidden => "Hidden size", "隐藏维度";
    CustomHeads => "Attention heads", "注意力头数";
    CustomKvHeads => "Key/value heads", "键值头数";
    CustomIntermediate => "MLP width", "MLP 宽度";
    CustomLayout => "Block layout", "块结构";
    CustomLayoutLlama => "Llama, Mistral", "Llama, Mistral";
    CustomLayoutQwen3 => "Qwen3", "Qwen3";
    CustomLayoutOlmo2 => "OLMo 2", "OLMo 2";
    CustomLayoutGemma => "Gemma", "Gemma";
    CustomLayoutGemma2 => "Gemma 2", "Gemma 2";
    CustomLayoutGemma3 => "Gemma 3", "Gemma 3";
    CustomLayoutPhi3 => "Phi-3, Phi-4", "Phi-3, Phi-4";
    CustomLayoutGptNeox => "GPT-NeoX, Pythia", "GPT-NeoX, Pythia";
    CustomAboutPhi3 => "Llama's blocks with one fused q/k/v projection and one fused gate/up projection.", "在 Llama 的块上把 q/k/v 投影和 gate/up 投影各合并为一个。";
    CustomAboutGptNeox => "LayerNorms, one fused q/k/v projection, a quarter of each head rotated, a plain GELU MLP beside attention.", "LayerNorm、合并的 q/k/v 投影、每个头只旋转四分之一维度、与注意力并行的普通 GELU MLP。";
    CustomAboutLlama => "Norms before attention and the MLP. With a sliding window it is Mistral's, on every layer.", "注意力和 MLP 之前归一化。填写滑动窗口即为 Mistral 的写法，作用于每一层。";
    CustomAboutQwen3 => "Llama's blocks plus per-head query and key norms.", "在 Llama 的块上另加按头的查询、键归一化。";
    CustomAboutOlmo2 => "Norms after attention and the MLP; query and key norms.", "注意力和 MLP 之后归一化；查询、键归一化。";
    CustomAboutGemma => "Scaled embeddings, a GELU-gated MLP, a tied head.", "缩放嵌入、GELU 门控 MLP、共享权重的输出头。";
    CustomAboutGemma2 => "Norms before and after, soft-capped scores and logits, every other layer sliding.", "前后都归一化，注意力分数和 logits 软上限，每隔一层使用滑动窗口。";
    CustomAboutGemma3 => "Norms before and after, query and key norms, five layers of six sliding.", "前后都归一化，查询、键归一化，每 6 层中有 5 层使用滑动窗口。";
    CustomHeadDim => "Head width", "每头维度";
    CustomHeadDimBlank => "hidden / heads", "隐藏维度 / 头数";
    CustomWindow => "Sliding window", "滑动窗口";
    CustomWindowBlank => "none", "无";
    CustomTied => "LM head shares the input embedding", "LM 头与输入嵌入共享权重";
    CustomVocab => "Vocabulary", "词表大小";
    CustomUse => "Use this model", "使用此模型";
    CustomBadField => "{0} must be a whole number from 1 to {1}.", "{0}必须是 1 到 {1} 之间的整数。";
    CustomHeadsDivide => "The hidden size must be a multiple of the attention heads.", "隐藏维度必须是注意力头数的整数倍。";
    CustomKvDivide => "The attention heads must be a multiple of the key/value heads.", "注意力头数必须是键值头数的整数倍。";
    CustomResnet => "CNN, ResNet style", "卷积网络，ResNet 式";
    CustomMlp => "MLP (linear layers)", "多层感知机（全连接层）";
    CustomDepths => "Blocks per stage", "每级的块数";
    CustomBlock => "Block", "残差块";
    CustomBottleneck => "Bottleneck (ResNet-50 and deeper)", "瓶颈块（ResNet-50 及更深）";
    CustomBasic => "Basic (ResNet-18 and -34)", "基础块（ResNet-18 和 -34）";
    CustomInput => "Input features", "输入特征数";
    CustomWidths => "Hidden layer widths", "隐藏层宽度";
    CustomActivation => "Activation", "激活函数";
    CustomRelu => "ReLU", "ReLU";
    CustomGelu => "GELU", "GELU";
    CustomActNone => "None", "无";
    CustomClasses => "Classes", "类别数";
    CustomBadList => "{0}: whole numbers from 1 to {1}, separated by commas.", "{0}：1 到 {1} 之间的整数，用逗号分隔。";
    CustomStages => "Blocks per stage takes four numbers, one per stage (ResNet-50: 3, 4, 6, 3).", "每级的块数要填 4 个数，每级一个（ResNet-50：3, 4, 6, 3）。";
}
