//! Would a request trigger a skill? The rule the agent applies to every user message
//! ([`suggestions`], [`auto_pick`]: the same functions), and trigger tests built on it: a skill's
//! `evals/triggers.json` lists requests that `should` suggest it and requests that `should_not`
//! ([`Triggers`], [`test_skill`]).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use skillet_retrieval::embed::EmbedError;
use skillet_retrieval::{Mode, Ranked};
use skillet_skills::{Library, Skill};

use crate::index::SkillIndex;

/// At most this many skills are suggested for one message.
pub const MAX_SUGGESTIONS: usize = 3;
/// The blended score the best suggestion needs for `auto` to load it with the message.
pub const AUTO_LOAD_SCORE: f32 = 0.5;
/// Where a skill keeps its trigger tests, relative to its folder.
pub const TRIGGERS_FILE: &str = "evals/triggers.json";
/// The largest trigger file read.
pub const MAX_TRIGGERS_BYTES: u64 = 1024 * 1024;

/// A skill suggested for a request, with its ranking.
#[derive(Debug, Clone, Copy)]
pub struct Suggested<'a> {
    /// The skill.
    pub skill: &'a Skill,
    /// Where and how it ranked.
    pub ranked: Ranked,
}

/// The skills suggested for `request`: among the [`MAX_SUGGESTIONS`] best (hybrid), those over
/// the relevance threshold that the model may load.
pub fn suggestions<'a>(
    index: &SkillIndex,
    library: &'a Library,
    request: &str,
) -> Result<Vec<Suggested<'a>>, EmbedError> {
    let (_, ranked) = index.rank(request, Mode::Hybrid, MAX_SUGGESTIONS)?;
    Ok(suggested_from(index, library, &ranked))
}

/// The suggestions a ranking (best first, of any length) makes: among its first
/// [`MAX_SUGGESTIONS`], those over the threshold that the model may load.
fn suggested_from<'a>(
    index: &SkillIndex,
    library: &'a Library,
    ranked: &[Ranked],
) -> Vec<Suggested<'a>> {
    ranked
        .iter()
        .take(MAX_SUGGESTIONS)
        .filter(|ranked| ranked.relevant)
        .filter_map(|ranked| {
            library
                .get(index.name(ranked.index))
                .map(|skill| Suggested {
                    skill,
                    ranked: *ranked,
                })
        })
        .filter(|suggested| suggested.skill.model_invocable())
        .collect()
}

/// The suggestion `auto` loads with the message: the first, when its score reaches
/// [`AUTO_LOAD_SCORE`].
pub fn auto_pick<'a, 'b>(suggestions: &'b [Suggested<'a>]) -> Option<&'b Suggested<'a>> {
    suggestions
        .first()
        .filter(|first| first.ranked.score >= AUTO_LOAD_SCORE)
}

/// Why a trigger file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TriggersError {
    /// It could not be read.
    #[error("{path}: {message}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// It is not the shape a trigger file has.
    #[error(
        "{path}: {message}\n  hint: a trigger file is {{\"should\": [\"a request…\"], \"should_not\": [\"…\"]}}"
    )]
    Shape {
        /// The file.
        path: PathBuf,
        /// What is wrong, in serde's words.
        message: String,
    },
}

/// A skill's trigger tests: requests that should suggest it, and requests that should not.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Triggers {
    /// Requests that should suggest the skill.
    #[serde(default)]
    pub should: Vec<String>,
    /// Requests that should not.
    #[serde(default)]
    pub should_not: Vec<String>,
}

impl Triggers {
    /// Reads and checks a trigger file: a regular file of at most [`MAX_TRIGGERS_BYTES`], the
    /// JSON shape above, every request non-blank, at least one request in all.
    pub fn read(path: &Path) -> Result<Self, TriggersError> {
        let read_error = |message: String| TriggersError::Read {
            path: path.to_path_buf(),
            message,
        };
        let mut file =
            skillet_skills::open_regular(path).map_err(|error| read_error(error.to_string()))?;
        let mut bytes = Vec::new();
        if skillet_skills::read_capped(&mut file, &mut bytes, MAX_TRIGGERS_BYTES)
            .map_err(|error| read_error(error.to_string()))?
        {
            return Err(read_error(format!(
                "over the {MAX_TRIGGERS_BYTES}-byte limit for a trigger file"
            )));
        }
        let triggers: Self =
            serde_json::from_slice(&bytes).map_err(|error| TriggersError::Shape {
                path: path.to_path_buf(),
                message: error.to_string(),
            })?;
        triggers.check().map_err(|message| TriggersError::Shape {
            path: path.to_path_buf(),
            message,
        })?;
        Ok(triggers)
    }

    /// What is wrong with the requests, if anything.
    fn check(&self) -> Result<(), String> {
        if self.should.is_empty() && self.should_not.is_empty() {
            return Err("no request: `should` and `should_not` are both empty".into());
        }
        for (list, requests) in [("should", &self.should), ("should_not", &self.should_not)] {
            if let Some(at) = requests
                .iter()
                .position(|request| request.trim().is_empty())
            {
                return Err(format!("{list}[{at}] is blank"));
            }
        }
        Ok(())
    }

    /// The template `skills new` writes: one request of each kind to replace.
    pub fn template(name: &str) -> String {
        let template = Self {
            should: vec![format!(
                "a request in a user's words that {name} should handle (replace me)"
            )],
            should_not: vec![
                "a nearby request that another skill, or none, should handle (replace me)".into(),
            ],
        };
        serde_json::to_string_pretty(&template).unwrap_or_default() + "\n"
    }
}

/// How one request fared against one skill.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent facts of one result, reported as they are"
)]
pub struct Outcome {
    /// The request.
    pub request: String,
    /// Whether it should suggest the skill.
    pub should: bool,
    /// The skill's place among all skills (1 = first), hybrid.
    pub rank: Option<usize>,
    /// Its blended score there.
    pub score: Option<f32>,
    /// Its relevance score when ranked by words and meaning (what the threshold,
    /// [`skillet_retrieval::RELEVANCE_THRESHOLD`], applies to: how much of the request's own
    /// words it holds, with meaning, not its share of the best score); `None` by words only,
    /// where the threshold applies to the score.
    pub relevance: Option<f32>,
    /// Whether it clears the relevance threshold.
    pub relevant: bool,
    /// Whether it would be suggested (among the [`MAX_SUGGESTIONS`] best, over the threshold).
    pub suggested: bool,
    /// Whether `auto` would load it with the message.
    pub auto_loaded: bool,
    /// The skills ranked above it (at most [`MAX_SUGGESTIONS`]).
    pub above: Vec<String>,
    /// `should` and suggested, or `should_not` and not.
    pub passed: bool,
}

/// Runs a skill's trigger tests: each request ranked against the whole library.
pub fn test_skill(
    index: &SkillIndex,
    library: &Library,
    skill: &str,
    triggers: &Triggers,
) -> Result<Vec<Outcome>, EmbedError> {
    let requests = triggers
        .should
        .iter()
        .map(|request| (request, true))
        .chain(triggers.should_not.iter().map(|request| (request, false)));
    let document = (0..library.skills().len()).find(|&at| index.name(at) == skill);
    let mut outcomes = Vec::new();
    for (request, should) in requests {
        // One ranking: its head is what a session suggests from, and it places the skill.
        let explained = index.rank_explained(request, Mode::Hybrid, MAX_SUGGESTIONS, document)?;
        let head: Vec<Ranked> = explained.top.iter().map(|(ranked, _)| *ranked).collect();
        let suggested_now = suggested_from(index, library, &head);
        let suggested = suggested_now.iter().any(|s| s.skill.name == skill);
        let auto_loaded = auto_pick(&suggested_now).is_some_and(|s| s.skill.name == skill);
        let placed = explained.also.filter(|placed| placed.rank.is_some());
        outcomes.push(Outcome {
            request: request.clone(),
            should,
            rank: placed.as_ref().and_then(|placed| placed.rank),
            score: placed.as_ref().map(|placed| placed.why.score),
            relevance: placed.as_ref().and_then(|placed| placed.why.relevance),
            relevant: placed.as_ref().is_some_and(|placed| placed.why.relevant),
            suggested,
            auto_loaded,
            // What ranked above it (unranked: the head).
            above: placed
                .as_ref()
                .map_or(head.as_slice(), |placed| placed.above.as_slice())
                .iter()
                .take(MAX_SUGGESTIONS)
                .map(|ranked| index.name(ranked.index).to_string())
                .collect(),
            passed: suggested == should,
        });
    }
    Ok(outcomes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trigger_file_is_checked_and_named_in_its_errors() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("triggers.json");
        let read = |text: &str| {
            std::fs::write(&path, text).unwrap();
            Triggers::read(&path)
        };
        assert_eq!(
            read(r#"{"should": ["fill the form"], "should_not": ["draw a cat"]}"#).unwrap(),
            Triggers {
                should: vec!["fill the form".into()],
                should_not: vec!["draw a cat".into()]
            }
        );
        for (text, said) in [
            (r#"{"shoud": ["x"]}"#, "unknown field `shoud`"),
            (r#"{"should": [1]}"#, "invalid type"),
            ("{}", "no request"),
            (r#"{"should": ["ok", "  "]}"#, "should[1] is blank"),
            ("not json", "expected"),
        ] {
            let error = read(text).unwrap_err().to_string();
            assert!(error.contains(said), "{text}: {error}");
            assert!(error.contains("triggers.json"), "{error}");
        }
        // The template is a valid trigger file.
        assert!(read(&Triggers::template("pdf")).is_ok());
    }

    #[test]
    fn outcomes_follow_the_suggestion_rule() {
        let temp = tempfile::tempdir().unwrap();
        // Words weigh more among many skills: twenty others around the two that matter.
        let others: Vec<(String, String)> = (0..20)
            .map(|n| {
                (
                    format!("other{n}"),
                    format!("Unrelated task number {n} about topic{n}"),
                )
            })
            .collect();
        let named = [
            (
                "pdf".to_string(),
                "Fill PDF forms and extract text from PDF files".to_string(),
            ),
            (
                "git".to_string(),
                "Clean up git branches and rewrite commit history".to_string(),
            ),
        ];
        for (name, description) in named.iter().chain(&others) {
            let dir = temp.path().join(name);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(
                dir.join("SKILL.md"),
                format!("---\nname: {name}\ndescription: {description}\n---\nBody\n"),
            )
            .unwrap();
        }
        let library = skillet_skills::discover(&[skillet_skills::Root::new(
            temp.path(),
            skillet_skills::RootKind::User,
        )]);
        let index = SkillIndex::lexical(&library);
        let triggers = Triggers {
            should: vec![
                "fill the pdf forms and extract pdf text".into(),
                "rebase my branch".into(),
            ],
            should_not: vec!["clean up git branches and commit history".into()],
        };
        let outcomes = test_skill(&index, &library, "pdf", &triggers).unwrap();
        assert_eq!(outcomes[0].rank, Some(1));
        assert!(outcomes[0].suggested && outcomes[0].passed);
        // Sharing no word, it is not found by words at all.
        assert_eq!(outcomes[1].rank, None);
        assert!(!outcomes[1].passed);
        assert!(!outcomes[2].suggested && outcomes[2].passed);
        assert_eq!(outcomes[2].above, ["git"]);
    }
}
