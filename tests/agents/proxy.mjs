// A recording HTTP proxy in front of `k3 serve`: every client request passes through it, so the
// test sees each request's method, path and status (the server has no access log) and can tell a
// missing endpoint (404) from a refused request (other 4xx). Streams are piped unchanged.
import http from 'node:http';

export async function startProxy(targetUrl) {
  const target = new URL(targetUrl);
  const records = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const record = { method: req.method, path: req.url, status: 0, body: body.toString('utf8'), response: '', start: Date.now(), ms: 0 };
      records.push(record);
      const upstream = http.request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } },
        (up) => {
          record.status = up.statusCode;
          res.writeHead(up.statusCode, up.headers);
          up.on('data', (c) => {
            if (up.statusCode >= 400 && record.response.length < 2000) record.response += c.toString('utf8');
          });
          up.on('end', () => (record.ms = Date.now() - record.start));
          up.pipe(res);
        },
      );
      // A malformed upstream response (e.g. a body after a HEAD answer) reaches the client as a
      // broken connection and is recorded as status 502.
      upstream.on('error', (e) => {
        record.status = 502;
        record.response = String(e);
        if (res.headersSent) res.destroy();
        else res.writeHead(502).end(String(e));
      });
      upstream.end(body);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    records,
    take() {
      return records.splice(0, records.length);
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
