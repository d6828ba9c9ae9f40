//! The BERT encoder of all-MiniLM-L6-v2, written for throughput on a CPU.
//!
//! A batch is the concatenation of its texts' real tokens, with no padding: the dense layers
//! (over 95% of the arithmetic) run as single matrix products over every token of the batch
//! through candle's gemm (its AVX-512 kernels turned on), with the query, key and value
//! projections fused into one product. Attention, the only part that mixes tokens, runs as two
//! batched products over every head of every text, padded only to the longest text of the batch
//! (short, as batches are sorted by length), with the softmax masked to each text's length. Bias,
//! residual and layer norm are one pass; GELU uses a branch-free erf. Those element-wise loops
//! are plain Rust the compiler vectorises, compiled for the CPU's widest vectors through `pulp`,
//! and split over the CPU's threads with rayon.
//!
//! Replacing candle-transformers' `BertModel` made cold indexing of the corpus about twice as fast
//! (see `examples/index_rate.rs`, `scripts/bench-matching.sh`) and dropped two heavy dependencies
//! from the build.
//! `tests/semantic.rs` checks every vector against that implementation's (cosine above 0.9999).

#![allow(
    clippy::inline_always,
    reason = "the vectorised loops must inline into pulp's target-feature functions to be compiled for them"
)]

use std::fs::File;
use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use candle_core::{Device, Tensor};
use rayon::prelude::*;
use safetensors::Dtype;
use safetensors::tensor::Metadata;

use crate::cache::MAX_DIMENSIONS;

/// The widest feed-forward layer accepted, as a multiple of the hidden width (BERT uses 4).
pub const MAX_INTERMEDIATE_FACTOR: usize = 16;
/// The most layers accepted (MiniLM has 6, BERT-large 24).
pub const MAX_LAYERS: usize = 64;
/// The most positions accepted (MiniLM has 512).
pub const MAX_POSITIONS: usize = 8_192;

/// The model's shape, from `config.json`.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Config {
    hidden_size: usize,
    intermediate_size: usize,
    num_attention_heads: usize,
    num_hidden_layers: usize,
    max_position_embeddings: usize,
    #[serde(default = "default_eps")]
    layer_norm_eps: f64,
    #[serde(default = "default_act")]
    hidden_act: String,
}

fn default_eps() -> f64 {
    1e-12
}

fn default_act() -> String {
    "gelu".to_string()
}

impl Config {
    /// The width of the hidden states, and so of the sentence vectors.
    pub fn hidden_size(&self) -> usize {
        self.hidden_size
    }

    /// Checks what the encoder relies on: gelu, a width of 1 to [`MAX_DIMENSIONS`] that the
    /// heads divide.
    pub fn validate(&self) -> Result<(), BertError> {
        if self.hidden_act != "gelu" {
            return Err(BertError::Activation(self.hidden_act.clone()));
        }
        if self.hidden_size == 0 || self.hidden_size > MAX_DIMENSIONS {
            return Err(BertError::HiddenSize(self.hidden_size));
        }
        for (field, value, max) in [
            (
                "intermediate_size",
                self.intermediate_size,
                MAX_INTERMEDIATE_FACTOR * self.hidden_size,
            ),
            ("num_hidden_layers", self.num_hidden_layers, MAX_LAYERS),
            (
                "max_position_embeddings",
                self.max_position_embeddings,
                MAX_POSITIONS,
            ),
        ] {
            if value == 0 || value > max {
                return Err(BertError::OutOfRange { field, value, max });
            }
        }
        if self.num_attention_heads == 0
            || !self.hidden_size.is_multiple_of(self.num_attention_heads)
        {
            return Err(BertError::Heads {
                hidden: self.hidden_size,
                heads: self.num_attention_heads,
            });
        }
        Ok(())
    }
}

/// A failure while loading or running the encoder.
#[derive(Debug, thiserror::Error)]
pub enum BertError {
    /// Reading the weights failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The weights file.
        path: PathBuf,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// The weights file's header announces more than the format allows.
    #[error("{}: not a safetensors file (header of {bytes} bytes)", path.display())]
    HeaderTooLarge {
        /// The weights file.
        path: PathBuf,
        /// The announced size.
        bytes: u64,
    },
    /// The weights file's header does not parse, or does not describe its tensors soundly.
    #[error("{}: not a safetensors header: {source}", path.display())]
    Header {
        /// The weights file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: serde_json::Error,
    },
    /// The weights file is shorter or longer than its header says.
    #[error("{}: {actual} bytes where its header describes {expected}", path.display())]
    Length {
        /// The weights file.
        path: PathBuf,
        /// What the header describes.
        expected: u64,
        /// The file's size.
        actual: u64,
    },
    /// A tensor the encoder needs is not in the weights.
    #[error("{} has no tensor `{name}`", path.display())]
    MissingTensor {
        /// The weights file.
        path: PathBuf,
        /// The tensor.
        name: String,
    },
    /// A tensor has another shape than the config implies.
    #[error("{}: tensor `{name}` has shape {found:?}, expected {expected:?}", path.display())]
    Shape {
        /// The weights file.
        path: PathBuf,
        /// The tensor.
        name: String,
        /// Its shape.
        found: Vec<usize>,
        /// The shape the config implies.
        expected: Vec<usize>,
    },
    /// A tensor is not stored as f32.
    #[error("{}: tensor `{name}` is {dtype}; only F32 weights are supported", path.display())]
    DType {
        /// The weights file.
        path: PathBuf,
        /// The tensor.
        name: String,
        /// Its type.
        dtype: String,
    },
    /// The config names another activation than gelu.
    #[error("hidden_act `{0}` is not supported (only gelu)")]
    Activation(String),
    /// The config's width is zero or too large.
    #[error("hidden_size {0} is not between 1 and {MAX_DIMENSIONS}")]
    HiddenSize(usize),
    /// The heads do not divide the width.
    #[error("hidden_size {hidden} is not a multiple of num_attention_heads {heads}")]
    Heads {
        /// hidden_size.
        hidden: usize,
        /// num_attention_heads.
        heads: usize,
    },
    /// A size in config.json the encoder does not take (0, or beyond any such model).
    #[error("config.json: {field} is {value}; expected 1 to {max}")]
    OutOfRange {
        /// The field.
        field: &'static str,
        /// Its value.
        value: usize,
        /// The largest accepted.
        max: usize,
    },
    /// The tokenizer gave an id the word table does not have.
    #[error("token id {0} is outside the vocabulary")]
    TokenOutOfVocabulary(u32),
    /// A text is empty or longer than the position embeddings allow.
    #[error("a text of {0} tokens cannot be embedded")]
    TextLength(usize),
    /// A thread panicked while reading the word table.
    #[error("the model file's lock is poisoned")]
    Poisoned,
    /// The tensor library failed.
    #[error("tensor arithmetic: {0}")]
    Tensor(#[from] candle_core::Error),
    /// An invariant of the encoder does not hold (a bug).
    #[error("internal error: {0}")]
    Internal(&'static str),
}

/// The word-embedding matrix, left in `model.safetensors` and read a row at a time.
struct WordTable {
    file: Mutex<File>,
    path: PathBuf,
    /// Where row 0 starts in the file.
    offset: u64,
    rows: usize,
}

impl WordTable {
    fn reader(&self) -> Result<WordReader<'_>, BertError> {
        let file = self.file.lock().map_err(|_| BertError::Poisoned)?;
        Ok(WordReader {
            table: self,
            file,
            bytes: Vec::new(),
        })
    }
}

/// The word table, locked for one batch.
struct WordReader<'a> {
    table: &'a WordTable,
    file: std::sync::MutexGuard<'a, File>,
    bytes: Vec<u8>,
}

impl WordReader<'_> {
    /// Row `id` into `out` (the hidden size long).
    fn read(&mut self, id: u32, out: &mut [f32]) -> Result<(), BertError> {
        let row = id as usize;
        if row >= self.table.rows {
            return Err(BertError::TokenOutOfVocabulary(id));
        }
        let row_bytes = out.len() * 4;
        self.bytes.resize(row_bytes, 0);
        self.file
            .seek(SeekFrom::Start(
                self.table.offset + (row * row_bytes) as u64,
            ))
            .and_then(|_| self.file.read_exact(&mut self.bytes))
            .map_err(|source| BertError::Io {
                path: self.table.path.clone(),
                source,
            })?;
        for (value, b) in out.iter_mut().zip(self.bytes.chunks_exact(4)) {
            *value = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        Ok(())
    }
}

/// A linear layer: the weight transposed to `[in, out]`, and the bias.
struct Dense {
    weight: Tensor,
    bias: Vec<f32>,
}

struct Norm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
}

struct Layer {
    qkv: Dense,
    attention_out: Dense,
    attention_norm: Norm,
    up: Dense,
    down: Dense,
    output_norm: Norm,
}

/// The encoder with its weights.
pub struct Bert {
    config: Config,
    /// Word embeddings stay in the file (47 MB, of which a request needs a few rows): each row
    /// is read when a token needs it.
    word_embeddings: WordTable,
    position_embeddings: Vec<f32>,
    token_type_embedding: Vec<f32>,
    embedding_norm: Norm,
    layers: Layers,
    eps: f32,
}

/// The encoder's layers (about 42 MB for all-MiniLM-L6-v2): read from the file as each batch
/// reaches them, so a session that embeds a query now and then does not hold them, or kept
/// while many texts are embedded ([`Bert::keep_layers`]).
struct Layers {
    weights: Mutex<Weights>,
    kept: Option<Vec<Layer>>,
}

/// The largest safetensors header accepted (the format's own limit).
const MAX_HEADER_BYTES: u64 = 100_000_000;

/// `model.safetensors`: its header, read at load and parsed and checked by the `safetensors`
/// crate (tensors contiguous, sizes matching shapes and types), and the open file each tensor
/// is read from. The crate's readers want the whole file in memory (or mapped, which needs
/// unsafe code); only the header is read here, and tensors are read where they lie.
struct Weights {
    file: File,
    path: PathBuf,
    metadata: Metadata,
    /// Where the data (the offsets' origin) begins.
    data_start: u64,
    prefix: &'static str,
}

impl Weights {
    fn open(path: &Path) -> Result<Self, BertError> {
        let io = |source: std::io::Error| BertError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = crate::regular::open_read(path).map_err(io)?;
        let size = file.metadata().map_err(io)?.len();
        let mut length = [0_u8; 8];
        file.read_exact(&mut length).map_err(io)?;
        let length = u64::from_le_bytes(length);
        if length > MAX_HEADER_BYTES {
            return Err(BertError::HeaderTooLarge {
                path: path.to_path_buf(),
                bytes: length,
            });
        }
        let mut header = Vec::new();
        (&mut file)
            .take(length)
            .read_to_end(&mut header)
            .map_err(io)?;
        let metadata: Metadata =
            serde_json::from_slice(&header).map_err(|source| BertError::Header {
                path: path.to_path_buf(),
                source,
            })?;
        let data_start = 8 + length;
        let expected = data_start + metadata.data_len() as u64;
        if expected != size {
            return Err(BertError::Length {
                path: path.to_path_buf(),
                expected,
                actual: size,
            });
        }
        let prefix = if metadata
            .offset_keys()
            .iter()
            .any(|name| name.starts_with("bert."))
        {
            "bert."
        } else {
            ""
        };
        Ok(Self {
            file,
            path: path.to_path_buf(),
            metadata,
            data_start,
            prefix,
        })
    }

    /// A tensor's place, checked: f32, and of the expected shape when one is given.
    fn info(&self, name: &str, shape: Option<&[usize]>) -> Result<(u64, &[usize]), BertError> {
        let full = format!("{}{name}", self.prefix);
        let Some(info) = self.metadata.info(&full) else {
            return Err(BertError::MissingTensor {
                path: self.path.clone(),
                name: full,
            });
        };
        if let Some(shape) = shape
            && info.shape != shape
        {
            return Err(BertError::Shape {
                path: self.path.clone(),
                name: full,
                found: info.shape.clone(),
                expected: shape.to_vec(),
            });
        }
        // The crate checked that the byte range matches the shape and type.
        if info.dtype != Dtype::F32 {
            return Err(BertError::DType {
                path: self.path.clone(),
                name: full,
                dtype: format!("{:?}", info.dtype),
            });
        }
        Ok((self.data_start + info.data_offsets.0 as u64, &info.shape))
    }

    /// The first dimension of a tensor.
    fn rows(&self, name: &str) -> Result<usize, BertError> {
        Ok(self.info(name, None)?.1.first().copied().unwrap_or(0))
    }

    /// A tensor's bytes (little-endian f32s), checked against the expected shape, into
    /// `bytes`.
    fn read_into(
        &mut self,
        name: &str,
        shape: &[usize],
        bytes: &mut Vec<u8>,
    ) -> Result<(), BertError> {
        let (offset, _) = self.info(name, Some(shape))?;
        bytes.resize(shape.iter().product::<usize>() * 4, 0);
        self.file
            .seek(SeekFrom::Start(offset))
            .and_then(|_| self.file.read_exact(bytes))
            .map_err(|source| BertError::Io {
                path: self.path.clone(),
                source,
            })
    }

    /// A tensor's values, checked against the expected shape.
    fn values(&mut self, name: &str, shape: &[usize]) -> Result<Vec<f32>, BertError> {
        let mut bytes = Vec::new();
        self.read_into(name, shape, &mut bytes)?;
        Ok(bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }

    /// A linear layer from one or more PyTorch `[out, in]` weights stacked on `out`, stored
    /// transposed to `[in, out]` (gemm is markedly slower on the transposed view).
    fn dense(&mut self, names: &[&str], out: usize, input: usize) -> Result<Dense, BertError> {
        // Every part's shape is checked against the file before anything is allocated: the
        // sizes come from config.json, and only the file's own tensors bound them.
        for name in names {
            self.info(&format!("{name}.weight"), Some(&[out, input]))?;
        }
        let total = out * names.len();
        let mut weight = vec![0.0_f32; input * total];
        let mut bias = Vec::with_capacity(total);
        let mut bytes = Vec::new();
        for (part, name) in names.iter().enumerate() {
            self.read_into(&format!("{name}.weight"), &[out, input], &mut bytes)?;
            transpose_into(&bytes, (out, input), &mut weight, (total, part * out));
            bias.extend(self.values(&format!("{name}.bias"), &[out])?);
        }
        let weight = Tensor::from_vec(weight, (input, total), &Device::Cpu)?;
        Ok(Dense { weight, bias })
    }

    /// The names and shapes of layer `index`'s dense weights and norms.
    fn layer_tensors(config: &Config, index: usize) -> Vec<(String, Vec<usize>)> {
        let (hidden, inner) = (config.hidden_size, config.intermediate_size);
        let at = |name: &str| format!("encoder.layer.{index}.{name}");
        let mut tensors = Vec::new();
        for (name, out, input) in [
            ("attention.self.query", hidden, hidden),
            ("attention.self.key", hidden, hidden),
            ("attention.self.value", hidden, hidden),
            ("attention.output.dense", hidden, hidden),
            ("intermediate.dense", inner, hidden),
            ("output.dense", hidden, inner),
        ] {
            tensors.push((at(&format!("{name}.weight")), vec![out, input]));
            tensors.push((at(&format!("{name}.bias")), vec![out]));
        }
        for name in ["attention.output.LayerNorm", "output.LayerNorm"] {
            tensors.push((at(&format!("{name}.weight")), vec![hidden]));
            tensors.push((at(&format!("{name}.bias")), vec![hidden]));
        }
        tensors
    }

    /// Checks that layer `index`'s tensors are in the file with the shapes the config says.
    fn check_layer(&self, config: &Config, index: usize) -> Result<(), BertError> {
        for (name, shape) in Self::layer_tensors(config, index) {
            self.info(&name, Some(&shape))?;
        }
        Ok(())
    }

    /// Layer `index`, read from the file.
    fn layer(&mut self, config: &Config, index: usize) -> Result<Layer, BertError> {
        let (hidden, inner) = (config.hidden_size, config.intermediate_size);
        let at = |name: &str| format!("encoder.layer.{index}.{name}");
        Ok(Layer {
            qkv: self.dense(
                &[
                    &at("attention.self.query"),
                    &at("attention.self.key"),
                    &at("attention.self.value"),
                ],
                hidden,
                hidden,
            )?,
            attention_out: self.dense(&[&at("attention.output.dense")], hidden, hidden)?,
            attention_norm: self.norm(&at("attention.output.LayerNorm"), hidden)?,
            up: self.dense(&[&at("intermediate.dense")], inner, hidden)?,
            down: self.dense(&[&at("output.dense")], hidden, inner)?,
            output_norm: self.norm(&at("output.LayerNorm"), hidden)?,
        })
    }

    fn norm(&mut self, name: &str, len: usize) -> Result<Norm, BertError> {
        Ok(Norm {
            gamma: self.values(&format!("{name}.weight"), &[len])?,
            beta: self.values(&format!("{name}.bias"), &[len])?,
        })
    }
}

/// The side of the square blocks [`transpose_into`] moves at a time: a block of the source's
/// rows and of the destination's stay in the first-level cache together.
const TRANSPOSE_BLOCK: usize = 32;

/// Writes the `[rows, columns]` matrix of little-endian f32s in `bytes` transposed into
/// `dest`: value `(row, column)` goes to `dest[column * stride + offset + row]`. Block by
/// block, so both sides are read and written a cache line at a time (a plain double loop
/// strides a whole row of `dest` per value, and was most of a warm start's model load).
fn transpose_into(
    bytes: &[u8],
    (rows, columns): (usize, usize),
    dest: &mut [f32],
    (stride, offset): (usize, usize),
) {
    for row_start in (0..rows).step_by(TRANSPOSE_BLOCK) {
        let row_end = (row_start + TRANSPOSE_BLOCK).min(rows);
        for column_start in (0..columns).step_by(TRANSPOSE_BLOCK) {
            let column_end = (column_start + TRANSPOSE_BLOCK).min(columns);
            for column in column_start..column_end {
                let at = column * stride + offset;
                for row in row_start..row_end {
                    let from = (row * columns + column) * 4;
                    dest[at + row] = f32::from_le_bytes([
                        bytes[from],
                        bytes[from + 1],
                        bytes[from + 2],
                        bytes[from + 3],
                    ]);
                }
            }
        }
    }
}

impl Bert {
    /// Loads the weights from `model.safetensors`.
    pub fn load(config: Config, safetensors: &Path) -> Result<Self, BertError> {
        config.validate()?;
        let mut weights = Weights::open(safetensors)?;
        let hidden = config.hidden_size;
        let vocabulary = weights.rows("embeddings.word_embeddings.weight")?;
        let (word_offset, _) = weights.info(
            "embeddings.word_embeddings.weight",
            Some(&[vocabulary, hidden]),
        )?;
        let position_embeddings = weights.values(
            "embeddings.position_embeddings.weight",
            &[config.max_position_embeddings, hidden],
        )?;
        let token_types = weights.rows("embeddings.token_type_embeddings.weight")?;
        let mut token_type_embedding = weights.values(
            "embeddings.token_type_embeddings.weight",
            &[token_types, hidden],
        )?;
        token_type_embedding.truncate(hidden);
        let embedding_norm = weights.norm("embeddings.LayerNorm", hidden)?;
        // Every layer's tensors are checked now; their values are read when a batch needs them.
        for index in 0..config.num_hidden_layers {
            weights.check_layer(&config, index)?;
        }
        let layers = Layers {
            weights: Mutex::new(Weights::open(safetensors)?),
            kept: None,
        };
        #[expect(clippy::cast_possible_truncation, reason = "a small epsilon")]
        let eps = config.layer_norm_eps as f32;
        let word_embeddings = WordTable {
            file: Mutex::new(weights.file),
            path: weights.path,
            offset: word_offset,
            rows: vocabulary,
        };
        Ok(Self {
            config,
            word_embeddings,
            position_embeddings,
            token_type_embedding,
            embedding_norm,
            layers,
            eps,
        })
    }

    /// Keeps every layer in memory while `keep` (a caller about to embed many texts), or
    /// goes back to reading them when a batch needs them.
    pub fn keep_layers(&mut self, keep: bool) -> Result<(), BertError> {
        self.layers.kept = if keep {
            let mut weights = self
                .layers
                .weights
                .lock()
                .map_err(|_| BertError::Poisoned)?;
            let layers = (0..self.config.num_hidden_layers)
                .map(|index| weights.layer(&self.config, index))
                .collect::<Result<Vec<_>, _>>()?;
            Some(layers)
        } else {
            None
        };
        Ok(())
    }

    /// The width of the sentence vectors (the config's `hidden_size`).
    pub fn dimensions(&self) -> usize {
        self.config.hidden_size
    }

    /// The longest text the position embeddings allow.
    pub fn max_tokens(&self) -> usize {
        self.config.max_position_embeddings
    }

    /// Mean-pooled, L2-normalised sentence vectors of texts given as token ids (each at most
    /// [`Bert::max_tokens`] long, none empty).
    pub fn embed(&self, texts: &[&[u32]]) -> Result<Vec<Vec<f32>>, BertError> {
        let hidden = self.config.hidden_size;
        let mut starts = Vec::with_capacity(texts.len() + 1);
        let mut total = 0;
        for ids in texts {
            if ids.is_empty() || ids.len() > self.max_tokens() {
                return Err(BertError::TextLength(ids.len()));
            }
            starts.push(total);
            total += ids.len();
        }
        starts.push(total);
        let mut states = self.embeddings(texts, total)?;
        for index in 0..self.config.num_hidden_layers {
            let read;
            let layer = if let Some(layers) = &self.layers.kept {
                layers
                    .get(index)
                    .ok_or(BertError::Internal("layer count"))?
            } else {
                let mut weights = self
                    .layers
                    .weights
                    .lock()
                    .map_err(|_| BertError::Poisoned)?;
                read = weights.layer(&self.config, index)?;
                &read
            };
            states = self.layer(layer, states, &starts)?;
        }
        Ok(starts
            .windows(2)
            .map(|range| mean_normalised(&states[range[0] * hidden..range[1] * hidden], hidden))
            .collect())
    }

    fn embeddings(&self, texts: &[&[u32]], total: usize) -> Result<Vec<f32>, BertError> {
        let hidden = self.config.hidden_size;
        let mut states = vec![0.0_f32; total * hidden];
        let mut rows = states.chunks_exact_mut(hidden);
        let mut words = self.word_embeddings.reader()?;
        let mut word = vec![0.0_f32; hidden];
        for ids in texts {
            for (position, &id) in ids.iter().enumerate() {
                words.read(id, &mut word)?;
                let Some(row) = rows.next() else {
                    return Err(BertError::Internal("token count mismatch"));
                };
                let place = &self.position_embeddings[position * hidden..(position + 1) * hidden];
                for (((out, w), p), t) in row
                    .iter_mut()
                    .zip(&word)
                    .zip(place)
                    .zip(&self.token_type_embedding)
                {
                    *out = w + p + t;
                }
            }
        }
        states
            .par_chunks_mut(hidden * ROWS_PER_TASK)
            .for_each(|rows| {
                for row in rows.chunks_exact_mut(hidden) {
                    layer_norm(row, &self.embedding_norm, self.eps);
                }
            });
        Ok(states)
    }

    fn layer(
        &self,
        layer: &Layer,
        states: Vec<f32>,
        starts: &[usize],
    ) -> Result<Vec<f32>, BertError> {
        let hidden = self.config.hidden_size;
        let tokens = states.len() / hidden;
        let input = Tensor::from_vec(states, (tokens, hidden), &Device::Cpu)?;
        // Attention: one product for queries, keys and values, then each text over itself.
        let qkv = input.matmul(&layer.qkv.weight)?;
        let mut context = Ok(Vec::new());
        with_slice(&qkv, |qkv| {
            context = self.attention(qkv, &layer.qkv.bias, starts);
        })?;
        let context = context?;
        drop(qkv);
        let projected = Tensor::from_vec(context, (tokens, hidden), &Device::Cpu)
            .and_then(|t| t.matmul(&layer.attention_out.weight))?;
        let mut states = input.flatten_all().and_then(|t| t.to_vec1::<f32>())?;
        drop(input);
        with_slice(&projected, |projected| {
            add_and_norm(
                &mut states,
                projected,
                &layer.attention_out.bias,
                &layer.attention_norm,
                self.eps,
                hidden,
            );
        })?;
        drop(projected);
        // Feed-forward: up, GELU, down.
        let normed = Tensor::from_slice(&states, (tokens, hidden), &Device::Cpu)?;
        let up = normed.matmul(&layer.up.weight)?;
        drop(normed);
        let intermediate = self.config.intermediate_size;
        let mut activated = vec![0.0_f32; tokens * intermediate];
        with_slice(&up, |up| {
            activated
                .par_chunks_mut(intermediate * ROWS_PER_TASK)
                .zip(up.par_chunks(intermediate * ROWS_PER_TASK))
                .for_each(|(out, input)| {
                    pulp::Arch::new().dispatch(GeluRows {
                        out,
                        input,
                        bias: &layer.up.bias,
                    });
                });
        })?;
        drop(up);
        let down = Tensor::from_vec(activated, (tokens, intermediate), &Device::Cpu)
            .and_then(|t| t.matmul(&layer.down.weight))?;
        with_slice(&down, |down| {
            add_and_norm(
                &mut states,
                down,
                &layer.down.bias,
                &layer.output_norm,
                self.eps,
                hidden,
            );
        })?;
        Ok(states)
    }

    /// Self-attention of each text over its own tokens, as two batched matrix products over
    /// every head of every text (padded to the longest text of the batch, which is short
    /// because batches are sorted by length), with the softmax masked to each text's length.
    /// `qkv` holds each token's query, key and value (before bias); returns each token's
    /// attended values.
    fn attention(
        &self,
        qkv: &[f32],
        bias: &[f32],
        starts: &[usize],
    ) -> Result<Vec<f32>, BertError> {
        let hidden = self.config.hidden_size;
        let heads = self.config.num_attention_heads;
        let size = hidden / heads;
        let texts = starts.len().saturating_sub(1);
        let longest = starts.windows(2).map(|r| r[1] - r[0]).max().unwrap_or(0);
        #[expect(clippy::cast_precision_loss, reason = "a small head size")]
        let scale = 1.0 / (size as f32).sqrt();
        // [text * heads + head][token][size], zero-padded.
        let block = heads * longest * size;
        let mut queries = vec![0.0_f32; texts * block];
        let mut keys = vec![0.0_f32; texts * block];
        let mut values = vec![0.0_f32; texts * block];
        queries
            .par_chunks_mut(block)
            .zip(keys.par_chunks_mut(block))
            .zip(values.par_chunks_mut(block))
            .zip(starts.par_windows(2))
            .for_each(|(((q, k), v), range)| {
                let rows = &qkv[range[0] * 3 * hidden..range[1] * 3 * hidden];
                for (token, row) in rows.chunks_exact(3 * hidden).enumerate() {
                    for head in 0..heads {
                        let at = (head * longest + token) * size;
                        let from = head * size;
                        for d in 0..size {
                            q[at + d] = (row[from + d] + bias[from + d]) * scale;
                            k[at + d] = row[hidden + from + d] + bias[hidden + from + d];
                            v[at + d] = row[2 * hidden + from + d] + bias[2 * hidden + from + d];
                        }
                    }
                }
            });
        let shape = (texts * heads, longest, size);
        let queries = Tensor::from_vec(queries, shape, &Device::Cpu)?;
        let keys = Tensor::from_vec(keys, shape, &Device::Cpu)?;
        let scores = queries.matmul(&keys.t()?)?;
        drop((queries, keys));
        let square = longest * longest;
        let mut probabilities = vec![0.0_f32; texts * heads * square];
        with_slice(&scores, |scores| {
            probabilities
                .par_chunks_mut(heads * square)
                .zip(scores.par_chunks(heads * square))
                .zip(starts.par_windows(2))
                .for_each(|((out, scores), range)| {
                    pulp::Arch::new().dispatch(MaskedSoftmax {
                        out,
                        scores,
                        width: longest,
                        len: range[1] - range[0],
                    });
                });
        })?;
        drop(scores);
        let values = Tensor::from_vec(values, shape, &Device::Cpu)?;
        let attended = Tensor::from_vec(
            probabilities,
            (texts * heads, longest, longest),
            &Device::Cpu,
        )
        .and_then(|p| p.matmul(&values))?;
        let tokens = starts.last().copied().unwrap_or(0);
        let mut context = vec![0.0_f32; tokens * hidden];
        with_slice(&attended, |attended| {
            let mut rest = context.as_mut_slice();
            for (range, block) in starts
                .windows(2)
                .zip(attended.chunks_exact(heads * longest * size))
            {
                let (out, tail) = rest.split_at_mut((range[1] - range[0]) * hidden);
                rest = tail;
                for (token, row) in out.chunks_exact_mut(hidden).enumerate() {
                    for head in 0..heads {
                        let at = (head * longest + token) * size;
                        row[head * size..(head + 1) * size].copy_from_slice(&block[at..at + size]);
                    }
                }
            }
        })?;
        Ok(context)
    }
}

mod kernels;

use kernels::{
    GeluRows, MaskedSoftmax, ROWS_PER_TASK, add_and_norm, layer_norm, mean_normalised, with_slice,
};

#[cfg(test)]
mod tests;
