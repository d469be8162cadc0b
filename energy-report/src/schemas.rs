//! JSON Schemas of the files and outputs other tools read, generated from the types that
//! write them (schemars, behind the `schema` feature: a bench author never compiles it).
//! `docs/schemas/` holds them; a test of the research package keeps them current and has an
//! independent validator (Python's `jsonschema`) read every stored file against them.

use schemars::{JsonSchema, Schema};

use energy_results::ResultFile;
use energy_results::{RunManifest, RESULT_SCHEMA, RUN_SCHEMA};

use crate::format::json::{JsonReport, REPORT_SCHEMA};
use energy_results::ab::{AbReport, AB_SCHEMA};
use energy_results::campaign::{CampaignManifest, CAMPAIGN_SCHEMA};

/// One published schema: the tag its files carry in `schema`, its file name under
/// `docs/schemas/`, and its text.
#[derive(Clone, Debug, PartialEq)]
pub struct PublishedSchema {
    /// The `schema` tag of the files it describes (`energy-result/1`).
    pub tag: &'static str,
    /// `energy-result-1.schema.json`.
    pub file_name: String,
    /// The schema, pretty-printed JSON with a final newline.
    pub text: String,
}

fn published<T: JsonSchema>(tag: &'static str, what: &str) -> PublishedSchema {
    let mut schema: Schema = schemars::schema_for!(T);
    let file_name = format!("{}.schema.json", tag.replace('/', "-"));
    if let Some(object) = schema.as_object_mut() {
        object.insert("$id".into(), format!("https://kernel-energy.invalid/schemas/{file_name}").into());
        object.insert("title".into(), format!("{tag}: {what}").into());
    }
    // Every file of this kind carries its tag: the schema holds it to it.
    if let Some(tag_schema) =
        schema.as_object_mut().and_then(|o| o.get_mut("properties")).and_then(|p| p.get_mut("schema"))
    {
        *tag_schema = serde_json::json!({ "const": tag, "description": "The file's schema tag." });
    }
    let text = serde_json::to_string_pretty(&schema).unwrap_or_default() + "\n";
    PublishedSchema { tag, file_name, text }
}

/// Every published schema: the result file, the run manifest, `ab.json`, the campaign manifest and
/// `report --format json`'s single report.
pub fn published_schemas() -> Vec<PublishedSchema> {
    vec![
        published::<ResultFile>(RESULT_SCHEMA, "one benchmark's result file (`<target>/energy/<run>/<id>.json`)"),
        published::<RunManifest>(RUN_SCHEMA, "a run's manifest (`<target>/energy/<run>/run.json`)"),
        published::<AbReport>(AB_SCHEMA, "`cargo energy ab` and `gate`'s report (`ab.json`)"),
        published::<CampaignManifest>(
            CAMPAIGN_SCHEMA,
            "a campaign's manifest (`campaign.json` of `cargo energy slurm`'s campaign directory)",
        ),
        published::<JsonReport<'static>>(
            REPORT_SCHEMA,
            "`cargo energy report --format json` of one run (a report of several runs is `energy-report-set/1`: \
             `{\"schema\", \"reports\": [this, …]}`; `partial` and `measured_nothing` are added where they apply)",
        ),
    ]
}
