import http from 'node:http';
import express from 'express';
const app = express();
const held = [];
const step = Number(process.argv[2]);
const proto = process.argv[3] === 'plain' ? Object.create(http.IncomingMessage.prototype) : app.request;
const protoRes = process.argv[3] === 'plain' ? Object.create(http.ServerResponse.prototype) : app.response;
const server = http.createServer((req, res) => {
  if (step >= 1) { req.res = res; res.req = req; }
  if (step >= 2) { Object.setPrototypeOf(req, proto); Object.setPrototypeOf(res, protoRes); }
  if (step >= 3) { res.locals = Object.create(null); }
  held.push([req, res]);
}).listen(0, async () => {
  const port = server.address().port;
  for (let i = 0; i < 40; i++) fetch(`http://127.0.0.1:${port}/x`, { method: 'POST', body: '{}' }).catch(() => {});
  while (held.length < 40) await new Promise((r) => setTimeout(r, 50));
  let sameReq = 0, sameRes = 0;
  for (let i = 21; i < 40; i++) { if (%HaveSameMap(held[i][0], held[20][0])) sameReq++; if (%HaveSameMap(held[i][1], held[20][1])) sameRes++; }
  console.log(process.argv.slice(2).join(' '), 'req', sameReq, 'res', sameRes);
  process.exit(0);
});
