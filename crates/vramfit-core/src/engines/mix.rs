//! `llama-quantize`'s file types ("mixes"): which ggml type each tensor of a
//! decoder gets.
//!
//! Source: llama.cpp, `src/llama-quant.cpp`: `llama_ftype_get_default_type`
//! (the mix's base type), `tensor_get_category` (a tensor's role, by a
//! substring of its name), `llama_tensor_get_type_impl` (the per-tensor
//! rules below) and `tensor_type_fallback` ([`GgmlType::fallback`]). The
//! rules modelled are those of an architecture other than Falcon,
//! quantized without an importance matrix (an imatrix changes only the
//! IQ2/IQ3 mixes and, for Q4_0/Q5_0, the first eighth of `ffn_down`, which
//! it stores as Q4_1/Q5_1). Mixtures of experts follow the same rules by
//! the layer their tensor names carry (`layer_info`), plus those for
//! `n_expert == 8` (Mixtral: attention K and V in Q8_0, attention output
//! in Q5_K for the small mixes) and the `MXFP4_MOE` mix.
use super::gguf::GgmlType;
use crate::error::Error;
use std::fmt;
use std::str::FromStr;

/// A `llama-quantize` file type, by its lower-case name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GgufMix {
    /// Every matrix f16 (`convert_hf_to_gguf.py --outtype f16`).
    F16,
    /// Every matrix bf16.
    Bf16,
    /// Q4_0; the output matrix Q6_K.
    Q4_0,
    /// Q4_1; the output matrix Q6_K.
    Q4_1,
    /// Q5_0; the output matrix Q6_K.
    Q5_0,
    /// Q5_1; the output matrix Q6_K.
    Q5_1,
    /// Q8_0 throughout.
    Q8_0,
    /// Q2_K; attention V Q3_K (Q4_K with 4+ query heads per key head),
    /// attention output and FFN down Q3_K.
    Q2K,
    /// Q3_K throughout (output Q6_K).
    Q3KS,
    /// Q3_K; attention V Q5_K in the first two layers, else Q4_K; attention
    /// output Q4_K; FFN down Q5_K in the first sixteenth, else Q4_K.
    Q3KM,
    /// Q3_K; attention V, attention output and FFN down Q5_K.
    Q3KL,
    /// Q4_K; attention V in the first four layers and FFN down in the first
    /// eighth Q5_K.
    Q4KS,
    /// Q4_K; attention V and FFN down Q6_K in half the layers (`use_more_bits`).
    Q4KM,
    /// Q5_K throughout (output Q6_K).
    Q5KS,
    /// Q5_K; attention V and FFN down Q6_K in half the layers.
    Q5KM,
    /// Q6_K throughout.
    Q6K,
    /// IQ4_NL; attention V Q5_K with 4+ query heads per key head; FFN down
    /// Q5_K in the first eighth.
    Iq4Nl,
    /// IQ4_XS, with IQ4_NL's exceptions.
    Iq4Xs,
    /// `MXFP4_MOE`: every expert bank (a 3-D tensor) MXFP4, every other
    /// matrix Q8_0 (output included) — how gpt-oss GGUFs are published.
    Mxfp4Moe,
}

impl GgufMix {
    /// Every mix, in the order `llama-quantize --help` lists them.
    pub const ALL: &'static [GgufMix] = &[
        GgufMix::Q4_0,
        GgufMix::Q4_1,
        GgufMix::Q5_0,
        GgufMix::Q5_1,
        GgufMix::Iq4Nl,
        GgufMix::Iq4Xs,
        GgufMix::Mxfp4Moe,
        GgufMix::Q2K,
        GgufMix::Q3KS,
        GgufMix::Q3KM,
        GgufMix::Q3KL,
        GgufMix::Q4KS,
        GgufMix::Q4KM,
        GgufMix::Q5KS,
        GgufMix::Q5KM,
        GgufMix::Q6K,
        GgufMix::Q8_0,
        GgufMix::F16,
        GgufMix::Bf16,
    ];

    /// The id (lower case, as `llama-quantize` accepts it case-insensitively).
    pub fn id(self) -> &'static str {
        match self {
            GgufMix::F16 => "f16",
            GgufMix::Bf16 => "bf16",
            GgufMix::Q4_0 => "q4_0",
            GgufMix::Q4_1 => "q4_1",
            GgufMix::Q5_0 => "q5_0",
            GgufMix::Q5_1 => "q5_1",
            GgufMix::Q8_0 => "q8_0",
            GgufMix::Q2K => "q2_k",
            GgufMix::Q3KS => "q3_k_s",
            GgufMix::Q3KM => "q3_k_m",
            GgufMix::Q3KL => "q3_k_l",
            GgufMix::Q4KS => "q4_k_s",
            GgufMix::Q4KM => "q4_k_m",
            GgufMix::Q5KS => "q5_k_s",
            GgufMix::Q5KM => "q5_k_m",
            GgufMix::Q6K => "q6_k",
            GgufMix::Iq4Nl => "iq4_nl",
            GgufMix::Iq4Xs => "iq4_xs",
            GgufMix::Mxfp4Moe => "mxfp4_moe",
        }
    }

    /// The mix's base type (`llama_ftype_get_default_type`).
    pub fn default_type(self) -> GgmlType {
        match self {
            GgufMix::F16 => GgmlType::F16,
            GgufMix::Bf16 => GgmlType::Bf16,
            GgufMix::Q4_0 => GgmlType::Q4_0,
            GgufMix::Q4_1 => GgmlType::Q4_1,
            GgufMix::Q5_0 => GgmlType::Q5_0,
            GgufMix::Q5_1 => GgmlType::Q5_1,
            GgufMix::Q8_0 => GgmlType::Q8_0,
            GgufMix::Q2K => GgmlType::Q2K,
            GgufMix::Q3KS | GgufMix::Q3KM | GgufMix::Q3KL => GgmlType::Q3K,
            GgufMix::Q4KS | GgufMix::Q4KM => GgmlType::Q4K,
            GgufMix::Q5KS | GgufMix::Q5KM => GgmlType::Q5K,
            GgufMix::Q6K => GgmlType::Q6K,
            GgufMix::Iq4Nl => GgmlType::Iq4Nl,
            GgufMix::Iq4Xs => GgmlType::Iq4Xs,
            GgufMix::Mxfp4Moe => GgmlType::Mxfp4,
        }
    }

    /// Whether the mix quantizes (f16 and bf16 files keep every matrix as is).
    fn quantizes(self) -> bool {
        !matches!(self, GgufMix::F16 | GgufMix::Bf16)
    }
}

impl fmt::Display for GgufMix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for GgufMix {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        let lower = s.to_ascii_lowercase();
        GgufMix::ALL
            .iter()
            .copied()
            .find(|m| m.id() == lower)
            .ok_or_else(|| Error::InvalidChoice {
                field: "weights",
                value: s.to_string(),
                accepted: GgufMix::ALL
                    .iter()
                    .map(|m| m.id())
                    .collect::<Vec<_>>()
                    .join("|"),
            })
    }
}

/// What a weight matrix is, as `tensor_get_category` sorts GGUF tensor names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `token_embd.weight`.
    TokenEmbd,
    /// `output.weight` (the untied LM head).
    Output,
    /// `attn_q.weight`.
    AttnQ,
    /// `attn_k.weight`.
    AttnK,
    /// `attn_v.weight`.
    AttnV,
    /// `attn_output.weight`.
    AttnOutput,
    /// `ffn_gate.weight`.
    FfnGate,
    /// `ffn_up.weight`.
    FfnUp,
    /// `ffn_down.weight`.
    FfnDown,
    /// `ffn_gate_exps.weight`: every routed expert's gate, one 3-D tensor.
    FfnGateExps,
    /// `ffn_up_exps.weight`.
    FfnUpExps,
    /// `ffn_down_exps.weight`.
    FfnDownExps,
    /// `ffn_gate_shexp.weight`: the shared experts' gate.
    FfnGateShexp,
    /// `ffn_up_shexp.weight`.
    FfnUpShexp,
    /// `ffn_down_shexp.weight`.
    FfnDownShexp,
    /// Latent attention's `attn_q_a.weight` (the queries' down-projection).
    AttnQA,
    /// `attn_q_b.weight` (the queries' up-projection).
    AttnQB,
    /// `attn_kv_a_mqa.weight`: the latent and the shared rotary key.
    AttnKvAMqa,
    /// `attn_k_b.weight`: the latent's key up-projection, per head.
    AttnKB,
    /// `attn_v_b.weight`: the latent's value up-projection, per head.
    AttnVB,
}

impl Role {
    /// Whether the tensor holds every routed expert (`ne[2]` = experts),
    /// what `MXFP4_MOE` stores in MXFP4.
    pub fn is_expert_bank(self) -> bool {
        matches!(
            self,
            Role::FfnGateExps | Role::FfnUpExps | Role::FfnDownExps
        )
    }
}

/// Where a matrix sits and what decides its type.
#[derive(Clone, Copy, Debug)]
pub struct Site {
    /// The matrix.
    pub role: Role,
    /// Its layer (0 for the embedding and output).
    pub layer: u64,
    /// The model's layer count.
    pub layers: u64,
    /// Query heads per key/value head (`n_gqa`).
    pub gqa: u64,
    /// Whether the embedding doubles as the LM head (no `output.weight`).
    pub tied: bool,
    /// Whether `llama.cpp` classifies the model as a 70B (`LLM_TYPE_70B`,
    /// 80 layers for Llama): attention V gets Q5_K instead of Q3_K/Q4_K.
    pub is_70b: bool,
    /// Its row length (`ne[0]`, the input features).
    pub cols: u64,
    /// Routed experts per layer (`n_expert`; 0 for a dense model).
    pub experts: u64,
}

/// `use_more_bits`: the first and last eighth of the layers and every third
/// one between them (half the layers in all).
pub fn use_more_bits(layer: u64, layers: u64) -> bool {
    let eighth = layers / 8;
    layer < eighth || layer >= 7 * layers / 8 || (layer - eighth) % 3 == 2
}

/// The type `llama-quantize` gives the matrix at `site` under `mix`.
/// The categories are `tensor_get_category`'s: a name containing `ffn_down`
/// is FFN down (the experts' and shared experts' banks too), and latent
/// attention's `attn_q_a`, `attn_q_b`, `attn_kv_a_mqa`, `attn_k_b` and
/// `attn_v_b` match none of the attention names, so they keep the base type.
pub fn tensor_type(mix: GgufMix, site: Site) -> GgmlType {
    let base = mix.default_type();
    if !mix.quantizes() {
        return base;
    }
    let chosen = match (mix, site.role) {
        (_, Role::Output) => output_type(mix, base, site.cols),
        (_, Role::TokenEmbd) if site.tied => output_type(mix, base, site.cols),
        // `MXFP4_MOE`: "MoE tensors -> MXFP4, other tensors -> Q8_0".
        (GgufMix::Mxfp4Moe, role) if role.is_expert_bank() => GgmlType::Mxfp4,
        (GgufMix::Mxfp4Moe, _) => GgmlType::Q8_0,
        (_, Role::AttnV) => attn_v_type(mix, base, site),
        // "for the 8-expert model, bumping this to Q8_0 trades just ~128MB".
        (_, Role::AttnK) if site.experts == 8 => GgmlType::Q8_0,
        (_, Role::FfnDown | Role::FfnDownExps | Role::FfnDownShexp) => {
            ffn_down_type(mix, base, site.layer, site.layers)
        }
        (_, Role::AttnOutput) => attn_output_type(mix, base, site.experts),
        (
            _,
            Role::TokenEmbd
            | Role::AttnQ
            | Role::AttnK
            | Role::FfnGate
            | Role::FfnUp
            | Role::FfnGateExps
            | Role::FfnUpExps
            | Role::FfnGateShexp
            | Role::FfnUpShexp
            | Role::AttnQA
            | Role::AttnQB
            | Role::AttnKvAMqa
            | Role::AttnKB
            | Role::AttnVB,
        ) => base,
    };
    chosen.fallback(site.cols)
}

/// Attention V (`category_is_attn_v`): by the mix and the layer, Q5_K for
/// a 70B Llama's Q3_K/Q4_K, and Q8_0 in an 8-expert model whatever the mix.
fn attn_v_type(mix: GgufMix, base: GgmlType, site: Site) -> GgmlType {
    let Site {
        layer, layers, gqa, ..
    } = site;
    let t = match mix {
        GgufMix::Q2K if gqa >= 4 => GgmlType::Q4K,
        GgufMix::Q2K => GgmlType::Q3K,
        GgufMix::Q3KM if layer < 2 => GgmlType::Q5K,
        GgufMix::Q3KM => GgmlType::Q4K,
        GgufMix::Q3KL => GgmlType::Q5K,
        GgufMix::Iq4Nl | GgufMix::Iq4Xs if gqa >= 4 => GgmlType::Q5K,
        GgufMix::Q4KM | GgufMix::Q5KM if use_more_bits(layer, layers) => GgmlType::Q6K,
        GgufMix::Q4KS if layer < 4 => GgmlType::Q5K,
        _ => base,
    };
    if site.experts == 8 {
        GgmlType::Q8_0
    } else if site.is_70b && matches!(t, GgmlType::Q3K | GgmlType::Q4K) {
        GgmlType::Q5K
    } else {
        t
    }
}

/// FFN down (dense, routed experts' and shared experts' alike) in layer
/// `layer` of `layers`.
fn ffn_down_type(mix: GgufMix, base: GgmlType, layer: u64, layers: u64) -> GgmlType {
    match mix {
        GgufMix::Q2K => GgmlType::Q3K,
        GgufMix::Q3KM if layer < layers / 16 => GgmlType::Q5K,
        GgufMix::Q3KM => GgmlType::Q4K,
        GgufMix::Q3KL => GgmlType::Q5K,
        GgufMix::Q4KM | GgufMix::Q5KM if use_more_bits(layer, layers) => GgmlType::Q6K,
        GgufMix::Iq4Nl | GgufMix::Iq4Xs | GgufMix::Q4KS if layer < layers / 8 => GgmlType::Q5K,
        _ => base,
    }
}

/// Attention output: in an 8-expert model Q5_K for the mixes up to Q4_K_M
/// (Q3_K_L, Q5 and Q6 keep their base), otherwise raised by the small mixes.
fn attn_output_type(mix: GgufMix, base: GgmlType, experts: u64) -> GgmlType {
    if experts == 8 {
        return match mix {
            GgufMix::Q2K
            | GgufMix::Q3KS
            | GgufMix::Q3KM
            | GgufMix::Iq4Nl
            | GgufMix::Q4KS
            | GgufMix::Q4KM
            | GgufMix::Iq4Xs => GgmlType::Q5K,
            _ => base,
        };
    }
    match mix {
        GgufMix::Q2K => GgmlType::Q3K,
        GgufMix::Q3KM => GgmlType::Q4K,
        GgufMix::Q3KL => GgmlType::Q5K,
        _ => base,
    }
}

/// The output matrix (and a tied embedding): Q8_0 under `MXFP4_MOE`, when
/// the base type's blocks do not divide its rows or the base is Q8_0, else Q6_K.
fn output_type(mix: GgufMix, base: GgmlType, cols: u64) -> GgmlType {
    if mix == GgufMix::Mxfp4Moe || !cols.is_multiple_of(base.block()) || base == GgmlType::Q8_0 {
        GgmlType::Q8_0
    } else {
        GgmlType::Q6K
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn use_more_bits_picks_half_of_llama_3_8b_s_32_layers() {
        let picked: Vec<u64> = (0..32).filter(|&i| use_more_bits(i, 32)).collect();
        assert_eq!(
            picked,
            [0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31]
        );
    }

    #[test]
    fn every_mix_reads_back_from_its_id_in_any_case() {
        for m in GgufMix::ALL {
            assert_eq!(m.id().parse::<GgufMix>().ok(), Some(*m));
            assert_eq!(m.id().to_uppercase().parse::<GgufMix>().ok(), Some(*m));
        }
        assert!("q4_k_x".parse::<GgufMix>().is_err());
    }
}
