// CRC-32 of a concatenation from the CRCs of its pieces: zlib's crc32_combine, with the operator for
// each piece's length computed once. A personal answer's gzip trailer needs the CRC of the whole
// page; a page's pieces around its parts never change, so per response only the parts' bytes are
// run through crc32 and each piece after a part is appended by its operator (32 XORs at most)
// instead of CRC-ing its bytes again (`node bench/...` for the figures: docs/personal-parts.md).

/** A linear operator on CRC-32 states over GF(2): row n is the image of bit n. */
export type CrcOperator = Uint32Array;

/** `operator` applied to `crc`. */
export function applyCrc(operator: CrcOperator, crc: number): number {
  let sum = 0;
  for (let i = 0; crc !== 0; i++, crc >>>= 1) {
    if (crc & 1) {
      sum ^= operator[i];
    }
  }
  return sum >>> 0;
}

/** `a` after `b`. */
function compose(a: CrcOperator, b: CrcOperator): CrcOperator {
  const out = new Uint32Array(32);
  for (let n = 0; n < 32; n++) {
    out[n] = applyCrc(a, b[n]);
  }
  return out;
}

/** The operator that appends one zero byte to a CRC-32 state (eight zero bits). */
const ONE_BYTE = ((): CrcOperator => {
  let bit: CrcOperator = new Uint32Array(32);
  bit[0] = 0xedb88320; // the reflected polynomial: one zero bit
  for (let n = 1; n < 32; n++) {
    bit[n] = 1 << (n - 1);
  }
  for (let i = 0; i < 3; i++) {
    bit = compose(bit, bit);
  }
  return bit;
})();

/** The operator that appends `length` zero bytes: the shift crc32_combine applies to the first CRC. */
export function crcShift(length: number): CrcOperator {
  let result: CrcOperator = new Uint32Array(32);
  for (let n = 0; n < 32; n++) {
    result[n] = (1 << n) >>> 0;
  }
  let power = ONE_BYTE;
  for (let rest = length; rest > 0; rest = Math.floor(rest / 2)) {
    if (rest % 2 === 1) {
      result = compose(power, result);
    }
    if (rest > 1) {
      power = compose(power, power);
    }
  }
  return result;
}

/** The CRC-32 of A then B, from A's CRC, B's and B's shift (crcShift of its length). */
export function combineCrc(crcA: number, crcB: number, shiftB: CrcOperator): number {
  return (applyCrc(shiftB, crcA) ^ crcB) >>> 0;
}
