import { partStateScript } from './personal-part.server';

describe('partStateScript', () => {
  it('writes JSON that no data can break out of: <, >, &, U+2028 and U+2029 escaped', () => {
    const entries = {
      k: { b: { name: '</script><esi:include src="http://x/"/> & \u2028\u2029 <!-- -->' }, s: 200 },
    };
    const script = partStateScript(entries);
    expect(script).toBe(
      '<script type="application/json" data-origin-part-state>' +
        '{"k":{"b":{"name":"\\u003c/script\\u003e\\u003cesi:include src=\\"http://x/\\"/\\u003e \\u0026 \\u2028\\u2029 \\u003c!-- --\\u003e"},"s":200}}' +
        '</script>',
    );
    const json = script.slice(script.indexOf('>') + 1, script.lastIndexOf('</script>'));
    expect(json).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(json)).toEqual(entries);
  });

  it('writes nothing for no state, and the nonce when there is one', () => {
    expect(partStateScript({})).toBe('');
    expect(partStateScript({ a: 1 }, 'r4nd"m')).toBe(
      '<script type="application/json" data-origin-part-state nonce="r4nd&quot;m">{"a":1}</script>',
    );
  });
});

// createPartRenderer itself runs on the server platform, which puts Domino's DOM on this test
// run's globals: test/server/part-render.test.mjs renders the built tests' app's parts in Node.
