// The playground page's style sheet (playground-page.ts inlines it in a <style> element): light and
// dark colours from the system's scheme, the tabs, the forms, the progress spinner, the result grid
// and the task states. Plain CSS, no external font or image.

/** The page's CSS, as it stands in its <style> element. */
export const PLAYGROUND_STYLE = `
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
figcaption .provenance { margin-top: 4px; font-size: 11px; }
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
