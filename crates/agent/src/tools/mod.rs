//! The tools, one file each.

pub mod bash;
pub mod blocklist;
pub mod change;
pub mod edit_file;
pub mod glob;
pub mod grep;
pub mod load_skill;
pub mod read_file;
pub mod save_skill;
pub mod search_skills;
pub mod task;
pub mod todo_write;
pub mod write_file;
