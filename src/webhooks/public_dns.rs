//! The resolver of webhooks whose creator may not reach private networks: a host name is
//! looked up when a delivery connects, and only its public addresses are used. Checking the
//! URL when the webhook is made is not enough — a name can point at 127.0.0.1 or a private
//! network from the start, or be changed to after the check — and the server would then
//! post on someone's behalf to itself or to its neighbours.

use std::net::SocketAddr;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::target::is_private;

/// Resolves with the system's resolver, then keeps the public addresses.
pub(crate) struct PublicOnly;

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        Box::pin(async move {
            let host = name.as_str().to_string();
            // the port is the URL's; reqwest sets it on the addresses it gets back
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let public = public_only(&host, found)?;
            Ok(Box::new(public.into_iter()) as Addrs)
        })
    }
}

/// The public addresses among `found`, or why there are none.
fn public_only(
    host: &str,
    found: Vec<SocketAddr>,
) -> Result<Vec<SocketAddr>, Box<dyn std::error::Error + Send + Sync>> {
    let any = !found.is_empty();
    let public: Vec<SocketAddr> = found.into_iter().filter(|a| !is_private(a.ip())).collect();
    if public.is_empty() {
        return Err(if any {
            format!("{host} resolves to this machine or a private network; only admins' webhooks may send there").into()
        } else {
            format!("{host} has no address").into()
        });
    }
    Ok(public)
}

#[cfg(test)]
mod tests {
    use super::public_only;

    #[test]
    fn private_addresses_are_left_out() {
        let a = |s: &str| s.parse().unwrap();
        let mixed = vec![a("127.0.0.1:0"), a("93.184.216.34:0"), a("[fd00::1]:0")];
        assert_eq!(public_only("x", mixed).unwrap(), vec![a("93.184.216.34:0")]);
        let err = public_only("intranet.example", vec![a("10.1.2.3:0"), a("[::1]:0")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("private network"), "{err}");
        assert!(public_only("nowhere", vec![]).is_err());
    }
}
