import express from 'express';
import http from 'node:http';
const held = [];
const hold = (req, res) => { held.push([req, res]); };
const mode = process.argv[2];
let server;
if (mode === 'http') server = http.createServer(hold);
else { const app = express(); if (mode === 'json') app.use(express.json()); app.post('/x', hold); server = app.listen(0); }
if (mode === 'http') server.listen(0);
server.on('listening', async () => {
  const port = server.address().port;
  const all = [];
  for (let i = 0; i < 40; i++) all.push(fetch(`http://127.0.0.1:${port}/x`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }).catch(() => {}));
  while (held.length < 40) await new Promise((r) => setTimeout(r, 50));
  let sameReq = 0, sameRes = 0;
  for (let i = 21; i < 40; i++) { if (%HaveSameMap(held[i][0], held[20][0])) sameReq++; if (%HaveSameMap(held[i][1], held[20][1])) sameRes++; }
  console.log(mode, 'of 19 later req same map as #20:', sameReq, 'res:', sameRes);
  process.exit(0);
});
