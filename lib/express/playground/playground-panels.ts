// The playground page's three tab panels as markup (playground-page.ts puts them in the page): the
// forms the page script (playground-script.ts) reads by element id, and where it shows progress, task
// states and results. Static HTML: nothing of a config or an answer is written here.

/** The Generate tab: model, size, `n`, how it is answered (at once, a task, a stream), the prompts. */
export const GENERATE_PANEL = `  <section id="panel-generate" class="panel card">
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
  </section>`;

/** The Edit tab: model, size, the instruction and the drop zone for 1 to 3 images. */
export const EDIT_PANEL = `  <section id="panel-edit" class="panel card" hidden>
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
  </section>`;

/** The Video tab: model, ratio, seconds, the prompt, the task states and the player. */
export const VIDEO_PANEL = `  <section id="panel-video" class="panel card" hidden>
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
  </section>`;
