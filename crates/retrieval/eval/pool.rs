//! The collections of the corpus's ~500-skill evaluation pool (all but the two largest): what
//! `examples/eval.rs` ranks over and the evaluation sets are labelled against.

/// The pool's collections, by folder name under the corpus.
pub const POOL: [&str; 9] = [
    "anthropics-claude-plugins-official",
    "anthropics-skills",
    "openai-skills",
    "obra-superpowers",
    "vercel-agent-skills",
    "mattpocock-skills",
    "trailofbits-skills",
    "wshobson-agents",
    "kdense-scientific-skills",
];
