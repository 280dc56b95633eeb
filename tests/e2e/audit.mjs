// Page audits used by run.mjs: an axe-core accessibility scan, and a scan
// for English left on the page when it is shown in Chinese.

import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const AXE_PATH = require.resolve("axe-core/axe.min.js");

/** Runs axe-core in the page; returns { blocking, other } violations (serious/critical vs the rest). */
export async function axeScan(page) {
  if (!(await page.evaluate(() => typeof window.axe === "object"))) {
    await page.addScriptTag({ path: AXE_PATH });
  }
  const violations = await page.evaluate(async () => {
    const result = await window.axe.run(document, { resultTypes: ["violations"] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.slice(0, 3).map((n) => n.target.join(" ")),
      count: v.nodes.length,
    }));
  });
  const blocking = violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  const other = violations.filter((v) => !blocking.includes(v));
  return { blocking, other };
}

/** One line per violation. */
export function describeViolations(list) {
  return list.map((v) => `${v.impact} ${v.id}: ${v.help} (${v.count}×, e.g. ${v.targets.join(" | ")})`);
}

// English phrases the page shows in English mode; none may survive the switch to Chinese.
export const KNOWN_ENGLISH = [
  "How much GPU memory", "Display settings", "Dark mode", "Configuration", "Model", "Batch size", "Samples per",
  "Sequence length", "Tokens per sample", "tokens", "Gradient accumulation", "Micro-batches per", "Effective batch",
  "Precision", "Optimizer", "Mixed bf16", "SGD with momentum", "Activation checkpointing", "None", "Full (every block)",
  "Attention", "Eager", "Transformer text models only", "Marketed memory", "Paste or drop", "config.json contents",
  "Supported model types", "Choose file", "Fits on", "Does not fit", "at the peak", "to spare", "Largest batch",
  "Use ", "Peak memory, three ways", "count the same step", "Allocated", "Reserved", "Device used", "Live tensors",
  "caching allocator", "CUDA context and", "What fills memory", "During the", "backward pass", "forward pass", "Category",
  "Memory", "Share", "Parameters", "Model weights", "Gradients", "Optimizer states", "Activations", "Saved for backward",
  "Temporary", "Other", "Total (allocated)", "What would help", "same configuration", "saves", "Apply",
  "Gradient accumulation ×4", "Full activation checkpointing", "8-bit AdamW", "micro-batch", "Memory vs batch size",
  "Each point is", "usable", "largest", "log scale", "Batch ", "fits", "One training step", "op by op", "Forward",
  "Backward", "Step 1", "Step 2", "Peak ", "Showing ", "Per layer", "Layer", "Forward FLOPs", "Sort by", "Show all",
  "Estimates replay", "kept in the page", "Share and embed", "Copy link", "Copy embed code", "Embed code", "parameters", "Fits",
  "Make it fit", "Find plans", "per step", "per GPU", "Batch-size notes", "Export a plan", "Export this plan",
  "configurations considered", "Scale the learning rate", "Evaluate under", "costs host RAM", "returns cached blocks",
  "without accumulation", "accumulation steps", "tensor-core", "full checkpointing", "Search models", "Search GPUs",
  "Search, e.g.", "Nothing matches", "describe a model", "Use this model", "Hidden size", "Attention heads",
  "Calculator", "Benchmark", "Benchmark your GPU", "Runs real network layers", "Loading the benchmark", "software",
  "Limits", "GPU model for", "no % of peak", "Same vendor", "All GPUs", "Matched from", "Browsers often hide",
  "Percentages of peak", "Number types", "only fp32 runs", "Problem sizes", "safe on phones", "laptop and desktop",
  "data-centre", "Kernels and layers", "forward and backward", "Quick run", "Start", "Cancel", "has no WebGPU",
  "found no usable GPU", "refused to open", "limits are too small", "ran out of memory", "failed to compile",
  "was lost", "Cancelled", "could not be loaded", "internal error", "The benchmark failed", "Results", "Median of",
  "Tuned matmul", "faster than the naive", "Layers forward", "Your configuration at this speed", "Include a layer",
  "Kernels", "Median ms", "% of peak", "fp16 vs fp32", "Pick your GPU model", "kept for backward", "real GPU buffers",
  "Measured", "Estimated", "Forward + backward", "Download JSON", "Download Markdown", "Report as Markdown",
  "not measured here", "Page sections",
];

// Latin-script words allowed in Chinese mode: units, product and format names, acronyms.
const ALLOWED_WORDS = new Set(
  [
    "GiB", "GB", "MiB", "MB", "KiB", "kB", "TiB", "TB", "px", "vramfit", "PyTorch", "CUDA", "cuBLAS", "nvidia", "smi",
    "torch", "SGD", "Adam", "AdamW", "Adafactor", "Lion", "foreach", "fused", "loop", "SDPA", "FlashAttention", "Transformer", "Hugging", "Face",
    "config", "json", "JSON", "model_type", "bf16", "fp16", "fp32", "FLOPs", "KV", "CNN", "BERT", "GPT", "MLP", "Llama",
    "Mistral", "Qwen", "SmolLM", "NeoX", "OLMo", "Gemma", "Pythia", "Phi", "DeepSeek", "vit", "NVIDIA", "GeForce", "RTX", "AMD", "Intel", "Apple", "bert", "gpt2", "llama", "mistral", "qwen2",
    "LoRA", "QLoRA", "DeepSpeed", "CPU", "GPU", "ZeRO", "FSDP", "DDP", "AMP", "PCIe", "Tensor", "Core", "TrainingArguments",
    "Accelerate", "DataLoader", "True", "pickle", "GELU", "SwiGLU", "MLP", "ReLU", "torchvision",
    "WebGPU", "WGSL", "GFLOP", "bench", "Chrome", "Edge", "Safari", "Firefox", "Markdown", "ResNet", "matmul",
    "ConvNeXt", "RegNet", "EfficientNet", "MobileNet", "Hub", "HTTP", "main", "Kahan", "eager",
    "vLLM", "SGLang", "Ollama", "GGUF", "mixtral", "olmoe", "DeepSeek", "OLMoE", "Mixtral", "transformers", "AWQ", "GPTQ", "bitsandbytes", "SDPA", "Ada", "Hopper", "Blackwell", "Ampere", "macOS", "Megatron", "etp", "NCCL", "GLM", "MiniMax", "ERNIE", "EXAONE", "Gated", "DeltaNet", "Kimi", "Arcee", "Nemotron", "RoBERTa", "CamemBERT", "DistilBERT", "Granite", "granitemoe", "granitemoeshared", "granitemoehybrid", "Bamba", "Mamba", "ministral", "StableLM", "Cohere", "OPT", "torchtitan", "NVSwitch", "NVLink", "SHARP", "NVLS",
  ].map((w) => w.toLowerCase()),
);

/**
 * Collects what a reader can meet on the page — text nodes (visually hidden
 * ones too), titles, aria labels and values, placeholders, alt texts and
 * <optgroup> labels — leaving out anything inside translate="no" (product
 * names, op names, code) and scripts.
 */
export async function pageStrings(page) {
  return page.evaluate(() => {
    const out = [];
    const skip = (el) => !el || el.closest('[translate="no"], script, style, noscript');
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent.trim();
      if (text && !skip(node.parentElement)) out.push(text);
    }
    for (const el of document.body.querySelectorAll("*")) {
      if (skip(el)) continue;
      for (const attr of ["title", "aria-label", "aria-valuetext", "placeholder", "alt", "label"]) {
        const v = el.getAttribute(attr);
        if (v && v.trim()) out.push(v.trim());
      }
    }
    out.push(document.title);
    return out;
  });
}

/** English phrases and words left in `strings` (the page in Chinese). */
export function englishLeft(strings) {
  // A phrase counts as a whole word: "Attention" is not in "FlashAttention-2".
  const escape = (p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const phrases = KNOWN_ENGLISH.filter((p) => {
    const re = new RegExp(`(?<![A-Za-z])${escape(p)}(?![a-z])`);
    return strings.some((s) => re.test(s));
  });
  const words = new Set();
  for (const s of strings) {
    for (const token of s.match(/[A-Za-z][A-Za-z0-9._\-]*/g) ?? []) {
      // Identifiers (op names, ids, versions) carry dots, digits, dashes or underscores.
      if (/[._\-0-9]/.test(token) || token.length < 3) continue;
      if (!ALLOWED_WORDS.has(token.toLowerCase())) words.add(token);
    }
  }
  return { phrases, words: [...words] };
}
