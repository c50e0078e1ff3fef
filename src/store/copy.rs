//! `lkpbot store copy`: every table of one store into another that is
//! empty, either way between SQLite and PostgreSQL.
//!
//! The source is read in one snapshot and the target written in one
//! transaction, so a copy that fails leaves the target empty. Rows keep
//! their ids (case ids are in mail the bot wrote); on PostgreSQL the
//! identity sequences are moved past them afterwards
//! ([`db::identities_past_rows`]). The `runs` table is not copied: it
//! names the processes using the source.

use super::db::{self, Arg, AsDb, Row, query};
use super::{Store, StoreError, TABLES, err};

/// Rows read and written per statement.
const CHUNK: i64 = 200;

/// How many rows of each table were copied.
pub type CopyStats = Vec<(&'static str, u64)>;

impl Store {
    /// Copies every table of this store into `target`, which must be
    /// empty ([`StoreError::NotEmpty`] otherwise).
    pub async fn copy_into(&mut self, target: &mut Store) -> Result<CopyStats, StoreError> {
        let target_name = target.path().display().to_string();
        for stat in target.table_stats().await? {
            if stat.rows > 0 {
                return Err(StoreError::NotEmpty(target_name));
            }
        }
        let mut from = self.conn.begin_read().await.map_err(err("begin a read"))?;
        let mut to = target.begin().await?;
        let mut out = Vec::new();
        for &table in TABLES {
            let mut n = 0u64;
            loop {
                let sql = format!("SELECT * FROM {table} ORDER BY 1, 2 LIMIT {CHUNK} OFFSET {n}");
                let rows = query(sql).fetch_all(&mut from).await.map_err(err("read a table"))?;
                if rows.is_empty() {
                    break;
                }
                n += insert_rows(&mut to.tx, table, &rows).await?;
            }
            out.push((table, n));
        }
        db::identities_past_rows(&mut to.tx).await.map_err(err("move the identity sequences"))?;
        from.commit().await.map_err(err("end a read"))?;
        to.commit().await?;
        Ok(out)
    }
}

/// Inserts `rows` (of one `SELECT *`) into `table`, each value as the
/// type its column declares.
async fn insert_rows(on: &mut impl AsDb, table: &str, rows: &[Row]) -> Result<u64, StoreError> {
    let Some(first) = rows.first() else { return Ok(0) };
    let columns = first.columns();
    let names: Vec<&str> = columns.iter().map(|(name, _)| name.as_str()).collect();
    let sql = super::insert_sql(&format!("{table} ({})", names.join(", ")), columns.len(), rows.len(), "");
    let mut q = query(sql);
    for row in rows {
        for (i, (name, kind)) in columns.iter().enumerate() {
            let bad = |e: sqlx::Error| StoreError::Corrupt(format!("{table}.{name}: {e}"));
            let value: Arg<'static> = match kind {
                db::Kind::Int => Arg::Int(row.try_get(i).map_err(bad)?),
                db::Kind::Real => Arg::Real(row.try_get(i).map_err(bad)?),
                db::Kind::Bytes => match row.try_get::<Option<Vec<u8>>, _>(i).map_err(bad)? {
                    Some(b) => Arg::Blob(b),
                    None => return Err(StoreError::Corrupt(format!("{table}.{name}: NULL bytes"))),
                },
                db::Kind::Text => Arg::String(row.try_get(i).map_err(bad)?),
            };
            q = q.bind(value);
        }
    }
    Ok(q.execute(on).await.map_err(err("copy rows"))?.rows_affected())
}
