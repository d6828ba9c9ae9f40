use std::fs;
use std::os::unix::fs::PermissionsExt as _;

use skillet_skills::Library;

use crate::facts::Facts;
use crate::index::word_matcher;
use crate::testing::{Fixture, settle, skill, write};

fn fixture() -> Fixture {
    Fixture::with(&[
        (
            "alpha",
            "Deploy the services with argocd, then verify rollouts.",
        ),
        ("beta", "Redline contracts and review clauses."),
        ("charts", "Plot a chart of monthly sales figures."),
    ])
}

fn library(fixture: &Fixture) -> Library {
    fixture.library()
}

const QUERIES: [&str; 6] = [
    "deploy services",
    "argo cd rollouts",
    "redline contract clauses",
    "monthly sales chart",
    "rotate passwords",
    "something else entirely",
];

/// Both word indexes' scores for every query, as bits, by skill name: what ranking sees.
fn scores(library: &Library, matcher: &skillet_retrieval::Matcher) -> Vec<(String, Vec<u32>)> {
    let (own, blend) = matcher.word_indexes();
    let blend = blend.expect("a blend index");
    let mut all: Vec<(String, Vec<u32>)> = library
        .skills()
        .iter()
        .enumerate()
        .map(|(index, skill)| {
            let bits = QUERIES
                .iter()
                .flat_map(|query| [own.scores(query)[index], blend.scores(query)[index]])
                .map(f32::to_bits)
                .collect();
            (skill.name.clone(), bits)
        })
        .collect();
    all.sort();
    all
}

/// The indexes as kept (or built and kept) under the fixture's cache.
fn kept(fixture: &Fixture, library: &Library) -> Vec<(String, Vec<u32>)> {
    let facts = Facts::gather(library, Some(&fixture.cache));
    scores(library, &word_matcher(library, &facts))
}

/// The truth: every body read now, nothing kept.
fn fresh(library: &Library) -> Vec<(String, Vec<u32>)> {
    scores(
        library,
        &word_matcher(library, &Facts::gather(library, None)),
    )
}

/// The word index file's identity (a rewrite renames a new file over it).
fn written(fixture: &Fixture) -> Option<(u64, std::time::SystemTime)> {
    use std::os::unix::fs::MetadataExt as _;
    let entry = fs::read_dir(&fixture.cache)
        .ok()?
        .filter_map(Result::ok)
        .find(|entry| entry.file_name().to_string_lossy().starts_with("words-"))?;
    let metadata = entry.metadata().ok()?;
    Some((metadata.ino(), metadata.modified().ok()?))
}

#[test]
fn a_warm_start_uses_the_kept_indexes_and_ranks_as_building_them_does() {
    let fixture = fixture();
    settle();
    let library = library(&fixture);
    assert_eq!(kept(&fixture, &library), fresh(&library));
    let first = written(&fixture).expect("the indexes kept");
    assert_eq!(kept(&fixture, &library), fresh(&library));
    assert_eq!(written(&fixture), Some(first), "used, not written again");
}

#[test]
fn an_edited_added_removed_renamed_or_linked_skill_is_never_ranked_stale() {
    let fixture = fixture();
    settle();
    let _ = kept(&fixture, &library(&fixture));
    let check = |what: &str| {
        let library = library(&fixture);
        assert_eq!(kept(&fixture, &library), fresh(&library), "{what}");
        // And the file written for the change is used as it is next time.
        assert_eq!(kept(&fixture, &library), fresh(&library), "{what}, again");
    };
    // Edited: same length, modification time put back (only the change time tells).
    let file = fixture.skills.join("beta/SKILL.md");
    let before = fs::metadata(&file).unwrap();
    let text = fs::read_to_string(&file).unwrap();
    let edited = text.replace("Redline contracts", "Rotates passwords");
    assert_eq!(edited.len(), text.len());
    fs::write(&file, edited).unwrap();
    fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_times(fs::FileTimes::new().set_modified(before.modified().unwrap()))
        .unwrap();
    settle();
    check("edited");
    write(
        &fixture.skills.join("gamma/SKILL.md"),
        &skill("gamma", "Plot sales charts and rotate passwords."),
    );
    settle();
    check("added");
    fs::remove_dir_all(fixture.skills.join("charts")).unwrap();
    check("removed");
    fs::rename(fixture.skills.join("alpha"), fixture.skills.join("alpha2")).unwrap();
    check("renamed");
    // A folder swapped for a link to another with other words.
    let elsewhere = fixture.skills.parent().unwrap().join("elsewhere/gamma");
    write(
        &elsewhere.join("SKILL.md"),
        &skill("gamma", "Something else entirely: deploy argocd."),
    );
    settle();
    fs::remove_dir_all(fixture.skills.join("gamma")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, fixture.skills.join("gamma")).unwrap();
    check("swapped for a link");
}

#[test]
fn a_torn_garbled_foreign_or_unkeyed_file_is_rebuilt_never_used() {
    let fixture = fixture();
    settle();
    let library = library(&fixture);
    let _ = kept(&fixture, &library);
    let file = fs::read_dir(&fixture.cache)
        .unwrap()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| {
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("words-")
        })
        .unwrap();
    let whole = fs::read(&file).unwrap();
    let mut garbled = whole.clone();
    let last = garbled.len() - 1;
    garbled[last] ^= 0x40;
    let mut other_key = whole.clone();
    other_key[8] ^= 1;
    // Another library's file under this name: its own sections, its own key and digest.
    let mut lengths = whole.clone();
    lengths[72..80].copy_from_slice(&0_u64.to_le_bytes());
    for (what, damaged) in [
        ("torn", &whole[..whole.len() / 2]),
        ("garbled", &garbled[..]),
        ("another key", &other_key[..]),
        ("lengths", &lengths[..]),
        ("magic only", &b"SKWORD02"[..]),
        ("empty", &b""[..]),
    ] {
        fs::write(&file, damaged).unwrap();
        assert_eq!(kept(&fixture, &library), fresh(&library), "{what}");
        assert_eq!(fs::read(&file).unwrap(), whole, "{what}: written again");
    }
    // Others may write it: not used (and written again whole, by this user).
    fs::write(&file, &garbled).unwrap();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o666)).unwrap();
    assert_eq!(kept(&fixture, &library), fresh(&library));
}

#[test]
fn builders_at_once_leave_a_whole_file() {
    let fixture = fixture();
    for index in 0..40 {
        write(
            &fixture.skills.join(format!("s{index}/SKILL.md")),
            &skill(
                &format!("s{index}"),
                &format!("Words number {index}: deploy services"),
            ),
        );
    }
    settle();
    let library = library(&fixture);
    let truth = fresh(&library);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| assert_eq!(kept(&fixture, &library), truth));
        }
    });
    let first = written(&fixture).expect("kept");
    assert_eq!(kept(&fixture, &library), truth);
    assert_eq!(
        written(&fixture),
        Some(first),
        "one builder's whole file, used"
    );
}

#[test]
fn a_file_under_this_key_with_another_librarys_documents_is_not_used() {
    let fixture = fixture();
    settle();
    let library = library(&fixture);
    let facts = Facts::gather(&library, Some(&fixture.cache));
    let own: Vec<String> = library.skills().iter().map(|s| s.name.clone()).collect();
    let stored = super::Stored::of(&facts, &library, &own).unwrap();
    // Indexes of four documents, saved (digest and all) under the key of this three-skill
    // library.
    let other = skillet_retrieval::Matcher::new(["a b", "c d", "e f", "g h"]);
    stored.save(&other).unwrap();
    assert!(stored.load().is_none());
    // As many documents, but no blend (every index kept has one).
    let no_blend = skillet_retrieval::Matcher::new(["a b", "c d", "e f"]);
    stored.save(&no_blend).unwrap();
    assert!(stored.load().is_none());
    assert_eq!(kept(&fixture, &library), fresh(&library));
}
