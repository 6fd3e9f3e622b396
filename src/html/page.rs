//! The page shell every report shares: one self-contained document with its
//! policy, styles, scripts and the figures as a JSON data island.

use std::fmt::Write as _;

use super::csp;
use super::escape::{json_island, Esc};

const STYLE: &str = include_str!("page.css");
/// Runs first, in `<head>`: collects errors into the page.
const GUARD: &str = include_str!("guard.js");
/// Runs last: sorting, filtering, opening timelines, the self-check.
const SCRIPT: &str = include_str!("page.js");

/// The `id` of the data island holding the figures (the `--format json` report).
pub const DATA_ID: &str = "mirotrace-data";

/// What a page is made of; [`Page::render`] wraps it in the shell.
pub struct Page<'a> {
    /// `analyze` or `diff`.
    pub command: &'a str,
    pub title: &'a str,
    /// Escaped markup under the title.
    pub subtitle: String,
    /// `(id, label)` of each section, for the table of contents.
    pub toc: Vec<(String, String)>,
    /// The sections' markup.
    pub body: String,
    /// The figures as JSON text (what `--format json` writes).
    pub data: &'a str,
}

impl Page<'_> {
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(self.body.len() + self.data.len() + STYLE.len() + 8192);
        let policy = csp::policy(&[GUARD, SCRIPT]);
        let _ = write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta name=\"color-scheme\" content=\"light dark\">\n\
             <meta name=\"generator\" content=\"mirotrace {}\">\n\
             <title>{}</title>\n<script>{GUARD}</script>\n<style>\n{STYLE}</style>\n</head>\n<body>\n<div class=\"wrap\">\n\
             <header class=\"top\"><h1><span class=\"tool\">mirotrace {}</span> · {}</h1><p class=\"sub\">{}</p></header>\n",
            Esc(&policy),
            env!("CARGO_PKG_VERSION"),
            Esc(self.title),
            Esc(self.command),
            Esc(self.title),
            self.subtitle,
        );
        out.push_str("<nav class=\"toc\" aria-label=\"sections\">");
        for (id, label) in &self.toc {
            let _ = write!(
                out,
                "<a href=\"#{}\" title=\"{}\">{}</a>",
                Esc(id),
                Esc(label),
                Esc(label)
            );
        }
        out.push_str("</nav>\n<pre id=\"mirotrace-errors\" hidden></pre>\n<main>\n");
        out.push_str(&self.body);
        let _ = write!(
            out,
            "</main>\n<footer>Written by mirotrace {} (<code>{} --format html</code>). Every figure is also in this file as \
             <code>--format json</code> writes it: the <code>&lt;script type=\"application/json\" id=\"{DATA_ID}\"&gt;</code> element. \
             The page loads nothing from the network.</footer>\n\
             <output id=\"mirotrace-status\" hidden></output>\n</div>\n\
             <script type=\"application/json\" id=\"{DATA_ID}\">{}</script>\n<script>{SCRIPT}</script>\n</body>\n</html>\n",
            env!("CARGO_PKG_VERSION"),
            Esc(self.command),
            json_island(self.data.trim_end()),
        );
        out
    }
}

/// A section card: `<section id=…><h2>…</h2>` + `inner` + `</section>`.
pub fn section(out: &mut String, id: &str, title: &str, lead: Option<&str>, inner: &str) {
    let _ = write!(
        out,
        "<section class=\"card\" id=\"{}\"><h2>{}</h2>",
        Esc(id),
        Esc(title)
    );
    if let Some(lead) = lead {
        let _ = write!(out, "<p class=\"lead\">{}</p>", Esc(lead));
    }
    out.push_str(inner);
    out.push_str("</section>\n");
}

/// A chart with its caption.
pub fn figure(caption: &str, sub: &str, svg: &str) -> String {
    let mut out = String::new();
    let _ = write!(out, "<figure><figcaption>{}", Esc(caption));
    if !sub.is_empty() {
        let _ = write!(out, " <span class=\"sub\">{}</span>", Esc(sub));
    }
    out.push_str("</figcaption>");
    out.push_str(svg);
    out.push_str("</figure>");
    out
}

/// One headline figure: a value, what it is, and a detail line. `key`, when
/// not empty, names the JSON figure the value shows (`rollback_rate.value`),
/// so a test can check the two agree.
pub fn kpi(out: &mut String, value: &str, label: &str, detail: &str, tone: &str, key: &str) {
    let key = if key.is_empty() {
        String::new()
    } else {
        format!(" data-key=\"{}\"", Esc(key))
    };
    let _ = write!(
        out,
        "<div class=\"kpi {}\"><div class=\"v\"{key}>{}</div><div class=\"k\">{}</div><div class=\"s\">{}</div></div>",
        Esc(tone),
        Esc(value),
        Esc(label),
        Esc(detail)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shell_holds_its_policy_scripts_and_escaped_data() {
        let page = Page {
            command: "analyze",
            title: "t</title><script>x()</script>",
            subtitle: String::new(),
            toc: vec![("a".into(), "A".into())],
            body: String::new(),
            data: "{\"q\": \"</script><script>alert(1)</script>\"}\n",
        };
        let html = page.render();
        assert!(html.contains("Content-Security-Policy"));
        assert!(html.contains(&crate::html::escape::esc(&csp::policy(&[GUARD, SCRIPT]))));
        assert_eq!(
            html.matches("<script").count(),
            3,
            "guard, data, page script"
        );
        assert!(!html.contains("alert(1)</script>"));
        assert!(html.contains("t&lt;/title&gt;"));
        let start =
            html.find("id=\"mirotrace-data\">").expect("island") + "id=\"mirotrace-data\">".len();
        let end = start + html[start..].find("</script>").expect("end");
        let back: serde_json::Value = serde_json::from_str(&html[start..end]).expect("json");
        assert_eq!(back["q"], "</script><script>alert(1)</script>");
    }
}
