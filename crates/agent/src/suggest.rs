//! Skill matching on each user message: a note of the skills that fit is appended to the
//! message (`suggest`), and with `auto` the best one's Layer 2 too. Only ever appended to the
//! new message; nothing sent before changes.

use std::collections::HashSet;
use std::fmt::Write as _;

use skillet_llm::ContentBlock;

use crate::config::{AgentConfig, SkillMatch};
use crate::event::AgentEvent;
use crate::tool::ToolContext;

/// The blocks of a new user message: the text, then (when skill matching is on, and the message
/// is not a skill the user `invoked` by hand) a note of the skills that fit and, for `auto`, the
/// best one's Layer 2. Empty text is left out.
pub(crate) fn compose_user_message(
    invoked: bool,
    config: &AgentConfig,
    tools: &ToolContext,
    injected: &mut HashSet<String>,
    audited: &crate::tools::load_skill::Audited,
    user_text: &str,
    events: &mut (dyn FnMut(AgentEvent) + Send),
) -> Vec<ContentBlock> {
    let mut content = Vec::new();
    if !user_text.trim().is_empty() {
        content.push(ContentBlock::text(user_text));
    }
    let (Some(index), mode) = (tools.skills.index(), config.skill_match) else {
        return content;
    };
    if mode == SkillMatch::Off || content.is_empty() || invoked {
        return content;
    }
    let library = tools.skills.library();
    let relevant = match skillet_library::triggers::suggestions(&index, &library, user_text) {
        Ok(relevant) => relevant,
        Err(error) => {
            events(AgentEvent::Notice(format!(
                "skill matching failed: {error}"
            )));
            return content;
        }
    };
    if relevant.is_empty() {
        return content;
    }
    let mut note = String::from(
        "<skill_suggestions>\nThese skills may fit this request; load one with load_skill if it does:\n",
    );
    for suggested in &relevant {
        let skill = suggested.skill;
        let description: String = skill.description.chars().take(200).collect();
        let _ = writeln!(note, "- {}: {description}", skill.name);
    }
    note.push_str("</skill_suggestions>");
    content.push(ContentBlock::text(note));
    let names: Vec<&str> = relevant.iter().map(|s| s.skill.name.as_str()).collect();
    events(AgentEvent::Notice(format!(
        "suggested skills: {}",
        names.join(", ")
    )));
    if mode == SkillMatch::Auto
        && let Some(best) = skillet_library::triggers::auto_pick(&relevant)
        && let skill = best.skill
        && !injected.contains(&skill.name)
        // A skill with dynamic context is only suggested: its commands run when the model
        // loads it (trust and permissions decide), never as a side effect of matching.
        && skill
            .read_body()
            .is_ok_and(|body| !skillet_skills::dynamic::has_commands(&body))
        && let Ok(body) = library.load(&skill.name, skillet_skills::Invoker::Model)
    {
        injected.insert(skill.name.clone());
        content.push(ContentBlock::text(body));
        tools.gate.activate(crate::grants::ActiveSkill::new(
            skill,
            tools.skill_trust.trusts(skill),
        ));
        events(AgentEvent::Notice(format!(
            "loaded skill {} for this request",
            skill.name
        )));
        if let Some(notice) = crate::tools::load_skill::audit_once(audited, skill) {
            events(AgentEvent::Notice(notice));
        }
    }
    content
}
