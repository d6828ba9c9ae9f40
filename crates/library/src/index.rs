//! Matching requests to skills: the discovered skills as retrieval documents, their vectors
//! embedded once and cached on disk, ranked by words, meaning or both.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use skillet_retrieval::embed::{EmbedError, Embedder, fingerprint};
use skillet_retrieval::{
    CacheWarning, EmbeddingCache, InvalidVector, Matcher, Mode, Ranked, Vectors, embedding_text,
    skill_text, text_hash,
};
use skillet_skills::Library;

use crate::facts::Facts;

/// The most of a query matching reads: its first 4 KiB (cut at a character boundary). A
/// request longer than that says what it needs in its first lines; tokenising all of a pasted
/// file cost about 145 bytes of memory per byte (3.6 MB took 520 MB).
pub const MAX_QUERY_BYTES: usize = 4 * 1024;

/// `query` cut to at most [`MAX_QUERY_BYTES`], at a character boundary.
pub fn capped_query(query: &str) -> &str {
    if query.len() <= MAX_QUERY_BYTES {
        return query;
    }
    let mut end = MAX_QUERY_BYTES;
    while !query.is_char_boundary(end) {
        end -= 1;
    }
    &query[..end]
}

/// What building the index did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IndexStats {
    /// Skills embedded now.
    pub embedded: usize,
    /// Skills whose vectors came from the cache.
    pub reused: usize,
    /// How long it took.
    pub elapsed: Duration,
    /// What went wrong but was recovered from, for the user to see.
    pub warnings: Vec<IndexWarning>,
}

/// Something the index recovered from: the skills affected are embedded again (next time) or
/// ranked by words only.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum IndexWarning {
    /// The cache file was unreadable or held unusable entries (they were embedded again).
    #[error(transparent)]
    Cache(#[from] CacheWarning),
    /// The cache could not be written: the skills embedded now are embedded again next time.
    #[error(
        "embedding cache {} could not be saved ({message}); skills will be embedded again next time",
        path.display()
    )]
    NotSaved {
        /// The cache file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The model gave a skill a vector that cannot be ranked; it is ranked by words only.
    #[error(
        "the model gave skill `{skill}` an unusable vector ({reason}); it is ranked by words only"
    )]
    UnusableVector {
        /// The skill's name.
        skill: String,
        /// What is wrong with the vector.
        reason: InvalidVector,
    },
}

/// [`SkillIndex::rank_explained`]'s answer.
#[derive(Debug, Clone)]
pub struct RankedExplained {
    /// The mode used.
    pub mode: Mode,
    /// The best skills, each with why.
    pub top: Vec<(Ranked, skillet_retrieval::Explanation)>,
    /// The skill asked about: where it ranked, what beat it, and why.
    pub also: Option<Placed>,
}

/// The most skills listed as ranked above the one asked about.
pub const MAX_ABOVE: usize = 10;

/// Where one skill ranked for a request.
#[derive(Debug, Clone)]
pub struct Placed {
    /// Its place (1 = first; `None`: not ranked at all).
    pub rank: Option<usize>,
    /// The skills ranked above it, best first (at most [`MAX_ABOVE`]).
    pub above: Vec<Ranked>,
    /// Why it scored as it did.
    pub why: skillet_retrieval::Explanation,
}

/// [`SkillIndex::rank_keeping_vector`]'s answer.
#[derive(Debug, Clone)]
pub struct Ranking {
    /// The mode used (lexical when there is no model).
    pub mode: Mode,
    /// The best skills, best first.
    pub ranked: Vec<Ranked>,
    /// The query's vector (`None` when ranked by words).
    pub vector: Option<Vec<f32>>,
}

/// The skills of a library, ready to rank.
pub struct SkillIndex {
    matcher: Matcher,
    embedder: Option<Embedder>,
    names: Vec<String>,
    /// The last query embedded, and its vector: a session's first message is ranked for the
    /// catalog and again for suggestions.
    last_query: std::sync::Mutex<Option<(String, Vec<f32>)>>,
}

impl SkillIndex {
    /// Words only (no model).
    pub fn lexical(library: &Library) -> Self {
        Self {
            matcher: Matcher::new(own_texts(library).iter().map(String::as_str)),
            embedder: None,
            names: names(library),
            last_query: std::sync::Mutex::default(),
        }
    }

    /// Words and meaning: embeds every skill not already in the cache under `cache_dir` (see
    /// [`refresh_cache`]) and loads the model from `model_dir` for queries.
    pub fn semantic(
        library: &Library,
        facts: &Facts,
        model_dir: &Path,
        cache_dir: &Path,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<(Self, IndexStats), EmbedError> {
        Self::semantic_loading(
            library,
            facts,
            ModelLoad::start(model_dir),
            cache_dir,
            progress,
        )
    }

    /// [`SkillIndex::semantic`] with the model already being loaded (`model`).
    pub fn semantic_loading(
        library: &Library,
        facts: &Facts,
        model: ModelLoad,
        cache_dir: &Path,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<(Self, IndexStats), EmbedError> {
        let started = Instant::now();
        let model_dir = model.dir.clone();
        let mut model = Some(model);
        let refreshed = refresh(library, &model_dir, cache_dir, progress, &mut model)?;
        let mut stats = refreshed.stats;
        // The model embeds queries too; refresh took it already when skills needed embedding.
        let dimensions = refreshed.dimensions;
        let embedder = match (refreshed.embedder, model) {
            (Some(embedder), _) => embedder,
            (None, Some(model)) => model.finish(dimensions)?,
            (None, None) => load(&model_dir, dimensions)?,
        };
        let vectors = refreshed.vectors;
        let matcher = word_matcher(library, facts).with_stored_vectors(vectors);
        stats.elapsed = started.elapsed();
        Ok((
            Self {
                matcher,
                embedder: Some(embedder),
                names: names(library),
                last_query: std::sync::Mutex::default(),
            },
            stats,
        ))
    }

    /// `query`'s vector: the one remembered when it was the last query, else embedded now.
    fn query_vector(
        &self,
        embedder: &Embedder,
        query: &str,
    ) -> Result<Option<Vec<f32>>, EmbedError> {
        if let Ok(last) = self.last_query.lock()
            && let Some((text, vector)) = last.as_ref()
            && text == query
        {
            return Ok(Some(vector.clone()));
        }
        let vector = embedder.embed(&[query])?.pop();
        if let (Some(vector), Ok(mut last)) = (&vector, self.last_query.lock()) {
            *last = Some((query.to_string(), vector.clone()));
        }
        Ok(vector)
    }

    /// The `k` best skills for a request, and the mode actually used (lexical when there is no
    /// model). Names index into the library's skills.
    pub fn rank(
        &self,
        query: &str,
        mode: Mode,
        k: usize,
    ) -> Result<(Mode, Vec<Ranked>), EmbedError> {
        let ranking = self.rank_keeping_vector(query, mode, k)?;
        Ok((ranking.mode, ranking.ranked))
    }

    /// [`SkillIndex::rank`], and the query's vector it ranked with (`None` by words), for
    /// searching a source too without embedding the query again.
    pub fn rank_keeping_vector(
        &self,
        query: &str,
        mode: Mode,
        k: usize,
    ) -> Result<Ranking, EmbedError> {
        let query = capped_query(query);
        let vector = match (&self.embedder, mode) {
            (Some(embedder), Mode::Semantic | Mode::Hybrid) => {
                self.query_vector(embedder, query)?
            }
            _ => None,
        };
        let (mode, ranked) = self.matcher.rank(query, vector.as_deref(), mode, k);
        Ok(Ranking {
            mode,
            ranked,
            vector,
        })
    }

    /// The `k` best skills for a request with why each scored as it did, and the explanation
    /// of the skill at `also` (wherever it ranked), one query embedding for all.
    pub fn rank_explained(
        &self,
        query: &str,
        mode: Mode,
        k: usize,
        also: Option<usize>,
    ) -> Result<RankedExplained, EmbedError> {
        let query = capped_query(query);
        let vector = match (&self.embedder, mode) {
            (Some(embedder), Mode::Semantic | Mode::Hybrid) => {
                self.query_vector(embedder, query)?
            }
            _ => None,
        };
        // One ranking: its head is the answer, the rest places the skill asked about.
        let depth = if also.is_some() { self.names.len() } else { k };
        let (used, all) = self.matcher.rank(query, vector.as_deref(), mode, depth);
        let explain = |document| {
            self.matcher
                .explain(query, vector.as_deref(), mode, document)
        };
        let top = all
            .iter()
            .take(k)
            .map(|ranked| (*ranked, explain(ranked.index)))
            .collect();
        let also = also.map(|document| {
            let rank = all.iter().position(|ranked| ranked.index == document);
            let above = all
                .iter()
                .take(rank.unwrap_or(all.len()).min(MAX_ABOVE))
                .copied()
                .collect();
            Placed {
                rank: rank.map(|at| at + 1),
                above,
                why: explain(document),
            }
        });
        Ok(RankedExplained {
            mode: used,
            top,
            also,
        })
    }

    /// The query's vector from the model this index ranks with (`None` without a model), for
    /// searching a source whose skills were embedded by the same model.
    pub fn embed_query(&self, query: &str) -> Result<Option<Vec<f32>>, EmbedError> {
        match &self.embedder {
            Some(embedder) => Ok(embedder.embed(&[query])?.pop()),
            None => Ok(None),
        }
    }

    /// Vectors of any texts from the model this index ranks with (`None` without a model):
    /// other documents (MCP tools) ranked by the same meaning.
    pub fn embed_texts(&self, texts: &[&str]) -> Result<Option<Vec<Vec<f32>>>, EmbedError> {
        match &self.embedder {
            Some(embedder) => Ok(Some(embedder.embed(texts)?)),
            None => Ok(None),
        }
    }

    /// The skill whose text means most nearly what skill `document`'s does, and their cosine
    /// (`None` without a model, or for a skill without a usable vector).
    pub fn closest(&self, document: usize) -> Option<(usize, f32)> {
        let vector = self.matcher.vector(document)?;
        if vector.iter().all(|x| *x == 0.0) {
            return None;
        }
        self.matcher
            .similarities(&vector)?
            .into_iter()
            .enumerate()
            .filter(|(other, _)| *other != document)
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// Whether it ranks by meaning too.
    pub fn has_model(&self) -> bool {
        self.embedder.is_some()
    }

    /// The name of a ranked skill.
    pub fn name(&self, index: usize) -> &str {
        &self.names[index]
    }
}

/// The library's two word indexes ([`Matcher::with_body_ids`]): as kept from a start before
/// when the skills are as they were then ([`crate::words`]), else built from the facts and
/// kept for the next start.
pub(crate) fn word_matcher(library: &Library, facts: &Facts) -> Matcher {
    let own = own_texts(library);
    let stored = crate::words::Stored::of(facts, library, &own);
    if let Some(matcher) = stored.as_ref().and_then(crate::words::Stored::load) {
        return matcher;
    }
    // The blend weighs each skill's body's words too, worked out once per body and kept
    // ([`Facts`]); a body that cannot be read (gone since discovery, too large, not UTF-8)
    // leaves the skill blended by its own text, and loading it says why. Kept words that can
    // no longer be read whole are worked out again from the bodies.
    let read_again;
    let bodies = if let Some(bodies) = facts.body_words() {
        bodies
    } else {
        read_again = Facts::gather(library, None);
        match read_again.body_words() {
            Some(bodies) => bodies,
            // Read now, they are always there; without them the blend weighs own texts.
            None => return Matcher::new(own.iter().map(String::as_str)),
        }
    };
    let ids = (0..library.skills().len()).map(|index| bodies.ids(index).iter().copied());
    let matcher = Matcher::new(own.iter().map(String::as_str))
        .with_body_ids(own.iter().map(String::as_str).zip(ids), bodies.words());
    if let Some(stored) = stored {
        // Best effort: a file that cannot be written costs the next start this building.
        let _ = stored.save(&matcher);
    }
    matcher
}

/// Brings the embedding cache up to date with the library: embeds only skills whose text is
/// new or changed, loading the model only when there are any; marks the library's vectors used
/// and saves (pruning entries no library used lately, see [`skillet_retrieval::PRUNE_AFTER`]).
/// Problems it recovered from are in [`IndexStats::warnings`].
pub fn refresh_cache(
    library: &Library,
    model_dir: &Path,
    cache_dir: &Path,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<IndexStats, EmbedError> {
    let started = Instant::now();
    let mut stats = refresh(library, model_dir, cache_dir, progress, &mut None)?.stats;
    stats.elapsed = started.elapsed();
    Ok(stats)
}

/// What [`refresh`] leaves: every skill's vector in the library's order (`dimensions` values
/// each, zeros for one the model gave an unusable vector), the model when it had to be loaded
/// to embed new or changed skills, and what was done.
struct Refreshed {
    vectors: Vectors,
    dimensions: usize,
    embedder: Option<Embedder>,
    stats: IndexStats,
}

/// The model being loaded on a thread of its own, started before the rest of an index is
/// built (the embedding cache read, the body facts gathered, the words indexed), so the two
/// overlap: loading the model is most of a warm start's cost.
pub struct ModelLoad {
    dir: PathBuf,
    thread: std::thread::JoinHandle<Result<Embedder, EmbedError>>,
}

impl ModelLoad {
    /// Starts loading the model in `model_dir`.
    pub fn start(model_dir: &Path) -> Self {
        let dir = model_dir.to_path_buf();
        let thread = std::thread::spawn({
            let dir = dir.clone();
            move || Embedder::load(&dir)
        });
        Self { dir, thread }
    }

    /// The loaded model (waiting for it), checked to have `dimensions`.
    fn finish(self, dimensions: usize) -> Result<Embedder, EmbedError> {
        // A load that panicked is loaded again here, where the panic shows.
        let embedder = match self.thread.join() {
            Ok(loaded) => loaded?,
            Err(_) => Embedder::load(&self.dir)?,
        };
        check_width(embedder, &self.dir, dimensions)
    }
}

/// Loads the model, checking it still has the width its fingerprint was read with.
fn load(model_dir: &Path, dimensions: usize) -> Result<Embedder, EmbedError> {
    check_width(Embedder::load(model_dir)?, model_dir, dimensions)
}

/// `embedder`, when it has the width its fingerprint was read with.
fn check_width(
    embedder: Embedder,
    model_dir: &Path,
    dimensions: usize,
) -> Result<Embedder, EmbedError> {
    if embedder.dimensions() != dimensions {
        return Err(EmbedError::ModelChanged {
            dir: model_dir.to_path_buf(),
        });
    }
    Ok(embedder)
}

fn refresh(
    library: &Library,
    model_dir: &Path,
    cache_dir: &Path,
    progress: &mut dyn FnMut(usize, usize),
    loading: &mut Option<ModelLoad>,
) -> Result<Refreshed, EmbedError> {
    let skills = library.skills();
    let texts: Vec<String> = skills
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
    // Keyed by the model's content and the encoder's version; the width is the model's own.
    let model = fingerprint(model_dir, Some(cache_dir))?;
    let cache_path = EmbeddingCache::path_for(cache_dir, &model.id);
    // Warm: every skill cached and used lately, read without loading the rest of the cache.
    if let Some(vectors) = EmbeddingCache::vectors_for(&cache_path, model.dimensions, &hashes) {
        return Ok(Refreshed {
            vectors,
            dimensions: model.dimensions,
            embedder: None,
            stats: IndexStats {
                embedded: 0,
                reused: texts.len(),
                elapsed: Duration::ZERO,
                warnings: Vec::new(),
            },
        });
    }
    let (mut cache, cache_warnings) = EmbeddingCache::open(&cache_path, model.dimensions);
    let mut warnings: Vec<IndexWarning> = cache_warnings
        .into_iter()
        .map(IndexWarning::Cache)
        .collect();
    let missing: Vec<usize> = (0..texts.len())
        .filter(|&i| cache.get(hashes[i]).is_none())
        .collect();
    let total = missing.len();
    let mut embedder = None;
    if total > 0 {
        let mut loaded = match loading.take() {
            Some(loading) => loading.finish(model.dimensions)?,
            None => load(model_dir, model.dimensions)?,
        };
        // Many batches: the layers are read once, not for each.
        loaded.keep_layers(true)?;
        let mut done = 0;
        for chunk in missing.chunks(PROGRESS_STEP) {
            let batch: Vec<&str> = chunk.iter().map(|&i| texts[i].as_str()).collect();
            for (&i, vector) in chunk.iter().zip(loaded.embed(&batch)?) {
                if let Err(reason) = cache.insert(hashes[i], vector) {
                    warnings.push(IndexWarning::UnusableVector {
                        skill: skills[i].name.clone(),
                        reason,
                    });
                }
            }
            done += chunk.len();
            progress(done, total);
        }
        loaded.keep_layers(false)?;
        embedder = Some(loaded);
    }
    for &hash in &hashes {
        cache.touch(hash);
    }
    // A cache that cannot be written only costs time next run; the user is told.
    if let Err(error) = cache.save() {
        warnings.push(IndexWarning::NotSaved {
            path: cache_path,
            message: error.to_string(),
        });
    }
    let stats = IndexStats {
        embedded: total,
        reused: texts.len() - total,
        elapsed: Duration::ZERO,
        warnings,
    };
    let dimensions = cache.dimensions();
    let mut vectors = Vec::with_capacity(hashes.len() * dimensions);
    for hash in &hashes {
        match cache.get(*hash) {
            Some(vector) => vectors.extend_from_slice(vector),
            // An unusable vector was not cached: a zero vector never clears a threshold.
            None => vectors.extend(std::iter::repeat_n(0.0, dimensions)),
        }
    }
    Ok(Refreshed {
        vectors: Vectors::in_memory(dimensions, vectors).ok_or(EmbedError::Encoder(
            skillet_retrieval::embed::BertError::Internal("vectors of the cache's width"),
        ))?,
        dimensions,
        embedder,
        stats,
    })
}

/// Skills embedded between two progress reports.
const PROGRESS_STEP: usize = 128;

fn names(library: &Library) -> Vec<String> {
    library.skills().iter().map(|s| s.name.clone()).collect()
}

/// The texts skills are ranked by words ([`skill_text`]: name, description, `when_to_use`,
/// tags).
fn own_texts(library: &Library) -> Vec<String> {
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

/// Where the facts of skills' bodies are kept ([`crate::facts`]): `$XDG_CACHE_HOME/skillet/index`,
/// else `~/.cache/skillet/index`.
pub fn facts_dir(xdg_cache_home: Option<&Path>, home: Option<&Path>) -> Option<PathBuf> {
    cache_dir(xdg_cache_home, home)
        .as_deref()
        .and_then(Path::parent)
        .map(|skillet| skillet.join(crate::facts::FACTS_DIR))
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

#[cfg(test)]
mod tests {

    use std::path::PathBuf;

    use skillet_skills::{Root, RootKind, discover};

    use super::*;

    fn model() -> Option<PathBuf> {
        skillet_test_support::embedding_model_or_skip("the index with the real model")
    }

    fn library() -> Library {
        let fixtures =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../skills/tests/fixtures/library");
        discover(&[Root::new(fixtures, RootKind::Explicit)])
    }

    /// The one cache file in `dir`.
    fn cache_file(dir: &Path) -> PathBuf {
        let files: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "bin"))
            .collect();
        assert_eq!(files.len(), 1, "{files:?}");
        files[0].clone()
    }

    /// A damaged cache is reported and rebuilt: the whole file when it does not parse, one
    /// entry when its bytes changed; the next run is clean and embeds nothing.
    #[test]
    fn a_damaged_cache_is_a_warning_and_is_rebuilt() {
        let Some(model) = model() else { return };
        let library = library();
        let skills = library.skills().len();
        assert!(skills > 2);
        let cache = tempfile::tempdir().unwrap();
        let first = refresh_cache(&library, &model, cache.path(), &mut |_, _| {}).unwrap();
        assert_eq!((first.embedded, first.reused), (skills, 0));
        assert_eq!(first.warnings, []);
        let file = cache_file(cache.path());

        std::fs::write(&file, b"SKEMB001 from an older skillet").unwrap();
        let rebuilt = refresh_cache(&library, &model, cache.path(), &mut |_, _| {}).unwrap();
        assert_eq!(rebuilt.embedded, skills);
        match rebuilt.warnings.as_slice() {
            [IndexWarning::Cache(CacheWarning::Unreadable { path, .. })] => assert_eq!(path, &file),
            other => panic!("{other:?}"),
        }
        assert!(
            rebuilt.warnings[0]
                .to_string()
                .ends_with("was unreadable (an older format, SKEMB001); rebuilding")
        );

        // One value of the first entry changed: that entry alone is embedded again.
        let mut bytes = std::fs::read(&file).unwrap();
        bytes[20 + 24 + 3] ^= 0x40;
        std::fs::write(&file, &bytes).unwrap();
        let (index, repaired) = SkillIndex::semantic(
            &library,
            &Facts::gather(&library, None),
            &model,
            cache.path(),
            &mut |_, _| {},
        )
        .unwrap();
        assert_eq!((repaired.embedded, repaired.reused), (1, skills - 1));
        assert!(
            matches!(
                repaired.warnings.as_slice(),
                [IndexWarning::Cache(CacheWarning::EntriesDropped {
                    corrupt: 1,
                    ..
                })]
            ),
            "{:?}",
            repaired.warnings
        );
        let (_, ranked) = index.rank("fill in a pdf form", Mode::Semantic, 1).unwrap();
        assert_eq!(index.name(ranked[0].index), "pdf");

        let clean = refresh_cache(&library, &model, cache.path(), &mut |_, _| {}).unwrap();
        assert_eq!((clean.embedded, clean.warnings.len()), (0, 0));
    }

    /// A cache that cannot be written is a warning, and the index still works.
    #[test]
    fn a_cache_that_cannot_be_saved_is_a_warning() {
        let Some(model) = model() else { return };
        let library = library();
        let cache = tempfile::tempdir().unwrap();
        refresh_cache(&library, &model, cache.path(), &mut |_, _| {}).unwrap();
        let file = cache_file(cache.path());
        // A folder where the file should be: neither read nor replaced.
        std::fs::remove_file(&file).unwrap();
        std::fs::create_dir(&file).unwrap();
        std::fs::write(file.join("keep"), b"").unwrap();
        let (index, stats) = SkillIndex::semantic(
            &library,
            &Facts::gather(&library, None),
            &model,
            cache.path(),
            &mut |_, _| {},
        )
        .unwrap();
        assert_eq!(stats.embedded, library.skills().len());
        assert!(
            matches!(
                stats.warnings.as_slice(),
                [
                    IndexWarning::Cache(CacheWarning::Unreadable { .. }),
                    IndexWarning::NotSaved { .. }
                ]
            ),
            "{:?}",
            stats.warnings
        );
        let (mode, _) = index.rank("fill in a pdf form", Mode::Hybrid, 1).unwrap();
        assert_eq!(mode, Mode::Hybrid);
    }
}
