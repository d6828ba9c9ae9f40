//! The catalog a session gives the model, and its budget.

use skillet_library::index::SkillIndex;
use skillet_llm::context_window;
use skillet_skills::{CatalogFormat, Library, render_catalog};

/// The catalog budget as a share of the context window: 1% (Claude Code's), 4 characters a
/// token, within these bounds.
pub const CATALOG_BUDGET_BOUNDS: (usize, usize) = (2_000, 32_000);

/// The catalog a session gives the model: every skill within `budget`; when they do not all fit
/// and an index is at hand, the skills closest to the first message (when known) come first, and
/// `search_skills` is offered for the rest (the `bool`). `skillet skills catalog` shows the same.
pub fn session_catalog(
    library: &Library,
    budget: usize,
    index: Option<&SkillIndex>,
    first_message: Option<&str>,
) -> (skillet_skills::Catalog, bool) {
    let mut catalog = render_catalog(library.skills(), CatalogFormat::List, budget);
    let search = !catalog.report.dropped.is_empty() && index.is_some();
    if search
        && let (Some(index), Some(first)) = (index, first_message)
        && let Ok((_, ranked)) = index.rank(
            first,
            skillet_retrieval::Mode::Hybrid,
            library.skills().len(),
        )
    {
        let mut ordered: Vec<&skillet_skills::Skill> =
            ranked.iter().map(|r| &library.skills()[r.index]).collect();
        let listed: std::collections::HashSet<&str> =
            ordered.iter().map(|s| s.name.as_str()).collect();
        ordered.extend(
            library
                .skills()
                .iter()
                .filter(|s| !listed.contains(s.name.as_str())),
        );
        catalog = render_catalog(ordered, CatalogFormat::List, budget);
    }
    (catalog, search)
}

/// The catalog budget for a model: 1% of its context window at 4 characters a token.
pub fn catalog_budget(model: &str) -> usize {
    let window = usize::try_from(context_window(model)).unwrap_or(usize::MAX);
    (window.saturating_mul(4) / 100).clamp(CATALOG_BUDGET_BOUNDS.0, CATALOG_BUDGET_BOUNDS.1)
}
