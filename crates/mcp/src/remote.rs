//! The skill source (the shared registry) in the server: `search_skills` searches it beside the
//! library, `load_skill` and `read_skill_file` take its `OWNER/NAME[@SEQ]` references, and its
//! changes are followed. A registry skill is fetched into a verified cache and served as text
//! only ([`render_fetched`]): nothing in it runs and nothing marks it as the user's. A source
//! that fails is said in the result; the library's own results still come.

use std::path::Path;
use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use skillet_library::source::{
    SkillRef, SkillSource, SourceChange, fetched_skill, fetched_text, search_with,
};
use skillet_skills::read_head_in_skill;

use crate::state::{Changes, Shared};
use crate::tools::{self, MAX_FILE_TEXT_BYTES, echoed};

/// Answers a tool call that involves the source: `search_skills`, or `load_skill` and
/// `read_skill_file` naming a reference (`OWNER/NAME[@SEQ]`). `None`: the library alone
/// answers.
pub(crate) async fn call(
    shared: &Shared,
    source: &Arc<dyn SkillSource>,
    name: &str,
    arguments: &JsonObject,
) -> Option<Result<CallToolResult, McpError>> {
    match name {
        "search_skills" => Some(search(shared, source, arguments.clone()).await),
        // A reference is always the source's: no local skill can pass for it.
        "load_skill" | "read_skill_file" => {
            let asked = arguments.get("name").and_then(|name| name.as_str())?;
            let reference = SkillRef::parse(asked)?;
            Some(Ok(fetched_call(
                shared, source, name, &reference, arguments,
            )
            .await))
        }
        _ => None,
    }
}

async fn search(
    shared: &Shared,
    source: &Arc<dyn SkillSource>,
    arguments: JsonObject,
) -> Result<CallToolResult, McpError> {
    let searched = crate::server::blocking(shared, move |snapshot| {
        // The query's vector is the one the library was ranked with (by words: none).
        let local = tools::search_local(snapshot, &arguments)?;
        Ok::<_, String>((local, Arc::clone(&snapshot.library)))
    })
    .await?;
    let (local, library) = match searched {
        Ok(parts) => parts,
        Err(message) => return Ok(CallToolResult::error(vec![ContentBlock::text(message)])),
    };
    let (found, notes) = search_with(
        source.as_ref(),
        local.found.clone(),
        &library,
        &local.query,
        local.vector.as_deref(),
        local.k,
    )
    .await;
    for note in &notes {
        crate::log_at(crate::LogLevel::Error, &format!("registry: {note}"));
    }
    Ok(tools::search_result(&local, &found, &notes))
}

/// `load_skill` or `read_skill_file` for a registry skill: its version fetched (verified, from
/// the cache when there; a version fetched before is reused), then read off the async threads.
async fn fetched_call(
    shared: &Shared,
    source: &Arc<dyn SkillSource>,
    tool: &str,
    reference: &SkillRef,
    arguments: &JsonObject,
) -> CallToolResult {
    let error = |message: String| CallToolResult::error(vec![ContentBlock::text(message)]);
    let remembered = shared.fetched(reference);
    // A copy remembered is checked again (off the async threads): an edited one is fetched anew.
    let verified = match remembered {
        Some(fetched) => {
            let source = Arc::clone(source);
            tokio::task::spawn_blocking(move || source.still_verified(&fetched).then_some(fetched))
                .await
                .ok()
                .flatten()
        }
        None => None,
    };
    let fetched = match verified {
        Some(fetched) => fetched,
        None => match source.fetch(reference).await {
            Ok(fetched) => {
                shared.remember_fetched(reference, &fetched);
                fetched
            }
            Err(why) => return error(format!("cannot load {reference}: {why}")),
        },
    };
    let source = Arc::clone(source);
    let tool = tool.to_string();
    let arguments = arguments.clone();
    let answered = tokio::task::spawn_blocking(move || {
        if tool == "load_skill" {
            let given = match arguments.get("arguments") {
                None | Some(serde_json::Value::Null) => None,
                Some(serde_json::Value::String(text)) => Some(text.clone()),
                Some(_) => return Err("'arguments' must be a string".to_string()),
            };
            return fetched_text(&fetched, source.as_ref(), given.as_deref()).map(|(_, text)| text);
        }
        let Some(skill) = fetched_skill(&fetched) else {
            return Err(format!(
                "cannot read {}: its copy holds no readable SKILL.md named {}",
                fetched.skill, fetched.skill.name
            ));
        };
        let Some(path) = arguments.get("path").and_then(|path| path.as_str()) else {
            return Err("'path' is required".to_string());
        };
        crate::uri::refuse_hidden(&skill.dir, path)
            .map_err(|why| format!("cannot read '{}': {why}", echoed(path)))?;
        let (head, size) =
            read_head_in_skill(&skill, Path::new(path), MAX_FILE_TEXT_BYTES as u64 + 4).map_err(
                |why| {
                    format!(
                        "cannot read '{}' in skill {}: {}",
                        echoed(path),
                        fetched.skill,
                        tools::read_error(&why)
                    )
                },
            )?;
        Ok(tools::file_text(path, &head, size))
    })
    .await;
    match answered {
        Ok(Ok(text)) => CallToolResult::success(vec![ContentBlock::text(text)]),
        Ok(Err(message)) => error(message),
        Err(join) => error(format!("the request failed: {join}")),
    }
}

/// Follows the source's changes for as long as the server runs: each is logged, and after a
/// burst of them the source's skills are counted again; when the count changed, every session
/// is told the tools changed (their description gives it), as a change on disk is told.
pub(crate) async fn follow(shared: Shared) {
    let Some(source) = shared.source().cloned() else {
        return;
    };
    let recount = Arc::new(tokio::sync::Notify::new());
    let counter = {
        let shared = shared.clone();
        let recount = Arc::clone(&recount);
        async move {
            loop {
                if shared.recount_source().await {
                    shared.publish(Changes {
                        tools: true,
                        prompts: false,
                        resources: false,
                    });
                }
                recount.notified().await;
            }
        }
    };
    let told = Arc::clone(&recount);
    let forget = shared.clone();
    let following = source.follow(Box::new(move |change| {
        match change {
            SourceChange::Published(skill) => {
                crate::log(&format!(
                    "registry: {} published",
                    echoed(&skill.to_string())
                ));
            }
            SourceChange::Yanked(skill) => {
                crate::log(&format!("registry: {} yanked", echoed(&skill.to_string())));
                // What was fetched says whether it is yanked: fetched again from now on.
                forget.forget_fetched();
            }
            SourceChange::Lost(why) => {
                crate::log_at(
                    crate::LogLevel::Error,
                    &format!("registry: {why}; trying again"),
                );
                return true;
            }
            SourceChange::Back => {
                crate::log("registry: reachable again; catching up");
                forget.forget_fetched();
            }
        }
        told.notify_one();
        true
    }));
    tokio::select! {
        () = following => {}
        () = counter => {}
    }
}
