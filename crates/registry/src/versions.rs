//! Reading what the registry holds: its skills, one skill's versions, a version's files
//! (verified against every hash before the caller sees them), and yanking.

use sha2::{Digest, Sha256};

use crate::bundle::{Bundle, BundleFile, MAX_BUNDLE_BYTES, MAX_BUNDLE_FILES, hex};
use crate::connect::Pools;
use crate::error::RegistryError;

/// A skill in the registry.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SkillRow {
    /// The owner.
    pub owner: String,
    /// The name.
    pub name: String,
    /// The newest version that is not yanked (none when all are).
    pub seq: Option<i32>,
    /// How many versions it has.
    pub versions: i64,
    /// The newest unyanked version's description.
    pub description: Option<String>,
}

/// One version of a skill.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct VersionRow {
    /// Its sequence number.
    pub seq: i32,
    /// `sha256:` and hex.
    pub hash: String,
    /// Who published it (the database user).
    pub published_by: String,
    /// When, RFC 3339 in UTC.
    pub published_at: String,
    /// Whether it is yanked.
    pub yanked: bool,
}

/// A version's files, verified.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The owner.
    pub owner: String,
    /// The name.
    pub name: String,
    /// The version.
    pub seq: i32,
    /// Its content hash (checked against the files).
    pub content_hash: [u8; 32],
    /// Whether it is yanked.
    pub yanked: bool,
    /// The files.
    pub bundle: Bundle,
}

impl Fetched {
    /// `owner/name@seq`.
    pub fn reference(&self) -> String {
        format!("{}/{}@{}", self.owner, self.name, self.seq)
    }
}

/// Every skill, by owner then name.
pub async fn list(pools: &Pools) -> Result<Vec<SkillRow>, RegistryError> {
    let client = pools.read().await?;
    crate::schema::check(pools, &client).await?;
    let rows = client
        .query(
            "SELECT k.owner, k.name, s.seq, \
               (SELECT count(*) FROM skillet_versions v WHERE v.skill_id = k.id), s.description \
             FROM skillet_skills k LEFT JOIN skillet_search s ON s.skill_id = k.id \
             WHERE k.head_seq > 0 ORDER BY k.owner, k.name",
            &[],
        )
        .await
        .map_err(|error| RegistryError::from_db(&pools.at, &error).doing("listing skills"))?;
    Ok(rows
        .iter()
        .map(|row| SkillRow {
            owner: row.get(0),
            name: row.get(1),
            seq: row.get(2),
            versions: row.get(3),
            description: row.get(4),
        })
        .collect())
}

/// How many skills search offers (those with a version that is not yanked).
pub async fn count(pools: &Pools) -> Result<i64, RegistryError> {
    read_number(pools, "SELECT count(*) FROM skillet_search").await
}

/// The one `bigint` a read-only query without parameters answers, the schema checked first.
pub(crate) async fn read_number(pools: &Pools, sql: &str) -> Result<i64, RegistryError> {
    let client = pools.read().await?;
    crate::schema::check(pools, &client).await?;
    client
        .query_one(sql, &[])
        .await
        .map(|row| row.get(0))
        .map_err(|error| RegistryError::from_db(&pools.at, &error).doing("counting"))
}

/// One skill's versions, newest first.
pub async fn versions(
    pools: &Pools,
    owner: &str,
    name: &str,
) -> Result<Vec<VersionRow>, RegistryError> {
    let client = pools.read().await?;
    crate::schema::check(pools, &client).await?;
    let rows = client
        .query(
            "SELECT v.seq, v.content_hash, v.published_by, \
               to_char(v.published_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), \
               v.yanked_at IS NOT NULL \
             FROM skillet_versions v JOIN skillet_skills k ON k.id = v.skill_id \
             WHERE k.owner = $1 AND k.name = $2 ORDER BY v.seq DESC",
            &[&owner, &name],
        )
        .await
        .map_err(|error| {
            RegistryError::from_db(&pools.at, &error).doing(&format!("listing {owner}/{name}"))
        })?;
    if rows.is_empty() {
        return Err(RegistryError::NotFound(format!("{owner}/{name}")));
    }
    Ok(rows
        .iter()
        .map(|row| {
            let hash: Vec<u8> = row.get(1);
            VersionRow {
                seq: row.get(0),
                hash: format!("sha256:{}", hex(&hash)),
                published_by: row.get(2),
                published_at: row.get(3),
                yanked: row.get(4),
            }
        })
        .collect())
}

/// What a yank did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Yanked {
    /// `owner/name@seq`.
    pub skill: String,
    /// False when it was yanked already.
    pub changed: bool,
    /// The version search and install now offer (none when every version is yanked).
    pub now_latest: Option<i32>,
}

/// Hides a version from search and install (kept for those whose lock names it), through the
/// registry's own `skillet_yank` function (which checks who may).
pub async fn yank(
    pools: &Pools,
    owner: &str,
    name: &str,
    seq: i32,
) -> Result<Yanked, RegistryError> {
    let skill = format!("{owner}/{name}@{seq}");
    let row = crate::publish::call_one(
        pools,
        &format!("yanking {skill}"),
        "SELECT r_found, r_changed, r_latest FROM skillet_yank($1, $2, $3)",
        &[&owner, &name, &seq],
    )
    .await?;
    let (found, changed, now_latest): (bool, bool, Option<i32>) =
        (row.get(0), row.get(1), row.get(2));
    if !found {
        return Err(RegistryError::NotFound(skill));
    }
    Ok(Yanked {
        skill,
        changed,
        now_latest,
    })
}

/// The files of `owner/name` at `seq` (else its newest version that is not yanked), every
/// blob checked against its SHA-256 and size and the whole against the content hash before
/// anything is returned. A yanked version is refused unless `allow_yanked` (a lock names it).
pub async fn fetch(
    pools: &Pools,
    owner: &str,
    name: &str,
    seq: Option<i32>,
    allow_yanked: bool,
) -> Result<Fetched, RegistryError> {
    let client = pools.read().await?;
    crate::schema::check(pools, &client).await?;
    let doing = format!("fetching {owner}/{name}");
    let db = |error: tokio_postgres::Error| RegistryError::from_db(&pools.at, &error).doing(&doing);
    let version = client
        .query_opt(
            "SELECT v.id, v.seq, v.content_hash, v.yanked_at IS NOT NULL \
             FROM skillet_versions v JOIN skillet_skills k ON k.id = v.skill_id \
             WHERE k.owner = $1 AND k.name = $2 \
               AND (v.seq = $3 OR ($3 IS NULL AND v.yanked_at IS NULL)) \
             ORDER BY v.seq DESC LIMIT 1",
            &[&owner, &name, &seq],
        )
        .await
        .map_err(db)?;
    let shown = match seq {
        Some(seq) => format!("{owner}/{name}@{seq}"),
        None => format!("{owner}/{name}"),
    };
    let Some(version) = version else {
        if seq.is_none() {
            let versions: i64 = client
                .query_one(
                    "SELECT count(*) FROM skillet_versions v JOIN skillet_skills k \
                     ON k.id = v.skill_id WHERE k.owner = $1 AND k.name = $2",
                    &[&owner, &name],
                )
                .await
                .map_err(db)?
                .get(0);
            if versions > 0 {
                return Err(RegistryError::Yanked(format!("every version of {shown}")));
            }
        }
        return Err(RegistryError::NotFound(shown));
    };
    let (version_id, seq, expected, yanked): (i64, i32, Vec<u8>, bool) = (
        version.get(0),
        version.get(1),
        version.get(2),
        version.get(3),
    );
    let reference = format!("{owner}/{name}@{seq}");
    if yanked && !allow_yanked {
        return Err(RegistryError::Yanked(reference));
    }
    let tampered = |what: String| RegistryError::Tampered {
        skill: reference.clone(),
        what,
    };
    // Sizes first: a registry cannot make skillet hold more than a publish could.
    let sizes = client
        .query_one(
            "SELECT count(*), coalesce(sum(length(b.bytes)), 0)::int8, count(b.sha256) \
             FROM skillet_version_files f LEFT JOIN skillet_blobs b ON b.sha256 = f.sha256 \
             WHERE f.version_id = $1",
            &[&version_id],
        )
        .await
        .map_err(db)?;
    let (files, bytes, present): (i64, i64, i64) = (sizes.get(0), sizes.get(1), sizes.get(2));
    if files != present {
        return Err(tampered(format!(
            "{} of its files are missing",
            files - present
        )));
    }
    if usize::try_from(files).unwrap_or(usize::MAX) > MAX_BUNDLE_FILES
        || u64::try_from(bytes).unwrap_or(u64::MAX) > MAX_BUNDLE_BYTES
    {
        return Err(tampered(format!(
            "it has {files} files of {bytes} bytes, more than a publish may hold"
        )));
    }
    let rows = client
        .query(
            "SELECT f.path, f.sha256, f.size, f.executable, b.bytes \
             FROM skillet_version_files f JOIN skillet_blobs b ON b.sha256 = f.sha256 \
             WHERE f.version_id = $1",
            &[&version_id],
        )
        .await
        .map_err(db)?;
    let (bundle, content_hash) = verify(&rows, &expected, &reference)?;
    Ok(Fetched {
        owner: owner.to_string(),
        name: name.to_string(),
        seq,
        content_hash,
        yanked,
        bundle,
    })
}

/// The files of a version's rows, each checked against its SHA-256 and size, and all against
/// the content hash.
fn verify(
    rows: &[tokio_postgres::Row],
    expected: &[u8],
    reference: &str,
) -> Result<(Bundle, [u8; 32]), RegistryError> {
    let tampered = |what: String| RegistryError::Tampered {
        skill: reference.to_string(),
        what,
    };
    let mut bundle_files = Vec::with_capacity(rows.len());
    for row in rows {
        let path: String = row.get(0);
        let digest: Vec<u8> = row.get(1);
        let size: i64 = row.get(2);
        let bytes: Vec<u8> = row.get(4);
        let actual: [u8; 32] = Sha256::digest(&bytes).into();
        if actual.as_slice() != digest.as_slice() || i64::try_from(bytes.len()).ok() != Some(size) {
            return Err(tampered(format!(
                "{path} does not match its hash (sha256:{} recorded, sha256:{} served)",
                hex(&digest),
                hex(&actual)
            )));
        }
        bundle_files.push(BundleFile {
            path,
            bytes,
            executable: row.get(3),
        });
    }
    let bundle = Bundle::from_files(bundle_files)?;
    let content_hash = bundle.content_hash();
    if content_hash.as_slice() != expected {
        return Err(tampered(format!(
            "its files do not add up to its content hash (sha256:{} recorded)",
            hex(expected)
        )));
    }
    if bundle.skill_file().is_none() {
        return Err(tampered("it has no SKILL.md".into()));
    }
    Ok((bundle, content_hash))
}
