//! Sentence embeddings with all-MiniLM-L6-v2, run in-process with candle: BERT over word
//! pieces, mean pooling over the real (unpadded) tokens, L2 normalisation. Similarity of two
//! normalised vectors is their dot product.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use tokenizers::{Tokenizer, TruncationParams};

use crate::bert::{Bert, Config};

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
/// The version of the way texts become vectors, beyond the model's files: the encoder's
/// arithmetic (`bert.rs`), pooling and normalisation, the tokenizer settings (truncation at
/// [`MAX_TOKENS`], no padding). Part of the model's fingerprint ([`fingerprint`]), so cached
/// vectors are not reused across a change: bump it with any change that moves a vector.
pub const ENCODER_VERSION: u32 = 1;
/// The largest `config.json` read.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

pub use crate::bert::BertError;
pub use crate::fingerprint::{DIGEST_MEMO, ModelFingerprint, fingerprint};

/// Why the model could not be loaded or run.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// A file is missing or unreadable.
    #[error("{}: {message}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// `config.json` does not parse.
    #[error("{}: {source}", path.display())]
    Config {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: serde_json::Error,
    },
    /// The tokenizer could not be loaded or failed.
    #[error("tokenizer: {message}")]
    Tokenizer {
        /// What failed.
        message: String,
    },
    /// The encoder could not be loaded or failed.
    #[error("embedding model: {0}")]
    Encoder(#[from] BertError),
    /// The model's files changed between reading its fingerprint and loading it.
    #[error("the model in {} changed while it was loaded; try again", dir.display())]
    ModelChanged {
        /// The model folder.
        dir: PathBuf,
    },
    /// The model could not be downloaded.
    #[error("downloading {url}: {message}")]
    Download {
        /// Where from.
        url: String,
        /// What failed.
        message: String,
    },
    /// A downloaded (or cached) file is not the one pinned: it has been removed, so the next
    /// download fetches it again.
    #[error("{}: sha256 {actual}, expected {expected}; the file was removed", path.display())]
    Checksum {
        /// The file.
        path: PathBuf,
        /// The pinned sha256 digest (hex).
        expected: String,
        /// The file's sha256 digest (hex).
        actual: String,
    },
}

fn tokenizer_error(error: impl std::fmt::Display) -> EmbedError {
    EmbedError::Tokenizer {
        message: error.to_string(),
    }
}

/// Reads a file of at most `limit` bytes.
pub(crate) fn read_capped(path: &Path, limit: u64) -> Result<Vec<u8>, EmbedError> {
    let io = |message: String| EmbedError::Io {
        path: path.to_path_buf(),
        message,
    };
    let file = crate::regular::open_read(path).map_err(|error| io(error.to_string()))?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| io(error.to_string()))?;
    if bytes.len() as u64 > limit {
        return Err(io(format!("larger than {limit} bytes")));
    }
    Ok(bytes)
}

/// The model's `config.json` in `dir`, parsed and checked.
pub(crate) fn read_config(dir: &Path) -> Result<Config, EmbedError> {
    let path = dir.join("config.json");
    let config: Config = serde_json::from_slice(&read_capped(&path, MAX_CONFIG_BYTES)?)
        .map_err(|source| EmbedError::Config { path, source })?;
    config.validate()?;
    Ok(config)
}

/// all-MiniLM-L6-v2 (or a BERT model like it), loaded from a folder holding [`MODEL_FILES`].
pub struct Embedder {
    model: Bert,
    tokenizer: Tokenizer,
}

impl Embedder {
    /// Loads the model from `dir`.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let config = read_config(dir)?;
        let tokenizer_path = dir.join("tokenizer.json");
        let tokenizer_bytes = std::fs::read(&tokenizer_path).map_err(|error| EmbedError::Io {
            path: tokenizer_path,
            message: error.to_string(),
        })?;
        let mut tokenizer = Tokenizer::from_bytes(tokenizer_bytes).map_err(tokenizer_error)?;
        // The shipped tokenizer pads to a fixed 128; texts are packed without padding instead.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(tokenizer_error)?;
        let model = Bert::load(config, &dir.join("model.safetensors"))?;
        Ok(Self { model, tokenizer })
    }

    /// Keeps the encoder's layers in memory while `keep` (before embedding many texts: each
    /// batch would read them again), or goes back to reading them for each batch (a session
    /// embedding a query now and then: about 42 MB not held).
    pub fn keep_layers(&mut self, keep: bool) -> Result<(), EmbedError> {
        Ok(self.model.keep_layers(keep)?)
    }

    /// The width of the vectors, from the model's config (`hidden_size`).
    pub fn dimensions(&self) -> usize {
        self.model.dimensions()
    }

    /// Embeds texts; each vector is L2-normalised. Texts are tokenized, sorted by length and
    /// grouped into batches of about [`BATCH_TOKENS`] word pieces.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(tokenizer_error)?;
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
                let vectors = self.model.embed(&inputs)?;
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
            .map_err(tokenizer_error)?;
        Ok(encodings.iter().map(tokenizers::Encoding::len).collect())
    }
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
