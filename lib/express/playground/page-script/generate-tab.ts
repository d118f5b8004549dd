// The playground script's Generate tab (playground-script.ts puts it together): a text-to-image request
// answered at once, followed as an image task (docs/image-tasks.md) or streamed, and the result grid
// the Edit tab shows its images in too.

// Plain browser JavaScript (ES2020) without template-literal interpolation: the string is the script text.
export const SCRIPT_GENERATE_TAB = `
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
      // the image's Content Credentials as the gateway reported them (docs/provenance.md "The report")
      if (item.provenance) {
        var credentials = document.createElement('div');
        credentials.className = 'provenance';
        var parts = ['C2PA: ' + item.provenance.c2pa];
        if (item.provenance.signer) parts.push('signer: ' + item.provenance.signer);
        if (typeof item.provenance.trusted === 'boolean') parts.push(item.provenance.trusted ? 'trusted' : 'not trusted');
        if (item.provenance.codes) parts.push(item.provenance.codes.join(', '));
        credentials.textContent = parts.join(' · ');
        caption.appendChild(credentials);
      }
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
          else if (/completed$/.test(event.type)) images.push({ b64_json: event.b64_json, revised_prompt: '', provenance: event.provenance });
          var shown = images.length ? images : preview ? [{ b64_json: preview.b64_json, revised_prompt: 'partial image ' + (preview.partial_image_index + 1) }] : [];
          if (shown.length) showImages($('image-results'), { data: { data: shown }, ms: Date.now() - startedAt });
        });
        if (!images.length) throw new Error('The stream ended without a completed image.');
        return;
      }
      showImages($('image-results'), await call('POST', '/v1/images/generations', body));
    });
  });
`;
