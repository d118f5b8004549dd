// msgpackr (used by BullMQ) loads its native string extractor in a try/catch and falls back to its
// pure-JS decoder when it is missing. The registry this project installs from lacks most platform
// builds of msgpackr-extract, so a lock file naming them breaks `npm ci`; this stand-in is
// "missing" on every platform. It affects this repository's own installs only (npm overrides do not
// reach consumers of the package).
throw new Error('msgpackr-extract native acceleration is not installed');
