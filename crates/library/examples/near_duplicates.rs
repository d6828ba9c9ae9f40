//! How close the nearest other skill of each corpus skill is, by meaning: the measurement behind
//! `skills validate`'s advice that a description is nearly another's
//! ([`skillet_library::findability::NEAR_DUPLICATE_COSINE`]). Prints the distribution of each
//! skill's highest cosine with any other skill and sample pairs in each band, for a reader to
//! judge where "the same skill, said again" begins.
//!
//! `cargo run -p skillet-library --example near_duplicates` (the corpus at
//! `../shared/corpus` or `$SKILLET_CORPUS`, the model where `scripts/fetch-model.sh` puts it or
//! `$SKILLET_EMBED_MODEL`).

#![allow(clippy::print_stdout, clippy::unwrap_used, reason = "a measurement")]

use skillet_library::index::SkillIndex;
use skillet_skills::{Root, RootKind, discover};

fn main() {
    let (Some(corpus), Some(model)) = (
        skillet_test_support::corpus_dir(),
        skillet_test_support::embedding_model_dir(),
    ) else {
        println!("SKIPPED: needs the corpus and the embedding model");
        return;
    };
    let library = discover(&[Root::new(corpus, RootKind::Explicit)]);
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = std::env::var_os("SKILLET_EMBED_CACHE")
        .map_or_else(|| cache.path().to_path_buf(), std::path::PathBuf::from);
    let (index, _) = SkillIndex::semantic(
        &library,
        &skillet_library::facts::Facts::gather(&library, None),
        &model,
        &cache_dir,
        &mut |_, _| {},
    )
    .unwrap();
    let skills = library.skills();
    let bands = [0.70, 0.75, 0.80, 0.85, 0.90, 0.95, 0.98];
    let mut counts = vec![0usize; bands.len()];
    let mut samples: Vec<Vec<String>> = vec![Vec::new(); bands.len()];
    for (at, skill) in skills.iter().enumerate() {
        let Some((other, cosine)) = index.closest(at) else {
            continue;
        };
        let Some(band) = bands.iter().rposition(|low| cosine >= *low) else {
            continue;
        };
        counts[band] += 1;
        // Each pair once.
        if at < other && samples[band].len() < 8 {
            let short = |text: &str| text.chars().take(90).collect::<String>();
            samples[band].push(format!(
                "  {cosine:.3}  {} | {}\n         {}\n         {}",
                skill.name,
                skills[other].name,
                short(&skill.description),
                short(&skills[other].description)
            ));
        }
    }
    println!("{} skills; nearest other skill's cosine:", skills.len());
    for (band, low) in bands.iter().enumerate() {
        println!("≥ {low:.2}: {} skills", counts[band]);
        for sample in &samples[band] {
            println!("{sample}");
        }
    }
}
