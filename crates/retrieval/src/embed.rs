//! Sentence embeddings with all-MiniLM-L6-v2, run in-process with candle: BERT over word
//! pieces, mean pooling over the real (unpadded) tokens, L2 normalisation. Similarity of two
//! normalised vectors is their dot product.

use std::path::{Path, PathBuf};

use tokenizers::{Tokenizer, TruncationParams};

use crate::bert::{Bert, Config};

/// The model's output size.
pub const DIMENSIONS: usize = 384;
/// Word pieces per text; longer texts are cut (skill descriptions rarely need more).
pub const MAX_TOKENS: usize = 128;
/// Word pieces per forward pass: texts sorted by length are grouped up to this many tokens.
pub const BATCH_TOKENS: usize = 1_024;
/// The files a model folder must hold.
pub const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];
/// The model's repository on the Hugging Face hub.
pub const MODEL_REPO: &str = "sentence-transformers/all-MiniLM-L6-v2";
/// The commit of [`MODEL_REPO`] skillet downloads and looks for in the Hugging Face cache.
pub const MODEL_REVISION: &str = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf";

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
    /// The model could not be downloaded.
    Download {
        /// Where from.
        url: String,
        /// What failed.
        message: String,
    },
    /// A downloaded (or cached) file is not the one pinned: it has been removed, so the next
    /// download fetches it again.
    Checksum {
        /// The file.
        path: PathBuf,
        /// The pinned sha256 digest (hex).
        expected: String,
        /// The file's sha256 digest (hex).
        actual: String,
    },
}

impl std::fmt::Display for EmbedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Io { path, message } => write!(f, "{}: {message}", path.display()),
            Self::Model(message) => write!(f, "embedding model: {message}"),
            Self::Download { url, message } => write!(f, "downloading {url}: {message}"),
            Self::Checksum {
                path,
                expected,
                actual,
            } => write!(
                f,
                "{}: sha256 {actual}, expected {expected}; the file was removed",
                path.display()
            ),
        }
    }
}

impl std::error::Error for EmbedError {}

fn model_error(error: impl std::fmt::Display) -> EmbedError {
    EmbedError::Model(error.to_string())
}

/// all-MiniLM-L6-v2, loaded from a folder holding [`MODEL_FILES`].
pub struct Embedder {
    model: Bert,
    tokenizer: Tokenizer,
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
        // The shipped tokenizer pads to a fixed 128; texts are packed without padding instead.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(model_error)?;
        let model =
            Bert::load(config, &dir.join("model.safetensors")).map_err(EmbedError::Model)?;
        Ok(Self {
            model,
            tokenizer,
            model_id: model_id(dir)?,
        })
    }

    /// Embeds texts; each vector is L2-normalised. Texts are tokenized, sorted by length and
    /// grouped into batches of about [`BATCH_TOKENS`] word pieces.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(model_error)?;
        let ids: Vec<&[u32]> = encodings
            .iter()
            .map(tokenizers::Encoding::get_ids)
            .collect();
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&index| ids[index].len());
        let mut out = vec![Vec::new(); texts.len()];
        let mut batch: Vec<usize> = Vec::new();
        let mut tokens = 0;
        for (position, &index) in order.iter().enumerate() {
            batch.push(index);
            tokens += ids[index].len();
            let last = position + 1 == order.len();
            if tokens >= BATCH_TOKENS || last {
                let inputs: Vec<&[u32]> = batch.iter().map(|&i| ids[i]).collect();
                let vectors = self.model.embed(&inputs).map_err(EmbedError::Model)?;
                for (&i, vector) in batch.iter().zip(vectors) {
                    out[i] = vector;
                }
                batch.clear();
                tokens = 0;
            }
        }
        Ok(out)
    }

    /// The number of word pieces each text is embedded with (after truncation).
    pub fn token_lengths(&self, texts: &[&str]) -> Result<Vec<usize>, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(model_error)?;
        Ok(encodings.iter().map(tokenizers::Encoding::len).collect())
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
/// snapshot of [`MODEL_REVISION`] in the Hugging Face cache (`$HF_HOME/hub` or
/// `~/.cache/huggingface/hub`, see [`pinned_snapshot`]); `None` when that folder does not hold
/// the files. Snapshots of other revisions are not used: the pinned one is downloaded instead.
/// Nothing is hashed here (that would cost every run); the download checks the digests.
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
    let snapshot = pinned_snapshot(&hub);
    holds_model(&snapshot).then_some(snapshot)
}

/// The folder the Hugging Face cache `hub` keeps [`MODEL_REPO`] at [`MODEL_REVISION`] in:
/// `hub/models--sentence-transformers--all-MiniLM-L6-v2/snapshots/REVISION`.
pub fn pinned_snapshot(hub: &Path) -> PathBuf {
    snapshot_dir(hub, MODEL_REPO, MODEL_REVISION)
}

/// The folder the Hugging Face cache `hub` keeps model `repo` at `revision` in.
pub fn snapshot_dir(hub: &Path, repo: &str, revision: &str) -> PathBuf {
    hub.join(format!("models--{}", repo.replace('/', "--")))
        .join("snapshots")
        .join(revision)
}

/// The dot product of two vectors (their cosine similarity when both are normalised).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
