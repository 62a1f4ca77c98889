/**
 * The web inbox page: plain HTML and CSS with the script of script.ts inlined. No build step, no
 * framework, nothing fetched from anywhere but the fake itself.
 */
import { INBOX_SCRIPT } from './script.js';

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2330;background:#eef1f5}
header{display:flex;gap:12px;align-items:center;flex-wrap:wrap;padding:8px 16px;background:#1f3a5f;color:#fff}
header h1{font-size:16px;margin:0 12px 0 0}
header input{width:280px}
input,select,button{font:inherit;padding:3px 6px;border:1px solid #b8c2d0;border-radius:4px;background:#fff;color:#1d2330}
button{cursor:pointer;background:#f6f8fb}
button:hover{background:#e3e9f2}
#live{font-size:12px;padding:2px 8px;border-radius:10px;background:#c0392b}
#live.on{background:#2e8b57}
main{display:grid;grid-template-columns:230px 400px minmax(420px,1fr);gap:12px;padding:12px;height:calc(100vh - 48px)}
main>section,main>aside{background:#fff;border-radius:8px;padding:8px 10px;overflow:auto;min-height:0}
h2{font-size:13px;text-transform:uppercase;letter-spacing:.05em;color:#5a6577;margin:8px 0 6px}
ul{list-style:none;margin:0;padding:0}
#users li{padding:6px 8px;border-radius:6px;cursor:pointer;display:flex;justify-content:space-between}
#users li:hover{background:#eef3fa}
#users li.selected{background:#dbe7f7;font-weight:600}
#accounts li{padding:6px 8px;border-radius:6px;cursor:pointer;display:flex;justify-content:space-between;gap:6px}
#accounts li:hover{background:#eef3fa}
#accounts li.selected{background:#1f3a5f;color:#fff;font-weight:600}
#accounts li.selected .count{color:#dbe7f7}
.count{color:#5a6577;font-size:12px}
#broadcasts li{border:1px solid #e1e6ee;border-radius:6px;padding:6px;margin-bottom:6px;font-size:12px}
#broadcasts summary{cursor:pointer}
#broadcasts .items{margin-top:6px}
.phone{display:flex;flex-direction:column;height:100%;border:10px solid #1d2330;border-radius:28px;background:#e5ddd5;overflow:hidden}
.phone .bar{background:#075e54;color:#fff;padding:8px 12px;font-weight:600}
#messages{flex:1;overflow-y:auto;overflow-anchor:none;padding:10px;display:flex;flex-direction:column;gap:8px}
.msg{max-width:85%;min-width:0;align-self:flex-start;background:#fff;border-radius:8px;padding:6px 8px;box-shadow:0 1px 1px rgba(0,0,0,.12);overflow-wrap:anywhere}
.msg.user{align-self:flex-end;background:#dcf8c6}
.msg.user.failed{background:#fde2e0;border:1px dashed #b03a2e}
.msg.user.failed .answer{color:#b03a2e;font-weight:600}
.msg .meta{font-size:11px;color:#6b7380;margin-top:3px}
.msg img,.msg video{width:240px;max-width:100%;border-radius:4px;display:block;background:#222}
.msg audio{width:260px}
.push{align-self:center;background:#fffbe6;border:1px solid #f0d77a;border-radius:8px;padding:4px 8px;font-size:12px;max-width:90%;min-width:0;overflow-wrap:anywhere}
.push b{margin-right:4px}
.failure{color:#b03a2e;font-size:12px;font-weight:600}
.external{font-size:12px;color:#5a6577;border:1px dashed #b8c2d0;border-radius:4px;padding:6px}
.converting{padding:14px;background:#333;color:#eee;border-radius:4px;text-align:center}
.flex-card{border:1px solid #d5dbe4;border-radius:10px;overflow:hidden;background:#fff;min-width:200px}
.flex-carousel{display:flex;gap:6px;overflow-x:auto}
.flex-part{padding:8px}
.flex-box{display:flex;flex-direction:column;gap:4px}
.flex-box.horizontal,.flex-box.baseline{flex-direction:row;align-items:baseline}
.flex-button{display:block;text-align:center;padding:6px;border-radius:6px;background:#06c755;color:#fff;text-decoration:none}
pre{white-space:pre-wrap;font-size:12px;margin:0;max-height:240px;overflow:auto}
#compose{display:flex;gap:4px;padding:6px;background:#f0f0f0}
#compose input{flex:1}
#reply-status{font-size:12px;padding:0 8px 6px;background:#f0f0f0;min-height:18px}
.row{display:flex;gap:6px;align-items:center;flex-wrap:wrap;margin-bottom:6px}
#faults li{font-size:12px;padding:2px 0}
table{border-collapse:collapse;width:100%;font-size:12px}
th,td{text-align:left;padding:3px 5px;border-bottom:1px solid #edf0f4;vertical-align:top}
th{position:sticky;top:0;background:#fff}
tr.error td{background:#fdf0ef}
tr.pending td{color:#8a93a3}
.tag{display:inline-block;border-radius:3px;padding:0 4px;margin-right:3px;font-size:11px;background:#e3e9f2}
.tag.retry{background:#fde7c8}
.tag.fault{background:#f9d0cc}
.tag.login,.tag.refresh{background:#d7ecff}
td details pre{margin-top:4px}
#timeline-table{table-layout:fixed}
#timeline-table td{overflow:hidden;text-overflow:ellipsis}
#timeline-table td:nth-child(2),#timeline-table td:nth-child(5){white-space:nowrap}
td.request summary{white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
td.request details[open] summary{white-space:normal}
tr.routine td{color:#5a6577}
.tag.routine{background:#e8e3f7}
#directory li{font-size:12px;padding:2px 0;overflow-wrap:anywhere}
.tag{white-space:nowrap}
td.request .tags{margin-top:2px;line-height:1.5}
@media (max-width:1300px){main{grid-template-columns:170px 370px minmax(420px,1fr)}}
.empty{color:#8a93a3;font-size:12px;padding:8px}
`;

/** The whole page served at `GET /` of the fake server. */
export const INBOX_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>OA inbox · fake OA server</title>
<link rel="icon" href="data:,">
<style>${STYLE}</style>
</head>
<body>
<header>
  <h1>OA inbox</h1>
  <span id="live">offline</span>
  <label>Webhook <input id="webhook-url" placeholder="http://127.0.0.1:3000/oa/webhook"></label>
  <button id="save-webhook" type="button">Save</button>
  <button data-action="transcodes/complete" type="button">Finish transcodes</button>
  <button data-action="reset" type="button">Clear all</button>
</header>
<main>
  <aside>
    <div id="accounts-section" hidden>
      <h2>Accounts</h2>
      <ul id="accounts"></ul>
    </div>
    <h2>Conversations</h2>
    <ul id="users"></ul>
    <h2>Broadcasts</h2>
    <ul id="broadcasts"></ul>
    <h2>Directory</h2>
    <ul id="directory"></ul>
  </aside>
  <section>
    <div class="phone">
      <div class="bar" id="title">No conversation yet</div>
      <div id="messages"></div>
      <form id="compose">
        <select id="reply-kind" aria-label="message type">
          <option value="text">Text</option><option value="image">Image</option>
          <option value="video">Video</option><option value="audio">Voice</option>
        </select>
        <input id="reply-text" placeholder="Reply as this user" autocomplete="off">
        <button type="submit">Send</button>
      </form>
      <div id="reply-status"></div>
    </div>
  </section>
  <section>
    <h2>Faults</h2>
    <form id="fault-form" class="row">
      <select id="fault-kind" aria-label="fault">
        <option value="rate-limit">429 storm</option><option value="error">5xx answers</option>
        <option value="job-busy">JOB_BUSY</option><option value="delay">Slow answers</option>
        <option value="reset">Reset after delivery</option>
      </select>
      <label>times <input id="fault-times" value="3" size="5"></label>
      <label id="fault-status-field" hidden>status <input id="fault-status" value="500" size="4"></label>
      <label id="fault-delay-field" hidden>delay ms <input id="fault-delay" value="2000" size="6"></label>
      <button type="submit">Switch on</button>
    </form>
    <div class="row">
      <button data-action="tokens/expire" type="button">Expire access tokens</button>
      <button data-action="faults/clear" type="button">Clear faults</button>
      <span id="fault-status-text"></span>
    </div>
    <ul id="faults"></ul>
    <h2>Timeline</h2>
    <div class="row">
      <input id="filter" placeholder="filter: path, status, code" aria-label="filter">
      <select id="filter-kind" aria-label="show">
        <option value="">all requests</option><option value="errors">errors</option>
        <option value="retries">retries</option><option value="auth">logins and refreshes</option>
        <option value="faults">injected faults</option>
      </select>
      <span id="omitted"></span>
    </div>
    <table id="timeline-table">
      <colgroup><col style="width:34px"><col style="width:100px"><col><col style="width:54px"><col style="width:104px"><col style="width:38px"></colgroup>
      <thead><tr><th>#</th><th>time</th><th>request</th><th>status</th><th>code</th><th>ms</th></tr></thead>
      <tbody id="timeline"></tbody>
    </table>
  </section>
</main>
<script>${INBOX_SCRIPT}</script>
</body>
</html>
`;
