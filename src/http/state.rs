//! What every handler shares (`web::Data<AppState>`): storage, the document actors, the
//! clock, settings and the server-wide guards (login throttle, stream slots, access cache).

use std::sync::Arc;

use actix::Addr;

use docsync_actors::clock::SharedClock;
use docsync_actors::collab::validate::Limits;
use docsync_actors::registry::Documents;
use docsync_actors::storage::Storage;

use super::access_cache::AccessCache;
use super::assets::AssetSource;
use super::channels::slots::StreamSlots;
use super::client_owners::ClientOwners;
use super::write_budget::WriteBudgets;
use crate::config::Settings;

/// Shared by every handler.
#[derive(Clone)]
pub struct AppState {
    pub storage: Storage,
    /// The document actors (derefs to the registry's address for its messages).
    pub registry: Documents,
    pub clock: SharedClock,
    pub limits: Limits,
    pub settings: Arc<Settings>,
    pub throttle: Arc<crate::auth::throttle::LoginThrottle>,
    /// Becomes true when the server starts shutting down: streams and sockets end.
    pub shutdown: crate::shutdown::Shutdown,
    pub compaction: Addr<docsync_actors::compaction::CompactionSupervisor>,
    /// Set only with `testing.clock = "manual"`.
    pub manual_clock: Option<Arc<docsync_actors::clock::ManualClock>>,
    pub metrics: Arc<docsync_actors::metrics::Metrics>,
    /// The web app's files (`server.static_dir`: compiled in, or a folder on disk).
    pub assets: Arc<AssetSource>,
    /// Open wake-up channels per user and per address (`limits.max_streams_*`).
    pub streams: Arc<StreamSlots>,
    /// Access decisions remembered until the access epoch moves (`access_cache.rs`).
    pub access_cache: Arc<AccessCache>,
    /// Bytes per minute each user and document may write (`write_budget.rs`).
    pub write_budgets: Arc<WriteBudgets>,
    /// The threads that check passwords (`auth/password_pool.rs`).
    pub passwords: Arc<crate::auth::password_pool::PasswordPool>,
    /// Which user each client ID belongs to (`client_owners.rs`).
    pub client_owners: Arc<ClientOwners>,
    /// Cluster mode (PostgreSQL): membership and where documents are served; None on SQLite.
    pub cluster: Option<Arc<crate::cluster::Cluster>>,
    /// Single sign-on (`[auth.oidc]`); None while no issuer is set.
    pub sso: Option<Arc<crate::auth::oidc::Sso>>,
    /// Webhook secrets' sealing and the deliverers' wake-up (`webhooks/`).
    pub webhooks: Arc<crate::webhooks::Webhooks>,
}

impl AppState {
    pub fn max_body(&self) -> usize {
        self.settings.limits.max_body_bytes
    }

    /// Takes a wake-up channel's slot for `user_id` and the client of `req` (`slots.rs`).
    pub fn take_stream_slot(
        &self,
        req: &actix_web::HttpRequest,
        user_id: &str,
    ) -> Result<super::channels::slots::StreamSlot, super::error::ApiError> {
        self.streams.take(user_id, &self.client_address(req))
    }

    /// The client's address, for what is counted per address (`client_address.rs`).
    pub fn client_address(&self, req: &actix_web::HttpRequest) -> String {
        let secret = self.cluster.as_ref().map(|c| c.hop().secret);
        super::client_address::client_address(&self.settings, secret, req)
    }
}
