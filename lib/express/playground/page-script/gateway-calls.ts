// The playground script's calls to the gateway (playground-script.ts puts it together): a JSON or
// multipart request with the pasted key, answered as the gateway's data or thrown as its error
// object's message (contract §2.5), and a streamed image answer read event by event (docs/routes.md
// "Streamed images").

// Plain browser JavaScript (ES2020) without template-literal interpolation: the string is the script text.
export const SCRIPT_GATEWAY_CALLS = `
  function api(path) { return config.apiBase + path; }
  function headers(extra) {
    var h = { Authorization: 'Bearer ' + keyInput.value.trim() };
    for (var k in extra || {}) h[k] = extra[k];
    return h;
  }
  // every failure is shown as the gateway's error object message (contract §2.5), or what went wrong on the way
  // a content policy refusal names its flagged categories (docs/content-safety.md): shown on a line of their own
  function flaggedLine(data) {
    var categories = data && data.error && Array.isArray(data.error.categories) ? data.error.categories : [];
    return categories.length > 0 ? '\\nFlagged categories: ' + categories.join(', ') : '';
  }

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
      throw new Error(message + code + flaggedLine(data));
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
      throw new Error(data && data.error && data.error.message ? data.error.message + ' [' + data.error.code + ']' + flaggedLine(data) : 'HTTP ' + response.status);
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
`;
