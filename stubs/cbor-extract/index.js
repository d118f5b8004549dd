// cbor-x (used by @trustnxt/c2pa-ts, the independent C2PA reader of the provenance specs) loads its
// native extractor in a try/catch and falls back to its pure-JS decoder when it is missing. The
// extractor's install script fetches a platform build; this stand-in is "missing" everywhere, so
// nothing is built or downloaded at install. It affects this repository's own installs only.
throw new Error('cbor-extract native acceleration is not installed');
