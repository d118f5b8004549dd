// The playground page's one inline script, put together from its parts (page-script/): the gateway
// calls, the page controls, the model pickers and one part per tab, in one function scope. It only
// calls the gateway's public API, exactly what a host's customers' clients send, and writes every value
// from an answer with textContent or as a URL attribute, never as HTML.
import { SCRIPT_GATEWAY_CALLS } from './page-script/gateway-calls.js';
import { SCRIPT_PAGE_CONTROLS } from './page-script/page-controls.js';
import { SCRIPT_MODEL_PICKERS } from './page-script/model-pickers.js';
import { SCRIPT_GENERATE_TAB } from './page-script/generate-tab.js';
import { SCRIPT_EDIT_TAB } from './page-script/edit-tab.js';
import { SCRIPT_VIDEO_TAB } from './page-script/video-tab.js';

// Plain browser JavaScript (ES2020), kept free of template-literal interpolation so the TypeScript
// strings are the script byte for byte (its sha256 is the page's Content-Security-Policy hash).
const OPENING = `
(function () {
  'use strict';
  var config = JSON.parse(document.getElementById('playground-config').textContent);
  var $ = function (id) { return document.getElementById(id); };
  var TERMINAL = ['succeeded', 'failed', 'expired', 'cancelled'];
  var keyInput = $('key');
  keyInput.value = sessionStorage.getItem('gateway-playground-key') || config.defaultKey || '';
`;

const CLOSING = `
  loadModels();
})();
`;

/** The script as the page carries it, and as createPlayground() hashes it for its Content-Security-Policy. */
export const PLAYGROUND_SCRIPT = [OPENING, SCRIPT_GATEWAY_CALLS, SCRIPT_PAGE_CONTROLS, SCRIPT_MODEL_PICKERS, SCRIPT_GENERATE_TAB, SCRIPT_EDIT_TAB, SCRIPT_VIDEO_TAB, CLOSING].join('');
