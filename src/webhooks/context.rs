//! What every deliverer shares: storage, the clock, the settings, the sealing key, one HTTP
//! client, this node's name on a lease, shutdown and the wake-up of `Webhooks::poke`.

use std::sync::Arc;

use tokio::sync::watch;

use docsync_actors::clock::SharedClock;
use docsync_actors::storage::Storage;

use super::sealing::Sealer;
use crate::config::WebhookSettings;
use crate::shutdown::Shutdown;

/// Everything a deliverer needs, shared by all of them.
pub(crate) struct Context {
    pub storage: Storage,
    pub clock: SharedClock,
    pub settings: WebhookSettings,
    pub sealer: Option<Arc<Sealer>>,
    /// For webhooks that may reach any address (an admin's, or `allow_private_targets`).
    pub client: reqwest::Client,
    /// For everyone else's: host names resolved to public addresses only (`public_dns.rs`).
    pub public_client: reqwest::Client,
    /// This process's name on a lease.
    pub node: String,
    /// Several nodes may deliver (PostgreSQL): a webhook is delivered under a lease.
    pub clustered: bool,
    pub shutdown: Shutdown,
    pub wake: watch::Receiver<u64>,
}
