//! Single sign-on's vocabulary: who the provider says someone is, and a sign-in under way.

/// What a verified ID token says about the person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub issuer: String,
    pub subject: String,
    pub email: Option<String>,
    pub email_verified: bool,
    /// A user name the provider suggests (`preferred_username`).
    pub preferred_username: Option<String>,
    /// The person's name (`name`).
    pub name: Option<String>,
}

/// A sign-in sent to the provider: what its answer is checked against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flow {
    pub nonce: String,
    pub pkce_verifier: String,
    /// Where to go once signed in (a path of this app).
    pub next: String,
    /// An invitation link's secret the sign-in came from, if any.
    pub invite: Option<String>,
    pub expires_at: i64,
}
