//! OPML 2.0 as the browser's "Export → OPML" writes it (`static/app/editor/outline-io.js`,
//! `toOpml`): the title in the head, `flavor` docsync (the text is the editor's Markdown),
//! todos as `_todo` / `_complete` (Workflowy's attributes, so other outliners read them),
//! other kinds as `_type`, a code bullet's language as `_language`. Everything escaped.

use docsync_actors::collab::block::{Block, BlockType};

/// Escapes text for an XML attribute; line breaks as `&#10;` so they survive a reader.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' => out.push_str("&#10;"),
            // characters XML 1.0 cannot carry at all are dropped rather than written broken
            c if (c as u32) < 0x20 && c != '\t' && c != '\r' => {}
            c => out.push(c),
        }
    }
    out
}

/// The outline `rows` (depth, block; in document order, depths starting at 0 and never
/// jumping by more than one) as an OPML file.
pub fn write(title: &str, rows: &[(usize, &Block)]) -> String {
    let mut body = String::new();
    let mut open: Vec<usize> = Vec::new();
    let pad = |d: usize| "  ".repeat(d + 2);
    for (i, (depth, b)) in rows.iter().enumerate() {
        let next = rows.get(i + 1).map(|(d, _)| *d as isize).unwrap_or(-1);
        let mut attrs = format!(" text=\"{}\"", escape(&b.content));
        match b.block_type {
            BlockType::Todo => {
                attrs.push_str(" _todo=\"true\"");
                if b.checked {
                    attrs.push_str(" _complete=\"true\"");
                }
            }
            BlockType::Bullet => {}
            other => attrs.push_str(&format!(" _type=\"{}\"", other.as_str())),
        }
        if let (BlockType::Code, Some(lang)) = (b.block_type, &b.language) {
            attrs.push_str(&format!(" _language=\"{}\"", escape(lang)));
        }
        if next > *depth as isize {
            body.push_str(&format!("{}<outline{attrs}>\n", pad(*depth)));
            open.push(*depth);
            continue;
        }
        body.push_str(&format!("{}<outline{attrs}/>\n", pad(*depth)));
        while let Some(&d) = open.last() {
            if (d as isize) < next {
                break;
            }
            open.pop();
            body.push_str(&format!("{}</outline>\n", pad(d)));
        }
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<opml version=\"2.0\">\n  <head>\n    <title>{}</title>\n    <flavor>docsync</flavor>\n  </head>\n  <body>\n{body}  </body>\n</opml>\n",
        escape(title)
    )
}

#[cfg(test)]
mod tests {
    use super::write;
    use docsync_actors::collab::block::{Block, BlockType};

    fn block(content: &str, block_type: BlockType, checked: bool) -> Block {
        Block {
            id: "b".into(),
            parent_id: None,
            order_key: "a0".into(),
            content: content.into(),
            block_type,
            checked,
            collapsed: false,
            language: (block_type == BlockType::Code).then(|| "rust".to_string()),
            conflict_of: None,
            conflict_author: None,
            conflict_resolved: false,
            version: 1,
            deleted: false,
            deleted_at: None,
            deleted_by: None,
            updated_at: 0,
            updated_by: "u".into(),
        }
    }

    #[test]
    fn nesting_kinds_and_escapes() {
        let a = block("Plans & <ideas>\n\"second\" line", BlockType::Bullet, false);
        let b = block("Done", BlockType::Todo, true);
        let c = block("deeper", BlockType::H2, false);
        let d = block("fn main() {}", BlockType::Code, false);
        let rows = vec![(0, &a), (1, &b), (2, &c), (0, &d)];
        let out = write("Café \"plans\"", &rows);
        let expected = [
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
            "<opml version=\"2.0\">",
            "  <head>",
            "    <title>Café &quot;plans&quot;</title>",
            "    <flavor>docsync</flavor>",
            "  </head>",
            "  <body>",
            "    <outline text=\"Plans &amp; &lt;ideas&gt;&#10;&quot;second&quot; line\">",
            "      <outline text=\"Done\" _todo=\"true\" _complete=\"true\">",
            "        <outline text=\"deeper\" _type=\"h2\"/>",
            "      </outline>",
            "    </outline>",
            "    <outline text=\"fn main() {}\" _type=\"code\" _language=\"rust\"/>",
            "  </body>",
            "</opml>",
            "",
        ]
        .join("\n");
        assert_eq!(out, expected);
    }
}
