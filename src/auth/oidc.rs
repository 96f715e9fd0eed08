//! Single sign-on with OpenID Connect (PROTOCOL §9), the provider's side of it: the
//! authorization URL (code flow, PKCE S256, `state` and `nonce` made here), and the answer
//! checked — the code exchanged with the client secret and the PKCE verifier, the ID token's
//! signature against the provider's published keys, its issuer, audience, expiry and nonce
//! (time from the server's clock, so tests can move it). The provider's discovery document
//! is read when first needed and kept ten minutes; an unreachable provider is an error of
//! its own, so the login page can say so (password sign-in is unaffected).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use openidconnect::core::{
    CoreAuthenticationFlow, CoreClient, CoreIdToken, CoreIdTokenVerifier, CoreProviderMetadata,
};
use openidconnect::reqwest;
use openidconnect::{
    AuthorizationCode, ClientId, ClientSecret, CsrfToken, IssuerUrl, Nonce, PkceCodeChallenge,
    PkceCodeVerifier, RedirectUrl, Scope, TokenResponse,
};

use docsync_actors::storage::identities::Identity;

use crate::config::OidcSettings;

/// What can go wrong, in the words the login page needs.
#[derive(Debug, thiserror::Error)]
pub enum SsoError {
    /// The provider did not answer (down, unreachable, or not a provider at that address).
    #[error("the sign-in provider cannot be reached: {0}")]
    Unreachable(String),
    /// The provider refused the code (used, expired, or not this client's).
    #[error("the sign-in provider refused: {0}")]
    Refused(String),
    /// The ID token did not pass a check (signature, issuer, audience, expiry, nonce).
    #[error("the sign-in could not be verified: {0}")]
    Invalid(String),
}

/// The authorization request: where to send the browser, and what to keep until it returns.
pub struct Started {
    pub url: String,
    pub state: String,
    pub nonce: String,
    pub pkce_verifier: String,
}

/// How long the discovery document (and with it the signing keys) is believed.
const METADATA_FOR: Duration = Duration::from_secs(600);

pub struct Sso {
    cfg: OidcSettings,
    http: reqwest::Client,
    metadata: Mutex<Option<(Instant, CoreProviderMetadata)>>,
}

impl Sso {
    pub fn new(cfg: OidcSettings) -> Sso {
        let http = reqwest::Client::builder()
            // A provider that redirects its endpoints is not followed (SSRF).
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(10))
            .build()
            .expect("HTTP client for the sign-in provider");
        Sso {
            cfg,
            http,
            metadata: Mutex::new(None),
        }
    }

    pub fn label(&self) -> &str {
        &self.cfg.label
    }

    pub fn password_login(&self) -> bool {
        self.cfg.password_login
    }

    pub fn allowed_domains(&self) -> &[String] {
        &self.cfg.allowed_domains
    }

    fn redirect_url(&self) -> Result<RedirectUrl, SsoError> {
        let base = self.cfg.public_url.trim_end_matches('/');
        RedirectUrl::new(format!("{base}/auth/oidc/callback"))
            .map_err(|e| SsoError::Invalid(format!("auth.oidc.public_url: {e}")))
    }

    async fn provider(&self, fresh: bool) -> Result<CoreProviderMetadata, SsoError> {
        if !fresh {
            if let Some((at, m)) = self.metadata.lock().expect("metadata lock").as_ref() {
                if at.elapsed() < METADATA_FOR {
                    return Ok(m.clone());
                }
            }
        }
        let issuer = IssuerUrl::new(self.cfg.issuer.clone())
            .map_err(|e| SsoError::Unreachable(format!("auth.oidc.issuer: {e}")))?;
        let m = CoreProviderMetadata::discover_async(issuer, &self.http)
            .await
            .map_err(|e| SsoError::Unreachable(error_chain(&e)))?;
        *self.metadata.lock().expect("metadata lock") = Some((Instant::now(), m.clone()));
        Ok(m)
    }

    fn client(
        &self,
        m: CoreProviderMetadata,
    ) -> Result<
        openidconnect::core::CoreClient<
            openidconnect::EndpointSet,
            openidconnect::EndpointNotSet,
            openidconnect::EndpointNotSet,
            openidconnect::EndpointNotSet,
            openidconnect::EndpointMaybeSet,
            openidconnect::EndpointMaybeSet,
        >,
        SsoError,
    > {
        let secret = (!self.cfg.client_secret.is_empty())
            .then(|| ClientSecret::new(self.cfg.client_secret.clone()));
        Ok(
            CoreClient::from_provider_metadata(
                m,
                ClientId::new(self.cfg.client_id.clone()),
                secret,
            )
            .set_redirect_uri(self.redirect_url()?),
        )
    }

    /// The provider's authorization URL for a new sign-in.
    pub async fn start(&self) -> Result<Started, SsoError> {
        let client = self.client(self.provider(false).await?)?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let (url, state, nonce) = client
            .authorize_url(
                CoreAuthenticationFlow::AuthorizationCode,
                CsrfToken::new_random,
                Nonce::new_random,
            )
            .add_scope(Scope::new("email".into()))
            .add_scope(Scope::new("profile".into()))
            .set_pkce_challenge(challenge)
            .url();
        Ok(Started {
            url: url.to_string(),
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            pkce_verifier: verifier.secret().clone(),
        })
    }

    /// The code exchanged and the ID token verified; `now_ms` is the server's clock.
    pub async fn finish(
        &self,
        code: &str,
        nonce: &str,
        pkce_verifier: &str,
        now_ms: i64,
    ) -> Result<Identity, SsoError> {
        let client = self.client(self.provider(false).await?)?;
        let tokens = client
            .exchange_code(AuthorizationCode::new(code.to_string()))
            .map_err(|e| SsoError::Invalid(e.to_string()))?
            .set_pkce_verifier(PkceCodeVerifier::new(pkce_verifier.to_string()))
            .request_async(&self.http)
            .await
            .map_err(|e| match e {
                openidconnect::RequestTokenError::ServerResponse(r) => {
                    SsoError::Refused(r.to_string())
                }
                other => SsoError::Unreachable(error_chain(&other)),
            })?;
        let token = tokens
            .id_token()
            .ok_or_else(|| SsoError::Invalid("the provider sent no ID token".into()))?;
        checked(client.id_token_verifier(), token, nonce, now_ms)
    }
}

/// The identity an ID token names, once its signature, issuer, audience (this client, and
/// no other it does not trust), expiry (by `now_ms`, the server's clock) and nonce check.
fn checked(
    verifier: CoreIdTokenVerifier<'_>,
    token: &CoreIdToken,
    nonce: &str,
    now_ms: i64,
) -> Result<Identity, SsoError> {
    let now = chrono::DateTime::from_timestamp_millis(now_ms)
        .ok_or_else(|| SsoError::Invalid("the server's clock is out of range".into()))?;
    let verifier = verifier.set_time_fn(move || now);
    let claims = token
        .claims(&verifier, &Nonce::new(nonce.to_string()))
        .map_err(|e| SsoError::Invalid(e.to_string()))?;
    Ok(Identity {
        issuer: claims.issuer().to_string(),
        subject: claims.subject().to_string(),
        email: claims.email().map(|e| e.to_string()),
        email_verified: claims.email_verified().unwrap_or(false),
        preferred_username: claims.preferred_username().map(|u| u.to_string()),
        name: claims
            .name()
            .and_then(|n| n.get(None))
            .map(|n| n.to_string()),
    })
}

/// An error with its causes, for the log and the message.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cause = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    //! The ID token checks, on tokens signed here with a key made for the test (the whole
    //! flow against a real provider is `e2e/23-sso.test.js`).
    use super::*;
    use openidconnect::core::{
        CoreIdTokenClaims, CoreJsonWebKeySet, CoreJwsSigningAlgorithm, CoreRsaPrivateSigningKey,
    };
    use openidconnect::{
        Audience, EmptyAdditionalClaims, EndUserEmail, JsonWebKeyId, PrivateSigningKey,
        StandardClaims, SubjectIdentifier,
    };

    const ISSUER: &str = "https://id.example";
    const NOW: i64 = 1_796_545_398_000;

    fn key() -> CoreRsaPrivateSigningKey {
        let out = std::process::Command::new("openssl")
            .args(["genrsa", "-traditional", "2048"])
            .output()
            .expect("openssl genrsa");
        let pem = String::from_utf8(out.stdout).unwrap();
        CoreRsaPrivateSigningKey::from_pem(&pem, Some(JsonWebKeyId::new("k1".into()))).unwrap()
    }

    fn token(
        key: &CoreRsaPrivateSigningKey,
        iss: &str,
        aud: &[&str],
        exp_ms: i64,
        nonce: &str,
    ) -> CoreIdToken {
        let at = |ms: i64| chrono::DateTime::from_timestamp_millis(ms).unwrap();
        let claims = CoreIdTokenClaims::new(
            IssuerUrl::new(iss.into()).unwrap(),
            aud.iter().map(|a| Audience::new(a.to_string())).collect(),
            at(exp_ms),
            at(NOW - 1000),
            StandardClaims::new(SubjectIdentifier::new("sub-1".into()))
                .set_email(Some(EndUserEmail::new("ann@example.com".into())))
                .set_email_verified(Some(true)),
            EmptyAdditionalClaims {},
        )
        .set_nonce(Some(Nonce::new(nonce.into())));
        CoreIdToken::new(
            claims,
            key,
            CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256,
            None,
            None,
        )
        .unwrap()
    }

    fn verifier(trusted: &CoreRsaPrivateSigningKey) -> CoreIdTokenVerifier<'static> {
        CoreIdTokenVerifier::new_confidential_client(
            ClientId::new("docsync".into()),
            ClientSecret::new("secret".into()),
            IssuerUrl::new(ISSUER.into()).unwrap(),
            CoreJsonWebKeySet::new(vec![trusted.as_verification_key()]),
        )
    }

    #[test]
    fn an_id_token_passes_only_every_check() {
        let k = key();
        let good = token(&k, ISSUER, &["docsync"], NOW + 60_000, "n1");
        let who = checked(verifier(&k), &good, "n1", NOW).expect("a good token");
        assert_eq!((who.subject.as_str(), who.email_verified), ("sub-1", true));
        let refused = |t: &CoreIdToken, nonce: &str, now: i64, v: CoreIdTokenVerifier<'static>| {
            matches!(checked(v, t, nonce, now), Err(SsoError::Invalid(_)))
        };
        // Another client's token (wrong audience), also one naming us among untrusted others.
        assert!(refused(
            &token(&k, ISSUER, &["intruder"], NOW + 60_000, "n1"),
            "n1",
            NOW,
            verifier(&k)
        ));
        assert!(refused(
            &token(&k, ISSUER, &["docsync", "intruder"], NOW + 60_000, "n1"),
            "n1",
            NOW,
            verifier(&k)
        ));
        // Expired by the server's clock; another issuer; another nonce; another key.
        assert!(refused(&good, "n1", NOW + 61_000, verifier(&k)));
        assert!(refused(
            &token(&k, "https://evil.example", &["docsync"], NOW + 60_000, "n1"),
            "n1",
            NOW,
            verifier(&k)
        ));
        assert!(refused(&good, "n2", NOW, verifier(&k)));
        assert!(refused(&good, "n1", NOW, verifier(&key())));
    }
}
