//! Matching requests to skills: the discovered skills as retrieval documents, their vectors
//! embedded once and cached on disk, ranked by words, meaning or both.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use skillet_retrieval::embed::{DIMENSIONS, EmbedError, Embedder, model_id};
use skillet_retrieval::{
    EmbeddingCache, Matcher, Mode, Ranked, embedding_text, skill_text, text_hash,
};
use skillet_skills::Library;

/// What building the index did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IndexStats {
    /// Skills embedded now.
    pub embedded: usize,
    /// Skills whose vectors came from the cache.
    pub reused: usize,
    /// How long it took.
    pub elapsed: Duration,
}

/// The skills of a library, ready to rank.
pub struct SkillIndex {
    matcher: Matcher,
    embedder: Option<Embedder>,
    names: Vec<String>,
}

impl SkillIndex {
    /// Words only (no model).
    pub fn lexical(library: &Library) -> Self {
        Self {
            matcher: Matcher::new(lexical_texts(library).iter().map(String::as_str)),
            embedder: None,
            names: names(library),
        }
    }

    /// Words and meaning: embeds every skill not already in the cache under `cache_dir` (see
    /// [`refresh_cache`]) and loads the model from `model_dir` for queries.
    pub fn semantic(
        library: &Library,
        model_dir: &Path,
        cache_dir: &Path,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<(Self, IndexStats), EmbedError> {
        let started = Instant::now();
        let (cache, hashes, loaded, mut stats) = refresh(library, model_dir, cache_dir, progress)?;
        // The model embeds queries too; refresh loaded it already when skills needed embedding.
        let embedder = match loaded {
            Some(embedder) => embedder,
            None => Embedder::load(model_dir)?,
        };
        let mut vectors = Vec::with_capacity(hashes.len() * DIMENSIONS);
        for hash in &hashes {
            match cache.get(*hash) {
                Some(vector) => vectors.extend_from_slice(vector),
                None => vectors.extend(std::iter::repeat_n(0.0, DIMENSIONS)),
            }
        }
        let matcher = Matcher::new(lexical_texts(library).iter().map(String::as_str))
            .with_vectors(DIMENSIONS, vectors);
        stats.elapsed = started.elapsed();
        Ok((
            Self {
                matcher,
                embedder: Some(embedder),
                names: names(library),
            },
            stats,
        ))
    }

    /// The `k` best skills for a request, and the mode actually used (lexical when there is no
    /// model). Names index into the library's skills.
    pub fn rank(
        &self,
        query: &str,
        mode: Mode,
        k: usize,
    ) -> Result<(Mode, Vec<Ranked>), EmbedError> {
        let vector = match (&self.embedder, mode) {
            (Some(embedder), Mode::Semantic | Mode::Hybrid) => embedder.embed(&[query])?.pop(),
            _ => None,
        };
        Ok(self.matcher.rank(query, vector.as_deref(), mode, k))
    }

    /// The name of a ranked skill.
    pub fn name(&self, index: usize) -> &str {
        &self.names[index]
    }
}

/// Brings the embedding cache up to date with the library: embeds only skills whose text is
/// new or changed, loading the model only when there are any.
pub fn refresh_cache(
    library: &Library,
    model_dir: &Path,
    cache_dir: &Path,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<IndexStats, EmbedError> {
    let started = Instant::now();
    let (_, _, _, mut stats) = refresh(library, model_dir, cache_dir, progress)?;
    stats.elapsed = started.elapsed();
    Ok(stats)
}

/// The cache brought up to date, each skill's text hash, and the model when it had to be
/// loaded to embed new or changed skills.
fn refresh(
    library: &Library,
    model_dir: &Path,
    cache_dir: &Path,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(EmbeddingCache, Vec<u64>, Option<Embedder>, IndexStats), EmbedError> {
    let texts: Vec<String> = library
        .skills()
        .iter()
        .map(|s| {
            embedding_text(
                &s.name,
                &s.description,
                s.frontmatter.when_to_use.as_deref(),
                &s.frontmatter.tags,
            )
        })
        .collect();
    let hashes: Vec<u64> = texts.iter().map(|text| text_hash(text)).collect();
    let cache_path = EmbeddingCache::path_for(cache_dir, &model_id(model_dir)?);
    let mut cache = EmbeddingCache::open(&cache_path, DIMENSIONS);
    let missing: Vec<usize> = (0..texts.len())
        .filter(|&i| cache.get(hashes[i]).is_none())
        .collect();
    let total = missing.len();
    let mut loaded = None;
    if total > 0 {
        let embedder = Embedder::load(model_dir)?;
        let mut done = 0;
        for chunk in missing.chunks(PROGRESS_STEP) {
            let batch: Vec<&str> = chunk.iter().map(|&i| texts[i].as_str()).collect();
            for (&i, vector) in chunk.iter().zip(embedder.embed(&batch)?) {
                cache.insert(hashes[i], vector);
            }
            done += chunk.len();
            progress(done, total);
        }
        // A cache that cannot be written only costs time next run.
        let _ = cache.save();
        loaded = Some(embedder);
    }
    let stats = IndexStats {
        embedded: total,
        reused: texts.len() - total,
        elapsed: Duration::ZERO,
    };
    Ok((cache, hashes, loaded, stats))
}

/// Skills embedded between two progress reports.
const PROGRESS_STEP: usize = 128;

fn names(library: &Library) -> Vec<String> {
    library.skills().iter().map(|s| s.name.clone()).collect()
}

fn lexical_texts(library: &Library) -> Vec<String> {
    library
        .skills()
        .iter()
        .map(|s| {
            skill_text(
                &s.name,
                &s.description,
                s.frontmatter.when_to_use.as_deref(),
                &s.frontmatter.tags,
            )
        })
        .collect()
}

/// Where the embedding cache lives: `$XDG_CACHE_HOME/skillet/embeddings`, else
/// `~/.cache/skillet/embeddings`.
pub fn cache_dir(xdg_cache_home: Option<&Path>, home: Option<&Path>) -> Option<PathBuf> {
    xdg_cache_home
        .filter(|dir| dir.is_absolute())
        .map(Path::to_path_buf)
        .or_else(|| home.map(|home| home.join(".cache")))
        .map(|dir| dir.join("skillet").join("embeddings"))
}
