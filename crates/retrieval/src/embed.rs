//! Sentence embeddings with all-MiniLM-L6-v2, run in-process with candle: BERT over word
//! pieces, mean pooling over the real (unpadded) tokens, L2 normalisation. Similarity of two
//! normalised vectors is their dot product.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config, DTYPE};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// The model's output size.
pub const DIMENSIONS: usize = 384;
/// Word pieces per text; longer texts are cut (skill descriptions rarely need more).
pub const MAX_TOKENS: usize = 128;
/// Texts embedded per forward pass.
pub const BATCH_SIZE: usize = 32;
/// The files a model folder must hold.
pub const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// Why the model could not be loaded or run.
#[derive(Debug)]
pub enum EmbedError {
    /// A file is missing or unreadable.
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// The model or tokenizer failed.
    Model(String),
}

impl std::fmt::Display for EmbedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Io { path, message } => write!(f, "{}: {message}", path.display()),
            Self::Model(message) => write!(f, "embedding model: {message}"),
        }
    }
}

impl std::error::Error for EmbedError {}

fn model_error(error: impl std::fmt::Display) -> EmbedError {
    EmbedError::Model(error.to_string())
}

/// all-MiniLM-L6-v2, loaded from a folder holding [`MODEL_FILES`].
pub struct Embedder {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
    /// A name for the model and its files, for cache keys.
    pub model_id: String,
}

impl Embedder {
    /// Loads the model from `dir`.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read(&path).map_err(|error| EmbedError::Io {
                path,
                message: error.to_string(),
            })
        };
        let config: Config = serde_json::from_slice(&read("config.json")?).map_err(model_error)?;
        let mut tokenizer = Tokenizer::from_bytes(read("tokenizer.json")?).map_err(model_error)?;
        // The shipped tokenizer pads to a fixed 128; pad each batch to its longest text instead.
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..PaddingParams::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(model_error)?;
        let weights = read("model.safetensors")?;
        let device = Device::Cpu;
        let builder =
            VarBuilder::from_buffered_safetensors(weights, DTYPE, &device).map_err(model_error)?;
        let model = BertModel::load(builder, &config).map_err(model_error)?;
        Ok(Self {
            model,
            tokenizer,
            device,
            model_id: model_id(dir)?,
        })
    }

    /// Embeds texts; each vector is L2-normalised. Texts are batched by length, so similar
    /// lengths share padding.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&index| texts[index].len());
        let mut out = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(BATCH_SIZE) {
            let batch: Vec<&str> = chunk.iter().map(|&index| texts[index]).collect();
            let vectors = self.embed_batch(&batch)?;
            for (&index, vector) in chunk.iter().zip(vectors) {
                out[index] = vector;
            }
        }
        Ok(out)
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(model_error)?;
        let ids: Vec<Tensor> = encodings
            .iter()
            .map(|e| Tensor::new(e.get_ids(), &self.device))
            .collect::<Result<_, _>>()
            .map_err(model_error)?;
        let masks: Vec<Tensor> = encodings
            .iter()
            .map(|e| Tensor::new(e.get_attention_mask(), &self.device))
            .collect::<Result<_, _>>()
            .map_err(model_error)?;
        let ids = Tensor::stack(&ids, 0).map_err(model_error)?;
        let mask = Tensor::stack(&masks, 0).map_err(model_error)?;
        let token_types = ids.zeros_like().map_err(model_error)?;
        let hidden = self
            .model
            .forward(&ids, &token_types, Some(&mask))
            .map_err(model_error)?;
        // Mean over real tokens: sum(hidden * mask) / sum(mask).
        let mask = mask
            .to_dtype(DType::F32)
            .map_err(model_error)?
            .unsqueeze(2)
            .map_err(model_error)?;
        let summed = hidden
            .broadcast_mul(&mask)
            .and_then(|t| t.sum(1))
            .map_err(model_error)?;
        let counts = mask.sum(1).map_err(model_error)?;
        let mean = summed.broadcast_div(&counts).map_err(model_error)?;
        let norms = mean
            .sqr()
            .and_then(|t| t.sum_keepdim(1))
            .and_then(|t| t.sqrt())
            .map_err(model_error)?;
        let normalised = mean.broadcast_div(&norms).map_err(model_error)?;
        normalised.to_vec2::<f32>().map_err(model_error)
    }
}

/// The id of the model in `dir` (name and weights size), which keys the embedding cache;
/// found without loading the model.
pub fn model_id(dir: &Path) -> Result<String, EmbedError> {
    let path = dir.join("model.safetensors");
    let size = std::fs::metadata(&path)
        .map_err(|error| EmbedError::Io {
            path: path.clone(),
            message: error.to_string(),
        })?
        .len();
    Ok(format!("all-MiniLM-L6-v2/{size}"))
}

/// Where the model is: `explicit` (`--embed-model`), then `$SKILLET_EMBED_MODEL`, then the
/// Hugging Face cache (`$HF_HOME/hub` or `~/.cache/huggingface/hub`); `None` when no folder
/// holding the files is found.
pub fn find_model(
    explicit: Option<&Path>,
    env_dir: Option<&Path>,
    hf_home: Option<&Path>,
    home: Option<&Path>,
) -> Option<PathBuf> {
    let holds_model = |dir: &Path| MODEL_FILES.iter().all(|file| dir.join(file).is_file());
    if let Some(dir) = explicit.or(env_dir) {
        return holds_model(dir).then(|| dir.to_path_buf());
    }
    let hub = hf_home
        .map(|dir| dir.join("hub"))
        .or_else(|| home.map(|dir| dir.join(".cache/huggingface/hub")))?;
    let snapshots = hub.join("models--sentence-transformers--all-MiniLM-L6-v2/snapshots");
    let mut found: Vec<PathBuf> = std::fs::read_dir(snapshots)
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|dir| holds_model(dir))
        .collect();
    found.sort();
    found.pop()
}

/// The dot product of two vectors (their cosine similarity when both are normalised).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
