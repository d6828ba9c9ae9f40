//! The model's fingerprint, which keys the embedding cache: a digest of what the vectors depend
//! on, so a cache is never reused for another model, another build of the same model, or
//! another way of computing vectors.
//!
//! It is the sha256 of [`ENCODER_VERSION`], [`MAX_TOKENS`] and the sha256 digests of the
//! model's three files: `config.json` and `tokenizer.json` are hashed whole at every call (under
//! 1 MB, about a millisecond); the weights (90 MB, some 50 ms with SHA extensions and several
//! times that without, plus reading them from disk) are hashed whole once and their digest
//! remembered in [`DIGEST_MEMO`] in the cache folder, keyed by the file's canonical path, size,
//! modification and change times, inode and device. The change time (ctime) cannot be set from
//! user space and moves with every write, so content that changes (even with its size and
//! modification time put back) misses the memo and is hashed again; a file changed within
//! [`RACY_WINDOW`] of being hashed is not remembered, as timestamps are coarse (the "racily
//! clean" rule of git). Hashing only parts of the weights (the header, the first and last MiB)
//! would be cheaper every time but miss a change to the middle, such as fine-tuned encoder
//! layers with the same shapes.
//!
//! The pinned digest of `download.rs` is not reused: it says what the download fetched, while
//! a model named by `--embed-model` or `SKILLET_EMBED_MODEL` is any folder, and the files of the
//! Hugging Face cache can change after the download checked them; the fingerprint must come from
//! the bytes that are loaded. The vector width comes from `config.json` (`hidden_size`).

use std::io::{self, BufReader};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::cache::write_atomically;
use crate::embed::{ENCODER_VERSION, EmbedError, MAX_TOKENS, read_config};

/// The file in the cache folder remembering the weights' digests.
pub const DIGEST_MEMO: &str = "model-digests.json";
/// The largest memo read.
const MAX_MEMO_BYTES: u64 = 1 << 20;
/// Weights files remembered (the most recently hashed).
const MAX_MEMO_ENTRIES: usize = 16;
/// A file whose modification or change time is this close to when it was hashed is not
/// remembered: a write within the same timestamp tick would not show.
pub const RACY_WINDOW: Duration = Duration::from_secs(2);
/// Hex digits of the digest in a model id (128 bits).
const ID_HEX_DIGITS: usize = 32;
/// Bytes read at a time while hashing a file.
pub(crate) const HASH_BUFFER: usize = 1 << 16;

/// What identifies a model for the embedding cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelFingerprint {
    /// `e{ENCODER_VERSION}-` and 32 hex digits of the digest: safe as a file name.
    pub id: String,
    /// The width of its vectors (`hidden_size` in `config.json`).
    pub dimensions: usize,
}

/// The fingerprint of the model in `dir` (see the module documentation), without loading it.
/// `memo_dir` is where the weights' digest is remembered (the embedding cache folder); with
/// `None`, or when the memo cannot be written, the weights are hashed every time.
pub fn fingerprint(dir: &Path, memo_dir: Option<&Path>) -> Result<ModelFingerprint, EmbedError> {
    let config = read_config(dir)?;
    let io = |path: PathBuf| {
        move |error: io::Error| EmbedError::Io {
            path,
            message: error.to_string(),
        }
    };
    let config_path = dir.join("config.json");
    let config_digest = sha256_file(&config_path).map_err(io(config_path))?;
    let tokenizer_path = dir.join("tokenizer.json");
    let tokenizer_digest = sha256_file(&tokenizer_path).map_err(io(tokenizer_path))?;
    let weights_path = dir.join("model.safetensors");
    let weights_digest = weights_digest(&weights_path, memo_dir).map_err(io(weights_path))?;
    let mut hasher = Sha256::new();
    hasher.update(b"skillet model fingerprint\0");
    hasher.update(ENCODER_VERSION.to_le_bytes());
    hasher.update((MAX_TOKENS as u64).to_le_bytes());
    hasher.update(config_digest);
    hasher.update(tokenizer_digest);
    hasher.update(weights_digest);
    let digest = hex(&hasher.finalize());
    Ok(ModelFingerprint {
        id: format!("e{ENCODER_VERSION}-{}", &digest[..ID_HEX_DIGITS]),
        dimensions: config.hidden_size(),
    })
}

/// The sha256 digest of the file at `path`, read in pieces.
pub(crate) fn sha256_file(path: &Path) -> io::Result<[u8; 32]> {
    let mut reader = BufReader::with_capacity(HASH_BUFFER, crate::regular::open_read(path)?);
    let mut hasher = Sha256::new();
    io::copy(&mut reader, &mut hasher)?;
    Ok(hasher.finalize().into())
}

/// Lower-case hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(2 * bytes.len()), |mut out, byte| {
            let _ = write!(out, "{byte:02x}");
            out
        })
}

/// What a file is, as far as its metadata tells: if any of this changes, so may its content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Stamp {
    path: String,
    len: u64,
    modified: (i64, i64),
    /// The change time (Unix), which user space cannot set; (0, 0) elsewhere.
    changed: (i64, i64),
    inode: u64,
    device: u64,
}

impl Stamp {
    fn of(path: &Path) -> io::Result<Self> {
        let metadata = std::fs::metadata(path)?;
        #[cfg(unix)]
        let (modified, changed, inode, device) = {
            use std::os::unix::fs::MetadataExt as _;
            (
                (metadata.mtime(), metadata.mtime_nsec()),
                (metadata.ctime(), metadata.ctime_nsec()),
                metadata.ino(),
                metadata.dev(),
            )
        };
        #[cfg(not(unix))]
        let (modified, changed, inode, device) = {
            let since = metadata
                .modified()?
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default();
            (
                (
                    i64::try_from(since.as_secs()).unwrap_or(i64::MAX),
                    i64::from(since.subsec_nanos()),
                ),
                (0, 0),
                0,
                0,
            )
        };
        Ok(Self {
            path: path.to_string_lossy().into_owned(),
            len: metadata.len(),
            modified,
            changed,
            inode,
            device,
        })
    }

    /// Whether the file was modified or changed within [`RACY_WINDOW`] before `now` (or after
    /// it, or before 1970).
    fn is_racy(&self, now: SystemTime) -> bool {
        let Ok(now) = now.duration_since(SystemTime::UNIX_EPOCH) else {
            return true;
        };
        let at = |(seconds, nanos): (i64, i64)| {
            Some(Duration::new(
                u64::try_from(seconds).ok()?,
                u32::try_from(nanos).ok()?,
            ))
        };
        [self.modified, self.changed]
            .into_iter()
            .any(|time| at(time).is_none_or(|time| time + RACY_WINDOW > now))
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Memo {
    entries: Vec<MemoEntry>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct MemoEntry {
    stamp: Stamp,
    sha256: String,
}

impl Memo {
    fn read(path: &Path) -> Self {
        crate::embed::read_capped(path, MAX_MEMO_BYTES)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    fn find(&self, stamp: &Stamp) -> Option<[u8; 32]> {
        let entry = self.entries.iter().find(|entry| &entry.stamp == stamp)?;
        let mut digest = [0_u8; 32];
        if entry.sha256.len() != 64 {
            return None;
        }
        for (byte, pair) in digest
            .iter_mut()
            .zip(entry.sha256.as_bytes().chunks_exact(2))
        {
            *byte = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
        }
        Some(digest)
    }
}

/// The sha256 digest of the weights at `path`, from the memo in `memo_dir` when it has the
/// file as it is now; else hashed, and remembered unless the file is racy or changed meanwhile.
fn weights_digest(path: &Path, memo_dir: Option<&Path>) -> io::Result<[u8; 32]> {
    let canonical = path.canonicalize()?;
    let before = Stamp::of(&canonical)?;
    let memo_path = memo_dir.map(|dir| dir.join(DIGEST_MEMO));
    if let Some(memo_path) = &memo_path
        && let Some(digest) = Memo::read(memo_path).find(&before)
    {
        return Ok(digest);
    }
    let digest = sha256_file(&canonical)?;
    if let Some(memo_path) = &memo_path
        && !before.is_racy(SystemTime::now())
        && Stamp::of(&canonical).is_ok_and(|after| after == before)
    {
        remember(memo_path, before, &digest);
    }
    Ok(digest)
}

/// Adds a digest to the memo (best effort: a memo that cannot be written only costs time).
fn remember(memo_path: &Path, stamp: Stamp, digest: &[u8; 32]) {
    let mut memo = Memo::read(memo_path);
    memo.entries.retain(|entry| entry.stamp.path != stamp.path);
    memo.entries.insert(
        0,
        MemoEntry {
            stamp,
            sha256: hex(digest),
        },
    );
    memo.entries.truncate(MAX_MEMO_ENTRIES);
    if let Some(parent) = memo_path.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    if let Ok(bytes) = serde_json::to_vec_pretty(&memo) {
        let _ = write_atomically(memo_path, &bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake model folder: a config of width 8, a tokenizer and weights (neither loadable, but
    /// a fingerprint only reads them).
    fn fake_model() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("config.json"),
            br#"{"model_type": "bert", "hidden_size": 8, "intermediate_size": 16,
                "num_attention_heads": 2, "num_hidden_layers": 1, "max_position_embeddings": 16}"#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join("tokenizer.json"),
            b"{\"fake\": \"tokenizer\"}",
        )
        .unwrap();
        let weights: Vec<u8> = (0..200_000_u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(dir.path().join("model.safetensors"), weights).unwrap();
        dir
    }

    /// Changes one byte of `file` in place, keeping its size.
    fn flip_byte(path: &Path, at: usize) {
        let mut bytes = std::fs::read(path).unwrap();
        bytes[at] ^= 0x20;
        std::fs::write(path, bytes).unwrap();
    }

    fn set_modified(path: &Path, time: SystemTime) {
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(time)
            .unwrap();
    }

    #[test]
    fn the_width_comes_from_the_config_and_the_id_is_a_safe_name() {
        let model = fake_model();
        let fingerprint = fingerprint(model.path(), None).unwrap();
        assert_eq!(fingerprint.dimensions, 8);
        assert!(fingerprint.id.starts_with(&format!("e{ENCODER_VERSION}-")));
        assert_eq!(fingerprint.id.len(), 3 + ID_HEX_DIGITS);
        assert!(
            fingerprint
                .id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        );
    }

    #[test]
    fn a_bad_config_is_an_error() {
        let model = fake_model();
        let config = model.path().join("config.json");
        std::fs::write(&config, br#"{"hidden_size": 0, "intermediate_size": 16, "num_attention_heads": 2, "num_hidden_layers": 1, "max_position_embeddings": 16}"#).unwrap();
        assert!(matches!(
            fingerprint(model.path(), None),
            Err(EmbedError::Encoder(crate::bert::BertError::HiddenSize(0)))
        ));
        std::fs::write(&config, b"{").unwrap();
        assert!(matches!(
            fingerprint(model.path(), None),
            Err(EmbedError::Config { .. })
        ));
        std::fs::remove_file(&config).unwrap();
        assert!(matches!(
            fingerprint(model.path(), None),
            Err(EmbedError::Io { .. })
        ));
    }

    #[test]
    fn one_byte_of_any_file_changes_the_fingerprint_and_a_touch_does_not() {
        let model = fake_model();
        let memo = tempfile::tempdir().unwrap();
        let original = fingerprint(model.path(), Some(memo.path())).unwrap();
        let mut seen = vec![original.id.clone()];
        // In the config, a letter of "bert": it still parses.
        for (file, at) in [
            ("config.json", 16),
            ("tokenizer.json", 3),
            ("model.safetensors", 0),
            ("model.safetensors", 100_000),
            ("model.safetensors", 199_999),
        ] {
            let path = model.path().join(file);
            flip_byte(&path, at);
            let changed = fingerprint(model.path(), Some(memo.path())).unwrap();
            assert!(
                !seen.contains(&changed.id),
                "{file} byte {at}: {}",
                changed.id
            );
            seen.push(changed.id);
            flip_byte(&path, at);
            assert_eq!(
                fingerprint(model.path(), Some(memo.path())).unwrap(),
                original,
                "{file} put back"
            );
        }
        // Only the times change: same content, same fingerprint.
        for file in ["config.json", "tokenizer.json", "model.safetensors"] {
            set_modified(
                &model.path().join(file),
                SystemTime::now() - Duration::from_hours(1),
            );
        }
        assert_eq!(
            fingerprint(model.path(), Some(memo.path())).unwrap(),
            original
        );
        assert_eq!(fingerprint(model.path(), None).unwrap(), original);
    }

    #[test]
    fn the_encoder_version_and_token_limit_are_part_of_it() {
        // The digest's input, spelled out: a change of either constant moves every id.
        let model = fake_model();
        let digest = |version: u32, tokens: u64| {
            let file = |name: &str| sha256_file(&model.path().join(name)).unwrap();
            let mut hasher = Sha256::new();
            hasher.update(b"skillet model fingerprint\0");
            hasher.update(version.to_le_bytes());
            hasher.update(tokens.to_le_bytes());
            hasher.update(file("config.json"));
            hasher.update(file("tokenizer.json"));
            hasher.update(file("model.safetensors"));
            format!("e{version}-{}", &hex(&hasher.finalize())[..ID_HEX_DIGITS])
        };
        let id = fingerprint(model.path(), None).unwrap().id;
        assert_eq!(id, digest(ENCODER_VERSION, MAX_TOKENS as u64));
        assert_ne!(id, digest(ENCODER_VERSION + 1, MAX_TOKENS as u64));
        assert_ne!(id, digest(ENCODER_VERSION, MAX_TOKENS as u64 + 1));
    }

    /// The memo is used while the weights are as they were, and not once their content
    /// changed, even with their size and modification time put back (the change time moved).
    /// Waits out the racy window once, since a just-written file is never remembered.
    #[test]
    fn the_weights_digest_is_remembered_until_the_file_changes() {
        let model = fake_model();
        let weights = model.path().join("model.safetensors");
        let memo_dir = tempfile::tempdir().unwrap();
        let memo_path = memo_dir.path().join(DIGEST_MEMO);

        // Just written: hashed, not remembered.
        let original = fingerprint(model.path(), Some(memo_dir.path())).unwrap();
        assert!(!memo_path.exists());
        std::thread::sleep(RACY_WINDOW + Duration::from_millis(200));
        assert_eq!(
            fingerprint(model.path(), Some(memo_dir.path())).unwrap(),
            original
        );
        let memo = Memo::read(&memo_path);
        assert_eq!(memo.entries.len(), 1);
        assert_eq!(memo.entries[0].sha256, hex(&sha256_file(&weights).unwrap()));

        // The memo is what is used: a planted digest shows in the id.
        let mut planted = memo;
        planted.entries[0].sha256 = "ab".repeat(32);
        std::fs::write(&memo_path, serde_json::to_vec(&planted).unwrap()).unwrap();
        let from_memo = fingerprint(model.path(), Some(memo_dir.path())).unwrap();
        assert_ne!(from_memo, original);

        // A byte changed in place, size and modification time put back: hashed again.
        let modified = std::fs::metadata(&weights).unwrap().modified().unwrap();
        flip_byte(&weights, 1_000);
        set_modified(&weights, modified);
        let stamp = Stamp::of(&weights.canonicalize().unwrap()).unwrap();
        assert_eq!(stamp.len, 200_000);
        let changed = fingerprint(model.path(), Some(memo_dir.path())).unwrap();
        assert_ne!(changed, from_memo);
        assert_ne!(changed, original);
        assert_eq!(changed, fingerprint(model.path(), None).unwrap());
    }

    #[test]
    fn a_damaged_memo_is_ignored() {
        let model = fake_model();
        let memo_dir = tempfile::tempdir().unwrap();
        std::fs::write(memo_dir.path().join(DIGEST_MEMO), b"{not json").unwrap();
        assert_eq!(
            fingerprint(model.path(), Some(memo_dir.path())).unwrap(),
            fingerprint(model.path(), None).unwrap()
        );
    }
}
