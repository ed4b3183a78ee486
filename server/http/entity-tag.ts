import { createHash } from 'node:crypto';

/**
 * A strong validator for a body: its length and SHA-1 digest, in the format of the `etag` package
 * that @koa/etag uses for the pages it tags (`"<length hex>-<27 base64 chars>"`). A 32-bit checksum
 * is not a validator: two bodies built to collide would share a tag and a client holding one would
 * get 304 for the other. Computed when a body is indexed or cached, never per answer.
 */
export function strongEtag(body: Buffer): string {
  return `"${body.length.toString(16)}-${createHash('sha1').update(body).digest('base64').slice(0, 27)}"`;
}
