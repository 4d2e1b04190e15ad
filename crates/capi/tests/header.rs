//! include/bytepair.h is what cbindgen makes of src/lib.rs today: the committed header cannot
//! drift from the library. `BYTEPAIR_BLESS=1 cargo test -p bytepair-capi --test header`
//! rewrites it after a change to the API.

use std::path::PathBuf;

#[test]
fn committed_header_is_fresh() {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let committed_path = crate_dir.join("../../include/bytepair.h");
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut fresh = Vec::new();
    cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut fresh);
    let fresh = String::from_utf8(fresh).expect("the header is UTF-8");
    if std::env::var_os("BYTEPAIR_BLESS").is_some() {
        std::fs::write(&committed_path, &fresh).expect("write include/bytepair.h");
        return;
    }
    let committed = std::fs::read_to_string(&committed_path).unwrap_or_default();
    assert!(
        committed == fresh,
        "include/bytepair.h differs from a fresh cbindgen generation; rerun with BYTEPAIR_BLESS=1 and commit it"
    );
}
