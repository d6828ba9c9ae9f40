//! Who may publish under an owner: the database role recorded for it, changed only through the
//! registry's own functions and only by a member of that role (as npm and crates.io let only an
//! owner change an owner).

use crate::connect::Pools;
use crate::error::RegistryError;
use crate::prepare::check_owner;

/// Claims `owner` for this login role when nobody holds it; the role that holds it either way.
pub async fn claim(pools: &Pools, owner: &str) -> Result<String, RegistryError> {
    check_owner(owner)?;
    let doing = format!("claiming {owner}");
    let mut client = pools.write().await?;
    crate::schema::check(pools, &client).await?;
    let db = |error: tokio_postgres::Error| RegistryError::from_db(&pools.at, &error).doing(&doing);
    let tx = client.transaction().await.map_err(db)?;
    tx.batch_execute(&crate::publish::write_limits())
        .await
        .map_err(db)?;
    let role: String = tx
        .query_one("SELECT skillet_claim_owner($1)::text", &[&owner])
        .await
        .map_err(db)?
        .get(0);
    tx.commit().await.map_err(db)?;
    Ok(role)
}

/// Hands `owner` to the database role `role` (a team's group role); the caller must be a member
/// of the role that holds it now and of `role`.
pub async fn set_role(pools: &Pools, owner: &str, role: &str) -> Result<(), RegistryError> {
    check_owner(owner)?;
    let doing = format!("handing {owner} to {role}");
    let mut client = pools.write().await?;
    crate::schema::check(pools, &client).await?;
    let db = |error: tokio_postgres::Error| RegistryError::from_db(&pools.at, &error).doing(&doing);
    let tx = client.transaction().await.map_err(db)?;
    tx.batch_execute(&crate::publish::write_limits())
        .await
        .map_err(db)?;
    tx.execute(
        "SELECT skillet_set_owner_role($1, $2::name)",
        &[&owner, &role],
    )
    .await
    .map_err(db)?;
    tx.commit().await.map_err(db)?;
    Ok(())
}

/// The role that holds `owner`, if anyone does.
pub async fn role_of(pools: &Pools, owner: &str) -> Result<Option<String>, RegistryError> {
    let client = pools.read().await?;
    crate::schema::check(pools, &client).await?;
    client
        .query_opt(
            "SELECT role::text FROM skillet_owners WHERE owner = $1",
            &[&owner],
        )
        .await
        .map(|row| row.map(|row| row.get(0)))
        .map_err(|error| RegistryError::from_db(&pools.at, &error).doing("reading owners"))
}
