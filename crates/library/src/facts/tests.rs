use std::fs;
use std::os::unix::fs::PermissionsExt as _;

use super::*;
use crate::testing::{Fixture, settle, skill, write};

fn fixture() -> Fixture {
    Fixture::with(&[
        (
            "alpha",
            "Deploy the services. Branch: !`git branch --show-current`",
        ),
        ("beta", "Redline contracts and review clauses."),
    ])
}

fn library(fixture: &Fixture) -> Library {
    fixture.library()
}

/// Every skill's facts as plain values, by name: what a session would use.
fn facts_of(library: &Library, facts: &Facts) -> Vec<(String, Vec<String>, Vec<String>)> {
    let mut all: Vec<_> = library
        .skills()
        .iter()
        .enumerate()
        .map(|(index, skill)| {
            (
                skill.name.clone(),
                facts
                    .body_words()
                    .unwrap()
                    .terms(index)
                    .map(str::to_string)
                    .collect(),
                facts.commands(index).to_vec(),
            )
        })
        .collect();
    all.sort();
    all
}

/// What reading every body now gives: the truth the kept facts must equal.
fn fresh(library: &Library) -> Vec<(String, Vec<String>, Vec<String>)> {
    facts_of(library, &Facts::gather(library, None))
}

#[test]
fn a_warm_start_reads_no_body_and_gives_what_reading_them_gives() {
    let fixture = fixture();
    settle();
    let library = library(&fixture);
    let cold = Facts::gather(&library, Some(&fixture.cache));
    assert_eq!(cold.stats(), FactStats { reused: 0, read: 2 });
    let warm = Facts::gather(&library, Some(&fixture.cache));
    assert_eq!(warm.stats(), FactStats { reused: 2, read: 0 });
    assert_eq!(facts_of(&library, &warm), fresh(&library));
    let alpha = facts_of(&library, &warm).remove(0);
    assert_eq!(alpha.2, vec!["git branch --show-current".to_string()]);
    assert!(
        alpha.1.contains(&"deploi".to_string()) || alpha.1.iter().any(|t| t.starts_with("deploy"))
    );
}

#[test]
fn an_edit_that_keeps_size_and_modification_time_is_still_seen() {
    let fixture = fixture();
    settle();
    let library = library(&fixture);
    let _ = Facts::gather(&library, Some(&fixture.cache));
    let file = fixture.skills.join("beta/SKILL.md");
    let before = fs::metadata(&file).unwrap();
    let text = fs::read_to_string(&file).unwrap();
    // Same length, its modification time set back: only the change time tells.
    let edited = text.replace("Redline contracts", "Rotates passwords");
    assert_eq!(edited.len(), text.len());
    fs::write(&file, edited).unwrap();
    let times = fs::FileTimes::new().set_modified(before.modified().unwrap());
    fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_times(times)
        .unwrap();
    let library = self::library(&fixture);
    let again = Facts::gather(&library, Some(&fixture.cache));
    assert_eq!(again.stats().read, 1);
    assert_eq!(facts_of(&library, &again), fresh(&library));
}

#[test]
fn skills_added_removed_renamed_and_swapped_for_links_give_the_right_facts() {
    let fixture = fixture();
    settle();
    let _ = Facts::gather(&library(&fixture), Some(&fixture.cache));
    // Added, removed, renamed.
    write(
        &fixture.skills.join("gamma/SKILL.md"),
        &skill("gamma", "Plot charts: !`python3 plot.py`"),
    );
    fs::remove_dir_all(fixture.skills.join("beta")).unwrap();
    fs::rename(fixture.skills.join("alpha"), fixture.skills.join("alpha2")).unwrap();
    let library = self::library(&fixture);
    let changed = Facts::gather(&library, Some(&fixture.cache));
    assert_eq!(facts_of(&library, &changed), fresh(&library));
    // A folder swapped for a link to another with a different body.
    let elsewhere = fixture.skills.parent().unwrap().join("elsewhere/gamma");
    write(
        &elsewhere.join("SKILL.md"),
        &skill("gamma", "Something else entirely: !`make all`"),
    );
    fs::remove_dir_all(fixture.skills.join("gamma")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, fixture.skills.join("gamma")).unwrap();
    let library = self::library(&fixture);
    let swapped = Facts::gather(&library, Some(&fixture.cache));
    assert_eq!(facts_of(&library, &swapped), fresh(&library));
}

#[test]
fn a_racy_file_is_read_again_and_a_modification_time_ahead_is_not_racy() {
    let fixture = fixture();
    // Just changed (its change time within the racy window, however slow the machine: the
    // gathering follows at once): not trusted as unchanged.
    let ahead = SystemTime::now() + Duration::from_hours(2);
    for name in ["alpha", "beta"] {
        fs::File::options()
            .write(true)
            .open(fixture.skills.join(name).join("SKILL.md"))
            .unwrap()
            .set_times(fs::FileTimes::new().set_modified(ahead))
            .unwrap();
    }
    let library = library(&fixture);
    let _ = Facts::gather(&library, Some(&fixture.cache));
    let again = Facts::gather(&library, Some(&fixture.cache));
    assert!(again.stats().reused < 2, "{:?}", again.stats());
    // Settled, the modification time set ahead (an archive from a clock ahead) does not keep
    // them "just changed" for good.
    settle();
    let _ = Facts::gather(&library, Some(&fixture.cache));
    let settled = Facts::gather(&library, Some(&fixture.cache));
    assert_eq!(settled.stats(), FactStats { reused: 2, read: 0 });
}

#[test]
fn a_torn_garbled_or_foreign_file_is_rebuilt_never_used() {
    let fixture = fixture();
    settle();
    let library = library(&fixture);
    let _ = Facts::gather(&library, Some(&fixture.cache));
    let file = fixture
        .cache
        .join(library_file_name(&library, FACTS_PREFIX));
    let whole = fs::read(&file).unwrap();
    let mut garbled = whole.clone();
    let middle = garbled.len() / 2;
    garbled[middle] ^= 0x40;
    for damaged in [&whole[..whole.len() / 2], &garbled[..], b"SKFACT02"] {
        fs::write(&file, damaged).unwrap();
        let facts = Facts::gather(&library, Some(&fixture.cache));
        assert_eq!(facts.stats().reused, 0);
        assert_eq!(facts_of(&library, &facts), fresh(&library));
    }
    // Others may write it: not read.
    let _ = Facts::gather(&library, Some(&fixture.cache));
    fs::set_permissions(&file, fs::Permissions::from_mode(0o666)).unwrap();
    assert_eq!(
        Facts::gather(&library, Some(&fixture.cache)).stats().reused,
        0
    );
}

#[test]
fn builders_at_once_leave_a_whole_file() {
    let fixture = fixture();
    for index in 0..40 {
        write(
            &fixture.skills.join(format!("s{index}/SKILL.md")),
            &skill(
                &format!("s{index}"),
                &format!("Words number {index}: !`echo {index}`"),
            ),
        );
    }
    settle();
    let library = library(&fixture);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                let facts = Facts::gather(&library, Some(&fixture.cache));
                assert_eq!(facts_of(&library, &facts), fresh(&library));
            });
        }
    });
    let after = Facts::gather(&library, Some(&fixture.cache));
    assert_eq!(after.stats().read, 0, "one builder's whole file");
    assert_eq!(facts_of(&library, &after), fresh(&library));
}
