//! Report back ends that draw rather than print: the self-contained HTML
//! page of `analyze` and `diff` ([`html`]).

pub mod html;
