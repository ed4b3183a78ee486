// The CRC-32 of a concatenation from its pieces' CRCs (server/http/crc-shift.ts), against zlib's
// own CRC of the whole: what a personal answer's gzip trailer is made of.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { combineCrc, crcShift } from '../../server/http/crc-shift.ts';

it('combines the CRC-32 of A and of B into that of A then B, whatever their bytes and lengths', () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ maxLength: 5000 }),
      fc.uint8Array({ maxLength: 5000 }),
      fc.nat({ max: 0xffffffff }),
      (a, b, seed) => {
        const [first, second] = [Buffer.from(a), Buffer.from(b)];
        const whole = crc32(Buffer.concat([first, second]), seed);
        assert.equal(combineCrc(crc32(first, seed), crc32(second), crcShift(second.length)), whole);
      },
    ),
    { numRuns: 300 },
  );
  const big = Buffer.alloc(200_000, 0xa5);
  assert.equal(
    combineCrc(crc32('x'), crc32(big), crcShift(big.length)),
    crc32(Buffer.concat([Buffer.from('x'), big])),
  );
});
