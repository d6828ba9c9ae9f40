//! Layer 1: the catalog of skills the model may invoke, fitted to a character budget.

use std::borrow::Cow;
use std::fmt::Write as _;

use crate::skill::Skill;

/// The default catalog budget, in characters (Claude Code's and Codex's default).
pub const DEFAULT_CATALOG_BUDGET: usize = 8_000;

/// Descriptions are never shortened below this many characters; past that, skills are dropped.
pub const MIN_DESCRIPTION_CHARS: usize = 40;

/// The mark that ends a shortened description.
const ELLIPSIS: char = '…';

/// How the catalog is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CatalogFormat {
    /// `  - name: description [tags]`, one line per skill.
    #[default]
    List,
    /// `<available_skills><skill><name>…</name><description>…</description><location>…</location></skill>…</available_skills>`.
    Xml,
}

/// A rendered catalog and what was cut to fit it into the budget.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Catalog {
    /// The text, empty when no skill is visible.
    pub text: String,
    /// How many skills it lists.
    pub listed: usize,
    /// What the budget cost.
    pub report: BudgetReport,
}

/// What was shortened or dropped to fit the budget. Nothing is dropped silently: a caller shows
/// this to the user when [`BudgetReport::is_cut`] is true.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BudgetReport {
    /// The budget, in characters.
    pub budget: usize,
    /// Characters the full catalog would have taken.
    pub full_chars: usize,
    /// Characters the rendered catalog takes.
    pub used_chars: usize,
    /// Names of the skills whose descriptions were shortened.
    pub shortened: Vec<String>,
    /// The length descriptions were shortened to, when any were.
    pub description_limit: Option<usize>,
    /// Names of the skills left out, in order.
    pub dropped: Vec<String>,
}

impl BudgetReport {
    /// True when anything was shortened or dropped.
    pub fn is_cut(&self) -> bool {
        !self.shortened.is_empty() || !self.dropped.is_empty()
    }

    /// One paragraph for the user, or `None` when nothing was cut.
    pub fn summary(&self) -> Option<String> {
        if !self.is_cut() {
            return None;
        }
        let mut text = format!(
            "the skill catalog needs {} characters, over its budget of {}:",
            self.full_chars, self.budget
        );
        if let Some(limit) = self.description_limit {
            let count = self.shortened.len();
            let noun = if count == 1 {
                "description"
            } else {
                "descriptions"
            };
            let _ = write!(text, " {count} {noun} shortened to {limit} characters;");
        }
        if self.dropped.is_empty() {
            text.pop();
        } else {
            let count = self.dropped.len();
            let noun = if count == 1 { "skill" } else { "skills" };
            let _ = write!(
                text,
                " {count} {noun} left out ({})",
                abbreviate_list(&self.dropped, 10)
            );
        }
        Some(text)
    }
}

/// `a, b, c and N more`.
fn abbreviate_list(names: &[String], shown: usize) -> String {
    let mut text = names
        .iter()
        .take(shown)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > shown {
        let _ = write!(text, " and {} more", names.len() - shown);
    }
    text
}

/// One catalog entry before rendering.
struct Entry<'a> {
    skill: &'a Skill,
    description: Cow<'a, str>,
}

/// Renders the catalog of the skills the model may invoke (those with
/// `disable-model-invocation` are left out), in the order given, within `budget` characters:
/// first every description is shortened evenly, then skills are dropped from the end.
pub fn render_catalog<'a>(
    skills: impl IntoIterator<Item = &'a Skill>,
    format: CatalogFormat,
    budget: usize,
) -> Catalog {
    let entries: Vec<Entry<'_>> = skills
        .into_iter()
        .filter(|skill| skill.model_invocable())
        .map(|skill| Entry {
            skill,
            description: Cow::Borrowed(skill.description.as_str()),
        })
        .collect();
    let full = render(&entries, format);
    let full_chars = full.chars().count();
    let mut report = BudgetReport {
        budget,
        full_chars,
        used_chars: full_chars,
        ..BudgetReport::default()
    };
    if full_chars <= budget {
        return Catalog {
            text: full,
            listed: entries.len(),
            report,
        };
    }
    let lengths: Vec<usize> = entries
        .iter()
        .map(|entry| entry.description.chars().count())
        .collect();
    let entry_costs: Vec<usize> = entries
        .iter()
        .map(|entry| entry_fixed_chars(entry, format))
        .collect();
    let wrapper = wrapper_chars(format);
    // Drop skills from the end until the shortest allowed descriptions fit.
    let mut count = entries.len();
    let mut fixed_kept: usize = wrapper + entry_costs.iter().sum::<usize>();
    let mut minimal_descriptions = shortened_total(&lengths, MIN_DESCRIPTION_CHARS);
    while count > 0 && fixed_kept + minimal_descriptions > budget {
        count -= 1;
        fixed_kept -= entry_costs[count];
        minimal_descriptions -= lengths[count].min(MIN_DESCRIPTION_CHARS);
    }
    let kept = &entries[..count];
    let limit = largest_limit(&lengths[..count], budget.saturating_sub(fixed_kept));
    let mut fitted: Vec<Entry<'_>> = Vec::with_capacity(count);
    for (entry, &length) in kept.iter().zip(&lengths) {
        let description = if length > limit {
            report.shortened.push(entry.skill.name.clone());
            Cow::Owned(shorten(&entry.description, limit))
        } else {
            entry.description.clone()
        };
        fitted.push(Entry {
            skill: entry.skill,
            description,
        });
    }
    if !report.shortened.is_empty() {
        report.description_limit = Some(limit);
    }
    report.dropped = entries[count..]
        .iter()
        .map(|entry| entry.skill.name.clone())
        .collect();
    let text = render(&fitted, format);
    report.used_chars = text.chars().count();
    Catalog {
        text,
        listed: count,
        report,
    }
}

/// Characters one entry takes apart from its raw description (its line end included). For XML,
/// what escaping adds to the description counts here too: shortening only lowers it.
fn entry_fixed_chars(entry: &Entry<'_>, format: CatalogFormat) -> usize {
    let mut line = String::new();
    render_entry(&mut line, entry.skill, "", format);
    let mut chars = line.chars().count() + 1;
    if format == CatalogFormat::Xml {
        chars += xml_escape(&entry.description).chars().count() - entry.description.chars().count();
    }
    chars
}

/// Characters the catalog takes around its entries.
fn wrapper_chars(format: CatalogFormat) -> usize {
    match format {
        // Entries count a line end each, one more than the list has: a harmless overestimate.
        CatalogFormat::List => 0,
        CatalogFormat::Xml => XML_OPEN.len() + 1 + XML_CLOSE.len(),
    }
}

/// Total description characters when each is cut to `limit`.
fn shortened_total(lengths: &[usize], limit: usize) -> usize {
    lengths.iter().map(|&length| length.min(limit)).sum()
}

/// The largest per-description limit whose total fits `available` (at least the minimum).
fn largest_limit(lengths: &[usize], available: usize) -> usize {
    let longest = lengths.iter().copied().max().unwrap_or(0);
    let (mut low, mut high) = (MIN_DESCRIPTION_CHARS, longest.max(MIN_DESCRIPTION_CHARS));
    while low < high {
        let middle = (low + high).div_ceil(2);
        if shortened_total(lengths, middle) <= available {
            low = middle;
        } else {
            high = middle - 1;
        }
    }
    low
}

/// Cuts `text` to `limit` characters, the last being an ellipsis, at a word boundary where one
/// is near.
fn shorten(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_string();
    }
    let keep = limit.saturating_sub(1);
    let cut: String = text.chars().take(keep).collect();
    let trimmed = match cut.rfind(' ') {
        Some(space) if space * 3 >= cut.len() * 2 => cut[..space].trim_end().to_string(),
        _ => cut,
    };
    format!("{trimmed}{ELLIPSIS}")
}

const XML_OPEN: &str = "<available_skills>";
const XML_CLOSE: &str = "</available_skills>";

fn render(entries: &[Entry<'_>], format: CatalogFormat) -> String {
    if entries.is_empty() {
        return String::new();
    }
    let mut text = String::new();
    if format == CatalogFormat::Xml {
        text.push_str(XML_OPEN);
        text.push('\n');
    }
    for entry in entries {
        render_entry(&mut text, entry.skill, &entry.description, format);
        text.push('\n');
    }
    match format {
        CatalogFormat::List => {
            text.pop();
        }
        CatalogFormat::Xml => text.push_str(XML_CLOSE),
    }
    text
}

/// One entry, without its line end.
fn render_entry(text: &mut String, skill: &Skill, description: &str, format: CatalogFormat) {
    match format {
        CatalogFormat::List => {
            let _ = write!(text, "  - {}: {description}", skill.name);
            let tags = &skill.frontmatter.tags;
            if !tags.is_empty() {
                let tags: Vec<_> = tags
                    .iter()
                    .map(|tag| crate::clean::escape_invisible(tag))
                    .collect();
                let _ = write!(text, " [{}]", tags.join(", "));
            }
        }
        CatalogFormat::Xml => {
            let _ = write!(
                text,
                "<skill><name>{}</name><description>{}</description><location>{}</location></skill>",
                xml_escape(&skill.name),
                xml_escape(description),
                xml_escape(&skill.file.to_string_lossy()),
            );
        }
    }
}

/// Escapes `&`, `<`, `>`, `"` and `'` for XML text and attributes.
pub fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorten_cuts_at_a_word_and_marks_it() {
        assert_eq!(shorten("alpha beta gamma delta", 15), "alpha beta…");
        assert_eq!(shorten("short", 15), "short");
        assert_eq!(shorten("abcdefghijklmnop", 5), "abcd…");
    }

    #[test]
    fn largest_limit_fits() {
        assert_eq!(largest_limit(&[100, 100], 200), 100);
        assert_eq!(largest_limit(&[100, 50], 120), 70);
        assert_eq!(largest_limit(&[100, 100], 10), MIN_DESCRIPTION_CHARS);
    }

    #[test]
    fn escape() {
        assert_eq!(xml_escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&apos;");
    }
}
