//! The web app under `static/` is compiled into the binary (`src/http/assets.rs`). The embed
//! macro lists the folder when the crate compiles, but Cargo only notices changes to files it
//! was told about: without this, a file added to `static/` would be missing until some Rust
//! source changed. A directory given to `rerun-if-changed` is scanned as a whole.

fn main() {
    println!("cargo:rerun-if-changed=static");
    println!("cargo:rerun-if-changed=build.rs");
}
