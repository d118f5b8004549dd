// The playground script's page controls (playground-script.ts puts it together): a form's progress
// while its request is in flight (spinner, seconds elapsed, the error it ended with), and the tabs.

// Plain browser JavaScript (ES2020) without template-literal interpolation: the string is the script text.
export const SCRIPT_PAGE_CONTROLS = `
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
`;
