// The tests' app API: what test/server/app-api.test.mjs asks the origin to answer on `/api/…`.
// Each path shows one thing a mounted API may do; TEST_APP_API=off exports none, an app without one.
// `/api/catalog` and `/api/items/<id>` are data for the `data/:id` page with TEST_DATA_API=own: a
// page made of the app's own API, as the demo's are.

const env = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env;

async function handle(request: Request): Promise<Response | null> {
  const url = new URL(request.url);
  switch (url.pathname) {
    case '/api/echo': {
      // What the API was given: method, URL (its origin is not the request's Host), headers, body.
      const body = request.body ? (await request.arrayBuffer()).byteLength : null;
      return Response.json(
        {
          method: request.method,
          url: request.url,
          host: request.headers.get('host'),
          test: request.headers.get('x-test'),
          bodyBytes: body,
        },
        { headers: { 'cache-control': 'no-store', etag: '"echo"' } },
      );
    }
    case '/api/cookies':
      return new Response('{}', {
        headers: [
          ['content-type', 'application/json'],
          ['set-cookie', 'a=1; Path=/'],
          ['set-cookie', 'b=2; Path=/'],
        ],
      });
    case '/api/not-modified':
      return new Response(null, { status: 304, headers: { etag: '"v1"' } });
    case '/api/shadowed.json':
      // The build has a file here too (test/app/public/api/): the API answers first.
      return Response.json({ from: 'the api' });
    case '/api/throws':
      throw new Error('the tests API throws on purpose');
    case '/api/catalog':
      return Response.json({ name: 'own catalog' });
    default:
      if (url.pathname.startsWith('/api/items/')) {
        const id = url.pathname.slice('/api/items/'.length);
        return Response.json({ id, title: `own item ${id}` });
      }
      // Not this API's: the origin goes on as without an API (the Host guard, then the pages).
      return null;
  }
}

export const api = env?.['TEST_APP_API'] === 'off' ? undefined : handle;
