// The `express-image-gateway/playground` entry: the optional page that tries the gateway from a browser.
// Re-exports only; a host that never mounts the page never loads it.
export { createPlayground, type PlaygroundOptions } from './express/playground/create-playground.js';
