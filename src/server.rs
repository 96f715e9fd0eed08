//! Starting the service: open storage (migrations run here), start the actor threads and
//! the registry, seed demo data if asked, then serve HTTP until SIGINT/SIGTERM.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use actix::{Actor, Arbiter};
use actix_web::{middleware, web, App, HttpServer};

use docsync_actors::clock::{ManualClock, SharedClock, SystemClock};
use docsync_actors::collab::validate::Limits;
use docsync_actors::compaction::CompactionSupervisor;
use docsync_actors::document::ActorConfig;
use docsync_actors::metrics::Metrics;
use docsync_actors::registry::{Documents, Registry};
use docsync_actors::storage::{Backend, Storage, StorageConfig};

use crate::config::{ClockKind, Settings};
use crate::http::{self, state::AppState};

async fn wait_for_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    let mut int = signal(SignalKind::interrupt()).expect("SIGINT handler");
    tokio::select! {
        _ = term.recv() => {},
        _ = int.recv() => {},
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

pub fn storage_config(s: &Settings, metrics: Option<Arc<Metrics>>) -> StorageConfig {
    StorageConfig {
        backend: match s.storage.backend {
            crate::config::BackendKind::Sqlite => Backend::Sqlite,
            crate::config::BackendKind::Postgres => Backend::Postgres {
                url: s.storage.postgres_url.clone(),
            },
        },
        path: s.storage.path.clone(),
        synchronous: s.storage.synchronous,
        read_pool_size: s.storage.read_pool_size,
        group_commit_max: s.storage.group_commit_max,
        cache_kib: s.storage.cache_kib,
        metrics,
    }
}

pub fn actor_config(s: &Settings, metrics: Arc<Metrics>) -> ActorConfig {
    ActorConfig {
        lease_ttl_ms: s.actors.lease_ttl_ms,
        session_ttl_ms: s.actors.session_ttl_secs * 1000,
        idle_stop_ms: s.actors.idle_stop_secs * 1000,
        log_tail: s.actors.log_tail,
        log_page: s.actors.log_page,
        max_depth: s.limits.max_depth,
        max_tags_per_block: s.limits.max_tags_per_block,
        max_document_bytes: s.limits.max_document_bytes,
        auto_version_every_ms: s.history.versions().auto_every_ms,
        panic_marker: Some(s.testing.panic_marker.clone()).filter(|m| !m.is_empty()),
        metrics,
        ..ActorConfig::default()
    }
}

pub fn limits(s: &Settings) -> Limits {
    Limits {
        max_ops: s.limits.max_ops_per_sync,
        max_content_bytes: s.limits.max_content_bytes,
        max_title_bytes: s.limits.max_title_bytes,
        max_hold: s.limits.max_hold,
        ..Limits::default()
    }
}

/// Holds `<database>.lock` for as long as the process runs, so offline tools (compaction)
/// never work on a database a server has open.
pub fn lock_database(settings: &Settings) -> anyhow::Result<std::fs::File> {
    let path = settings.storage.path.with_extension("db.lock");
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)?;
    if file.try_lock().is_err() {
        anyhow::bail!(
            "{} is in use by a running docsync server (use `docsync compact --now --server URL --token ADMIN_TOKEN`)",
            settings.storage.path.display()
        );
    }
    Ok(file)
}

/// `docsync compact --now` without a server: the same supervisor and actors, one pass.
pub fn compact_offline(settings: Settings) -> anyhow::Result<()> {
    let _lock = lock_database(&settings)?;
    let metrics = Arc::new(Metrics::new());
    let (storage, writer_thread) = Storage::open(&storage_config(&settings, None))?;
    let system = actix::System::new();
    let summary = system.block_on(async {
        let arbiter = Arbiter::new();
        let clock: SharedClock = Arc::new(SystemClock);
        let registry = Documents::start(Registry::new(
            vec![arbiter.handle()],
            storage.clone(),
            clock.clone(),
            actor_config(&settings, metrics.clone()),
        ));
        let supervisor = CompactionSupervisor::new(
            storage.clone(),
            registry,
            clock,
            settings.compaction.retention(),
            Duration::from_secs(86_400),
            false,
            metrics.clone(),
        )
        .with_history(settings.history.versions(), settings.history.trash_ms())
        .with_audit(settings.audit.keep_days * 86_400_000)
        .start();
        let summary = supervisor.send(docsync_actors::compaction::RunPass).await;
        arbiter.stop();
        let _ = arbiter.join();
        summary
    })?;
    drop(system);
    drop(storage);
    let _ = writer_thread.join();
    println!("{}", serde_json::to_string(&summary)?);
    Ok(())
}

pub fn serve(settings: Settings, demo: bool) -> anyhow::Result<()> {
    // One SQLite file, one server; cluster nodes share PostgreSQL by design.
    let _lock = match settings.storage.backend {
        crate::config::BackendKind::Sqlite => Some(lock_database(&settings)?),
        crate::config::BackendKind::Postgres => None,
    };
    let settings = Arc::new(settings);
    let metrics = Arc::new(Metrics::new());
    let (storage, writer_thread) =
        Storage::open(&storage_config(&settings, Some(metrics.clone())))?;
    match storage.path() {
        Some(path) => tracing::info!(path = %path.display(), "database open, migrations applied"),
        None => tracing::info!("PostgreSQL open, migrations applied (cluster mode)"),
    }
    // The login path's stand-in hash, so the first unknown name costs one run like any other.
    crate::auth::password::warm_up();
    let system = actix::System::new();
    let result = system.block_on(run(settings, storage, demo, metrics));
    // Every storage handle is gone with the system; the writer drains its queue, checkpoints
    // the WAL and ends.
    drop(system);
    let _ = writer_thread.join();
    result
}

async fn run(
    settings: Arc<Settings>,
    storage: Storage,
    demo: bool,
    metrics: Arc<Metrics>,
) -> anyhow::Result<()> {
    let n_arbiters = match settings.actors.arbiters {
        0 => cores(),
        n => n,
    };
    let arbiters: Vec<Arbiter> = (0..n_arbiters).map(|_| Arbiter::new()).collect();
    let handles = arbiters.iter().map(|a| a.handle()).collect();
    let result = serve_http(settings, storage, demo, handles, metrics).await;
    // Whatever happened, stop the actor threads: their actors hold storage handles, and the
    // writer only ends (after checkpointing) once every handle is gone.
    tracing::info!("stopping document actors");
    for a in &arbiters {
        a.stop();
    }
    for a in arbiters {
        let _ = a.join();
    }
    result
}

/// Changes made through this server move the access epoch before their answers go out (the
/// writer reads it after each commit); this catches the ones made by other processes on
/// the same database (`docsync user …`, `docsync team …`) within `REFRESH_EVERY`.
fn refresh_access_epoch(storage: Storage) {
    actix_web::rt::spawn(async move {
        let epoch = storage.access_epoch().clone();
        loop {
            tokio::time::sleep(http::access_cache::REFRESH_EVERY).await;
            match storage
                .read(docsync_actors::storage::access_epoch::read_db)
                .await
            {
                Ok(n) => epoch.observe(n),
                Err(e) => tracing::debug!(error = %e, "reading the access epoch"),
            }
        }
    });
}

async fn serve_http(
    settings: Arc<Settings>,
    storage: Storage,
    demo: bool,
    arbiters: Vec<actix::ArbiterHandle>,
    metrics: Arc<Metrics>,
) -> anyhow::Result<()> {
    // Take the port first: if it is busy, fail before any actor starts.
    let listener = std::net::TcpListener::bind(settings.bind_addr())
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", settings.bind_addr()))?;
    let (clock, manual_clock): (SharedClock, Option<Arc<ManualClock>>) =
        match settings.testing.clock {
            ClockKind::System => (Arc::new(SystemClock), None),
            ClockKind::Manual => {
                tracing::warn!(
                    "testing.clock = manual: time moves only through POST /api/v1/testing/clock"
                );
                let c = ManualClock::new(settings.testing.clock_origin_ms);
                (c.clone(), Some(c))
            }
        };
    let (shutdown_trigger, shutdown) = crate::shutdown::ShutdownTrigger::new();
    let this_node = storage
        .is_postgres()
        .then(|| Arc::new(docsync_actors::membership::ThisNode::default()));
    let registry = Documents::start(Registry::new(
        arbiters,
        storage.clone(),
        clock.clone(),
        ActorConfig {
            this_node: this_node.clone(),
            ..actor_config(&settings, metrics.clone())
        },
    ));
    let cluster = match this_node {
        Some(node) => Some(crate::cluster::Cluster::start(
            &settings,
            storage.clone(),
            registry.clone(),
            node,
            metrics.clone(),
        )?),
        None => None,
    };
    if let Some(cluster) = &cluster {
        actix_web::rt::spawn(crate::cluster::peers::watch_peers(Arc::downgrade(cluster)));
    }
    let compaction = CompactionSupervisor::new(
        storage.clone(),
        registry.clone(),
        clock.clone(),
        settings.compaction.retention(),
        Duration::from_secs_f64(settings.compaction.interval_hours * 3600.0),
        settings.compaction.run_at_start,
        metrics.clone(),
    )
    .with_history(settings.history.versions(), settings.history.trash_ms())
    .with_audit(settings.audit.keep_days * 86_400_000);
    let compaction = match &cluster {
        Some(c) => compaction.in_cluster(c.this_node.clone()),
        None => compaction,
    }
    .start();
    // A full-disk episode ends only when a write as big as the biggest sync fits again (a
    // sync stores its text about twice: the block and the log).
    storage
        .health()
        .set_probe_bytes(settings.limits.max_body_bytes.saturating_mul(2));
    let webhooks = crate::webhooks::Webhooks::start(
        &settings,
        storage.clone(),
        clock.clone(),
        shutdown.clone(),
        cluster.as_ref().map(|_| settings.cluster.node_id.clone()),
    )?;
    let state = AppState {
        storage: storage.clone(),
        registry: registry.clone(),
        clock: clock.clone(),
        limits: limits(&settings),
        settings: settings.clone(),
        throttle: Arc::new(crate::auth::throttle::LoginThrottle::new(
            settings.auth.login_max_failures,
            Duration::from_secs(settings.auth.login_window_secs),
        )),
        shutdown,
        compaction,
        manual_clock,
        metrics,
        assets: Arc::new(http::assets::AssetSource::new(&settings.server.static_dir)),
        streams: Arc::new(http::channels::slots::StreamSlots::new(
            settings.limits.max_streams_per_user,
            settings.limits.max_streams_per_address,
        )),
        access_cache: Arc::new(http::access_cache::AccessCache::new(
            storage.access_epoch().clone(),
        )),
        client_owners: Arc::new(http::client_owners::ClientOwners::new(
            storage.clone(),
            clock.clone(),
        )),
        cluster: cluster.clone(),
        sso: settings
            .auth
            .oidc
            .enabled()
            .then(|| Arc::new(crate::auth::oidc::Sso::new(settings.auth.oidc.clone()))),
        write_budgets: Arc::new(http::write_budget::WriteBudgets::new(
            settings.limits.user_write_bytes_per_minute,
            settings.limits.doc_write_bytes_per_minute,
        )),
        passwords: Arc::new(crate::auth::password_pool::PasswordPool::start(
            settings.auth.password_threads,
            settings.auth.password_queue,
        )),
        webhooks,
    };
    if cluster.is_none() {
        // On PostgreSQL every node follows the epoch by LISTEN and its own poll.
        refresh_access_epoch(storage.clone());
    }
    if !settings.server.static_dir.as_os_str().is_empty() {
        tracing::info!(dir = %settings.server.static_dir.display(), "serving the web app from disk");
    }
    if demo {
        crate::demo::seed(&state, listener.local_addr()?).await?;
    }
    let workers = match settings.server.workers {
        0 => cores(),
        n => n,
    };
    let data = web::Data::new(state);
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .app_data(http::error::query_config())
            .app_data(http::error::path_config())
            // Innermost: a document's request reaches its owner (cluster mode only).
            .wrap(middleware::from_fn(crate::cluster::routing::route))
            .wrap(middleware::from_fn(http::origin::guard))
            // Before any forward: an API token's scope is decided where the request arrives.
            .wrap(middleware::from_fn(http::scope::guard))
            // Responses compressed as the client accepts, except small bodies and streams
            // (`http::compression`): `skip_small` inside `Compress`, `unmark` outside it.
            .wrap(middleware::from_fn(http::compression::skip_small))
            .wrap(middleware::Compress::default())
            .wrap(middleware::from_fn(http::compression::unmark))
            // Outside the origin guard, so its refusals carry the headers too.
            .wrap(middleware::from_fn(http::security_headers::add))
            // Before routing: HEAD takes the GET routes (it needs the request to itself, so
            // nothing outside it may hold a copy).
            .wrap(middleware::from_fn(http::head_requests::answer_like_get))
            .wrap(middleware::from_fn(crate::telemetry::request_log))
            .configure(http::routes)
    })
    .workers(workers)
    .client_request_timeout(Duration::from_secs(
        settings.server.client_request_timeout_secs,
    ))
    .shutdown_timeout(settings.server.shutdown_timeout_secs)
    // A client that closes its socket ends its request at once: with half-closed
    // connections allowed (actix's default) an EOF during an SSE stream or a long-poll was
    // ignored until the next write failed, 15–40 s later (measured with a client that
    // vanished mid-stream, `tests/streams.rs`).
    .h1_allow_half_closed(false)
    .disable_signals()
    .listen(listener)?;
    for addr in server.addrs() {
        // Tests and scripts read this line to find the port (bind to port 0 in tests).
        println!("docsync listening on http://{addr}");
    }
    std::io::stdout().flush()?;
    let server = server.run();
    let handle = server.handle();
    actix_web::rt::spawn(async move {
        wait_for_signal().await;
        tracing::info!("shutting down: closing streams, finishing requests in flight");
        // Streams and sockets end first (WebSocket close 1001) so clients reconnect
        // elsewhere; then the server stops accepting and drains what is in flight.
        shutdown_trigger.fire();
        handle.stop(true).await;
        // Cluster mode: hand every document on at once rather than when this node's
        // membership expires.
        if let Some(cluster) = &cluster {
            cluster.leave().await;
        }
    });
    server.await?;
    tracing::info!("HTTP server stopped");
    Ok(())
}
