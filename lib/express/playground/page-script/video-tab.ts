// The playground script's Video tab (playground-script.ts puts it together): a video task created and
// queried as the contract advises (contract §8), with the countdown between queries the image task
// of the Generate tab waits with too, until its video plays.

// Plain browser JavaScript (ES2020) without template-literal interpolation: the string is the script text.
export const SCRIPT_VIDEO_TAB = `
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
`;
