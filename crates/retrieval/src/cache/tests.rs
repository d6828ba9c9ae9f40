//! Tests of [`super`].

use super::*;

/// A unit vector of `width` values pointing along axis `axis`, slightly tilted by `seed`.
fn unit(width: usize, seed: u64) -> Vec<f32> {
    #[expect(clippy::cast_precision_loss, reason = "test values")]
    let mut vector: Vec<f32> = (0..width)
        .map(|i| ((seed as f32 + 1.0) * (i as f32 + 1.0)).sin())
        .collect();
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    for x in &mut vector {
        *x /= norm;
    }
    vector
}

fn temp_cache() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = EmbeddingCache::path_for(dir.path(), "e1-0123abcd");
    (dir, path)
}

/// A valid file of three entries of width 4, and their keys.
fn three_entries(path: &Path) -> Vec<u64> {
    let (mut cache, warnings) = EmbeddingCache::open(path, 4);
    assert!(warnings.is_empty() && cache.is_empty());
    let keys: Vec<u64> = ["a", "b", "c"].iter().map(|t| text_hash(t)).collect();
    for (seed, &key) in keys.iter().enumerate() {
        cache.insert(key, unit(4, seed as u64)).unwrap();
    }
    assert!(cache.save().unwrap().written);
    keys
}

#[test]
fn round_trips_and_names_the_file_safely() {
    let (_dir, path) = temp_cache();
    assert!(
        EmbeddingCache::path_for(Path::new("/c"), "all-MiniLM/9 0").ends_with("all-MiniLM_9_0.bin")
    );
    let keys = three_entries(&path);
    let (reopened, warnings) = EmbeddingCache::open(&path, 4);
    assert_eq!(warnings, []);
    assert_eq!(reopened.len(), 3);
    assert_eq!(reopened.get(keys[1]), Some(unit(4, 1).as_slice()));
    assert_eq!(reopened.get(text_hash("z")), None);
    // Nothing changed: nothing written.
    let mut reopened = reopened;
    assert!(!reopened.save().unwrap().written);
}

#[test]
fn unusable_vectors_are_refused() {
    let (_dir, path) = temp_cache();
    let (mut cache, _) = EmbeddingCache::open(&path, 3);
    assert_eq!(
        cache.insert(1, vec![0.0, 1.0]),
        Err(InvalidVector::Width {
            expected: 3,
            found: 2
        })
    );
    assert_eq!(
        cache.insert(2, vec![f32::NAN, 0.0, 1.0]),
        Err(InvalidVector::NonFinite)
    );
    assert_eq!(
        cache.insert(3, vec![f32::INFINITY, 0.0, 0.0]),
        Err(InvalidVector::NonFinite)
    );
    assert!(matches!(
        cache.insert(4, vec![0.0, 0.0, 0.0]),
        Err(InvalidVector::NotUnit { .. })
    ));
    assert!(matches!(
        cache.insert(5, vec![1.0, 0.0, 0.5]),
        Err(InvalidVector::NotUnit { .. })
    ));
    assert!(cache.is_empty());
    assert_eq!(cache.insert(6, vec![0.6, 0.0, 0.8]), Ok(()));
}

fn expect_unreadable(path: &Path, dimensions: usize) -> UnreadableReason {
    let (cache, warnings) = EmbeddingCache::open(path, dimensions);
    assert!(cache.is_empty(), "{warnings:?}");
    match warnings.as_slice() {
        [CacheWarning::Unreadable { path: at, reason }] => {
            assert_eq!(at, path);
            reason.clone()
        }
        other => panic!("expected one unreadable warning, got {other:?}"),
    }
}

#[test]
fn a_truncated_file_at_any_length_is_a_warning_and_an_empty_cache() {
    let (_dir, path) = temp_cache();
    three_entries(&path);
    let whole = std::fs::read(&path).unwrap();
    assert_eq!(whole.len(), HEADER_BYTES + 3 * (RECORD_PREFIX_BYTES + 16));
    for cut in 0..whole.len() {
        std::fs::write(&path, &whole[..cut]).unwrap();
        let reason = expect_unreadable(&path, 4);
        let expected = if cut < HEADER_BYTES {
            UnreadableReason::Truncated { bytes: cut as u64 }
        } else {
            UnreadableReason::Length {
                bytes: cut as u64,
                count: 3,
            }
        };
        assert_eq!(reason, expected, "cut at {cut}");
    }
    // One byte too many is as wrong.
    let mut grown = whole.clone();
    grown.push(0);
    std::fs::write(&path, &grown).unwrap();
    assert!(matches!(
        expect_unreadable(&path, 4),
        UnreadableReason::Length { .. }
    ));
}

#[test]
fn foreign_old_and_other_width_files_are_warnings() {
    let (_dir, path) = temp_cache();
    std::fs::write(&path, b"not a cache at all, longer than a header").unwrap();
    assert_eq!(expect_unreadable(&path, 4), UnreadableReason::BadMagic);
    let mut old = b"SKEMB001".to_vec();
    old.extend_from_slice(&4_u32.to_le_bytes());
    old.extend_from_slice(&0_u64.to_le_bytes());
    std::fs::write(&path, &old).unwrap();
    let reason = expect_unreadable(&path, 4);
    assert_eq!(
        reason,
        UnreadableReason::OldFormat {
            found: "SKEMB001".into()
        }
    );
    assert!(reason.to_string().contains("SKEMB001"));
    std::fs::remove_file(&path).unwrap();
    three_entries(&path);
    assert_eq!(
        expect_unreadable(&path, 5),
        UnreadableReason::Width {
            found: 4,
            expected: 5
        }
    );
    // The warning reads as the user sees it.
    let (_, warnings) = EmbeddingCache::open(&path, 5);
    let text = warnings[0].to_string();
    assert!(
        text.starts_with(&format!(
            "embedding cache {} was unreadable (",
            path.display()
        )) && text.ends_with("); rebuilding"),
        "{text}"
    );
}

#[test]
fn a_file_over_the_limit_is_not_read() {
    let (_dir, path) = temp_cache();
    // Sparse: no disk space, no memory.
    let file = File::create(&path).unwrap();
    file.set_len(MAX_FILE_BYTES + 1).unwrap();
    drop(file);
    assert_eq!(
        expect_unreadable(&path, 4),
        UnreadableReason::TooLarge {
            bytes: MAX_FILE_BYTES + 1,
            limit: MAX_FILE_BYTES
        }
    );
}

/// Writes `path` with the given vectors as they are (unchecked), as a damaged writer could.
fn write_raw(path: &Path, width: usize, vectors: &[(u64, Vec<f32>)]) {
    let (mut cache, _) = EmbeddingCache::open(path, width);
    for (key, vector) in vectors {
        cache.entries.insert(
            *key,
            Entry {
                vector: vector.clone(),
                last_used: cache.now,
            },
        );
    }
    std::fs::write(path, cache.encode()).unwrap();
}

#[test]
fn damaged_nan_inf_and_unnormalised_entries_are_dropped_with_a_warning() {
    let (_dir, path) = temp_cache();
    let good = unit(4, 7);
    write_raw(
        &path,
        4,
        &[
            (1, good.clone()),
            (2, vec![f32::NAN, 0.0, 0.0, 1.0]),
            (3, vec![0.0, f32::INFINITY, 0.0, 0.0]),
            (4, vec![0.0, 0.0, f32::NEG_INFINITY, 0.0]),
            (5, vec![0.0; 4]),
            (6, vec![2.0, 0.0, 0.0, 0.0]),
            (7, unit(4, 8)),
        ],
    );
    // Flip one bit of entry 7's vector: its checksum fails.
    let mut bytes = std::fs::read(&path).unwrap();
    let record = RECORD_PREFIX_BYTES + 16;
    let last = HEADER_BYTES + 6 * record;
    assert_eq!(bytes[last..last + 8], 7_u64.to_le_bytes());
    bytes[last + RECORD_PREFIX_BYTES + 5] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();

    let (mut cache, warnings) = EmbeddingCache::open(&path, 4);
    assert_eq!(
        warnings,
        [CacheWarning::EntriesDropped {
            path: path.clone(),
            corrupt: 1,
            non_finite: 3,
            not_unit: 2,
        }]
    );
    assert!(warnings[0].to_string().contains("6 unusable entries"));
    assert_eq!(cache.len(), 1);
    assert_eq!(cache.get(1), Some(good.as_slice()));
    for key in 2..=7 {
        assert_eq!(cache.get(key), None, "entry {key}");
    }
    // The file is rewritten without them, even though nothing was inserted.
    assert!(cache.save().unwrap().written);
    let (again, warnings) = EmbeddingCache::open(&path, 4);
    assert_eq!(warnings, []);
    assert_eq!(again.len(), 1);
}

#[test]
fn entries_unused_for_the_pruning_age_are_dropped_and_used_ones_kept() {
    let (_dir, path) = temp_cache();
    let day = TOUCH_INTERVAL.as_secs();
    let (mut cache, _) = EmbeddingCache::open(&path, 4);
    let now = cache.now;
    let at = |days_ago: u64| now - days_ago * day;
    for (key, days_ago) in [(1, 0), (2, 29), (3, 31), (4, 365), (5, 40)] {
        cache.entries.insert(
            key,
            Entry {
                vector: unit(4, key),
                last_used: at(days_ago),
            },
        );
    }
    // Entry 5 is old, but the library uses it now.
    assert!(cache.touch(5));
    assert!(!cache.touch(99));
    cache.dirty = true;
    let report = cache.save().unwrap();
    assert_eq!(report.pruned, 2);
    assert_eq!(report.entries, 3);
    let (reopened, _) = EmbeddingCache::open(&path, 4);
    let mut kept: Vec<u64> = reopened.entries.keys().copied().collect();
    kept.sort_unstable();
    assert_eq!(kept, [1, 2, 5]);
    assert_eq!(reopened.entries[&5].last_used, now);
    assert_eq!(reopened.entries[&2].last_used, at(29));
}

#[test]
fn touching_a_fresh_entry_does_not_rewrite_the_file_and_a_stale_one_does() {
    let (_dir, path) = temp_cache();
    let keys = three_entries(&path);
    let (mut cache, _) = EmbeddingCache::open(&path, 4);
    assert!(cache.touch(keys[0]));
    assert!(!cache.save().unwrap().written, "used today already");
    cache.entries.get_mut(&keys[1]).unwrap().last_used -= TOUCH_INTERVAL.as_secs();
    assert!(cache.touch(keys[1]));
    assert!(cache.save().unwrap().written);
}

#[test]
fn beyond_the_size_limit_the_least_recently_used_go_first() {
    let (_dir, path) = temp_cache();
    let (mut cache, _) = EmbeddingCache::open(&path, 4);
    for key in 0..10 {
        cache.entries.insert(
            key,
            Entry {
                vector: unit(4, key),
                last_used: cache.now - 100 + key,
            },
        );
    }
    assert_eq!(cache.prune(4), 6);
    let mut kept: Vec<u64> = cache.entries.keys().copied().collect();
    kept.sort_unstable();
    assert_eq!(kept, [6, 7, 8, 9]);
    assert!(max_entries(384) > 100_000);
    assert!(
        (HEADER_BYTES + max_entries(384) * (RECORD_PREFIX_BYTES + 4 * 384)) as u64
            <= MAX_FILE_BYTES
    );
}

#[test]
fn a_save_keeps_what_another_process_saved_meanwhile() {
    let (_dir, path) = temp_cache();
    let (mut first, _) = EmbeddingCache::open(&path, 4);
    let (mut second, _) = EmbeddingCache::open(&path, 4);
    first.insert(1, unit(4, 1)).unwrap();
    second.insert(2, unit(4, 2)).unwrap();
    first.save().unwrap();
    let report = second.save().unwrap();
    assert_eq!(report.merged, 1);
    let (both, _) = EmbeddingCache::open(&path, 4);
    assert_eq!(both.len(), 2);
}

/// Many savers at once, each with its own entries, saving over and over while readers open
/// the file: every save succeeds, every read finds a whole valid file, and the end holds
/// every writer's entries (the lock serialises the merges). With one fixed temporary name,
/// writers truncate each other's temporary files and rename them away under each other.
#[test]
fn concurrent_savers_leave_one_valid_complete_file() {
    const WRITERS: u64 = 8;
    const ROUNDS: u64 = 12;
    const PER_ROUND: u64 = 5;
    const WIDTH: usize = 16;
    let (_dir, path) = temp_cache();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let path = path.clone();
        let done = done.clone();
        std::thread::spawn(move || {
            let mut reads = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let (_, warnings) = EmbeddingCache::open(&path, WIDTH);
                assert_eq!(warnings, [], "a reader saw a damaged file");
                reads += 1;
            }
            reads
        })
    };
    let writers: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let path = path.clone();
            std::thread::spawn(move || {
                for round in 0..ROUNDS {
                    // A fresh open each round, as a new process would.
                    let (mut cache, warnings) = EmbeddingCache::open(&path, WIDTH);
                    assert_eq!(warnings, []);
                    for item in 0..PER_ROUND {
                        let key = (writer << 32) | (round * PER_ROUND + item);
                        cache.insert(key, unit(WIDTH, key)).unwrap();
                    }
                    cache.save().unwrap();
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(reader.join().unwrap() > 0);
    let (cache, warnings) = EmbeddingCache::open(&path, WIDTH);
    assert_eq!(warnings, []);
    assert_eq!(cache.len() as u64, WRITERS * ROUNDS * PER_ROUND);
    for writer in 0..WRITERS {
        for index in 0..ROUNDS * PER_ROUND {
            let key = (writer << 32) | index;
            assert_eq!(cache.get(key), Some(unit(WIDTH, key).as_slice()));
        }
    }
    // No temporary file is left behind.
    let names: Vec<String> = std::fs::read_dir(parent_of(&path))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|name| !name.ends_with(TEMPORARY_SUFFIX)),
        "{names:?}"
    );
}

/// The replacement alone, without the lock (as when the lock cannot be had): writers that
/// race never tear the file, and readers only ever see one writer's whole content.
#[test]
fn racing_atomic_writes_never_tear_the_file() {
    const WRITERS: u8 = 8;
    const WRITES: usize = 40;
    const SIZE: usize = 256 << 10;
    let (_dir, path) = temp_cache();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let path = path.clone();
        let done = done.clone();
        std::thread::spawn(move || {
            let mut whole = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok(bytes) = std::fs::read(&path) {
                    assert_eq!(bytes.len(), SIZE, "a torn file");
                    assert!(bytes.iter().all(|&b| b == bytes[0]), "two writers mixed");
                    whole += 1;
                }
            }
            whole
        })
    };
    let writers: Vec<_> = (1..=WRITERS)
        .map(|writer| {
            let path = path.clone();
            std::thread::spawn(move || {
                let content = vec![writer; SIZE];
                for _ in 0..WRITES {
                    write_atomically(&path, &content).unwrap();
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(reader.join().unwrap() > 0);
    let last = std::fs::read(&path).unwrap();
    assert_eq!(last.len(), SIZE);
    assert!((1..=WRITERS).contains(&last[0]));
}

#[test]
fn a_save_removes_stale_temporaries_and_unused_caches_only() {
    let dir = tempfile::tempdir().unwrap();
    let old = SystemTime::now() - PRUNE_AFTER - Duration::from_mins(1);
    let aged = |name: &str, content: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(old)
            .unwrap();
        path
    };
    let stale_temporary = aged(".e1-x.bin.abc123.tmp", b"half");
    let old_cache = aged("all-MiniLM-L6-v2_90868376.bin", b"SKEMB001....");
    let foreign = aged("firmware.bin", b"not ours");
    let marker = aged("model-download-failed", b"offline");
    let fresh_temporary = dir.path().join(".e1-x.bin.def456.tmp");
    std::fs::write(&fresh_temporary, b"being written").unwrap();

    let path = EmbeddingCache::path_for(dir.path(), "e1-current");
    let (mut cache, _) = EmbeddingCache::open(&path, 4);
    cache.insert(1, unit(4, 1)).unwrap();
    cache.save().unwrap();
    assert!(!stale_temporary.exists());
    assert!(!old_cache.exists());
    assert!(foreign.exists() && marker.exists() && fresh_temporary.exists());
    assert!(path.exists());
}

#[test]
fn hashes_are_stable() {
    // The first 8 bytes of SHA-256("") = e3b0c442 98fc1c14…, little endian.
    assert_eq!(text_hash(""), 0x141c_fc98_42c4_b0e3);
    assert_eq!(text_hash("a"), 0xcabd_1bca_1281_97ca);
}

#[test]
fn a_warm_library_reads_its_vectors_alone_and_anything_else_goes_the_whole_way() {
    let (_dir, path) = temp_cache();
    let keys = three_entries(&path);
    // Another library's entry in the same file, and a skill whose text is another's.
    let (mut cache, _) = EmbeddingCache::open(&path, 4);
    cache.insert(text_hash("other"), unit(4, 9)).unwrap();
    cache.save().unwrap();
    let wanted = [keys[2], keys[0], keys[0]];
    let vectors = EmbeddingCache::read_for(&path, 4, &wanted).unwrap();
    let (whole, _) = EmbeddingCache::open(&path, 4);
    let expected: Vec<f32> = wanted
        .iter()
        .flat_map(|key| whole.get(*key).unwrap().to_vec())
        .collect();
    assert_eq!(vectors, expected);
    // A skill not cached yet, another width, a missing file: the whole way.
    assert_eq!(EmbeddingCache::read_for(&path, 4, &[keys[0], 12_345]), None);
    assert_eq!(EmbeddingCache::read_for(&path, 3, &[keys[0]]), None);
    assert_eq!(
        EmbeddingCache::read_for(&path.with_extension("x"), 4, &[keys[0]]),
        None
    );
    // An entry last used a day ago needs touching (a save): the whole way.
    let (mut cache, _) = EmbeddingCache::open(&path, 4);
    cache.entries.get_mut(&keys[1]).unwrap().last_used -= TOUCH_INTERVAL.as_secs();
    std::fs::write(&path, cache.encode()).unwrap();
    assert_eq!(EmbeddingCache::read_for(&path, 4, &[keys[1]]), None);
    assert!(EmbeddingCache::read_for(&path, 4, &[keys[0]]).is_some());
    // A damaged or unusable entry: the whole way, which drops it and says so.
    let mut not_unit = unit(4, 1);
    not_unit[0] += 0.5;
    write_raw(&path, 4, &[(keys[0], unit(4, 0)), (keys[1], not_unit)]);
    assert_eq!(EmbeddingCache::read_for(&path, 4, &[keys[1]]), None);
    assert!(EmbeddingCache::read_for(&path, 4, &[keys[0]]).is_some());
    // A record whose checksum fails (one entry alone in a file: the flipped byte is its).
    let single = path.with_file_name("e1-single.bin");
    write_raw(&single, 4, &[(keys[0], unit(4, 0))]);
    assert!(EmbeddingCache::read_for(&single, 4, &[keys[0]]).is_some());
    let mut bytes = std::fs::read(&single).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    std::fs::write(&single, &bytes).unwrap();
    assert_eq!(EmbeddingCache::read_for(&single, 4, &[keys[0]]), None);
}

#[test]
fn vectors_left_in_the_file_rank_bit_for_bit_as_vectors_in_memory() {
    let (_dir, path) = temp_cache();
    let keys = three_entries(&path);
    let (mut cache, _) = EmbeddingCache::open(&path, 4);
    cache.insert(text_hash("other"), unit(4, 9)).unwrap();
    cache.save().unwrap();
    // Out of the file's order, one text twice.
    let wanted = [keys[2], keys[0], keys[1], keys[0]];
    let left = EmbeddingCache::vectors_for(&path, 4, &wanted).unwrap();
    let (whole, _) = EmbeddingCache::open(&path, 4);
    let values: Vec<f32> = wanted
        .iter()
        .flat_map(|key| whole.get(*key).unwrap().to_vec())
        .collect();
    let held = crate::Vectors::in_memory(4, values).unwrap();
    let bits = |values: Vec<f32>| -> Vec<u32> { values.iter().map(|v| v.to_bits()).collect() };
    for query in [unit(4, 0), unit(4, 3), vec![0.5, 0.5, 0.5, 0.5]] {
        assert_eq!(
            bits(left.similarities(&query).unwrap()),
            bits(held.similarities(&query).unwrap())
        );
    }
    for document in 0..wanted.len() {
        assert_eq!(left.vector(document), held.vector(document));
    }
    assert!(left.vector(wanted.len()).is_none());
    assert!(left.similarities(&[1.0, 0.0]).is_none(), "another width");
    // A save renaming another cache over the file leaves what was checked as it was.
    let before = bits(left.similarities(&unit(4, 0)).unwrap());
    let (mut cache, _) = EmbeddingCache::open(&path, 4);
    cache.insert(text_hash("newer"), unit(4, 7)).unwrap();
    cache.save().unwrap();
    assert_eq!(bits(left.similarities(&unit(4, 0)).unwrap()), before);
}

#[test]
fn vectors_changed_in_place_under_a_session_are_noticed_not_used() {
    use std::io::Write as _;
    let (_dir, path) = temp_cache();
    let keys = three_entries(&path);
    // Settled: checked once, the file's records are read as they are while its stamp holds.
    std::thread::sleep(std::time::Duration::from_millis(1_100));
    let left = EmbeddingCache::vectors_for(&path, 4, &keys).unwrap();
    assert!(left.similarities(&unit(4, 0)).is_some());
    // Written over in place (the same inode), past the header: NaNs everywhere.
    let size = usize::try_from(std::fs::metadata(&path).unwrap().len()).unwrap();
    let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(HEADER_BYTES as u64)).unwrap();
    file.write_all(&vec![0xff; size - HEADER_BYTES]).unwrap();
    assert_eq!(left.similarities(&unit(4, 0)), None);
    assert_eq!(left.vector(0), None);
    // Cut short: the same.
    file.set_len(HEADER_BYTES as u64).unwrap();
    assert_eq!(left.similarities(&unit(4, 0)), None);
}

#[test]
fn another_sound_cache_copied_over_in_place_is_noticed_not_used() {
    let (_dir, path) = temp_cache();
    let keys = three_entries(&path);
    std::thread::sleep(std::time::Duration::from_millis(1_100));
    let left = EmbeddingCache::vectors_for(&path, 4, &keys).unwrap();
    assert!(left.similarities(&unit(4, 0)).is_some());
    // The same sound records with the first two swapped (as a copy of another cache holding
    // the same texts in another order would be): two documents' places hold each other's
    // vectors.
    let bytes = std::fs::read(&path).unwrap();
    let record = (bytes.len() - HEADER_BYTES) / keys.len();
    let mut swapped = bytes.clone();
    let (first, second) = (
        HEADER_BYTES..HEADER_BYTES + record,
        HEADER_BYTES + record..HEADER_BYTES + 2 * record,
    );
    swapped[first.clone()].copy_from_slice(&bytes[second.clone()]);
    swapped[second].copy_from_slice(&bytes[first]);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .and_then(|mut file| std::io::Write::write_all(&mut file, &swapped))
        .unwrap();
    assert_eq!(left.similarities(&unit(4, 0)), None);
}
