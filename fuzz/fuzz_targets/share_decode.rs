//! Any bytes, read as a link, decode without panicking to a state that is
//! valid key by key: writing it back and decoding again gives the same
//! state, with no warning, and a carried config.json imports the same model.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vramfit_core::hf;
use vramfit_core::share::decode;

fuzz_target!(|data: &[u8]| {
    let link = String::from_utf8_lossy(data);
    let first = decode(&link);
    for w in &first.warnings {
        // Every warning renders as a message.
        assert!(!w.to_string().is_empty());
    }
    let query = first.state.to_query();
    let again = decode(&query);
    assert!(again.warnings.is_empty(), "{query}: {:?}", again.warnings);
    let (mut a, mut b) = (first.state.clone(), again.state.clone());
    // Packing reduces an importable config to what the import reads.
    let (ja, jb) = (a.config_json.take(), b.config_json.take());
    assert_eq!(a, b, "{query}");
    match (ja, jb) {
        (None, None) => {}
        (Some(ja), Some(jb)) => match hf::import(&ja) {
            Ok(model) => assert_eq!(hf::import(&jb).ok(), Some(model)),
            Err(_) => assert_eq!(ja, jb),
        },
        (ja, jb) => panic!("config lost in {query}: {ja:?} vs {jb:?}"),
    }
});
