// The playground's one page, as a string: HTML, CSS and script inline, no CDN and no build step, so it
// works offline and ships inside the bundle (scripts/build.ts needs no asset copy). The script only
// calls the gateway's public API (`/v1/models`, `/v1/images/generations`, `/v1/images/edits`,
// `/api/v3/contents/generations/tasks`), exactly what a host's customers' clients send. Every value
// from an answer is written with textContent or as a URL attribute, never as HTML.

/** What the page is given by createPlayground(); serialized into a JSON data block. */
export interface PlaygroundPageConfig {
  title: string;
  apiBase: string;
  defaultKey: string;
  models: { image: string; edit: string; video: string };
  pollIntervalsMs: readonly number[];
}

const PLAYGROUND_STYLE = `
:root { color-scheme: light dark; --fg:#1d2230; --muted:#5d6473; --bg:#f6f7fb; --card:#fff; --line:#dfe3ec; --accent:#3557d6; --bad:#b3261e; }
@media (prefers-color-scheme: dark) { :root { --fg:#e8eaf0; --muted:#9aa1b2; --bg:#14161c; --card:#1d2029; --line:#2e3240; --accent:#7f9bff; --bad:#ff8a80; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; flex-wrap: wrap; gap: 12px; align-items: center; padding: 14px 20px; background: var(--card); border-bottom: 1px solid var(--line); }
header h1 { font-size: 18px; margin: 0 16px 0 0; }
main { max-width: 1100px; margin: 0 auto; padding: 16px 20px 40px; }
label { display: block; font-size: 13px; color: var(--muted); margin: 10px 0 4px; }
input, select, textarea, button { font: inherit; color: inherit; }
input, select, textarea { width: 100%; padding: 7px 9px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); }
textarea { min-height: 64px; resize: vertical; }
button { padding: 8px 16px; border: 0; border-radius: 6px; background: var(--accent); color: #fff; cursor: pointer; }
button:disabled { opacity: .55; cursor: progress; }
button.secondary { background: transparent; color: var(--accent); border: 1px solid var(--accent); }
.row { display: grid; grid-template-columns: repeat(auto-fit, minmax(160px, 1fr)); gap: 0 14px; }
.key { display: flex; gap: 8px; align-items: center; flex: 1; min-width: 260px; }
.key input { max-width: 360px; }
nav { display: flex; gap: 6px; margin-bottom: 12px; }
nav button { background: transparent; color: var(--fg); border: 1px solid var(--line); }
nav button[aria-selected="true"] { background: var(--accent); color: #fff; border-color: var(--accent); }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 16px; }
.panel[hidden] { display: none; }
.actions { display: flex; gap: 12px; align-items: center; margin-top: 14px; }
.progress { display: none; align-items: center; gap: 8px; color: var(--muted); }
.busy .progress { display: inline-flex; }
.spinner { width: 16px; height: 16px; border: 2px solid var(--line); border-top-color: var(--accent); border-radius: 50%; animation: spin .8s linear infinite; }
@keyframes spin { to { transform: rotate(360deg); } }
.error { margin-top: 12px; padding: 10px 12px; border-radius: 6px; border: 1px solid var(--bad); color: var(--bad); white-space: pre-wrap; }
.error:empty { display: none; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(220px, 1fr)); gap: 14px; margin-top: 16px; }
figure { margin: 0; background: var(--card); border: 1px solid var(--line); border-radius: 10px; overflow: hidden; }
figure img { display: block; width: 100%; height: auto; background: var(--line); }
figcaption { padding: 8px 10px; font-size: 12px; color: var(--muted); word-break: break-all; }
.drop { margin-top: 4px; padding: 18px; border: 2px dashed var(--line); border-radius: 8px; text-align: center; color: var(--muted); cursor: pointer; }
.drop.over { border-color: var(--accent); color: var(--accent); }
.thumbs { display: flex; gap: 8px; margin-top: 8px; flex-wrap: wrap; }
.thumbs figure { width: 96px; }
.thumbs button { width: 100%; padding: 2px; border-radius: 0; font-size: 12px; }
ol.states { display: flex; gap: 8px; padding: 0; list-style: none; flex-wrap: wrap; }
ol.states li { padding: 4px 10px; border-radius: 999px; border: 1px solid var(--line); font-size: 13px; }
ol.states li.final { border-color: var(--accent); color: var(--accent); }
video { display: block; max-width: 100%; margin-top: 12px; border-radius: 10px; background: #000; }
[hidden] { display: none !important; }
.meta { font-size: 12px; color: var(--muted); margin-top: 10px; word-break: break-all; }
`;

// Plain browser JavaScript (ES2020), kept free of template-literal interpolation so the TypeScript
// string below is the script byte for byte (its sha256 is the page's Content-Security-Policy hash).
export const PLAYGROUND_SCRIPT = `
(function () {
  'use strict';
  var config = JSON.parse(document.getElementById('playground-config').textContent);
  var $ = function (id) { return document.getElementById(id); };
  var TERMINAL = ['succeeded', 'failed', 'expired', 'cancelled'];
  var keyInput = $('key');
  keyInput.value = sessionStorage.getItem('gateway-playground-key') || config.defaultKey || '';

  function api(path) { return config.apiBase + path; }
  function headers(extra) {
    var h = { Authorization: 'Bearer ' + keyInput.value.trim() };
    for (var k in extra || {}) h[k] = extra[k];
    return h;
  }
  // every failure is shown as the gateway's error object message (contract §2.5), or what went wrong on the way
  async function call(method, path, body, isForm, extraHeaders) {
    var extra = isForm || body === undefined ? {} : { 'Content-Type': 'application/json' };
    for (var name in extraHeaders || {}) extra[name] = extraHeaders[name];
    var init = { method: method, headers: headers(extra) };
    if (body !== undefined) init.body = isForm ? body : JSON.stringify(body);
    var started = performance.now();
    var response;
    try { response = await fetch(api(path), init); }
    catch (e) { throw new Error('The gateway could not be reached: ' + e.message); }
    var text = await response.text();
    var data;
    try { data = JSON.parse(text); } catch (e) { data = undefined; }
    if (!response.ok) {
      var message = data && data.error && data.error.message ? data.error.message : 'HTTP ' + response.status + ' (not the gateway\\'s error object)';
      var code = data && data.error && data.error.code ? ' [' + data.error.code + ']' : '';
      throw new Error(message + code);
    }
    if (data === undefined) throw new Error('The answer was not JSON.');
    // the gateway prices the answer when the host set pricing (docs/tenancy-and-billing.md "Cost in money")
    return { data: data, ms: Math.round(performance.now() - started), status: response.status, retryAfter: Number(response.headers.get('retry-after')) || 3, cost: response.headers.get('x-request-cost') };
  }

  // a streamed answer (docs/routes.md "Streamed images"): OpenAI's image events, read as they arrive
  async function stream(path, body, onEvent) {
    var response;
    try { response = await fetch(api(path), { method: 'POST', headers: headers({ 'Content-Type': 'application/json' }), body: JSON.stringify(body) }); }
    catch (e) { throw new Error('The gateway could not be reached: ' + e.message); }
    if (!response.ok || !/event-stream/.test(response.headers.get('content-type') || '')) {
      var text = await response.text();
      var data; try { data = JSON.parse(text); } catch (e) { data = undefined; }
      throw new Error(data && data.error && data.error.message ? data.error.message + ' [' + data.error.code + ']' : 'HTTP ' + response.status);
    }
    var reader = response.body.getReader();
    var decoder = new TextDecoder();
    var buffered = '';
    for (;;) {
      var read = await reader.read();
      if (read.done) break;
      buffered += decoder.decode(read.value, { stream: true });
      var end;
      while ((end = buffered.indexOf('\\n\\n')) >= 0) {
        var block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        var dataLines = block.split('\\n').filter(function (line) { return line.indexOf('data:') === 0; }).map(function (line) { return line.slice(5).trim(); });
        // a comment (": keep-alive") carries no data: it only keeps the connection open
        if (!dataLines.length || dataLines[0] === '[DONE]') continue;
        var event = JSON.parse(dataLines.join('\\n'));
        if (event.type === 'error' || event.error) throw new Error((event.error && event.error.message) || 'The stream failed.');
        onEvent(event);
      }
    }
  }

  // progress: a spinner and the seconds elapsed while a request is in flight
  async function busy(panel, work) {
    var button = panel.querySelector('button[type=submit]');
    var error = panel.querySelector('.error');
    var elapsed = panel.querySelector('.elapsed');
    var results = panel.querySelector('.grid');
    error.textContent = '';
    // the previous answer goes: an error shown under it would read as its own
    if (results) results.textContent = '';
    button.disabled = true;
    panel.classList.add('busy');
    var started = Date.now();
    elapsed.textContent = '0 s';
    var timer = setInterval(function () { elapsed.textContent = Math.round((Date.now() - started) / 1000) + ' s'; }, 250);
    try { await work(); }
    catch (e) { error.textContent = e.message; }
    finally { clearInterval(timer); button.disabled = false; panel.classList.remove('busy'); }
  }

  // tabs
  var tabs = document.querySelectorAll('nav button');
  tabs.forEach(function (tab) {
    tab.addEventListener('click', function () {
      tabs.forEach(function (other) { other.setAttribute('aria-selected', String(other === tab)); });
      document.querySelectorAll('.panel').forEach(function (panel) { panel.hidden = panel.id !== tab.dataset.panel; });
    });
  });

  // models: GET /v1/models fills each picker with the models listed on its route (docs/models.md);
  // typing any other name still works
  var PICKERS = { 'models-image': '/v1/images/generations', 'models-edit': '/v1/images/edits', 'models-video': '/api/v3/contents/generations/tasks' };
  var listed = {};
  async function loadModels() {
    var note = $('models-note');
    // no key, no request: the page would only collect a 401
    if (!keyInput.value.trim()) { note.textContent = 'Paste an API key to list the models'; return; }
    try {
      var list = (await call('GET', '/v1/models')).data.data || [];
      listed = {};
      list.forEach(function (model) { listed[model.id] = model; });
      Object.keys(PICKERS).forEach(function (id) {
        var datalist = $(id);
        datalist.textContent = '';
        list.forEach(function (model) {
          // a row without endpoints (a host's own /v1/models) is offered everywhere
          if (Array.isArray(model.endpoints) && model.endpoints.indexOf(PICKERS[id]) < 0) return;
          var option = document.createElement('option'); option.value = model.id; datalist.appendChild(option);
        });
      });
      note.textContent = list.length + ' models';
      offerDurations();
    } catch (e) { note.textContent = e.message; }
  }
  // the video lengths offered: 5 and 10 s, and the chosen model's shortest and longest (its limits.durations)
  function offerDurations() {
    var select = $('video-duration');
    var model = listed[$('video-model').value.trim()];
    var range = model && model.limits && model.limits.durations;
    var seconds = [5, 10];
    if (range && typeof range.min === 'number' && typeof range.max === 'number') {
      seconds = seconds.concat([range.min, range.max]).filter(function (value) { return value >= range.min && value <= range.max; });
    }
    seconds = seconds.filter(function (value, index) { return seconds.indexOf(value) === index; }).sort(function (a, b) { return a - b; });
    var kept = Number(select.value);
    select.textContent = '';
    seconds.forEach(function (value) { var option = document.createElement('option'); option.textContent = String(value); select.appendChild(option); });
    select.value = String(seconds.indexOf(kept) >= 0 ? kept : seconds.indexOf(5) >= 0 ? 5 : seconds[0]);
  }
  $('video-model').addEventListener('change', offerDurations);
  keyInput.addEventListener('change', function () { sessionStorage.setItem('gateway-playground-key', keyInput.value.trim()); loadModels(); });
  $('image-model').value = config.models.image;
  $('edit-model').value = config.models.edit;
  $('video-model').value = config.models.video;

  function showImages(target, result) {
    target.textContent = '';
    var requestId = result.data.extra && result.data.extra.request_id ? result.data.extra.request_id : '-';
    (result.data.data || []).forEach(function (item, index) {
      var figure = document.createElement('figure');
      var img = document.createElement('img');
      img.alt = 'result ' + (index + 1);
      img.src = item.b64_json ? 'data:image/png;base64,' + item.b64_json : item.url;
      var caption = document.createElement('figcaption');
      var lines = [];
      if (item.revised_prompt) lines.push('Revised prompt: ' + item.revised_prompt);
      lines.push('Request id: ' + requestId);
      lines.push('Latency: ' + result.ms + ' ms');
      if (result.cost && index === 0) lines.push('Cost of this request: ' + result.cost);
      caption.textContent = lines.join('\\n');
      caption.style.whiteSpace = 'pre-wrap';
      figure.appendChild(img);
      figure.appendChild(caption);
      target.appendChild(figure);
    });
    if (!target.children.length) throw new Error('The answer held no image.');
  }

  // long work is submitted as a task: the largest size takes minutes upstream (docs/image-tasks.md)
  $('image-size').addEventListener('change', function () { if ($('image-size').value === '2048*2048') $('image-mode').value = 'task'; });
  var cancelTask = null;
  $('image-cancel').addEventListener('click', function () { if (cancelTask) cancelTask(); });

  // a task: 202, then its states as the gateway reports them, each after the Retry-After it sent
  async function followTask(body, startedAt) {
    var states = $('image-states');
    var submitted = await call('POST', '/v1/images/generations', body, false, { Prefer: 'respond-async' });
    var task = submitted.data;
    var seen = '';
    var show = function (status) {
      if (status === seen) return;
      seen = status;
      var li = document.createElement('li');
      li.textContent = status + ' · ' + Math.round((Date.now() - startedAt) / 1000) + ' s';
      li.dataset.status = status;
      states.appendChild(li);
    };
    show(task.status);
    $('image-meta').textContent = 'Task id: ' + task.id;
    var retry = submitted.retryAfter;
    $('image-cancel').hidden = false;
    cancelTask = function () { call('POST', '/v1/images/tasks/' + encodeURIComponent(task.id) + '/cancel').catch(function () {}); };
    try {
      while (TERMINAL.indexOf(task.status) < 0) {
        await wait(retry * 1000, $('image-countdown'));
        var polled = await call('GET', '/v1/images/tasks/' + encodeURIComponent(task.id));
        task = polled.data;
        retry = polled.retryAfter;
        show(task.status);
      }
    } finally {
      $('image-cancel').hidden = true;
      $('image-countdown').textContent = '';
      cancelTask = null;
    }
    if (task.status !== 'succeeded') throw new Error('The task ended ' + task.status + (task.error && task.error.message ? ': ' + task.error.message : '.'));
    return { data: task.result, ms: Date.now() - startedAt };
  }

  // text-to-image: the spec's multimodal body (one text item), parameters with '*'; answered at once,
  // as a task, or streamed
  $('generate').addEventListener('submit', function (event) {
    event.preventDefault();
    var panel = $('panel-generate');
    $('image-states').textContent = '';
    $('image-meta').textContent = '';
    busy(panel, async function () {
      var prompt = $('image-prompt').value.trim();
      var parameters = { size: $('image-size').value, n: Number($('image-n').value) };
      var negative = $('image-negative').value.trim();
      if (negative) parameters.negative_prompt = negative;
      var body = { model: $('image-model').value.trim(), prompt: prompt || 'placeholder',
        input: { messages: [{ role: 'user', content: [{ text: prompt }] }] }, parameters: parameters };
      var mode = $('image-mode').value;
      var startedAt = Date.now();
      if (mode === 'task') return showImages($('image-results'), await followTask(body, startedAt));
      if (mode === 'stream') {
        var images = [];
        var preview = null;
        body.stream = true;
        body.partial_images = 2;
        await stream('/v1/images/generations', body, function (event) {
          if (/partial_image$/.test(event.type)) preview = event;
          else if (/completed$/.test(event.type)) images.push({ b64_json: event.b64_json, revised_prompt: '' });
          var shown = images.length ? images : preview ? [{ b64_json: preview.b64_json, revised_prompt: 'partial image ' + (preview.partial_image_index + 1) }] : [];
          if (shown.length) showImages($('image-results'), { data: { data: shown }, ms: Date.now() - startedAt });
        });
        if (!images.length) throw new Error('The stream ended without a completed image.');
        return;
      }
      showImages($('image-results'), await call('POST', '/v1/images/generations', body));
    });
  });

  // edits: 1 to 3 files, dropped or picked, sent as multipart image[] (as the OpenAI SDKs send them)
  var files = [];
  function renderThumbs() {
    var thumbs = $('edit-thumbs');
    thumbs.textContent = '';
    files.forEach(function (file, index) {
      var figure = document.createElement('figure');
      var img = document.createElement('img');
      img.src = URL.createObjectURL(file);
      img.alt = file.name;
      var remove = document.createElement('button');
      remove.type = 'button';
      remove.className = 'secondary';
      remove.textContent = 'remove ' + (index + 1);
      remove.addEventListener('click', function () { files.splice(index, 1); renderThumbs(); });
      figure.appendChild(img);
      figure.appendChild(remove);
      thumbs.appendChild(figure);
    });
    $('edit-count').textContent = files.length + ' of 3 images';
  }
  function addFiles(list) {
    Array.prototype.forEach.call(list, function (file) { if (files.length < 3 && /^image\\//.test(file.type)) files.push(file); });
    renderThumbs();
  }
  var drop = $('edit-drop');
  drop.addEventListener('click', function () { $('edit-files').click(); });
  drop.addEventListener('dragover', function (event) { event.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', function () { drop.classList.remove('over'); });
  drop.addEventListener('drop', function (event) { event.preventDefault(); drop.classList.remove('over'); addFiles(event.dataTransfer.files); });
  $('edit-files').addEventListener('change', function (event) { addFiles(event.target.files); event.target.value = ''; });
  $('edit').addEventListener('submit', function (event) {
    event.preventDefault();
    var panel = $('panel-edit');
    busy(panel, async function () {
      if (files.length === 0) throw new Error('Drop or pick 1 to 3 images first.');
      var form = new FormData();
      form.append('model', $('edit-model').value.trim());
      form.append('prompt', $('edit-prompt').value.trim());
      if ($('edit-size').value) form.append('size', $('edit-size').value);
      files.forEach(function (file) { form.append('image[]', file, file.name); });
      showImages($('edit-results'), await call('POST', '/v1/images/edits', form, true));
    });
  });

  // video: create the task, then poll as the service contract advises (contract §8: start late, shorten
  // gradually, stop at a terminal state); "Check now" lets a user look earlier
  var checkNow = null;
  function wait(ms, countdown) {
    return new Promise(function (resolve) {
      var until = Date.now() + ms;
      var tick = setInterval(function () { countdown.textContent = 'next check in ' + Math.max(0, Math.ceil((until - Date.now()) / 1000)) + ' s'; }, 250);
      var done = function () { clearInterval(tick); clearTimeout(timer); checkNow = null; countdown.textContent = 'checking…'; resolve(); };
      var timer = setTimeout(done, ms);
      checkNow = done;
    });
  }
  $('video-check').addEventListener('click', function () { if (checkNow) checkNow(); });
  $('video').addEventListener('submit', function (event) {
    event.preventDefault();
    var panel = $('panel-video');
    busy(panel, async function () {
      var states = $('video-states');
      var player = $('video-player');
      var meta = $('video-meta');
      states.textContent = '';
      player.hidden = true;
      player.removeAttribute('src');
      var body = { model: $('video-model').value.trim(), content: [{ type: 'text', text: $('video-prompt').value.trim() }],
        ratio: $('video-ratio').value, duration: Number($('video-duration').value) };
      var created = (await call('POST', '/api/v3/contents/generations/tasks', body)).data;
      meta.textContent = 'Task id: ' + created.id;
      var seen = '';
      var started = Date.now();
      for (var poll = 0; ; poll += 1) {
        var intervals = config.pollIntervalsMs;
        await wait(intervals[Math.min(poll, intervals.length - 1)], $('video-countdown'));
        var task = (await call('GET', '/api/v3/contents/generations/tasks/' + encodeURIComponent(created.id))).data;
        if (task.status !== seen) {
          seen = task.status;
          var li = document.createElement('li');
          li.textContent = task.status + ' · ' + Math.round((Date.now() - started) / 1000) + ' s';
          li.dataset.status = task.status;
          states.appendChild(li);
        }
        if (TERMINAL.indexOf(task.status) >= 0) {
          li.className = 'final';
          $('video-countdown').textContent = '';
          if (task.status !== 'succeeded') throw new Error('The task ended ' + task.status + (task.error && task.error.message ? ': ' + task.error.message : '.'));
          var url = task.content && task.content.video_url;
          if (!url) throw new Error('The task succeeded but has no content.video_url.');
          player.src = url;
          player.hidden = false;
          meta.textContent = 'Task id: ' + created.id + '\\nVideo: ' + url;
          return;
        }
      }
    });
  });

  loadModels();
})();
`;

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

  <section id="panel-generate" class="panel card">
    <form id="generate">
      <div class="row">
        <div><label for="image-model">Model</label><input id="image-model" list="models-image" required></div>
        <div><label for="image-size">Size</label><select id="image-size"><option value="1024*1024">1024×1024</option><option value="1280*720">1280×720</option><option value="720*1280">720×1280</option><option value="1024*768">1024×768</option><option value="768*1024">768×1024</option><option value="2048*2048" title="takes minutes: submitted as a task">2048×2048</option></select></div>
        <div><label for="image-n">Images (n)</label><select id="image-n"><option>1</option><option>2</option><option>3</option><option>4</option></select></div>
        <div><label for="image-mode">Answer</label><select id="image-mode"><option value="wait">at once (one request)</option><option value="task">as a task (Prefer: respond-async)</option><option value="stream">streamed (stream: true)</option></select></div>
      </div>
      <label for="image-prompt">Prompt</label><textarea id="image-prompt" required>A lighthouse at dawn, watercolour</textarea>
      <label for="image-negative">Negative prompt</label><input id="image-negative" placeholder="blurry, low quality">
      <div class="actions"><button type="submit">Generate</button><span class="progress"><span class="spinner"></span>generating… <span class="elapsed"></span> <span id="image-countdown"></span></span><button type="button" id="image-cancel" hidden>Cancel the task</button></div>
      <div class="error" role="alert"></div>
    </form>
    <ol id="image-states" class="states"></ol>
    <div id="image-meta" class="meta"></div>
    <div id="image-results" class="grid"></div>
  </section>

  <section id="panel-edit" class="panel card" hidden>
    <form id="edit">
      <div class="row">
        <div><label for="edit-model">Model</label><input id="edit-model" list="models-edit" required></div>
        <div><label for="edit-size">Size</label><select id="edit-size"><option value="">as the model chooses</option><option value="1024x1024">1024×1024</option><option value="1280x720">1280×720</option><option value="720x1280">720×1280</option><option value="1024x768">1024×768</option><option value="768x1024">768×1024</option></select></div>
      </div>
      <label for="edit-prompt">Instruction</label><textarea id="edit-prompt" required>Turn the scene into a snowy winter night</textarea>
      <label>Images (1 to 3, in order: subject, style, background)</label>
      <div id="edit-drop" class="drop">Drop images here, or click to pick them <input id="edit-files" type="file" accept="image/*" multiple hidden></div>
      <div id="edit-count" class="meta">0 of 3 images</div>
      <div id="edit-thumbs" class="thumbs"></div>
      <div class="actions"><button type="submit">Edit</button><span class="progress"><span class="spinner"></span>editing… <span class="elapsed"></span></span></div>
      <div class="error" role="alert"></div>
    </form>
    <div id="edit-results" class="grid"></div>
  </section>

  <section id="panel-video" class="panel card" hidden>
    <form id="video">
      <div class="row">
        <div><label for="video-model">Model</label><input id="video-model" list="models-video" required></div>
        <div><label for="video-ratio">Ratio</label><select id="video-ratio"><option>16:9</option><option>1:1</option><option>9:16</option></select></div>
        <div><label for="video-duration">Seconds</label><select id="video-duration"><option>5</option><option>10</option></select></div>
      </div>
      <label for="video-prompt">Prompt</label><textarea id="video-prompt" required>A cat on a skateboard, sunny street</textarea>
      <div class="actions"><button type="submit">Create video task</button><span class="progress"><span class="spinner"></span><span id="video-countdown">creating…</span> · <span class="elapsed"></span><button id="video-check" type="button" class="secondary">Check now</button></span></div>
      <div class="error" role="alert"></div>
    </form>
    <ol id="video-states" class="states"></ol>
    <video id="video-player" controls autoplay muted loop playsinline hidden></video>
    <div id="video-meta" class="meta" style="white-space:pre-wrap"></div>
  </section>
</main>
<script type="application/json" id="playground-config">${json}</script>
<script>${PLAYGROUND_SCRIPT}</script>
</body>
</html>
`;
}
