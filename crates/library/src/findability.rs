//! Whether a model can tell a skill from the others in its library: `skills validate` advises
//! on a description that means nearly what another skill's says ([`near_duplicate`]). The
//! text-only advice (too few words, no "use when" clause) is the engine's
//! (`skillet_skills::has_trigger_clause`, `MIN_DESCRIPTION_WORDS`).

use skillet_skills::{Library, Skill};

use crate::index::SkillIndex;

/// The cosine between two skills' texts (as the index embeds them) from which they count as
/// nearly the same. Measured over the 1,761-skill corpus
/// (`cargo run -p skillet-library --example near_duplicates`): pairs at 0.90 and above are
/// copies of one template told apart by a product name or a word ("Automate Mem tasks via
/// Rube MCP" / "Automate Mem0 tasks …", 0.973; two "You are a documentation expert …" skills,
/// 0.932); between 0.85 and 0.90 they are related but distinct (`c4-component` and
/// `c4-container`, 0.864; `tdd-workflows-tdd-green` and `-red`, 0.865). 100 of the 1,761
/// skills have a neighbour at 0.90 or above.
pub const NEAR_DUPLICATE_COSINE: f32 = 0.90;

/// Another skill of the library that means nearly what `skill` says, and how nearly.
#[derive(Debug, Clone, Copy)]
pub struct NearDuplicate<'a> {
    /// The other skill.
    pub other: &'a Skill,
    /// The cosine of their texts.
    pub cosine: f32,
}

/// The skill of `library` (ranked by `index`) nearest in meaning to its skill at `at`, when at
/// or above [`NEAR_DUPLICATE_COSINE`]; `None` without a model or when none is that near.
pub fn near_duplicate<'a>(
    index: &SkillIndex,
    library: &'a Library,
    at: usize,
) -> Option<NearDuplicate<'a>> {
    let (other, cosine) = index.closest(at)?;
    (cosine >= NEAR_DUPLICATE_COSINE).then(|| NearDuplicate {
        other: &library.skills()[other],
        cosine,
    })
}
