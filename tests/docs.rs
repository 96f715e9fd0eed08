//! The operator docs stay true to the code: every configuration key of
//! `config/default.toml` is in the reference of `docs/deploy.md`, with its default.

#[test]
fn every_config_key_is_documented_with_its_default() {
    let toml = include_str!("../config/default.toml");
    let doc = include_str!("../docs/deploy.md");
    let mut section = String::new();
    let mut keys = 0;
    for line in toml.lines().map(str::trim) {
        if line.starts_with('[') && line.ends_with(']') {
            section = line[1..line.len() - 1].to_string();
            continue;
        }
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let (key, default) = line.split_once('=').expect("key = value");
        let (key, default) = (key.trim(), default.trim());
        let row = format!("| `{section}.{key}` | `{default}` |");
        assert!(
            doc.contains(&row),
            "docs/deploy.md lacks the row for {section}.{key} = {default}"
        );
        let env = format!(
            "`DOCSYNC_{}__{}`",
            section.to_uppercase().replace('.', "__"),
            key.to_uppercase()
        );
        assert!(doc.contains(&env), "docs/deploy.md lacks {env}");
        keys += 1;
    }
    assert!(keys > 20, "parsed only {keys} keys");
}

#[test]
fn deploy_files_in_the_docs_are_the_real_ones() {
    let doc = include_str!("../docs/deploy.md");
    assert!(doc.contains(include_str!("../config/deploy/docsync.service")));
    assert!(doc.contains(include_str!("../config/deploy/Containerfile")));
}
