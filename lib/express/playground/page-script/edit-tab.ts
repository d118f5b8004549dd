// The playground script's Edit tab (playground-script.ts puts it together): 1 to 3 images dropped or
// picked, sent with the instruction as multipart image[] (as the OpenAI SDKs send them).

// Plain browser JavaScript (ES2020) without template-literal interpolation: the string is the script text.
export const SCRIPT_EDIT_TAB = `
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
`;
