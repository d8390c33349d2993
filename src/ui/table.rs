//! Tables in kubectl's plain style: upper-case headers, no borders, columns padded.
use comfy_table::{ContentArrangement, Table, presets};

/// Builds a borderless table with the given header.
#[must_use]
pub fn new(header: &[&str]) -> Table {
    let mut table = Table::new();
    table
        .load_preset(presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Disabled);
    table.set_header(header.iter().map(|h| h.to_uppercase()));
    for column in table.column_iter_mut() {
        column.set_padding((0, 3));
    }
    table
}

/// Renders the table without the trailing padding comfy-table leaves on each line.
#[must_use]
pub fn render(table: &Table) -> String {
    table
        .lines()
        .map(|l| l.trim_end().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Age like kubectl: `45s`, `12m`, `5h`, `3d`.
#[must_use]
pub fn age(since: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>) -> String {
    let Some(since) = since else {
        return "<unknown>".into();
    };
    let secs = k8s_openapi::jiff::Timestamp::now()
        .duration_since(since.0)
        .as_secs()
        .max(0);
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 7200 => format!("{}m", s / 60),
        s if s < 172_800 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}
