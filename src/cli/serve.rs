//! `lkpbot serve [--listen ADDR]`: the dashboard over the store, until
//! SIGINT or SIGTERM. The server itself is `web`.

use crate::store::Location;
use std::net::SocketAddr;

use anyhow::Context;

use super::failure::Failure;

pub(super) fn serve(db: &Location, listen: &str, archive: &str, clock: fn() -> i64) -> Result<(), Failure> {
    let addr: SocketAddr = listen.parse().map_err(|_| {
        Failure::usage(anyhow::anyhow!("cannot listen on {listen:?}: not an address (e.g. 127.0.0.1:8080)"))
    })?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::runtime(anyhow::Error::new(e).context("cannot start the async runtime")))?;
    rt.block_on(async {
        let reader = super::store::reader(db).await?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr}"))
            .map_err(Failure::runtime)?;
        let bound = listener.local_addr().map_or(addr, |a| a);
        tracing::info!(address = %bound, store = %db, "serving the dashboard");
        eprintln!("lkpbot: serving {} on http://{bound}/", db);
        let app = crate::web::App::new(reader.clone(), clock, archive);
        let stop = async {
            super::run::wait_for_signal().await;
            tracing::info!("stopping: answering the requests in flight first");
        };
        crate::web::serve(listener, crate::web::router(app), stop)
            .await
            .context("the server failed")
            .map_err(Failure::runtime)?;
        reader.close().await;
        Ok(())
    })
}
