// The playground's one page, as a string: HTML, CSS and script inline, no CDN and no build step, so it
// works offline and ships inside the bundle (scripts/build.ts needs no asset copy). The page is put
// together here from its style sheet (playground-style.ts), its tab panels (playground-panels.ts) and
// its script (playground-script.ts), which only calls the gateway's public API (`/v1/models`,
// `/v1/images/generations`, `/v1/images/edits`, `/api/v3/contents/generations/tasks`), exactly what a
// host's customers' clients send. Every value from an answer is written with textContent or as a URL
// attribute, never as HTML.
import { EDIT_PANEL, GENERATE_PANEL, VIDEO_PANEL } from './playground-panels.js';
import { PLAYGROUND_SCRIPT } from './playground-script.js';
import { PLAYGROUND_STYLE } from './playground-style.js';

/** What the page is given by createPlayground(); serialized into a JSON data block. */
export interface PlaygroundPageConfig {
  title: string;
  apiBase: string;
  defaultKey: string;
  models: { image: string; edit: string; video: string };
  pollIntervalsMs: readonly number[];
}

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

/** The whole page for a config; `<` in the JSON block is escaped so no value can close the script tag. */
export function renderPlaygroundPage(config: PlaygroundPageConfig): string {
  const json = JSON.stringify(config).replace(/</g, '\\u003c');
  const title = escapeHtml(config.title);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="icon" href="data:,">
<style>${PLAYGROUND_STYLE}</style>
</head>
<body>
<header>
  <h1>${title}</h1>
  <div class="key"><label for="key" style="margin:0">API key</label><input id="key" type="password" autocomplete="off" placeholder="sk-…" spellcheck="false"><span id="models-note" class="meta" style="margin:0"></span></div>
</header>
<main>
  <datalist id="models-image"></datalist><datalist id="models-edit"></datalist><datalist id="models-video"></datalist>
  <nav role="tablist">
    <button type="button" role="tab" data-panel="panel-generate" aria-selected="true">Generate</button>
    <button type="button" role="tab" data-panel="panel-edit" aria-selected="false">Edit</button>
    <button type="button" role="tab" data-panel="panel-video" aria-selected="false">Video</button>
  </nav>

${GENERATE_PANEL}

${EDIT_PANEL}

${VIDEO_PANEL}
</main>
<script type="application/json" id="playground-config">${json}</script>
<script>${PLAYGROUND_SCRIPT}</script>
</body>
</html>
`;
}
