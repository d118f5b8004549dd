// The playground script's model pickers (playground-script.ts puts it together): GET /v1/models fills
// each form's list with the models served on its route (docs/models.md), the video form offers the
// chosen model's lengths, and the key is kept for the browser tab's session.

// Plain browser JavaScript (ES2020) without template-literal interpolation: the string is the script text.
export const SCRIPT_MODEL_PICKERS = `
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
  // the video lengths offered: the chosen model's own (limits.durations.values), else 5 and 10 s and its shortest and longest
  function offerDurations() {
    var select = $('video-duration');
    var model = listed[$('video-model').value.trim()];
    var range = model && model.limits && model.limits.durations;
    var seconds = [5, 10];
    if (range && Array.isArray(range.values) && range.values.length > 0) {
      seconds = range.values.slice();
    } else if (range && typeof range.min === 'number' && typeof range.max === 'number') {
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
`;
