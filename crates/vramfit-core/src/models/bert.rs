//! BERT encoders as `transformers` builds them (`BertModel`,
//! `BertForSequenceClassification`, `BertForMaskedLM`): the `bert`
//! `model_type`, the RoBERTa line built on it (`roberta`, `xlm-roberta`,
//! `camembert`, `data2vec-text`: BERT's layers with RoBERTa's embeddings
//! and classification head), DistilBERT (`distilbert`: six of BERT's layers
//! without token types or the dropout after attention, its own heads; see
//! [`super::BlockOptions::distilbert`]) and the presets. Lowered by the
//! shared transformer ([`super::transformer`]).

use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::{Arch, Head, ModelSpec, TransformerSpec};
use crate::error::Error;
use serde_json::Value;

/// The BERT family.
pub const FAMILY: Family = Family {
    imports: &[
        Import {
            model_type: "bert",
            read,
        },
        // `transformers`' RoBERTa classes and those copied from them: the
        // same layers, embeddings, heads and config defaults.
        Import {
            model_type: "roberta",
            read: read_roberta,
        },
        Import {
            model_type: "xlm-roberta",
            read: read_roberta,
        },
        Import {
            model_type: "camembert",
            read: read_roberta,
        },
        Import {
            model_type: "data2vec-text",
            read: read_roberta,
        },
        Import {
            model_type: "distilbert",
            read: read_distilbert,
        },
    ],
    presets,
};

fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    heads_divide_hidden(f, "hidden_size", "num_attention_heads")?;
    bert(f).map(ModelSpec::Transformer)
}

fn read_roberta(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    heads_divide_hidden(f, "hidden_size", "num_attention_heads")?;
    let mut t = bert(f)?;
    t.block.roberta = true;
    Ok(ModelSpec::Transformer(t))
}

/// Reads a `distilbert` config with `DistilBertConfig`'s defaults
/// (`distilbert-base-uncased`'s shape; `dim`, `n_heads`, `n_layers` are
/// also read as `hidden_size`, `num_attention_heads`, `num_hidden_layers`).
/// `sinusoidal_pos_embds` changes only the position table's values: it
/// stays a parameter the optimizer updates.
fn read_distilbert(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let hidden = or("dim", 768)?;
    let heads = or("n_heads", 12)?;
    // `DistilBertSelfAttention` raises a ValueError otherwise.
    if heads == 0 || !hidden.is_multiple_of(heads) {
        return Err(Error::InvalidModel(format!(
            "n_heads ({heads}) must divide dim ({hidden}) evenly"
        )));
    }
    let mut t = distilbert_encoder(hidden, or("n_layers", 6)?, heads, bert_head(f)?);
    t.vocab = or("vocab_size", 30_522)?;
    t.intermediate = or("hidden_dim", 4 * 768)?;
    t.max_positions = or("max_position_embeddings", 512)?;
    t.hidden_dropout = f.f64_or("dropout", 0.1);
    t.attention_dropout = f.f64_or("attention_dropout", 0.1);
    t.tie_embeddings = f.bool_or("tie_word_embeddings", true);
    t.block.undropped_head = f.f64_or("seq_classif_dropout", 0.2) <= 0.0;
    Ok(ModelSpec::Transformer(t))
}

/// BERT's and GPT-2's attention split the hidden size evenly over the heads;
/// `transformers` raises a `ValueError` otherwise (`BertSelfAttention`,
/// `GPT2Attention`).
pub(crate) fn heads_divide_hidden(
    f: &Fields<'_>,
    hidden_key: &'static str,
    heads_key: &'static str,
) -> Result<(), Error> {
    let (hidden, heads) = (f.u64(hidden_key)?, f.u64(heads_key)?);
    if heads > 0 && !hidden.is_multiple_of(heads) {
        return Err(Error::InvalidModel(format!(
            "{hidden_key} ({hidden}) must be a multiple of {heads_key} ({heads})"
        )));
    }
    Ok(())
}

/// The head an encoder's `architectures` name: a classification head
/// (`…ForSequenceClassification`, `id2label`'s labels, else `num_labels`,
/// else 2), the masked-LM head, else the bare encoder.
fn bert_head(f: &Fields<'_>) -> Result<Head, Error> {
    let classification = f
        .architectures()
        .iter()
        .any(|a| a.ends_with("ForSequenceClassification"));
    // `BertForMaskedLM` is what the published pre-trained checkpoints
    // (`bert-base-uncased` and the like) name: the masked-LM head, no pooler.
    let masked_lm = f.architectures().iter().any(|a| a.ends_with("ForMaskedLM"));
    Ok(if classification {
        let labels = match f.map.get("id2label").and_then(Value::as_object) {
            Some(m) if !m.is_empty() => m.len() as u64,
            _ => f.opt_u64("num_labels")?.unwrap_or(2),
        };
        Head::Classification { labels }
    } else if masked_lm {
        Head::MaskedLm
    } else {
        Head::Bare
    })
}

fn bert(f: &Fields<'_>) -> Result<TransformerSpec, Error> {
    let hidden = f.u64("hidden_size")?;
    let heads = f.u64("num_attention_heads")?;
    let head = bert_head(f)?;
    Ok(TransformerSpec {
        arch: Arch::Bert,
        vocab: f.u64("vocab_size")?,
        hidden,
        layers: f.u64("num_hidden_layers")?,
        heads,
        kv_heads: heads,
        head_dim: hidden / heads.max(1),
        intermediate: f.u64("intermediate_size")?,
        max_positions: f.opt_u64("max_position_embeddings")?.unwrap_or(512),
        context_limit: 0,
        moe: None,
        mla: None,
        linear: None,
        gemma4: None,
        encoder: None,
        single_mixer: None,
        type_vocab: f.opt_u64("type_vocab_size")?.unwrap_or(2),
        tie_embeddings: false,
        qkv_bias: true,
        mlp_bias: true,
        hidden_dropout: f.f64_or("hidden_dropout_prob", 0.1),
        attention_dropout: f.f64_or("attention_probs_dropout_prob", 0.1),
        head,
        fused_gelu: false,
        block: Default::default(),
    })
}

/// BERT-base and -large, with a classification head, the masked-LM head or
/// bare; DistilBERT-base with a classification or the masked-LM head;
/// RoBERTa-base and -large and XLM-RoBERTa-base and -large with a
/// classification head (shapes from `FacebookAI/roberta-base`, `-large`,
/// `xlm-roberta-base` and `-large`: 514 positions, one token type).
fn presets() -> Vec<ModelPreset> {
    let p = ModelPreset::new;
    let roberta = |vocab, hidden, layers, heads| {
        let mut t = encoder(hidden, layers, heads, Head::Classification { labels: 2 });
        t.vocab = vocab;
        t.max_positions = 514;
        t.type_vocab = 1;
        t.block.roberta = true;
        ModelSpec::Transformer(t)
    };
    vec![
        p(
            "bert-base",
            "BERT-base (classification, 2 labels)",
            Group::Bert,
            spec(768, 12, 12, Head::Classification { labels: 2 }),
        ),
        p(
            "bert-large",
            "BERT-large (classification, 2 labels)",
            Group::Bert,
            spec(1024, 24, 16, Head::Classification { labels: 2 }),
        ),
        p(
            "bert-base-mlm",
            "BERT-base (masked-LM pre-training)",
            Group::Bert,
            spec(768, 12, 12, Head::MaskedLm),
        ),
        p(
            "bert-large-mlm",
            "BERT-large (masked-LM pre-training)",
            Group::Bert,
            spec(1024, 24, 16, Head::MaskedLm),
        ),
        p(
            "bert-base-encoder",
            "BERT-base (bare encoder)",
            Group::Bert,
            spec(768, 12, 12, Head::Bare),
        ),
        p(
            "bert-large-encoder",
            "BERT-large (bare encoder)",
            Group::Bert,
            spec(1024, 24, 16, Head::Bare),
        ),
        p(
            "distilbert-base",
            "DistilBERT-base (classification, 2 labels)",
            Group::Bert,
            distilbert(Head::Classification { labels: 2 }),
        ),
        p(
            "distilbert-base-mlm",
            "DistilBERT-base (masked-LM)",
            Group::Bert,
            distilbert(Head::MaskedLm),
        ),
        p(
            "roberta-base",
            "RoBERTa-base (classification, 2 labels)",
            Group::Bert,
            roberta(50265, 768, 12, 12),
        ),
        p(
            "roberta-large",
            "RoBERTa-large (classification, 2 labels)",
            Group::Bert,
            roberta(50265, 1024, 24, 16),
        ),
        p(
            "xlm-roberta-base",
            "XLM-RoBERTa-base (classification, 2 labels)",
            Group::Bert,
            roberta(250002, 768, 12, 12),
        ),
        p(
            "xlm-roberta-large",
            "XLM-RoBERTa-large (classification, 2 labels)",
            Group::Bert,
            roberta(250002, 1024, 24, 16),
        ),
    ]
}

/// DistilBERT's layout at `hidden` wide, `layers` deep, with `heads` heads:
/// BERT's shape without token types, the masked-LM head tied.
fn distilbert_encoder(hidden: u64, layers: u64, heads: u64, head: Head) -> TransformerSpec {
    let mut t = encoder(hidden, layers, heads, head);
    t.type_vocab = 0;
    t.tie_embeddings = true;
    t.block.distilbert = true;
    t
}

/// `distilbert-base-uncased`'s shape (`DistilBertConfig`'s defaults:
/// BERT-base's width, six layers) with `head`.
fn distilbert(head: Head) -> ModelSpec {
    ModelSpec::Transformer(distilbert_encoder(768, 6, 12, head))
}

fn spec(hidden: u64, layers: u64, heads: u64, head: Head) -> ModelSpec {
    ModelSpec::Transformer(encoder(hidden, layers, heads, head))
}

/// BERT's shape at `hidden` wide, `layers` deep, with `heads` heads.
fn encoder(hidden: u64, layers: u64, heads: u64, head: Head) -> TransformerSpec {
    TransformerSpec {
        arch: Arch::Bert,
        vocab: 30522,
        hidden,
        layers,
        heads,
        kv_heads: heads,
        head_dim: hidden / heads,
        intermediate: 4 * hidden,
        max_positions: 512,
        context_limit: 0,
        moe: None,
        mla: None,
        linear: None,
        gemma4: None,
        encoder: None,
        single_mixer: None,
        type_vocab: 2,
        tie_embeddings: false,
        qkv_bias: true,
        mlp_bias: true,
        hidden_dropout: 0.1,
        attention_dropout: 0.1,
        head,
        fused_gelu: false,
        block: Default::default(),
    }
}
