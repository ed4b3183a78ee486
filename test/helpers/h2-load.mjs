// HTTP/2 load of its own (autocannon speaks HTTP/1.1 only), every request accounted for.
import { connect, constants } from 'node:http2';

/**
 * Keeps `sessions` HTTP/2 connections busy with `streams` requests each at a time, cycling `paths`,
 * until `until()` holds (checked between requests) or `deadlineMs` passes, and counts how each
 * request ended. It behaves as browsers do: a session that got GOAWAY takes no new request (the
 * next one opens a new session), and a stream the server refused without processing it
 * (REFUSED_STREAM: sent while the server's GOAWAY was on its way) is sent again on a new session,
 * at most twice. RFC 9113 §8.7: "Requests that have not been processed have not failed".
 * Everything else counts against the server: a status other than 2xx or 304, any other stream or
 * session error, no answer within `timeoutMs`.
 * Resolves with `answered`, `failed` (each with its reason), `refused` (streams sent again) and
 * `sessions` (connections opened), and whether `until()` held before the deadline.
 * @param {{ url: string, paths: string[], until: () => boolean, sessions?: number, streams?: number, deadlineMs?: number, timeoutMs?: number }} options
 */
export async function h2Load({
  url,
  paths,
  until,
  sessions = 4,
  streams = 8,
  deadlineMs = 40_000,
  timeoutMs = 10_000,
}) {
  const tally = { answered: 0, failed: [], refused: 0, sessions: 0, reached: false };
  const deadline = Date.now() + deadlineMs;
  const open = Array.from({ length: sessions }, () => undefined);
  const session = (slot) => {
    const current = open[slot];
    if (current && !current.closed && !current.destroyed && !current.goneAway) {
      return current;
    }
    const created = connect(url, { rejectUnauthorized: false });
    created.on('goaway', () => (created.goneAway = true));
    // Its streams report what went wrong; the session's own error event must not throw.
    created.on('error', () => undefined);
    tally.sessions++;
    open[slot] = created;
    return created;
  };
  let next = 0;
  const one = async (slot) => {
    const path = paths[next++ % paths.length];
    for (let attempt = 0; ; attempt++) {
      const outcome = await send(session(slot), path, timeoutMs);
      if (outcome.refused && attempt < 2) {
        tally.refused++;
        continue;
      }
      if (outcome.status !== undefined && (outcome.status < 300 || outcome.status === 304)) {
        tally.answered++;
      } else {
        tally.failed.push({ path, ...outcome });
      }
      return;
    }
  };
  const loops = Array.from({ length: sessions * streams }, async (_, i) => {
    while (!tally.reached && Date.now() < deadline) {
      await one(i % sessions);
      tally.reached ||= until();
    }
  });
  await Promise.all(loops);
  for (const created of open) created?.close();
  return tally;
}

/** One request: its status, or why it has none (`refused`, `error`, `timeout`). */
function send(session, path, timeoutMs) {
  return new Promise((resolve) => {
    let stream;
    try {
      stream = session.request({ ':path': path });
    } catch (error) {
      resolve({ error: error.code });
      return;
    }
    let status;
    const timer = setTimeout(() => {
      stream.close(constants.NGHTTP2_CANCEL);
      resolve({ timeout: true });
    }, timeoutMs);
    stream.on('response', (headers) => (status = headers[':status']));
    stream.resume();
    stream.on('error', () => undefined);
    stream.on('close', () => {
      clearTimeout(timer);
      if (stream.rstCode === constants.NGHTTP2_REFUSED_STREAM) {
        resolve({ refused: true });
      } else if (stream.rstCode !== constants.NGHTTP2_NO_ERROR || status === undefined) {
        resolve({ status, error: `stream closed with code ${stream.rstCode}` });
      } else {
        resolve({ status });
      }
    });
  });
}
