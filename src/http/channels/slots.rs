//! Bounds on wake-up channels: every open SSE stream, waiting long-poll and WebSocket
//! connection holds one slot for its user and one for its client address. Beyond
//! `limits.max_streams_per_user` / `limits.max_streams_per_address` a new one gets `429
//! too_many_streams`. A slot is an RAII guard kept inside the stream, the handler future or
//! the socket's actor, so the slot is free exactly when the channel is gone — whichever way
//! it ends (client closed, access lost, shutdown, error) — and nothing has to remember to
//! give it back.
//!
//! Why both counters: per user stops one account (or a leaked token in a reconnect loop)
//! from piling up streams anywhere; per address stops one host from doing it with many
//! accounts. The address limit is the larger one because a whole office may sit behind one
//! NAT address, each person with several tabs.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use actix_web::http::header::HeaderMap;
use actix_web::HttpRequest;

use super::super::error::ApiError;
use super::super::AppState;

pub struct StreamSlots {
    max_per_user: usize,
    max_per_address: usize,
    open: Mutex<Open>,
}

#[derive(Default)]
struct Open {
    by_user: HashMap<String, usize>,
    by_address: HashMap<String, usize>,
}

/// One open channel's claim on its user's and its address's allowance; freed when dropped.
pub struct StreamSlot {
    slots: Arc<StreamSlots>,
    user: String,
    address: String,
}

impl StreamSlots {
    pub fn new(max_per_user: usize, max_per_address: usize) -> StreamSlots {
        StreamSlots {
            max_per_user,
            max_per_address,
            open: Mutex::new(Open::default()),
        }
    }

    /// Takes a slot for `user` at `address`, or says which limit is reached (nothing taken).
    pub fn take(self: &Arc<Self>, user: &str, address: &str) -> Result<StreamSlot, ApiError> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let by_user = open.by_user.get(user).copied().unwrap_or(0);
        if by_user >= self.max_per_user {
            return Err(ApiError::TooManyStreams(format!(
                "this user already has {by_user} open streams (limits.max_streams_per_user); close some tabs or retry later"
            )));
        }
        let by_address = open.by_address.get(address).copied().unwrap_or(0);
        if by_address >= self.max_per_address {
            return Err(ApiError::TooManyStreams(format!(
                "this address already has {by_address} open streams (limits.max_streams_per_address); retry later"
            )));
        }
        *open.by_user.entry(user.to_string()).or_default() += 1;
        *open.by_address.entry(address.to_string()).or_default() += 1;
        Ok(StreamSlot {
            slots: self.clone(),
            user: user.to_string(),
            address: address.to_string(),
        })
    }

    /// Open slots of `user` and of `address` (for tests and diagnostics).
    pub fn count(&self, user: &str, address: &str) -> (usize, usize) {
        let open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        (
            open.by_user.get(user).copied().unwrap_or(0),
            open.by_address.get(address).copied().unwrap_or(0),
        )
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut open = self.slots.open.lock().unwrap_or_else(|p| p.into_inner());
        let open = &mut *open;
        release(&mut open.by_user, &self.user);
        release(&mut open.by_address, &self.address);
    }
}

/// Counts one down; removes keys at zero so the maps hold only users and addresses with
/// open channels (a reconnect loop over many addresses must not grow them for ever).
fn release(map: &mut HashMap<String, usize>, key: &str) {
    if let Some(n) = map.get_mut(key) {
        *n -= 1;
        if *n == 0 {
            map.remove(key);
        }
    }
}

/// The client's address for per-address limits. Forwarded headers (`Forwarded`,
/// `X-Forwarded-For`) are believed only from a peer in `server.trusted_proxies` (or from
/// anyone with `auth.trust_forwarded_for`, the login throttle's switch): otherwise a client
/// could name a fresh address per request and never meet the limit.
pub fn client_address(state: &AppState, req: &HttpRequest) -> String {
    let peer = req.peer_addr().map(|a| a.ip());
    let trusted = &state.settings.server.trusted_proxies;
    let believe =
        state.settings.auth.trust_forwarded_for || peer.is_some_and(|p| trusted.contains(&p));
    believe
        .then(|| forwarded_client(req.headers(), trusted))
        .flatten()
        .or(peer)
        .map_or_else(|| "unknown".into(), |ip| ip.to_string())
}

/// The client in a forwarded chain: the right-most address that is not one of our proxies.
/// Proxies append (nginx's `$proxy_add_x_forwarded_for`), so everything left of the last
/// proxy's entry was written by the client and is not believed — taking the first entry,
/// as `ConnectionInfo::realip_remote_addr` does, would let a client pick its address.
/// `Forwarded` wins over `X-Forwarded-For` when both are present. An entry that is not an
/// address (`unknown`, an obfuscated name) ends the walk: `None`, so the peer counts.
fn forwarded_client(headers: &HeaderMap, trusted: &[IpAddr]) -> Option<IpAddr> {
    let values = |name: &str| -> Vec<String> {
        headers
            .get_all(name)
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(|s| s.trim().to_string())
            .collect()
    };
    let forwarded: Vec<String> = values("forwarded")
        .iter()
        .filter_map(|element| {
            element.split(';').find_map(|pair| {
                let (k, v) = pair.trim().split_once('=')?;
                k.eq_ignore_ascii_case("for")
                    .then(|| v.trim().trim_matches('"').to_string())
            })
        })
        .collect();
    let chain = if forwarded.is_empty() {
        values("x-forwarded-for")
    } else {
        forwarded
    };
    for entry in chain.iter().rev() {
        let ip = parse_node(entry)?;
        if !trusted.contains(&ip) {
            return Some(ip);
        }
    }
    None
}

/// `1.2.3.4`, `1.2.3.4:5678`, `::1`, `[::1]` or `[::1]:5678`.
fn parse_node(s: &str) -> Option<IpAddr> {
    if let Ok(ip) = s.parse() {
        return Some(ip);
    }
    if let Some(rest) = s.strip_prefix('[') {
        return rest.split(']').next()?.parse().ok();
    }
    s.parse::<std::net::SocketAddr>().ok().map(|a| a.ip())
}

/// Takes a slot for the caller of `req`.
pub fn take(state: &AppState, req: &HttpRequest, user_id: &str) -> Result<StreamSlot, ApiError> {
    state.streams.take(user_id, &client_address(state, req))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_per_user_and_per_address_and_slots_come_back() {
        let slots = Arc::new(StreamSlots::new(2, 3));
        let a1 = slots.take("u1", "10.0.0.1").unwrap();
        let _a2 = slots.take("u1", "10.0.0.1").unwrap();
        let e = slots.take("u1", "10.0.0.2").err().expect("third for u1");
        assert_eq!(e.code(), "too_many_streams");
        let _b1 = slots.take("u2", "10.0.0.1").unwrap();
        let e = slots
            .take("u3", "10.0.0.1")
            .err()
            .expect("fourth at the address");
        assert!(e.to_string().contains("max_streams_per_address"), "{e}");
        // Refusals took nothing.
        assert_eq!(slots.count("u1", "10.0.0.1"), (2, 3));
        drop(a1);
        assert_eq!(slots.count("u1", "10.0.0.1"), (1, 2));
        let _a3 = slots.take("u1", "10.0.0.2").unwrap();
    }

    fn chain(pairs: &[(&str, &str)], trusted: &[&str]) -> Option<String> {
        let mut req = actix_web::test::TestRequest::default();
        for (k, v) in pairs {
            req = req.append_header((*k, *v));
        }
        let req = req.to_http_request();
        let trusted: Vec<IpAddr> = trusted.iter().map(|t| t.parse().unwrap()).collect();
        forwarded_client(req.headers(), &trusted).map(|ip| ip.to_string())
    }

    #[test]
    fn the_client_is_the_right_most_address_that_is_not_a_proxy() {
        let xff = "x-forwarded-for";
        // What the client wrote itself (left of the proxy's entry) is not believed.
        assert_eq!(
            chain(&[(xff, "203.0.113.1, 198.51.100.7")], &["127.0.0.1"]).as_deref(),
            Some("198.51.100.7")
        );
        // Two proxies of ours: skip both.
        assert_eq!(
            chain(&[(xff, "198.51.100.7, 10.0.0.2")], &["10.0.0.2"]).as_deref(),
            Some("198.51.100.7")
        );
        // Several header lines are one list.
        assert_eq!(
            chain(&[(xff, "203.0.113.1"), (xff, "198.51.100.8")], &[]).as_deref(),
            Some("198.51.100.8")
        );
        // Forwarded wins, with ports, quotes and IPv6 brackets.
        assert_eq!(
            chain(
                &[
                    (
                        "forwarded",
                        "for=203.0.113.1, for=\"[2001:db8::1]:4711\";proto=https"
                    ),
                    (xff, "198.51.100.9")
                ],
                &[]
            )
            .as_deref(),
            Some("2001:db8::1")
        );
        assert_eq!(
            chain(&[(xff, "1.2.3.4:80")], &[]).as_deref(),
            Some("1.2.3.4")
        );
        // Not an address, or only proxies: nothing believed (the peer counts).
        assert_eq!(chain(&[(xff, "unknown")], &[]), None);
        assert_eq!(chain(&[(xff, "10.0.0.2")], &["10.0.0.2"]), None);
        assert_eq!(chain(&[], &[]), None);
    }

    #[test]
    fn empty_counters_are_forgotten() {
        let slots = Arc::new(StreamSlots::new(5, 5));
        for i in 0..100 {
            drop(
                slots
                    .take(&format!("u{i}"), &format!("10.0.0.{i}"))
                    .unwrap(),
            );
        }
        let open = slots.open.lock().unwrap();
        assert!(open.by_user.is_empty() && open.by_address.is_empty());
    }
}
